"""Comparing two metrics' correlations with the same human scores (WMT metrics task statistics).

* :func:`average_correlation`: mt-metrics-eval's ``AverageCorrelation``: the correlation over all
  rows (``average_by="none"``), or the mean of the correlations inside each group / item
  (``"group"``/``"item"``; units with fewer than two rows or an undefined correlation are left
  out, as there).
* :func:`williams_test`: Williams' (1959) test for the difference of two dependent correlations
  that share one variable (Graham & Baldwin 2014), as ``WilliamsSigDiff``; one-sided by default.
* :func:`compare_correlations`: ``test="williams"`` (Pearson on all rows) or ``"permutation"``:
  PERM-BOTH (Deutsch et al. 2021; ``PermutationSigDiff``): each row's two metric scores (z-scored
  over the rows) are swapped with probability 1/2 and both correlations recomputed.

p-values of the permutation test are ``(1 + #{T* as extreme as T}) / (1 + B)`` (mt-metrics-eval
reports ``#{T* >= T} / B``), stated in the result's notes; ``alternative="greater"`` (default)
tests whether ``metric_b`` correlates better than ``metric_a``, WMT's one-sided test.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.stats as ss

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import _validate as v
from xleval.stats._results import CorrelationResult, TestResult

__all__ = ["average_correlation", "williams_test", "compare_correlations"]

METHODS = ("pearson", "spearman", "kendall")
AVERAGE_BY = ("none", "group", "item")
TESTS = ("permutation", "williams")
_SIDED = {"greater": "one-sided, H1: r(b) > r(a)", "less": "one-sided, H1: r(b) < r(a)", "two-sided": "two-sided"}


def _inputs(metric: Any, human: Any, nan_policy: str, *extra: Any) -> tuple[np.ndarray, ...]:
    allow = v.check_choice(nan_policy, "nan_policy", ("raise", "omit")) == "omit"
    h = v.as_float_array(human, "human", allow_nan=allow)
    arrays = [v.as_float_array(x, name, allow_nan=allow) for x, name in ((metric, "metric"), *extra)]
    for arr, (_, name) in zip(arrays, ((metric, "metric"), *extra), strict=True):
        v.check_same_length(name, arr, "human", h)
    keep = np.isfinite(h)
    for arr in arrays:
        keep &= np.isfinite(arr)
    if not keep.all():
        warnings.warn(f"{int((~keep).sum())} of {len(h)} rows with a missing score left out", DataQualityWarning,
                      stacklevel=3)
    return (keep, h, *arrays)


def _unit_bounds(average_by: str, groups: Any, items: Any, n: int, keep: np.ndarray) -> tuple[np.ndarray, list[slice]]:
    """Row order that puts each unit's rows together, and each unit's slice of it."""
    if average_by == "none":
        rows = np.flatnonzero(keep)
        return rows, [slice(0, len(rows))]
    labels = groups if average_by == "group" else items
    if labels is None:
        raise InputError(f"average_by={average_by!r} needs {'groups=' if average_by == 'group' else 'items='}")
    codes, _ = v.group_codes(labels, n, "groups" if average_by == "group" else "items")
    rows = np.flatnonzero(keep)
    rows = rows[np.argsort(codes[rows], kind="stable")]
    c = codes[rows]
    edges = np.flatnonzero(np.diff(c)) + 1
    starts, ends = np.concatenate([[0], edges]), np.concatenate([edges, [len(rows)]])
    return rows, [slice(a, b) for a, b in zip(starts, ends, strict=True) if b - a >= 2]


def _corr(x: np.ndarray, y: np.ndarray, method: str) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "pearson":
        return float(ss.pearsonr(x, y).statistic)
    if method == "spearman":
        return float(ss.spearmanr(x, y).statistic)
    return float(ss.kendalltau(x, y).statistic)


def _average(h: np.ndarray, m: np.ndarray, bounds: list[slice], method: str) -> tuple[float, int]:
    values = np.array([_corr(h[b], m[b], method) for b in bounds])
    values = values[np.isfinite(values)]
    return (float(values.mean()), len(values)) if len(values) else (float("nan"), 0)


def average_correlation(metric: Any, human: Any, method: str = "pearson", *, average_by: str = "none",
                        groups: Any = None, items: Any = None, nan_policy: str = "raise") -> CorrelationResult:
    """Correlation of ``metric`` with ``human`` over all rows, or averaged over groups / items.

    The averaged form has no interval and no p-value (a mean of correlations is not a correlation
    with a sampling distribution we know); ``n`` counts the rows used and the notes the units.
    """
    v.check_choice(method, "method", METHODS)
    v.check_choice(average_by, "average_by", AVERAGE_BY)
    keep, h, m = _inputs(metric, human, nan_policy)
    if average_by == "none":
        from xleval.stats._correlation import correlation

        return correlation(m[keep], h[keep], "kendall_b" if method == "kendall" else method)
    rows, bounds = _unit_bounds(average_by, groups, items, len(h), keep)
    r, used = _average(h[rows], m[rows], bounds, method)
    notes: tuple[str,
                 ...] = (f"mean of {used} {average_by}-wise {method} correlations ({len(bounds)} {average_by}s with 2+ "
                         "rows)",)
    if not used:
        notes += ("unreliable: no group has a defined correlation",)
    return CorrelationResult(estimate=r, ci_low=float("nan"), ci_high=float("nan"), level=0.95, p_value=float("nan"),
                             n=len(rows), method=f"{method} averaged by {average_by}", ci_method="none",
                             notes=notes)


def williams_test(r_a: float, r_b: float, r_ab: float, n: int, alternative: str = "greater") -> TestResult:
    """Williams' test of ``r_b - r_a`` where ``r_a = corr(human, a)``, ``r_b = corr(human, b)`` and
    ``r_ab = corr(a, b)`` on the same ``n`` rows (t with n - 3 degrees of freedom).

    ``alternative="greater"``: H1 ``r_b > r_a``; ``"two-sided"`` doubles the one-sided p of the
    observed direction (mt-metrics-eval's ``one_sided=False``).
    """
    v.check_choice(alternative, "alternative", ("greater", "less", "two-sided"))
    if n <= 3:
        raise InputError(f"Williams' test needs more than 3 rows; got {n}")
    for name, r in (("r_a", r_a), ("r_b", r_b), ("r_ab", r_ab)):
        if not np.isfinite(r) or abs(r) > 1:
            raise InputError(f"{name} must be a correlation in [-1, 1]; got {r!r}")
    k = 1 - r_a**2 - r_b**2 - r_ab**2 + 2 * r_a * r_b * r_ab
    rbar = (r_a + r_b) / 2
    t = (r_b - r_a) * np.sqrt((n - 1) * (1 + r_ab)) / np.sqrt(2 * (n - 1) / (n - 3) * k + rbar**2 * (1 - r_ab) ** 3)
    df = n - 3
    p = {"greater": ss.t.sf(t, df), "less": ss.t.cdf(t, df),
         "two-sided": min(1.0, 2 * ss.t.sf(abs(t), df))}[alternative]
    return TestResult(statistic=float(r_b - r_a), p_value=float(p), n=int(n),
                      method=f"Williams test (dependent correlations, Graham & Baldwin 2014), {_SIDED[alternative]}",
                      alternative=alternative, df=float(df), effect_size=float(t),
                      notes=(f"t = {float(t):.6g} with {df} degrees of freedom",))


def compare_correlations(metric_a: Any, metric_b: Any, human: Any, method: str = "pearson", *,
                         test: str = "permutation", average_by: str = "none", groups: Any = None, items: Any = None,
                         alternative: str = "greater", n_resamples: int = 1000, random_state: Any = None,
                         nan_policy: str = "raise") -> TestResult:
    """Is ``metric_b``'s correlation with ``human`` different from ``metric_a``'s (same rows)?

    ``statistic`` is ``r(b) - r(a)`` (averaged correlations with ``average_by``). ``test="williams"``
    needs Pearson without averaging (its derivation assumes one correlation over all rows);
    ``"permutation"`` is PERM-BOTH over rows for any method and averaging.
    """
    from xleval.stats._permutation import permutation_test_paired

    v.check_choice(method, "method", METHODS)
    v.check_choice(test, "test", TESTS)
    v.check_choice(average_by, "average_by", AVERAGE_BY)
    v.check_choice(alternative, "alternative", ("greater", "less", "two-sided"))
    keep, h, a, b = _inputs(metric_a, human, nan_policy, (metric_b, "metric_b"))
    if test == "williams":
        if method != "pearson" or average_by != "none":
            raise InputError("Williams' test compares Pearson correlations over all rows; use method='pearson', "
                             "average_by='none', or test='permutation'")
        h, a, b = h[keep], a[keep], b[keep]
        return williams_test(_corr(h, a, "pearson"), _corr(h, b, "pearson"), _corr(a, b, "pearson"), len(h),
                             alternative)
    rows, bounds = _unit_bounds(average_by, groups, items, len(h), keep)
    if not bounds:
        raise InputError("compare_correlations: no group/item has two rows with every score")
    h, a, b = h[rows], _zscore(a[rows]), _zscore(b[rows])

    def delta_one(x: np.ndarray, y: np.ndarray) -> float:
        return _average(h, y, bounds, method)[0] - _average(h, x, bounds, method)[0]

    def delta_rows(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:  # (B, n) at once
        return _pearson_rows(h, y) - _pearson_rows(h, x)

    delta: Callable[..., Any] = delta_rows if method == "pearson" and average_by == "none" else delta_one

    res = permutation_test_paired(a, b, delta, alternative=alternative, n_resamples=n_resamples,
                                  random_state=random_state)
    notes = res.notes + (("p-value: (1 + #{T* as extreme as T}) / (1 + B)",) if not res.exact else ())
    return replace(res, method=f"permutation-paired-swap (PERM-BOTH) {method} averaged by {average_by}, "
                               f"{_SIDED[alternative]}", notes=notes)


def _zscore(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else x - x.mean()


def _pearson_rows(h: np.ndarray, m: np.ndarray) -> np.ndarray:
    m2 = np.atleast_2d(m)
    hc = h - h.mean()
    mc = m2 - m2.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (mc @ hc) / np.sqrt((mc * mc).sum(axis=1) * (hc @ hc))
    return out if np.ndim(m) == 2 else out[0]
