"""Pairwise Difference Pearson (PDP): Pearson r over the within-item differences of system scores.

For every item (a source segment) and every pair of systems whose outputs of it have a human score, the
metric's difference ``m_i - m_j`` is paired with the humans' ``h_i - h_j``; PDP is Pearson's r over all those
pairs, pooled over items. Both orders of each pair (and the zero self-differences) enter mt-metrics-eval's
computation (``stats.AverageCorrelation(scipy.stats.pearsonr, average_by='item', pdp=True)``), so the
differences are centred at zero and r is ``sum dm dh / sqrt(sum dm^2 sum dh^2)`` over the pairs i < j: the
number computed here. Differences cancel each segment's difficulty and each metric's per-segment offset, so
PDP is robust to segment and system bias (EMNLP 2025, "Pairwise Difference Pearson").

The CI resamples items with replacement (an item's pairs share its difficulty, so they are not independent):
the per-item sums are summed with the bootstrap counts, one matrix product, percentile interval.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._estimate import estimate_from_distribution
from xleval.stats._pairwise import _unit_pairs
from xleval.stats._results import CorrelationResult

__all__ = ["pairwise_difference_pearson"]


def pairwise_difference_pearson(metric: Any, human: Any, items: Any, *, n_resamples: int = 1000,
                                level: float = 0.95, random_state: Any = 0) -> CorrelationResult:
    """PDP of ``metric`` against ``human`` (one value per output: item ``items[k]``, some system): Pearson r of
    the within-item pairwise differences (module docstring). Rows with a missing (NaN) metric or human score
    are left out. ``n``: the pairs of outputs; CI: items resampled (``n_resamples``, ``random_state``)."""
    m = v.as_float_array(metric, "metric", allow_nan=True)
    h = v.as_float_array(human, "human", allow_nan=True)
    v.check_same_length("metric", m, "human", h)
    if len(np.asarray(items)) != len(m):
        raise InputError(f"items has {len(np.asarray(items))} values for {len(m)} scores; give one item per score",
                         argument="items")
    level = v.check_probability(level, "level")
    n_resamples = v.check_n_resamples(n_resamples)
    sums, n_pairs = pdp_sums(m, h, items)
    rng, seed = v.make_rng(random_state)
    return pdp_result(sums, n_pairs, item_counts(rng, len(sums), n_resamples), level, seed)


def pdp_sums(m: np.ndarray, h: np.ndarray, items: Any) -> tuple[np.ndarray, int]:
    """Per item (with two or more outputs scored by both): the sums of dm dh, dm^2, dh^2 over its pairs; and the
    number of pairs."""
    keep = np.isfinite(m) & np.isfinite(h)
    codes, _ = pd.factorize(np.asarray(items)[keep])
    try:
        layout = _unit_pairs(codes)
    except InputError:
        raise InputError("no item has two outputs with both scores: PDP compares the systems' outputs of one item",
                         argument="items") from None
    mk, hk = m[keep], h[keep]
    dm, dh = mk[layout.iu] - mk[layout.ju], hk[layout.iu] - hk[layout.ju]
    sums = np.column_stack([np.bincount(layout.unit, w, layout.n_units) for w in (dm * dh, dm * dm, dh * dh)])
    return sums, int(dm.size)


def item_counts(rng: Any, k: int, n_resamples: int) -> np.ndarray:
    """(n_resamples, k) bootstrap counts of k items (each resample draws k with replacement). ``rng``: a
    Generator, or a seed for one (an int or a list of ints: numpy's ``default_rng``)."""
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    draws = rng.integers(0, k, size=(n_resamples, k))
    flat = (draws + (np.arange(n_resamples) * k)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * k).reshape(n_resamples, k).astype(np.float64)


def pdp_result(sums: np.ndarray, n_pairs: int, counts: np.ndarray, level: float, seed: int | None
               ) -> CorrelationResult:
    """The PDP, its bootstrap distribution (``counts @ sums``) and percentile CI."""
    r = float(_r(sums.sum(axis=0)[None, :])[0])
    dist = _r(counts @ sums)
    notes: tuple[str, ...] = ()
    low = high = float("nan")
    if not np.isfinite(r):
        notes = ("the metric's or the human's differences are all zero: no correlation",)
    else:
        finite = dist[np.isfinite(dist)]
        if finite.size > 1:
            est = estimate_from_distribution(r, finite, n=len(sums), level=level, random_state=seed)
            low, high = float(est.ci_low), float(est.ci_high)
    return CorrelationResult(estimate=r, ci_low=low, ci_high=high, level=level, p_value=float("nan"), n=n_pairs,
                             method="pairwise difference pearson (by item)",
                             ci_method="bootstrap over items (percentile)", n_resamples=len(counts),
                             random_state=seed, notes=notes, distribution=dist)


def _r(s: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        den = np.sqrt(s[:, 1] * s[:, 2])
        return np.where(den > 0, s[:, 0] / np.where(den > 0, den, 1.0), np.nan)
