"""Read and write the long table (TSV, CSV, JSONL, Parquet) and sacrebleu-style plain files.

Text formats are read with every cell as a string (no NA guessing: a hypothesis "NA" stays
"NA", an empty hypothesis stays ""); columns a command needs as numbers are converted with
``numeric=`` and a bad cell is reported with its row and column. Writers are atomic: a temporary
file in the target directory, then ``os.replace``.
"""
from __future__ import annotations

import contextlib
import csv
import glob
import io as _io
import json
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..exceptions import InputError

__all__ = [
    "FORMATS",
    "table_format",
    "read_table",
    "write_table",
    "read_table_metadata",
    "atomic_path",
    "parse_column_mapping",
    "to_numeric_column",
    "read_plain_files",
    "check_text_file_shape",
    "check_output_path",
    "iter_json_objects",
]

FORMATS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}
SIDECAR_SUFFIX = ".signatures.json"
_NA_TOKENS = frozenset({"", "nan", "NaN", "NAN", "na", "NA", "N/A", "null", "NULL", "None"})


def table_format(path: str | os.PathLike) -> str:
    """The format of ``path`` by its extension ('-' is TSV on stdin/stdout)."""
    if str(path) == "-":
        return "tsv"
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(
            f"{path}: unknown table format {suffix or '(no extension)'!r}; "
            f"use one of {', '.join(sorted(FORMATS))} or '-' for TSV on stdin"
        )
    return FORMATS[suffix]


def parse_column_mapping(items: Sequence[str] | None) -> dict[str, str]:
    """``["hypothesis=mt", "reference=ref"]`` -> ``{"mt": "hypothesis", "ref": "reference"}`` (file name -> canonical)."""
    mapping: dict[str, str] = {}
    for item in items or ():
        canonical, sep, in_file = item.partition("=")
        if not sep or not canonical.strip() or not in_file.strip():
            raise InputError(f"--col {item!r}: expected CANONICAL=FILE_COLUMN, e.g. --col hypothesis=mt")
        mapping[in_file.strip()] = canonical.strip()
    return mapping


def read_table(
    path: str | os.PathLike,
    *,
    columns: Mapping[str, str] | None = None,
    required: Sequence[str] = (),
    numeric: Sequence[str] = (),
) -> pd.DataFrame:
    """Read a table; rename ``columns`` (file name -> canonical name); check ``required``; parse ``numeric``.

    Raises :class:`InputError` for a missing/empty file, a header without rows, duplicate or
    missing columns, and non-numeric cells in ``numeric`` columns (NaN/inf are kept as values).
    """
    name = "<stdin>" if str(path) == "-" else str(path)
    if name != "<stdin>" and not Path(path).is_file():  # before the format: a missing file is the clearer news
        raise InputError(f"{name}: no such file; check the path")
    fmt = table_format(path)
    df = _read_any(path, fmt, name)
    if df.shape[1] == 0:
        raise InputError(f"{name}: the file is empty (no header, no rows); give a table with a header row")
    if len(df) == 0:
        raise InputError(f"{name}: the file has a header but no rows; nothing to process")
    _check_unique_columns(df.columns, name)
    if columns:
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise InputError(f"{name}: --col names column(s) {missing} not in the file; its columns are {list(df.columns)}")
        df = df.rename(columns=dict(columns))
        _check_unique_columns(df.columns, name)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(
            f"{name}: missing required column(s) {missing}; its columns are {list(df.columns)}; "
            f"rename with --col {missing[0]}=YOUR_COLUMN"
        )
    for col in numeric:
        if col in df.columns:
            df[col] = to_numeric_column(df[col], col, name)
    if fmt in ("tsv", "csv"):
        df = _infer_numbers(df, skip=set(numeric) | TEXT_COLUMNS)
    return df


TEXT_COLUMNS = frozenset({"source", "hypothesis", "reference", "lp", "src_lang", "tgt_lang", "system", "sentence", "text"})
_INT_TEXT = r"-?(?:0|[1-9][0-9]*)"
_FLOAT_TEXT = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:inf|Infinity|nan|NaN)"


