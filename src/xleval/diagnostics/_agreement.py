"""Agreement of metric scores with human judgments (meta-evaluation), within and across groups.

A per-group monotone calibration leaves every within-group statistic unchanged, so its benefit
can only show in statistics pooled across groups; the headline number is the **cross-group
pairwise accuracy** at system level: the share of pairs of systems from different groups that
the scores order as humans do (acc23, ties as in mt-metrics-eval).

System scores are the mean of each column over that system's rows with a finite value (the
metric over all its scored segments, the human score over its judged ones). Confidence
intervals resample systems within each group (stratified bootstrap, the same resamples for
every score, so differences are paired); a resample counts each pair of original systems
``c_i * c_j`` times and never pairs a system with its own copy; epsilon stays at the value tie
calibration chose on the full sample. Raw vs calibrated is tested with mt-metrics-eval's
PERM-BOTH paired permutation test (:func:`xleval.stats.compare_pairwise_accuracy`), two-sided by
default (``alternative``: ``greater`` is WMT's one-sided test that the calibrated score orders more
pairs as humans do).

``average_by`` (mt-metrics-eval's, see docs/stats.md) applies to the all-pairs accuracy: ``none``
pools every pair of systems; ``group`` takes the pairs of systems inside each group and averages
the groups' accuracies; ``item`` is WMT23's segment-level accuracy: the systems' outputs of each
segment (``item`` column within a group) ordered against the human scores, averaged over segments.
The cross-group accuracy compares pairs across groups, so it is never averaged by group or item,
and it is what a per-group calibration can change (within a group or a segment its order stays):
a comparison of raw and calibrated scores together with ``average_by`` other than ``none`` is refused.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base.result import Result
from .._base.seeding import make_rng
from ..exceptions import DataQualityWarning, InputError
from ..stats import (
    DEFAULT_RESAMPLING,
    CorrelationResult,
    Estimate,
    PairwiseAccuracy,
    Resampling,
    TestResult,
    bootstrap_pairwise_accuracy,
    compare_pairwise_accuracy,
    correlation,
    estimate_from_distribution,
    pairwise_accuracy,
    stratified_resample_counts,
)
from ..table import DEFAULT_BY, EvalTable, as_table

__all__ = ["ScoreAgreement", "Comparison", "AgreementResult", "human_agreement", "system_table"]


@dataclass(frozen=True, eq=False)
class ScoreAgreement(Result):
    """Agreement of one score column with the human scores.

    ``segment_within``: group -> {"pearson": CorrelationResult, "kendall_b": ...} over segments
    of that group; ``segment_pooled``: the same over all segments (empty dicts when the data are
    already one row per system); ``system_within``: group -> Pearson over that group's systems
    (groups with >= 3 systems); ``system_pooled``: {"pearson", "kendall_b"} over all systems;
    ``cross_group_accuracy`` / ``all_pairs_accuracy``: PairwiseAccuracy with ``ci_low``/``ci_high``
    (the all-pairs one averaged by group or item when asked: its ``average_by`` says so, no CI).
    """

    score: str
    segment_within: dict[str, dict[str, CorrelationResult]]
    segment_pooled: dict[str, CorrelationResult]
    system_within: dict[str, CorrelationResult]
    system_pooled: dict[str, CorrelationResult]
    cross_group_accuracy: PairwiseAccuracy | None
    all_pairs_accuracy: PairwiseAccuracy | None


@dataclass(frozen=True, eq=False)
class Comparison(Result):
    """``b`` (e.g. calibrated) against ``a`` (raw) on cross-group pairwise accuracy.

    ``difference``: Estimate of acc(b) - acc(a) with a paired bootstrap CI (same resamples);
    ``permutation``: PERM-BOTH TestResult of the same difference (its ``alternative`` names the
    sidedness: two-sided unless asked otherwise).
    """

    a: str
    b: str
    difference: Estimate
    permutation: TestResult


@dataclass(frozen=True, eq=False)
class AgreementResult(Result):
    """Agreement with humans of one or more score columns.

    ``scores``: column -> ScoreAgreement; ``comparisons``: tuple of Comparison; ``systems``:
    DataFrame (``group, system, n_rows, n_human, <score columns>, <human>``) of the systems used;
    ``excluded_groups``: groups left out of system-level statistics (< 2 systems); ``n_rows``
    (input rows), ``n_used`` (rows with a human and every score), ``n_systems``, ``level``,
    ``n_resamples``, ``random_state``, ``notes``; ``average_by``: how the all-pairs accuracy was
    averaged (``none``, ``group``, ``item``); ``alternative``: the sidedness of the comparisons' test.
    """

    human: str
    by: str
    system: str | None
    scores: dict[str, ScoreAgreement]
    comparisons: tuple[Comparison, ...]
    systems: pd.DataFrame | None
    excluded_groups: tuple[str, ...]
    n_rows: int
    n_used: int
    n_systems: int
    level: float
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())
    average_by: str = "none"
    alternative: str = "two-sided"


AVERAGE_BY = ("none", "group", "item")
ALTERNATIVES = ("two-sided", "greater", "less")


def system_table(data: EvalTable | pd.DataFrame, columns: Sequence[str], by: str | list[str] | None = None,
                 system: str | None = None) -> pd.DataFrame:
    """One row per (group, system): ``group, system, n_rows`` and each column's mean over its finite rows."""
    table = as_table(data, by=by, system=system, default_by=DEFAULT_BY)
    if table.system is None:
        raise InputError("system_table needs the system column; give system=", argument="system")
    frame = pd.DataFrame({"group": table.row_labels(), "system": table.column_labels(table.system)})
    for c in columns:
        frame[c] = table.values(c)
    g = frame.groupby(["group", "system"], sort=True)
    out = g[list(columns)].mean()
    out.insert(0, "n_rows", g.size())
    return out.reset_index()


