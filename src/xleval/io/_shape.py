"""Shape and record checks shared by the in-memory reader and the streamed one: every record has the
header's width, column names are unique and present, a comment block is told from a header, a JSON
record has each key once and flat values.

pandas pads a short CSV row with empty cells, reads an extra field in the first row as an index and
lets a later duplicate key of a JSON object win: each would change data silently, so these checks
run before pandas sees the data.
"""
from __future__ import annotations

import csv
import difflib
import io as _io
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence

from ..exceptions import InputError
from ._quoting import QuoteEvidence, decide_quoting

__all__ = ["parse_column_mapping", "check_not_empty", "is_comment_line", "strip_leading_comments",
           "check_unique_columns",
           "check_header", "check_tsv_text", "check_csv_text", "check_text_file_shape", "iter_json_objects",
           "parse_json_object", "check_flat_values", "TextShape", "check_tsv_quoting"]


# comment block -----------------------------------------------------------------------------------
def is_comment_line(line: str | bytes) -> bool:
    """A comment line before the header starts with '#' and a space (or is '#' alone): '# source: ...'.
    A first line like '#id<TAB>score' is a header whose first column is named '#id', not a comment."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", "replace")
    line = line.removeprefix("\ufeff").rstrip("\r\n")
    return line == "#" or (line.startswith("#") and line[1:2].isspace())


def strip_leading_comments(text: str) -> str:
    """Drop the comment lines before the header (a provenance/citation block); '#' later is data."""
    while text and is_comment_line(text.partition("\n")[0]):
        _, _, text = text.partition("\n")
    return text


# columns -----------------------------------------------------------------------------------------
def check_unique_columns(columns: Iterable, name: str) -> None:
    seen: set = set()
    dup: list = []  # each name given more than once, in the order its second occurrence comes
    for column in columns:
        if column in seen and column not in dup:
            dup.append(column)
        seen.add(column)
    if dup:
        raise InputError(f"{name}: duplicate column name(s) {dup}; column names must be unique")


# a lone CR outside quotes, in a CSV record or a TSV header: one message for both formats
LONE_CR = "a carriage return (CR) without a line feed outside quotes; save the file with LF or CRLF line endings"


def check_tsv_header_line(header: str, name: str, line: int) -> None:
    """A TSV header line that holds a carriage return before its end was saved with CR-only line endings (old
    Mac, some exports): the whole file reads as one line, whose cells would be blamed as duplicate names. The
    message is the CSV reader's for the same file."""
    if "\r" in header.rstrip("\r"):
        raise InputError(f"{name}: line {line}: {LONE_CR}")


def check_header(cols: Sequence, rename: Mapping[str, str], required: Sequence[str], name: str) -> None:
    """The header's names are unique, ``rename`` (file name -> canonical) names columns of the file, and
    every ``required`` canonical column is present (checked once, before any row is processed)."""
    cols = list(cols)
    check_unique_columns(cols, name)
    unknown = [c for c in rename if c not in cols]
    if unknown:
        raise InputError(f"{name}: the column mapping (columns=) names column(s) {unknown} not in the file; "
                         f"its columns are {cols}", argument="columns",
                         value=unknown[0] if len(unknown) == 1 else unknown)
    renamed = [rename.get(c, c) for c in cols]
    if rename:
        check_unique_columns(renamed, name)
    missing = [c for c in required if c not in renamed]
    if missing:
        m = missing[0]
        if m in rename:  # the file has it, and the mapping renamed it away
            raise missing_column_error(f"{name}: missing required column(s) {missing}: the column mapping renames "
                                       f"the file's {m!r} to {rename[m]!r} (columns={{{m!r}: {rename[m]!r}}}); "
                                       f"drop that mapping, or map another column to {rename[m]!r}",
                                       [m], renamed, argument="columns")
        if f"#{m}" in cols:  # '#lp<TAB>...' is a header, its '#' part of the name
            fix = f"remove the '#' before {m!r} in the header (or map it: columns={{{'#' + m!r}: {m!r}}})"
        else:
            fix = f"name an existing column, or rename yours with columns={{'YOUR_COLUMN': {m!r}}}"
            hint = missing_column_hint(m, cols)  # a question reads on into the fix
            fix = f"{hint} {fix}" if hint else fix
        raise missing_column_error(f"{name}: missing required column(s) {missing}; its columns are {cols}; {fix}",
                                   [m], renamed, argument="columns")


