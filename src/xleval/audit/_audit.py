"""The audit as one call: validate the long table, parse answers, run every estimator whose
conditions are present (under both invalid-answer policies), the dose-response split, the
model-family interaction and (when ratings are given) the E2 agreement; collect notes on
everything left out."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from xleval._base.progress import Progress, Steps
from xleval._base.result import Result
from xleval.audit._agreement import annotation_agreement
from xleval.audit._data import prepare_audit_table
from xleval.audit._estimators import ESTIMATORS, POLICIES, estimate
from xleval.audit._interaction import dose_response, family_interaction, item_differences
from xleval.audit._parse import DEFAULT_THRESHOLD, AnswerParser, parser_validity
from xleval.audit._results import AnnotationAgreement, Contrast, DoseResponse, FamilyInteraction, ParserValidity
from xleval.exceptions import InputError
from xleval.stats._resampling import Resampling
from xleval.stats._validate import check_level, check_n_resamples

__all__ = ["AuditResult", "audit", "AUDIT_RESAMPLING"]


@dataclass(frozen=True, eq=False)
class AuditResult(Result):
    """Everything the audit found; ``contrasts`` use ``invalid_policy``, ``sensitivity`` the
    other policy (invalid parses counted wrong vs excluded)."""

    n_rows: int
    n_items: int
    models: tuple[str, ...]
    items_per_condition: dict[str, int]
    items_single_condition: int
    parser: str
    validity_threshold: float
    validity: tuple[ParserValidity, ...]
    flagged_models: tuple[str, ...]
    models_without_valid_parses: tuple[str, ...]
    invalid_policy: str
    contrasts: tuple[Contrast, ...]
    sensitivity: tuple[Contrast, ...]
    dose_response: DoseResponse | None
    family_interaction: FamilyInteraction | None
    agreement: tuple[AnnotationAgreement, ...]
    rating_signal: dict[str, Any]
    estimators: dict[str, dict[str, Any]]
    level: float
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = ()

    def contrast(self, estimator: str, model: str = "pooled", policy: str | None = None) -> Contrast | None:
        """The contrast of one estimator and model (``pooled`` by default), or None if not run."""
        pool = self.contrasts if policy in (None, self.invalid_policy) else self.sensitivity
        return next((c for c in pool if c.estimator == estimator and c.model == model), None)


#: the audit's bootstrap: 2000 resamples, 95% intervals, seed 0
AUDIT_RESAMPLING = Resampling(n_resamples=2000)


def audit(
    data: pd.DataFrame,
    *,
    parser: AnswerParser | None = None,
    validity_threshold: float = DEFAULT_THRESHOLD,
    invalid_policy: str = "wrong",
    cluster_by_subject: bool = False,
    residual_threshold: float | None = None,
    dose_estimator: str = "E4",
    ratings: pd.DataFrame | None = None,
    rating_scale: Any = None,
    resampling: Resampling = AUDIT_RESAMPLING,
    n_permutations: int = 9999,
    progress: Progress | None = None,
) -> AuditResult:
    """Audit item-level benchmark results for a translation tax (estimators E1-E4).

    ``data`` is the long table described in :mod:`xleval.audit._data`; ``ratings`` (item_id,
    rater, rating, optional dimension) enables E2, on the ``rating_scale`` (``"1-5"``,
    ``(1, 5)``; default: lowest to highest rating given, with a warning when a level in
    between is unused). At least one estimator's pair of conditions (or ratings) must be
    present: otherwise there is nothing to audit and an error says what each estimator needs.
    ``residual_threshold`` pre-declares the
    high-residual cut (default: median split). ``dose_estimator`` is the paired estimator split
    by residual and tested for a model-family interaction (falls back to the other paired one
    when its conditions are absent). ``resampling`` (:class:`xleval.stats.Resampling`, default 2000
    resamples): the bootstraps of every interval; ``n_permutations``: the permutation tests'."""
    n_resamples, level, random_state = resampling.n_resamples, resampling.level, resampling.random_state
    if invalid_policy not in POLICIES:
        raise InputError(f"invalid_policy must be one of {POLICIES}; got {invalid_policy!r}")
    if dose_estimator not in ("E1", "E4"):
        raise InputError(f"dose_estimator must be 'E1' or 'E4' (a paired estimator); got {dose_estimator!r}")
    level, n_resamples = check_level(level), check_n_resamples(n_resamples, minimum=2)
    parser = parser or AnswerParser()
    frame = prepare_audit_table(data, parser)
    notes: list[str] = []
    validity = parser_validity(frame, validity_threshold)
    kw: dict[str, Any] = dict(cluster_by_subject=cluster_by_subject, n_resamples=n_resamples,
                              n_permutations=n_permutations, level=level, random_state=random_state)
    present = set(frame["condition"])
    run = [s for s in ESTIMATORS.values() if {s.condition_a, s.condition_b} <= present]
    if not run and ratings is None:
        needs = "; ".join(f"{s.key} needs {s.condition_a} and {s.condition_b}" for s in ESTIMATORS.values())
        raise InputError(f"no estimator can run on the conditions given ({', '.join(sorted(present))}): {needs}")
    for s in ESTIMATORS.values():
        if s not in run:
            notes.append(f"{s.key} ({s.name}) not run: needs conditions {s.condition_a} and {s.condition_b}")
    other = next(p for p in POLICIES if p != invalid_policy)
    contrasts: list[Contrast] = []
    sensitivity: list[Contrast] = []
    steps = Steps(progress, 2 * len(run) + 2)
    for spec in run:
        main, spec_notes = estimate(frame, spec, policy=invalid_policy, **kw)
        steps.done()
        alt, _ = estimate(frame, spec, policy=other, **kw)
        steps.done()
        contrasts.extend(main)
        sensitivity.extend(alt)
        notes.extend(spec_notes)
    dose, family = _dose_and_family(frame, run, dose_estimator, residual_threshold, invalid_policy, kw, notes)
    steps.done()
    agreement = annotation_agreement(ratings, scale=rating_scale, n_resamples=n_resamples, level=level,
                                     random_state=random_state) if ratings is not None else ()
    if ratings is None:
        notes.append("E2 (annotation calibration) not run: no ratings given")
    signal = _rating_signal(frame, ratings, run, invalid_policy, level, notes) if ratings is not None else {}
    steps.done()
    return AuditResult(
        n_rows=len(frame), n_items=frame["item_id"].nunique(), models=tuple(sorted(frame["model"].unique())),
        items_per_condition={c: int(frame.loc[frame["condition"] == c, "item_id"].nunique())
                             for c in sorted(present)},
        items_single_condition=_single_condition_items(frame),
        parser=parser.description if {"response", "answer"} <= set(data.columns) else "given 'correct' column",
        validity_threshold=validity_threshold, validity=validity,
        flagged_models=tuple(sorted({v.model for v in validity if v.flagged})),
        models_without_valid_parses=_no_valid(frame), invalid_policy=invalid_policy,
        contrasts=tuple(contrasts), sensitivity=tuple(sensitivity), dose_response=dose, family_interaction=family,
        agreement=agreement, rating_signal=signal, estimators={s.key: asdict(s) for s in run}, level=level,
        n_resamples=n_resamples, random_state=random_state, notes=tuple(notes),
    )


