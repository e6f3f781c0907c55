"""Streaming table readers: a table comes in as a sequence of :class:`TableBatch` of bounded size.

Parquet is read with ``ParquetFile.iter_batches`` (row groups decoded one at a time), CSV/TSV with
pandas' chunked C parser (the same parser and options as :func:`xleval.io.read_table`, every cell
read as text), JSONL line by line. Each batch knows the 0-based position of its first row in the
file, so an error in a batch names the file row (1-based, header not counted) and the batch.

Unlike :func:`xleval.io.read_table`, text-format columns other than the ``numeric`` ones stay text:
guessing types per batch could give different types in different batches.
"""
from __future__ import annotations

import contextlib
import csv
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..io import check_text_file_shape, iter_json_objects, table_format, to_numeric_column

__all__ = ["TableBatch", "iter_batches", "count_rows", "DEFAULT_CHUNK_SIZE", "batch_context", "finish_batch",
           "check_header", "parquet_columns", "open_parquet"]

DEFAULT_CHUNK_SIZE = 200_000


@dataclass(frozen=True)
class TableBatch:
    """Rows ``start + 1 .. start + len(frame)`` of a table (1-based, header not counted)."""

    frame: pd.DataFrame
    start: int
    index: int
    source: str = "input"  # the file it came from, for messages

    @property
    def stop(self) -> int:
        return self.start + len(self.frame)

    def where(self, name: str) -> str:
        return f"{name}: batch {self.index} (rows {self.start + 1}-{self.stop})"


@contextlib.contextmanager
def batch_context(batch: TableBatch, name: str) -> Iterator[None]:
    """Prefix an InputError raised while processing ``batch`` with the batch and its rows: messages of
    the in-memory functions count rows from the start of the frame they were given."""
    try:
        yield
    except InputError as exc:
        inner = str(exc).removeprefix(f"{name}: ")  # the file is named once, with the batch
        raise type(exc)(f"{batch.where(name)}, row numbers below count from row {batch.start + 1}: {inner}") from exc


def iter_batches(path: str | os.PathLike, batch_size: int = DEFAULT_CHUNK_SIZE, *,
                 columns: Mapping[str, str] | None = None, required: Sequence[str] = (),
                 numeric: Sequence[str] = (), read_columns: Sequence[str] | None = None) -> Iterator[TableBatch]:
    """Batches of at most ``batch_size`` rows of the table at ``path`` ('-' = TSV on stdin).

    ``columns`` renames file columns to canonical names (file name -> canonical), ``required`` are
    checked once against the header, ``numeric`` columns are parsed as float64 (a bad cell names its
    file row). ``read_columns`` (canonical names) limits what is decoded, for Parquet.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"chunk size {batch_size!r}: expected a positive integer number of rows, e.g. 100000")
    name = "<stdin>" if str(path) == "-" else str(path)
    if name != "<stdin>" and not Path(path).is_file():  # before the format: a missing file is the clearer news
        raise InputError(f"{name}: no such file; check the path")
    fmt = table_format(path)
    rename = dict(columns or {})
    raw = {"parquet": _parquet_frames, "jsonl": _jsonl_frames}.get(fmt, _text_frames)
    start, index = 0, 0
    for frame in raw(path, fmt, name, int(batch_size), rename, read_columns):
        if index == 0:
            check_header(frame.columns, rename, required, name)
        batch = finish_batch(frame, start, index, rename, numeric, name)
        yield batch
        start, index = batch.stop, index + 1
    if index == 0:
        raise InputError(f"{name}: the file has no rows; nothing to process")


def finish_batch(frame: pd.DataFrame, start: int, index: int, rename: Mapping[str, str], numeric: Sequence[str],
                 name: str) -> TableBatch:
    """Rename the columns and parse the numeric ones of a freshly read frame."""
    frame = frame.rename(columns=dict(rename)) if rename else frame
    batch = TableBatch(frame, start, index, name)
    for col in numeric:
        if col in frame.columns:
            frame[col] = _numeric(frame[col], col, batch, name)
    return batch


def _numeric(values: pd.Series, col: str, batch: TableBatch, name: str) -> pd.Series:
    try:
        return to_numeric_column(values, col, "")
    except InputError as exc:
        # the in-memory message counts rows from the frame start; restate it with the file row
        bad = pd.to_numeric(values.astype("string"), errors="coerce").isna() & values.notna()
        bad &= ~values.astype("string").isin(["", "nan", "NaN", "NAN", "na", "NA", "N/A", "null", "NULL", "None"])
        row = batch.start + int(np.flatnonzero(bad.to_numpy())[0]) + 1 if bad.any() else batch.start + 1
        cell = values.iloc[row - batch.start - 1]
        raise InputError(f"{batch.where(name)}: column {col!r} row {row}: {cell!r} is not a number; "
                         "fix the value or choose another column") from exc


def check_header(cols: pd.Index, rename: dict, required: Sequence[str], name: str) -> None:
    dup = cols[cols.duplicated()].unique().tolist()
    if dup:
        raise InputError(f"{name}: duplicate column name(s) {dup}; column names must be unique")
    unknown = [c for c in rename if c not in cols]
    if unknown:
        raise InputError(f"{name}: --col names column(s) {unknown} not in the file; its columns are {list(cols)}")
    present = {rename.get(c, c) for c in cols}
    missing = [c for c in required if c not in present]
    if missing:
        raise InputError(f"{name}: missing required column(s) {missing}; its columns are {list(cols)}; "
                         f"rename with --col {missing[0]}=YOUR_COLUMN")


# format readers -------------------------------------------------------------------------------------
def _parquet_frames(path, fmt, name, batch_size, rename, read_columns) -> Iterator[pd.DataFrame]:
    try:
        pf = open_parquet(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError subclasses without a cheap common base
        raise InputError(f"{name}: cannot read as parquet: {exc}") from exc
    file_columns = parquet_columns(pf.schema_arrow.names, rename, read_columns)
    if pf.metadata.num_rows == 0:
        return
    for record_batch in pf.iter_batches(batch_size=batch_size, columns=file_columns):
        yield record_batch.to_pandas()


def open_parquet(path: str | os.PathLike):
    """A ``ParquetFile`` for streaming: memory bounded by a batch, whatever the file's size.

    pyarrow's default ``pre_buffer=True`` caches the raw bytes of every column chunk read until the
    file object dies (apache/arrow#39808, ARROW-17599), so a pass over a 100M-row file held ~1 GB of
    compressed pages at the end; without it, and with a 1 MiB buffered stream, pages are read as
    needed and freed with their batch, also inside a single huge row group (and it reads faster
    from a local disk)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)


