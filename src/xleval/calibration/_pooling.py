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

from ..exceptions import InputError

__all__ = ["SlopeFit", "OffsetShrinkage", "pooled_slopes", "paule_mandel_tau2", "shrink_offsets", "morris_factor",
           "SHRINKAGE_MODES", "shrink_slope_toward", "PRIORS", "MixedShrinkage", "mixed_offsets",
           "MIN_GROUPS_MIXED"]


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


PRIORS = ("mixed", "common")
N_GAMMA = 21  # grid of the LGN share gamma in [0, 1]
N_TAU = 41  # grid of the between-group sd tau in [0, tau_max]
# the half-Cauchy prior on tau needs the labels to weigh gamma against tau: as Morris's factor, 4 groups or more
MIN_GROUPS_TAU_PRIOR = 4
# the centre c + gamma * z_g has two parameters: with two groups it reaches both offsets for some gamma, tau has
# one degree of freedom, and how far the offsets are pulled is set by the priors' bounds, not by the labels
MIN_GROUPS_MIXED = 3
TAU_PRIORS = ("half-cauchy", "flat")


def tau_prior_scale(variances: np.ndarray, covariate: np.ndarray) -> float:
    """The scale of the half-Cauchy prior on ``tau`` (Gelman 2006's weakly informative prior for a group-level
    sd with few groups): the sd of LGN's offsets ``z_g`` (how far the two structural priors' centres are apart,
    the size of the strays that matter), and at least half the median offset standard error (where the metric's
    levels are already equal and the two centres coincide). Its median is the scale: a priori even odds that
    the groups stray from the mixed centre by less than that."""
    z = np.asarray(covariate, dtype=float)
    spread = float(np.std(z, ddof=1)) if len(z) > 1 else 0.0
    return max(spread, 0.5 * float(np.sqrt(np.median(variances))), 1e-12)


@dataclass(frozen=True)
class MixedShrinkage(OffsetShrinkage):
    """:class:`OffsetShrinkage` of :func:`mixed_offsets`, with the posterior mean of the LGN share of the
    centre (``lgn_weight``: 0 = the raw scale's common offset, 1 = LGN's equal levels) and its sd."""

    lgn_weight: float = float("nan")
    lgn_weight_sd: float = float("nan")


