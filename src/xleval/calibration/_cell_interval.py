"""The joint uncertainty of anchored-calibrated (group, system) means: intervals for the human mean of
a cell, and for its rank among all cells.

The **target** of a cell (group ``g``, system ``s``) is ``H_gs``, the mean human score of the cell
over its judged segments: what judging them all would give. The calibrated mean is
``a_g + B * m_s`` (``m_s``: the system's mean score in the group, see :mod:`._anchored`), and

    H_gs - (a_g_hat + B_hat * m_s) = -(offset error of g) - (slope error) * (m_s - centre_g) + d_gs + e_gs

* **offset and slope errors** come from the few labels. Their covariance is the fitted calibrator's
  (``slopes_["cov"]``, ``groups_[g]["offset_var"]`` at the group's labelled centre, the delta method
  of :meth:`AnchoredCalibrator.interval`). The structure matters for ranks: every cell of a group
  shares its offset error, every cell shares the slope error, and shrunk offsets share the error of
  the common offset they are pulled toward (in proportion ``1 - weight``);
* **the cell's deviation** ``d_gs`` from the common line: systems of one group are not exactly where
  the line puts them. Its variance ``sigma_delta^2`` is estimated by the method of moments (the
  ANOVA estimator of a random effect with unequal cell sizes: cells nested in groups) from the
  labelled rows' residuals, ``(SS_between - sum_g (cells_g - 1) s2_g) / sum_g (K_g - sum_s n_gs^2 / K_g)``,
  so that the within-cell noise of the labels (about ``s2_g / n_gs`` in a cell mean, ``s2_g`` the labels'
  variance within a cell of group ``g``: each language pair has its own raters) is subtracted; the
  line's between-system slope was fitted on the same labels, so its regression on ``m_s`` is taken out again
  with its degree of freedom (:func:`deviation_variance`'s ``covariate``; without it the estimate runs low).
  A single draw of ~100 labels per group estimates it poorly (a difference of two large numbers: on
  WMT21 raw DA the estimate has a standard error of about 20 DA points squared against a value near 10),
  and a plug-in of a negative or low estimate gives intervals that miss. So the draws integrate over
  it: with a flat prior on the sd ``sigma_delta >= 0`` (Gelman 2006; :func:`._pooling.mixed_offsets` puts it
  on the offsets' ``tau`` with 2 or 3 groups) and the estimate normal around the truth with its standard error, the
  posterior of ``sigma_delta^2`` is ``N(estimate; sigma_delta^2, se^2) * sigma_delta^-1`` on ``(0, inf)``
  (computed on a grid of ``sigma_delta``); every joint draw takes its own ``sigma_delta^2`` from it (the
  cells' deviations are then a scale mixture of normals, heavier-tailed than one normal of the same
  variance). A flat prior on the variance instead (its posterior a normal truncated at 0) keeps an estimate
  near 0 about 0.8 standard errors above 0, which on DA z and WMT20 into English made intervals cover 0.994
  and more (docs/calibration.md, "Which cells differ"). A deviation left out is the error the map-fixed
  intervals made;
* **the cell's own segments** ``e_gs``: ``H_gs`` is a mean over the cell's ``N_gs`` segments, not the
  expected human score of the system, so it carries the mean of their noise around the cell's expected
  value, variance ``s2_g / N_gs`` (the labels' variance within a cell of its group). On a test set
  of 1,000 segments per system it is small beside ``sigma_delta^2``; on a few dozen it is not (simulated
  worlds of 60 segments with human noise sd 20: about 7 human-score points squared per cell mean against a
  deviation variance of 4), and intervals without it cover a cell's mean over its segments less often than
  they say.

The leaderboard adds test-set sampling (its bootstrap of the documents moves ``m_s``) and draws them all
jointly: one draw = one slope error, one offset error per group, one deviation and one segment-noise mean
per cell and one bootstrap resample of the system means; the same draws give the intervals of the calibrated means and
of the ranks within and across groups.

**A cell's own labels** (:meth:`CellUncertainty.prediction`): the estimate of a cell with at least
:data:`MIN_OWN_LABELS` labels is the line's plus ``lam`` times its labels' mean residual ``r`` from the line, the
best linear unbiased predictor of small-area estimation (Fay and Herriot 1979; Rao and Molina 2015). The deviation
plus the mean noise of the cell's ``N`` segments, ``u``, and the residual of its ``n`` labelled ones share the
deviation and the labelled segments' noise, so ``lam = Cov(u, r) / Var(r) = (v + w/N) / (v + w/n)`` (``v`` the
deviation variance, ``w`` the labels' variance within a cell): ``n/N`` where the cells do not deviate, 1 when every
segment is labelled (the cell's human mean is then known, and returned with no width). The estimate takes ``v`` as
the method-of-moments estimate (0 if negative; the posterior mean that the draws integrate over overstates a small
``v`` several times). In each draw, with ``M`` the draw's map error and ``M_lab`` that error at the labelled rows
(their mean of ``x - m_s`` is not the cell's 0), ``u`` given ``r - M_lab`` (the labels' residual from the true
line) is normal with mean ``lam_d (r - M_lab)`` and variance ``lam_d w (1/n - 1/N)`` (``lam_d`` from the draw's
``v``), so the map's error enters as ``(1 - lam) M``: the textbook mean squared error ``g1 + g2`` of the predictor.
A test-set resample moves the estimate by ``1 - lam`` of the line's move. Cells with fewer labels keep the line's
estimate and interval: on TED's skewed MQM at 2 labels per system, weights from a deviation estimate that the skew
put 2 standard errors above 0 made the leaderboard declare wrong orders. ``calibrate apply`` still writes the map.
See docs/calibration.md, "A cell's own labels".
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._base.result import Result
from ..exceptions import InputError

__all__ = ["CellUncertainty", "CellLabels", "cell_uncertainty", "deviation_variance", "CELL_TARGET"]

CELL_TARGET = ("the mean human score of the (group, system) cell over its judged segments (what judging them all "
               "would give), and its rank among all cells")


@dataclass(frozen=True, eq=False)
class CellUncertainty(Result):
    """What the joint draws of calibrated cell means are made of (module docstring).

    ``deviation_var``: the variance of the cells' deviations from the common line that the draws use on
    average (the mean of its posterior, module docstring; NaN when no labels tell);
    ``deviation_estimate`` and ``deviation_se``: the method-of-moments estimate and its standard error;
    ``within_var``: the labels' variance within a cell, pooled over the groups; ``n_cells`` / ``n_labels``:
    labelled cells and labels behind them; ``slope_cov``: covariance of (between, within) slope errors; ``target``;
    ``group_within_var``: ``(group code, variance)`` of each group whose labels give their own variance within a
    cell (:func:`deviation_variance`'s ``noise="group"``): with ``codes``, :meth:`draws` and :meth:`prediction`
    take a cell's from its group, else the pooled ``within_var``."""

    deviation_var: float
    deviation_estimate: float
    deviation_se: float
    within_var: float
    n_cells: int
    n_labels: int
    slope_cov: tuple[tuple[float, float], tuple[float, float]]
    target: str = CELL_TARGET
    notes: tuple[str, ...] = field(default=())
    group_within_var: tuple[tuple[int, float], ...] = field(default=())

    def draws(self, model: Any, groups: list[str], means: np.ndarray, n_draws: int,
              rng: np.random.Generator, sizes: np.ndarray | None = None,
              labels: CellLabels | None = None, codes: np.ndarray | None = None) -> np.ndarray:
        """``(n_draws, n_cells)`` joint draws of the error of the calibrated mean of each cell (its
        fitted-group label in ``groups``, its system-mean score in ``means``): slope and offset errors
        shared as the fit shares them, plus an independent deviation per cell and, with ``sizes`` (the
        number of segments each cell's target averages), the noise of that mean over its segments
        (variance ``within_var / size``, each cell's group's with ``codes``, its group code as given to
        :func:`cell_uncertainty`; module docstring). Add them to the calibrated means (and their
        test-set resamples) to get draws of the target.

        With ``labels`` (each cell's own labels, :class:`CellLabels`), a cell with at least
        :data:`MIN_OWN_LABELS` of them is drawn given them: in a draw with deviation variance ``v`` and map error
        ``M``, its deviation plus segment noise, given the labels' mean residual from the true line ``r - M_lab``,
        is normal with mean ``lam (r - M_lab)`` and variance ``lam * within_var * (1/n - 1/N)``, ``lam = (v +
        within_var/N) / (v + within_var/n)`` (module docstring). The draws stay draws of the target minus the
        calibrated mean; their centre is near :meth:`prediction`'s shift."""
        means = np.asarray(means, dtype=float)
        sizes = self._check_sizes(sizes, means)
        error, within_slope = _map_error_draws(model, groups, means, n_draws, rng)
        if not np.isfinite(self.deviation_var):
            return error
        var = _posterior_draws(self.deviation_estimate, self.deviation_se, n_draws, rng)
        deviation = rng.standard_normal((n_draws, len(means)))
        noise = rng.standard_normal((n_draws, len(means))) if sizes is not None else None
        within, inverse_size = self._noise(sizes, len(means), codes)
        unlabelled = error + np.sqrt(var)[:, None] * deviation
        if noise is not None:
            unlabelled = unlabelled + np.sqrt(within * inverse_size)[None, :] * noise
        if labels is None or not labels.own.any():
            return unlabelled
        lam = _label_weight(var[:, None], within, labels.count[None, :], inverse_size[None, :])
        # the cell's labels measured against the true line: their residual from the fitted one minus the map's
        # error at the labelled rows (whose mean of x - m_s is ``labels.spread``, not the cell's 0)
        seen = labels.residual[None, :] - (error + np.outer(within_slope, labels.spread))
        left = np.clip(_inverse(labels.count) - inverse_size, 0.0, None)[None, :]
        labelled = error + lam * seen + np.sqrt(lam * within * left) * deviation
        return np.where(labels.own[None, :], labelled, unlabelled)

    def prediction(self, labels: CellLabels, sizes: np.ndarray | None = None,
                   codes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(shift, weight)`` per cell: the empirical-Bayes prediction of a cell's human mean is its calibrated
        mean plus ``shift = weight * residual``, the cell's own labels' mean residual from the line weighed by
        ``weight = lam = (v + within_var/N) / (v + within_var/n)`` with ``v`` the method-of-moments estimate of the
        deviation variance, 0 if negative (``n`` the cell's labels, ``N`` its segments, ``sizes``; 0 without
        labels, 1 when every segment is labelled; ``within_var`` the group's with ``codes``, as in :meth:`draws`;
        module docstring). Test-set resamples of the calibrated mean move the prediction by ``1 - weight`` of their
        move. No deviation estimate, no shift."""
        count, own = np.asarray(labels.count, dtype=float), labels.own
        if not np.isfinite(self.deviation_var) or not own.any():
            return np.zeros(len(count)), np.zeros(len(count))
        within, inverse_size = self._noise(self._check_sizes(sizes, count), len(count), codes)
        # the point takes the method-of-moments estimate (0 if negative), not the posterior mean the draws
        # integrate over: the posterior overstates a small deviation variance several times (docs/calibration.md),
        # and a weight from it would move cells the line fits by their labels' noise
        weight = _label_weight(np.array([max(self.deviation_estimate, 0.0)]), within, count, inverse_size)
        weight = np.where(own, weight, 0.0)
        return weight * np.where(own, labels.residual, 0.0), weight

    def _noise(self, sizes: np.ndarray | None, n_cells: int,
               codes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Per cell: the labels' variance within a cell (its group's with ``codes``, where the group has one; else
        the pooled one; 0 when unknown) and ``1 / N`` (0 without sizes: the target is then the system's expected
        human score)."""
        within = np.full(n_cells, self.within_var if np.isfinite(self.within_var) else 0.0)
        if codes is not None:
            codes = np.asarray(codes)
            if codes.shape != (n_cells,):
                raise InputError(f"codes: one group code per cell ({n_cells}), got shape {codes.shape}",
                                 argument="codes", value=codes)
            for code, var in self.group_within_var:
                within[codes == code] = var
        return within, (1.0 / sizes if sizes is not None else np.zeros(n_cells))

    @staticmethod
    def _check_sizes(sizes: np.ndarray | None, means: np.ndarray) -> np.ndarray | None:
        if sizes is None:
            return None
        sizes = np.asarray(sizes, dtype=float)
        if sizes.shape != np.shape(means) or not (sizes > 0).all():
            raise InputError(f"sizes: one positive segment count per cell ({len(means)}), got {sizes!r}",
                             argument="sizes", value=sizes)
        return sizes


@dataclass(frozen=True)
class CellLabels:
    """Each cell's own labels: ``count`` (labelled rows), ``residual`` (their mean of label minus calibrated
    value; any value where ``count`` is 0) and ``spread`` (their mean of ``x - m_s``, the score's distance from
    the system's mean score, which the within-system slope multiplies)."""

    count: np.ndarray
    residual: np.ndarray
    spread: np.ndarray

    @property
    def own(self) -> np.ndarray:
        """Which cells' own labels enter their estimate: those with at least :data:`MIN_OWN_LABELS` of them."""
        return np.asarray(self.count, dtype=float) >= MIN_OWN_LABELS


# a cell's own labels count from this many on: the mean of fewer, and their spread, are too noisy to lean on (a
# held-out system's own labels ranked methods poorly as a yardstick at 2-8 labels per system, decision/_decide.py;
# on TED's skewed MQM at 2 labels per system, weights from a chance deviation estimate made wrong verdicts,
# docs/calibration.md "A cell's own labels")
MIN_OWN_LABELS = 10


def _inverse(count: np.ndarray) -> np.ndarray:
    count = np.asarray(count, dtype=float)
    return np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)


def _label_weight(var: np.ndarray, within: np.ndarray, count: np.ndarray, inverse_size: np.ndarray) -> np.ndarray:
    """``lam = (v + w/N) / (v + w/n)``: the weight of a cell's own labels' residual in its prediction (0 without
    labels; 0 where the cell neither deviates nor has noise, as the line is then exact)."""
    total = var + within * inverse_size
    observed = var + within * _inverse(count)
    ok = (count > 0) & (observed > 0)
    return np.divide(total, observed, out=np.zeros(np.broadcast(total, observed).shape), where=ok)


NOISE = ("group", "pooled")


@dataclass(frozen=True)
class _Moments:
    estimate: float
    se: float
    within: float  # pooled over the groups
    group_within: tuple[tuple[int, float], ...]  # (group code, its own within-cell variance) where it has one
    n_cells: int
    n_labels: int


def deviation_variance(residuals: np.ndarray, groups: np.ndarray, cells: np.ndarray,
                       covariate: np.ndarray | None = None, *, noise: str = "group"
                       ) -> tuple[float, float, float, int, int]:
    """Method-of-moments variance of cell means around their group's mean, within-cell noise subtracted.

    ``residuals``: label minus calibrated value of each labelled row; ``groups``/``cells``: integer codes
    (cells nested in groups). ``covariate``: per row, the cell's value of the covariate the line's between-cell
    slope was fitted on (the system's mean score; constant within a cell). The slope was fitted on these labels, so
    it took up one cell-level degree of freedom of their spread: the label-weighted regression of the cell means on
    the covariate, within groups, is taken out again and the moments are those of what is left,
    ``E[SS] = (df_between - 1) s2_within + (coef - h) sigma_delta^2`` with ``h = sum n^2 u^2 / sum n u^2`` (``u``: the
    covariate around its group's label-weighted mean). Without it the estimate is low by about
    ``(s2_within + h sigma_delta^2) / coef``: in worlds of 3 groups of 4 systems, -4.9 on average with no deviation
    and 17.7 with a deviation variance of 25 (tests/test_cell_intervals.py).

    ``noise="group"`` (the default): each group's labels have their own variance within a cell, ``s2_g`` (language
    pairs are judged by different raters: on WMT21's Wikipedia pairs raw DA varies within a cell with a median sd of
    13.6 in hi-bn and 34.3 in xh-zu), and ``E[SS_between] = sum_g (cells_g - 1 - h_g) s2_g + (coef - h)
    sigma_delta^2`` (``h_g``: the group's share of the slope's degree of freedom, its cells' ``sum n u^2`` over all
    cells'). One pooled variance in its place (``noise="pooled"``, the estimator before this release) weighs the
    groups by their labels, where the noise enters ``SS_between`` by their systems: it subtracts too little where
    the noisy groups have the most systems, and too much where they have the fewest (on those Wikipedia pairs, 100
    labels per pair, the estimate averaged 21.2 against 29.9 from every judged segment; docs/calibration.md). A
    group whose labelled cells have one label each has no variance of its own and takes the pooled one.

    Returns ``(estimate, standard_error, within_var, n_cells, n_labels)`` (``within_var``: pooled over the groups);
    NaN estimate when no group has two labelled cells or no cell has two labels (or, with ``covariate``, the cells
    leave no degree of freedom)."""
    m = _moments(residuals, groups, cells, covariate, noise)
    return m.estimate, m.se, m.within, m.n_cells, m.n_labels


def _moments(residuals: np.ndarray, groups: np.ndarray, cells: np.ndarray, covariate: np.ndarray | None,
             noise: str) -> _Moments:
    if noise not in NOISE:
        raise InputError(f"noise={noise!r}: use one of {', '.join(NOISE)}", argument="noise", value=noise)
    r = np.asarray(residuals, dtype=float)
    ok = np.isfinite(r)
    u_row = None
    if covariate is not None:
        u_row = np.asarray(covariate, dtype=float)
        if u_row.shape != r.shape or not np.isfinite(u_row[ok]).all():
            raise InputError(f"covariate: one finite value per residual ({r.shape[0]}), got shape {u_row.shape}",
                             argument="covariate", value=covariate)
        u_row = u_row[ok]
    r, groups, cells = r[ok], np.asarray(groups)[ok], np.asarray(cells)[ok]
    _, cell = np.unique(cells, return_inverse=True)
    n_cells = int(cell.max()) + 1 if len(cell) else 0
    if n_cells == 0:
        return _Moments(math.nan, math.nan, math.nan, (), 0, 0)
    n = np.bincount(cell, minlength=n_cells).astype(float)
    cell_mean = np.bincount(cell, r, minlength=n_cells) / n
    group_of_cell = np.zeros(n_cells, dtype=np.int64)
    group_of_cell[cell] = groups
    codes, g = np.unique(group_of_cell, return_inverse=True)
    n_groups = len(codes)
    k = np.bincount(g, weights=n)  # labels per group
    group_mean = np.bincount(g, n * cell_mean) / k
    ss_within = np.bincount(g[cell], (r - cell_mean[cell]) ** 2, minlength=n_groups)
    df_within = np.bincount(g[cell], minlength=n_groups) - np.bincount(g, minlength=n_groups)
    # each group's multiple of its noise variance in E[SS_between]: its cells less one
    share = (np.bincount(g, minlength=n_groups) - 1).astype(float)
    df_between = int(share.sum())
    ss_between = float((n * (cell_mean - group_mean[g]) ** 2).sum())
    coef = float((k - np.bincount(g, n**2) / k).sum())  # E[SS_between] = noise + coef * sigma_delta^2
    if u_row is not None:
        level = np.zeros(n_cells)
        level[cell] = u_row
        u = level - (np.bincount(g, n * level) / k)[g]  # around the group's label-weighted mean
        spread = float((n * u**2).sum())
        if spread > 1e-12 * float((n * level**2).sum()):
            # the projection on u of the label-weighted cell means takes h sigma_delta^2 of the deviations and one
            # degree of freedom of noise, each group's noise in proportion to its share of sum n u^2
            # (Var(sum n u y) = sigma_delta^2 sum n^2 u^2 + sum_g s2_g sum_(cells of g) n u^2)
            ss_between -= float((n * u * cell_mean).sum()) ** 2 / spread
            coef -= float((n**2 * u**2).sum()) / spread
            share -= np.bincount(g, n * u**2, minlength=n_groups) / spread
            df_between -= 1
    total_df_within = int(df_within.sum())
    if total_df_within < 1 or df_between < 1:
        return _Moments(math.nan, math.nan, math.nan, (), n_cells, len(r))
    pooled = float(ss_within.sum()) / total_df_within
    own = df_within >= 1 if noise == "group" else np.zeros(n_groups, dtype=bool)
    s2 = np.where(own, ss_within / np.maximum(df_within, 1), pooled)
    estimate = (ss_between - float((share * s2).sum())) / coef
    # normal-theory variance of the ANOVA estimator (each group's mean square between as with its average cell
    # size), and of the noise subtracted: each own s2_g from its df, the pooled one from all of them
    n_bar = coef / df_between
    var_between = 2.0 * float((share * (s2 + n_bar * max(estimate, 0.0)) ** 2).sum())
    var_noise = 2.0 * float((share[own] ** 2 * s2[own] ** 2 / df_within[own]).sum()) \
        + 2.0 * float(share[~own].sum()) ** 2 * pooled**2 / total_df_within
    group_within = tuple((int(c), float(v)) for c, v, o in zip(codes, s2, own, strict=True) if o)
    return _Moments(float(estimate), float(math.sqrt((var_between + var_noise) / coef**2)), pooled, group_within,
                    n_cells, len(r))


def cell_uncertainty(model: Any, residuals: np.ndarray | None = None, groups: np.ndarray | None = None,
                     cells: np.ndarray | None = None, *, covariate: np.ndarray | None = None,
                     one_cell_per_group: bool = False) -> CellUncertainty:
    """The uncertainty of ``model``'s (a fitted :class:`~xleval.calibration.AnchoredCalibrator`)
    calibrated cell means. ``residuals`` (label minus calibrated value per labelled row) with their
    ``groups`` and ``cells`` codes give the cells' deviation from the common line (``covariate``: each row's
    system mean score, on which the line's between-system slope was fitted, :func:`deviation_variance`, each
    group's labels with their own variance within a cell: ``group_within_var``, by ``groups``' codes); without
    them the deviation is left out and a note says the intervals then cover only the map's uncertainty.
    ``one_cell_per_group``: each group is one cell (no system column), so its offset is its whole
    deviation and there is none to add."""
    cov = np.nan_to_num(np.asarray(model.slopes_["cov"], dtype=float))
    slope_cov = ((float(cov[0, 0]), float(cov[0, 1])), (float(cov[1, 0]), float(cov[1, 1])))
    notes: list[str] = []
    if one_cell_per_group:
        return CellUncertainty(0.0, 0.0, 0.0, math.nan, 0, 0, slope_cov)
    if residuals is None or groups is None or cells is None:
        moments = _Moments(math.nan, math.nan, math.nan, (), 0, 0)
    else:
        moments = _moments(residuals, groups, cells, covariate, "group")
    estimate, se = moments.estimate, moments.se
    if not np.isfinite(estimate):
        needs = ("in at least two systems of a group" if covariate is None else
                 "in more systems than one per group and one more, which the line's between-system slope takes up")
        notes.append(f"the systems' deviations from the common line could not be estimated (needs human labels "
                     f"{needs}, two in some system): the calibrated intervals cover only the map's uncertainty and "
                     "test-set sampling, and are too narrow for the human means")
        used = math.nan
    else:
        used = _posterior_mean(estimate, se)
    return CellUncertainty(used, estimate, se, moments.within, moments.n_cells, moments.n_labels, slope_cov,
                           notes=tuple(notes), group_within_var=moments.group_within)


N_GRID = 4001  # points of the grid of sigma_delta on which its posterior is computed


def _posterior_grid(estimate: float, se: float) -> tuple[np.ndarray, np.ndarray]:
    """The posterior of the deviation sd ``s`` under a flat prior on ``s >= 0`` (module docstring): a grid of
    ``s`` where ``s^2`` is within 10 standard errors of the estimate (from 0 if that reaches it), and its
    normalised cumulative distribution (trapezoids)."""
    low, top = math.sqrt(max(estimate - 10.0 * se, 0.0)), math.sqrt(max(estimate, 0.0) + 10.0 * se)
    s = np.linspace(low, top, N_GRID)
    density = np.exp(-0.5 * ((s**2 - estimate) / se) ** 2 + 0.5 * ((max(estimate, 0.0) - estimate) / se) ** 2)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(s))])
    return s, cdf / cdf[-1]


