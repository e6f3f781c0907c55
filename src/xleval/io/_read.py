"""Read the long table (TSV, CSV, JSONL, Parquet), its metadata, and sacrebleu-style plain files.

Text formats are read with every cell as a string (no NA guessing: a hypothesis "NA" stays "NA",
an empty hypothesis stays ""); columns a command needs as numbers are converted with ``numeric=``
and a bad cell is reported with its row and column; other columns get their types from the one
policy of :mod:`._schema`. Every file read is recorded as an input of the running command.
Inputs are read through :mod:`._compressed`: ``NAME.EXT.gz`` is read as ``NAME.EXT``, and plain
files may be ``-`` (standard input).
"""
from __future__ import annotations

import csv
import io as _io
import json
import os
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError
from ._compressed import read_input_bytes
from ._formats import NA_TOKENS, SIDECAR_SUFFIX, display_name, table_format
from ._inputs import read_regular_file, require_file
from ._parquet import first_line as _first_line
from ._parquet import read_parquet, read_parquet_schema
from ._quoting import resolve_quoting
from ._schema import JsonEvidence, apply_json_types, apply_text_types, json_types, text_evidence, text_types
from ._shape import (
    check_csv_text,
    check_flat_values,
    check_header,
    check_not_empty,
    check_tsv_header_line,
    check_tsv_quoting,
    check_unique_columns,
    iter_json_objects,
    parse_column_mapping,
    strip_leading_comments,
)

__all__ = ["read_table", "read_table_metadata", "parse_column_mapping", "to_numeric_column", "read_plain_files",
           "read_lines", "MAX_METADATA_BYTES"]

#: a metadata sidecar holds a few signatures; anything larger is not one
MAX_METADATA_BYTES = 16 << 20


def read_table(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, str] | None = None,
    required: Sequence[str] = (),
    numeric: Sequence[str] = (),
    quoting: str | None = None,
    lists: Sequence[str] = (),
) -> pd.DataFrame:
    """Read a table; rename ``columns`` (file name -> canonical name); check ``required``; parse ``numeric``.
    ``lists``: columns (as the file names them) whose JSONL or Parquet cells may be arrays, read as their JSON
    text, as a TSV or CSV cell holds them (a table cell otherwise holds one value: an array is refused).

    ``quoting`` is how a TSV's double quotes are read: ``"auto"`` (the default) decides from the
    whole file and says what it chose when the readings differ, ``"csv"`` takes CSV quoting off (files
    of pandas' ``to_csv(sep="\t")``, ``csv.writer``), ``"none"`` keeps every quote as text (WMT,
    mt-metrics-eval); see :mod:`xleval.io._quoting`.

    Raises :class:`InputError` for a missing/empty file, a header without rows, duplicate or
    missing columns, non-numeric cells in ``numeric`` columns (NaN/inf are kept as values), and a
    TSV whose quotes read both ways with nothing to tell which is meant.
    """
    quoting = resolve_quoting(quoting)
    name = display_name(path)
    if name != "<stdin>":
        require_file(path, name)  # before the format: a missing file is the clearer news
    fmt = table_format(path)
    df = _read_any(path, fmt, name, quoting, lists)
    check_not_empty(df.shape[1], len(df), name)
    check_header(df.columns, dict(columns or {}), required, name)
    if columns:
        df = df.rename(columns=dict(columns))
    for col in numeric:
        if col in df.columns:
            df[col] = to_numeric_column(df[col], col, name)
    if fmt in ("tsv", "csv"):
        df = apply_text_types(df, text_types(text_evidence(df, skip=numeric)))
    return df


def to_numeric_column(values: pd.Series, column: str, where: str = "input", *, row_offset: int = 0,
                      scope: str = "") -> pd.Series:
    """Parse a column as float64; empty/NA tokens become NaN, 'inf' stays inf, anything else is an error
    (naming row ``row_offset + i``, 1-based; ``scope`` qualifies the count of bad cells, e.g. ' in this batch')."""
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_numeric_dtype(values):
        return _representable(values.astype("float64"), column, where, row_offset)
    as_str = values.astype("string")
    na = as_str.isin(NA_TOKENS)
    parsed = pd.to_numeric(as_str.where(~na), errors="coerce")
    bad = parsed.isna() & values.notna() & ~na
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{where}: column {column!r} row {row_offset + first + 1}: {_cell_text(values.iloc[first])} is not a "
            f"number ({int(bad.sum())} such cells{scope}); fix the value or choose another column"
        )
    return _representable(parsed.astype("float64"), column, where, row_offset)


