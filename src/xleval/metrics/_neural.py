"""Shared machinery of the neural metric adapters (COMET, BERTScore, embedding cosine).

Every adapter takes a *local* model directory (never a hub name at run time), a batch size, a
device (default ``cpu``), a precision and a progress flag. Heavy libraries (torch,
transformers, comet, bert_score, sentence_transformers) are imported only when a model is first
loaded, through :func:`require`, which turns a missing package into
:class:`~xleval.exceptions.MissingDependencyError` naming the ``neural`` extra.

Neural metrics have no sufficient statistics beyond the sum of segment scores and their count:
the corpus score is the mean segment score, and :meth:`NeuralMetric.sentence_stats` exposes
``[score, 1]`` rows so that per-group, chunked and bootstrap corpus scores stay exact sums.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import logging
import os
import pickle
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from xleval.exceptions import InputError, MissingDependencyError, ModelFileError, XlevalError

from ._base import Metric

__all__ = ["NeuralMetric", "require", "check_model_dir", "parse_devices", "dist_version",
           "restore_special_token_builder", "PRECISIONS"]

logger = logging.getLogger(__name__)

PRECISIONS = ("fp32", "fp16", "bf16")
_DEVICE_RE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Loggers and warning sources of third-party code that chatter during loading/prediction.
_NOISY_LOGGERS = ("pytorch_lightning", "lightning_fabric", "lightning.pytorch", "lightning", "comet")
_NOISY_MODULES = (r"(pytorch_lightning|lightning_fabric|lightning_utilities|lightning|torchmetrics|comet|transformers"
                  r"|torch|bert_score|sentence_transformers|huggingface_hub)(\..*)?$")


def require(module: str, package: str | None = None, purpose: str = "") -> ModuleType:
    """Import ``module`` or raise MissingDependencyError naming the ``neural`` extra.

    The root logger is restored afterwards: unbabel-comet calls ``logging.basicConfig(INFO)``
    on import, which would make every library in the user's process print its info logs.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(package or module, "neural", purpose) from exc
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def dist_version(distribution: str) -> str:
    """Installed version of a distribution (``unknown`` if it is not installed)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def parse_devices(device: Any) -> tuple[str, ...]:
    """The devices of ``device``: one (``cpu``, ``cuda``, ``cuda:N``, ``mps``) or several of one kind separated by
    commas (``cuda:0,cuda:1``; ``cpu,cpu`` runs two replicas on the CPU) for data-parallel scoring."""
    if not isinstance(device, str) or not device.strip():
        raise InputError(f"device must be 'cpu', 'cuda', 'cuda:N' or 'mps' (or several, 'cuda:0,cuda:1'), "
                         f"got {device!r}", argument="device", value=device)
    parts = tuple(p.strip() for p in device.split(","))
    bad = [p for p in parts if not _DEVICE_RE.match(p)]
    if bad:
        raise InputError(f"device={device!r}: {bad[0]!r} is not a device; use cpu, cuda, cuda:N or mps, or several "
                         "of one kind separated by commas (cuda:0,cuda:1)", argument="device", value=device)
    if len(parts) > 1:
        kinds = sorted({p.split(":")[0] for p in parts})
        if len(kinds) > 1:
            raise InputError(f"device={device!r} mixes {' and '.join(kinds)}; data-parallel scoring runs replicas on "
                             "devices of one kind: list only cuda:N (or only cpu)", argument="device", value=device)
        if kinds != ["cpu"] and ("cuda" in parts or "mps" in parts or len(set(parts)) < len(parts)):
            raise InputError(f"device={device!r}: name each GPU once, by number (cuda:0,cuda:1)",
                             argument="device", value=device)
    return parts


def check_model_dir(path: Any, what: str) -> Path:
    """The local model directory as a Path; InputError if it does not exist."""
    if not isinstance(path, str | os.PathLike) or not str(path).strip():
        raise InputError(f"{what} model path must be a local directory, got {path!r}")
    p = Path(path).expanduser()
    if not p.is_dir():
        raise InputError(
            f"{what} model path {str(path)!r} does not exist or is not a directory; "
            "download it once and pass the directory (e.g. `hf download ORG/NAME --local-dir DIR`); "
            "xleval never downloads models at run time"
        )
    return p


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Forbid hub access while loading (the adapters also pass ``local_files_only=True``)."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update(dict.fromkeys(saved, "1"))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def quiet(progress: bool) -> Iterator[None]:
    """Silence third-party info logs, warnings and (unless ``progress``) progress bars.

    The library never prints: Lightning's info messages and the deprecation warnings that
    torch/transformers/lightning raise about each other are not the user's concern.
    """
    levels = {name: logging.getLogger(name).level for name in _NOISY_LOGGERS}
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    bars = _transformers_progress(None if progress else False)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module=_NOISY_MODULES)
            yield
    finally:
        _transformers_progress(bars)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def _transformers_progress(enable: bool | None) -> bool | None:
    """Set transformers' progress bars on/off; returns the previous state (None: untouched)."""
    if enable is None:
        return None
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return None
    before = hf_logging.is_progress_bar_enabled()
    (hf_logging.enable_progress_bar if enable else hf_logging.disable_progress_bar)()
    return before


