"""ESA ratings as WMT24 published them: Appraise's export (``wmt-conference/wmt24-news-systems``,
``humeval/esa_generalMT2024_wave*.csv``) -> the long ratings table :func:`score_esa` takes.

The export is a CSV without a header, 12 fields a row::

    user_id, system, line_id, item_type (TGT or BAD), source language, target language (3 letters:
    eng, ces, zho, ...), score (0-100), document id, a flag, the error spans (JSON: objects with a
    severity minor/major and start_i, end_i), time_start, time_end

Rows are dropped as the organisers drop them (their ``humeval/merge_to_jsonl.py``): attention checks
(item type ``BAD``: a deliberately damaged translation), documents whose id ends in ``#bad``, ``#dup`` or
``#incomplete``, and tutorial documents (an id containing ``-tutorial``); a rater who rated a segment
again keeps the latest rating (largest time_end), as their ``humeval/tools.py`` does. The drops are
counted in one :class:`DataQualityWarning`.

``line_id`` is the 0-based line of the segment in the pair's ``txt/sources/<lp>.txt`` (line 0 is the
canary); :func:`xleval.io.read_wmt_folder` numbers lines from 1, so ``seg_id = line_id + 1``.
"""
from __future__ import annotations

import csv
import io
import json
import os
import stat
import warnings
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..exceptions import DataQualityWarning, InputError, XlevalError
from ._esa import ESA_RANGE, ESA_SEVERITIES

__all__ = ["APPRAISE_ESA_FIELDS", "APPRAISE_LANGUAGES", "read_appraise_esa", "looks_like_appraise_esa"]

#: the fields of a row of the export, in order
APPRAISE_ESA_FIELDS = ("user_id", "system", "line_id", "item_type", "source_language", "target_language",
                       "score", "document_id", "flag", "spans", "time_start", "time_end")
#: the 3-letter codes of the WMT24 exports and their 2-letter codes (``plk`` is the organisers' Polish)
APPRAISE_LANGUAGES = {"ces": "cs", "deu": "de", "eng": "en", "hin": "hi", "hrv": "hr", "isl": "is", "jpn": "ja",
                      "plk": "pl", "pol": "pl", "rus": "ru", "spa": "es", "ukr": "uk", "zho": "zh"}
#: why a row is dropped, in the order the organisers test them
_DROPS = ("attention-check rows (BAD)", "rows of documents marked #bad", "rows of documents marked #dup",
          "rows of documents marked #incomplete", "tutorial rows")
#: a span the rater left undecided: neither minor nor major
_UNDECIDED = "undecided"
_COLUMNS = ["lp", "system", "doc", "seg_id", "rater", "score", "spans"]


