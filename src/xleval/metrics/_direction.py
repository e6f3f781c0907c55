"""One rule for a metric's direction: is a higher score better?

Every consumer (calibration, the decision, the leaderboard, meta, fairness, the report) asks
:func:`higher_is_better`, so a column named ``ter`` without a signature, or a MetricX column renamed
``m``, reads the same everywhere. The order of evidence:

1. the direction the caller was told (``given``: a command-line flag such as ``--lower-is-better``);
2. the direction the score's signature states (``dir:lower`` for MetricX's error scores,
   ``dir:higher``), so a renamed column keeps its metric's direction;
3. the metric's registry entry, by the metric's name or else the column's (``ter`` is an error rate), and
   else by a word of the column's name that names an error scale (``sentence_ter``, ``metric:TER`` as the WMT20
   metrics task writes it, ``metricx_24``, ``MetricX-24-Hybrid-XL`` as WMT25 does: a user's own MetricX column
   read as higher-is-better would reverse every order of its systems); but an error scale's scores are never
   negative, so a column of that name whose values (``values=``) are all
   at most 0 is read as the scale negated, higher is better, as mt-metrics-eval and WMT25 write MetricX, with a
   warning that says so;
4. otherwise higher is better (BLEU, chrF, COMET, BERTScore, human adequacy).
"""
from __future__ import annotations

import re
import warnings
from typing import Any

from .._base.signature import signature_direction
from ..exceptions import DataQualityWarning

__all__ = ["higher_is_better"]


def higher_is_better(column: str | None, signature: str | None = None, *, given: bool | None = None,
                     metric: str | None = None, values: Any = None) -> bool:
    """Whether higher values of the score ``column`` are better (module docstring for the rule).
    ``signature``: the column's metric signature, if any; ``given``: a direction the user declared;
    ``metric``: the registry name when it differs from the column's name; ``values``: the column's scores, which
    tell a negated error scale (every value at most 0) from the metric's own."""
    if given is not None:
        return bool(given)
    stated = signature_direction(signature)
    if stated is not None:
        return stated
    from ._registry import METRICS, _load

    name = (metric or column or "").lower()
    key = name if name in METRICS else _error_family(name)
    if key is None:
        return True
    entry = METRICS[key]
    up = bool(_load(entry.target).higher_is_better)
    if not up and values is not None and _negated(values):
        shown = _SHOWN.get(key, key)
        warnings.warn(f"score {column!r}: every value is at most 0, which {shown}'s error scale never is: read as the "
                      "scale negated, higher is better (as mt-metrics-eval and WMT25 write MetricX, and the WMT20 "
                      "metrics task TER)",
                      DataQualityWarning, stacklevel=2)
        return True
    return up


_WORD = re.compile(r"[a-z0-9+]+")
_SHOWN = {"ter": "TER", "metricx": "MetricX"}  # the registry's names as the metrics' authors write them


def _error_family(name: str) -> str | None:
    """The registry name of the error scale a word of ``name`` names (``ter``, or a word starting ``metricx``):
    words are runs of letters, digits and ``+``, so ``hter`` (a human scale), ``inter`` or ``chrf`` are not TER."""
    for word in _WORD.findall(name):
        if word in ("ter", "tercom"):
            return "ter"
        if word.startswith("metricx"):
            return "metricx"
    return None


def _negated(values: Any) -> bool:
    """Whether every finite value is at most 0 and one is below 0."""
    import numpy as np
    import pandas as pd  # lazily: `xleval score` on Parquet reads and writes without pandas

    v = pd.to_numeric(pd.Series(np.asarray(values).reshape(-1)), errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    return bool(v.size) and float(v.max()) <= 0 < -float(v.min())
