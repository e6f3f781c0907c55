"""Frozen result objects of the audit; ``to_dict()`` (JSON-safe: NaN/inf become None) comes from
the shared :class:`xleval._base.result.Result`."""
from __future__ import annotations

from dataclasses import dataclass

from xleval._base.result import Result

__all__ = ["ParserValidity", "Contrast", "StratumEffect", "DoseResponse", "FamilyInteraction",
           "RaterAgreement", "AnnotationAgreement"]


@dataclass(frozen=True, eq=False)
class ParserValidity(Result):
    """Share of responses of one model in one condition from which an answer letter was parsed."""

    model: str
    condition: str
    n: int
    n_valid: int
    rate: float
    threshold: float
    flagged: bool


@dataclass(frozen=True, eq=False)
class Contrast(Result):
    """One estimator's accuracy difference ``acc(condition_a) - acc(condition_b)`` for one model
    (or ``model="pooled"``), with its CI, p-value and the assumption it rests on.

    ``n_a``/``n_b`` are the items scored in each condition (equal, and paired, for paired
    estimators); ``n_unpaired`` counts items seen in only one of the two conditions (excluded
    from a paired estimator). ``discordant`` is (a right & b wrong, a wrong & b right) for
    paired per-model contrasts (McNemar's cells).
    """

    estimator: str
    model: str
    condition_a: str
    condition_b: str
    paired: bool
    invalid_policy: str
    acc_a: float
    acc_b: float
    estimate: float
    ci_low: float
    ci_high: float
    level: float
    p_value: float
    ci_method: str
    test: str
    n_a: int
    n_b: int
    n_unpaired: int = 0
    discordant: tuple[int, int] | None = None
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def excludes_zero(self) -> bool:
        return bool(self.ci_low > 0 or self.ci_high < 0)


@dataclass(frozen=True, eq=False)
class StratumEffect(Result):
    """A paired contrast restricted to one residual stratum (item-level, models averaged)."""

    stratum: str
    n_items: int
    estimate: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, eq=False)
class DoseResponse(Result):
    """The paired contrast within residual strata: ``contrast = delta_high - delta_low`` with
    its CI (bootstrap stratified by residual stratum) and the interaction test (two-sample
    permutation test of item-level differences, high vs low)."""

    estimator: str
    split: str
    threshold: float
    high: StratumEffect
    low: StratumEffect
    contrast: float
    ci_low: float
    ci_high: float
    level: float
    p_value: float
    test: str
    n_items_without_residual: int = 0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class FamilyInteraction(Result):
    """Does the paired contrast differ between model families? Logistic regression
    ``correct ~ condition * family`` with item-clustered robust covariance; Wald test of the
    interaction terms (log-odds scale). ``effects`` maps each family to its
    probability-scale contrast (items weighted equally, models averaged within family)."""

    estimator: str
    tested: bool
    grouping: str
    statistic: float | None
    df: int | None
    p_value: float | None
    test: str
    effects: dict[str, float]
    n_models: int
    n_groups: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class RaterAgreement(Result):
    """Weighted Cohen's kappa of one pair of raters on the items both rated."""

    rater_a: str
    rater_b: str
    n_items: int
    kappa: float
    weights: str


@dataclass(frozen=True, eq=False)
class AnnotationAgreement(Result):
    """E2 calibration: agreement of Likert ratings on one dimension (weighted kappa per rater
    pair on the rating ``scale``, Krippendorff's alpha over all raters with missing ratings
    allowed)."""

    dimension: str
    n_items: int
    n_raters: int
    n_ratings: int
    scale: tuple[float, ...]
    pairs: tuple[RaterAgreement, ...]
    alpha_ordinal: float
    alpha_interval: float
    alpha_ci_low: float
    alpha_ci_high: float
    level: float
    kappa_target: float
    meets_target: bool
    notes: tuple[str, ...] = ()