def read_appraise_esa(path: str | os.PathLike, *, languages: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read an Appraise ESA export (see the module docstring) into one row per kept rating: ``lp``
    (``en-cs``), ``system``, ``doc``, ``seg_id`` (``line_id + 1``), ``rater`` (the user_id), ``score`` and
    ``spans`` (JSON text), ready for ``score_esa(table, spans="spans")``.

    ``languages`` adds or replaces 3-letter codes (``{"kor": "ko"}``) beside :data:`APPRAISE_LANGUAGES`.
    Raises :class:`InputError` naming the file's row for a row without 12 fields, an item type other than
    TGT or BAD, an unknown language code, a score that is not a number from 0 to 100, a line_id that is not a
    whole number from 0, and (kept rows) spans that are not a JSON list or a time_end that is not a number.
    """
    from ..io._compressed import read_input_bytes
    from ..io._formats import display_name
    from ..io._read import decode_text

    name = display_name(path)
    codes = {**APPRAISE_LANGUAGES, **dict(languages or {})}
    kept: list[list[Any]] = []
    dropped: Counter[str] = Counter()
    undecided: list[int] = []
    text = decode_text(read_input_bytes(path, name), name)
    for row, fields in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
        if not fields:  # a blank line
            continue
        where = f"{name}: row {row}"
        lp, score, line = _checked(fields, where, codes)
        reason = _drop_reason(fields[3], fields[7])
        if reason is not None:
            dropped[reason] += 1
            continue
        spans, n_undecided = _spans(fields[9], where)
        undecided += [row] * n_undecided
        kept.append([lp, fields[1], fields[7], line + 1, fields[0], score, spans, _time(fields[11], where), row])
    frame = pd.DataFrame(kept, columns=[*_COLUMNS, "time_end", "row"])
    if frame.empty:
        what = f"no rating is left after dropping {_counts(dropped)}" if dropped else "no rows"
        raise InputError(f"{name}: {what}; give an Appraise ESA export with TGT rows of real documents")
    frame, revised = _latest(frame)
    _say(name, dropped, revised, len(frame), undecided)
    return frame[_COLUMNS].reset_index(drop=True)


def looks_like_appraise_esa(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a regular ``.csv`` file whose first row reads as a row of the export (12 fields,
    TGT or BAD, two 3-letter language codes): a table without its header, which needs the Appraise reader."""
    from ..io._compressed import open_input
    from ..io._formats import inner_suffix

    try:
        if inner_suffix(path) != ".csv" or not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open_input(path, "r", encoding="utf-8", errors="replace", newline="") as fh:
            first = next(csv.reader([fh.readline()]), [])
    except (OSError, ValueError, XlevalError):
        return False
    return (len(first) == len(APPRAISE_ESA_FIELDS) and first[3] in ("TGT", "BAD") and first[2].isascii()
            and first[2].isdigit()
            and all(len(code) == 3 and code.isalpha() and code.islower() for code in first[4:6]))


def _checked(fields: list[str], where: str, codes: Mapping[str, str]) -> tuple[str, float, int]:
    """The row's language pair, score and line_id, or an InputError naming the row."""
    if len(fields) != len(APPRAISE_ESA_FIELDS):
        raise InputError(f"{where} has {len(fields)} fields; a row of an Appraise ESA export has "
                         f"{len(APPRAISE_ESA_FIELDS)} ({', '.join(APPRAISE_ESA_FIELDS)}): check the file is one")
    if fields[3] not in ("TGT", "BAD"):
        raise InputError(f"{where}: item type {fields[3]!r} is not TGT or BAD (field 4 of an Appraise ESA export)")
    pair = []
    for code in fields[4:6]:
        if code not in codes:
            raise InputError(f"{where}: language code {code!r} is unknown (known: {', '.join(sorted(codes))}); "
                             f"map it with languages={{{code!r}: '<2-letter code>'}}")
        pair.append(codes[code])
    lo, hi = ESA_RANGE
    try:
        score = float(fields[6])
    except ValueError:
        score = float("nan")
    if not lo <= score <= hi:
        raise InputError(f"{where}: score {fields[6]!r} is not a number from {lo:g} to {hi:g} (the ESA scale)")
    if not (fields[2].isascii() and fields[2].isdigit()):
        raise InputError(f"{where}: line_id {fields[2]!r} is not a whole number from 0 (the segment's 0-based line)")
    return "-".join(pair), score, int(fields[2])


def _drop_reason(item_type: str, doc: str) -> str | None:
    tests = (item_type == "BAD", doc.endswith("#bad"), doc.endswith("#dup"), doc.endswith("#incomplete"),
             "-tutorial" in doc)
    return next((reason for reason, hit in zip(_DROPS, tests, strict=True) if hit), None)


def _spans(text: str, where: str) -> tuple[str, int]:
    """The spans as JSON without the undecided ones, and how many were undecided."""
    try:
        spans = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: the error spans are not JSON ({exc.msg}); field 10 holds a JSON list") from None
    if not isinstance(spans, list):
        raise InputError(f"{where}: the error spans are {type(spans).__name__}, not a JSON list (field 10)")
    decided = []
    for span in spans:
        severity = span.get("severity") if isinstance(span, dict) else None
        if severity != _UNDECIDED and severity not in ESA_SEVERITIES:
            raise InputError(f"{where}: a span has severity {severity!r}; ESA spans are "
                             f"{' or '.join(ESA_SEVERITIES)} (or {_UNDECIDED})")
        if severity != _UNDECIDED:
            decided.append(span)
    return json.dumps(decided, ensure_ascii=False), len(spans) - len(decided)


def _time(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{where}: time_end {text!r} is not a number (seconds; field 12)") from None


def _latest(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One rating per rater and segment: the latest by time_end (a tie: the later row)."""
    ordered = frame.sort_values(["time_end", "row"], kind="stable")
    latest = ordered.drop_duplicates(["rater", "lp", "system", "doc", "seg_id"], keep="last").sort_values("row")
    return latest, len(frame) - len(latest)


def _counts(dropped: Counter[str]) -> str:
    return ", ".join(f"{dropped[reason]:,} {reason}" for reason in _DROPS if dropped[reason])


def _say(name: str, dropped: Counter[str], revised: int, kept: int, undecided: list[int]) -> None:
    parts = [f"dropped {_counts(dropped)}, as the WMT24 organisers do"] if dropped else []
    if revised:
        parts.append(f"kept the latest of a rater's ratings of a segment (dropped {revised:,} earlier ones), as "
                     "their tools.py does")
    if parts:
        warnings.warn(f"{name}: {'; '.join(parts)}; {kept:,} ratings kept", DataQualityWarning, stacklevel=3)
    if undecided:
        rows = ", ".join(str(r) for r in dict.fromkeys(undecided[:5]))
        warnings.warn(f"{name}: {len(undecided):,} error spans have severity {_UNDECIDED!r} (rows {rows}"
                      f"{', ...' if len(set(undecided)) > 5 else ''}): counted in neither esa_minor nor esa_major",
                      DataQualityWarning, stacklevel=3)
