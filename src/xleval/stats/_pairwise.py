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

Averaging (mt-metrics-eval's ``average_by``): ``"none"`` pools the pairs; ``"group"`` /
``"item"`` compute acc23 over the pairs inside each group of ``groups`` / each item of ``items``
(e.g. the systems' outputs of one segment) and average the groups' accuracies, with one epsilon
chosen to maximise that average (``KendallWithTiesOpt(average_by=...)``; WMT23's segment-level
accuracy averages by item). Groups without a pair (one scored row) are left out, as there.

Comparing two metrics (:func:`compare_pairwise_accuracy`): ``resample="scores"`` is PERM-BOTH
(``PermutationSigDiff``: swap the two metrics' scores of an item, recalibrate); ``"pairs"`` is the
pair-swap test WMT23 used (``PairwisePermutationSigDiff``: swap the two metrics' verdicts on a pair,
each metric keeping the epsilon calibrated on the data). The default alternative is ``greater``
(H1: ``metric_b`` orders the pairs better), the one-sided test WMT reports.
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import _validate as v
from xleval.stats._resampling import FRESH_RESAMPLING, Resampling
from xleval.stats._results import PairwiseAccuracy, TestResult

__all__ = ["pairwise_accuracy", "compare_pairwise_accuracy"]

PAIRS = ("all", "cross", "within")
AVERAGE_BY = ("none", "group", "item")
RESAMPLE = ("scores", "pairs")
# pair-difference entries per vectorised block when resamples are scored (bounds memory)
_BLOCK = 4_000_000


def pairwise_accuracy(
    metric: Any,
    human: Any,
    *,
    groups: Any = None,
    pairs: str | np.ndarray = "all",
    average_by: str = "none",
    items: Any = None,
    tie_calibration: bool = True,
    epsilon: float | None = None,
    nan_policy: str = "raise",
) -> PairwiseAccuracy:
    """acc23 pairwise accuracy of ``metric`` against ``human`` (one value per row: a system, or a
    system's output of one segment).

    ``pairs``: ``"all"`` pairs, ``"cross"`` (only pairs of rows from different ``groups``, e.g.
    systems of different language pairs), ``"within"`` (same group only), or an (n, n) boolean
    mask whose upper triangle selects the pairs. ``average_by``: ``"none"`` (pool the pairs),
    ``"group"`` (acc23 within each group of ``groups``, averaged over groups) or ``"item"`` (within
    each item of ``items``, e.g. segment ids, averaged over items: WMT23's segment-level accuracy);
    averaging needs ``pairs="all"``. ``tie_calibration=True`` optimises epsilon (one epsilon for the
    average); a fixed ``epsilon`` (>= 0) disables it; ``tie_calibration=False`` without epsilon uses
    exact ties only (epsilon = 0). ``nan_policy="omit"`` drops rows whose human or metric score is
    missing (with a DataQualityWarning), as mt-metrics-eval filters gold Nones.
    """
    v.check_choice(average_by, "average_by", AVERAGE_BY)
    if average_by != "none":
        units = _units(average_by, groups, items, pairs)
        m, h, keep, n_all = _inputs(metric, human, nan_policy)
        codes, _ = v.group_codes(units, n_all, "groups" if average_by == "group" else "items")
        layout = _unit_pairs(codes[keep])
        dm, dh = m[layout.iu] - m[layout.ju], h[layout.iu] - h[layout.ju]
        eps, calibrated = _epsilon(epsilon, tie_calibration, dm, dh, layout.weights)
        return _counts(dm, dh, eps, calibrated, "all", len(m), layout, average_by)
    m, h, keep, n_all = _inputs(metric, human, nan_policy)
    mask_name, mask = _pair_mask(pairs, groups, n_all)
    mask = mask[np.ix_(keep, keep)]
    iu, ju = np.nonzero(np.triu(mask, k=1))
    if iu.size == 0:
        raise InputError(f"pairwise_accuracy: no pairs to compare with pairs={mask_name!r} "
                         f"({len(m)} items); 'cross' needs items from at least two groups")
    dm, dh = m[iu] - m[ju], h[iu] - h[ju]
    eps, calibrated = _epsilon(epsilon, tie_calibration, dm, dh, None)
    return _counts(dm, dh, eps, calibrated, mask_name, len(m))


def _epsilon(epsilon: float | None, tie_calibration: bool, dm: np.ndarray, dh: np.ndarray,
             weights: np.ndarray | None) -> tuple[float, bool]:
    if epsilon is not None:
        if not np.isfinite(epsilon) or epsilon < 0:
            raise InputError(f"epsilon must be a finite number >= 0; got {epsilon!r}")
        return float(epsilon), False
    return (_calibrate(dm, dh, weights) if tie_calibration else 0.0), bool(tie_calibration)


def _units(average_by: str, groups: Any, items: Any, pairs: Any) -> Any:
    units = groups if average_by == "group" else items
    if units is None:
        need = "groups=" if average_by == "group" else "items= (e.g. the segment id of each row)"
        raise InputError(f"average_by={average_by!r} needs {need}")
    if not (isinstance(pairs, str) and pairs == "all"):
        raise InputError(f"average_by={average_by!r} compares the pairs inside each group; use pairs='all'")
    return units


class _Layout:
    """The pairs inside each unit (group or item): row indices ``iu < ju``, the unit of each pair,
    and each pair's weight ``1 / (units * pairs in its unit)`` (the macro average is a weighted sum)."""

    def __init__(self, iu: np.ndarray, ju: np.ndarray, unit: np.ndarray, n_units: int, per_unit: np.ndarray):
        self.iu, self.ju, self.unit, self.n_units, self.per_unit = iu, ju, unit, n_units, per_unit
        self.weights = 1.0 / (n_units * per_unit[unit]) if n_units else np.zeros(0)


def _unit_pairs(codes: np.ndarray) -> _Layout:
    """All pairs of rows of the same unit, vectorised per unit size."""
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=int(codes.max()) + 1 if len(codes) else 0)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(sizes) else np.zeros(0, dtype=np.int64)
    iu_parts, ju_parts, unit_parts = [], [], []
    for size in np.unique(sizes[sizes >= 2]):
        units = np.flatnonzero(sizes == size)
        a, b = np.triu_indices(int(size), k=1)
        base = starts[units][:, None]
        iu_parts.append(order[(base + a[None, :]).ravel()])
        ju_parts.append(order[(base + b[None, :]).ravel()])
        unit_parts.append(np.repeat(units, len(a)))
    if not iu_parts:
        raise InputError("pairwise_accuracy: no group/item has two rows with both scores; nothing to compare")
    iu, ju, unit = np.concatenate(iu_parts), np.concatenate(ju_parts), np.concatenate(unit_parts)
    # keep the rows' order inside a pair (i < j), as the pooled computation does
    swap = iu > ju
    iu, ju = np.where(swap, ju, iu), np.where(swap, iu, ju)
    used, dense = np.unique(unit, return_inverse=True)
    per_unit = np.bincount(dense).astype(np.float64)
    return _Layout(iu, ju, dense, len(used), per_unit)


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
        raise InputError(f"pairs must be 'all', 'cross', 'within' or a boolean ({n}, {n}) mask; "
                         f"got {mask.shape} {mask.dtype}")
    return "mask", mask


def _calibrate(dm: np.ndarray, dh: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The smallest epsilon among {0} U {|dm|} that maximises acc23 (or, with ``weights``, the
    weighted sum that is the average of the units' acc23)."""
    if weights is None and FEW_TIES * int(np.count_nonzero(dh == 0)) < dh.size:
        return _calibrate_few_ties(dm, dh)
    ad = np.abs(dm)
    order = np.argsort(ad, kind="stable")
    ad = ad[order]
    con = (np.sign(dm) == np.sign(dh))[order] & (ad > 0) & (dh[order] != 0)
    htie = (dh[order] == 0)
    # Raising epsilon to ad[k] turns every pair up to k into a metric tie: it loses its
    # concordance and gains a "tie in both" when humans tie it too.
    change = htie.astype(np.int64) - con.astype(np.int64)
    gain = np.cumsum(change) if weights is None else np.cumsum(change * weights[order])
    thresholds = np.unique(ad)
    last = np.searchsorted(ad, thresholds, side="right") - 1
    scores = gain[last]
    if thresholds[0] > 0:  # epsilon = 0 adds no ties: gain 0
        thresholds = np.concatenate([[0.0], thresholds])
        scores = np.concatenate([[0], scores])
    return float(thresholds[int(np.argmax(scores))])


def _calibrate_few_ties(dm: np.ndarray, dh: np.ndarray) -> float:
    """:func:`_calibrate` (unweighted) where few human pairs tie, without sorting every pair: the smallest of
    :func:`_tie_gains`' candidates with the best gain is the smallest best epsilon among all |differences|
    (between two candidates an epsilon only loses concordant pairs)."""
    ad = np.abs(dm)
    candidates, gains = _tie_gains(ad[dh == 0], ad[_concordant(dm, dh)])
    return float(candidates[int(np.argmax(gains))])


def _counts(dm: np.ndarray, dh: np.ndarray, eps: float, calibrated: bool, pairs: str, n: int,
            layout: _Layout | None = None, average_by: str = "none") -> PairwiseAccuracy:
    mtie = np.abs(dm) <= eps
    htie = dh == 0
    good = (mtie & htie) | (~mtie & ~htie & (np.sign(dm) == np.sign(dh)))
    both = int(np.count_nonzero(mtie & htie))
    t_h = int(np.count_nonzero(htie & ~mtie))
    t_m = int(np.count_nonzero(mtie & ~htie))
    con = int(np.count_nonzero(good)) - both
    total = int(dm.size)
    dis = total - con - both - t_h - t_m
    if layout is None:
        estimate, units, method = (con + both) / total, None, "acc23"
    else:  # the macro average over units of (C + T_hm) / pairs
        per_unit = np.bincount(layout.unit, weights=good, minlength=layout.n_units) / layout.per_unit
        estimate, units = float(per_unit.mean()), layout.n_units
        method = f"acc23 averaged by {average_by} ({units} {average_by}s with pairs)"
    return PairwiseAccuracy(
        estimate=estimate, n=n, n_pairs=total, concordant=con, discordant=dis,
        ties_human=t_h, ties_metric=t_m, ties_both=both, epsilon=eps, tie_calibration=calibrated, pairs=pairs,
        method=method, average_by=average_by, n_groups=units,
    )


def compare_pairwise_accuracy(
    metric_a: Any,
    metric_b: Any,
    human: Any,
    *,
    groups: Any = None,
    pairs: str | np.ndarray = "all",
    average_by: str = "none",
    items: Any = None,
    tie_calibration: bool = True,
    resample: str = "scores",
    alternative: str = "greater",
    resampling: Resampling = FRESH_RESAMPLING,
    nan_policy: str = "raise",
) -> TestResult:
    """Paired permutation test of ``acc23(metric_b) - acc23(metric_a)`` against the same humans.

    ``resample="scores"``: mt-metrics-eval's PERM-BOTH (``PermutationSigDiff``): both metrics are
    z-scored over the rows (a monotone map, so neither accuracy changes), then each row's two
    scores are swapped with probability 1/2 and both accuracies recomputed (tie calibration redone
    per resample when ``tie_calibration``). ``resample="pairs"``: the pair-swap test WMT23 used for
    segment-level accuracy (``PairwisePermutationSigDiff``): each metric's epsilon is calibrated
    once on the data, then each pair's two verdicts (concordant / tied / ...) are swapped with
    probability 1/2. ``average_by``/``items`` as in :func:`pairwise_accuracy`.

    ``alternative="greater"`` (default, WMT's one-sided test) tests whether ``metric_b`` orders the
    pairs better than ``metric_a``; ``"two-sided"`` and ``"less"`` are available; the result's
    ``alternative`` and ``method`` name the test, and its note states the p-value convention
    ``(1 + #{T* >= T}) / (1 + B)`` (mt-metrics-eval reports ``#{T* >= T} / B``). ``resampling``
    (:class:`~xleval.stats.Resampling`; default: a fresh seed): its ``n_resamples`` permutations and
    ``random_state`` (a test has no interval: its ``level`` is not read).
    """
    n_resamples, random_state = resampling.n_resamples, resampling.random_state
    from xleval.stats._permutation import permutation_test_paired  # local: avoids an import cycle

    v.check_choice(resample, "resample", RESAMPLE)
    v.check_choice(average_by, "average_by", AVERAGE_BY)
    allow = v.check_choice(nan_policy, "nan_policy", ("raise", "omit")) == "omit"
    a = v.as_float_array(metric_a, "metric_a", allow_nan=allow)
    b = v.as_float_array(metric_b, "metric_b", allow_nan=allow)
    h = v.as_float_array(human, "human", allow_nan=allow)
    v.check_same_length("metric_a", a, "human", h)
    v.check_same_length("metric_b", b, "human", h)
    v.check_min_size(h, 2, "human")
    keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
    if not keep.all():
        warnings.warn(f"compare_pairwise_accuracy: {int((~keep).sum())} of {len(h)} rows with a missing score left out",
                      DataQualityWarning, stacklevel=2)
    if average_by != "none":
        units = _units(average_by, groups, items, pairs)
        codes, _ = v.group_codes(units, len(h), "groups" if average_by == "group" else "items")
        units_layout = _unit_pairs(codes[keep])
        layout: _Layout | None = units_layout
        iu, ju, mask_name = units_layout.iu, units_layout.ju, f"all, averaged by {average_by}"
    else:
        mask_name, mask = _pair_mask(pairs, groups, len(h))
        iu, ju = np.nonzero(np.triu(mask[np.ix_(keep, keep)], k=1))
        layout = None
    a, b, h = a[keep], b[keep], h[keep]
    if iu.size == 0:
        raise InputError(f"compare_pairwise_accuracy: no pairs with pairs={mask_name!r}")
    dh = h[iu] - h[ju]
    weights = layout.weights if layout is not None else None
    sided = {"greater": "one-sided, H1: acc(b) > acc(a)", "less": "one-sided, H1: acc(b) < acc(a)",
             "two-sided": "two-sided"}.get(alternative, alternative)
    if resample == "pairs":
        res = _pair_swap(a, b, iu, ju, dh, weights, tie_calibration, alternative, n_resamples, random_state)
        method = f"pair-swap permutation (PairwisePermutationSigDiff) acc23 pairs={mask_name}, {sided}"
    else:
        za, zb = _zscore(a), _zscore(b)

        def delta(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
            x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
            out = np.concatenate([
                _acc_rows(y2[r][:, iu] - y2[r][:, ju], dh, tie_calibration, weights)
                - _acc_rows(x2[r][:, iu] - x2[r][:, ju], dh, tie_calibration, weights)
                for r in _row_blocks(len(x2), iu.size)])
            return out if np.ndim(x) == 2 else out[0]

        many = weights is None and iu.size >= _FORM_PAIRS and len(h) <= _FORM_ITEMS  # the same numbers, sooner
        statistic = _SwappedAccuracy(za, zb, h, iu, ju, tie_calibration) if many else delta
        res = permutation_test_paired(za, zb, statistic, alternative=alternative, n_resamples=n_resamples,
                                      random_state=random_state)
        method = f"permutation-paired-swap (PERM-BOTH) acc23 pairs={mask_name}, {sided}"
    return replace(res, method=method, notes=res.notes + ("p-value: (1 + #{T* as extreme as T}) / (1 + B)",)
                   if not res.exact else res.notes)


#: PERM-BOTH with pooled, unweighted pairs counts concordant pairs from a quadratic form in the swaps when there
#: are at least this many pairs and at most _FORM_ITEMS rows. Measured with 1,000 permutations, 8 groups, human
#: scores with ties: 0.22 s against the dense differences' 0.23 s at 2,768 pairs, 0.30 s against 0.45 s at 6,165
_FORM_PAIRS = 5_000
_FORM_ITEMS = 4_096
#: the grid of reaches a row's near pairs are counted at: the largest tied difference over 2 ** k, k < 40
_REACH_STEPS = 40


class _SwappedAccuracy:
    """acc23(y) - acc23(x) for rows of PERM-BOTH's swapped scores (``x_i``, ``y_i`` are ``a_i``, ``b_i`` or,
    swapped, ``b_i``, ``a_i``), pooled unweighted pairs: the same numbers as the dense pair differences
    (:func:`_acc_rows`), without forming them.

    A pair's concordance depends only on which of its two rows are swapped, so each metric's concordant count is a
    quadratic form in the swap indicators ``u`` (``base + u . alpha + u' Q u``, integers, exact in floating
    point): one matrix product per block of resamples. Tie calibration adds each row's best gain over its
    human-tied pairs (:func:`_best_gain`), which needs only the concordant pairs closer than the (ties + 1)-th
    closest concordant one: found among the rows sorted by score, not among all pairs (the dense row where that
    would be most of them)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, h: np.ndarray, iu: np.ndarray, ju: np.ndarray,
                 calibrate: bool) -> None:
        n = len(a)
        dh = h[iu] - h[ju]
        htie = dh == 0
        self.a, self.h, self.dh, self.iu, self.ju, self.calibrate = a, h, dh, iu, ju, calibrate
        self.n_pairs = iu.size
        self.tied = (iu[htie], ju[htie])
        self.upper = np.zeros((n, n), dtype=bool)
        self.upper[iu, ju] = True

        def concordant(first: np.ndarray, second: np.ndarray) -> np.ndarray:
            return _concordant(first[iu] - second[ju], dh).astype(np.float64)

        # y takes a where swapped (else b); x takes b where swapped (else a)
        self.forms = []
        for swapped, kept in ((a, b), (b, a)):
            kk, sk = concordant(kept, kept), concordant(swapped, kept)
            ks, ss = concordant(kept, swapped), concordant(swapped, swapped)
            alpha = np.bincount(iu, sk - kk, minlength=n) + np.bincount(ju, ks - kk, minlength=n)
            quad = np.zeros((n, n))
            np.add.at(quad, (iu, ju), ss - sk - ks + kk)
            self.forms.append((float(kk.sum()), alpha, quad))

    def __call__(self, x: np.ndarray, y: np.ndarray, axis: int = 1) -> np.ndarray:
        x2, y2 = np.atleast_2d(x), np.atleast_2d(y)
        u = (x2 != self.a).astype(np.float64)  # swapped where x holds b's score (a_i == b_i: the same either way)
        counts = []
        for (base, alpha, quad), rows in zip(self.forms, (y2, x2), strict=True):
            con = base + u @ alpha + np.einsum("ij,ij->i", u @ quad, u)
            if self.tied[0].size and self.calibrate:
                con = con + np.array([self._gain(r) for r in rows], dtype=np.float64)
            elif self.tied[0].size:  # epsilon 0: a human-tied pair the metric ties exactly counts
                con = con + (rows[:, self.tied[0]] == rows[:, self.tied[1]]).sum(axis=1)
            counts.append(con)
        out = counts[0] / self.n_pairs - counts[1] / self.n_pairs
        return out if np.ndim(x) == 2 else out[0]

    def _gain(self, w: np.ndarray) -> int:
        """The row's tie-calibration gain (:func:`_best_gain`): its human-tied pairs' differences and the
        concordant pairs' differences up to a reach beyond which no epsilon gains (more concordant pairs within
        it than there are ties), or up to the largest tied difference. The reach is the smallest of a grid of
        differences (halving down from the largest tied one) that about three times as many pairs as ties fall
        within, counted from the sorted row; if too few of them are concordant, the next."""
        ti, tj = self.tied
        tied = np.abs(w[ti] - w[tj])
        top = float(tied.max())
        order = np.argsort(w, kind="stable")
        ws = w[order]
        rank = np.arange(len(ws))
        # a superset of the pairs within a reach (rounding of ws + reach), cut to the exact |difference| below
        slack = 4 * np.finfo(np.float64).eps * (np.abs(ws).max() + top)
        grid = top * 2.0 ** -np.arange(_REACH_STEPS)[::-1]  # ascending, the last is top
        ends = np.searchsorted(ws, ((grid + slack)[:, None] + ws).ravel(), side="right").reshape(len(grid), -1)
        within = np.maximum(ends - rank - 1, 0)  # per reach and sorted position: the later rows within reach
        totals = within.sum(axis=1)
        step = int(np.searchsorted(totals, 3 * len(tied) + len(ws)))  # the first reach with that many pairs
        while True:
            step = min(step, len(grid) - 1)
            reach, counts = grid[step], within[step]
            total = int(totals[step])
            if 2 * total > self.n_pairs:  # most pairs are that near: the dense row is cheaper
                dm = w[self.iu] - w[self.ju]
                return _best_gain(tied, np.abs(dm[_concordant(dm, self.dh)]))
            first = np.repeat(rank, counts)
            second = first + 1 + np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            i, j = order[first], order[second]
            lo, hi = np.minimum(i, j), np.maximum(i, j)
            dm = w[lo] - w[hi]  # as the dense differences: first row minus second
            dh = self.h[lo] - self.h[hi]
            ad = np.abs(dm)
            near = ad[self.upper[lo, hi] & (ad <= reach) & _concordant(dm, dh)]
            if reach >= top or len(near) > len(tied):  # every epsilon that can gain is within reach
                return _best_gain(tied, near)
            step += 1  # twice the reach


def _row_blocks(n_rows: int, n_pairs: int) -> list[slice]:
    step = max(1, _BLOCK // max(n_pairs, 1))
    return [slice(i, i + step) for i in range(0, n_rows, step)]


def _verdicts(dm: np.ndarray, dh: np.ndarray, eps: float) -> np.ndarray:
    """1 where a pair counts for acc23 (concordant, or tied in both), else 0."""
    mtie = np.abs(dm) <= eps
    htie = dh == 0
    return ((mtie & htie) | (~mtie & ~htie & (np.sign(dm) == np.sign(dh)))).astype(np.float64)


def _pair_swap(a, b, iu, ju, dh, weights, tie_calibration, alternative, n_resamples, random_state) -> TestResult:
    """acc(b) - acc(a) = sum_p w_p (v_b,p - v_a,p): swapping a pair's verdicts flips the sign of its
    term, so the test is a sign-flip test over the pairs whose verdicts differ."""
    from xleval.stats._permutation import permutation_test_paired

    dma, dmb = a[iu] - a[ju], b[iu] - b[ju]
    eps_a = _calibrate(dma, dh, weights) if tie_calibration else 0.0
    eps_b = _calibrate(dmb, dh, weights) if tie_calibration else 0.0
    w = weights if weights is not None else np.full(dh.size, 1.0 / dh.size)
    va, vb = _verdicts(dma, dh, eps_a) * w, _verdicts(dmb, dh, eps_b) * w
    differ = va != vb
    if not differ.any():
        raise InputError("compare_pairwise_accuracy: the two metrics give the same verdict on every pair; "
                         "there is no difference to test")
    res = permutation_test_paired(vb[differ], va[differ], lambda x, y, axis: np.sum(x - y, axis=axis),
                                  alternative=alternative, n_resamples=n_resamples, random_state=random_state)
    note = f"epsilon fixed per metric: a {eps_a:g}, b {eps_b:g}; {int(differ.sum())} of {differ.size} pairs differ"
    return replace(res, n=int(differ.size), notes=res.notes + (note,))


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


#: below one human tie in this many pairs, tie calibration counts against the tied pairs' differences, no sort
FEW_TIES = 8


def _acc_rows_few_ties(dm: np.ndarray, htie: np.ndarray, con: np.ndarray) -> np.ndarray:
    """:func:`_acc_rows` with calibration (unweighted) where few human pairs tie (system means: a few cells of equal
    means). A metric tie gains only on a human tie, so the best epsilon is 0 or the |difference| of a human-tied
    pair: each row's gain is counted at those candidates (:func:`_best_gain`, a search among them, not a sort of
    every pair); the same integers as the sort, so the same accuracies."""
    out = np.empty(len(dm))
    n_pairs = dm.shape[1]
    for r, row in enumerate(dm):
        ad = np.abs(row)
        out[r] = (int(con[r].sum()) + _best_gain(ad[htie], ad[con[r]])) / n_pairs
    return out


def _best_gain(tied: np.ndarray, concordant: np.ndarray) -> int:
    """Tie calibration's gain for one row: the most that some epsilon adds to the concordant count
    (:func:`_tie_gains`; epsilon 0 gains the exact metric ties of human-tied pairs)."""
    return int(_tie_gains(tied, concordant)[1].max())


def _tie_gains(tied: np.ndarray, concordant: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The epsilons that can gain and what each gains, from the |metric differences| of the human-tied pairs
    (``tied``) and of the concordant pairs (``concordant``; those beyond the (ties + 1)-th smallest may be left
    out: they change nothing). The candidates are 0 and the tied pairs' differences (sorted); each gains the
    tied pairs within it and loses the concordant ones."""
    n_tied = len(tied)
    if len(concordant) > n_tied:
        # an epsilon that ties more concordant pairs than there are human ties loses more than it can gain, so
        # below the (n_tied + 1)-th smallest concordant difference lies every epsilon that can beat 0
        bound = np.partition(concordant, n_tied)[n_tied]
        tied, concordant = tied[tied < bound], concordant[concordant < bound]
    candidates = np.unique(np.concatenate([[0.0], tied]))  # sorted, 0 first
    m = len(candidates)
    covered_ties = np.cumsum(np.bincount(np.searchsorted(candidates, tied), minlength=m + 1))[:m]
    lost = np.cumsum(np.bincount(np.searchsorted(candidates, concordant), minlength=m + 1))[:m]
    return candidates, covered_ties - lost


def _concordant(dm: np.ndarray, dh: np.ndarray) -> np.ndarray:
    """Pairs that metric and humans order the same way, neither tied."""
    return (np.sign(dm) == np.sign(dh)) & (dm != 0) & (dh != 0)


def _acc_rows(dm: np.ndarray, dh: np.ndarray, calibrate: bool, weights: np.ndarray | None = None) -> np.ndarray:
    """acc23 for each row of pair differences ``dm`` (B, P) against fixed human differences
    ``dh`` (P,), with the best epsilon per row when ``calibrate`` (else exact ties only).
    ``weights`` (P,): per-pair weights of an averaged accuracy (None: pooled, counted in integers)."""
    htie = dh == 0
    con = (np.sign(dm) == np.sign(dh)) & (dm != 0) & ~htie
    n_pairs = dm.shape[1]
    if not calibrate:
        good = con | ((dm == 0) & htie)
        return good.sum(axis=1) / n_pairs if weights is None else good @ weights
    if not htie.any():
        # no human tie to gain: a metric tie only loses concordant pairs, so the best epsilon is 0 (or below the
        # smallest difference) and adds nothing; exact, and no sort (system means across groups rarely tie)
        return con.sum(axis=1) / n_pairs if weights is None else con @ weights
    if weights is None and FEW_TIES * int(htie.sum()) < n_pairs:
        return _acc_rows_few_ties(dm, htie, con)
    ad = np.abs(dm)
    order = np.argsort(ad, axis=1, kind="stable")
    ad = np.take_along_axis(ad, order, axis=1)
    change = htie[order].astype(np.int64) - np.take_along_axis(con, order, axis=1)
    gain = np.cumsum(change if weights is None else change * weights[order], axis=1)
    last_of_value = np.concatenate([ad[:, 1:] != ad[:, :-1], np.ones((len(ad), 1), dtype=bool)], axis=1)
    floor = np.iinfo(np.int64).min if weights is None else -np.inf
    best = np.where(last_of_value, gain, floor).max(axis=1)
    best = np.where(ad[:, 0] > 0, np.maximum(best, 0), best)  # epsilon = 0 adds no tie when no diff is 0
    if weights is None:
        return (con.sum(axis=1) + best) / n_pairs
    return con @ weights + best