def parquet_columns(names: Sequence[str], rename: Mapping[str, str], read_columns: Sequence[str] | None) -> list | None:
    """File columns to decode for the canonical ``read_columns`` (None: all)."""
    if read_columns is None:
        return None
    inverse = {v: k for k, v in rename.items()}
    wanted = {inverse.get(c, c) for c in read_columns}
    return [c for c in names if c in wanted]


def _text_frames(path, fmt, name, batch_size, rename, read_columns) -> Iterator[pd.DataFrame]:
    options = dict(dtype=str, keep_default_na=False, chunksize=batch_size)
    if fmt == "tsv":
        options.update(sep="\t", quoting=csv.QUOTE_NONE, lineterminator="\n")
    if name != "<stdin>":
        # pandas' chunked parser pads a short row with empty cells: check every record's width first
        options["skiprows"] = check_text_file_shape(path, fmt, name)
    handle = sys.stdin if name == "<stdin>" else open(path, encoding="utf-8-sig", newline="")
    try:
        reader = pd.read_csv(handle, **options)
        while True:
            try:
                frame = next(reader)
            except StopIteration:
                return
            except pd.errors.EmptyDataError:
                raise InputError(f"{name}: the file is empty (no header, no rows); give a table with a header row") from None
            except UnicodeDecodeError as exc:
                raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
            except (pd.errors.ParserError, ValueError) as exc:
                raise InputError(f"{name}: {_parser_message(exc)}; fix the row (a stray quote or delimiter?); "
                                 "no output was written") from None
            if fmt == "tsv" and frame.shape[1]:
                frame = _strip_cr(frame)
            yield frame
    finally:
        if handle is not sys.stdin:
            handle.close()


def _strip_cr(frame: pd.DataFrame) -> pd.DataFrame:
    """Windows line endings: the CR of CRLF ends up in the last field (and header) of a TSV line."""
    last = frame.columns[-1]
    if isinstance(last, str) and last.endswith("\r"):
        frame = frame.rename(columns={last: last[:-1]})
        last = last[:-1]
    cells = frame[last]
    if cells.str.endswith("\r").any():
        frame[last] = cells.str.removesuffix("\r")
    return frame


def _parser_message(exc: Exception) -> str:
    """pandas says 'Error tokenizing data. C error: Expected 3 fields in line 5001, saw 4'; the line
    counts the header, so line L is data row L - 1."""
    import re

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if m:
        expected, line, saw = (int(g) for g in m.groups())
        return f"row {line - 1} (line {line}) has {saw} fields, the header has {expected}"
    return f"cannot parse: {text}"


def _jsonl_frames(path, fmt, name, batch_size, rename, read_columns) -> Iterator[pd.DataFrame]:
    handle = sys.stdin if name == "<stdin>" else open(path, encoding="utf-8-sig")
    try:
        records: list[dict] = []
        keys: list | None = None
        for lineno, obj in iter_json_objects(handle, name, "one JSON object per line; no output was written"):
            if keys is not None and not obj.keys() <= set(keys):
                raise InputError(f"{name}: line {lineno}: key(s) {sorted(obj.keys() - set(keys))} do not occur in "
                                 "the first batch; streaming needs the columns fixed by the first batch "
                                 "(put every key in the first record, null when missing)")
            records.append(obj)
            if len(records) == batch_size:
                frame = pd.DataFrame.from_records(records, columns=keys)
                keys = list(frame.columns) if keys is None else keys
                yield frame
                records = []
        if records:
            yield pd.DataFrame.from_records(records, columns=keys)
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
    finally:
        if handle is not sys.stdin:
            handle.close()


def count_rows(path: str | os.PathLike) -> int | None:
    """Rows of a Parquet file from its footer (free); None for text formats (it would need a pass)."""
    if str(path) != "-" and table_format(path) == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    return None