def _infer_numbers(df: pd.DataFrame, skip: set) -> pd.DataFrame:
    """Text-format columns whose every cell is a canonical number become int64/float64, so that a
    TSV -> Parquet conversion keeps numbers as numbers; ids like '007' stay text (their spelling matters)."""
    for col in df.columns:
        if col in skip or not (df[col].dtype == object or pd.api.types.is_string_dtype(df[col])):
            continue
        cells = df[col].astype(str)
        empty = cells.isin(_NA_TOKENS)
        present = cells[~empty]
        if present.empty:
            continue
        if not empty.any() and present.str.fullmatch(_INT_TEXT).all():
            converted = pd.to_numeric(present, errors="coerce")
            if converted.notna().all() and converted.abs().max() < 2**53:
                df[col] = converted.astype("int64")
            continue
        if present.str.fullmatch(_FLOAT_TEXT).all() and not present.str.fullmatch(r"-?0[0-9]+").any():
            df[col] = to_numeric_column(df[col], col)
    return df


def to_numeric_column(values: pd.Series, column: str, where: str = "input") -> pd.Series:
    """Parse a column as float64; empty/NA tokens become NaN, 'inf' stays inf, anything else is an error."""
    if pd.api.types.is_bool_dtype(values):
        return values.astype("float64")
    if pd.api.types.is_numeric_dtype(values):
        return values.astype("float64")
    as_str = values.astype("string")
    parsed = pd.to_numeric(as_str.where(~as_str.isin(_NA_TOKENS)), errors="coerce")
    bad = parsed.isna() & values.notna() & ~as_str.isin(_NA_TOKENS)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{where}: column {column!r} row {first + 1}: {values.iloc[first]!r} is not a number "
            f"({int(bad.sum())} such cells); fix the value or choose another column"
        )
    return parsed.astype("float64")


def _check_unique_columns(columns: pd.Index, name: str) -> None:
    dup = columns[columns.duplicated()].unique().tolist()
    if dup:
        raise InputError(f"{name}: duplicate column name(s) {dup}; column names must be unique")


def _read_any(path, fmt: str, name: str) -> pd.DataFrame:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pandas()
        raw = sys.stdin.buffer.read() if name == "<stdin>" else Path(path).read_bytes()
        text = _decode(raw, name)
        if fmt == "jsonl":
            return _read_jsonl(text, name)
        text = _strip_leading_comments(text)
        if not text.strip():
            return pd.DataFrame()
        header = text.split("\n", 1)[0]
        _check_unique_columns(pd.Index(header.split("\t") if fmt == "tsv" else next(csv.reader([header]))), name)
        if fmt == "tsv":
            _check_tsv_shape(text, name)
            return pd.read_csv(_io.StringIO(text), sep="\t", dtype=str, keep_default_na=False,
                               quoting=csv.QUOTE_NONE, lineterminator="\n")
        _check_csv_shape(text, name)
        return pd.read_csv(_io.StringIO(text), dtype=str, keep_default_na=False)
    except InputError:
        raise
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{name}: cannot read as {fmt}: {first}") from exc
    except Exception as exc:  # pyarrow errors have no common base we can import cheaply
        raise InputError(f"{name}: cannot read as {fmt}: {exc}") from exc