def missing_column_hint(missing: str, cols: list) -> str:
    """A column of another spelling (``chrF`` for ``chrf``) when ``missing`` is absent, as a question
    (empty when none is close). The hint that a metric's score is asked of a table of texts that was
    never scored is the command line's (``cli._errors``): the readers know no metric."""
    spelled = [c for c in cols if isinstance(c, str) and c.casefold() == str(missing).casefold()]
    if not spelled:
        spelled = difflib.get_close_matches(str(missing), [c for c in cols if isinstance(c, str)], n=1, cutoff=0.8)
    return f"did you mean {spelled[0]!r}?" if spelled else ""


def missing_column_error(message: str, missing: Sequence, columns: Sequence, *, argument: str | None) -> InputError:
    """The error for missing column(s): ``argument`` and the first (or every) missing name as its value,
    and the table's (canonical) ``columns`` kept on it (:attr:`InputError.columns`)."""
    error = InputError(message, argument=argument, value=missing[0] if len(missing) == 1 else list(missing))
    error.columns = tuple(str(c) for c in columns)
    return error


def check_not_empty(n_columns: int, n_rows: int, name: str) -> None:
    """A table without columns (an empty file) or without rows is refused: there is nothing to process."""
    if n_columns == 0:
        raise InputError(f"{name}: the file is empty (no header, no rows); give a table with a header row")
    if n_rows == 0:
        raise InputError(f"{name}: the file has a header but no rows; nothing to process")


def parse_column_mapping(items: Sequence[str] | None) -> dict[str, str]:
    """``["hypothesis=mt", "reference=ref"]`` -> ``{"mt": "hypothesis", "ref": "reference"}``
    (file name -> canonical)."""
    mapping: dict[str, str] = {}
    for item in items or ():
        canonical, sep, in_file = item.partition("=")
        if not sep or not canonical.strip() or not in_file.strip():
            raise InputError(f"column mapping {item!r} (columns=): expected CANONICAL=FILE_COLUMN, e.g. "
                             "'hypothesis=mt'", argument="columns", value=item)
        in_file, canonical = in_file.strip(), canonical.strip()
        if in_file in mapping and mapping[in_file] != canonical:
            raise InputError(f"column mapping {item!r} (columns=): file column {in_file!r} is mapped to "
                             f"{mapping[in_file]!r} already; a file column fills one canonical column: keep one "
                             "mapping (or copy the column under a second name in the file)", argument="columns",
                             value=item)
        if canonical in mapping.values() and mapping.get(in_file) != canonical:
            first = next(k for k, v in mapping.items() if v == canonical)
            raise InputError(f"column mapping {item!r} (columns=): {canonical!r} is mapped from {first!r} "
                             "already; keep one mapping per canonical column", argument="columns", value=item)
        mapping[in_file] = canonical
    return mapping


# record widths -------------------------------------------------------------------------------------
class TextShape:
    """What the width check learnt: comment lines before the header, data rows (trailing blank
    lines of a TSV file are not rows; -1: not counted) and a TSV's quoting rule ('csv' or 'none')."""

    def __init__(self, comments: int, rows: int, quoting: str = "none"):
        self.comments, self.rows, self.quoting = comments, rows, quoting


def _tsv_width_error(name: str, row: int, line: int, fields: int, width: int) -> InputError:
    return InputError(f"{name}: row {row} (line {line}) has {fields} tab-separated fields, the header has {width}; "
                      "fix the row (a tab inside a text?)")


def _blank_line_error(name: str, line: int) -> InputError:
    return InputError(f"{name}: line {line} is blank; remove blank lines between rows (a line break inside a text?)")


def check_tsv_text(text: str, name: str, first_line: int = 1) -> int:
    """Every TSV line has the header's number of fields; a blank line inside the data is refused (with
    one column it is an empty value); trailing blank lines are ignored. Returns the number of rows.
    ``first_line`` is the file line of the header (after a comment block)."""
    lines = text.rstrip("\n").split("\n")
    width = lines[0].count("\t") + 1
    if width == 1 and ("," in lines[0] or ";" in lines[0]) and len(lines) > 1:
        raise InputError(f"{name}: the header has no tab but has commas/semicolons; "
                         "is this a CSV file? Rename it to .csv")
    for i, line in enumerate(lines[1:], start=1):
        fields = line.count("\t") + 1
        if fields != width:
            if not line:
                raise _blank_line_error(name, i + first_line)
            raise _tsv_width_error(name, i, i + first_line, fields, width)
    return len(lines) - 1


