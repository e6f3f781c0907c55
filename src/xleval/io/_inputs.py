"""The inputs of the running command, and opening input files safely.

Every file a command reads is recorded while a :func:`command_scope` is active (the CLI runs each
command in one; ``apply_chunked``/``score_chunked`` open one too), so that the one writer
(:mod:`._write`) can refuse an output that is one of them: the same file under another spelling,
through a symbolic link or a hard link (files are compared by device and inode, never by name).
Readers record their files explicitly with :func:`record_input`; as a safety net for readers that
forget, an audit hook also records every regular file opened read-only through Python's ``open``
while a scope is active (files opened by C++ code, such as pyarrow's, are only seen explicitly).

Outside a scope nothing is recorded: a Python user may read a table, change it and write it back.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..exceptions import InputError

__all__ = ["command_scope", "record_input", "record_output", "input_named", "output_named", "require_file",
           "read_regular_file", "file_kind"]


@dataclass
class _Record:
    inputs: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) -> the name it was read by
    outputs: dict[tuple[int, int], str] = field(default_factory=dict)


_SCOPE: ContextVar[_Record | None] = ContextVar("xleval_command_files", default=None)
_HOOKED = False


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """Record the files read and written until the block ends; nested scopes share the outermost."""
    if _SCOPE.get() is not None:
        yield
        return
    _install_open_hook()
    token = _SCOPE.set(_Record())
    try:
        yield
    finally:
        _SCOPE.reset(token)


def _identity(path: str | os.PathLike | int) -> tuple[int, int] | None:
    """(device, inode) of a regular file (following links), else None: only a regular file can be
    destroyed by replacing it; writing to a device or a pipe that is also read is the user's stream."""
    try:
        st = os.stat(path)
    except (OSError, ValueError, TypeError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def record_input(path: str | os.PathLike) -> None:
    """Note that the running command reads ``path`` (no-op outside a scope, for '-' and non-files)."""
    record = _SCOPE.get()
    if record is None or str(path) == "-":
        return
    key = _identity(path)
    if key is not None:
        record.inputs.setdefault(key, str(path))


def record_output(path: str | os.PathLike) -> None:
    """Note that the running command wrote the regular file ``path``."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    if key is not None:
        record.outputs.setdefault(key, str(path))


def input_named(path: str | os.PathLike) -> str | None:
    """The name under which the running command read the file at ``path``, or None."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    return None if key is None else record.inputs.get(key)


def output_named(path: str | os.PathLike) -> str | None:
    """The name under which the running command already wrote the file at ``path``, or None."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    return None if key is None else record.outputs.get(key)


def _audit(event: str, args: tuple) -> None:
    if event != "open" or _SCOPE.get() is None:
        return
    try:
        path, mode, flags = args
        if isinstance(path, int) or path is None:
            return
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else (flags or 0) & (os.O_WRONLY | os.O_RDWR)
        if not writing:
            record_input(os.fsdecode(path))
    except Exception:  # an audit hook must never break the open it watches
        return


def _install_open_hook() -> None:
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)  # hooks cannot be removed; it does nothing outside a scope
        _HOOKED = True


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISREG, "a regular file"))


def file_kind(mode: int) -> str:
    """'a directory', 'a FIFO (named pipe)', ... for a ``st_mode``."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def require_file(path: str | os.PathLike, name: str | None = None, *, streams: bool = True) -> None:
    """Refuse a path that cannot be read as a file, with the reason (missing, a directory, a device);
    record it as an input. ``streams``: a FIFO (``<(command)``) is accepted, read once."""
    name = str(path) if name is None else name
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"{name}: no such file; check the path") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror or exc}); check the path and its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{name}: is a directory; give a file")
    if not (stat.S_ISREG(st.st_mode) or (streams and stat.S_ISFIFO(st.st_mode))):
        raise InputError(f"{name}: is {file_kind(st.st_mode)}, not a file; give a file")
    record_input(path)


def read_regular_file(path: str | os.PathLike, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, read without blocking on a FIFO and
    without reading a device forever (``/dev/zero``). Raises OSError (missing, a directory, no
    permission; ``strerror`` says which) or ValueError (not a regular file, too large)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once instead of waiting for a writer
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"it is {file_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise ValueError(f"{st.st_size} bytes, more than the {limit >> 20} MiB {what} may have")
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise ValueError(f"more than the {limit >> 20} MiB {what} may have")
    record_input(path)
    return data
