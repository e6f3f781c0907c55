"""Soft pairwise accuracy (SPA), the system-level statistic of the WMT24 and WMT25 metrics tasks.

Thompson, Mathur, Deutsch & Finkelstein (2024), "Improving Statistical Significance in Human
Evaluation of Automatic Metrics via Soft Pairwise Accuracy" (WMT24):

    SPA = C(N, 2)^-1  sum_{i<j} (1 - |p^h_ij - p^m_ij|)

where ``p_ij`` is the p-value of a one-sided paired permutation test that system ``i`` is better
than system ``j`` (on the human scores ``h``, on the metric scores ``m``). The test is the one of
mt-metrics-eval's ``pce.py``: for each of ``n_resamples`` permutations, every segment's two scores
are swapped or not (a sign ``+-1`` per segment, the same for every system pair), and ``p_ij`` is the
fraction of permutations whose swapped difference of summed scores is ``>=`` the observed one.

Reproduction. The sign matrix is drawn exactly as ``pce.py`` draws it (numpy
``default_rng(random_state).random((n_resamples, n_segments), float32)`` rounded to 0/1, then
``2m - 1``) and the scores are summed and multiplied in float32 as there, so with the same seed the
p-values are the same numbers (tests check equality with an independent float32 transcription of
the procedure). The human and the metric p-values share that one matrix, as both calls of
``pce.compute_pairwise_p_values`` use seed 4. One matrix serves every system pair and every metric
(:func:`pairwise_permutation_pvalues` once for the humans, then once per metric).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval._base.result import Result, array_field
from xleval._base.seeding import resolve_seed
from xleval.exceptions import InputError
from xleval.stats import _validate as v

__all__ = ["SoftPairwiseAccuracy", "soft_pairwise_accuracy", "pairwise_permutation_pvalues", "spa_from_pvalues"]

#: mt-metrics-eval's ``pce.py`` defaults (WMT24/WMT25)
N_RESAMPLES = 1000
SEED = 4


@dataclass(frozen=True, eq=False)
class SoftPairwiseAccuracy(Result):
    """Soft pairwise accuracy of a metric against human scores (WMT24's system-level statistic).

    ``statistic`` is in [0, 1] (1: the metric's pairwise p-values equal the humans'). The p-value
    matrices (upper triangle: p-value that system i beats system j; NaN elsewhere, as
    mt-metrics-eval returns them) are kept as arrays, not dumped.
    """

    statistic: float
    n_systems: int
    n_segments: int
    n_resamples: int
    random_state: int
    n_pairs: int
    method: str = "soft pairwise accuracy (1 - PCE), paired permutation p-values (mt-metrics-eval pce.py)"
    metric_pvalues: np.ndarray | None = array_field()
    human_pvalues: np.ndarray | None = array_field()


def sign_matrix(n_resamples: int, n_segments: int, random_state: int) -> np.ndarray:
    """The (n_resamples, n_segments) float32 matrix of +-1 of ``pce.py``: ``rng.random`` in float32,
    rounded half to even to 0/1, then ``2m - 1`` (the same draws for the same seed)."""
    rng = np.random.default_rng(random_state)
    signs = rng.random(size=(n_resamples, n_segments), dtype=np.float32)
    np.rint(signs, out=signs)
    signs *= 2.0
    signs -= 1.0
    return signs


def _check_seed(random_state: Any) -> int:
    """The integer seed of the sign matrix (xleval's one resolver: an int as given, None a fresh one, a
    Generator one drawn from it; mt-metrics-eval uses 4)."""
    return resolve_seed(random_state)


def _matrix(scores: Any, name: str) -> np.ndarray:
    arr = v.as_float_array(scores, name, ndim=2, allow_nan=True)
    bad = ~np.isfinite(arr)
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise InputError(
            f"{name} has {int(bad.sum())} missing (NaN/inf) score(s) (first at system row {int(rows[0])}, segment "
            f"column {int(cols[0])}); soft pairwise accuracy needs a complete systems x segments matrix: keep "
            "only the segments scored for every system", argument=name)
    if arr.shape[0] < 2:
        raise InputError(f"{name} has {arr.shape[0]} system(s); soft pairwise accuracy compares pairs of systems "
                         "and needs at least 2", argument=name)
    if arr.shape[1] < 1:
        raise InputError(f"{name} has no segment (shape {arr.shape}); give one column per segment", argument=name)
    return arr


def _pvalues(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """Upper-triangle p-values of ``pce.py`` from a float32 sign matrix, vectorised over the pairs."""
    seg = np.ascontiguousarray(_float32_range(scores), dtype=np.float32)  # C order: pce.py's summation order
    totals = np.sum(seg, axis=1)
    partial = np.matmul(signs, seg.T)  # (n_resamples, n_systems), float32
    n = seg.shape[0]
    out = np.full((n, n), np.nan)
    iu, ju = np.triu_indices(n, 1)
    observed = totals[iu] - totals[ju]
    step = max(1, 2_000_000 // max(len(signs), 1))  # pairs per block: bounds the (resamples x pairs) array
    for start in range(0, iu.size, step):
        sl = slice(start, start + step)
        null = partial[:, iu[sl]] - partial[:, ju[sl]]
        out[iu[sl], ju[sl]] = np.count_nonzero(null >= observed[sl], axis=0) / len(signs)
    return out


def _float32_range(scores: np.ndarray) -> np.ndarray:
    """``scores`` scaled by a power of two into float32's range when they lie far outside it (1e-300 would be 0
    in float32, 1e100 inf). A power of two scales every float32 value and sum exactly, so the p-values are the
    ones of the same scores in range; scores in range are left as they are (pce.py's numbers)."""
    top = float(np.max(np.abs(scores))) if scores.size else 0.0
    if top == 0.0 or 2.0 ** -60 <= top <= 2.0 ** 60:
        return scores
    return np.ldexp(scores, -int(np.frexp(top)[1]))


def pairwise_permutation_pvalues(scores: Any, *, n_resamples: int = N_RESAMPLES,
                                 random_state: int = SEED) -> np.ndarray:
    """(n_systems, n_systems) p-values of paired permutation tests on segment scores (``pce.py``).

    ``scores`` is a complete (n_systems, n_segments) matrix. Entry ``[i, j]`` (i < j) is the
    fraction of the ``n_resamples`` sign permutations whose difference of summed scores is at least
    the observed ``sum(scores[i]) - sum(scores[j])`` (the p-value that system i beats system j);
    the diagonal and lower triangle are NaN, as mt-metrics-eval returns them. Compute the human
    matrix once and pass it to :func:`soft_pairwise_accuracy` (``human_pvalues=``) for each metric.
    """
    arr = _matrix(scores, "scores")
    seed = _check_seed(random_state)
    n_resamples = v.check_n_resamples(n_resamples)
    return _pvalues(arr, sign_matrix(n_resamples, arr.shape[1], seed))


def spa_from_pvalues(human_pvalues: np.ndarray, metric_pvalues: np.ndarray) -> float:
    """``1 - mean |p^h - p^m|`` over the upper triangle (mt-metrics-eval's ``compute_one_minus_pce``)."""
    iu, ju = np.triu_indices(human_pvalues.shape[0], 1)
    return float(1.0 - np.mean(np.abs(human_pvalues[iu, ju] - metric_pvalues[iu, ju])))


def soft_pairwise_accuracy(metric: Any, human: Any, *, n_resamples: int = N_RESAMPLES, random_state: int = SEED,
                           human_pvalues: Any = None) -> SoftPairwiseAccuracy:
    """Soft pairwise accuracy of ``metric`` against ``human``, both (n_systems, n_segments) complete
    matrices of segment scores, rows in the same system order (Thompson et al. 2024; WMT24).

    The p-values of both come from the same ``n_resamples`` sign permutations drawn with
    ``random_state`` (mt-metrics-eval: 1000 and 4). ``human_pvalues``: the human matrix from
    :func:`pairwise_permutation_pvalues` with the same ``n_resamples`` and ``random_state``, to
    compute it once for many metrics.
    """
    m = _matrix(metric, "metric")
    seed = _check_seed(random_state)
    n_resamples = v.check_n_resamples(n_resamples)
    if human_pvalues is None:
        h = _matrix(human, "human")
        if h.shape != m.shape:
            raise InputError(f"metric and human must have the same shape (systems x segments); got {m.shape} and "
                             f"{h.shape}", argument="human")
        signs = sign_matrix(n_resamples, m.shape[1], seed)
        hp = _pvalues(h, signs)
    else:
        hp = np.asarray(human_pvalues, dtype=np.float64)
        if hp.shape != (m.shape[0], m.shape[0]):
            raise InputError(f"human_pvalues must be ({m.shape[0]}, {m.shape[0]}) for {m.shape[0]} systems; got "
                             f"{hp.shape}", argument="human_pvalues")
        signs = sign_matrix(n_resamples, m.shape[1], seed)
    mp = _pvalues(m, signs)
    return SoftPairwiseAccuracy(
        statistic=spa_from_pvalues(hp, mp), n_systems=m.shape[0], n_segments=m.shape[1], n_resamples=n_resamples,
        random_state=seed, n_pairs=m.shape[0] * (m.shape[0] - 1) // 2, metric_pvalues=mp, human_pvalues=hp)
