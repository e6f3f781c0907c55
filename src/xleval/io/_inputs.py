"""Opening input files: each is checked to be what it claims (a file, not a directory or a device;
a regular file of bounded size where it is read whole) and recorded as an input of the running
command (:mod:`xleval._base.scope`), which its outputs may not overwrite."""
from __future__ import annotations

import errno
import os
import stat

from .._base.scope import command_scope, input_named, output_named, record_input, record_output
from ..exceptions import InputError

__all__ = ["command_scope", "record_input", "record_output", "input_named", "output_named", "require_file",
           "read_regular_file", "file_kind"]


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
    if stat.S_ISFIFO(st.st_mode) and not streams:
        raise InputError(f"{name}: is a FIFO (named pipe), which can be read once; a streamed table is read twice "
                         "(record widths, column types): save it to a file, or read it whole (without chunk_size=)",
                         argument="chunk_size")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(f"{name}: is {file_kind(st.st_mode)}, not a file; give a file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{name}: permission denied; make the file readable (chmod u+r) or copy it")
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
