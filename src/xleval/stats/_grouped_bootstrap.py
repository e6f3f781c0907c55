"""Bootstrap of items (systems) resampled within their groups, as resample *counts*.

A resample is a vector of how often each item is drawn, items drawn with replacement within their
group (stratified: every group keeps its size). Any statistic that is a weighted sum over items
or pairs of items is then one matrix product per batch of resamples, and several statistics
computed with the same counts are paired (their differences have a paired bootstrap CI).

Pairwise accuracy under a resample counts the pair (i, j) ``w_i * w_j`` times and never pairs an
item with its own copy; epsilon (tie calibration) stays at the value chosen on the full sample.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from xleval._base.seeding import make_rng
from xleval.stats import _validate as v
from xleval.stats._estimate import estimate_from_distribution
from xleval.stats._pairwise import pairwise_accuracy
from xleval.stats._results import PairwiseAccuracy

__all__ = ["stratified_resample_counts", "pair_indices", "pairs_correct", "resampled_pair_accuracy",
           "resampled_pair_sums", "bootstrap_pairwise_accuracy", "resampled_pearson"]


def stratified_resample_counts(groups: Any, n_resamples: int = 1000, random_state: Any = None) -> np.ndarray:
    """``(n_resamples, n)`` counts: items resampled with replacement within each group."""
    groups = np.asarray(groups)
    n_resamples = v.check_n_resamples(n_resamples)
    rng, _ = make_rng(random_state)
    n = len(groups)
    counts = np.zeros((n_resamples, n))
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        draws = idx[rng.integers(0, len(idx), (n_resamples, len(idx)))]
        np.add.at(counts, (np.repeat(np.arange(n_resamples), len(idx)), draws.ravel()), 1.0)
    return counts


def pair_indices(groups: np.ndarray, pairs: str = "cross") -> tuple[np.ndarray, np.ndarray]:
    """Upper-triangle item pairs: all of them, or only those from different groups (``cross``)."""
    iu, ju = np.triu_indices(len(groups), k=1)
    if pairs == "cross":
        keep = groups[iu] != groups[ju]
        iu, ju = iu[keep], ju[keep]
    return iu, ju


def pairs_correct(metric: np.ndarray, human: np.ndarray, iu: np.ndarray, ju: np.ndarray, epsilon: float) -> np.ndarray:
    """1.0 where a pair is ordered as humans order it (acc23: concordant, or tied in both), else 0.0."""
    dm, dh = metric[iu] - metric[ju], human[iu] - human[ju]
    mtie, htie = np.abs(dm) <= epsilon, dh == 0
    return ((~mtie & ~htie & (np.sign(dm) == np.sign(dh))) | (mtie & htie)).astype(float)


#: largest n x n matrix (n items) :func:`resampled_pair_sums` builds; beyond it, blocks of the (B, P) weights
_DENSE_LIMIT = 16_000_000
_BLOCK_CELLS = 20_000_000  # (resamples x pairs) weights per block on the other path


def resampled_pair_sums(values: np.ndarray, counts: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    """``sum_p counts[b, iu[p]] * counts[b, ju[p]] * values[r, p]`` for every resample ``b`` of ``counts`` (B, n)
    and row ``r`` of ``values`` (R, P; one row may be given as (P,)): a (B, R) array.

    Computed as the quadratic form ``c_b' V_r c_b``, ``V_r`` the (n, n) matrix holding row ``r`` at ``(iu, ju)``,
    so the (B, P) weight matrix is never built (the report on WMT25's 31 pairs has 1,066 systems, 550,000 cross
    pairs: 4.4 GB of weights at B = 1000, and most of the report's time); the same sums, exact where the values
    are integers (pair outcomes, counts). Past :data:`_DENSE_LIMIT` items, blocks of resamples."""
    rows = np.atleast_2d(np.asarray(values, dtype=np.float64))
    cf = np.asarray(counts, dtype=np.float64)
    n = cf.shape[1]
    out = np.empty((len(cf), len(rows)))
    if n * n <= _DENSE_LIMIT:
        matrix = np.zeros((n, n))
        for r, row in enumerate(rows):
            matrix[iu, ju] = row  # upper-triangle pairs: each (i, j) once
            out[:, r] = np.einsum("bi,bi->b", cf @ matrix, cf)
        return out
    step = max(1, _BLOCK_CELLS // max(len(iu), 1))
    for start in range(0, len(cf), step):
        block = cf[start:start + step]
        out[start:start + step] = (block[:, iu] * block[:, ju]) @ rows.T
    return out


def resampled_pair_accuracy(correct: np.ndarray, counts: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    """Accuracy of fixed per-pair outcomes ``correct`` under each resample of ``counts`` (B, n)."""
    sums = resampled_pair_sums(np.vstack([correct, np.ones(len(iu))]), counts, iu, ju)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[:, 0] / sums[:, 1]


def bootstrap_pairwise_accuracy(metric: np.ndarray, human: np.ndarray, groups: np.ndarray, pairs: str,
                                counts: np.ndarray, level: float, seed: int | None,
                                tie_calibration: bool = True) -> tuple[PairwiseAccuracy, np.ndarray]:
    """acc23 of ``metric`` vs ``human`` with a percentile CI from the resample ``counts`` (B, n), and
    the resampled distribution (to pair with other scores drawn with the same counts)."""
    point = pairwise_accuracy(metric, human, groups=groups, pairs=pairs, tie_calibration=tie_calibration)
    iu, ju = pair_indices(np.asarray(groups), pairs)
    dist = resampled_pair_accuracy(pairs_correct(metric, human, iu, ju, point.epsilon), counts, iu, ju)
    how = "CI: items resampled within groups (percentile), epsilon fixed at the full-sample value"
    ci = estimate_from_distribution(point.estimate, dist, n=len(metric), level=level, random_state=seed, notes=(how,))
    result = replace(point, ci_low=ci.ci_low, ci_high=ci.ci_high, level=level, n_resamples=ci.n_resamples,
                     random_state=seed, notes=point.notes + ci.notes, distribution=dist)
    return result, dist


def resampled_pearson(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pearson r of ``x`` and ``y`` under each resample of ``counts`` (B, n) (a resample's r is the
    count-weighted r). ``x`` and ``y`` are centred first (r does not change under a shift): the one-pass
    moments below would otherwise lose every digit of scores far from zero with a small spread (system scores
    around 1e6 that differ by 1e-3 gave inf and NaN); r is kept in [-1, 1] (rounding put it at 1 + 2e-16)."""
    x = np.asarray(x, dtype=float) - np.mean(x)
    y = np.asarray(y, dtype=float) - np.mean(y)
    total = counts.sum(axis=1)
    mx, my = (counts @ x) / total, (counts @ y) / total
    sxx = (counts @ (x * x)) / total - mx**2
    syy = (counts @ (y * y)) / total - my**2
    sxy = (counts @ (x * y)) / total - mx * my
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)


def groupwise_counts(sizes: Any, n_resamples: int, random_state: Any = None) -> list[np.ndarray]:
    """For groups of these sizes, in order, ``(n_resamples, size)`` counts of each group's items resampled
    with replacement (a multinomial draw per group from one generator: the span statistics of ``meta``)."""
    rng, _ = make_rng(random_state)
    return [rng.multinomial(int(n), np.full(int(n), 1.0 / int(n)), size=n_resamples).astype(float)
            if n_resamples else np.zeros((0, int(n))) for n in sizes]

