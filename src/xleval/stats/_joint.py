"""Several items from the same bootstrap resamples, and the intervals of their ranks.

A leaderboard compares the systems of one test set: they were scored on the same documents, so
their uncertainties are not independent. :func:`bootstrap_sums_joint` draws resamples of the
shared units (documents or segments) once and computes every item's statistic from each resample
(counts @ per-unit sums, as :func:`bootstrap_sums` does for one item), so item ``j``'s column of
the distribution is exactly what :func:`bootstrap_sums` gives for item ``j`` with the same seed.
:func:`rank_intervals` ranks the items within each resample and reports percentile intervals of
the ranks (the "rank with uncertainty" of leaderboards such as WMT's clusters or Chatbot Arena's).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xleval._base.result import Result, array_field
from xleval._base.seeding import make_rng
from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._bootstrap import _check_common, _resampled_sums, _Units
from xleval.stats._resample import percentile_bounds

__all__ = ["JointEstimate", "RankIntervals", "bootstrap_sums_joint", "rank_intervals"]


@dataclass(frozen=True, eq=False)
class JointEstimate(Result):
    """Estimates of ``m`` items from shared bootstrap resamples.

    ``estimate``, ``ci_low``, ``ci_high``: arrays of shape (m,) (percentile intervals at
    ``level``); ``n_units``: resampling units; ``distribution``: (n_resamples, m), row b holds
    every item's value in resample b (kept on the object, left out of ``to_dict()``).
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    level: float
    n_units: int
    method: str
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())
    distribution: np.ndarray = array_field()  # always set by bootstrap_sums_joint


@dataclass(frozen=True, eq=False)
class RankIntervals(Result):
    """Ranks of ``m`` items (1 = best; tied items share the best rank of their tie) and the
    ``level`` percentile interval of each item's rank over the resamples (integers: the lower
    bound rounds down, the upper bound up, so the interval never under-covers by interpolation)."""

    rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    level: float
    higher_is_better: bool
    n_resamples: int
    notes: tuple[str, ...] = field(default=())


def bootstrap_sums_joint(unit_stats: Any, score_from_stats: Callable[[np.ndarray], np.ndarray], *,
                         n_resamples: int = 1000, level: float = 0.95, random_state: Any = None) -> JointEstimate:
    """Bootstrap ``m`` statistics that are functions of summed sufficient statistics, all from the
    same resamples of the units.

    ``unit_stats`` has shape (U, m, k): for each resampling unit (a document, or a segment that
    every system translated), each item's summed statistics (zeros where an item has no rows in
    that unit). ``score_from_stats`` maps summed statistics of shape (n, k) to n scores: a metric's
    ``score_from_stats`` (corpus BLEU/chrF), or ``lambda s: s[:, 0] / s[:, 1]`` for a mean from (sum, count).
    An item whose resample holds none of its rows gets NaN in that resample (counted in ``notes``).
    """
    arr = v.as_float_array(unit_stats, "unit_stats", ndim=3)
    v.check_min_size(arr, 1, "unit_stats (units)")
    level, _, n_resamples = _check_common(level, "percentile", n_resamples)
    n_units, m, k = arr.shape
    if m == 0 or k == 0:
        raise InputError(f"unit_stats must hold at least one item and one statistic; got shape {arr.shape}")
    units = _Units(n_units, None, None)
    rng, seed = make_rng(random_state)
    flat = arr.reshape(n_units, m * k)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.asarray(score_from_stats(arr.sum(axis=0)), dtype=float).reshape(m)
        dist = np.concatenate([
            np.asarray(score_from_stats(_resampled_sums(idx, flat).reshape(-1, k)), dtype=float).reshape(-1, m)
            for idx in units.chunks(rng, n_resamples)])
    notes = list(units.notes)
    undefined = ~np.isfinite(dist)
    if undefined.any():
        notes.append(f"{int(undefined.any(axis=1).sum())} of {n_resamples} resamples left some item without a "
                     "defined value (no rows of that item drawn); those values were left out of its interval")
    low, high = percentile_bounds(dist, level)
    return JointEstimate(point, low, high, level, n_units, "bootstrap-sums-joint-percentile", n_resamples, seed,
                         tuple(notes), dist)


def rank_intervals(estimate: Any, distribution: Any, *, higher_is_better: bool = True,
                   level: float = 0.95) -> RankIntervals:
    """Ranks of the items (``estimate``, shape (m,)) and percentile intervals of their ranks over
    the resamples (``distribution``, shape (B, m), e.g. :attr:`JointEstimate.distribution`).

    In each resample items are ranked by value (1 = best; ties share the best rank; an undefined
    value ranks after every defined one). The interval is ``[q_low, q_high]`` of an item's ranks with
    ``q_low`` the lower ``(1 - level) / 2`` quantile taken downwards and ``q_high`` the upper one
    taken upwards. For distributions drawn independently per stratum (e.g. per language pair),
    concatenate their columns: every row is then one joint resample of all items.
    """
    est = v.as_float_array(estimate, "estimate", allow_nan=True)
    dist = v.as_float_array(distribution, "distribution", ndim=2, allow_nan=True)
    if dist.shape[1] != est.shape[0]:
        raise InputError(f"distribution must have one column per item ({est.shape[0]}); got shape {dist.shape}")
    level = v.check_level(level)
    alpha = (1.0 - level) / 2.0
    ranks = _ranks(dist, higher_is_better)
    low = np.quantile(ranks, alpha, axis=0, method="lower")
    high = np.quantile(ranks, 1.0 - alpha, axis=0, method="higher")
    notes = []
    if dist.shape[0] < 100:
        notes.append(f"unreliable: rank intervals from only {dist.shape[0]} resamples")
    point = _ranks(est[None, :], higher_is_better)[0]
    return RankIntervals(point.astype(int), low.astype(int), high.astype(int), level, bool(higher_is_better),
                         int(dist.shape[0]), tuple(notes))


def _ranks(values: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Per row, 1 + the number of items strictly better (ties share the best rank, NaN ranks last)."""
    from scipy.stats import rankdata

    key = np.where(np.isfinite(values), -values if higher_is_better else values, np.inf)
    return rankdata(key, method="min", axis=1)
