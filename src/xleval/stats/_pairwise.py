"""Pairwise ranking accuracy with ties: acc23 of Deutsch, Foster & Freitag (2023), "Ties Matter".

For every pair of items (i < j) the human and metric orderings are compared:

    C    concordant          both order the pair the same way (neither tied)
    D    discordant          opposite orders (neither tied)
    T_h  human tie only      human scores equal, metric scores differ by more than epsilon
    T_m  metric tie only     |metric_i - metric_j| <= epsilon, human scores differ
    T_hm tie in both

    acc23 = (C + T_hm) / (C + D + T_h + T_m + T_hm)

Tie calibration picks epsilon among 0 and every |metric difference| to maximise acc23, taking
the smallest best epsilon, as mt-metrics-eval's ``tau_optimization`` does with
``sample_rate=1``. Everything is vectorised over the upper triangle of pair differences
(memory ~ n^2 / 2 pairs: fine up to a few thousand items).
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import _validate as v
from xleval.stats._results import PairwiseAccuracy, TestResult

__all__ = ["pairwise_accuracy", "compare_pairwise_accuracy"]

PAIRS = ("all", "cross", "within")


def pairwise_accuracy(
    metric: Any,
    human: Any,
    *,
    groups: Any = None,
    pairs: str | np.ndarray = "all",
    tie_calibration: bool = True,
    epsilon: float | None = None,
    nan_policy: str = "raise",
) -> PairwiseAccuracy:
    """acc23 pairwise accuracy of ``metric`` against ``human`` (one value per item, e.g. system).

    ``pairs``: ``"all"`` pairs, ``"cross"`` (only pairs of items from different ``groups``, e.g.
    systems of different language pairs), ``"within"`` (same group only), or an (n, n) boolean
    mask whose upper triangle selects the pairs. ``tie_calibration=True`` optimises epsilon;
    a fixed ``epsilon`` (>= 0) disables it; ``tie_calibration=False`` without epsilon uses
    exact ties only (epsilon = 0). ``nan_policy="omit"`` drops items whose human or metric
    score is missing (with a DataQualityWarning), as mt-metrics-eval filters gold Nones.
    """
    m, h, keep, n_all = _inputs(metric, human, nan_policy)
    mask_name, mask = _pair_mask(pairs, groups, n_all)
    mask = mask[np.ix_(keep, keep)]
    iu, ju = np.nonzero(np.triu(mask, k=1))
    if iu.size == 0:
        raise InputError(f"pairwise_accuracy: no pairs to compare with pairs={mask_name!r} "
                         f"({len(m)} items); 'cross' needs items from at least two groups")
    dm, dh = m[iu] - m[ju], h[iu] - h[ju]
    if epsilon is not None:
        if not np.isfinite(epsilon) or epsilon < 0:
            raise InputError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
        eps, calibrated = float(epsilon), False
    else:
        eps, calibrated = (_calibrate(dm, dh) if tie_calibration else 0.0), bool(tie_calibration)
    return _counts(dm, dh, eps, calibrated, mask_name, len(m))


def _inputs(metric: Any, human: Any, nan_policy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    v.check_choice(nan_policy, "nan_policy", ("raise", "omit"))
    allow = nan_policy == "omit"
    m = v.as_float_array(metric, "metric", allow_nan=allow)
    h = v.as_float_array(human, "human", allow_nan=allow)
    v.check_same_length("metric", m, "human", h)
    keep = np.isfinite(m) & np.isfinite(h)
    if not keep.all():
        warnings.warn(f"pairwise_accuracy: {int((~keep).sum())} of {len(m)} items with a missing metric or "
                      "human score left out", DataQualityWarning, stacklevel=3)
    n_all = len(m)
    m, h = m[keep], h[keep]
    v.check_min_size(m, 2, "pairwise_accuracy (items with both scores)")
    return m, h, np.nonzero(keep)[0], n_all


def _pair_mask(pairs: Any, groups: Any, n: int) -> tuple[str, np.ndarray]:
    if isinstance(pairs, str):
        v.check_choice(pairs, "pairs", PAIRS)
        if pairs == "all":
            return pairs, np.ones((n, n), dtype=bool)
        if groups is None:
            raise InputError(f"pairs={pairs!r} needs groups= (one group label per item)")
        codes, _ = v.group_codes(groups, n, "groups")
        same = codes[:, None] == codes[None, :]
        return pairs, (~same if pairs == "cross" else same)
    mask = np.asarray(pairs)
    if mask.shape != (n, n) or mask.dtype != bool:
        raise InputError(f"pairs must be 'all', 'cross', 'within' or a boolean ({n}, {n}) mask; got {mask.shape} {mask.dtype}")
    return "mask", mask


def _calibrate(dm: np.ndarray, dh: np.ndarray) -> float:
    """The smallest epsilon among {0} U {|dm|} that maximises acc23."""
    ad = np.abs(dm)
    order = np.argsort(ad, kind="stable")
    ad = ad[order]
    con = (np.sign(dm) == np.sign(dh))[order] & (ad > 0) & (dh[order] != 0)
    htie = (dh[order] == 0)
    # Raising epsilon to ad[k] turns every pair up to k into a metric tie: it loses its
    # concordance and gains a "tie in both" when humans tie it too.
    gain = np.cumsum(htie.astype(np.int64) - con.astype(np.int64))
    thresholds = np.unique(ad)
    last = np.searchsorted(ad, thresholds, side="right") - 1
    scores = gain[last]
    if thresholds[0] > 0:  # epsilon = 0 adds no ties: gain 0
        thresholds = np.concatenate([[0.0], thresholds])
        scores = np.concatenate([[0], scores])
    return float(thresholds[int(np.argmax(scores))])


def _counts(dm: np.ndarray, dh: np.ndarray, eps: float, calibrated: bool, pairs: str, n: int) -> PairwiseAccuracy:
    mtie = np.abs(dm) <= eps
    htie = dh == 0
    both = int(np.count_nonzero(mtie & htie))
    t_h = int(np.count_nonzero(htie & ~mtie))
    t_m = int(np.count_nonzero(mtie & ~htie))
    con = int(np.count_nonzero(~mtie & ~htie & (np.sign(dm) == np.sign(dh))))
    total = int(dm.size)
    dis = total - con - both - t_h - t_m
    return PairwiseAccuracy(
        estimate=(con + both) / total, n=n, n_pairs=total, concordant=con, discordant=dis,
        ties_human=t_h, ties_metric=t_m, ties_both=both, epsilon=eps, tie_calibration=calibrated, pairs=pairs,
    )


def compare_pairwise_accuracy(
    metric_a: Any,
    metric_b: Any,
    human: Any,
    *,
    groups: Any = None,
    pairs: str | np.ndarray = "all",
    tie_calibration: bool = True,
    alternative: str = "two-sided",
    n_resamples: int = 1000,
    random_state: Any = None,
) -> TestResult:
    """Paired permutation test of ``acc23(metric_b) - acc23(metric_a)`` against the same humans.

    mt-metrics-eval's PERM-BOTH (PermutationSigDiff): both metrics are z-scored over the items
    (a monotone map, so neither accuracy changes), then each item's two scores are swapped with
    probability 1/2 and both accuracies recomputed (tie calibration redone per resample when
    ``tie_calibration``). ``statistic`` is the observed difference; ``alternative="greater"``
    tests whether ``metric_b`` (e.g. calibrated scores) orders the pairs better than
    ``metric_a`` (raw). Vectorised over resamples and pairs.
    """
    from xleval.stats._permutation import permutation_test_paired  # local: avoids an import cycle

    a = v.as_float_array(metric_a, "metric_a")
    b = v.as_float_array(metric_b, "metric_b")
    h = v.as_float_array(human, "human")
    v.check_same_length("metric_a", a, "human", h)
    v.check_same_length("metric_b", b, "human", h)
    v.check_min_size(h, 2, "human")
    mask_name, mask = _pair_mask(pairs, groups, len(h))
    iu, ju = np.nonzero(np.triu(mask, k=1))
    if iu.size == 0:
        raise InputError(f"compare_pairwise_accuracy: no pairs with pairs={mask_name!r}")
    dh = h[iu] - h[ju]

    def delta(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
        out = _acc_rows(y2[:, iu] - y2[:, ju], dh, tie_calibration) - _acc_rows(x2[:, iu] - x2[:, ju], dh, tie_calibration)
        return out if np.ndim(x) == 2 else out[0]

    res = permutation_test_paired(_zscore(a), _zscore(b), delta, alternative=alternative,
                                  n_resamples=n_resamples, random_state=random_state)
    return replace(res, method=f"permutation-paired-swap (PERM-BOTH) acc23 pairs={mask_name}")


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


def _acc_rows(dm: np.ndarray, dh: np.ndarray, calibrate: bool) -> np.ndarray:
    """acc23 for each row of pair differences ``dm`` (B, P) against fixed human differences
    ``dh`` (P,), with the best epsilon per row when ``calibrate`` (else exact ties only)."""
    htie = dh == 0
    con = (np.sign(dm) == np.sign(dh)) & (dm != 0) & ~htie
    n_pairs = dm.shape[1]
    if not calibrate:
        return (con.sum(axis=1) + ((dm == 0) & htie).sum(axis=1)) / n_pairs
    ad = np.abs(dm)
    order = np.argsort(ad, axis=1, kind="stable")
    ad = np.take_along_axis(ad, order, axis=1)
    gain = np.cumsum(htie[order].astype(np.int64) - np.take_along_axis(con, order, axis=1), axis=1)
    last_of_value = np.concatenate([ad[:, 1:] != ad[:, :-1], np.ones((len(ad), 1), dtype=bool)], axis=1)
    best = np.where(last_of_value, gain, np.iinfo(np.int64).min).max(axis=1)
    best = np.where(ad[:, 0] > 0, np.maximum(best, 0), best)  # epsilon = 0 adds no tie when no diff is 0
    return (con.sum(axis=1) + best) / n_pairs
