"""Parquet tables as Arrow tables, with pyarrow only: the one Parquet reader.

:func:`xleval.io.read_table` converts what :func:`read_parquet` returns to pandas;
:func:`read_arrow_table` keeps the Arrow table, so that scoring a Parquet file into a Parquet file
(``xleval score IN.parquet -o OUT.parquet``) never imports pandas (its import is a fifth of such a
command's CPU time).

Files are read through ``ParquetFile``, not ``pyarrow.parquet.read_table``: that goes through
``pyarrow.dataset``, whose import alone costs more CPU time than reading a 40,000-row file.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from ..exceptions import InputError
from ._compressed import read_input_bytes
from ._formats import display_name, is_compressed, table_format
from ._inputs import require_file
from ._shape import check_header, check_not_empty, check_unique_columns

__all__ = ["read_arrow_table", "read_parquet", "read_parquet_schema", "check_flat_schema", "parquet_source",
           "first_line"]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (pyarrow's run over several), or its type."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def parquet_source(path, name: str):
    """What pyarrow reads a Parquet input from: its path, or (``.parquet.gz``) the decompressed bytes
    in memory (Parquet compresses its pages itself, so such files are rare and small)."""
    if not is_compressed(path):
        return path
    import pyarrow as pa

    return pa.py_buffer(read_input_bytes(path, name))


def _file(source):
    """A ``ParquetFile`` over a path or over decompressed bytes (each with a reader of its own)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.ParquetFile(source if isinstance(source, (str, os.PathLike)) else pa.BufferReader(source))


def read_parquet_schema(path, name: str):
    """The Arrow schema of a Parquet input (with its metadata)."""
    try:
        return _file(parquet_source(path, name)).schema_arrow
    except InputError:
        raise
    except Exception as exc:  # pyarrow errors have no common base we can import cheaply
        raise InputError(f"{name}: cannot read as parquet: {first_line(exc)}") from exc


def check_flat_schema(schema, name: str, lists: Sequence[str] = ()) -> None:
    """A Parquet column of lists, structs or maps is refused: a table cell holds one value (but a column named in
    ``lists``, which the reader turns into its JSON text per cell)."""
    import pyarrow as pa

    nested = [f.name for f in schema if pa.types.is_nested(f.type) and f.name not in lists]
    if nested:
        raise InputError(f"{name}: column(s) {nested} hold lists or structs; a table cell holds one text, number or "
                         "true/false; flatten them (e.g. one column per element)")


def read_parquet(path, name: str, lists: Sequence[str] = ()):
    """The Arrow table of a Parquet input, as stored (schema metadata and all), after the checks
    that need no rows: unique column names, flat columns (``lists``: columns that may hold lists, each cell
    then its JSON text, as a TSV cell or a JSONL array holds it)."""
    source = parquet_source(path, name)
    try:
        pf = _file(source)
        schema = pf.schema_arrow
    except Exception as exc:  # pyarrow errors have no common base we can import cheaply
        raise InputError(f"{name}: cannot read as parquet: {first_line(exc)}") from exc
    check_unique_columns(schema.names, name)  # pyarrow's own message would be 'Multiple matches for FieldRef'
    check_flat_schema(schema, name, lists)
    try:
        table = pf.read(use_threads=False)  # threads cost CPU time (several times the single thread's here)
    except Exception as exc:
        raise InputError(f"{name}: cannot read as parquet: {first_line(exc)}") from exc
    return _lists_as_json(table, lists)


def _lists_as_json(table, lists: Sequence[str]):
    """``table`` with each nested column of ``lists`` as text: every cell its JSON (None stays None)."""
    import pyarrow as pa

    for column in lists:
        if column in table.column_names and pa.types.is_nested(table.schema.field(column).type):
            texts = [None if v is None else json.dumps(v, ensure_ascii=False) for v in table.column(column).to_pylist()]
            table = table.set_column(table.column_names.index(column), column, pa.array(texts, pa.string()))
    return table


def _pandas_index_columns(metadata) -> list[str]:
    """Columns that hold the index of the DataFrame pandas wrote (``__index_level_0__``, a named
    index): pandas reads them back as the index, so they are not columns of the table."""
    if not metadata or b"pandas" not in metadata:
        return []
    try:
        index = json.loads(metadata[b"pandas"]).get("index_columns", [])
    except (ValueError, AttributeError):
        return []
    return [c for c in index if isinstance(c, str)]


def read_arrow_table(path: str | os.PathLike, *, columns: Mapping[str, str] | None = None,
                     required: Sequence[str] = ()):
    """A Parquet table (``.parquet``, ``.pq``, optionally ``.gz``) as a ``pyarrow.Table``, with the
    checks of :func:`xleval.io.read_table`: ``columns`` renames (file name -> canonical), ``required``
    columns must be present, an empty file or one without rows is an InputError. No pandas import.

    The table has the columns ``read_table`` gives (a pandas index stored as a column becomes the
    DataFrame's index there, so it is left out here) and no schema metadata (xleval's own is read
    by :func:`xleval.io.read_table_metadata`; pandas' describes the file's columns, not these)."""
    name = display_name(path)
    if name == "<stdin>":
        raise InputError("<stdin>: read_arrow_table reads Parquet files; use read_table for standard input")
    require_file(path, name)  # before the format: a missing file is the clearer news
    if table_format(path) != "parquet":
        raise InputError(f"{name}: read_arrow_table reads Parquet files; use read_table for other formats")
    table = read_parquet(path, name)
    index = _pandas_index_columns(table.schema.metadata)
    if index:
        table = table.drop_columns([c for c in index if c in table.column_names])
    table = table.replace_schema_metadata(None)
    check_not_empty(table.num_columns, table.num_rows, name)
    check_header(table.column_names, dict(columns or {}), required, name)
    if columns:
        table = table.rename_columns([columns.get(c, c) for c in table.column_names])
    return table
