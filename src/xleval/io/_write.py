"""The one writer: every file xleval writes (tables, streamed tables, metadata sidecars, calibrators,
reports, checklists) goes through :func:`atomic_path`, which is where the output guard lives.

* An output that is an input of the running command is refused before anything is replaced: the
  same file under another spelling of its path, or through a symbolic or a hard link (compared by
  device and inode; see :mod:`._inputs`), and so is a second output to a file already written.
* A regular file is written to a temporary file beside it, flushed to disk, and renamed over it
  only when complete: there is never a partial output. A symbolic link stays a link: the file it
  points to is replaced.
* A character device or a FIFO (``/dev/null``, a named pipe) and a file-descriptor link
  (``/dev/stdout``, ``/dev/fd/N``) are written in place: renaming over them would replace the
  device node or the link with a regular file.
* A failed write (a full disk, a read-only file system, an I/O error) is an error that names the
  output, never a success, and never names the temporary file.
* ``NAME.EXT.gz`` is written gzip-compressed (no name or time in the gzip header, so the same
  table gives the same bytes).
* The outputs of one command are written together (:func:`outputs_together`): the regular files are
  renamed into place in one step when every one of them is complete, or none is.
"""
from __future__ import annotations

import contextlib
import csv
import errno
import glob
import gzip
import hashlib
import io as _io
import json
import os
import re
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._base.emit import tsv_text
from ..exceptions import InputError, OutputError
from ._formats import SIDECAR_SUFFIX, STDOUT, is_compressed, table_format, through_fd_link
from ._inputs import file_kind, input_named, output_named, record_output

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made, not at import
    import pandas as pd

__all__ = ["check_output_path", "atomic_path", "atomic_table", "open_output", "write_text", "write_table",
           "check_sidecar_path", "check_stdout", "check_stdout_output", "is_stdout", "format_rows", "arrow_table",
           "is_arrow_table", "outputs_together"]

_HOST = socket.gethostname()
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS, errno.EPIPE, errno.ENXIO,
                 errno.EACCES, errno.EPERM}
_WRITE_MESSAGES = ("No space left on device", "Disk quota exceeded", "File too large", "Read-only file system",
                   "Input/output error")
#: within :func:`outputs_together`: the complete outputs waiting to be renamed into place, each as
#: (target, [(tmp, final), ...], [file to remove, ...])
_TOGETHER: ContextVar[list[tuple[Path, list[tuple[Path, Path]], list[Path]]] | None] = ContextVar(
    "xleval_outputs_together", default=None)