def batches(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class NeuralMetric(Metric):
    """Base of the neural adapters: validated common options, lazy model, ``[score, 1]`` stats.

    Subclasses implement :meth:`_load` (returns the loaded model object, cached on first use)
    and :meth:`_neural_scores`; ``_library`` names the distribution whose version goes in the
    signature.

    Common options: ``batch_size``; ``device`` (``cpu``, ``cuda``, ``cuda:N``, ``mps``; adapters with
    ``multi_device`` take several of one kind, ``cuda:0,cuda:1``, and split the batches between them);
    ``precision`` (``fp32``, ``fp16`` on a GPU, ``bf16`` where the adapter lists it; in the signature);
    ``progress``; ``cache`` (a file or directory: scores are kept per row and signature, and rows scored
    before are read back instead of scored again; see :mod:`xleval.metrics._score_cache`). The device,
    batch size and cache do not change the numbers and are not in the signature.
    """

    has_stats: ClassVar[bool] = True
    range: ClassVar[tuple[float, float]] = (float("-inf"), float("inf"))
    #: the precisions the adapter can run in
    precisions: ClassVar[tuple[str, ...]] = ("fp32", "fp16")
    #: whether ``device`` may list several devices (data parallel)
    multi_device: ClassVar[bool] = False
    _library: ClassVar[str] = "torch"
    _what: ClassVar[str] = "neural"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        batch_size: int = 32,
        device: str = "cpu",
        precision: str = "fp32",
        progress: bool = False,
    ) -> None:
        self.model_path = check_model_dir(model_path, self._what)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.devices = parse_devices(device)
        if len(self.devices) > 1 and not self.multi_device:
            raise InputError(f"device={device!r}: the {self._what} metric runs on one device; give one "
                             "(several devices split the batches of metricx:PATH only)",
                             argument="device", value=device)
        if precision not in self.precisions:
            raise InputError(f"precision={precision!r}: the {self._what} metric runs in "
                             f"{' or '.join(self.precisions)}; give one of them", argument="precision", value=precision)
        if precision == "fp16" and self.devices[0] == "cpu":
            raise InputError("precision='fp16' needs a GPU device (device='cuda'); use precision='fp32' on cpu")
        self.batch_size = batch_size
        self.device = ",".join(self.devices)  # as parsed: ' cpu' would reach torch (and Lightning) unstripped
        self.precision = precision
        self.progress = bool(progress)
        self.cache: Path | None = None
        self._model: Any = None
        self._identity: str | None = None

    # ------------------------------------------------------------------ signature
    def _common_fields(self) -> dict[str, Any]:
        return {
            "model": self.model_path.resolve().name,
            "prec": self.precision,
            self._library: dist_version(self._library),
            "transformers": dist_version("transformers"),
            "sha256": self.identity[:16],
        }

    @property
    def identity(self) -> str:
        """The content identity of the model (:func:`xleval.metrics._model_files.model_identity` of its
        folders: weights, configuration, tokenizer); its first 16 hex digits are the signature's ``sha256:``
        field, so two checkpoints that share a folder name never share a cache or a calibrator."""
        if self._identity is None:
            from ._model_files import model_identity

            self._identity = model_identity(*self._identity_folders())
        return self._identity

    def _identity_folders(self) -> tuple[Path | None, ...]:
        """The folders whose files make the model (the checkpoint; adapters add a tokenizer or an encoder)."""
        return (self.model_path,)

    # ------------------------------------------------------------------ model
    def _loaded(self) -> Any:
        # The model is a cache, not state that changes numbers: scoring stays side-effect free.
        if self._model is None:
            torch = require("torch", "torch", f"the {self.name} metric")
            for device in self.devices:
                _check_device_available(torch, device)
            try:
                with offline(), quiet(self.progress):
                    self._model = self._load()
            except XlevalError:
                raise
            except pickle.UnpicklingError as exc:  # a .bin/.pt file that is not weights only: never run
                from ._model_files import refused_pickle

                raise ModelFileError(refused_pickle(self.model_path, exc, f"{self._what} model"),
                                     argument="model_path", value=str(self.model_path)) from None
            except (OSError, ValueError, RuntimeError, KeyError, IndexError, TypeError, AttributeError, EOFError,
                    MemoryError, OverflowError) as exc:
                raise ModelFileError(self._load_failure(exc), argument="model_path",
                                     value=str(self.model_path)) from None
            logger.info("loaded %s model from %s on %s", self.name, self.model_path, self.device)
        return self._model

    def _load(self) -> Any:
        raise NotImplementedError

    def _load_failure(self, exc: BaseException) -> str:
        """One line for a model the third-party loader could not load, naming the folder (the library's own
        message names no folder, or tells an offline user to check the internet connection)."""
        from ._model_files import first_line

        said = first_line(exc)
        if re.search(r"internet connection|couldn't connect|could not connect|offline mode|HF_HUB_OFFLINE|"
                     r"not a local folder and is not a valid model identifier", said, re.IGNORECASE):
            return (f"{self.model_path}: the {self._what} model needs a file that is neither in this folder nor in "
                    "the local Hugging Face cache (xleval never downloads at run time); download the complete "
                    "model once (`hf download ORG/NAME --local-dir DIR`) and pass that folder")
        return (f"{self.model_path}: the {self._what} model cannot be loaded ({said[:300]}); the folder is "
                "incomplete or damaged: download the model again")

    def _torch_dtype(self) -> Any:
        import torch

        return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[self.precision]

    # ------------------------------------------------------------------ scoring
    def _check_inputs(self, hyps, refs, srcs):
        # what the model does not read is ignored, not checked (a QE metric given a reference column with gaps,
        # BERTScore given sources) and kept out of the score cache's row keys, which hash what is read
        hyps_, refs_, srcs_ = super()._check_inputs(hyps, refs if self.needs_refs else None, srcs)
        srcs_ = srcs_ if self.needs_srcs else None
        # a lone surrogate (text decoded with errors="surrogateescape") is no Unicode text: the tokenizers
        # raise a TypeError about TextEncodeInput, the score cache a UnicodeEncodeError
        streams = [("hyps", hyps_), *((f"refs[{k}]", s) for k, s in enumerate(refs_ or [])), ("srcs", srcs_ or [])]
        for what, texts in streams:
            for i, text in enumerate(texts):
                bad = _SURROGATE.search(text) if text is not None else None
                if bad is not None:
                    raise InputError(f"{what}[{i}] holds a lone surrogate ({bad.group()!r}), "
                                     "not Unicode text (bytes decoded with errors='surrogateescape'?); decode the "
                                     "text as UTF-8 (or replace the bad bytes) before scoring",
                                     argument=what.split("[")[0], value=i)
        return hyps_, refs_, srcs_

    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        if not hyps:
            return np.zeros(0, dtype=np.float64)
        if self.cache is None:
            return self._score_now(hyps, refs, srcs)
        from ._score_cache import ScoreCache, row_keys

        store = ScoreCache(self.cache, self.signature, self.range)
        keys = row_keys(hyps, refs if self.needs_refs else None, srcs)
        scores = store.get(keys)
        todo = np.flatnonzero(np.isnan(scores))
        if len(todo):
            logger.info("%s: %d of %d rows not in the cache %s", self.name, len(todo), len(keys), self.cache)
            new = self._score_now([hyps[i] for i in todo],
                                  None if refs is None else [[s[i] for i in todo] for s in refs],
                                  None if srcs is None else [srcs[i] for i in todo])
            scores[todo] = new
            store.put([keys[i] for i in todo], new)
        return scores

    def _remember(self, hyps, refs, srcs, scores: np.ndarray) -> None:
        """Put scores computed outside :meth:`_sentence_scores` (with the same inputs) into the cache, if any."""
        if self.cache is not None and len(hyps):
            from ._score_cache import ScoreCache, row_keys

            keys = row_keys(hyps, refs if self.needs_refs else None, srcs)
            ScoreCache(self.cache, self.signature, self.range).put(keys, scores)

    def _score_now(self, hyps, refs, srcs) -> np.ndarray:
        model = self._loaded()
        with quiet(self.progress):
            scores = self._neural_scores(model, hyps, refs, srcs)
        return np.asarray(scores, dtype=np.float64)

    def _set_cache(self, cache: str | os.PathLike | None) -> None:
        """Keep scores in a persistent cache (:mod:`xleval.metrics._score_cache`): a file holds the scores of one
        signature; a directory holds one file per signature. Call at the end of ``__init__`` (the signature is
        complete then); a file of another signature is refused here, before any scoring."""
        if cache is None:
            return
        from ._score_cache import cache_file

        self.cache = cache_file(cache, self.name, self.signature, self.range)

    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        raise NotImplementedError

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        scores = self._sentence_scores(hyps, refs, srcs)
        return np.column_stack([scores, np.ones_like(scores)])

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        # corpus score = mean segment score: sum of scores / count
        with np.errstate(invalid="ignore", divide="ignore"):
            return stats[:, 0] / stats[:, 1]

    def _single_ref_stream(self, refs: list[list[str]] | None) -> list[str] | None:
        if refs is None:
            return None
        if len(refs) != 1:
            raise InputError(f"metric {self.name!r} scores against one reference; got {len(refs)} reference streams")
        return refs[0]

    def __getstate__(self) -> dict[str, Any]:
        # pickled (e.g. to Dask workers) without the loaded model; each worker reloads it
        return {**self.__dict__, "_model": None}


