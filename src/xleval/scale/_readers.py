"""Streaming table readers: a table comes in as a sequence of :class:`TableBatch` of bounded size.

Parquet is read with ``ParquetFile.iter_batches`` (row groups decoded one at a time), CSV/TSV with
pandas' chunked C parser (the same parser and options as :func:`xleval.io.read_table`, every cell
read as text), JSONL line by line. Each batch knows the 0-based position of its first row in the
file, so an error in a batch names the file row (1-based, header not counted) and the batch.

Text and JSONL files are read twice: a first pass checks every record's width and gathers the
evidence of the column types (:mod:`xleval.io._schema`), so every batch gets the types that
:func:`xleval.io.read_table` gives the whole file and a streamed output equals the one-pass output.
Standard input cannot be read twice and is not streamed.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..io import check_text_file_shape, iter_json_objects, require_file, table_format, to_numeric_column
from ..io._compressed import open_input
from ..io._formats import TEXT_COLUMNS, is_compressed
from ..io._parquet import check_flat_schema
from ..io._quoting import resolve_quoting
from ..io._schema import JsonEvidence, apply_json_types, apply_text_types, json_types, text_evidence, text_types
from ..io._shape import check_flat_values, check_header

__all__ = ["TableBatch", "iter_batches", "count_rows", "table_columns", "DEFAULT_CHUNK_SIZE", "batch_context",
           "finish_batch", "check_header", "parquet_columns", "parquet_null_columns", "parquet_frame", "open_parquet",
           "open_parquet_checked"]

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
        # the file is named once, with the batch; the in-memory functions name a frame they were not told
        # the name of "input"
        inner = str(exc).removeprefix(f"{name}: ").removeprefix("input: ")
        raise type(exc)(f"{batch.where(name)}: {file_rows(inner, batch.start)}") from exc


# a repr'd name or value (left as it is: data may spell "row 3") or a row number of the batch's frame
_ROW_OR_QUOTED = re.compile(r"""(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)|(?<!\w)"(?:[^"\\]|\\.)*"(?!\w)"""
                            r"""|(?<!label )\brow (\d+)\b|(?:row\(s\)|rows) in all\b""")


def file_rows(message: str, start: int) -> str:
    """``message`` of an in-memory function given a batch, with its row numbers (1-based in the batch) made
    the file's (``start`` rows come before the batch): a user looks up the row in the file, not in a batch,
    and a count "in all" covers the batch only."""

    def renumber(match: re.Match) -> str:
        text = match.group(0)
        if match.group(1) is not None:
            return f"row {int(match.group(1)) + start}"
        if text.endswith(" in all"):
            return text.removesuffix(" in all") + " in this batch"
        return text

    return _ROW_OR_QUOTED.sub(renumber, message)


