"""The one boundary between xleval and a model folder: what is read from it, and how it is named.

Every neural adapter (COMET, MetricX, BERTScore, embedding cosine; any model-backed metric) reads its model
folder through these functions, so three promises hold for each:

* **No code runs from a model folder.** PyTorch files (``.ckpt``, ``.bin``, ``.pt``) are read with
  ``torch.load(weights_only=True)`` (:func:`load_weights`): a pickle that would call a function is refused
  with one line naming the file, never run. Configuration files are read as data (JSON, YAML's safe loader).
* **One identity per model.** :func:`model_identity` is the sha256 of the folder's weight and configuration
  files (their relative names and bytes, streamed), computed once per process for an unchanged folder. It
  goes into every neural signature (``sha256:`` field), so two checkpoints whose folders share a base name,
  or a checkpoint replaced in place, never share a score cache or a calibrator.
* **Every weight accounted for.** :func:`check_state_keys` refuses a checkpoint with missing or surplus
  weights (they would load as fresh random layers, or be dropped without a word) with one line.

A folder that cannot be read (a file that is not a PyTorch or safetensors file, truncated bytes, an absurd
size in a configuration) is one :class:`~xleval.exceptions.ModelFileError` line naming the file.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from xleval.exceptions import MissingDependencyError, ModelFileError

__all__ = ["model_identity", "identity_files", "load_weights", "refused_pickle", "check_state_keys",
           "check_encoder_weights", "weight_names", "read_json_config",
           "read_yaml_config", "first_line", "MAX_CONFIG_BYTES"]

#: files of a model folder that do not change what the model computes (documentation, licences, VCS data)
_NOT_MODEL = (".md", ".rst", ".gitattributes", ".gitignore", ".lock", ".metadata", ".png", ".jpg", ".jpeg", ".gif")
#: a configuration file (JSON/YAML) larger than this is not a model's configuration
MAX_CONFIG_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20
# (resolved folder, ((relative name, size, mtime_ns, inode, ctime_ns), ...)) -> hex digest: an unchanged folder is
# hashed once per process
_MEMO: dict[tuple[str, tuple[tuple[str, int, int, int, int], ...]], str] = {}


def identity_files(folder: str | os.PathLike) -> list[Path]:
    """The files of ``folder`` that make up the model (weights, configuration, tokenizer), sorted: every
    regular file below it (symbolic links followed, as in a Hugging Face cache snapshot) except hidden ones
    (``.git``, ``.cache``), documentation (``README.md``, images, licences' ``.md``) and SQLite files
    (``.sqlite``, ``.sqlite3``, ``.db`` and their journals: a score cache kept in the model folder, ``cache=PATH``,
    would otherwise change the identity, and with it the signature and the cache file, at every run)."""
    root = Path(folder)
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if (name.startswith(".") or name.lower().endswith(_NOT_MODEL) or name.upper().startswith("LICENSE")
                    or name.lower().endswith(_SQLITE_FILES)):
                continue
            path = Path(dirpath) / name
            if path.is_file():
                out.append(path)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


#: SQLite databases and their journals (a score cache kept in the model folder): named, not opened, so that an
#: identity remembered on disk reads no file of the folder
_SQLITE_FILES = (".sqlite", ".sqlite3", ".db", "-journal", "-wal", "-shm")


def model_identity(*folders: str | os.PathLike | None) -> str:
    """The content identity of one or more model folders (a checkpoint, its tokenizer, its encoder; a single
    file counts as its bytes alone, whatever its name; None is skipped): the
    sha256 (hex) of each folder's :func:`identity_files`, their names relative to the folder and their bytes,
    read in 1 MiB pieces. Computed once for a folder whose files are unchanged (same names, sizes, modification
    and change times, inodes): remembered in the process, and on disk in ``model-identities.json`` under
    ``$XLEVAL_CACHE_DIR`` (default ``~/.cache/xleval``; ``XLEVAL_CACHE_DIR=none``: in memory only), so a large
    checkpoint is read once per machine, not once per run. Folder names do not enter it: ``a/comet`` and
    ``b/comet`` holding the same files have one identity, holding different files two."""
    digest = hashlib.sha256()
    for folder in folders:
        if folder is None:
            continue
        digest.update(_folder_digest(Path(folder)).encode())
    return digest.hexdigest()


def _folder_digest(folder: Path) -> str:
    if folder.is_file():  # one file (a GGUF model, a prompt template): its bytes, whatever its name
        files, names = [folder], [""]
    elif folder.is_dir():
        files = identity_files(folder)
        names = [path.relative_to(folder).as_posix() for path in files]
    else:
        raise ModelFileError(f"{folder}: no such model file or folder; check the path")
    listing = []
    for path, name in zip(files, names, strict=True):
        st = path.stat()
        # the change time too: a file rewritten in place (same inode) whose modification time was set back
        # (`cp -p`, `rsync -t` of a same-size checkpoint) has another change time
        listing.append((name, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
    key = (str(folder.resolve()), tuple(listing))
    if key in _MEMO:
        return _MEMO[key]
    # across processes: a digest recorded for exactly these files (names, sizes, modification and change
    # times, inodes)
    disk_key = hashlib.sha256(json.dumps([key[0], listing]).encode()).hexdigest()
    known = _disk_memo().get(disk_key)
    if isinstance(known, str) and len(known) == 64:
        _MEMO[key] = known
        return known
    digest = hashlib.sha256()
    for path, (name, size, *_) in zip(files, listing, strict=True):
        digest.update(f"{name}\0{size}\0".encode())
        try:
            with open(path, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    digest.update(chunk)
        except OSError as exc:
            raise ModelFileError(f"{path}: cannot be read ({exc.strerror or exc}); check the model folder's "
                                 "permissions, or download the model again") from None
    _MEMO[key] = digest.hexdigest()
    _remember_on_disk(disk_key, _MEMO[key])
    return _MEMO[key]


#: identities kept on disk (the most recent ones): a folder is hashed once per machine, not once per process
_DISK_ENTRIES = 256


def _memo_path() -> Path | None:
    """``$XLEVAL_CACHE_DIR/model-identities.json`` (default ``$XDG_CACHE_HOME/xleval``, ``~/.cache/xleval``);
    ``XLEVAL_CACHE_DIR=none`` keeps identities in memory only."""
    base = os.environ.get("XLEVAL_CACHE_DIR")
    if base is not None and base.strip().lower() in ("", "none", "off"):
        return None
    if base is None:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "xleval")
    return Path(base) / "model-identities.json"


def _disk_memo() -> dict[str, Any]:
    path = _memo_path()
    try:
        if path is None or path.stat().st_size > 1 << 20:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no memo, or an unreadable one: the folder is hashed
    return data if isinstance(data, dict) else {}


def _remember_on_disk(key: str, digest: str) -> None:
    """Add one identity to the memo (written to a temporary file and renamed: a reader sees the old or the new
    memo); a memo that cannot be written is no error."""
    path = _memo_path()
    if path is None:
        return
    memo = _disk_memo()
    memo.pop(key, None)
    memo[key] = digest
    kept = dict(list(memo.items())[-_DISK_ENTRIES:])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(kept), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return


def load_weights(path: str | os.PathLike, what: str = "checkpoint") -> Any:
    """A PyTorch file's content, read with ``weights_only=True`` on the CPU: tensors, numbers, strings and
    containers only. Anything else (a pickle that would import or call code, a file that is not a PyTorch
    file, truncated or empty bytes) is a :class:`ModelFileError` naming the file; nothing in it runs."""
    import pickle

    import torch

    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ModelFileError(f"{path}: the {what} cannot be read ({exc.strerror or exc}); download the model "
                             "again") from None
    if size == 0:
        raise ModelFileError(f"{path}: the {what} is empty (0 bytes; an interrupted download?); download the model "
                             "again")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ModelFileError(refused_pickle(path, exc, what)) from None
    except (RuntimeError, OSError, EOFError, ValueError, KeyError, IndexError, TypeError, AttributeError,
            UnicodeDecodeError, MemoryError, OverflowError) as exc:
        raise ModelFileError(f"{path}: not a readable PyTorch {what} ({first_line(exc)}); the file is damaged or "
                             "of another kind: download the model again") from None


def refused_pickle(path: str | os.PathLike, exc: BaseException, what: str = "checkpoint") -> str:
    """The one line for a weights-only unpickling refusal of ``path`` (torch's own message is a page long and
    suggests loading the file unsafely): code the file would run, or bytes that are no pickle at all."""
    text = str(exc)
    if "Unsupported global" in text or "Unsupported class" in text:
        return (f"{path}: the {what} holds more than weights (a pickle that would run code: {_refused_global(exc)}); "
                "xleval loads weights only and never runs code from a model folder: use a checkpoint from a source "
                "you trust, saved as a plain state dict (or safetensors)")
    return (f"{path}: not a readable PyTorch {what} ({_refused_global(exc)}); the file is damaged or of another "
            "kind: download the model again")


def _refused_global(exc: BaseException) -> str:
    """What torch's weights-only unpickler refused, in a few words (its message is a page long)."""
    text = str(exc)
    for marker in ("Unsupported global: GLOBAL ", "Unsupported class "):
        if marker in text:
            return text.split(marker, 1)[1].split()[0].rstrip(".,:")
    if "Unsupported operand " in text:
        return "unpickling stopped at operand " + text.split("Unsupported operand ", 1)[1].split()[0]
    return first_line(exc)[:120]


def check_state_keys(missing: Iterable[str], unexpected: Iterable[str], where: str | os.PathLike,
                     fix: str = "download the model again") -> None:
    """Refuse a checkpoint whose weights do not match the model built from its configuration: ``missing``
    weights would keep their fresh random values (two runs, two scores), ``unexpected`` ones would be dropped."""
    missing, unexpected = sorted(missing), sorted(unexpected)
    if not missing and not unexpected:
        return
    parts = []
    if missing:
        parts.append(f"{len(missing)} weight(s) the model needs are missing ({_some(missing)})")
    if unexpected:
        parts.append(f"{len(unexpected)} weight(s) match no part of the model ({_some(unexpected)})")
    raise ModelFileError(f"{where}: the checkpoint does not match the model its configuration describes: "
                         f"{'; '.join(parts)}; {fix}")


def weight_names(folder: str | os.PathLike) -> set[str] | None:
    """The names of the tensors in a Hugging Face model folder's weight files (safetensors headers, or the keys
    of ``pytorch_model.bin`` read with weights only), single or sharded; None when it has no weight file."""
    root = Path(folder)
    for index_name, single in (("model.safetensors.index.json", "model.safetensors"),
                               ("pytorch_model.bin.index.json", "pytorch_model.bin")):
        index = root / index_name
        if index.is_file():
            weight_map = read_json_config(index, index_name)
            if not isinstance(weight_map, dict) or not isinstance(weight_map.get("weight_map"), dict):
                raise ModelFileError(f"{index}: no weight_map; download the model again")
            return {str(k) for k in weight_map["weight_map"]}
        file = root / single
        if file.is_file():
            if single.endswith(".safetensors"):
                from safetensors import SafetensorError, safe_open

                try:
                    with safe_open(str(file), framework="pt") as f:
                        return set(f.keys())
                except (SafetensorError, OSError, ValueError) as exc:
                    raise ModelFileError(f"{file}: not a readable safetensors file ({first_line(exc)}); download "
                                         "the model again") from None
            state = load_weights(file, "weight file")
            if not isinstance(state, dict):
                raise ModelFileError(f"{file}: not a state dict of weights; download the model again")
            return {str(k) for k in state}
    return None


#: encoder-decoder model types of which sentence-transformers loads the encoder alone (T5EncoderModel, ...)
_ENCODER_ONLY_IN_ST = ("t5", "mt5", "umt5", "longt5")


def check_encoder_weights(folder: str | os.PathLike, what: str, *, reads_decoder: bool = False) -> None:
    """A Hugging Face encoder folder holds every weight the model its config.json describes needs (a missing one
    would be initialised at random, so two runs give two scores). The model is built on PyTorch's ``meta``
    device (no memory, no weights) to list them; weights the model does not use (a pre-training head) are
    allowed, as transformers allows them, and so is a missing pooler (token states are what is read). An
    encoder-decoder's decoder is not asked for when only its encoder runs: always for BERTScore (bert_score keeps
    ``model.encoder``); for ``reads_decoder=True`` (sentence-transformers) only in the T5 family, whose encoder
    sentence-transformers loads alone (sentence-T5, GTR). A weight tied to another (T5's ``shared`` and
    ``encoder.embed_tokens``) is one tensor, stored under either name."""
    import torch
    import transformers

    root = Path(folder)
    if not (root / "config.json").is_file():
        return
    present = weight_names(root)
    if present is None:
        return
    try:
        config = transformers.AutoConfig.from_pretrained(str(root), local_files_only=True)
        with torch.device("meta"):
            model = transformers.AutoModel.from_config(config)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
        raise ModelFileError(f"{root / 'config.json'}: transformers cannot build the {what} model it describes "
                             f"({first_line(exc)[:200]}); download the model again") from None
    prefix = getattr(model, "base_model_prefix", "")
    present = {k[len(prefix) + 1:] if prefix and k.startswith(prefix + ".") else k for k in present}
    # the pooler (absent from masked-LM checkpoints such as xlm-roberta-large) is read by neither BERTScore nor
    # sentence-embedding pooling, which use the token states; nor is an encoder-decoder's decoder (bert_score
    # keeps model.encoder, sentence-transformers loads T5EncoderModel): sentence-T5/GTR folders hold no decoder
    # (a BART-like model in sentence-transformers runs whole: its decoder is read there, ``reads_decoder``)
    encoder_only = not reads_decoder or getattr(config, "model_type", None) in _ENCODER_ONLY_IN_ST
    unread = ("pooler.", "decoder.") if encoder_only and hasattr(model, "decoder") else ("pooler.",)
    # tied weights (T5's shared and encoder.embed_tokens) are one tensor stored once, under either name
    names_of: dict[int, list[str]] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        names_of.setdefault(id(tensor), []).append(name)
    missing = sorted(names[0] for names in names_of.values()
                     if not present.intersection(names) and not all(n.startswith(unread) for n in names))
    check_state_keys(missing, [], root)


def _some(names: Sequence[str], k: int = 3) -> str:
    shown = ", ".join(names[:k])
    return shown + (f", ... {len(names) - k} more" if len(names) > k else "")


def _config_bytes(path: Path, what: str) -> bytes:
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise ModelFileError(f"{path}: the {what} is not a regular file; download the model again")
        if st.st_size > MAX_CONFIG_BYTES:
            raise ModelFileError(f"{path}: the {what} is {st.st_size} bytes, more than any model configuration "
                                 f"({MAX_CONFIG_BYTES} at most); download the model again")
        return path.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"{path}: the {what} cannot be read ({exc.strerror or exc}); download the model "
                             "again") from None


def read_json_config(path: str | os.PathLike, what: str = "config.json") -> Any:
    """A JSON configuration file as data; one :class:`ModelFileError` line when it is not valid UTF-8 JSON."""
    path = Path(path)
    data = _config_bytes(path, what)
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelFileError(f"{path}: not valid JSON ({first_line(exc)}); download the model again") from None


def read_yaml_config(path: str | os.PathLike, what: str = "hparams.yaml") -> Any:
    """A YAML configuration file read with the safe loader (plain data: no Python objects are built)."""
    try:  # (not _neural.require: that module loads models through this one)
        import yaml  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingDependencyError("pyyaml", "neural", f"reading {what}") from exc
    path = Path(path)
    data = _config_bytes(path, what)
    try:
        return yaml.safe_load(data.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        raise ModelFileError(f"{path}: not valid YAML ({first_line(exc)}); download the model again") from None


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type's name when it has none)."""
    text = str(exc).strip().splitlines()
    return text[0].strip() if text else type(exc).__name__