def mixed_offsets(effects: np.ndarray, variances: np.ndarray, covariate: np.ndarray,
                  tau_max: float, *, tau_prior: str = "half-cauchy") -> MixedShrinkage:
    """Offsets shrunk toward a centre that mixes the two structural priors, averaged over what the labels
    say about the mix and the spread (a hierarchical normal model on a grid; docs/calibration.md).

    ``effects``: each group's mean label residual ``r_g`` with its variance ``v_g``; ``covariate``: ``z_g``,
    the offset LGN's assumption implies up to a constant (``-B * score_mean_g``: the offset that puts every
    group's mean on one level). Model::

        r_g ~ N(a_g, v_g),   a_g ~ N(c + gamma * z_g, tau^2)

    ``gamma = 0`` is the raw scale's prior (one common offset: the metric's levels are comparable), ``gamma = 1``
    LGN's (equal true levels). Flat priors on ``c`` and on ``gamma`` in [0, 1]; on ``tau`` in [0, ``tau_max``]
    (the caller's bound: the anchored calibrator takes twice the range of the ``r_g``, at least one offset's
    standard error) a half-Cauchy with scale :func:`tau_prior_scale` (the priors' disagreement, the sd of the
    ``z_g``, at least half the median offset standard error) from :data:`MIN_GROUPS_TAU_PRIOR` groups on, and a
    flat prior with 3 (where the labels cannot weigh ``gamma`` against ``tau``, the flat prior keeps the
    offsets near the groups' own; ``tau_prior="flat"``: flat with any number of groups, the prior before this
    release, kept for ``examples/calibration_simulation.py --tau-prior flat``). ``c`` is
    integrated out (restricted likelihood), ``(gamma, tau)`` averaged on a grid by their posterior; each
    group's offset is its posterior mean ``centre + lambda (r_g - centre)``, ``lambda = tau^2 / (tau^2 + v_g)``,
    with the posterior variance over the grid (the within-grid variance ``lambda v_g + (1 - lambda)^2 var(c)``
    plus the spread of the conditional means).

    With fewer than :data:`MIN_GROUPS_MIXED` (3) groups every group keeps its own ``r_g`` (``lam = 1``, as
    ``shrink_offsets(mode="none")``; ``lgn_weight`` NaN): two groups cannot tell the mix, and the pull the model
    would apply comes from the bounds of the priors (on two close pairs that the metric orders backwards it cost
    up to 0.09 of cross-pair accuracy; docs/calibration.md)."""
    if tau_prior not in TAU_PRIORS:
        raise InputError(f"tau_prior={tau_prior!r}: use one of {', '.join(TAU_PRIORS)}")
    r = np.asarray(effects, dtype=float)
    v = np.asarray(variances, dtype=float)
    z = np.asarray(covariate, dtype=float)
    k = len(r)
    if k < MIN_GROUPS_MIXED:  # one group: its own offset, tau2 NaN
        own = shrink_offsets(r, v, mode="none")
        return MixedShrinkage(own.lam, own.offset, own.offset_var, own.mean, own.mean_var, own.tau2, own.weights)
    z = z - z.mean()
    gammas = np.linspace(0.0, 1.0, N_GAMMA)
    taus = np.linspace(0.0, max(float(tau_max), 1e-12), N_TAU)
    tau2 = taus**2
    log_prior = np.zeros(N_TAU)
    log_prior[[0, -1]] = np.log(0.5)  # the trapezoid rule over tau (a prior peaked at 0 is not overweighted there)
    if tau_prior == "half-cauchy" and k >= MIN_GROUPS_TAU_PRIOR:
        log_prior -= np.log1p((taus / tau_prior_scale(v, z)) ** 2)
    # (gamma, tau, group) arrays
    w = 1.0 / (v[None, None, :] + tau2[None, :, None])
    y = r[None, None, :] - gammas[:, None, None] * z[None, None, :]
    sw = w.sum(axis=2)
    c = (w * y).sum(axis=2) / sw
    resid = y - c[:, :, None]
    loglik = 0.5 * np.log(w).sum(axis=2) - 0.5 * np.log(sw) - 0.5 * (w * resid**2).sum(axis=2) \
        + log_prior[None, :]
    post = np.exp(loglik - loglik.max())
    post /= post.sum()
    lam = tau2[None, :, None] * w  # tau^2 / (tau^2 + v)
    centre = c[:, :, None] + gammas[:, None, None] * z[None, None, :]
    mean_g = centre + lam * (r[None, None, :] - centre)
    var_g = lam * v[None, None, :] + (1.0 - lam) ** 2 / sw[:, :, None]
    p = post[:, :, None]
    offset = (p * mean_g).sum(axis=(0, 1))
    offset_var = (p * (var_g + mean_g**2)).sum(axis=(0, 1)) - offset**2
    mean_c = float((post * c).sum())
    mean_var = float((post * (1.0 / sw + c**2)).sum() - mean_c**2)
    gamma_mean = float((post.sum(axis=1) * gammas).sum())
    gamma_sd = float(np.sqrt(max((post.sum(axis=1) * gammas**2).sum() - gamma_mean**2, 0.0)))
    weights = (p * w / sw[:, :, None]).sum(axis=(0, 1))
    return MixedShrinkage((p * lam).sum(axis=(0, 1)), offset, np.maximum(offset_var, 0.0), mean_c, max(mean_var, 0.0),
                          float((post.sum(axis=0) * tau2).sum()), weights, gamma_mean, gamma_sd)