def restore_special_token_builder(tokenizer: Any, size_separator: int = 1) -> None:
    """Give a transformers-5 fast tokenizer back ``build_inputs_with_special_tokens``.

    transformers 5 removed the method from fast tokenizers; COMET (joining src/mt/ref) and
    bert_score (encoding an empty sentence) still call it. The transformers-4 rule for
    encoders: ``CLS a SEP`` and, for a pair, ``CLS a SEP [SEP] b SEP`` (two separators for
    XLM-R, ``size_separator=2``).
    """
    if hasattr(tokenizer, "build_inputs_with_special_tokens"):
        return
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id

    def build_inputs_with_special_tokens(ids_0: list[int], ids_1: list[int] | None = None) -> list[int]:
        out = [i for i in (cls_id,) if i is not None] + list(ids_0) + [i for i in (sep_id,) if i is not None]
        if ids_1 is not None:
            out += [sep_id] * (size_separator - 1) + [*ids_1, sep_id]
        return out

    tokenizer.build_inputs_with_special_tokens = build_inputs_with_special_tokens


def position_capacity(hf_model: Any) -> int | None:
    """The longest input, in tokens (special tokens included), that a transformers encoder's absolute position
    embeddings hold: their number of rows, less the offset of RoBERTa-style positions (which start after the
    padding index: 512 for XLM-R's 514 rows). None for a model without such a table (no limit to enforce)."""
    table = getattr(getattr(hf_model, "embeddings", None), "position_embeddings", None)
    rows = getattr(table, "num_embeddings", None)
    if isinstance(rows, bool) or not isinstance(rows, int):
        return None
    pad = getattr(table, "padding_idx", None)
    return rows - (pad + 1 if isinstance(pad, int) else 0)


def _check_device_available(torch: ModuleType, device: str) -> None:
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device={device!r} but torch sees no CUDA GPU; use device='cpu'")
    if device.startswith("cuda:") and int(device.split(":")[1]) >= torch.cuda.device_count():
        raise InputError(f"device={device!r} but torch sees {torch.cuda.device_count()} GPU(s), numbered from 0; "
                         "use one of those", argument="device", value=device)
    if device == "mps" and not torch.backends.mps.is_available():
        raise InputError("device='mps' but torch reports MPS unavailable; use device='cpu'")
