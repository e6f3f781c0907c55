"""System scores from per-segment sufficient statistics, grouped by resampling unit.

A system's score is a corpus score from summed statistics (BLEU, chrF, TER: exactly sacrebleu's
``corpus_score``) when the table has the texts and the score column is what the metric gives for
them, else the mean of its segment scores (one statistic ``(score, 1)`` per row). Either way the
leaderboard resamples *units* (documents when the table has ``doc_id``, else segments by
``seg_id``, else rows) and sums the statistics of the drawn units, so a corpus score's bootstrap
never averages per-segment ratios.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..metrics._base import CORPUS_METRICS

__all__ = ["RowStatistics", "row_statistics", "unit_statistics", "CORPUS_METRICS"]

logger = logging.getLogger(__name__)

_TEXT_COLUMNS = ("hypothesis", "reference")
_MATCH_TOLERANCE = 1e-6  # recomputed sentence scores vs the column (both are sacrebleu-exact floats)


@dataclass(frozen=True)
class RowStatistics:
    """Per-row statistics (n, k), the score of summed statistics per leaderboard group, and how."""

    stats: np.ndarray
    score_of_group: dict[str, Callable[[np.ndarray], np.ndarray]]
    aggregation: str
    notes: tuple[str, ...]


def _mean(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[..., 0] / sums[..., 1]


def row_statistics(frame: pd.DataFrame, score: str, groups: np.ndarray, metric: str | None = None) -> RowStatistics:
    """Statistics of the rows of ``frame`` (all with a finite ``score``), grouped by ``groups``.

    ``metric`` is the registry name of the metric that made ``score`` (default: the column name when
    it is one of :data:`CORPUS_METRICS`). The texts are re-scored and the sentence scores compared with
    the column; only an exact match (the same metric options) lets the corpus score be used.
    """
    values = frame[score].to_numpy(dtype=float)
    mean_stats = np.column_stack([values, np.ones_like(values)])
    labels = sorted(set(groups.tolist()))
    fallback = RowStatistics(mean_stats, dict.fromkeys(labels, _mean), "mean of segment scores", ())
    spec = (metric or score).lower()
    if spec not in CORPUS_METRICS:
        return fallback
    missing = [c for c in _TEXT_COLUMNS if c not in frame.columns]
    if missing:
        named = " or ".join(repr(c) for c in missing) + (" column" if len(missing) == 1 else " columns")
        note = (f"system {score} is the mean of segment scores: the table has no {named}, so the corpus {score} "
                "(from summed statistics) cannot be computed")
        return RowStatistics(mean_stats, fallback.score_of_group, fallback.aggregation, (note,))
    return _corpus(frame, score, spec, groups, labels, values, fallback)


def _corpus(frame, score, spec, groups, labels, values, fallback) -> RowStatistics:
    from ..metrics import score_frame

    columns = [c for c in frame.columns
               if c in ("hypothesis", "source", "lp", "tgt_lang") or str(c).startswith("reference")]
    scored = score_frame(frame[columns].reset_index(drop=True), [spec])
    column = next(iter(scored.signatures))
    recomputed = scored.frame[column].to_numpy(dtype=float)
    stats = scored.stats[column]
    worst = float(np.max(np.abs(recomputed - values))) if len(values) else 0.0
    if stats is None or not worst <= _MATCH_TOLERANCE:
        note = (f"system {score} is the mean of segment scores: re-scoring the texts with {spec} "
                f"({scored.signatures[column]}) does not reproduce column {score!r} (largest difference {worst:.3g}); "
                "it was made with other options")
        return RowStatistics(fallback.stats, fallback.score_of_group, fallback.aggregation, (note,))
    metrics = list(scored.metrics[column].values())
    metric_of_row = scored.group_of_row[column]
    score_of_group = {}
    for label in labels:
        used = np.unique(metric_of_row[groups == label])
        if len(used) != 1:  # a group spanning target languages with different tokenizers: no one corpus score
            note = (f"system {score} is the mean of segment scores: group {label!r} spans target languages "
                    "scored with different tokenizers; group by lp or tgt_lang for corpus scores")
            return RowStatistics(fallback.stats, fallback.score_of_group, fallback.aggregation, (note,))
        score_of_group[label] = metrics[int(used[0])].score_from_stats
    name = {"bleu": "BLEU", "chrf": "chrF", "chrf++": "chrF++", "ter": "TER"}[spec]
    return RowStatistics(stats.astype(np.float64), score_of_group,
                         f"corpus {name} from summed sufficient statistics ({scored.signatures[column]})", ())


def unit_statistics(stats: np.ndarray, system_codes: np.ndarray, units: pd.Series | np.ndarray,
                    n_systems: int) -> np.ndarray:
    """(U, S, k) summed statistics per (unit, system) of one group's rows; units in sorted order of their
    labels (as :mod:`xleval.stats` numbers clusters, so one system's resamples are those of
    ``bootstrap_sums(..., clusters=units)`` with the same generator)."""
    labels = pd.Series(np.asarray(units))
    if labels.isna().any():
        row = int(np.flatnonzero(labels.isna().to_numpy())[0]) + 1
        raise InputError(f"unit column is empty at row {row} of a group; fill it in (e.g. a document id) or drop it")
    _, unit_codes = np.unique(labels.astype(str).to_numpy() if labels.dtype == object else labels.to_numpy(),
                              return_inverse=True)
    n_units = int(unit_codes.max()) + 1 if len(unit_codes) else 0
    flat = unit_codes * n_systems + system_codes
    size = n_units * n_systems
    out = np.column_stack([np.bincount(flat, weights=stats[:, j], minlength=size) for j in range(stats.shape[1])])
    return out.reshape(n_units, n_systems, stats.shape[1])
