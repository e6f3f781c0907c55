"""Metric columns a meta-evaluation names but the table lacks, computed from its texts: sentence-level BLEU,
chrF, chrF++ and TER as ``xleval score`` computes them (sacrebleu-exact), so that ``xleval meta --metrics
chrf,bleu`` runs on a table of outputs that was never scored. Neural metrics need a model: score them first."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["COMPUTED_METRICS", "score_missing_metrics"]

#: metrics computed from the texts when their column is absent
COMPUTED_METRICS = ("bleu", "chrf", "chrf++", "ter")


def score_missing_metrics(frame: pd.DataFrame, metrics: Sequence[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` with a column for each of ``metrics`` that it lacks and :data:`COMPUTED_METRICS` names, scored
    per row from ``hypothesis`` and ``reference`` (:func:`xleval.metrics.score_frame`), and the signature of
    each column computed. Without a hypothesis column nothing is computed (the missing column is then
    refused by the meta-evaluation, naming it)."""
    missing = [m for m in dict.fromkeys(metrics) if m not in frame.columns and m in COMPUTED_METRICS]
    if not missing or "hypothesis" not in frame.columns:
        return frame, {}
    from ..metrics import score_frame

    scored: Any = score_frame(frame, missing)
    return scored.frame, {m: scored.signatures[m] for m in missing}