def _posterior_mean(estimate: float, se: float) -> float:
    """Posterior mean of ``sigma_delta^2`` (flat prior on the sd; module docstring)."""
    if not se > 0:
        return max(estimate, 0.0)
    s, cdf = _posterior_grid(estimate, se)
    mid = 0.5 * (s[1:] + s[:-1])
    return float((mid**2 * np.diff(cdf)).sum())


def _posterior_draws(estimate: float, se: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of ``sigma_delta^2`` from its posterior (inverse distribution function on the grid)."""
    if not se > 0:
        return np.full(n, max(estimate, 0.0))
    s, cdf = _posterior_grid(estimate, se)
    return np.interp(rng.random(n), cdf, s) ** 2


def _map_error_draws(model: Any, groups: list[str], means: np.ndarray, n_draws: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Joint normal draws of (offset error of the cell's group) + (slope errors) x (distance of the cell
    from its group's labelled centre), as :meth:`AnchoredCalibrator.interval` has them one at a time; and the
    draws of the within-system slope's error (one per draw)."""
    labels = list(dict.fromkeys(groups))
    at = {g: j for j, g in enumerate(labels)}
    pooled = model.pooled_
    shared_var = _finite(pooled.get("mean_var", 0.0))
    own_sd, shared_coef, centre = np.empty(len(labels)), np.empty(len(labels)), np.empty((len(labels), 2))
    for j, g in enumerate(labels):
        entry = model.groups_.get(g, pooled)
        weight = _finite(entry.get("weight", 0.0 if entry is pooled else 1.0))
        shared_coef[j] = 1.0 - weight
        own_sd[j] = math.sqrt(max(_finite(entry["offset_var"]) - shared_coef[j] ** 2 * shared_var, 0.0))
        centre[j] = np.asarray(entry["centre"], dtype=float)
    index = np.array([at[g] for g in groups], dtype=np.int64)
    cov = used_slope_cov(model)
    slope = rng.multivariate_normal(np.zeros(2), cov, size=n_draws, method="eigh")  # (n_draws, 2)
    offsets = rng.standard_normal((n_draws, len(labels))) * own_sd \
        + np.outer(rng.standard_normal(n_draws), shared_coef * math.sqrt(shared_var))
    d_between = means - centre[index, 0]
    d_within = -centre[index, 1]  # a cell's mean of (x - m_s) is 0
    return offsets[:, index] + np.outer(slope[:, 0], d_between) + np.outer(slope[:, 1], d_within), slope[:, 1]


def used_slope_cov(model: Any) -> np.ndarray:
    """Covariance of the slopes as used, ``(B_used, C)``: ``B_used = C + w (B - C)`` is the James-Stein
    shrunk between-system slope, whose error given ``C`` has the normal-normal posterior variance
    ``w Var(B - C)`` (not ``Var(B)``: a between slope the labels cannot tell from ``C`` is ``C``, with ``C``'s
    error). ``w = 1`` (no shrinkage, or a format-2 file) gives the fitted covariance back."""
    cov = np.nan_to_num(np.asarray(model.slopes_["cov"], dtype=float))
    w = model.slopes_.get("between_weight", 1.0)
    w = 1.0 if w is None or not math.isfinite(float(w)) else float(w)
    if w >= 1.0:
        return cov
    var_c, cov_bc = cov[1, 1], cov[0, 1]
    var_d = max(cov[0, 0] + var_c - 2 * cov_bc, 0.0)
    cross = cov_bc - var_c  # Cov(B - C, C)
    var_b = max(var_c + w * var_d + 2 * w * cross, 0.0)
    cov_b_c = var_c + w * cross
    return np.array([[var_b, cov_b_c], [cov_b_c, var_c]])


def _finite(value: Any) -> float:
    value = float(value)
    return value if math.isfinite(value) else 0.0