def human_agreement(data: EvalTable | pd.DataFrame, scores: str | Sequence[str] | None = None,
                    human: str | None = None, by: str | list[str] | None = None, *,
                    system: str | None = "system", compare: Sequence[tuple[str, str]] = (),
                    resampling: Resampling = DEFAULT_RESAMPLING, tie_calibration: bool = True,
                    average_by: str = "none", item: str = "seg_id",
                    alternative: str = "two-sided", lower_is_better: Sequence[str] = ()) -> AgreementResult:
    """Segment- and system-level agreement of ``scores`` with ``human``; ``compare`` lists
    (a, b) column pairs to test (e.g. ``[("bleu", "bleu_lgn")]``) with a test of sidedness
    ``alternative``. ``system=None`` (or a column that is absent) gives segment-level statistics
    only. ``average_by`` and ``item`` (the segment column): how the all-pairs accuracy averages
    (module docstring). ``resampling`` (:class:`xleval.stats.Resampling`): the bootstrap of systems within
    groups behind the intervals and the tests. ``lower_is_better``: the columns (scores, the human column) whose
    lower values are better (an error rate, MQM error points): they are negated, so that every statistic reads
    higher as agreeing with the humans (the returned ``systems`` keeps their own signs)."""
    level, n_resamples, random_state = resampling.level, resampling.n_resamples, resampling.random_state
    table = as_table(data, score=scores, human=human, by=by, default_by=DEFAULT_BY)
    scores, human, by = list(table.score), table.human, list(table.by)
    if not scores or human is None:
        raise InputError("human_agreement needs score column(s) and the human column; give scores= and human=",
                         argument="scores" if not scores else "human")
    lower = [c for c in dict.fromkeys(lower_is_better) if c in (*scores, human)]
    unknown = [c for c in lower_is_better if c not in (*scores, human)]
    if unknown:
        raise InputError(f"lower_is_better names {unknown[0]!r}, which is neither a score column nor the human "
                         "column", argument="lower_is_better", value=unknown[0])
    if lower:  # one orientation for every statistic: higher agrees
        table = as_table(table.frame.assign(**{c: -pd.to_numeric(table.frame[c], errors="coerce") for c in lower}),
                         score=scores, human=human, by=by, default_by=DEFAULT_BY)
    data = table.frame
    _check_options(average_by, alternative, compare, data, item)
    for a, b in compare:
        if a not in scores or b not in scores:
            raise InputError(f"compare=({a!r}, {b!r}): both columns must be among scores {scores}")
    notes: list[str] = []
    labels = table.row_labels()
    h = table.values(human, argument="human")
    values = {c: table.values(c, argument="scores") for c in scores}
    has_h = np.isfinite(h)
    if not has_h.any():
        raise InputError(f"human column {human!r} has no values; give a column with human scores")
    if not has_h.all():  # sparse labels are a design (`calibrate select`), not a fault: a note, no warning
        notes.append(f"human column {human!r}: human scores on {int(has_h.sum())} of {len(h)} rows; the agreement "
                     "is measured on those")
    usable = has_h & np.logical_and.reduce([np.isfinite(v) for v in values.values()])
    if not usable.any():
        raise InputError(f"human column {human!r} and score column(s) {scores} share no row: the {int(has_h.sum())} "
                         "row(s) with a human score have no score; give human scores for scored rows (check human=)",
                         argument="human", value=human)
    if (has_h & ~usable).any():
        msg = f"{int((has_h & ~usable).sum())} row(s) with a human score but a missing score left out"
        notes.append(msg)
        warnings.warn(msg, DataQualityWarning, stacklevel=2)
    rng, seed = make_rng(random_state)
    by_name = "+".join(by)
    use_systems = system is not None and system in data.columns
    if system is not None and not use_systems:
        notes.append(f"no {system!r} column: system-level statistics skipped")
    systems = None
    if use_systems and system is not None:
        # the metric over all its scored segments, the human score over its judged ones (module docstring); a
        # system enters with the rows that have a label and every score (n_rows)
        judged = system_table(table.frame.loc[usable], [human], by, system)
        scored = system_table(table.frame, scores, by, system).drop(columns="n_rows")
        systems = judged.merge(scored, on=["group", "system"], how="left")[["group", "system", "n_rows", *scores,
                                                                            human]]
    per_system = systems is not None and (systems["n_rows"] > 1).any()
    seg = {c: _segment_level(values[c][usable], h[usable], labels[usable])
              if (per_system or not use_systems) else ({}, {})
           for c in scores}
    sys_res, excluded, dists, systems = _system_level(systems, scores, human, level, n_resamples, rng, seed,
                                                      tie_calibration, notes)
    if average_by != "none":
        sys_res = _averaged(sys_res, systems, scores, human, average_by, tie_calibration, values, h, labels, usable,
                            data[item].astype(str).to_numpy() if average_by == "item" else None, notes)
    results = {c: ScoreAgreement(c, *seg[c], *sys_res.get(c, ({}, {}, None, None))) for c in scores}
    if lower:
        notes.append(f"lower is better for {', '.join(lower)}: negated, so that every statistic reads higher as "
                     "agreeing with the humans")
        if systems is not None:
            systems = systems.assign(**{c: -systems[c] for c in lower if c in systems.columns})
    comparisons = tuple(_compare(a, b, systems, human, dists, level, n_resamples, seed, tie_calibration, alternative)
                        for a, b in compare) if systems is not None and dists else ()
    return AgreementResult(human, by_name, system if use_systems else None, results, comparisons, systems, excluded,
                           len(data), int(usable.sum()), 0 if systems is None else len(systems), level, n_resamples,
                           seed, tuple(notes), average_by, alternative)


