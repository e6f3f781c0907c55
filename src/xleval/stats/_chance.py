"""Chance baselines: the expected value of a meta-evaluation statistic for an uninformative metric.

"Uninformative" means the metric's own scores, assigned at random: its system scores shuffled
over the systems (system-level statistics, SPA), or its scores of one segment shuffled over the
systems that have a human score there (segment-level acc-t). The baseline keeps the human ties and
the metric's ties, which is what makes it differ from 0.5 (mt-metrics-eval issue 14 asks for it).

* ``pearson``, ``spearman``, ``kendall``: 0 exactly (the mean over all relabellings of the
  covariance / of concordant minus discordant pairs is 0, and the denominators do not change).
* ``pairwise_accuracy`` (acc23 with exact ties, mt-metrics-eval's ``Agreement``): a random pair of
  positions gets a random pair of the metric's values, tied with probability ``tau_m`` (the share
  of the metric's tied pairs), so ``E = (1 - t_h)(1 - tau_m) / 2 + t_h tau_m`` with ``t_h`` the
  share of human-tied pairs (per group, pooled by pairs, for the global accuracy; with ``pairs="cross"``
  over the pairs of systems from different groups, the metric shuffled among all the systems given: the
  cross-group accuracy).
* ``spa``: exact over relabellings: each system pair (i, j) meets a uniformly random ordered pair
  (k, l) of the metric's systems, so ``E = 1 - mean_{i<j} mean_{k != l} |p^h_ij - p^m_kl|`` with the
  metric's p-values for both orders of every pair (same permutations as SPA itself).
* ``acc_t`` (tie-calibrated acc23 averaged by item): no closed form (epsilon is optimised on the
  shuffled metric too, so the baseline is at least the exact-ties value): simulated by shuffling
  the metric within items ``n_simulations`` times (seeded); the result carries the standard error.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval._base.result import Result, array_field
from xleval._base.seeding import resolve_seed
from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._pairwise import _calibrate, _unit_pairs
from xleval.stats._spa import N_RESAMPLES, SEED, _check_seed, _float32_range, sign_matrix

__all__ = ["ChanceBaseline", "chance_baseline", "CHANCE_STATISTICS"]

CHANCE_STATISTICS = ("pearson", "spearman", "kendall", "pairwise_accuracy", "spa", "acc_t")


@dataclass(frozen=True, eq=False)
class ChanceBaseline(Result):
    """The expected statistic of an uninformative metric. ``method``: ``analytic``,
    ``exact over relabellings`` or ``simulation`` (then ``standard_error`` and ``n_simulations``)."""

    statistic: str
    value: float
    method: str
    standard_error: float | None = None
    n_simulations: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    distribution: np.ndarray | None = array_field()


def _tie_share(x: np.ndarray, mask: np.ndarray | None = None) -> tuple[float, int]:
    iu, ju = np.triu_indices(len(x), 1)
    if mask is not None:
        keep = mask[iu, ju]
        iu, ju = iu[keep], ju[keep]
    return (float(np.mean(x[iu] == x[ju])) if iu.size else 0.0), int(iu.size)


def chance_baseline(statistic: str, human: Any = None, metric: Any = None, *, groups: Any = None,
                    pairs: str = "within", n_simulations: int = 200, random_state: int = 0,
                    spa_resamples: int = N_RESAMPLES, spa_random_state: int = SEED) -> ChanceBaseline:
    """Expected ``statistic`` of ``metric`` shuffled at random against ``human`` (see the module doc).

    ``human``/``metric``: system scores (n_systems,) or (n_systems, n_segments) matrices (row mean
    = system score) for ``pairwise_accuracy``; complete (n_systems, n_segments) matrices for
    ``spa``; (n_systems, n_segments) for ``acc_t`` (human NaN = not judged). Without ``metric``,
    ``pairwise_accuracy`` assumes a metric without ties. Correlations need no data (0).
    ``pairs`` (``pairwise_accuracy``): ``within`` each of ``groups`` (the metric shuffled within the group),
    or ``cross`` (pairs of systems of different ``groups``, the metric shuffled among all of them).
    """
    v.check_choice(statistic, "statistic", CHANCE_STATISTICS)
    if statistic in ("pearson", "spearman", "kendall"):
        return ChanceBaseline(statistic=statistic, value=0.0, method="analytic")
    if human is None:
        raise InputError(f"chance_baseline({statistic!r}) needs the human scores (human=)", argument="human")
    if statistic == "pairwise_accuracy":
        v.check_choice(pairs, "pairs", ("within", "cross"))
        return _pairwise(human, metric, groups, pairs)
    if metric is None:
        raise InputError(f"chance_baseline({statistic!r}) needs the metric's scores (metric=): the baseline shuffles "
                         "them", argument="metric")
    if statistic == "spa":
        return _spa(human, metric, spa_resamples, spa_random_state)
    return _acc_t(human, metric, n_simulations, random_state)


def _system_scores(x: Any, name: str) -> np.ndarray:
    arr = v.as_float_array(x, name, ndim=(1, 2), allow_nan=True)
    if arr.ndim == 2:
        with np.errstate(invalid="ignore"):
            arr = np.nanmean(arr, axis=1) if name == "human" else arr.mean(axis=1)
    if not np.isfinite(arr).all():
        raise InputError(f"{name} has systems without a score; drop them", argument=name)
    return arr


def _pairwise(human: Any, metric: Any, groups: Any, pairs: str = "within") -> ChanceBaseline:
    h = _system_scores(human, "human")
    m = None if metric is None else _system_scores(metric, "metric")
    if m is not None and m.shape != h.shape:
        raise InputError(f"metric has {m.shape[0]} systems but human has {h.shape[0]}", argument="metric")
    labels = np.zeros(len(h), dtype=np.intp) if groups is None else v.group_codes(groups, len(h), "groups")[0]
    if pairs == "cross":  # one shuffle over every system; the human ties counted on the cross pairs only
        units = [(np.ones(len(h), dtype=bool), labels[:, None] != labels[None, :])]
    else:
        units = [(labels == g, None) for g in np.unique(labels)]
    total, n_all = 0.0, 0
    for rows, mask in units:
        t_h, n_pairs = _tie_share(h[rows], mask)
        t_m = _tie_share(m[rows])[0] if m is not None else 0.0
        total += n_pairs * ((1 - t_h) * (1 - t_m) / 2 + t_h * t_m)
        n_all += n_pairs
    if n_all == 0:
        raise InputError("no pair of systems to compare (each group has one system, or pairs='cross' was given "
                         "one group)", argument="human")
    note = () if m is not None else ("metric without ties assumed (no metric= given)",)
    return ChanceBaseline(statistic="pairwise_accuracy", value=total / n_all, method="analytic", notes=note)


def _full_pvalues(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """p-values of pce.py for both orders of every pair (diagonal NaN), float32 as there."""
    seg = np.ascontiguousarray(_float32_range(scores), dtype=np.float32)  # C order: pce.py's summation order
    totals = np.sum(seg, axis=1)
    partial = np.matmul(signs, seg.T)
    n = len(seg)
    out = np.full((n, n), np.nan)
    for i in range(n):
        null = partial[:, [i]] - partial
        hits = np.count_nonzero(null >= (totals[i] - totals)[None, :], axis=0) / len(signs)
        out[i] = hits
        out[i, i] = np.nan
    return out


def _spa(human: Any, metric: Any, n_resamples: int, seed: int) -> ChanceBaseline:
    from xleval.stats._spa import _matrix

    h, m = _matrix(human, "human"), _matrix(metric, "metric")
    if h.shape != m.shape:
        raise InputError(f"metric and human must have the same shape; got {m.shape} and {h.shape}", argument="metric")
    signs = sign_matrix(v.check_n_resamples(n_resamples), h.shape[1], _check_seed(seed))
    ph, pm = _full_pvalues(h, signs), _full_pvalues(m, signs)
    iu, ju = np.triu_indices(len(h), 1)
    off = ~np.eye(len(h), dtype=bool)
    expected = 1.0 - float(np.mean(np.abs(ph[iu, ju][:, None] - pm[off][None, :])))
    return ChanceBaseline(statistic="spa", value=expected, method="exact over relabellings of the metric's systems")


def _acc_t(human: Any, metric: Any, n_simulations: int, random_state: int) -> ChanceBaseline:
    h = v.as_float_array(human, "human", ndim=2, allow_nan=True)
    m = v.as_float_array(metric, "metric", ndim=2, allow_nan=True)
    if h.shape != m.shape:
        raise InputError(f"metric and human must have the same shape; got {m.shape} and {h.shape}", argument="metric")
    keep = np.isfinite(h)
    if not np.isfinite(m[keep]).all():
        raise InputError("metric has missing scores where human scores exist; drop those cells", argument="metric")
    n_simulations = v.check_n_resamples(n_simulations, minimum=2)
    seed = resolve_seed(random_state)
    rng = np.random.default_rng(seed)
    cols = np.nonzero(keep.T)  # (segment, system) pairs, grouped by segment
    items, rows = cols[0], cols[1]
    hv, mv = h[rows, items], m[rows, items]
    try:
        layout = _unit_pairs(items)
    except InputError:
        raise InputError("no segment has human scores for two systems", argument="human") from None
    dh = hv[layout.iu] - hv[layout.ju]
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]])
    bounds = np.r_[starts, items.size]
    values = np.empty(n_simulations)
    for s in range(n_simulations):
        shuffled = mv.copy()
        for b, e in itertools.pairwise(bounds):
            shuffled[b:e] = shuffled[b:e][rng.permutation(e - b)]
        dm = shuffled[layout.iu] - shuffled[layout.ju]
        eps = _calibrate(dm, dh, layout.weights)
        mtie, htie = np.abs(dm) <= eps, dh == 0
        good = (mtie & htie) | (~mtie & ~htie & (np.sign(dm) == np.sign(dh)))
        values[s] = float(good @ layout.weights)
    return ChanceBaseline(
        statistic="acc_t", value=float(values.mean()), method="simulation (metric shuffled within items)",
        standard_error=float(values.std(ddof=1) / np.sqrt(n_simulations)), n_simulations=n_simulations,
        random_state=seed, distribution=values)
