"""Who and what the paired contrast depends on: residual strata (dose-response) and model
families (interaction).

Dose-response (section 6 of the translation-tax paper): item-level paired differences (models averaged within item)
split by the item's translation-residual rating at a pre-declared threshold (``residual >=
threshold`` is high) or at the median (``residual > median`` is high); the high-minus-low
contrast gets a bootstrap CI stratified by stratum and a two-sample permutation p-value,
which is the condition x stratum interaction test on the probability scale.

Model-family interaction: logistic regression ``correct ~ C(condition) * C(family)`` (statsmodels
GLM, binomial) on the paired rows, covariance clustered by item, Wald chi-square test of the
interaction terms jointly (log-odds scale).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as ss

from xleval.audit._estimators import EstimatorSpec, effective_correct, paired_table
from xleval.audit._results import DoseResponse, FamilyInteraction, StratumEffect
from xleval.stats import bootstrap, permutation_test_2samp

__all__ = ["dose_response", "family_interaction"]


def dose_response(frame: pd.DataFrame, spec: EstimatorSpec, *, threshold: float | None = None,
                  policy: str = "wrong", n_resamples: int = 2000, n_permutations: int = 9999,
                  level: float = 0.95, random_state: Any = 0) -> tuple[DoseResponse | None, tuple[str, ...]]:
    """The paired contrast of ``spec`` within residual strata; None (with a note) when there
    are no residual ratings or a stratum is empty."""
    if frame["residual"].notna().sum() == 0:
        return None, (f"dose-response: no 'residual' ratings given; {spec.key} is not split by residual",)
    diffs = item_differences(frame, spec, policy)
    residual = frame.groupby("item_id")["residual"].mean().reindex(diffs.index)
    unrated = int(residual.isna().sum())
    d, r = diffs[residual.notna()].to_numpy(), residual.dropna().to_numpy()
    split = "pre-declared threshold" if threshold is not None else "median split"
    cut = float(threshold) if threshold is not None else float(np.median(r)) if r.size else float("nan")
    high = r >= cut if threshold is not None else r > cut
    notes = [f"{unrated} paired item(s) without a residual rating left out"] if unrated else []
    if high.sum() < 2 or (~high).sum() < 2:
        return None, (f"dose-response: {int(high.sum())} high and {int((~high).sum())} low residual item(s) at "
                      f"{split} {cut:g}; need at least 2 in each stratum",)
    kw = dict(n_resamples=n_resamples, level=level, random_state=random_state)
    strata = high.astype(float)
    est = bootstrap((d, strata), _high_minus_low, strata=strata, **kw)
    test = permutation_test_2samp(d[high], d[~high], n_resamples=n_permutations, random_state=random_state)
    return DoseResponse(
        estimator=spec.key, split=split, threshold=cut, high=_stratum("high", d[high], kw),
        low=_stratum("low", d[~high], kw), contrast=est.estimate, ci_low=est.ci_low, ci_high=est.ci_high,
        level=level, p_value=test.p_value, test=test.method, n_items_without_residual=unrated,
        notes=tuple(notes) + est.notes,
    ), ()


def item_differences(frame: pd.DataFrame, spec: EstimatorSpec, policy: str) -> pd.Series:
    """Per item, the paired difference a - b averaged over the models that scored both."""
    paired, _ = paired_table(effective_correct(frame, policy), spec.condition_a, spec.condition_b)
    diff = paired[spec.condition_a] - paired[spec.condition_b]
    return diff.groupby(level="item_id").mean()


def _high_minus_low(d: np.ndarray, high: np.ndarray, axis: int) -> np.ndarray:
    low = 1 - high
    return np.sum(d * high, axis=axis) / np.sum(high, axis=axis) - np.sum(d * low, axis=axis) / np.sum(low, axis=axis)


def _stratum(name: str, d: np.ndarray, kw: dict) -> StratumEffect:
    est = bootstrap(d, "mean", **kw)
    return StratumEffect(name, int(d.size), est.estimate, est.ci_low, est.ci_high)


def family_interaction(frame: pd.DataFrame, spec: EstimatorSpec, *, policy: str = "wrong") -> FamilyInteraction:
    """Does the paired contrast of ``spec`` differ between model families (or between models
    when no ``model_family`` column was given)?"""
    rows = effective_correct(frame, policy)
    paired, _ = paired_table(rows, spec.condition_a, spec.condition_b)
    long = _long_rows(paired, frame, spec)
    n_models = long["model"].nunique()
    grouping = "model_family" if (frame["model_family"] != frame["model"]).any() else "model"
    effects = _family_effects(long)
    base = dict(estimator=spec.key, grouping=grouping, effects=effects, n_models=n_models, n_groups=len(effects))
    if n_models < 2:
        return FamilyInteraction(tested=False, statistic=None, df=None, p_value=None, test="none",
                                 notes=(f"only {n_models} model: no interaction test",), **base)
    if len(effects) < 2:
        return FamilyInteraction(tested=False, statistic=None, df=None, p_value=None, test="none",
                                 notes=("all models are in one family: no family interaction test",), **base)
    stat, df, p, notes = _wald_interaction(long)
    if grouping == "model":
        notes = ("no model_family column: the test is condition x model",) + notes
    return FamilyInteraction(tested=p is not None, statistic=stat, df=df, p_value=p,
                             test="logit-glm-cluster-wald", notes=notes, **base)


def _long_rows(paired: pd.DataFrame, frame: pd.DataFrame, spec: EstimatorSpec) -> pd.DataFrame:
    family = frame.drop_duplicates("model").set_index("model")["model_family"]
    flat = paired.reset_index()
    long = flat.melt(id_vars=["model", "item_id"], value_vars=[spec.condition_a, spec.condition_b],
                     var_name="condition", value_name="correct")
    long["treated"] = (long["condition"] == spec.condition_a).astype(float)
    long["family"] = long["model"].map(family).astype(str)
    return long


def _family_effects(long: pd.DataFrame) -> dict[str, float]:
    wide = long.pivot_table(index=["family", "item_id"], columns="treated", values="correct", aggfunc="mean")
    diff = (wide[1.0] - wide[0.0]).groupby(level="family").mean()
    return {str(k): float(v) for k, v in diff.items()}


def _wald_interaction(long: pd.DataFrame) -> tuple[float | None, int | None, float | None, tuple[str, ...]]:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    groups = pd.factorize(long["item_id"])[0]
    notes: list[str] = ["log-odds scale; items are clusters (robust covariance)"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = smf.glm("correct ~ treated * C(family)", data=long, family=sm.families.Binomial()).fit(
                cov_type="cluster", cov_kwds={"groups": groups})
        except Exception as exc:  # noqa: BLE001 - statsmodels raises several types on separation/singularity
            return None, None, None, tuple(notes) + (f"logistic regression failed ({type(exc).__name__}: {exc}); "
                                                     "no interaction test",)
    notes.extend(f"statsmodels: {w.message}" for w in caught)
    names = [n for n in fit.params.index if n.startswith("treated:")]
    b = fit.params[names].to_numpy()
    cov = fit.cov_params().loc[names, names].to_numpy()
    try:
        stat = float(b @ np.linalg.solve(cov, b))
    except np.linalg.LinAlgError:
        return None, None, None, tuple(notes) + ("interaction covariance is singular; no test",)
    if not np.isfinite(stat):
        return None, None, None, tuple(notes) + ("interaction statistic is not finite (separation?); no test",)
    return stat, len(names), float(ss.chi2.sf(stat, len(names))), tuple(notes)
