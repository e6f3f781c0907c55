"""Correlations (Pearson, Spearman, Kendall tau-b/tau-c, partial) with CIs, p-values and n.

Coefficients and p-values come from scipy.stats. Intervals: Fisher z for Pearson; Fisher z
with the Bonett & Wright (2000) variance ``(1 + r^2/2) / (n - 3)`` for Spearman; Fisher z with
Fieller et al.'s (1957) variance ``0.437 / (n - 4)`` for Kendall tau-b; bootstrap (pairs
resampled together) for tau-c or on request.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.stats as ss

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import _validate as v
from xleval.stats._bootstrap import bootstrap
from xleval.stats._results import CorrelationResult

__all__ = ["correlation", "partial_correlation"]

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")
_ALIASES = {"kendall": "kendall_b", "tau_b": "kendall_b", "tau_c": "kendall_c"}
CI_METHODS = ("auto", "fisher", "bootstrap", "none")
# Fisher-z variance numerator and the n offset per method (see the module docstring).
_FISHER = {"pearson": ("fisher", 3), "spearman": ("fisher-bonett-wright", 3), "kendall_b": ("fisher-fieller", 4)}


def correlation(
    x: Any,
    y: Any,
    method: str = "pearson",
    *,
    level: float = 0.95,
    ci: str = "auto",
    n_resamples: int = 1000,
    random_state: Any = None,
    nan_policy: str = "raise",
) -> CorrelationResult:
    """Correlation of ``x`` and ``y`` with a CI and p-value.

    ``method``: ``pearson``, ``spearman``, ``kendall_b`` (alias ``kendall``) or ``kendall_c``.
    ``ci``: ``auto`` (Fisher-type for pearson/spearman/kendall_b, bootstrap for kendall_c),
    ``fisher``, ``bootstrap`` or ``none``. ``nan_policy="omit"`` drops rows where either value
    is NaN with a DataQualityWarning that counts them; ``"raise"`` refuses them.
    """
    method = _ALIASES.get(method, method)
    v.check_choice(method, "method", METHODS)
    v.check_choice(ci, "ci", CI_METHODS)
    level = v.check_level(level)
    xa, ya = _pair(x, y, nan_policy)
    notes: list[str] = []
    r, p = _coefficient(xa, ya, method, notes)
    if ci == "auto":
        ci = "bootstrap" if method == "kendall_c" else "fisher"
    if ci == "fisher" and method == "kendall_c":
        raise InputError("ci='fisher' is not available for kendall_c; use ci='bootstrap'")
    low, high, ci_name = float("nan"), float("nan"), "none"
    extra: dict[str, Any] = {}
    if ci == "fisher":
        low, high, ci_name = (*_fisher_ci(r, len(xa), method, level, 0, notes), _FISHER[method][0])
    elif ci == "bootstrap" and np.isfinite(r):
        est = bootstrap((xa, ya), _vectorized(method), n_resamples=n_resamples, level=level,
                        random_state=random_state, vectorized=method in ("pearson", "spearman"))
        low, high, ci_name = est.ci_low, est.ci_high, est.method
        extra = {"n_resamples": est.n_resamples, "random_state": est.random_state, "distribution": est.distribution}
        notes.extend(est.notes)
    return CorrelationResult(estimate=r, ci_low=low, ci_high=high, level=level, p_value=p, n=len(xa),
                             method=method, ci_method=ci_name, notes=tuple(notes), **extra)


def partial_correlation(
    x: Any,
    y: Any,
    covariates: Any,
    method: str = "pearson",
    *,
    level: float = 0.95,
) -> CorrelationResult:
    """Correlation of ``x`` and ``y`` after removing the linear effect of ``covariates``
    (n, k) from both (with an intercept); ``method="spearman"`` ranks everything first.

    The p-value is the t-test with ``n - 2 - k`` degrees of freedom (identical to the OLS
    t-test of ``x``'s coefficient in ``y ~ x + covariates``); the CI is Fisher z with
    standard error ``1 / sqrt(n - 3 - k)``.
    """
    v.check_choice(method, "method", ("pearson", "spearman"))
    level = v.check_level(level)
    xa, ya = v.as_float_array(x, "x"), v.as_float_array(y, "y")
    z = v.as_float_array(covariates, "covariates", ndim=(1, 2))
    z = z[:, None] if z.ndim == 1 else z
    v.check_same_length("x", xa, "y", ya)
    v.check_same_length("x", xa, "covariates", z)
    k, n = z.shape[1], len(xa)
    if n - 3 - k < 1:
        raise InputError(f"partial_correlation needs more than {3 + k} rows for {k} covariate(s); got {n}")
    if method == "spearman":
        xa, ya, z = ss.rankdata(xa), ss.rankdata(ya), np.apply_along_axis(ss.rankdata, 0, z)
    design = np.column_stack([np.ones(n), z])
    k = int(np.linalg.matrix_rank(design)) - 1  # collinear/constant covariates cost no degree of freedom
    rx = xa - design @ np.linalg.lstsq(design, xa, rcond=None)[0]
    ry = ya - design @ np.linalg.lstsq(design, ya, rcond=None)[0]
    notes: list[str] = []
    r, _ = _coefficient(rx, ry, "pearson", notes)
    df = n - 2 - k
    with np.errstate(divide="ignore"):
        t = r * np.sqrt(df / (1.0 - r**2)) if abs(r) < 1 else np.sign(r) * np.inf
    p = float(2 * ss.t.sf(abs(t), df)) if np.isfinite(r) else float("nan")
    low, high = _fisher_ci(r, n, "pearson", level, k, notes)
    return CorrelationResult(estimate=r, ci_low=low, ci_high=high, level=level, p_value=p, n=n,
                             method=f"partial_{method}", ci_method="fisher", notes=tuple(notes))


# ----------------------------------------------------------------------------- helpers
def _pair(x: Any, y: Any, nan_policy: str) -> tuple[np.ndarray, np.ndarray]:
    v.check_choice(nan_policy, "nan_policy", ("raise", "omit"))
    allow = nan_policy == "omit"
    xa, ya = v.as_float_array(x, "x", allow_nan=allow), v.as_float_array(y, "y", allow_nan=allow)
    v.check_same_length("x", xa, "y", ya)
    if allow:
        keep = np.isfinite(xa) & np.isfinite(ya)
        if not keep.all():
            warnings.warn(f"correlation: {int((~keep).sum())} of {len(xa)} rows with NaN/inf left out",
                          DataQualityWarning, stacklevel=3)
            xa, ya = xa[keep], ya[keep]
    v.check_min_size(xa, 2, "correlation (rows with both x and y)")
    return xa, ya


def _coefficient(x: np.ndarray, y: np.ndarray, method: str, notes: list[str]) -> tuple[float, float]:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        notes.append("unreliable: " + ("x" if np.ptp(x) == 0 else "y") + " is constant; correlation undefined")
        return float("nan"), float("nan")
    if method == "pearson":
        res = ss.pearsonr(x, y)
    elif method == "spearman":
        res = ss.spearmanr(x, y)
    else:
        res = ss.kendalltau(x, y, variant=method[-1])
    return float(res.statistic), float(res.pvalue)


def _fisher_ci(r: float, n: int, method: str, level: float, k: int, notes: list[str]) -> tuple[float, float]:
    offset = _FISHER[method][1] + k
    if not np.isfinite(r) or n - offset < 1:
        if np.isfinite(r):
            notes.append(f"unreliable: n = {n} too small for a Fisher-z interval (needs n > {offset})")
        return float("nan"), float("nan")
    var = {"pearson": 1.0, "spearman": 1.0 + r**2 / 2.0, "kendall_b": 0.437}[method] / (n - offset)
    z_crit = ss.norm.ppf(0.5 + level / 2.0)
    z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
    return float(np.tanh(z - z_crit * np.sqrt(var))), float(np.tanh(z + z_crit * np.sqrt(var)))


def _vectorized(method: str):
    if method == "pearson":
        return _pearson_axis
    if method == "spearman":
        return lambda a, b, axis: _pearson_axis(ss.rankdata(a, axis=axis), ss.rankdata(b, axis=axis), axis=axis)
    variant = method[-1]

    def kendall(a: np.ndarray, b: np.ndarray) -> float:
        if np.ptp(a) == 0 or np.ptp(b) == 0:
            return float("nan")  # a resample of tied values: undefined, counted by the bootstrap notes
        return float(ss.kendalltau(a, b, variant=variant).statistic)

    return kendall


def _pearson_axis(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    a = a - a.mean(axis=axis, keepdims=True)
    b = b - b.mean(axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))