def check_output_path(path: str | os.PathLike, *, inputs: Sequence[str | os.PathLike] = (),
                      stdout: bool = False) -> Path:
    """Refuse, before any work is done, an output path that cannot or must not be written: its folder
    is missing or not writable, it is a directory, a block device or a socket, or it is one of
    ``inputs`` or a file the running command has read (same file by device and inode).

    ``-`` is standard output, never a file named ``-`` (:func:`check_stdout_output`): accepted where the
    caller writes it there (``stdout=True``: :func:`write_text` and :func:`write_table` do), else refused."""
    if is_stdout(path):
        return check_stdout_output(inputs=inputs, allowed=stdout)
    if not str(path).strip():
        raise OutputError(f"output path {str(path)!r}: give a file name")
    if str(path).endswith(("/", os.sep)) and not os.path.isdir(path):  # 'out/': a folder was meant, not a file 'out'
        raise OutputError(f"{path}: names a folder that does not exist; give a file name (or create the folder)")
    target = Path(path)
    direct, final = _plan(target)
    _refuse_inputs(target, inputs)
    if direct:
        return target
    shown = final.parent if target.is_symlink() else (target.parent if str(target.parent) else Path("."))
    if not final.parent.is_dir():
        raise OutputError(f"{target}: output directory {shown} does not exist; create it first")
    if not os.access(final.parent, os.W_OK):
        raise OutputError(f"{target}: output directory {shown} is not writable")
    try:
        mode = os.stat(final).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise OutputError(f"{target}: cannot write ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"{target}: is a directory; give a file name")
    if not stat.S_ISREG(mode):
        raise OutputError(f"{target}: is {file_kind(mode)}; write to a file, a character device or a FIFO")
    if not os.access(final, os.W_OK):  # a rename could replace it; a plain open() would refuse, and so do we
        raise OutputError(f"{target}: the file is read-only; make it writable or choose another output path")
    return target


def is_stdout(path: object) -> bool:
    """The one spelling of standard output as an output path: ``-``."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) == STDOUT


def check_stdout_output(*, inputs: Sequence[str | os.PathLike] = (), allowed: bool = True,
                        what: str = "this output") -> Path:
    """The one rule of ``-`` as an output: standard output where the output can go there (``allowed``),
    else refused with one line; standard output must not be sent into an input (:func:`check_stdout`)."""
    if not allowed:
        raise OutputError(f"-: {what} is written to a file, not to standard output; give a file name")
    check_stdout(inputs)
    return Path(STDOUT)


def _plan(target: Path) -> tuple[bool, Path]:
    """``(True, target)`` to write in place (a device, a FIFO, a file-descriptor link); else
    ``(False, final)``: the regular file to replace, a symbolic link's target rather than the link."""
    if through_fd_link(target):
        return True, target
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # a symbolic link loop, a path through a file
        raise OutputError(f"{target}: cannot write ({exc.strerror or exc}); check the path") from None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        return True, target
    return False, Path(os.path.realpath(target)) if target.is_symlink() else target


def _refuse_inputs(target: Path, inputs: Sequence[str | os.PathLike]) -> None:
    read_as = input_named(target) or next((str(p) for p in inputs if _same_file(p, target)), None)
    if read_as is not None:
        same = "is an input" if read_as == str(target) else f"is the same file as the input {read_as}"
        raise OutputError(f"{target}: {same} of this command; writing the output there would destroy it; "
                          "choose another output path")
    written_as = output_named(target)
    if written_as is not None:
        raise OutputError(f"{target}: is already an output of this command ({written_as}); "
                          "give each output its own path")


def _is_file(path: str | os.PathLike, identity: tuple[int, int]) -> bool:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == identity


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(sa.st_mode) and (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield the path to write the output of ``path`` to: a temporary file beside it, renamed over it
    when the block ends without an error (removed otherwise), or the path itself for a device or a
    FIFO. Write errors become :class:`OutputError` naming ``path``."""
    target = check_output_path(path)
    direct, _ = _plan(target)
    if direct:
        with _write_errors(target, []):
            yield target
        return
    with _atomic_files(target) as tmp:
        yield tmp


@contextlib.contextmanager
def atomic_table(path: str | os.PathLike, metadata: Mapping[str, object] | None = None) -> Iterator[Path]:
    """The one output-commit step of a table: yield the temporary file to write the table ``path`` to;
    a text table's metadata (``PATH.signatures.json``) is written to a temporary file of its own, and both
    are renamed into place together when the block ends, or neither is (a failed write or rename leaves
    the earlier table and its sidecar as they were). Without metadata, a sidecar left by an earlier
    write of ``path`` is removed in the same step (it describes a table that is gone). A device or a
    FIFO has no sidecar; a Parquet table keeps its metadata inside."""
    target = check_output_path(path)
    if _plan(target)[0] or table_format(path) == "parquet":
        with atomic_path(target) as tmp:
            yield tmp
        return
    sidecar = Path(str(path) + SIDECAR_SUFFIX)
    stale = not metadata and os.path.lexists(sidecar) and input_named(sidecar) is None
    text = json.dumps(metadata, indent=2, sort_keys=True) + "\n" if metadata else None
    with _atomic_files(target, [(sidecar, text)] if text else [], remove=[sidecar] if stale else []) as tmp:
        yield tmp


@contextlib.contextmanager
def outputs_together() -> Iterator[None]:
    """Write every output of the block together: the regular files written within it (:func:`atomic_path`,
    :func:`atomic_table`, :func:`write_text`, :func:`write_table`, a calibrator's ``save``) stay temporary
    files until the block ends without an error, and are then renamed into place in one step with their
    sidecars (:func:`_replace_together`); after an error or a signal none is, and the earlier files stay
    as they were. A device or a FIFO is written in place at once (nothing written there can be taken back):
    write it last. A block within a block joins the outer one."""
    outer = _TOGETHER.get()
    if outer is not None:  # joins the outer block; what it wrote is dropped if it fails, even where caught
        start = len(outer)
        try:
            yield
        except BaseException:
            _discard(outer[start:])
            del outer[start:]
            raise
        return
    pending: list[tuple[Path, list[tuple[Path, Path]], list[Path]]] = []
    token = _TOGETHER.set(pending)
    try:
        try:
            yield
        finally:
            _TOGETHER.reset(token)
        if pending:
            pairs = [pair for _, group, _ in pending for pair in group]
            remove = [path for _, _, group in pending for path in group]
            with _together_errors(pending):
                _replace_together(pairs, remove)
    except BaseException:
        _discard(pending)
        raise
    for _, group, _ in pending:
        for _, final in group:
            record_output(final)


def _discard(pending: Sequence[tuple[Path, list[tuple[Path, Path]], list[Path]]]) -> None:
    """Remove the temporary files of outputs that will not be renamed into place."""
    for _, group, _ in pending:
        for tmp, _ in group:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


@contextlib.contextmanager
def _together_errors(pending: Sequence[tuple[Path, list[tuple[Path, Path]], list[Path]]]) -> Iterator[None]:
    """:func:`_write_errors` for the one rename step of :func:`outputs_together`, naming the output whose file
    failed (its temporary file, its final name or a file replaced with it), else the first."""
    def files(entry):
        target, group, gone = entry
        return {str(p) for p in (target, *(f for pair in group for f in pair), *gone)}

    try:
        yield
    except OSError as exc:
        failed = next((e for e in pending if str(exc.filename) in files(e) or str(exc.filename2) in files(e)),
                      pending[0])
        tmps = [tmp for _, group, _ in pending for tmp, _ in group]
        also = [p for target, group, gone in pending for p in (target, *(f for _, f in group), *gone)]
        with _write_errors(failed[0], tmps, also=also):
            raise


def _refuse_pending(targets: Sequence[Path], finals: Sequence[Path]) -> None:
    """Within :func:`outputs_together`, a file already written by the block is not yet an output the
    scope knows of (it is still a temporary file): a second output to it is refused here."""
    pending = _TOGETHER.get() or []
    written = {os.path.realpath(f): target for target, group, _ in pending for _, f in group}
    for target, final in zip(targets, finals, strict=True):
        if os.path.realpath(final) in written:
            raise OutputError(f"{target}: is already an output of this command ({written[os.path.realpath(final)]}); "
                              "give each output its own path")


@contextlib.contextmanager
def _atomic_files(target: Path, beside: Sequence[tuple[Path, str]] = (), remove: Sequence[Path] = ()) -> Iterator[Path]:
    """A temporary file for the regular file ``target``; when the block ends without an error, the small
    texts ``beside`` (path, text) are written to temporary files of their own, and all are renamed over
    their files, with the files ``remove`` removed, together (:func:`_replace_together`); within
    :func:`outputs_together`, with the block's other outputs when the block ends."""
    targets = [target, *(path for path, _ in beside)]
    finals = [_plan(t)[1] for t in targets]
    _refuse_pending(targets, finals)
    for final in finals:
        _remove_stale_temporaries(final.parent, final.name)
    tmps: list[Path] = []
    try:
        tmps.append(_temporary(target, finals[0]))
        with _write_errors(target, tmps, also=[*targets, *finals, *remove]):
            yield tmps[0]
            for (path, text), final in zip(beside, finals[1:], strict=True):
                tmps.append(_temporary(path, final))
                with open(tmps[-1], "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
            for tmp in tmps:
                _flush_to_disk(tmp)
            for path in targets:
                _refuse_inputs(path, ())  # a streamed reader records its input while the output is being written
            together = _TOGETHER.get()
            if together is not None:  # complete: renamed with the block's other outputs, which removes them on error
                together.append((target, list(zip(tmps, finals, strict=True)), list(remove)))
                return
            _replace_together(list(zip(tmps, finals, strict=True)), list(remove))
    except BaseException:
        for tmp in tmps:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise
    for final in finals:
        record_output(final)


def _temporary(target: Path, final: Path) -> Path:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{_short(final.name)}.{os.getpid()}@{_HOST}.", suffix=".tmp",
                                   dir=final.parent)
    except OSError as exc:  # the message names the output, never the temporary file
        raise OutputError(f"{target}: cannot write ({exc.strerror or exc}); no output was written") from None
    os.close(fd)
    os.chmod(tmp, _output_mode(final))  # mkstemp makes 0600; an output gets the usual mode
    return Path(tmp)


def _replace_together(pairs: list[tuple[Path, Path]], remove: list[Path]) -> None:
    """Rename each ``(tmp, final)`` over its final file and remove ``remove``, all or nothing: the first
    pair (the table) is renamed last; until then every other file replaced or removed is kept under a
    backup name, and put back if a later step fails."""
    backups: list[tuple[Path, Path | None]] = []  # (final, its earlier file now at this name, or None)
    try:
        for path in remove:
            aside = _backup_name(path)
            os.replace(path, aside)
            backups.append((path, aside))
        for tmp, final in pairs[1:]:
            backups.append((final, _keep_aside(final) if os.path.lexists(final) else None))
            os.replace(tmp, final)
        os.replace(*pairs[0])
    except BaseException:
        for final, kept in reversed(backups):
            with contextlib.suppress(OSError):
                if kept is None:
                    final.unlink()
                    continue
                os.replace(kept, final)  # a no-op when the rename never happened (two links of one file)
                if os.path.lexists(kept):
                    kept.unlink()
        raise
    for _, kept in backups:
        if kept is not None:
            with contextlib.suppress(OSError):
                kept.unlink()


def _keep_aside(final: Path) -> Path:
    """A second name for the file ``final``, to put it back by: a hard link (the file stays in place), or,
    on a file system without hard links, the file moved there."""
    aside = _backup_name(final)
    try:
        os.link(final, aside)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO):
            raise
        os.replace(final, aside)
    return aside


def _backup_name(path: Path) -> Path:
    """A free name beside ``path`` of the temporary files' form (an interrupted run's is removed later)."""
    return path.parent / f".{_short(path.name)}.{os.getpid()}@{_HOST}.{os.urandom(4).hex()}.tmp"


def _flush_to_disk(path: Path) -> None:
    """fsync before the rename: after a power loss the target holds the old or the new file, not an empty one."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EROFS):  # file systems that cannot sync have nothing to flush
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def _write_errors(target: Path, tmps: Sequence[Path], also: Sequence[Path] = ()) -> Iterator[None]:
    """An OSError about the output ``target``, its temporary files ``tmps`` or the files ``also`` written
    or replaced with it becomes an OutputError naming ``target``."""
    try:
        yield
    except OSError as exc:
        text = str(exc)
        own = {str(t) for t in (*tmps, target, *also)}
        if exc.filename is not None and str(exc.filename) not in own and not str(exc.filename).endswith(".tmp"):
            raise  # about another file (an input read while the output is written): not this output's failure
        if not (exc.errno in _WRITE_ERRNOS or any(m in text for m in _WRITE_MESSAGES)
                or any(str(t) in text for t in tmps) or exc.filename in own):
            raise
        reason = exc.strerror or text
        for tmp in tmps:
            reason = reason.replace(str(tmp), str(target))
        done = "no output was written" if tmps or not target.exists() else "the output is incomplete"
        fix = "; free some space or write elsewhere" if exc.errno == errno.ENOSPC or "No space" in text else ""
        raise OutputError(f"{target}: cannot write ({reason}){fix}; {done}") from None


def _short(name: str) -> str:
    """The output's name in its temporary file's name: whole, or (a long name) cut with a hash of the
    whole, so that the temporary name stays within the file system's limit when the output's does."""
    raw = os.fsencode(name)  # the file system's bytes: a name that is not UTF-8 keeps its bytes (surrogateescape)
    if len(raw) <= 120:
        return name
    return os.fsdecode(raw[:96]) + "~" + hashlib.sha256(raw).hexdigest()[:12]


def _remove_stale_temporaries(directory: Path, name: str) -> None:
    """Remove the temporary files of earlier writes of ``name`` that were killed (SIGKILL, out of
    memory) before they could clean up: those of this host whose process is gone. Another host's
    files on a shared folder, and those of running processes, are left alone."""
    name = _short(name)
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)@(.+)\.[^.]+\.tmp")
    for entry in directory.glob(f".{glob.escape(name)}.*.tmp"):
        match = pattern.fullmatch(entry.name)
        if match and match.group(2) == _HOST and not _process_alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                entry.unlink()


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, owned by someone else
        return True
    return True


def _output_mode(target: Path) -> int:
    """The mode a plain ``open(target, 'w')`` would give: the existing file's, else 0666 less the umask."""
    if target.exists():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def open_output(tmp: str | os.PathLike, path: str | os.PathLike, mode: str = "wb") -> Any:
    """Open the file ``tmp`` that :func:`atomic_path` gave for the output ``path``: binary (``"wb"``)
    or UTF-8 text (``"w"``), gzip-compressed when ``path`` ends in ``.gz``."""
    if not is_compressed(path):
        return open(tmp, mode) if mode == "wb" else open(tmp, mode, encoding="utf-8", newline="")
    packed = _GzipOutput(tmp)
    return packed if mode == "wb" else _io.TextIOWrapper(packed, encoding="utf-8", newline="")


class _GzipOutput(gzip.GzipFile):
    """A gzip file at ``tmp`` whose header names no file (it would name the temporary one) and holds
    no time (the same table gives the same bytes)."""

    def __init__(self, tmp: str | os.PathLike):
        self._raw = open(tmp, "wb")  # noqa: SIM115 - closed by close(), after the gzip trailer
        super().__init__(filename="", mode="wb", fileobj=self._raw, mtime=0)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through the output guard, atomically (gzip for ``.gz``);
    ``-`` is standard output."""
    if is_stdout(path):
        check_stdout()
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with atomic_path(path) as tmp, open_output(tmp, path, "w") as fh:
        fh.write(text)


def _is_direct(path: str | os.PathLike) -> bool:
    return _plan(Path(path))[0]


def check_stdout(inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse '-' (standard output) when the shell sends it into an input of the command (``>> in.tsv``):
    one the running command has read, or one of ``inputs`` (:func:`xleval._base.scope.stdout_input`, the
    rule the command's readers also apply when they record an input)."""
    from .._base.scope import stdout_input, stdout_message

    if sys.stdout is None or getattr(sys.stdout, "closed", False):
        raise OutputError("standard output is closed (the command was run with >&-), so '-' cannot be written; "
                          "give -o a file, or leave standard output open")
    read_as = stdout_input(tuple(p for p in inputs if p is not None))
    if read_as is not None:
        raise OutputError(stdout_message(read_as))


def check_sidecar_path(path: str | os.PathLike, metadata: Mapping[str, object] | None) -> None:
    """Before a text table is written: its sidecar can be written too (or a stale one removed), so the
    table never ends up without the signatures it should carry, or beside another table's."""
    if is_stdout(path) or _is_direct(path) or table_format(path) == "parquet":
        return
    sidecar = str(path) + SIDECAR_SUFFIX
    if metadata:
        check_output_path(sidecar)
    elif os.path.lexists(sidecar) and not os.path.isfile(sidecar) and not os.path.islink(sidecar):
        raise OutputError(f"{sidecar}: is {file_kind(os.lstat(sidecar).st_mode)}, where the table's signature "
                          "sidecar would be; remove it")


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, metadata: Mapping[str, object] | None = None,
                multiline: Sequence[str] = ()) -> None:
    """Write ``df`` atomically by extension; ``metadata`` (e.g. metric signatures) goes into the Parquet
    schema metadata under ``b"xleval"``, or into a sidecar ``PATH.signatures.json`` for text formats.
    ``multiline``: columns whose TSV cells may hold a tab or line break, written in CSV quotes (as pandas'
    ``to_csv`` writes them, and xleval's reader and pandas read them back) instead of refused: the texts of
    rows to annotate (source, hypothesis, reference), never names.

    ``df`` is a pandas DataFrame or a ``pyarrow.Table`` (written to Parquet as it is, without pandas;
    converted to pandas for the text formats)."""
    fmt = table_format(path)
    if is_arrow_table(df) and fmt != "parquet":
        df = df.to_pandas()
    if is_stdout(path):  # data for a pipe or a file; names shown with escapes on a terminal (read by a person)
        write_text(path, tsv_text(df) if _on_terminal() else format_rows(df, "tsv", where="-: ", multiline=multiline))
        return
    if _terminal_device(path):  # -o /dev/stdout, /dev/tty on a terminal: the same rule as '-'
        write_text(path, tsv_text(df))
        return
    check_output_path(path)
    check_sidecar_path(path, metadata)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = _with_text_nulls(df) if is_arrow_table(df) else arrow_table(df, where=f"{path}: ")
        if metadata:
            meta = dict(table.schema.metadata or {})
            meta[b"xleval"] = json.dumps(metadata, sort_keys=True).encode()
            table = table.replace_schema_metadata(meta)
        with atomic_table(path) as tmp:
            if is_compressed(path):
                with open_output(tmp, path) as fh:
                    pq.write_table(table, fh, compression="zstd")
            else:
                pq.write_table(table, tmp, compression="zstd")
        return
    text = format_rows(df, fmt, where=f"{path}: ", multiline=multiline)
    with atomic_table(path, metadata) as tmp, open_output(tmp, path, "w") as fh:
        fh.write(text)


def _terminal_device(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a terminal (``/dev/tty``, ``/dev/stdout`` or ``/dev/fd/1`` while that is one): what
    is written there is read by a person, so names are shown with their control characters escaped."""
    try:
        if not stat.S_ISCHR(os.stat(path).st_mode):
            return False
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)


def _on_terminal() -> bool:
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError):  # no stdout, or a closed one
        return False


def is_arrow_table(obj: object) -> bool:
    """Whether ``obj`` is a ``pyarrow.Table`` (without importing pyarrow: if it is not imported, it is not one)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(obj, pa.Table)


def _with_text_nulls(table):
    """Columns of Arrow's null type (no value at all) as string columns: a later write of the same
    table with values could not join them otherwise."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_null(field.type):
            table = table.set_column(i, field.with_type(pa.string()), table.column(i).cast(pa.string()))
    return table


def arrow_table(df: pd.DataFrame, schema=None, *, where: str = ""):
    """``df`` as an Arrow table for Parquet, the one conversion of whole and streamed writes: a text
    column without any value is a string column (not Arrow's null type, which a later batch with
    values could not join), and a column mixing numbers and text is an InputError naming it."""
    import pyarrow as pa

    try:
        table = pa.Table.from_pandas(df, schema=schema, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        column = next((c for c in df.columns if _mixed(df[c])), None)
        if column is None:
            raise InputError(f"{where}cannot write as parquet ({exc}); write .jsonl or .tsv instead") from None
        raise InputError(f"{where}column {column!r} mixes numbers and text, which one Parquet column cannot hold; "
                         "write .jsonl or .tsv, or make the column's values one type") from None
    return table if schema is not None else _with_text_nulls(table)


def _mixed(values: pd.Series) -> bool:
    if values.dtype != object:
        return False
    kinds = {type(v) for v in values.dropna().tolist()}
    return len({k if k not in (int, float) else float for k in kinds}) > 1


#: how a text table (TSV, CSV, JSONL) writes the cells that have no text form of their own: dates,
#: times and timestamps in ISO 8601 (``2020-01-31``, ``2020-01-31T09:30:00+00:00``), decimals as their
#: exact digits (``"1.10"``: a JSON string, since a JSON number would be read back as a float), durations in
#: ISO 8601 (``P0DT0H0M1.5S``, which ``pandas.Timedelta`` reads back). Bytes have none: refused.
_SIMPLE_KINDS = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float", "boolean", "integer-na"})


def format_rows(df: pd.DataFrame, fmt: str, *, header: bool = True, where: str = "",
                instead: str = "write .parquet, .jsonl or .csv instead", multiline: Sequence[str] = ()) -> str:
    """The rows of ``df`` as TSV, CSV or JSONL text (every text table xleval writes, whole or in batches).
    ``instead``: the way out a refusal offers (a tab in a TSV cell, bytes in any text format);
    ``multiline``: the columns where such a TSV cell is CSV-quoted instead (:func:`write_table`)."""
    df = _text_cells(df, fmt, where)
    if fmt == "jsonl":
        return _to_jsonl(df)
    if fmt == "csv":
        return df.to_csv(index=False, header=header, lineterminator="\n")
    text = _to_tsv(df, where, instead, multiline)
    return text if header else text.split("\n", 1)[1]


def _text_cells(df: pd.DataFrame, fmt: str, where: str) -> pd.DataFrame:
    """``df`` with dates, times, decimals and durations as text (see ``_SIMPLE_KINDS``'s note): the
    one conversion of the three text formats. Binary cells are an InputError naming the column."""
    import pandas as pd

    converted = {}
    for col in df.columns:
        values = df[col]
        if pd.api.types.is_timedelta64_dtype(values.dtype):
            converted[col] = values.map(_text_value, na_action="ignore").astype(object)
        elif values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in _SIMPLE_KINDS:
            if values.map(lambda v: isinstance(v, (bytes, bytearray, memoryview))).any():
                raise InputError(f"{where}column {col!r} holds binary values (bytes), which a {fmt.upper()} file "
                                 "cannot hold; write .parquet, or decode the column to text first")
            converted[col] = values.map(_text_value)
    return df.assign(**converted) if converted else df


def _text_value(value: Any) -> Any:
    import datetime
    import decimal

    import pandas as pd

    if isinstance(value, (datetime.timedelta, np.timedelta64)):
        return None if pd.isna(value) else pd.Timedelta(value).isoformat()
    if isinstance(value, (datetime.date, datetime.time)):  # datetime and pandas' Timestamp are dates too
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _to_jsonl(df: pd.DataFrame) -> str:
    """One JSON object per row; floats written with repr (shortest round-trip, unlike pandas' 15 digits),
    NaN/inf as null."""
    import pandas as pd

    def clean(value):
        if value is pd.NaT or (isinstance(value, float) and not np.isfinite(value)):
            return None
        if isinstance(value, np.generic):
            return clean(value.item())
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return value

    columns = list(df.columns)
    lines = (json.dumps(dict(zip(columns, map(clean, row), strict=True)), ensure_ascii=False)
             for row in df.itertuples(index=False, name=None))
    return "".join(line + "\n" for line in lines)


def _to_tsv(df: pd.DataFrame, where: str = "", instead: str = "write .parquet, .jsonl or .csv instead",
            multiline: Sequence[str] = ()) -> str:
    """TSV with the CSV quoting rule (what pandas' ``to_csv(sep="\\t")`` and ``csv.writer`` write): a field
    holding a double quote is written wholly in quotes with its quotes doubled, every other field as it
    is, so ``pd.read_csv(path, sep="\\t", dtype=str, keep_default_na=False)`` and xleval's reader give
    back the same texts. Tabs and line breaks are refused, in a cell and in a column name: a line stays a
    row for line-based tools, and a header field is one name. A cell of a ``multiline`` column may hold them:
    the CSV rule then wraps it in quotes (the reader's rule: a record split inside quotes is CSV)."""
    import pandas as pd

    for col in df.columns:
        if any(c in str(col) for c in "\t\n\r"):
            raise InputError(f"{where}column name {str(col)!r} has a tab or line break, which a TSV header cannot "
                             f"hold; rename the column, or {instead}")
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            cells = df[col].dropna().astype(str)
            if col not in multiline and cells.str.contains("[\t\n]", regex=True).any():
                raise InputError(
                    f"{where}column {col!r} has a text with a tab or newline, which TSV cannot hold; {instead}"
                )
    return df.to_csv(sep="\t", index=False, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