def check_tsv_quoting(text: str, name: str, first_line: int = 1, quoting: str = "auto") -> TextShape:
    """The quoting rule of a TSV text (:mod:`._quoting`, decided from every field) with its record
    widths checked under that rule; rows are counted when quotes are text (-1 under CSV quoting)."""
    if quoting == "csv":
        _check_csv_records(_io.StringIO(text), name, first_line - 1, delimiter="\t")
        return TextShape(0, -1, "csv")
    try:
        rows, error = check_tsv_text(text, name, first_line), None
    except InputError as exc:
        rows, error = -1, exc
    evidence = QuoteEvidence()
    if quoting == "auto" and '"' in text:
        for i, line in enumerate(text.split("\n")):
            evidence.add(line, i + first_line, header=i == 0)
    rule = decide_quoting(quoting, evidence, name, literal_error=error,
                          csv_fits=lambda: _csv_fits(_io.StringIO(text), name))
    if rule == "csv":
        _check_csv_records(_io.StringIO(text), name, first_line - 1, delimiter="\t")
        return TextShape(0, -1, "csv")
    if error is not None:
        raise error
    return TextShape(0, rows, "none")


def _csv_fits(lines, name: str, offset: int = 0) -> bool:
    """Whether tab-separated records read as strict CSV, each with the header's width."""
    try:
        _check_csv_records(lines, name, offset, delimiter="\t", strict=True)
    except InputError:
        return False
    return True


def check_csv_text(text: str, name: str, first_line: int = 1) -> None:
    """Every CSV record (quotes honoured) has the header's width; blank lines are skipped, as pandas does."""
    if '"' not in text and "\r" not in text:  # no quoting: a record is a line, counting commas is enough
        lines = text.split("\n")
        width = lines[0].count(",") + 1
        bad = next((i for i, line in enumerate(lines[1:], start=1) if line and line.count(",") + 1 != width), None)
        if bad is not None:
            row = sum(1 for line in lines[1: bad + 1] if line)
            _raise_csv_width(name, row, bad + first_line, lines[bad].count(",") + 1, width)
        return
    _check_csv_records(_io.StringIO(text), name, first_line - 1)


def _check_csv_records(lines, name: str, offset: int = 0, *, delimiter: str = ",", strict: bool = False) -> None:
    """Every CSV record (quotes honoured) has the header's width; a lone CR outside quotes is refused
    (pandas would silently start a new row there). Blank lines are skipped, as pandas does. ``strict``
    also refuses a quote where CSV cannot have one (``"a"b``), which pandas reads leniently."""
    limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # a long quoted text is data, not an error
    records = csv.reader(lines, delimiter=delimiter, strict=strict)
    try:
        width, row = len(next(records, [])), 0
        for record in records:
            if record:
                row += 1
                if len(record) != width and delimiter == "\t":
                    raise _tsv_width_error(name, row, records.line_num + offset, len(record), width)
                if len(record) != width:
                    _raise_csv_width(name, row, records.line_num + offset, len(record), width)
    except csv.Error as exc:
        if "new-line" in str(exc):
            raise InputError(f"{name}: line {records.line_num + offset}: {LONE_CR}") from None
        raise InputError(f"{name}: line {records.line_num + offset}: cannot read as csv: {exc}") from None
    finally:
        csv.field_size_limit(limit)


def _raise_csv_width(name: str, row: int, line: int, fields: int, width: int) -> None:
    raise InputError(f"{name}: row {row} (line {line}) has {fields} comma-separated fields, the header has {width}; "
                     "fix the row (quote a text that holds a comma)")


def check_text_file_shape(path: str | os.PathLike, fmt: str, name: str, quoting: str = "auto", *,
                          quiet: bool = False) -> TextShape:
    """The width checks of the in-memory reader, streamed over a file of any size (one pass, constant
    memory; a second one when a TSV's quotes need CSV's view), for readers that parse in chunks; a
    TSV's quoting rule is decided as :func:`check_tsv_quoting` decides it (and said, unless ``quiet``)."""
    from ._compressed import open_input

    with open_input(path, "rb", name=name) as fh:
        comments = 0
        header = fh.readline()
        while header and is_comment_line(header):
            comments += 1
            header = fh.readline()
        if fmt == "tsv" and quoting != "csv":
            evidence = QuoteEvidence()
            try:
                rows, error = _tsv_rows(fh, header, name, comments, evidence if quoting == "auto" else None), None
            except InputError as exc:
                rows, error = -1, exc
    if fmt == "tsv":
        if quoting != "csv":
            rule = decide_quoting(quoting, evidence, name, literal_error=error,
                                  csv_fits=lambda: _csv_file_fits(path, name, comments), quiet=quiet)
            if rule == "none":
                if error is not None:
                    raise error
                return TextShape(comments, rows, "none")
        _check_csv_file(path, name, comments, "\t")
        return TextShape(comments, -1, "csv")
    _check_csv_file(path, name, comments, ",")
    return TextShape(comments, -1)


