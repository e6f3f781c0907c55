"""Effect sizes for group differences: eta squared (with a stratified bootstrap CI),
Kruskal-Wallis (scipy) with epsilon squared, Cohen's d with a pooled standard deviation."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import scipy.stats as ss

from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._estimate import METHODS, estimate_from_distribution
from xleval.stats._results import Estimate, TestResult

__all__ = ["eta_squared", "kruskal_wallis", "cohens_d"]

MIN_GROUP = 5
_CHUNK_ELEMENTS = 20_000_000


def _groups(values: Any, groups: Any, minimum_groups: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = v.as_float_array(values, "values")
    codes, labels = v.group_codes(groups, len(x), "groups")
    if len(labels) < minimum_groups:
        raise InputError(f"need at least {minimum_groups} groups to compare; got {len(labels)} ({list(labels)})")
    return x, codes, labels


def _eta_from_sums(s: np.ndarray, q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """eta^2 = SS_between / SS_total from per-group sums, sums of squares and counts (last axis)."""
    total_s, total_n = s.sum(axis=-1), c.sum(axis=-1)
    correction = total_s**2 / total_n
    ss_total = q.sum(axis=-1) - correction
    with np.errstate(invalid="ignore", divide="ignore"):
        ss_between = (s**2 / c).sum(axis=-1) - correction
        return np.where(ss_total > 1e-12 * np.maximum(q.sum(axis=-1), 1e-300), ss_between / ss_total, np.nan)


def eta_squared(
    values: Any,
    groups: Any,
    *,
    level: float = 0.95,
    n_resamples: int = 1000,
    method: str = "percentile",
    random_state: Any = None,
) -> Estimate:
    """Share of the variance of ``values`` explained by ``groups`` (one-way ANOVA eta squared).

    CI: bootstrap stratified by group (each group keeps its size; groups with < 5 rows are
    flagged unreliable). p_value: the one-way ANOVA F test (scipy.stats.f_oneway). Note eta
    squared is biased upward when groups are small; its CI, not the point value, tells whether
    a difference is real.
    """
    x, codes, labels = _groups(values, groups)
    level = v.check_level(level)
    v.check_choice(method, "method", METHODS)
    n_resamples = v.check_n_resamples(n_resamples, minimum=2)
    rng, seed = v.make_rng(random_state)
    g = len(labels)
    c = np.bincount(codes, minlength=g).astype(float)
    s = np.bincount(codes, weights=x, minlength=g)
    q = np.bincount(codes, weights=x * x, minlength=g)
    point = float(_eta_from_sums(s, q, c))
    notes = [f"unreliable: group {lab.item() if isinstance(lab, np.generic) else lab!r} has {int(k)} rows "
             f"(< {MIN_GROUP})" for lab, k in zip(labels, c, strict=True) if k < MIN_GROUP]
    dist = _eta_resamples(x, codes, g, n_resamples, rng)

    def jackknife() -> np.ndarray:
        # leave row i out: its group's sums lose x_i, x_i^2 and one count
        s_j = np.broadcast_to(s, (len(x), g)).copy()
        q_j, c_j = np.broadcast_to(q, (len(x), g)).copy(), np.broadcast_to(c, (len(x), g)).copy()
        rows = np.arange(len(x))
        s_j[rows, codes] -= x
        q_j[rows, codes] -= x * x
        c_j[rows, codes] -= 1
        with np.errstate(invalid="ignore", divide="ignore"):
            c_safe = np.where(c_j == 0, np.inf, c_j)  # an emptied group contributes nothing
            return _eta_from_sums(s_j, q_j, c_safe)

    if np.isnan(point):
        notes.append("unreliable: values are constant; eta squared undefined")
    p = _anova_p(x, codes, g)
    est = estimate_from_distribution(point, dist, n=len(x), level=level, method=method,
                                     label="eta_squared-bootstrap-stratified", random_state=seed, notes=notes,
                                     jackknife=jackknife)
    return replace(est, p_value=p)


def _eta_resamples(x: np.ndarray, codes: np.ndarray, g: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Per resample, per group: sums and sums of squares of a within-group resample."""
    s = np.empty((n_resamples, g))
    q = np.empty((n_resamples, g))
    c = np.broadcast_to(np.bincount(codes, minlength=g).astype(float), (n_resamples, g))
    for k in range(g):
        xg = x[codes == k]
        step = max(1, _CHUNK_ELEMENTS // len(xg))
        for start in range(0, n_resamples, step):
            stop = min(n_resamples, start + step)
            draw = xg[rng.integers(0, len(xg), (stop - start, len(xg)))]
            s[start:stop, k] = draw.sum(axis=1)
            q[start:stop, k] = (draw * draw).sum(axis=1)
    return _eta_from_sums(s, q, c)


def _anova_p(x: np.ndarray, codes: np.ndarray, g: int) -> float | None:
    samples = [x[codes == k] for k in range(g)]
    if len(x) - g < 1 or np.ptp(x) == 0 or all(np.ptp(s) == 0 for s in samples):
        return None  # F undefined (no residual degrees of freedom or no within-group variance)
    return float(ss.f_oneway(*samples).pvalue)


def kruskal_wallis(values: Any, groups: Any) -> TestResult:
    """Kruskal-Wallis H test (scipy.stats.kruskal, tie-corrected) that ``values`` have the same
    distribution in every group. ``effect_size`` is epsilon squared ``H / (n - 1)``
    (Tomczak & Tomczak 2014): the rank-based share of variance explained by the groups."""
    x, codes, labels = _groups(values, groups)
    g = len(labels)
    if np.ptp(x) == 0:
        return TestResult(statistic=float("nan"), p_value=float("nan"), n=len(x), method="kruskal-wallis",
                          df=g - 1, notes=("unreliable: all values are identical; the test is undefined",))
    res = ss.kruskal(*[x[codes == k] for k in range(g)])
    return TestResult(statistic=float(res.statistic), p_value=float(res.pvalue), n=len(x), method="kruskal-wallis",
                      df=g - 1, effect_size=float(res.statistic) / (len(x) - 1))


def cohens_d(a: Any, b: Any, *, level: float = 0.95) -> Estimate:
    """Standardised mean difference ``(mean(a) - mean(b)) / pooled sd`` (Cohen's d).

    The pooled sd is ``sqrt(((n_a-1) var_a + (n_b-1) var_b) / (n_a + n_b - 2))``; the CI uses the
    large-sample variance ``(n_a+n_b)/(n_a n_b) + d^2 / (2 (n_a+n_b))`` (Hedges & Olkin 1985).
    """
    xa, xb = v.as_float_array(a, "a"), v.as_float_array(b, "b")
    v.check_min_size(xa, 2, "a")
    v.check_min_size(xb, 2, "b")
    level = v.check_level(level)
    na, nb = len(xa), len(xb)
    pooled = np.sqrt(((na - 1) * xa.var(ddof=1) + (nb - 1) * xb.var(ddof=1)) / (na + nb - 2))
    notes: list[str] = []
    if pooled == 0:
        notes.append("unreliable: both samples are constant; d undefined")
        d = float("nan")
    else:
        d = float((xa.mean() - xb.mean()) / pooled)
    se = float(np.sqrt((na + nb) / (na * nb) + d**2 / (2 * (na + nb))))
    z = ss.norm.ppf(0.5 + level / 2)
    if min(na, nb) < MIN_GROUP:
        notes.append(f"unreliable: a sample has fewer than {MIN_GROUP} values")
    return Estimate(estimate=d, ci_low=float(d - z * se), ci_high=float(d + z * se), level=level, n=na + nb,
                    method="cohens_d-pooled-normal", standard_error=se, notes=tuple(notes))
