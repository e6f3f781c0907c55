"""Translation-tax estimators E1, E3, E4 (sections 3 and 6 of "Translation tax is not a scalar") on a prepared
audit frame.

Every estimator is an accuracy difference ``acc(condition_a) - acc(condition_b)``. Paired
estimators (E1, E4) compare the same items; they use the item-level paired bootstrap of
:mod:`xleval.stats` (optionally clustered by subject) and, per model, the exact McNemar test
(statsmodels). E3 compares different items (translated vs natively authored) and is an
external-validity contrast: a bootstrap stratified by condition and a two-sample permutation
test. ``pooled`` contrasts average the models within each item and weight items equally.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from xleval.audit._results import Contrast
from xleval.exceptions import InputError
from xleval.stats import bootstrap, permutation_test_2samp, permutation_test_paired

__all__ = ["EstimatorSpec", "ESTIMATORS", "POLICIES", "effective_correct", "paired_table", "paired_contrast",
           "unpaired_contrast", "estimate"]

POLICIES = ("wrong", "exclude")


@dataclass(frozen=True)
class EstimatorSpec:
    """What an estimator contrasts, what it assumes, and how that assumption fails."""

    key: str
    name: str
    condition_a: str
    condition_b: str
    paired: bool
    assumption: str
    failure_modes: tuple[str, ...]
    not_identified: str


ESTIMATORS: dict[str, EstimatorSpec] = {
    "E1": EstimatorSpec(
        "E1", "back-translation gap", "source", "back_translated", True,
        "back-translation keeps the meaning, so the gap is the structural cue residue lost in the round trip",
        ("F1 back-translation noise adds semantic error: a noisy upper bound (TT + E_back)",
         "F2 naturalness loss: grammatical but unnatural English is penalised for reasons unrelated to cues",
         "F3 asymmetric difficulty: culture-specific items are harder to back-translate, biasing E_back by subject"),
        "a positive gap alone is not evidence of cue exploitation; it is one of several triangulating signals",
    ),
    "E3": EstimatorSpec(
        "E3", "native-control comparison", "translated", "native", False,
        "translated and natively authored items are comparable in difficulty, topic and register",
        ("different content distributions (e.g. regional exams vs academic subjects)",
         "items are not matched on difficulty, topic or register"),
        "an external-validity contrast, not an item-level counterfactual: item effects cannot be separated "
        "from content-distribution effects",
    ),
    "E4": EstimatorSpec(
        "E4", "naturalization contrast", "translated", "naturalized", True,
        "naturalization changes only the surface form (answer, options and content fixed), so the difference "
        "is the effect of translationese surface cues",
        ("the rewrite may change content or difficulty (check with human QC)",
         "prompt-construction errors in the rewrite pipeline",
         "parser failures concentrated in one condition"),
        "the latent translation tax itself; only the surface-form effect on these items and models",
    ),
}


def effective_correct(frame: pd.DataFrame, policy: str) -> pd.DataFrame:
    """Rows under an invalid-answer policy: ``wrong`` scores invalid parses 0, ``exclude`` drops them."""
    if policy not in POLICIES:
        raise InputError(f"invalid_policy must be one of {POLICIES}; got {policy!r}")
    if policy == "exclude":
        return frame[frame["valid"]]
    return frame.assign(correct=frame["correct"].fillna(0.0))


def paired_table(rows: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, pd.Series]:
    """(model, item) rows with both conditions -> columns a, b, subject; and per model the
    number of items seen in only one of the two conditions."""
    part = rows[rows["condition"].isin([a, b])]
    wide = part.pivot_table(index=["model", "item_id"], columns="condition", values="correct", aggfunc="first")
    wide = wide.reindex(columns=[a, b])
    complete = wide.notna().all(axis=1)
    unpaired = (~complete).groupby(level="model").sum().astype(int)
    subjects = part.drop_duplicates(["model", "item_id"]).set_index(["model", "item_id"])["subject"]
    paired = wide[complete].assign(subject=subjects.reindex(wide[complete].index))
    return paired, unpaired


def paired_contrast(a: np.ndarray, b: np.ndarray, *, clusters: Any = None, mcnemar: bool = True,
                    n_resamples: int = 2000, n_permutations: int = 9999, level: float = 0.95,
                    random_state: Any = 0) -> dict[str, Any]:
    """``mean(a) - mean(b)`` on paired items: paired bootstrap CI (clusters resampled whole when
    given) and an exact McNemar p-value (0/1 data, ``mcnemar=True``) or a paired sign-flip
    permutation p-value over clusters (or items)."""
    est = bootstrap(a - b, "mean", clusters=clusters, n_resamples=n_resamples, level=level, random_state=random_state)
    out: dict[str, Any] = {"estimate": est.estimate, "ci_low": est.ci_low, "ci_high": est.ci_high,
                           "ci_method": est.method,
           "n_resamples": est.n_resamples, "random_state": est.random_state, "notes": list(est.notes)}
    if mcnemar:
        out["discordant"] = (int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1))))
        out["p_value"], out["test"] = _mcnemar_exact(*out["discordant"]), "mcnemar-exact"
        if clusters is not None:
            out["notes"].append("McNemar treats items as independent; the CI is clustered")
        return out
    sums_a, sums_b = _cluster_sums(a, b, clusters)
    test = permutation_test_paired(sums_a, sums_b, n_resamples=n_permutations, random_state=random_state)
    out["p_value"], out["test"] = test.p_value, test.method + ("-clustered" if clusters is not None else "")
    return out


def unpaired_contrast(x: np.ndarray, y: np.ndarray, *, n_resamples: int = 2000, n_permutations: int = 9999,
                      level: float = 0.95, random_state: Any = 0) -> dict[str, Any]:
    """``mean(x) - mean(y)`` for different items: bootstrap stratified by sample (each keeps its
    size) and a two-sample permutation p-value."""
    values = np.concatenate([x, y])
    group = np.concatenate([np.ones(len(x)), np.zeros(len(y))])
    est = bootstrap((values, group), _diff_of_means, strata=group, n_resamples=n_resamples, level=level,
                    random_state=random_state)
    test = permutation_test_2samp(x, y, n_resamples=n_permutations, random_state=random_state)
    return {"estimate": est.estimate, "ci_low": est.ci_low, "ci_high": est.ci_high, "ci_method": est.method,
            "n_resamples": est.n_resamples, "random_state": est.random_state, "notes": list(est.notes),
            "p_value": test.p_value, "test": test.method}


def _diff_of_means(values: np.ndarray, group: np.ndarray, axis: int) -> np.ndarray:
    return (np.sum(values * group, axis=axis) / np.sum(group, axis=axis)
            - np.sum(values * (1 - group), axis=axis) / np.sum(1 - group, axis=axis))


def _mcnemar_exact(a_only: int, b_only: int) -> float:
    from statsmodels.stats.contingency_tables import mcnemar

    if a_only + b_only == 0:
        return 1.0  # no discordant pair: no evidence either way
    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def _cluster_sums(a: np.ndarray, b: np.ndarray, clusters: Any) -> tuple[np.ndarray, np.ndarray]:
    if clusters is None:
        return a, b
    codes = pd.factorize(np.asarray(clusters))[0]
    return np.bincount(codes, weights=a), np.bincount(codes, weights=b)


def estimate(frame: pd.DataFrame, spec: EstimatorSpec, *, policy: str = "wrong", cluster_by_subject: bool = False,
             n_resamples: int = 2000, n_permutations: int = 9999, level: float = 0.95,
             random_state: Any = 0) -> tuple[tuple[Contrast, ...], tuple[str, ...]]:
    """Per-model and pooled contrasts of one estimator, and notes on what was skipped and why."""
    rows = effective_correct(frame, policy)
    kw = dict(n_resamples=n_resamples, n_permutations=n_permutations, level=level, random_state=random_state)
    if spec.paired:
        return _paired(rows, frame, spec, policy, cluster_by_subject, kw)
    return _unpaired(rows, frame, spec, policy, kw)


def _paired(rows, frame, spec, policy, cluster_by_subject, kw):
    a, b = spec.condition_a, spec.condition_b
    paired, unpaired = paired_table(rows, a, b)
    models = sorted(frame.loc[frame["condition"].isin([a, b]), "model"].unique())
    results, notes = [], []
    for model in models:
        n_un = int(unpaired.get(model, 0))
        if n_un:
            notes.append(f"{spec.key} {model}: {n_un} item(s) with only one of {a}/{b} "
                         f"({'or no valid parse ' if policy == 'exclude' else ''}excluded from the paired estimate)")
        if model not in paired.index.get_level_values("model"):
            notes.append(f"{spec.key} {model}: no item scored in both {a} and {b}; not estimated")
            continue
        part = paired.loc[model]
        if len(part) < 2:
            notes.append(f"{spec.key} {model}: only {len(part)} paired item; not estimated")
            continue
        clusters = part["subject"].to_numpy() if cluster_by_subject else None
        out = paired_contrast(part[a].to_numpy(), part[b].to_numpy(), clusters=clusters, mcnemar=True, **kw)
        results.append(_contrast(spec, model, policy, part[a].mean(), part[b].mean(), len(part), len(part), n_un, out,
                                 kw))
    if len(results) >= 1 and paired.index.get_level_values("item_id").nunique() >= 2:
        items = paired.groupby(level="item_id").agg({a: "mean", b: "mean", "subject": "first"})
        clusters = items["subject"].to_numpy() if cluster_by_subject else None
        out = paired_contrast(items[a].to_numpy(), items[b].to_numpy(), clusters=clusters, mcnemar=False, **kw)
        n_un = int(unpaired.sum())
        results.append(_contrast(spec, "pooled", policy, items[a].mean(), items[b].mean(), len(items), len(items),
                                 n_un, out, kw))
    return tuple(results), tuple(notes)


def _unpaired(rows, frame, spec, policy, kw):
    a, b = spec.condition_a, spec.condition_b
    results, notes = [], []
    part = rows[rows["condition"].isin([a, b])]
    models = sorted(frame.loc[frame["condition"].isin([a, b]), "model"].unique())
    for model in models:
        mine = part[part["model"] == model]
        x = mine.loc[mine["condition"] == a, "correct"].to_numpy()
        y = mine.loc[mine["condition"] == b, "correct"].to_numpy()
        if len(x) < 2 or len(y) < 2:
            notes.append(f"{spec.key} {model}: {len(x)} {a} and {len(y)} {b} item(s) (need 2 each); not estimated")
            continue
        out = unpaired_contrast(x, y, **kw)
        results.append(_contrast(spec, model, policy, x.mean(), y.mean(), len(x), len(y), 0, out, kw))
    if results:
        means = part.groupby(["condition", "item_id"])["correct"].mean()
        x, y = means.get(a, pd.Series(dtype=float)).to_numpy(), means.get(b, pd.Series(dtype=float)).to_numpy()
        out = unpaired_contrast(x, y, **kw)
        results.append(_contrast(spec, "pooled", policy, x.mean(), y.mean(), len(x), len(y), 0, out, kw))
    return tuple(results), tuple(notes)


def _contrast(spec, model, policy, acc_a, acc_b, n_a, n_b, n_unpaired, out, kw) -> Contrast:
    return Contrast(
        estimator=spec.key, model=str(model), condition_a=spec.condition_a, condition_b=spec.condition_b,
        paired=spec.paired, invalid_policy=policy, acc_a=float(acc_a), acc_b=float(acc_b),
        estimate=float(out["estimate"]), ci_low=float(out["ci_low"]), ci_high=float(out["ci_high"]),
        level=kw["level"], p_value=float(out["p_value"]), ci_method=out["ci_method"], test=out["test"],
        n_a=int(n_a), n_b=int(n_b), n_unpaired=int(n_unpaired), discordant=out.get("discordant"),
        n_resamples=out["n_resamples"], random_state=out["random_state"], notes=tuple(out["notes"]),
    )