#: beyond this magnitude a finite number's square overflows float64, so every spread, variance and
#: correlation of the column would be inf or NaN: no score or count comes near it
MAX_MAGNITUDE = 1e150


def _representable(parsed: pd.Series, column: str, where: str, row_offset: int) -> pd.Series:
    numbers = parsed.to_numpy()
    huge = np.isfinite(numbers) & (np.abs(numbers) > MAX_MAGNITUDE)
    if huge.any():
        first = int(np.flatnonzero(huge)[0])
        raise InputError(f"{where}: column {column!r} row {row_offset + first + 1}: {numbers[first]:g} is beyond "
                         f"+-{MAX_MAGNITUDE:g}, where squares of numbers overflow; rescale the column (inf is read as "
                         "a missing score)")
    return parsed


def _cell_text(value: object) -> str:
    """A cell as a message shows it: text quoted, a JSON value as JSON (never a numpy repr)."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, np.generic):
        value = value.item()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(str(value))


def _read_any(path, fmt: str, name: str, quoting: str = "auto", lists: Sequence[str] = ()) -> pd.DataFrame:
    try:
        if fmt == "parquet":
            return _read_parquet(path, name, lists)
        text = decode_text(read_input_bytes(path, name), name)
        if fmt == "jsonl":
            return _read_jsonl(text, name, lists)
        return _read_text_table(text, fmt, name, quoting)
    except InputError:
        raise
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{name}: cannot read as {fmt}: {first}") from exc


def _read_parquet(path, name: str, lists: Sequence[str] = ()) -> pd.DataFrame:
    table = read_parquet(path, name, lists)
    try:
        return table.to_pandas()
    except Exception as exc:  # pyarrow errors have no common base we can import cheaply
        raise InputError(f"{name}: cannot read as parquet: {_first_line(exc)}") from exc


def _read_text_table(text: str, fmt: str, name: str, quoting: str = "auto") -> pd.DataFrame:
    body = strip_leading_comments(text)
    first_line = text.count("\n") - body.count("\n") + 1  # the header's line in the file
    if not body.strip():
        return pd.DataFrame()
    header = body.split("\n", 1)[0]
    if fmt == "tsv":
        check_tsv_header_line(header, name, first_line)  # first: CR-only line endings make one long header
        shape = check_tsv_quoting(body, name, first_line, quoting)
        if shape.quoting == "csv":
            check_unique_columns(next(csv.reader([header], delimiter="\t")), name)
            return pd.read_csv(_io.StringIO(body), sep="\t", dtype=str, keep_default_na=False)
        check_unique_columns(header.split("\t"), name)
        rows = shape.rows
        return pd.read_csv(_io.StringIO(body), sep="\t", dtype=str, keep_default_na=False, quoting=csv.QUOTE_NONE,
                           lineterminator="\n", skip_blank_lines=False, nrows=rows)
    check_csv_text(body, name, first_line)  # first: it explains a header that csv cannot split (a lone CR)
    check_unique_columns(next(csv.reader([header])), name)
    return pd.read_csv(_io.StringIO(body), dtype=str, keep_default_na=False)


def decode_text(raw: bytes, name: str) -> str:
    """UTF-8 text with a byte-order mark skipped and CRLF read as LF (a lone CR stays: inside a TSV
    field it is text)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{name}: line {line}: bytes are not valid UTF-8; re-encode the file as UTF-8") from exc
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _read_jsonl(text: str, name: str, lists: Sequence[str] = ()) -> pd.DataFrame:
    records = []
    for line, obj in iter_json_objects(text.split("\n"), name):
        for key in lists:
            if isinstance(obj.get(key), list):
                obj[key] = json.dumps(obj[key])  # its JSON text, as a TSV cell holds it
        check_flat_values(obj, name, line)
        records.append(obj)
    evidence = JsonEvidence.empty().add(records)
    return apply_json_types(records, evidence.columns, json_types(evidence))


