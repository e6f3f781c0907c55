"""Pooling across groups for anchored calibration: common slopes and empirical-Bayes offsets.

* :func:`pooled_slopes`: least squares with one intercept per group (group fixed effects), so the
  slopes are pooled over every group's labelled rows while each group keeps its own level; the
  covariance is cluster-robust (CR1) over the given clusters (systems: labels of one system share
  its deviation from the metric), or HC1 without clusters.
* :func:`paule_mandel_tau2`: the between-group variance of the groups' offsets (Paule & Mandel
  1982; DerSimonian & Kacker 2007), the method statsmodels calls ``method_re="iterated"``.
* :func:`shrink_offsets`: each group's offset is pulled toward the precision-weighted common
  offset by ``lambda_g = tau2 / (tau2 + v_g)`` (normal-normal empirical Bayes, ``mode="eb"``): a group
  whose few labels cannot tell its offset apart from the others' keeps the common one. ``mode="auto"``
  (the anchored calibrator's default) shrinks only as far as ``k`` groups can support: none with 3
  groups or fewer, and Morris's (1983) factor ``(k - 3) / (k - 1)`` on the shrinkage ``1 - lambda_g``, so that
  ``tau2`` estimated at 0 from a handful of groups does not pull every group onto the common offset
  (with equal variances this is the positive-part James-Stein / Efron-Morris estimator).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

__all__ = ["SlopeFit", "OffsetShrinkage", "pooled_slopes", "paule_mandel_tau2", "shrink_offsets", "morris_factor",
           "SHRINKAGE_MODES", "shrink_slope_toward"]


@dataclass(frozen=True)
class SlopeFit:
    """Slopes (one per column of the design), their covariance, and which were identified
    (a column without variation inside any group has slope NaN)."""

    coef: np.ndarray
    cov: np.ndarray
    identified: np.ndarray
    n: int
    n_clusters: int


@dataclass(frozen=True)
class OffsetShrinkage:
    """Per group: the shrinkage weight ``lam``, the posterior ``offset`` and its variance; the common
    offset ``mean`` with its variance ``mean_var``, and ``tau2`` (NaN with a single group)."""

    lam: np.ndarray
    offset: np.ndarray
    offset_var: np.ndarray
    mean: float
    mean_var: float
    tau2: float
    weights: np.ndarray


def _demean(values: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    counts = np.bincount(codes, minlength=n_groups).astype(float)
    if values.ndim == 1:
        return values - (np.bincount(codes, values, minlength=n_groups) / np.maximum(counts, 1))[codes]
    means = np.stack([np.bincount(codes, values[:, j], minlength=n_groups) for j in range(values.shape[1])], axis=1)
    return values - (means / np.maximum(counts, 1)[:, None])[codes]


def pooled_slopes(design: np.ndarray, y: np.ndarray, groups: np.ndarray, clusters: np.ndarray | None = None,
                  *, tol: float = 1e-10) -> SlopeFit:
    """Within-group least squares of ``y`` on the columns of ``design`` (n, p); ``groups`` and
    ``clusters`` are integer codes. Unidentified columns get slope NaN and are left out of the fit."""
    design = np.asarray(design, dtype=float).reshape(len(y), -1)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    xd, yd = _demean(design, groups, n_groups), _demean(np.asarray(y, dtype=float), groups, n_groups)
    size = np.abs(design).max(axis=0) if len(design) else np.zeros(design.shape[1])
    spread = np.sqrt((xd**2).mean(axis=0)) if len(xd) else np.zeros(design.shape[1])
    identified = spread > tol * np.maximum(size, 1.0)
    p = design.shape[1]
    coef, cov = np.full(p, np.nan), np.full((p, p), np.nan)
    n_clusters = len(np.unique(clusters)) if clusters is not None else len(y)
    if identified.any():
        xi = xd[:, identified]
        bread = np.linalg.pinv(xi.T @ xi)
        beta = bread @ (xi.T @ yd)
        resid = yd - xi @ beta
        k = int(identified.sum()) + n_groups
        if clusters is None:
            meat = (xi * resid[:, None]).T @ (xi * resid[:, None])
            factor = len(y) / max(len(y) - k, 1)
        else:  # CR1: scores summed within clusters
            sums = np.stack([np.bincount(clusters, xi[:, j] * resid) for j in range(xi.shape[1])], axis=1)
            meat = sums.T @ sums
            g = n_clusters
            factor = (g / max(g - 1, 1)) * ((len(y) - 1) / max(len(y) - k, 1))
        coef[identified] = beta
        cov[np.ix_(identified, identified)] = factor * bread @ meat @ bread
    return SlopeFit(coef, cov, identified, len(y), int(n_clusters))


def paule_mandel_tau2(effects: np.ndarray, variances: np.ndarray) -> float:
    """Between-group variance tau^2 that sets the generalised Q statistic to its expectation k - 1
    (0 when Q(0) <= k - 1 already). ``variances`` must be positive."""
    effects, variances = np.asarray(effects, dtype=float), np.asarray(variances, dtype=float)
    k = len(effects)
    if k < 2:
        return float("nan")

    def excess(tau2: float) -> float:
        w = 1.0 / (variances + tau2)
        mean = (w * effects).sum() / w.sum()
        return float((w * (effects - mean) ** 2).sum() - (k - 1))

    if excess(0.0) <= 0:
        return 0.0
    high = max(float(np.var(effects, ddof=1)), float(variances.max()), 1e-12)
    while excess(high) > 0:
        high *= 4
    return float(brentq(excess, 0.0, high, xtol=1e-12 * high, rtol=1e-12))


SHRINKAGE_MODES = ("auto", "eb", "none")


def morris_factor(k: int) -> float:
    """The share of the empirical-Bayes shrinkage that ``k`` groups support (Morris 1983): ``(k - 3) / (k - 1)``,
    0 for 3 groups or fewer. (With 2 groups tau2 has one degree of freedom and is 0 whenever the two mean
    residuals are within about a standard error: full shrinkage would give back the metric's own order.)"""
    return max(0.0, (k - 3) / (k - 1)) if k > 1 else 0.0


def shrink_offsets(effects: np.ndarray, variances: np.ndarray, *, mode: str = "eb") -> OffsetShrinkage:
    """Empirical-Bayes offsets: ``mean + lam * (effect - mean)``. ``mode="eb"``: ``lam = tau2 / (tau2 + v)``
    and posterior variance ``lam * v + (1 - lam)^2 * var(mean)``. ``mode="auto"``: ``1 - lam`` times
    :func:`morris_factor` (no shrinkage with 3 groups or fewer), and Morris's term for the uncertainty of ``tau2``,
    ``2 / (k - 3) * (1 - lam)^2 * (effect - mean)^2``, added to the variance. ``mode="none"`` keeps every
    group's own offset (``lam = 1``). Every mode estimates ``tau2`` and the common offset (for new groups)."""
    effects, variances = np.asarray(effects, dtype=float), np.asarray(variances, dtype=float)
    k = len(effects)
    if k == 1:
        return OffsetShrinkage(np.ones(1), effects.copy(), variances.copy(), float(effects[0]), float(variances[0]),
                               float("nan"), np.ones(1))
    tau2 = paule_mandel_tau2(effects, variances)
    w = 1.0 / (variances + tau2)
    mean = float((w * effects).sum() / w.sum())
    mean_var = float(1.0 / w.sum())
    shrink = variances / (tau2 + variances) * {"eb": 1.0, "auto": morris_factor(k), "none": 0.0}[mode]
    lam = 1.0 - shrink
    offset = mean + lam * (effects - mean)
    offset_var = lam * variances + shrink**2 * mean_var
    if mode == "auto" and k > 3:
        offset_var = offset_var + 2.0 / (k - 3) * shrink**2 * (effects - mean) ** 2
    return OffsetShrinkage(lam, offset, offset_var, mean, mean_var, tau2, w / w.sum())


def shrink_slope_toward(slope: float, target: float, var_difference: float) -> float:
    """The weight kept of ``slope - target`` by positive-part James-Stein: ``max(0, 1 - var / (slope - target)^2)``
    (1 when the difference is exact, 0 when it is within one standard error)."""
    d2 = (slope - target) ** 2
    if not np.isfinite(var_difference) or var_difference <= 0:
        return 1.0
    return 0.0 if d2 <= var_difference else float(1.0 - var_difference / d2)