def _decode(raw: bytes, name: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{name}: line {line}: bytes are not valid UTF-8; re-encode the file as UTF-8") from exc
    if text.startswith("\ufeff"):
        text = text[1:]
    # Windows line endings are accepted; a lone CR inside a TSV line is not a row break.
    return text.replace("\r\n", "\n")


def _strip_leading_comments(text: str) -> str:
    """Drop '#' lines before the header (a provenance/citation block); '#' later in the file is data."""
    while text.startswith("#"):
        _, _, text = text.partition("\n")
    return text


def _check_tsv_shape(text: str, name: str) -> None:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    width = lines[0].count("\t") + 1
    if width == 1 and ("," in lines[0] or ";" in lines[0]) and len(lines) > 1:
        raise InputError(f"{name}: the header has no tab but has commas/semicolons; is this a CSV file? Rename it to .csv")
    for i, line in enumerate(lines[1:], start=1):
        if line.count("\t") + 1 != width:
            raise InputError(
                f"{name}: row {i} (line {i + 1}) has {line.count(chr(9)) + 1} tab-separated fields, the header has {width}; "
                "fix the row (a tab inside a text?)"
            )


def _check_csv_shape(text: str, name: str) -> None:
    """pandas pads a short CSV row with empty cells and reads one extra field in the first row as an
    index, shifting every value: both would change data silently, so every record must have the
    header's width (blank lines are skipped, as pandas does)."""
    if '"' not in text and "\r" not in text:  # no quoting: a record is a line, counting commas is enough
        lines = text.split("\n")
        width = lines[0].count(",") + 1
        bad = next((i for i, line in enumerate(lines[1:], start=1) if line and line.count(",") + 1 != width), None)
        if bad is not None:
            _raise_csv_width(name, _data_row(lines, bad), bad + 1, lines[bad].count(",") + 1, width)
        return
    _check_csv_records(_io.StringIO(text), name)


def _check_csv_records(lines, name: str) -> None:
    """Every CSV record (quotes honoured) has the header's width; a lone CR outside quotes is refused
    (pandas would silently start a new row there). Blank lines are skipped, as pandas does."""
    limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # a long quoted text is data, not an error
    records = csv.reader(lines)
    try:
        width, row = len(next(records, [])), 0
        for record in records:
            if record:
                row += 1
                if len(record) != width:
                    _raise_csv_width(name, row, records.line_num, len(record), width)
    except csv.Error as exc:
        if "new-line" in str(exc):
            raise InputError(f"{name}: line {records.line_num}: a carriage return (CR) without a line feed outside "
                             "quotes; save the file with LF or CRLF line endings") from None
        raise InputError(f"{name}: line {records.line_num}: cannot read as csv: {exc}") from None
    finally:
        csv.field_size_limit(limit)


def check_text_file_shape(path: str | os.PathLike, fmt: str, name: str) -> int:
    """The width checks of the in-memory reader, streamed over a file of any size (one pass, constant
    memory), for readers that parse in chunks: every record must have the header's number of fields.
    Returns the number of '#' comment lines before the header (to skip)."""
    with open(path, "rb") as fh:
        skip = 0
        header = fh.readline()
        while header.startswith((b"#", b"\xef\xbb\xbf#")):
            skip += 1
            header = fh.readline()
    if fmt == "tsv":
        with open(path, "rb") as fh:
            for _ in range(skip + 1):
                fh.readline()
            width = header.count(b"\t") + 1
            row = 0
            for line in fh:
                row += 1
                fields = line.count(b"\t") + 1
                if fields != width:
                    raise InputError(f"{name}: row {row} (line {row + skip + 1}) has {fields} tab-separated fields, "
                                     f"the header has {width}; fix the row (a tab inside a text?)")
        return skip
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            _check_csv_records(_after_leading_comments(fh), name)
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
    return skip


def _after_leading_comments(lines):
    """The lines of a text file from its header on ('#' lines before the header are a comment block)."""
    lines = iter(lines)
    for line in lines:
        if not line.startswith("#"):
            yield line
            break
    yield from lines


def _data_row(lines: list[str], index: int) -> int:
    return sum(1 for line in lines[1 : index + 1] if line)


def _raise_csv_width(name: str, row: int, line: int, fields: int, width: int) -> None:
    raise InputError(f"{name}: row {row} (line {line}) has {fields} comma-separated fields, the header has {width}; "
                     "fix the row (quote a text that holds a comma)")


def iter_json_objects(lines, name: str, hint: str = "one JSON object per line"):
    """``(line number, object)`` for each non-blank line; a line that is not a JSON object is an
    InputError naming the file and line (shared by every JSONL reader)."""
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {i}: not valid JSON ({exc.msg}); {hint}") from None
        if not isinstance(obj, dict):
            raise InputError(f"{name}: line {i}: expected a JSON object, got {type(obj).__name__}")
        yield i, obj


def _read_jsonl(text: str, name: str) -> pd.DataFrame:
    return pd.DataFrame.from_records([obj for _, obj in iter_json_objects(text.split("\n"), name)])


def check_output_path(path: str | os.PathLike) -> Path:
    """Refuse an output path whose folder is missing or not writable, before any work is done."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{target}: output directory {directory} does not exist; create it first")
    if not os.access(directory, os.W_OK):
        raise InputError(f"{target}: output directory {directory} is not writable")
    if target.is_dir():
        raise InputError(f"{target}: is a directory; give a file name")
    return target


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it over ``path``, on error remove it."""
    target = check_output_path(path)
    directory = target.parent
    _remove_stale_temporaries(directory, target.name)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}@{_HOST}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, _output_mode(target))  # mkstemp makes 0600; an output should get the usual mode
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