def _check_options(average_by: str, alternative: str, compare: Sequence[tuple[str, str]], data: pd.DataFrame,
                   item: str) -> None:
    if average_by not in AVERAGE_BY:
        raise InputError(f"average_by={average_by!r}: use one of {', '.join(AVERAGE_BY)}", argument="average_by",
                         value=average_by)
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative {alternative!r}: use one of {', '.join(ALTERNATIVES)}")
    if average_by != "none" and compare:
        raise InputError(f"average by {average_by} does not apply to comparing raw and calibrated scores: they are "
                         "compared on cross-group accuracy, whose pairs cross groups, and a per-group calibration "
                         f"cannot change the order within a {average_by}; drop the averaging (average_by=\"none\") to "
                         "compare, or the calibrated column to see the averaged accuracy", argument="average_by",
                         value=average_by)
    if average_by == "item" and item not in data.columns:
        raise InputError(f"average by item needs the segment column {item!r} (the systems' outputs of one segment "
                         "are compared); name yours with item=, or average by group or none", argument="item",
                         value=item)


def _averaged(sys_res, systems, scores, human, average_by, tie_calibration, values, h, labels, usable, items, notes):
    """The all-pairs accuracy averaged by group (system means inside each group) or by item (the
    systems' outputs of each segment of a group); the other statistics stay as computed."""
    out = {}
    for c in scores:
        within, pooled, cross, _ = sys_res.get(c, ({}, {}, None, None))
        try:
            if average_by == "group":
                if systems is None or len(systems) < 2:
                    raise InputError("fewer than 2 systems")
                acc = pairwise_accuracy(systems[c].to_numpy(), systems[human].to_numpy(),
                                        groups=systems["group"].to_numpy(), average_by="group",
                                        tie_calibration=tie_calibration)
            else:
                units = [f"{g}\x1f{i}" for g, i in zip(labels[usable], items[usable], strict=True)]
                acc = pairwise_accuracy(values[c][usable], h[usable], average_by="item", items=units,
                                        tie_calibration=tie_calibration)
        except InputError as exc:
            notes.append(f"{c}: no accuracy averaged by {average_by} ({exc})")
            acc = None
        out[c] = (within, pooled, cross, acc)
    return out


