"""Frozen result objects of xleval.fairness; each serialises to a JSON-safe dict with ``to_dict()``.

Nested statistics are the engine's own results (:class:`xleval.stats.Estimate`,
:class:`xleval.stats.CorrelationResult`), so the report renders one kind of object everywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from xleval._base.jsonable import to_jsonable
from xleval._base.result import Result
from xleval.stats import CorrelationResult, Estimate

__all__ = [
    "SampleSize",
    "DetectableEffect",
    "LanguageGap",
    "GapSummary",
    "Elasticity",
    "TypologyBias",
    "FairnessReport",
]


@dataclass(frozen=True, eq=False)
class SampleSize(Result):
    """Smallest number of test items that detects ``effect`` with ``power`` at level ``alpha``.

    ``n`` is items per language (per group); ``n_total`` counts every group the design needs
    (``2 n`` for two independent test sets, ``n`` for one-sample and paired designs).
    ``achieved_power`` is the power at ``n`` (always >= ``power``).
    """

    n: int
    n_total: int
    effect: float
    effect_kind: str
    design: str
    power: float
    achieved_power: float
    alpha: float
    alternative: str
    method: str
    discordant: float | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class DetectableEffect(Result):
    """Smallest effect a test set of ``n`` items per language detects with ``power`` at ``alpha``.

    For proportions with a ``baseline`` accuracy, ``other_low``/``other_high`` are the accuracies
    of the compared language that sit exactly that effect below/above the baseline, and
    ``difference`` = ``baseline - other_low`` in accuracy units.
    """

    effect: float
    effect_kind: str
    n: int
    design: str
    power: float
    alpha: float
    alternative: str
    method: str
    baseline: float | None = None
    other_low: float | None = None
    other_high: float | None = None
    difference: float | None = None
    discordant: float | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class LanguageGap(Result):
    """One language: its level, spread, and its gap to the reference language.

    ``ratio`` is ``mean / mean_ref`` and ``difference`` is ``mean - mean_ref`` (None for the
    reference itself or when no reference was given; ``ratio`` also None when the metric is not
    on a ratio scale). ``below_floor`` is True when the mean is on the wrong side of the
    usability floor; ``clearly_below_floor`` when its whole CI is.
    """

    language: str
    n: int
    mean: Estimate
    std: float
    worst_item: float
    ratio: Estimate | None = None
    difference: Estimate | None = None
    below_floor: bool | None = None
    clearly_below_floor: bool | None = None
    resource: float | None = None


@dataclass(frozen=True, eq=False)
class GapSummary(Result):
    """Across languages: the mean, worst and standard deviation (ddof=0, the population sd) of the
    language means, and the mean and worst ratio to the reference, each with a bootstrap CI."""

    mean: Estimate
    worst: Estimate
    std: Estimate
    mean_ratio: Estimate | None = None
    worst_ratio: Estimate | None = None
    mean_difference: Estimate | None = None
    worst_difference: Estimate | None = None


@dataclass(frozen=True, eq=False)
class Elasticity(Result):
    """Fit of ``performance = a + b ln(size)`` (or ``ln(performance) = a + b ln(size)`` when
    ``log_performance``) across languages.

    ``gain_per_doubling`` is ``b ln 2`` in metric units (log model: the factor ``2**b`` by
    which performance multiplies). ``multiplier`` is the factor by which the data must grow for
    ``target_gain``: ``exp(target_gain / b)`` (log model: ``target_gain ** (1 / b)``, the gain
    being a factor); its CI maps the slope's CI and is infinite when that CI reaches 0.
    A larger ``slope`` means more gain from each doubling of data.
    """

    slope: float
    slope_ci_low: float
    slope_ci_high: float
    intercept: float
    r_squared: float
    p_value: float
    n_languages: int
    level: float
    log_performance: bool
    size_log_base: str
    gain_per_doubling: float
    languages: tuple[str, ...]
    target_gain: float | None = None
    multiplier: float | None = None
    multiplier_ci_low: float | None = None
    multiplier_ci_high: float | None = None
    method: str = "ols-linregress"
    notes: tuple[str, ...] = ()

    def multiplier_for(self, gain: float) -> float:
        """Data multiplier for an additive ``gain`` (log model: a performance factor)."""
        return _multiplier(gain, self.slope, self.log_performance)


def _multiplier(gain: float, slope: float, log_performance: bool) -> float:
    if slope == 0 or not math.isfinite(slope):
        return float("inf")
    exponent = (math.log(gain) if log_performance else gain) / slope
    return math.exp(exponent) if exponent < 700 else float("inf")


@dataclass(frozen=True, eq=False)
class TypologyBias(Result):
    """Correlation between language performance and one typological feature, partial on
    ``ln(size)`` when ``controls`` says so. ``feature`` names the column; for a categorical
    column each level becomes a 0/1 indicator (``feature=level``)."""

    feature: str
    correlation: CorrelationResult
    controls: tuple[str, ...]
    n_languages: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class FairnessReport(Result):
    """The four dimensions of a multilingual performance gap for one model.

    ``design`` is ``independent`` (languages have their own test items; language-stratified
    bootstrap) or ``paired`` (parallel items; items resampled together across languages).
    """

    metric: str
    by: str
    reference: str | None
    higher_is_better: bool
    design: str
    floor: float | None
    languages: tuple[LanguageGap, ...]
    summary: GapSummary
    elasticity: Elasticity | None
    typology: tuple[TypologyBias, ...]
    level: float
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = ()

    def language_rows(self) -> list[dict[str, Any]]:
        """One flat record per language (for tables): level, ratio and difference with CIs."""
        rows = []
        for g in self.languages:
            row: dict[str, Any] = {"language": g.language, "n": g.n}
            for name in ("mean", "ratio", "difference"):
                est = getattr(g, name)
                row.update({name: None if est is None else est.estimate,
                            f"{name}_ci_low": None if est is None else est.ci_low,
                            f"{name}_ci_high": None if est is None else est.ci_high})
            row.update({"below_floor": g.below_floor, "resource": g.resource,
                        "unreliable": any(e is not None and e.unreliable for e in (g.mean, g.ratio, g.difference))})
            rows.append(to_jsonable(row))
        return rows

    def language(self, code: str) -> LanguageGap:
        """The entry of one language (by its normalised key)."""
        for gap in self.languages:
            if gap.language == code:
                return gap
        raise KeyError(code)