def _check_csv_file(path, name: str, comments: int, delimiter: str, strict: bool = False) -> None:
    from ._compressed import open_input

    try:  # lines end at LF only (CRLF keeps its CR for csv to strip): a lone CR is then an error, as in memory
        with open_input(path, "r", name=name, encoding="utf-8-sig", newline="\n") as fh:
            _check_csv_records(_after_leading_comments(fh), name, comments, delimiter=delimiter, strict=strict)
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None


def _csv_file_fits(path, name: str, comments: int) -> bool:
    try:
        _check_csv_file(path, name, comments, "\t", strict=True)
    except InputError:
        return False
    return True


def _tsv_rows(lines: Iterable[bytes], header: bytes, name: str, comments: int,
              evidence: QuoteEvidence | None = None) -> int:
    width = header.count(b"\t") + 1
    row = blank = 0  # blank: blank lines seen since the last row (an error only if a row follows)
    if evidence is not None and b'"' in header:
        evidence.add(header.decode("utf-8", "replace").removeprefix("\ufeff").rstrip("\r\n"), comments + 1,
                     header=True)
    for line in lines:
        if evidence is not None and b'"' in line:
            evidence.add(line.decode("utf-8", "replace").rstrip("\r\n"), row + comments + 2)
        if not line.rstrip(b"\r\n") and width > 1:
            blank += 1
            continue
        if blank:
            raise _blank_line_error(name, row + comments + 2)
        row += 1
        fields = line.count(b"\t") + 1
        if fields != width:
            raise _tsv_width_error(name, row, row + comments + 1, fields, width)
    return row


def _after_leading_comments(lines) -> Iterator[str]:
    """The lines of a text file from its header on."""
    lines = iter(lines)
    for line in lines:
        if not is_comment_line(line):
            yield line
            break
    yield from lines


# JSON records ----------------------------------------------------------------------------------------
def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set = set()
        for k, _ in pairs:  # the first key seen twice
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return record


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def iter_json_objects(lines, name: str, hint: str = "one JSON object per line") -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line; a line that is not a JSON object, or an
    object with a key given twice (JSON parsers keep the last value silently), is an InputError naming
    the file and line (shared by every JSONL reader)."""
    for i, line in enumerate(lines, start=1):
        if line.strip():
            yield i, _json_object(line, f"{name}: line {i}", hint)


def parse_json_object(text: str, name: str, hint: str = "give a JSON object") -> dict:
    """One JSON document (e.g. a pretty-printed results file) that must be an object, with the checks
    of :func:`iter_json_objects` (a key given twice, nesting too deep, an integer of thousands of
    digits are InputErrors naming the file; a syntax error also names its line and column)."""
    return _json_object(text, name, hint, position=True)


def _json_object(text: str, where: str, hint: str, *, position: bool = False) -> dict:
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise InputError(f"{where}: key {exc.key!r} occurs more than once in one object; keep one") from None
    except json.JSONDecodeError as exc:
        at = f": line {exc.lineno} column {exc.colno}" if position else ""
        raise InputError(f"{where}{at}: not valid JSON ({exc.msg}); {hint}") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise InputError(f"{where}: cannot read the JSON ({reason}); {hint}") from None
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    return obj


def _json_type(value: object) -> str:
    return {list: "an array", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)


def check_flat_values(record: Mapping, name: str, line: int) -> None:
    """A table cell holds one value: a JSON array or object in a record is refused (it would reach the
    metrics and the language columns as its Python spelling)."""
    for key, value in record.items():
        if isinstance(value, (list, dict)):
            raise InputError(f"{name}: line {line}: "
                             f"{key!r} is {_json_type(value) if isinstance(value, list) else 'an object'}; "
                             "a table cell holds one text, number, true/false or null (e.g. \"lp\": \"de-en\")")