def _rating_signal(frame, ratings, run, policy, level, notes) -> dict[str, Any]:
    """E2: Spearman correlation of each rating dimension (mean over raters per item) with
    the item-level E1 signal (back-translation gap, models averaged)."""
    from xleval.stats import correlation

    if ESTIMATORS["E1"] not in run:
        notes.append("E2 rating-signal correlation not computed: E1 was not run")
        return {}
    signal = item_differences(frame, ESTIMATORS["E1"], policy)
    frame_r = ratings.assign(dimension=ratings.get("dimension", "rating"))
    frame_r = frame_r.assign(item_id=frame_r["item_id"].astype(str))
    out = {}
    for dim, part in frame_r.groupby("dimension", sort=True):
        joined = pd.concat([part.groupby("item_id")["rating"].mean(), signal], axis=1, join="inner").dropna()
        if len(joined) < 4 or joined.iloc[:, 0].nunique() < 2 or joined.iloc[:, 1].nunique() < 2:
            notes.append(f"E2 {dim}: {len(joined)} rated item(s) with an E1 signal, or a constant one; no correlation")
            continue
        out[str(dim)] = correlation(joined.iloc[:, 0].to_numpy(), joined.iloc[:, 1].to_numpy(), "spearman", level=level)
    return out


def _single_condition_items(frame: pd.DataFrame) -> int:
    # natively authored items are separate by design (E3 is unpaired); count only the others
    counts = frame[frame["condition"] != "native"].groupby("item_id")["condition"].nunique()
    return int((counts == 1).sum())


def _no_valid(frame: pd.DataFrame) -> tuple[str, ...]:
    any_valid = frame.groupby("model")["valid"].any()
    return tuple(sorted(any_valid.index[~any_valid]))


def _dose_and_family(frame, run, key, threshold, policy, kw, notes):
    paired = [s for s in run if s.paired]
    if not paired:
        notes.append("dose-response and model-family interaction not run: no paired estimator (E1 or E4) available")
        return None, None
    spec = next((s for s in paired if s.key == key), paired[0])
    if spec.key != key:
        notes.append(f"{key} not available; dose-response and family interaction use {spec.key}")
    dose, dose_notes = dose_response(frame, spec, threshold=threshold, policy=policy,
                                     n_resamples=kw["n_resamples"], n_permutations=kw["n_permutations"],
                                     level=kw["level"], random_state=kw["random_state"])
    notes.extend(dose_notes)
    family = family_interaction(frame, spec, policy=policy)
    notes.extend(family.notes if not family.tested else ())
    return dose, family
