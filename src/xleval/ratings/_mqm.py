"""MQM error spans -> segment scores: a weight per severity (and category), summed per rater, averaged
over raters.

The weighting is the one of Freitag et al. (2021), "Experts, Errors, and Context" (TACL), used by the WMT
metrics tasks since 2021: Major 5, Minor 1, Neutral 0, a major *Non-translation!* 25 and a minor
*Fluency/Punctuation* 0.1. A weight key is ``severity[/category[/subcategory]]`` (case-insensitive); an
error takes the weight of the **most specific** key that is a prefix of its ``severity/category/...``
path, and 0 when none is (so a ``No-error`` row scores 0 and marks a segment the rater saw and found
clean). A segment's MQM score is minus the mean over its raters of each rater's summed weights: higher is
better, 0 is a perfect translation, as in the score files of mt-metrics-eval.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._base.result import Result
from ..exceptions import DataQualityWarning, InputError
from ..table import require_columns
from ._raters import RATER_POOLING, check_missing, default_keys, rater_z

__all__ = ["MQM_PRESETS", "MQMWeights", "mqm_weights", "score_mqm"]

#: named weightings (spec strings as ``mqm_weights`` parses them)
MQM_PRESETS: dict[str, str] = {
    # Freitag et al. (2021), the WMT 2021-2025 metrics tasks
    "wmt": "Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1",
}

@dataclass(frozen=True, eq=False)
class MQMWeights(Result):
    """A weighting of MQM errors: ``weights`` maps lower-case ``severity[/category[/sub]]`` keys to weights."""

    weights: dict[str, float]
    name: str

    def weight(self, severity: Any, category: Any = "") -> float:
        """The weight of one error: the most specific key that is a prefix of ``severity/category``."""
        path = [str(severity).strip().lower()]
        if isinstance(category, str) and category.strip():
            path += [part.strip().lower() for part in category.split("/")]
        while path:
            w = self.weights.get("/".join(path))
            if w is not None:
                return w
            path.pop()
        return 0.0

    def spec(self) -> str:
        """The weighting as a spec string (``Major:5 Minor:1 ...``; items separated by commas when a key has a
        space), which ``mqm_weights`` reads back."""
        sep = ", " if any(any(c.isspace() for c in k) for k in self.weights) else " "
        return sep.join(f"{k}:{_number(w)}" for k, w in self.weights.items())


def mqm_weights(weights: str | Mapping[str, float] | MQMWeights = "wmt") -> MQMWeights:
    """A weighting by preset name (``"wmt"``), spec string (``"Major:5 Minor:1 Major/Non-translation!:25"``,
    items separated by spaces or commas) or mapping of keys to weights."""
    if isinstance(weights, MQMWeights):
        return weights
    if isinstance(weights, str):
        name = weights.strip()
        if name.lower() in MQM_PRESETS:
            return _from_items(_parse_spec(MQM_PRESETS[name.lower()]), name.lower())
        return _from_items(_parse_spec(name), "custom")
    if isinstance(weights, Mapping):
        return _from_items(list(weights.items()), "custom")
    raise InputError(f"MQM weights: expected a preset name ({', '.join(MQM_PRESETS)}), a spec string such as "
                     f"'Major:5 Minor:1' or a mapping, got {type(weights).__name__}")


def _parse_spec(spec: str) -> list[tuple[str, Any]]:
    # items are separated by commas or spaces; a comma-separated item with one weight keeps its spaces, so that
    # categories such as 'Locale convention/Name format' or 'Source error' can be weighted (mt-metrics-eval's
    # score_mqm --weights_sep)
    items = []
    for piece in spec.split(","):
        items += piece.split() if piece.count(":") > 1 else [piece.strip()] if piece.strip() else []
    if not items:
        raise InputError("MQM weights: the spec is empty: give items such as 'Major:5 Minor:1', or the preset "
                         f"{', '.join(repr(p) for p in MQM_PRESETS)}")
    pairs = []
    for item in items:
        key, sep, value = item.rpartition(":")
        if not sep or not key:
            spaces = ("; for a category with spaces, separate the items with commas: 'Major:5, Minor/Locale "
                      "convention:0.5'") if "/" in item else ""
            raise InputError(f"MQM weights: {item!r} is not 'severity[/category]:weight' "
                             f"(e.g. 'Major:5' or 'Minor/Fluency/Punctuation:0.1'{spaces})")
        pairs.append((key, value))
    return pairs


def _from_items(items: list[tuple[Any, Any]], name: str) -> MQMWeights:
    if not items:
        raise InputError("MQM weights: no weight is given (every error would weigh 0); give at least one, e.g. "
                         "{'Major': 5, 'Minor': 1}, or the preset " + ", ".join(repr(p) for p in MQM_PRESETS))
    weights: dict[str, float] = {}
    for key, value in items:
        k = "/".join(part.strip() for part in str(key).lower().split("/"))
        if "" in k.split("/"):  # such a key is no error's path: it would never match, and weigh nothing
            raise InputError(f"MQM weights: the key {key!r} has an empty severity or category; write "
                             "'severity[/category[/subcategory]]', e.g. 'Major' or 'Minor/Fluency/Punctuation'")
        try:
            w = float(value)
        except (TypeError, ValueError):
            w = math.nan
        if isinstance(value, bool) or not math.isfinite(w):
            raise InputError(f"MQM weights: the weight of {key!r} is {value!r}, not a finite number")
        if w < 0:
            raise InputError(f"MQM weights: the weight of {key!r} is {value!r}: a weight is the penalty of an "
                             "error (0 or more; the segment's MQM score is minus their sum), so a negative one "
                             "would reward errors; give 0 or more")
        if k in weights:
            raise InputError(f"MQM weights: {key!r} is given twice; give each severity[/category] once")
        weights[k] = w
    return MQMWeights(weights, name)


def _warn_no_error_beside_errors(frame: pd.DataFrame, severity: pd.Series, category: pd.Series,
                                 keys: tuple[str, ...]) -> None:
    """A rater who marked a segment No-error and also an error in it contradicts themselves: say so (the errors
    are counted; the No-error row adds 0)."""
    no_error = (severity.astype(str).str.strip().str.lower().isin(("no-error", "no error"))
                | category.astype(str).str.strip().str.lower().isin(("no-error", "no error"))).to_numpy()
    if not no_error.any():
        return
    marks = frame.assign(no_error=no_error, error=frame["penalty"].to_numpy() != 0)
    both = marks.groupby([*keys, "rater"], sort=False, dropna=False)[["no_error", "error"]].any()
    both = both[both["no_error"] & both["error"]]
    if len(both):
        first = dict(zip([*keys, "rater"], both.index[0], strict=True))
        shown = ", ".join(f"{k} {v!r}" if isinstance(v, str) else f"{k} {v}" for k, v in first.items())
        warnings.warn(f"MQM spans: {len(both)} (segment, rater) pair(s) hold a No-error row beside an error "
                      f"(first: {shown}); the errors are counted (check the annotation export)",
                      DataQualityWarning, stacklevel=3)


def _number(w: float) -> str:
    return str(int(w)) if float(w).is_integer() else repr(float(w))


def score_mqm(spans: pd.DataFrame, *, weights: str | Mapping[str, float] | MQMWeights = "wmt",
              raters: str = "mean", keys: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Segment MQM scores from a table of error spans, one row per error (a ``No-error`` row, or any row
    whose severity has no weight, marks a segment its rater saw; it adds 0).

    ``spans`` has ``system``, ``seg_id``, ``rater``, ``severity`` and ``category`` columns (and ``lp`` if it
    covers several language pairs). ``keys`` are the segment key columns (default: ``lp`` if present,
    ``system``, ``seg_id``, and ``doc`` if present). ``raters``: ``"mean"`` (mt-metrics-eval's
    ``score_mqm``) or ``"z"`` (each rater's segment penalties standardised over the segments that rater
    rated in the language pair, then averaged: removes rater severity; the result is on a z scale).

    Returns one row per segment: the keys, ``mqm`` (minus the mean penalty, higher is better; z-scores
    with ``raters="z"``), ``mqm_raters`` (raters of the segment), ``mqm_errors`` (errors with a non-zero
    weight, mean over raters) and ``mqm_scale`` naming the scale.
    """
    w = mqm_weights(weights)
    if raters not in RATER_POOLING:
        raise InputError(f"score_mqm: raters={raters!r} is not one of {', '.join(RATER_POOLING)}")
    keys = default_keys(spans, keys)
    require_columns(spans, [*keys, "rater", "severity"], what="MQM spans")
    frame = pd.DataFrame({k: spans[k] for k in keys})
    frame["rater"] = spans["rater"].astype(str)
    category = spans["category"] if "category" in spans.columns else pd.Series("", index=spans.index)
    check_missing(frame, spans["severity"], "severity", "MQM spans")
    penalty = np.fromiter((w.weight(s, c) for s, c in zip(spans["severity"], category, strict=True)),
                          dtype=float, count=len(spans))
    frame["penalty"] = penalty
    frame["errors"] = (penalty != 0).astype(float)
    _warn_no_error_beside_errors(frame, spans["severity"], category, keys)
    per_rater = frame.groupby([*keys, "rater"], sort=False, dropna=False)[["penalty", "errors"]].sum().reset_index()
    value = -per_rater["penalty"]
    weighting = f"{w.name} weights" + (f" {w.spec()}" if w.name not in MQM_PRESETS else "")
    scale = f"MQM ({weighting}; raters {raters})"
    if raters == "z":
        value = rater_z(per_rater.assign(value=value), "lp" if "lp" in keys else None, "MQM")
        scale = f"MQM rater-z ({weighting})"
    per_rater["value"] = value
    out = (per_rater.groupby(list(keys), sort=False, dropna=False)
           .agg(mqm=("value", "mean"), mqm_raters=("rater", "nunique"), mqm_errors=("errors", "mean"))
           .reset_index())
    out["mqm_scale"] = scale
    return out
