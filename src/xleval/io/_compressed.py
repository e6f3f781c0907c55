"""Reading an input through one door: ``-`` is standard input, ``NAME.EXT.gz`` is gzip-compressed
``NAME.EXT`` (the format is that of the inner extension, :func:`._formats.table_format`), anything
else is read as is. Every file is checked (:func:`._inputs.require_file`: a directory or a device is
named as such) and recorded as an input of the running command, so no output of the command can be
written over it; standard input is recorded when the shell redirects a file into it (``< in.tsv``).

A damaged gzip stream (truncated, not gzip at all) is an InputError naming the file, also when it
is found while a streamed reader is halfway through it."""
from __future__ import annotations

import contextlib
import gzip
import io as _io
import os
import sys
import zlib
from collections.abc import Iterator
from typing import Any

from ..exceptions import InputError
from ._formats import is_compressed
from ._inputs import require_file

__all__ = ["STDIN", "read_input_bytes", "read_stdin", "open_input", "GZIP_MAGIC"]

STDIN = "-"
GZIP_MAGIC = b"\x1f\x8b"
_GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def _damaged(name: str, exc: BaseException) -> InputError:
    reason = str(exc).strip() or type(exc).__name__
    if reason.startswith("Not a gzipped file"):  # gzip's own words end in a bytes repr: b'lp'
        reason = "it does not start with gzip's signature bytes 1f 8b"
    return InputError(f"{name}: not a valid gzip file ({reason}); check it with gunzip -t, or "
                      "drop the .gz from its name if it is not compressed")


def read_stdin() -> bytes:
    """All bytes of standard input; a file redirected into it (``< in.tsv``) is recorded as an input."""
    from .._base.scope import record_stream_input

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None or getattr(stream, "closed", False):  # started with standard input closed (<&-)
        raise InputError("<stdin>: standard input is closed, so '-' has nothing to read; redirect a file into it "
                         "(< FILE) or give the file's path instead of '-'")
    fd = None
    with contextlib.suppress(AttributeError, ValueError, OSError):  # a replaced stdin (tests) has no descriptor
        fd = sys.stdin.fileno()
    if fd is not None:
        record_stream_input(fd)  # refuses standard input read from the file standard output goes to
    try:
        return stream.read()
    except OSError as exc:  # a descriptor that cannot be read (EBADF: closed after start-up)
        raise InputError(f"<stdin>: cannot read standard input ({exc.strerror or exc}); redirect a file into it "
                         "(< FILE) or give the file's path instead of '-'") from None


def read_input_bytes(path: str | os.PathLike, name: str | None = None) -> bytes:
    """All bytes of the input ``path``: decompressed for ``.gz``; standard input for ``-`` (decompressed
    when it starts with gzip's magic bytes, as ``-i - < a.txt.gz`` would)."""
    if str(path) == STDIN:
        name = name or "<stdin>"
        data = read_stdin()
        return _decompress(data, name) if data[:2] == GZIP_MAGIC else data
    name = str(path) if name is None else name
    require_file(path, name)
    with open(path, "rb") as fh:
        raw = fh.read()
    return _decompress(raw, name) if is_compressed(path) else raw


def _decompress(raw: bytes, name: str) -> bytes:
    try:
        return gzip.decompress(raw)
    except (*_GZIP_ERRORS, OSError) as exc:
        raise _damaged(name, exc) from None


class _CheckedGzip(gzip.GzipFile):
    """A gzip file whose damage is an InputError naming the input (gzip raises BadGzipFile, EOFError
    or zlib.error from whichever read finds it)."""

    def __init__(self, path: str | os.PathLike, name: str):
        super().__init__(path, "rb")
        self._input_name = name

    @contextlib.contextmanager
    def _checked(self) -> Iterator[None]:
        try:
            yield
        except _GZIP_ERRORS as exc:
            raise _damaged(self._input_name, exc) from None

    def read(self, size: int | None = -1) -> bytes:
        with self._checked():
            return super().read(size)

    def read1(self, size: int = -1) -> bytes:
        with self._checked():
            return super().read1(size)

    def peek(self, n: int) -> bytes:
        with self._checked():
            return super().peek(n)

    def readline(self, size: int | None = -1) -> bytes:
        with self._checked():
            return super().readline(size)


def open_input(path: str | os.PathLike, mode: str = "rb", *, name: str | None = None, **text: Any) -> Any:
    """Open the input file ``path`` for a reader that streams it: binary (``"rb"``) or text (``"r"``,
    with ``encoding``/``newline`` as for :func:`open`), decompressing ``.gz`` on the fly. The caller
    has checked and recorded it (:func:`._inputs.require_file`)."""
    if mode not in ("rb", "r"):
        raise ValueError(f"open_input reads; mode {mode!r}")
    if not is_compressed(path):
        return open(path, mode, **text)
    raw = _CheckedGzip(path, str(path) if name is None else name)
    return raw if mode == "rb" else _io.TextIOWrapper(raw, **text)
