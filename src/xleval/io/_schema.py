"""One column-type policy for tables, whether read whole or in batches.

A column's type is decided from *all* of its cells, by evidence that merges across batches: the
in-memory reader gathers it over the whole table at once, the streamed reader in a first pass over
the file, and both convert every batch with the same decision. So a streamed output has the column
types of the one-pass output, whatever the batch boundaries (docs/scale.md).

Text tables (TSV/CSV; every cell read as text): a column becomes int64 when every cell is a
canonical integer below 2**53 in magnitude (none missing), float64 when every present cell is a
canonical number and none is spelt with a leading zero or is an integer of 2**53 or more (which
float64 cannot hold exactly), and no two spellings of the column name one number ('1.1' and '1.10',
'2' and '2.0': ids, versions or section numbers that a number would merge; looked for among up to
:data:`SPELLINGS_TRACKED` distinct numbers, beyond which a column is a score's); otherwise it stays text,
so ids like '007', '9007199254740993' or '1.10' keep their spelling. Canonical text columns
(``hypothesis``, ``lp``, ...) and the columns a command parses as numbers itself stay as they are.

JSONL (values typed by JSON): a column of integers only is int64 (a missing key or null makes it
float64, as does any fraction, unless an integer is 2**53 or more: then it keeps its JSON values, as
float64 would merge such ids), true/false only is bool, anything else keeps its JSON values.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._formats import NA_TOKENS, TEXT_COLUMNS

__all__ = ["TextEvidence", "text_evidence", "text_types", "apply_text_types", "JsonEvidence", "json_types",
           "apply_json_types"]

_INT_TEXT = r"-?(?:0|[1-9][0-9]*)"
_FLOAT_TEXT = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?(?:inf|Infinity|nan|NaN)"
_LEADING_ZERO = r"-?0[0-9]+"
#: distinct numbers of a column among which two spellings of one number are looked for (ids have few)
SPELLINGS_TRACKED = 10_000


@dataclass
class TextEvidence:
    """What the cells of one text column seen so far allow (mergeable)."""

    present: bool = False   # some cell is not a missing-value token
    missing: bool = False   # some cell is a missing-value token
    ints: bool = True       # every present cell is a canonical integer below 2**53
    floats: bool = True     # every present cell is a canonical number, none with a leading zero
    # each finite number seen and its first spelling, while there are at most SPELLINGS_TRACKED (None beyond)
    spelt: dict | None = field(default_factory=dict)
    merges: bool = False    # two spellings name one number (read only while ``spelt`` is kept)

    @property
    def settled(self) -> bool:
        """Nothing later can make it a number: no need to look at more cells."""
        return self.present and not self.floats

    @property
    def numeric(self) -> bool:
        """The column may become numbers: every present cell is one, and no two spellings merge."""
        return self.floats and not (self.spelt is not None and self.merges)

    def merge(self, other: TextEvidence) -> TextEvidence:
        spelt, merges = None, False
        if self.spelt is not None and other.spelt is not None:  # the same decision whatever the batches
            spelt = dict(self.spelt)
            for value, text in other.spelt.items():
                merges |= spelt.setdefault(value, text) != text
            merges |= self.merges or other.merges
            if len(spelt) > SPELLINGS_TRACKED:
                spelt, merges = None, False
        return TextEvidence(self.present or other.present, self.missing or other.missing,
                            self.ints and other.ints, self.floats and other.floats, spelt, merges)


def text_evidence(frame: pd.DataFrame, skip: Iterable[str] = (),
                  known: Mapping[str, TextEvidence] | None = None) -> dict[str, TextEvidence]:
    """Evidence of the text columns of ``frame`` not in ``skip`` (or TEXT_COLUMNS), merged into ``known``."""
    out = dict(known or {})
    skip = set(skip) | TEXT_COLUMNS
    for col in frame.columns:
        if col in skip or (col in out and out[col].settled):
            continue
        values = frame[col]
        if not (values.dtype == object or pd.api.types.is_string_dtype(values)):
            continue
        out[col] = out.get(col, TextEvidence()).merge(_cells_evidence(values.astype(str)))
    return out


def _cells_evidence(cells: pd.Series) -> TextEvidence:
    empty = cells.isin(NA_TOKENS)
    present = cells[~empty]
    if present.empty:
        return TextEvidence(False, bool(empty.any()), True, True)
    floats = bool(present.str.fullmatch(_FLOAT_TEXT).all()) and not present.str.fullmatch(_LEADING_ZERO).any()
    ints = floats and bool(present.str.fullmatch(_INT_TEXT).all())
    if floats:
        # an integer of 2**53 or more has no exact float64 (nor, beyond 2**63, int64): such ids would merge
        # (9007199254740993 read as 9007199254740992), so a column holding one stays text
        spelt = present[present.str.fullmatch(_INT_TEXT) & (present.str.lstrip("-").str.len() >= 16)]
        if len(spelt) and bool((spelt.map(lambda v: abs(int(v))) >= 2**53).any()):
            ints = floats = False
    if not floats:
        return TextEvidence(True, bool(empty.any()), ints, floats, None)
    return TextEvidence(True, bool(empty.any()), ints, floats, *_spellings(present))


def _spellings(present: pd.Series) -> tuple[dict | None, bool]:
    """Each finite number among the cells with its first spelling, and whether two spellings name one number;
    (None, False) beyond :data:`SPELLINGS_TRACKED` distinct numbers (a score's column, not ids)."""
    head = pd.unique(present.iloc[:2 * SPELLINGS_TRACKED].to_numpy(dtype=object))
    if len(head) > SPELLINGS_TRACKED:  # the first rows alone hold too many numbers: no need to read on
        numbers = pd.to_numeric(pd.Series(head), errors="coerce").to_numpy(dtype=float)
        if len(np.unique(numbers[np.isfinite(numbers)])) > SPELLINGS_TRACKED:
            return None, False
    texts = pd.unique(present.to_numpy(dtype=object))
    values = pd.to_numeric(pd.Series(texts), errors="coerce").to_numpy(dtype=float)
    finite = np.isfinite(values)
    frame = pd.DataFrame({"value": values[finite], "text": texts[finite]})
    first = frame.drop_duplicates("value")
    if len(first) > SPELLINGS_TRACKED:
        return None, False
    return dict(zip(first["value"].tolist(), first["text"].tolist(), strict=True)), len(first) < len(frame)


def text_types(evidence: Mapping[str, TextEvidence]) -> dict[str, str]:
    """The decision: ``{column: 'int64' | 'float64'}`` for the columns that become numbers."""
    types = {}
    for col, ev in evidence.items():
        if not ev.present or not ev.numeric:
            continue
        if ev.ints and not ev.missing:
            types[col] = "int64"
        else:
            types[col] = "float64"
    return types


def apply_text_types(frame: pd.DataFrame, types: Mapping[str, str]) -> pd.DataFrame:
    """Convert the columns of ``frame`` that ``types`` names (every cell is known to parse)."""
    for col, dtype in types.items():
        if col not in frame.columns:
            continue
        cells = frame[col].astype(str)
        parsed = pd.to_numeric(cells.where(~cells.isin(NA_TOKENS)), errors="coerce")
        frame[col] = parsed.astype(dtype)
    return frame


# JSONL -------------------------------------------------------------------------------------------------
_INT64 = (-(2**63), 2**63 - 1)


@dataclass
class JsonEvidence:
    """The kinds of JSON values each key holds, the keys in the order they first occur, and the rows."""

    kinds: dict
    rows: int = 0

    @classmethod
    def empty(cls) -> JsonEvidence:
        return cls({})

    def add(self, records: list[dict]) -> JsonEvidence:
        for record in records:
            for key, value in record.items():
                kinds = self.kinds.get(key)
                if kinds is None:
                    kinds = self.kinds[key] = set()
                    if self.rows:  # the key is missing from every earlier record
                        kinds.add("null")
                kinds.add(_json_kind(value))
            if len(record) < len(self.kinds):
                for key in self.kinds.keys() - record.keys():
                    self.kinds[key].add("null")
            self.rows += 1
        return self

    @property
    def columns(self) -> list:
        return list(self.kinds)


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            return "other"
        return "bigint" if abs(value) >= 2**53 else "int"  # int64 holds it exactly, float64 does not
    if isinstance(value, float):
        return "float"
    return "other"


def json_types(evidence: JsonEvidence) -> dict[str, str]:
    """``{column: 'int64' | 'float64' | 'bool' | 'object'}``."""
    types = {}
    for key, kinds in evidence.kinds.items():
        if kinds and kinds <= {"int", "bigint"}:
            types[key] = "int64"
        elif kinds and kinds <= {"int", "float", "null"} and kinds != {"null"}:
            types[key] = "float64"
        elif kinds == {"bool"}:
            types[key] = "bool"
        else:
            types[key] = "object"
    return types


def apply_json_types(records: list[dict], columns: list, types: Mapping[str, str]) -> pd.DataFrame:
    """A frame of ``records`` with every column of ``columns`` (missing keys: null) typed by ``types``."""
    frame = pd.DataFrame.from_records(records, columns=columns) if records else pd.DataFrame(columns=columns)
    for col in columns:
        dtype = types.get(col, "object")
        values = frame[col]
        if dtype == "object":
            if values.dtype != object:  # pandas made the cells numbers (ints beside nulls: floats): the JSON values
                frame[col] = pd.Series([record.get(col) for record in records], index=frame.index, dtype=object)
        elif values.dtype != np.dtype(dtype):
            frame[col] = values.astype(dtype)
    return frame
