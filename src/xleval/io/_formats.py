"""Table formats by extension (``NAME.EXT.gz`` is gzip-compressed ``NAME.EXT``), the metadata
sidecar's name, and the cells read as missing."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from ..exceptions import InputError

__all__ = ["FORMATS", "SIDECAR_SUFFIX", "STDOUT", "NA_TOKENS", "TEXT_COLUMNS", "GZIP_SUFFIX", "table_format",
           "display_name", "is_compressed", "inner_suffix"]

FORMATS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
           ".pq": "parquet"}
SIDECAR_SUFFIX = ".signatures.json"
#: ``-`` as an input is standard input, as an output standard output (never a file named ``-``)
STDOUT = "-"
#: a file ``NAME.EXT.gz`` is ``NAME.EXT`` compressed with gzip (read and written as such)
GZIP_SUFFIX = ".gz"
#: cells of a text table read as a missing value wherever a number is expected
NA_TOKENS = frozenset({"", "nan", "NaN", "NAN", "na", "NA", "N/A", "null", "NULL", "None"})
#: canonical columns that are text even when every cell looks like a number
TEXT_COLUMNS = frozenset({"source", "hypothesis", "reference", "lp", "src_lang", "tgt_lang", "system", "sentence",
                          "text"})


def table_format(path: str | os.PathLike) -> str:
    """The format of ``path`` by its extension ('-' is TSV on stdin/stdout, and so is a stream without
    an extension: ``/dev/stdout``, a FIFO, ``<(command)``); ``a.tsv.gz`` is a gzip-compressed TSV."""
    if str(path) == "-":
        return "tsv"
    suffix = inner_suffix(path)
    if not suffix and _is_stream(path):
        return "tsv"
    if suffix not in FORMATS:
        raise InputError(
            f"{path}: unknown table format {suffix or '(no extension)'!r}; "
            f"use one of {', '.join(sorted(FORMATS))} (each optionally .gz) or '-' for TSV on stdin"
        )
    return FORMATS[suffix]


def is_compressed(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a gzip-compressed file (``.gz``)."""
    return str(path).lower().endswith(GZIP_SUFFIX)


def inner_suffix(path: str | os.PathLike) -> str:
    """The extension that names the format: ``a.tsv.gz`` -> ``.tsv``, ``a.tsv`` -> ``.tsv``."""
    p = Path(path)
    if is_compressed(p):
        p = p.with_suffix("")
    return p.suffix.lower()


def display_name(path: str | os.PathLike) -> str:
    """How messages name a table: its path as given, or ``<stdin>`` for '-'."""
    return "<stdin>" if str(path) == "-" else str(path)


def _is_stream(path: str | os.PathLike) -> bool:
    if through_fd_link(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


_FD_LINKS = ("/proc/", "/dev/fd/")


def through_fd_link(path: str | os.PathLike) -> bool:
    """Whether the path is, or links through, a file-descriptor link (``/dev/stdout`` -> ``/proc/self/fd/1``):
    it names a stream of the process, which the shell may have redirected to a file."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's limit of links followed
        if current.startswith(_FD_LINKS):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.normpath(os.path.join(os.path.dirname(current), os.readlink(current)))
    return False
