"""ESA ratings -> segment scores: Error Span Annotation (Kocmi et al. 2024, "Error Span Annotation: A
Balanced Approach for Human Evaluation of Machine Translation", WMT24 and WMT25's human evaluation).

An ESA rater marks error spans (minor or major) and then gives the segment a score from 0 to 100; the
score is the gold, the spans explain it. Several raters of a segment are pooled as for MQM (mean, or the
mean of per-rater z-scores). Span counts per severity are kept beside the score when the table has them.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError
from ..table import require_columns
from ._raters import RATER_POOLING, check_missing, default_keys, rater_z

__all__ = ["ESA_RANGE", "ESA_SEVERITIES", "score_esa"]

#: the ESA slider's range
ESA_RANGE = (0.0, 100.0)
#: the severities an ESA span can have
ESA_SEVERITIES = ("minor", "major")


def score_esa(ratings: pd.DataFrame, *, score: str = "score", raters: str = "mean",
              spans: str | None = None, keys: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Segment ESA scores from one row per (segment, rater): the rater's 0-100 ``score`` and, if ``spans``
    names a column, its error spans as JSON (a list of objects with a ``severity``, ``minor`` or ``major``;
    ``[]`` for none).

    ``raters``: ``"mean"`` or ``"z"`` (per-rater z over the rater's segments in the language pair).
    ``keys`` as in :func:`score_mqm`. A rater without a ``rater`` column counts as one rater.

    Returns one row per segment: the keys, ``esa`` (mean score, or mean z), ``esa_raters``,
    ``esa_minor`` and ``esa_major`` (spans per rater, mean over raters; only with ``spans``) and
    ``esa_scale`` (the scale).
    """
    if raters not in RATER_POOLING:
        raise InputError(f"score_esa: raters={raters!r} is not one of {', '.join(RATER_POOLING)}")
    keys = default_keys(ratings, keys)
    require_columns(ratings, [*keys, score, *([spans] if spans else [])], what="ESA ratings")
    frame = pd.DataFrame({k: ratings[k] for k in keys})
    frame["rater"] = ratings["rater"].astype(str) if "rater" in ratings.columns else "rater"
    check_missing(frame, ratings[score], score, "ESA ratings")
    frame["value"] = _scores(ratings[score], score)
    if len(frame) > 1 and frame["value"].max() <= 1.0 and (frame["value"] % 1 != 0).any():
        warnings.warn(f"ESA ratings: every {score} is within 0-1 (the largest is {frame['value'].max():g}); ESA "
                      "scores are 0-100: if these are on a 0-1 scale, multiply them by 100 first",
                      DataQualityWarning, stacklevel=2)
    _check_once(frame, keys)
    if spans:
        counts = np.array([_span_counts(text, i) for i, text in enumerate(ratings[spans])], dtype=float)
        frame["esa_minor"], frame["esa_major"] = counts[:, 0], counts[:, 1]
    scale = f"ESA 0-100 (raters {raters})"
    if raters == "z":
        frame["value"] = rater_z(frame, "lp" if "lp" in keys else None, "ESA")
        scale = "ESA rater-z"
    agg: dict[str, Any] = {"esa": ("value", "mean"), "esa_raters": ("rater", "nunique")}
    if spans:
        agg |= {"esa_minor": ("esa_minor", "mean"), "esa_major": ("esa_major", "mean")}
    out = frame.groupby(list(keys), sort=False, dropna=False).agg(**agg).reset_index()
    out["esa_scale"] = scale
    return out


def _scores(values: pd.Series, name: str) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    lo, hi = ESA_RANGE
    bad = ~((numbers >= lo) & (numbers <= hi))
    # true/false are not scores (pandas would read them as 1 and 0)
    bad |= np.fromiter((isinstance(v, bool | np.bool_) for v in values), dtype=bool, count=len(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"ESA ratings: row {row + 1}: {name} = {values.iloc[row]!r} is not a number from "
                         f"{lo:g} to {hi:g} (the ESA scale); give the rater's 0-100 score")
    return numbers


def _check_once(frame: pd.DataFrame, keys: tuple[str, ...]) -> None:
    dup = frame.duplicated([*keys, "rater"], keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(f"ESA ratings: row {row + 1} rates segment "
                         f"{', '.join(f'{k} {frame[k].iloc[row]!r}' for k in keys)} a second time by rater "
                         f"{frame['rater'].iloc[row]!r}: keep one rating per rater and segment")


def _span_counts(text: Any, row: int) -> tuple[int, int]:
    try:
        spans = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise InputError(f"ESA ratings: row {row + 1}: the error spans are not JSON ({exc.msg}); "
                         "give a JSON list such as [{\"severity\": \"minor\"}] or []") from None
    if spans is None or (isinstance(spans, float) and np.isnan(spans)):
        spans = []
    if isinstance(spans, np.ndarray | tuple):  # a Parquet list column, as pandas reads it
        spans = list(spans)
    if not isinstance(spans, list):
        raise InputError(f"ESA ratings: row {row + 1}: the error spans are {type(spans).__name__}, not a JSON "
                         "list; give a list such as [{\"severity\": \"minor\"}] or []")
    counts = [0, 0]
    for span in spans:
        severity = str(span.get("severity", "")).strip().lower() if isinstance(span, dict) else ""
        if severity not in ESA_SEVERITIES:
            raise InputError(f"ESA ratings: row {row + 1}: a span has severity {severity or 'none'!r}; ESA "
                             f"spans are {' or '.join(ESA_SEVERITIES)}")
        start, end = span.get("start"), span.get("end")
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in (start, end)) and end < start:
            raise InputError(f"ESA ratings: row {row + 1}: a {severity} span ends (end {end}) before it starts "
                             f"(start {start}); fix the span's character offsets in the export")
        counts[ESA_SEVERITIES.index(severity)] += 1
    return counts[0], counts[1]
