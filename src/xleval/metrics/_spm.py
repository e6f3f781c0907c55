"""sacrebleu's SentencePiece tokenizers (spBLEU: ``flores101``, ``flores200``, ``spBLEU-1K``, ``spm``) from a
local model file.

sacrebleu downloads the model on first use into ``$SACREBLEU/models/``; xleval never downloads (it runs
offline). The file comes from ``spm_model=`` (the file, or a folder holding it), else from the folder named by
``$XLEVAL_SPM_MODELS``, else from sacrebleu's own folder (``$SACREBLEU/models``, by default
``~/.sacrebleu/models``), always under the file name sacrebleu gives it, so a model sacrebleu fetched once is
found too. Tokenisation is sacrebleu's ``TokenizerSPM``: the model's pieces joined by spaces.
"""
from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from xleval.exceptions import InputError, MissingDependencyError

__all__ = ["SPM_MODELS", "SPM_ENV", "SpmTokenizer", "load_spm_tokenizer", "find_spm_model", "model_folders"]

SPM_ENV = "XLEVAL_SPM_MODELS"


@dataclass(frozen=True)
class SpmModel:
    file: str  # sacrebleu's file name under $SACREBLEU/models (the basename of its download URL)
    signature: str  # sacrebleu's tok: field
    url: str  # sacrebleu's download address: told to the user, never fetched


_FLORES101 = SpmModel("sacrebleu_tokenizer_spm.model", "flores101",
                      "https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model")
# sacrebleu's tokenizer names (sacrebleu.tokenizers.tokenizer_spm.SPM_MODELS); "spm" is flores101's old name
SPM_MODELS: dict[str, SpmModel] = {
    "flores101": _FLORES101,
    "flores200": SpmModel("flores200sacrebleuspm", "flores200", "https://tinyurl.com/flores200sacrebleuspm"),
    "spBLEU-1K": SpmModel("spbleu-1k_tokenizer_spm.model", "spBLEU-1K",
                          "https://www.dlnlp.ai/spBLEU-1K/spbleu-1k_tokenizer_spm.model"),
    "spm": _FLORES101,
}


def model_folders() -> list[Path]:
    """Where a model is looked for when ``spm_model=`` is not given, in order (read at each call)."""
    folders = [Path(p) for p in os.environ.get(SPM_ENV, "").split(os.pathsep) if p]
    sacrebleu_dir = os.environ.get("SACREBLEU") or os.path.join(os.path.expanduser("~"), ".sacrebleu")
    return [*folders, Path(sacrebleu_dir) / "models"]


def find_spm_model(name: str, spm_model: str | os.PathLike | None = None) -> Path:
    """The model file of tokenizer ``name``; InputError (one line: which file, where) when there is none."""
    model = SPM_MODELS[name]
    if spm_model is not None:
        path = Path(spm_model).expanduser()
        if path.is_dir():
            path = path / model.file
        if not path.is_file():
            raise InputError(f"spm_model={str(spm_model)!r}: no such file (give the SentencePiece model file of "
                             f"tokenize={name!r}, or a folder holding {model.file!r})",
                             argument="spm_model", value=spm_model)
        return path
    for folder in model_folders():
        if (folder / model.file).is_file():
            return folder / model.file
    raise InputError(
        f"tokenize={name!r} needs its SentencePiece model file {model.file!r}, which xleval never downloads: "
        f"pass spm_model=PATH, or put the file in the folder named by ${SPM_ENV} or in {model_folders()[-1]} "
        f"(sacrebleu downloads it from {model.url})", argument="spm_model", value=None)


class SpmTokenizer:
    """sacrebleu's ``TokenizerSPM`` on a given model file: ``" ".join(pieces)``; :meth:`lines` encodes a batch."""

    def __init__(self, name: str, path: Path):
        try:
            import sentencepiece
        except ImportError as err:
            raise MissingDependencyError("sentencepiece", "spm", f"the {name} tokenizer (spBLEU)") from err
        data = path.read_bytes()
        self.name = name
        self.path = path
        self.sha256 = hashlib.sha256(data).hexdigest()
        self._sp = sentencepiece.SentencePieceProcessor()
        try:
            self._sp.LoadFromSerializedProto(data)
        except (RuntimeError, OSError) as err:
            raise InputError(f"{str(path)!r} is not a SentencePiece model ({err}); give the model file of "
                             f"tokenize={name!r} with spm_model=", argument="spm_model", value=str(path)) from err

    def signature(self) -> str:
        return SPM_MODELS[self.name].signature

    def __call__(self, line: str) -> str:
        return " ".join(self._sp.EncodeAsPieces(line))

    def lines(self, lines: Sequence[str]) -> list[str]:
        """Each line tokenised as :meth:`__call__` does, in one call into SentencePiece."""
        return [" ".join(pieces) for pieces in self._sp.EncodeAsPieces(list(lines))]


@functools.cache
def _load(name: str, path: str, stamp: tuple[int, int]) -> SpmTokenizer:
    return SpmTokenizer(name, Path(path))  # stamp (mtime, size) in the key: a replaced file is reloaded


def load_spm_tokenizer(name: str, spm_model: str | os.PathLike | None = None) -> SpmTokenizer:
    """The tokenizer ``name`` on its local model (loaded once per file per process)."""
    path = find_spm_model(name, spm_model).resolve()
    stat = path.stat()
    return _load(name, str(path), (stat.st_mtime_ns, stat.st_size))