def read_table_metadata(path: str | os.PathLike) -> dict:
    """The xleval metadata (e.g. ``{"signatures": {...}}``) written with a table, or ``{}``.

    A sidecar or Parquet metadata that is not a JSON object with text signatures is an error: the
    signatures it should hold protect calibrators from scores of another metric."""
    if str(path) == "-":
        return {}
    if table_format(path) == "parquet":
        return _parquet_metadata(path)
    sidecar = str(path) + SIDECAR_SUFFIX
    if not os.path.lexists(sidecar):
        return {}
    try:
        raw = read_regular_file(sidecar, MAX_METADATA_BYTES, "a metadata sidecar")
    except (OSError, ValueError) as exc:
        raise InputError(f"{sidecar}: cannot read the table's metadata ({_reason(exc)}); delete it to proceed without "
                         f"signatures, or write the table again with xleval") from None
    return _checked_metadata(raw, sidecar, "delete it to proceed without signatures, or write the table again")


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _parquet_metadata(path) -> dict:
    require_file(path, str(path))
    meta = read_parquet_schema(path, str(path)).metadata or {}
    if b"xleval" not in meta:
        return {}
    return _checked_metadata(meta[b"xleval"], f"{path} (Parquet metadata 'xleval')",
                             "write the table again with xleval (or without that metadata key)")


def _checked_metadata(raw: bytes, where: str, fix: str) -> dict:
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else _first_line(exc)
        raise InputError(f"{where}: the table's metadata is not valid JSON ({reason}); {fix}") from None
    signatures = meta.get("signatures", {}) if isinstance(meta, dict) else None
    if not isinstance(signatures, dict) or not all(isinstance(v, str) for v in signatures.values()):
        raise InputError(f"{where}: the table's metadata is not an object with text signatures "
                         '({"signatures": {"COLUMN": "SIGNATURE"}}); ' + fix)
    return meta


def read_plain_files(
    *, hypotheses: str | os.PathLike, references: Sequence[str | os.PathLike] = (),
    sources: str | os.PathLike | None = None, lp: str | None = None, system: str | None = None,
    rstrip: bool = False,
) -> pd.DataFrame:
    """sacrebleu-style line-aligned plain files -> the long table (``hypothesis``, ``reference``[, ``reference_2``...]).

    Each file may be ``.gz``-compressed, and one of them ``-`` (standard input). ``rstrip`` removes
    trailing whitespace from every line, as sacrebleu's command line does."""
    def lines(path):
        got = read_lines(path)
        return [line.rstrip() for line in got] if rstrip else got

    columns: dict[str, list[str]] = {"hypothesis": lines(hypotheses)}
    for i, ref in enumerate(references):
        columns["reference" if i == 0 else f"reference_{i + 1}"] = lines(ref)
    if sources is not None:
        columns["source"] = lines(sources)
    counts = {key: len(v) for key, v in columns.items()}
    if len(set(counts.values())) > 1:
        paths = {"hypothesis": hypotheses, "source": sources,
                 **{("reference" if i == 0 else f"reference_{i + 1}"): r for i, r in enumerate(references)}}
        detail = ", ".join(f"{paths[key]} ({key}): {n}" for key, n in counts.items())
        raise InputError(f"plain files have different line counts ({detail}); they must be line-aligned, "
                         "one segment per line")
    df = pd.DataFrame(columns)
    df.insert(0, "seg_id", np.arange(1, len(df) + 1))
    if lp is not None:
        df.insert(0, "lp", lp)
    if system is not None:
        df.insert(0, "system", system)
    return df


def read_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a UTF-8 text file (a final newline ends the last line; CRLF read as LF); ``.gz`` is
    decompressed, ``-`` is standard input."""
    name = display_name(path)
    raw = read_input_bytes(path, name)
    if raw.startswith(b"\xef\xbb\xbf"):
        # read as the writer meant (an encoding mark, not text), but the number then differs from sacrebleu's,
        # which keeps the mark as part of the first segment: say so
        warnings.warn(f"{name} starts with a UTF-8 byte-order mark: read as an encoding mark, not as text of line 1 "
                      "(sacrebleu keeps it in the first segment, so its score of this file can differ)",
                      DataQualityWarning, stacklevel=2)
    text = decode_text(raw, name)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