def iter_batches(path: str | os.PathLike, batch_size: int = DEFAULT_CHUNK_SIZE, *,
                 columns: Mapping[str, str] | None = None, required: Sequence[str] = (),
                 numeric: Sequence[str] = (), read_columns: Sequence[str] | None = None,
                 quoting: str | None = None) -> Iterator[TableBatch]:
    """Batches of at most ``batch_size`` rows of the table at ``path``.

    ``columns`` renames file columns to canonical names (file name -> canonical), ``required`` are
    checked once against the header, ``numeric`` columns are parsed as float64 (a bad cell names its
    file row). ``read_columns`` (canonical names) limits what is decoded (Parquet) and typed (text).
    ``quoting`` is how a TSV's quotes are read, decided as :func:`xleval.io.read_table` decides it.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"chunk size {batch_size!r}: expected a positive integer number of rows, e.g. 100000")
    quoting = resolve_quoting(quoting)
    _refuse_stdin(path)
    name = str(path)
    require_file(path, name, streams=False)  # before the format: a missing file is the clearer news
    fmt = table_format(path)
    _check_streamable(path, fmt, name)
    rename = dict(columns or {})
    reader = {"parquet": _parquet_frames, "jsonl": _jsonl_frames}.get(fmt, functools.partial(_text_frames,
                                                                                          quoting=quoting))
    start, index = 0, 0
    for frame, types in reader(path, fmt, name, int(batch_size), rename, numeric, read_columns, required):
        batch = finish_batch(frame, start, index, rename, numeric, name, types)
        yield batch
        start, index = batch.stop, index + 1
    if index == 0:
        raise InputError(f"{name}: the file has a header but no rows; nothing to process")


def _refuse_stdin(path) -> None:
    if str(path) == "-":
        raise InputError("'-' (standard input) cannot be streamed: a streamed table is read twice (record widths and "
                         "column types); save it to a file first, or read it whole (without chunk_size=)",
                         argument="chunk_size")


def _check_streamable(path, fmt: str, name: str) -> None:
    """A compressed text table streams (it is decompressed as it is read); a compressed Parquet file
    does not: Parquet is read by seeking to its footer and column chunks, which a gzip stream cannot do."""
    if fmt == "parquet" and is_compressed(path):
        raise InputError(f"{name}: a gzip-compressed Parquet file cannot be streamed (Parquet is read by seeking); "
                         "decompress it (gunzip; Parquet compresses its pages itself), or read it whole (without "
                         "chunk_size=)", argument="chunk_size")


def finish_batch(frame: pd.DataFrame, start: int, index: int, rename: Mapping[str, str], numeric: Sequence[str],
                 name: str, types: Mapping[str, str] | None = None) -> TableBatch:
    """Rename the columns of a freshly read frame, give them the file's column types and parse the
    numeric ones (the order of :func:`xleval.io.read_table`)."""
    frame = frame.rename(columns=dict(rename)) if rename else frame
    if types:
        frame = apply_text_types(frame, types)
    batch = TableBatch(frame, start, index, name)
    for col in numeric:
        if col in frame.columns:
            frame[col] = _numeric(frame[col], col, batch, name)
    return batch


def _numeric(values: pd.Series, col: str, batch: TableBatch, name: str) -> pd.Series:
    return to_numeric_column(values, col, batch.where(name), row_offset=batch.start, scope=" in this batch")


# format readers: each yields (frame, column types) ---------------------------------------------------
def _parquet_frames(path, fmt, name, batch_size, rename, numeric, read_columns, required):
    pf = open_parquet_checked(path, name)
    check_header(pf.schema_arrow.names, rename, required, name)
    check_flat_schema(pf.schema_arrow, name)
    file_columns = parquet_columns(pf.schema_arrow.names, rename, read_columns)
    if pf.metadata.num_rows == 0:
        return
    with_nulls = parquet_null_columns(pf, file_columns)
    for record_batch in pf.iter_batches(batch_size=batch_size, columns=file_columns):
        yield parquet_frame(record_batch, with_nulls), None


def parquet_null_columns(pf, file_columns: Sequence[str] | None) -> dict[str, str]:
    """The integer and boolean columns (of ``file_columns``, None: all) that hold a null anywhere in the file,
    each with the pandas dtype the whole file gives it (``float64``, ``object``).

    pandas gives such a column another dtype than a column without nulls, so a batch without a null would
    get ``int64`` and one with a null ``float64``: an output column's type (and its text, "2" or "2.0")
    would depend on where the batches fall. Every batch gets the whole file's dtype instead, as
    :func:`xleval.io.read_table` gives it. The footer's statistics answer for free; a row group without
    them is read for that column alone."""
    import pyarrow as pa

    schema = pf.schema_arrow
    wanted = set(schema.names if file_columns is None else file_columns) - _nullable_in_pandas(schema)
    kinds = {f.name: "float64" if pa.types.is_integer(f.type) else "object" for f in schema
             if f.name in wanted and (pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))}
    if not kinds:
        return {}
    meta, found = pf.metadata, {}
    position = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
    for name, dtype in kinds.items():
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(position[name]).statistics if name in position else None
            if stats is not None and stats.has_null_count:
                nulls = stats.null_count
            else:
                nulls = pf.read_row_group(g, columns=[name]).column(0).null_count
            if nulls:
                found[name] = dtype
                break
    return found


def _nullable_in_pandas(schema) -> set[str]:
    """The columns that pandas wrote with a nullable dtype (``Int64``, ``boolean``: the file's pandas
    metadata says so): every batch gives them that dtype, as :func:`xleval.io.read_table` does, nulls or not."""
    try:
        columns = (schema.pandas_metadata or {}).get("columns", [])
    except ValueError:  # metadata that is not pandas' JSON: the types of the Arrow schema decide
        return set()
    return {str(c.get("name")) for c in columns
            if isinstance(c, dict) and c.get("numpy_type") in _NULLABLE_DTYPES}


#: pandas' nullable dtypes as its Parquet metadata names them (``int64`` and ``bool`` are numpy's)
_NULLABLE_DTYPES = frozenset({"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "boolean"})


def parquet_frame(record_batch, with_nulls: Mapping[str, str]) -> pd.DataFrame:
    """A Parquet batch as pandas, with the dtypes of the whole file (see :func:`parquet_null_columns`)."""
    frame = record_batch.to_pandas()
    for name, dtype in with_nulls.items():
        if name in frame.columns and frame[name].dtype != dtype:
            frame[name] = frame[name].astype(dtype)
    return frame


def open_parquet_checked(path: str | os.PathLike, name: str):
    """:func:`open_parquet`, with an unreadable file reported as an InputError."""
    try:
        return open_parquet(path)
    # pyarrow raises ArrowInvalid/OSError subclasses without a cheap common base
    except Exception as exc:  # noqa: BLE001
        text = str(exc).strip()
        raise InputError(f"{name}: cannot read as parquet: "
                         f"{text.splitlines()[0] if text else type(exc).__name__}") from None


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


def _text_options(fmt: str, shape) -> dict:
    options = dict(dtype=str, keep_default_na=False, skiprows=shape.comments)
    if fmt == "tsv" and shape.quoting == "csv":
        options.update(sep="\t")
    elif fmt == "tsv":
        options.update(sep="\t", quoting=csv.QUOTE_NONE, lineterminator="\n", skip_blank_lines=False, nrows=shape.rows)
    return options


def _text_frames(path, fmt, name, batch_size, rename, numeric, read_columns, required, quoting="auto"):
    # pandas' chunked parser pads a short row with empty cells: check every record's width first
    shape = check_text_file_shape(path, fmt, name, quoting)
    options = _text_options(fmt, shape)
    header = list(_frames(path, name, fmt, dict(options, nrows=0)))
    cols = list(header[0].columns) if header else []
    if not cols:
        raise InputError(f"{name}: the file is empty (no header, no rows); give a table with a header row")
    check_header(cols, rename, required, name)
    types = _text_types(path, name, fmt, options, cols, rename, numeric, read_columns, batch_size)
    yield from ((frame, types) for frame in _frames(path, name, fmt, dict(options, chunksize=batch_size)))


def _text_types(path, name, fmt, options, cols, rename, numeric, read_columns, batch_size) -> dict[str, str]:
    """The first pass: the column types the whole file gives (only for the columns that can become numbers)."""
    wanted = set(read_columns) if read_columns is not None else None
    candidates = [c for c in cols if rename.get(c, c) not in set(numeric) | TEXT_COLUMNS
                  and (wanted is None or rename.get(c, c) in wanted)]
    if not candidates:
        return {}
    evidence: dict = {}
    for frame in _frames(path, name, fmt, dict(options, chunksize=batch_size, usecols=candidates)):
        evidence = text_evidence(frame.rename(columns=rename), skip=numeric, known=evidence)
        if len(evidence) == len(candidates) and all(ev.settled for ev in evidence.values()):
            break  # every candidate column holds text: nothing later can change that
    return text_types(evidence)


def _frames(path, name, fmt, options) -> Iterator[pd.DataFrame]:
    with open_input(path, "r", name=name, encoding="utf-8-sig", newline="") as handle:
        try:
            reader = pd.read_csv(handle, **options)
        except pd.errors.EmptyDataError:
            return
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
        chunks = reader if "chunksize" in options else iter([reader])
        while True:
            try:
                frame = next(chunks)
            except (StopIteration, pd.errors.EmptyDataError):
                return
            except UnicodeDecodeError as exc:
                raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); "
                                 "re-encode the file as UTF-8") from None
            except (pd.errors.ParserError, ValueError) as exc:
                raise InputError(f"{name}: {_parser_message(exc)}; fix the row (a stray quote or delimiter?); "
                                 "no output was written") from None
            if options.get("quoting") == csv.QUOTE_NONE and frame.shape[1]:
                frame = _strip_cr(frame)
            yield frame


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


def _jsonl_frames(path, fmt, name, batch_size, rename, numeric, read_columns, required):
    evidence = JsonEvidence.empty()
    for records in _json_records(path, name, batch_size):
        evidence.add(records)
    if not evidence.rows:
        raise InputError(f"{name}: the file is empty (no rows); give one JSON object per line")
    columns, types = evidence.columns, json_types(evidence)
    check_header(columns, rename, required, name)
    for records in _json_records(path, name, batch_size):
        yield apply_json_types(records, columns, types), None


def _json_records(path, name: str, batch_size: int) -> Iterator[list[dict]]:
    with open_input(path, "r", name=name, encoding="utf-8-sig") as handle:
        records: list[dict] = []
        try:
            for lineno, obj in iter_json_objects(handle, name, "one JSON object per line; no output was written"):
                check_flat_values(obj, name, lineno)
                records.append(obj)
                if len(records) == batch_size:
                    yield records
                    records = []
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
        if records:
            yield records


def table_columns(path: str | os.PathLike, columns: Mapping[str, str] | None = None,
                  quoting: str | None = None) -> list[str]:
    """The (renamed) column names of a table from its header, without reading its rows: a Parquet
    schema, a text header, or the keys of the first JSONL record (standard input, read once, is refused)."""
    _refuse_stdin(path)
    name = str(path)
    require_file(path, name, streams=False)
    fmt = table_format(path)
    _check_streamable(path, fmt, name)
    if fmt == "parquet":
        names = list(open_parquet_checked(path, name).schema_arrow.names)
    elif fmt == "jsonl":
        first: list[dict] = next(_json_records(path, name, 1), [{}])
        names = list(first[0]) if first else []
    else:
        # quiet: the rows are read next (iter_batches), which says the rule chosen once
        shape = check_text_file_shape(path, fmt, name, resolve_quoting(quoting), quiet=True)
        header = list(_frames(path, name, fmt, dict(_text_options(fmt, shape), nrows=0)))
        names = list(header[0].columns) if header else []
    rename = dict(columns or {})
    return [rename.get(c, c) for c in names]


def count_rows(path: str | os.PathLike) -> int | None:
    """Rows of a Parquet file from its footer (free); None for text formats (it would need a pass) and
    for a file that cannot be read (the reader reports it)."""
    try:
        if str(path) == "-" or table_format(path) != "parquet":
            return None
        return int(open_parquet(path).metadata.num_rows)
    # an unknown format, or pyarrow's errors (no common base): reading the file names the problem
    except Exception:  # noqa: BLE001
        return None