def _segment_level(x: np.ndarray, h: np.ndarray, labels: np.ndarray):
    within: dict[str, dict[str, CorrelationResult]] = {}
    for g in np.unique(labels):
        rows = labels == g
        if rows.sum() >= 3:
            within[str(g)] = {m: correlation(x[rows], h[rows], m) for m in ("pearson", "kendall_b")}
    pooled = {m: correlation(x, h, m) for m in ("pearson", "kendall_b")} if len(x) >= 3 else {}
    return within, pooled


def _system_level(systems, scores, human, level, n_resamples, rng, seed, tie_calibration, notes):
    if systems is None:
        return {}, (), {}, None
    counts = systems.groupby("group")["system"].size()
    excluded = tuple(str(g) for g in counts.index[counts < 2])
    if excluded:
        notes.append(f"group(s) {list(excluded)} have fewer than 2 systems: left out of system-level statistics")
    systems = systems[~systems["group"].isin(excluded)].reset_index(drop=True)
    if len(systems) < 2:
        notes.append("fewer than 2 systems: no system-level statistics")
        return {}, excluded, {}, systems
    h = systems[human].to_numpy()
    groups = systems["group"].to_numpy()
    n_groups = len(np.unique(groups))
    weights = stratified_resample_counts(groups, n_resamples, rng)
    out, dists = {}, {}
    for c in scores:
        m = systems[c].to_numpy()
        within = {str(g): correlation(m[groups == g], h[groups == g], "pearson")
                  for g in np.unique(groups) if (groups == g).sum() >= 3}
        pooled = {k: correlation(m, h, k) for k in ("pearson", "kendall_b")} if len(m) >= 3 else {}
        cross = None
        if n_groups >= 2:
            cross, dists[c] = bootstrap_pairwise_accuracy(m, h, groups, "cross", weights, level, seed, tie_calibration)
        allp, _ = bootstrap_pairwise_accuracy(m, h, groups, "all", weights, level, seed, tie_calibration)
        out[c] = (within, pooled, cross, allp)
    if n_groups < 2:
        notes.append("only one group with >= 2 systems: no cross-group pairwise accuracy")
    return out, excluded, dists, systems


def _compare(a, b, systems, human, dists, level, n_resamples, seed, tie_calibration, alternative) -> Comparison:
    groups = systems["group"].to_numpy()
    pa = {c: pairwise_accuracy(systems[c].to_numpy(), systems[human].to_numpy(), groups=groups, pairs="cross",
                               tie_calibration=tie_calibration).estimate for c in (a, b)}
    estimate = estimate_from_distribution(pa[b] - pa[a], dists[b] - dists[a], n=len(systems), level=level,
                                          label="paired-bootstrap-stratified-systems", random_state=seed)
    test = compare_pairwise_accuracy(systems[a].to_numpy(), systems[b].to_numpy(), systems[human].to_numpy(),
                                     groups=groups, pairs="cross", tie_calibration=tie_calibration,
                                     alternative=alternative,
                                     resampling=Resampling(n_resamples=n_resamples, random_state=seed))
    return Comparison(a, b, estimate, test)
