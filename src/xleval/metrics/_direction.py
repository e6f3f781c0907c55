"""One rule for a metric's direction: is a higher score better?

Every consumer (calibration, the decision, the leaderboard, meta, fairness, the report) asks
:func:`higher_is_better`, so a column named ``ter`` without a signature, or a MetricX column renamed
``m``, reads the same everywhere. The order of evidence:

1. the direction the caller was told (``given``: a command-line flag such as ``--lower-is-better``);
2. the direction the score's signature states (``dir:lower`` for MetricX's error scores,
   ``dir:higher``), so a renamed column keeps its metric's direction;
3. the metric's registry entry, by the metric's name or else the column's (``ter`` is an error rate);
4. otherwise higher is better (BLEU, chrF, COMET, BERTScore, human adequacy).
"""
from __future__ import annotations

from .._base.signature import signature_direction

__all__ = ["higher_is_better"]


def higher_is_better(column: str | None, signature: str | None = None, *, given: bool | None = None,
                     metric: str | None = None) -> bool:
    """Whether higher values of the score ``column`` are better (module docstring for the rule).
    ``signature``: the column's metric signature, if any; ``given``: a direction the user declared;
    ``metric``: the registry name when it differs from the column's name."""
    if given is not None:
        return bool(given)
    stated = signature_direction(signature)
    if stated is not None:
        return stated
    from ._registry import METRICS, _load

    name = (metric or column or "").lower()
    entry = METRICS.get(name)
    return True if entry is None else bool(_load(entry.target).higher_is_better)
