"""Frozen result objects shared by every statistic of xleval.

Each result carries its number, its uncertainty, the sample size and the method that produced
it, and serialises to a JSON-safe dict (floats, ints, None, str; NaN/inf become None) so the
report, the CLI and saved analyses render the same object.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._base.result import Result, array_field

__all__ = ["Estimate", "TestResult", "CorrelationResult", "PairwiseAccuracy"]


@dataclass(frozen=True, eq=False)
class Estimate(Result):
    """A point estimate with a confidence interval.

    ``distribution`` holds the bootstrap (or other resampled) values when there are any;
    ``notes`` explain anything a reader must know (tiny strata, degenerate resamples).
    """

    estimate: float
    ci_low: float
    ci_high: float
    level: float
    n: int
    method: str
    p_value: float | None = None
    standard_error: float | None = None
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    distribution: np.ndarray | None = array_field()


@dataclass(frozen=True, eq=False)
class TestResult(Result):
    """A hypothesis test: statistic, p-value and how it was obtained.

    ``exact`` is True when the null distribution was enumerated completely (small samples).
    ``effect_size`` is filled by tests that have a natural one (e.g. epsilon squared for
    Kruskal-Wallis).
    """

    __test__ = False  # not a pytest test class, despite the name

    statistic: float
    p_value: float
    n: int
    method: str
    alternative: str = "two-sided"
    df: float | None = None
    effect_size: float | None = None
    exact: bool | None = None
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    null_distribution: np.ndarray | None = array_field()


@dataclass(frozen=True, eq=False)
class CorrelationResult(Result):
    """A correlation coefficient with its CI, p-value and n.

    ``method`` is ``pearson``, ``spearman``, ``kendall_b``, ``kendall_c`` or ``partial_<m>``;
    ``ci_method`` says how the interval was made (``fisher``, ``fisher-fieller``,
    ``fisher-bonett-wright``, ``bootstrap-percentile``, ``bootstrap-bca``).
    """

    estimate: float
    ci_low: float
    ci_high: float
    level: float
    p_value: float
    n: int
    method: str
    ci_method: str
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    distribution: np.ndarray | None = array_field()


@dataclass(frozen=True, eq=False)
class PairwiseAccuracy(Result):
    """Pairwise ranking accuracy with ties (mt-metrics-eval's acc23).

    ``estimate = (concordant + ties_both) / n_pairs`` where metric ties are pairs whose metric
    scores differ by at most ``epsilon`` (chosen by tie calibration when ``tie_calibration``).
    ``n`` is the number of items, ``n_pairs`` the number of pairs counted (after the pair mask).
    With ``average_by`` ``"group"``/``"item"`` the estimate is the mean of the ``n_groups`` units'
    accuracies (the counts are totals over the units).
    """

    estimate: float
    n: int
    n_pairs: int
    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int
    epsilon: float
    tie_calibration: bool
    pairs: str
    method: str = "acc23"
    average_by: str = "none"
    n_groups: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    distribution: np.ndarray | None = array_field()