_HOST = socket.gethostname()


def _remove_stale_temporaries(directory: Path, name: str) -> None:
    """Remove the temporary files of earlier writes of ``name`` that were killed (SIGKILL, out of
    memory) before they could clean up: those of this host whose process is gone. Another host's
    files on a shared folder, and those of running processes, are left alone."""
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


def write_table(df: pd.DataFrame, path: str | os.PathLike, *, metadata: Mapping[str, object] | None = None) -> None:
    """Write ``df`` atomically by extension; ``metadata`` (e.g. metric signatures) goes into the Parquet
    schema metadata under ``b"xleval"``, or into a sidecar ``PATH.signatures.json`` for text formats."""
    fmt = table_format(path)
    if str(path) == "-":
        sys.stdout.write(_to_tsv(df))
        sys.stdout.flush()
        return
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        if metadata:
            meta = dict(table.schema.metadata or {})
            meta[b"xleval"] = json.dumps(metadata, sort_keys=True).encode()
            table = table.replace_schema_metadata(meta)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp, compression="zstd")
        return
    if fmt == "jsonl":
        payload = _to_jsonl(df)
    elif fmt == "csv":
        payload = df.to_csv(index=False, lineterminator="\n")
    else:
        payload = _to_tsv(df, where=f"{path}: ")
    with atomic_path(path) as tmp:
        tmp.write_text(payload, encoding="utf-8")
    sidecar = Path(str(path) + SIDECAR_SUFFIX)
    if metadata:
        with atomic_path(sidecar) as tmp:
            tmp.write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    else:  # a sidecar left by an earlier write of this path describes a table that is gone
        with contextlib.suppress(FileNotFoundError):
            sidecar.unlink()


def _to_jsonl(df: pd.DataFrame) -> str:
    """One JSON object per row; floats written with repr (shortest round-trip, unlike pandas' 15 digits),
    NaN/inf as null."""
    def clean(value):
        if isinstance(value, float) and not np.isfinite(value):
            return None
        if isinstance(value, np.generic):
            return clean(value.item())
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        return value

    columns = list(df.columns)
    lines = (json.dumps(dict(zip(columns, map(clean, row))), ensure_ascii=False)
             for row in df.itertuples(index=False, name=None))
    return "".join(line + "\n" for line in lines)


def _to_tsv(df: pd.DataFrame, where: str = "") -> str:
    for col in df.columns:
        if df[col].dtype == object or pd.api.types.is_string_dtype(df[col]):
            cells = df[col].dropna().astype(str)
            if cells.str.contains("[\t\n]", regex=True).any():
                raise InputError(
                    f"{where}column {col!r} has a text with a tab or newline, which TSV cannot hold; write .parquet, .jsonl or .csv instead"
                )
    return df.to_csv(sep="\t", index=False, quoting=csv.QUOTE_NONE, lineterminator="\n", escapechar=None)


def read_table_metadata(path: str | os.PathLike) -> dict:
    """The xleval metadata (e.g. ``{"signatures": {...}}``) written with a table, or ``{}``."""
    if str(path) == "-":
        return {}
    if table_format(path) == "parquet":
        import pyarrow.parquet as pq

        meta = pq.read_schema(path).metadata or {}
        return json.loads(meta[b"xleval"]) if b"xleval" in meta else {}
    sidecar = Path(str(path) + SIDECAR_SUFFIX)
    return json.loads(sidecar.read_text(encoding="utf-8")) if sidecar.is_file() else {}


def read_plain_files(
    *, hypotheses: str | os.PathLike, references: Sequence[str | os.PathLike] = (),
    sources: str | os.PathLike | None = None, lp: str | None = None, system: str | None = None,
) -> pd.DataFrame:
    """sacrebleu-style line-aligned plain files -> the long table (``hypothesis``, ``reference``[, ``reference_2``...])."""
    columns: dict[str, list[str]] = {"hypothesis": _read_lines(hypotheses)}
    for i, ref in enumerate(references):
        columns["reference" if i == 0 else f"reference_{i + 1}"] = _read_lines(ref)
    if sources is not None:
        columns["source"] = _read_lines(sources)
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


def _read_lines(path: str | os.PathLike) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file; check the path")
    text = _decode(p.read_bytes(), str(p))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
