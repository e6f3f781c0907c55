"""The files of the running command: what it read, what it wrote.

Every file a command reads is recorded while a :func:`command_scope` is active (the CLI runs each
command in one; ``apply_chunked``/``score_chunked`` check their paths explicitly), so that the one
writer (:mod:`xleval.io._write`) can refuse an output that is one of them: the same file under
another spelling, through a symbolic link or a hard link (files are compared by device and inode,
never by name). Readers record their files explicitly with :func:`record_input`; as a safety net
for readers that forget, an audit hook also records every regular file opened read-only through
Python's ``open`` while a scope is active (files opened by C++ code, such as pyarrow's, are only
seen when recorded explicitly).

Outside a scope nothing is recorded: a Python user may read a table, change it and write it back.
This module imports nothing heavy: the command line's root uses it before any command loads.
"""
from __future__ import annotations

import contextlib
import functools
import os
import stat
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["command_scope", "record_input", "record_output", "input_named", "output_named", "record_stream_input",
           "stream_input_named", "stdout_input"]


@dataclass
class _Record:
    inputs: dict[tuple[int, int], str] = field(default_factory=dict)  # (device, inode) -> the name it was read by
    outputs: dict[tuple[int, int], str] = field(default_factory=dict)
    stdout: tuple[int, int] | None = None  # the regular file the shell sent standard output to (> f, >> f)


_SCOPE: ContextVar[_Record | None] = ContextVar("xleval_command_files", default=None)


@contextlib.contextmanager
def command_scope() -> Iterator[None]:
    """Record the files read and written until the block ends; nested scopes share the outermost."""
    if _SCOPE.get() is not None:
        yield
        return
    _install_open_hook()
    token = _SCOPE.set(_Record(stdout=_stdout_identity()))
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
        _refuse_stdout_into(record, key, str(path))


def record_output(path: str | os.PathLike) -> None:
    """Note that the running command wrote the regular file ``path``."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    if record is not None and key is not None:
        record.outputs.setdefault(key, str(path))


def input_named(path: str | os.PathLike) -> str | None:
    """The name under which the running command read the file at ``path``, or None."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    return None if record is None or key is None else record.inputs.get(key)


def output_named(path: str | os.PathLike) -> str | None:
    """The name under which the running command already wrote the file at ``path``, or None."""
    record = _SCOPE.get()
    key = _identity(path) if record is not None else None
    return None if record is None or key is None else record.outputs.get(key)


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
    except Exception:  # noqa: BLE001 - an audit hook must never break the open it watches
        return


@functools.cache  # install once: hooks cannot be removed; it does nothing outside a scope
def _install_open_hook() -> None:
    sys.addaudithook(_audit)


def _fd_identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def record_stream_input(fd: int, name: str = "<stdin>") -> None:
    """Note that the running command reads the file behind descriptor ``fd`` (``< in.tsv``), if a file."""
    record = _SCOPE.get()
    key = _fd_identity(fd) if record is not None else None
    if record is not None and key is not None:
        record.inputs.setdefault(key, name)
        _refuse_stdout_into(record, key, name)


def stream_input_named(fd: int) -> str | None:
    """The name under which the running command read the file behind descriptor ``fd`` (``> in.tsv``
    or ``>> in.tsv`` on standard output), or None."""
    record = _SCOPE.get()
    key = _fd_identity(fd) if record is not None else None
    return None if record is None or key is None else record.inputs.get(key)


def _stdout_identity() -> tuple[int, int] | None:
    try:
        return _fd_identity(sys.stdout.fileno())
    except (AttributeError, ValueError, OSError):  # no standard output, or a replaced one (tests) without a descriptor
        return None


def stdout_input(paths: tuple[str | os.PathLike, ...] = ()) -> str | None:
    """The input that standard output goes to (``>> in.tsv``), if any: a file the running command has
    read, or one of ``paths``; compared by device and inode."""
    out = _stdout_identity()
    if out is None:
        return None
    record = _SCOPE.get()
    if record is not None and out in record.inputs:
        return record.inputs[out]
    return next((str(p) for p in paths if str(p) != "-" and _identity(p) == out), None)


def _refuse_stdout_into(record: _Record, key: tuple[int, int], name: str) -> None:
    """The one rule of standard output and the inputs: a command never reads the file its standard output
    goes to (``xleval leaderboard in.tsv >> in.tsv`` would append to, or ``> in.tsv`` has emptied, its input)."""
    if record.stdout is not None and key == record.stdout:
        from ..exceptions import OutputError

        raise OutputError(stdout_message(name))


def stdout_message(name: str) -> str:
    return (f"-: standard output goes to the input {name} of this command; writing the output there would destroy it; "
            "redirect it to another file")
