"""Calibrated variants as metrics: each metric raw and after each calibration, out of system folds,
by the one engine of ``calibrate evaluate`` (:func:`xleval.decision.evaluate_calibration`), and
the answer "across languages, trust METRIC with CALIBRATION": each metric's calibration is its own
decision (:func:`xleval.decision.decide_from_evaluation`), and among metrics the one whose chosen
calibration orders held-out cross-group system pairs best (:func:`xleval.decision.decide_across_metrics`)."""
from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._base.result import Result
from ..exceptions import InputError
from ..stats import Estimate
from ._results import MetaEvaluation

if TYPE_CHECKING:
    from ..decision import Procedure

__all__ = ["CalibratedVariant", "CalibratedMeta", "meta_calibrations", "parse_calibrations", "exclude_systems"]

_SPEC = re.compile(r"^(raw|lgn|anchored)(?:@(\d+))?$")


@dataclass(frozen=True, eq=False)
class CalibratedVariant(Result):
    """One metric after one calibration: out-of-fold cross-group pairwise accuracy (``accuracy``, with a CI
    from systems resampled within groups) and pooled system-level Pearson, means over the fold repeats."""

    metric: str
    calibration: str
    accuracy: Estimate
    pearson: Estimate


@dataclass(frozen=True, eq=False)
class CalibratedMeta(Result):
    """``variants``: every (metric, calibration); ``decided``: metric -> the calibration its decision chose;
    ``metric``/``calibration``/``accuracy``: the answer across groups; ``within``: the metric to trust within
    a group and ``within_basis`` (how it was chosen); ``answer``: the sentence; ``human_scale``: what the
    cross-group claim rests on."""

    human: str
    by: str
    calibrations: tuple[str, ...]
    variants: tuple[CalibratedVariant, ...]
    decided: dict[str, str]
    metric: str
    calibration: str
    accuracy: Estimate
    within: str | None
    within_basis: str
    answer: str
    human_scale: str
    n_folds: int
    n_repeats: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())


def parse_calibrations(spec: str | Sequence[str]) -> tuple[tuple[str, int | None], ...]:
    """``"raw,lgn,anchored@100"`` -> ``(("raw", None), ("lgn", None), ("anchored", 100))``."""
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    out = []
    for item in items:
        m = _SPEC.match(item)
        if m is None or (m.group(2) is not None and (m.group(1) != "anchored" or int(m.group(2)) < 1)):
            raise InputError(f"calibrations: {item!r} is not a calibration; use raw, lgn, anchored or anchored@K "
                             "(K labels per group, >= 1), e.g. raw,lgn,anchored@100", argument="calibrations",
                             value=item)
        out.append((m.group(1), int(m.group(2)) if m.group(2) else None))
    budgets = {k for _, k in out if k is not None}
    if not out or len(budgets) > 1:
        raise InputError(f"calibrations {spec!r}: give at least one, with at most one budget anchored@K (the "
                         "decision is made at one budget)", argument="calibrations")
    return tuple(out)


def _in_order(frame: pd.DataFrame, by_cols: list[str], system: str, segment: str | None) -> pd.DataFrame:
    """The rows sorted by group, system, segment (integer ids by value) and document: the evaluation orders rows by
    group and system only (it is given no segment column), so the rows of one system kept the table's order and the
    anchored calibrations' label draws followed it (a shuffled table gave other numbers)."""
    from .._base.grouping import canonical_order, segment_rank

    if not isinstance(frame, pd.DataFrame) or system not in frame.columns:
        return frame
    groups = [frame[c] for c in by_cols if c in frame.columns]
    segs = segment_rank(frame[segment]) if segment is not None and segment in frame.columns else None
    ties = [*groups[1:], *([frame["doc_id"]] if "doc_id" in frame.columns else [])]
    order = canonical_order(groups[0] if groups else frame[system], frame[system], segs, ties)
    return frame.iloc[order]


def meta_calibrations(data: Any, metrics: Sequence[str], human: str, *, by: str | Sequence[str] = "lp",
                      system: str = "system",
                      calibrations: str | Sequence[str] = ("raw", "lgn", "anchored@100"),
                      human_scale: str | None = None, procedure: Procedure | None = None,
                      meta: MetaEvaluation | None = None,
                      progress: Any = None, lower_is_better: Sequence[str] | None = None,
                      segment: str | None = "seg_id") -> CalibratedMeta:
    """Every metric raw and after each of ``calibrations``, out of system folds, as ``calibrate evaluate``
    (``procedure``: a :class:`xleval.decision.Procedure`, its folds, repeats, resamples and seed; the budget
    curve is the calibrations'; None: the decision's, :data:`~xleval.decision.DEFAULT_PROCEDURE`);
    ``human_scale``: ``z``,
    ``raw`` or None (the evaluation's standardisation check). ``meta``: a :class:`MetaEvaluation` of the same
    metrics, from which the metric to trust within a group is named (highest mean SPA over groups, else
    system-level pairwise accuracy). ``lower_is_better``: as :func:`meta_evaluate` (None: each metric's
    direction by :func:`metric_directions`). ``segment``: the segment column (with ``doc_id`` when segments are
    numbered within documents): the rows are put in one order by group, system and segment first, so that no fold
    or label draw depends on the order of the table's rows, as in :func:`meta_evaluate`. Systems that
    :func:`meta_evaluate`'s ``exclude`` leaves out are left out of ``data`` by the caller (:func:`exclude_systems`).
    The metrics are compared on the rows every one of them scores (a note says what that leaves out)."""
    from ..decision import DEFAULT_PROCEDURE, decide_across_metrics, evaluate_calibration
    from ._engine import metric_directions

    lower = set(metric_directions(data, metrics) if lower_is_better is None else lower_is_better)

    specs = parse_calibrations(calibrations)
    budget = next((k for _, k in specs if k is not None), None)
    by_cols = [by] if isinstance(by, str) else list(by)
    frame = _in_order(getattr(data, "frame", data), by_cols, system, segment)
    frame, notes = _common_rows(frame, list(metrics), by_cols)
    variants, decisions = [], {}
    for metric in metrics:
        cols = [c for c in dict.fromkeys([*by_cols, system, metric, human]) if c in frame.columns]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            folds = (procedure or DEFAULT_PROCEDURE).with_(budgets=(budget,) if budget else (100,),
                                                           selections=("random",))
            ev = evaluate_calibration(frame[cols], metric, human, by if isinstance(by, str) else by_cols,
                                      system=system, procedure=folds, budget=budget,
                                      human_scale=human_scale, progress=progress,
                                      score_higher_is_better=metric not in lower)
        notes += [f"{metric}: {w.message}" for w in caught][:3]
        by_name = {v.name: v for v in ev.variants}
        for method, k in specs:
            name = method if k is None else f"anchored@{k} random"
            v = by_name.get(name)
            if v is None:  # the evaluation capped K at the most labels a group has
                most = int(frame[cols].groupby(by_cols)[human].count().max())
                raise InputError(f"calibrations: anchored@{k} asks for {k} labels per group, and no group has more "
                                 f"than {most}; give anchored@K with K at most {most}", argument="calibrations",
                                 value=f"anchored@{k}")
            variants.append(CalibratedVariant(metric, method if k is None else f"anchored@{k}", v.accuracy,
                                              v.pearson))
        decisions[metric] = ev.decision
    best = decide_across_metrics(decisions)
    chosen = decisions[best].evaluated_method
    shown = _shown(chosen, budget)
    acc = next((v.accuracy for v in variants if v.metric == best and v.calibration == shown), None)
    if acc is None:  # the decision's calibration was not among those asked: its evaluation still has it
        notes.append(f"{best}: the decision chose {shown}, which is not among the calibrations asked")
        acc = variants[0].accuracy
    within, basis = _within(meta)
    scale = human_scale or "as given (not stated)"
    answer = (f"across languages, trust {best} with {shown} (out-of-fold cross-group accuracy {acc.estimate:.3f}, "
              f"{acc.level:.0%} CI {acc.ci_low:.3f} to {acc.ci_high:.3f}; human scale: {scale})"
              + _others(variants, best, shown, acc))
    if within is not None:
        answer += f"; within a pair, {within} ({basis})"
    answer += ". " + _rule(best, decisions[best], len(decisions))
    ev0 = decisions[best]
    by_label = by if isinstance(by, str) else "+".join(by)
    return CalibratedMeta(human, by_label, tuple(c if k is None else f"{c}@{k}" for c, k in specs), tuple(variants),
                          {m: d.evaluated_method for m, d in decisions.items()}, best, shown, acc, within, basis,
                          answer, scale, ev0.n_folds, ev0.n_repeats, ev0.random_state, tuple(notes))


def exclude_systems(frame: pd.DataFrame, system: str, exclude: str | Sequence[str]) -> pd.DataFrame:
    """``frame`` without the systems whose name matches a shell pattern of ``exclude``, as :func:`meta_evaluate`
    leaves them out (``meta --calibrations`` gave the calibrated variants WMT20's Human-B under --exclude 'Human-*',
    which the statistics beside them left out)."""
    from ._engine import excluded_rows

    exclude = [exclude] if isinstance(exclude, str) else list(exclude)
    if not exclude or system not in frame.columns:
        return frame
    return frame[~excluded_rows(frame[system], exclude)]


def _common_rows(frame: pd.DataFrame, metrics: list[str], by_cols: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The rows every metric scores, and the note that says what was left out: the metrics' cross-group accuracies
    are compared on one set of groups and systems (WMT20: BLEURT scores the 9 pairs into English only, and won
    'across languages' at 0.928 against COMET's 0.855 over all 16). Fewer than two groups left: refused."""
    if len(metrics) < 2 or not all(m in frame.columns for m in metrics):
        return frame, []
    finite = np.column_stack([np.isfinite(pd.to_numeric(frame[m], errors="coerce").to_numpy(dtype=float))
                              for m in metrics])
    every = np.asarray(finite.all(axis=1), dtype=bool)
    some = np.asarray(finite.any(axis=1), dtype=bool)
    if every.all() or not some[~every].any():  # nothing scored by some metrics only
        return frame, []
    group = frame[by_cols].astype(str).agg("/".join, axis=1) if len(by_cols) > 1 else frame[by_cols[0]].astype(str)
    kept = set(group[every])
    lost = sorted(set(group) - kept)
    if len(kept) < 2:
        raise InputError(f"calibrations: the metrics {', '.join(metrics)} score {len(kept)} group(s) in common; "
                         "cross-group accuracies compare metrics on the groups every one of them scores: give metrics "
                         "that score the same groups, or evaluate them one at a time", argument="calibrations")
    why = []
    for g in lost:
        rows = (group == g).to_numpy()
        missing = [m for j, m in enumerate(metrics) if not finite[rows, j].any()]
        why.append(f"{g} (no {', '.join(missing)})" if missing else g)
    shown = ", ".join(why[:8]) + (f" and {len(why) - 8} more" if len(why) > 8 else "")
    n_rows = int((~every).sum())
    note = (f"the calibrated variants are compared on the rows every metric scores, {int(every.sum())} of "
            f"{len(frame)} in {len(kept)} groups, so that every metric's cross-group accuracy covers the same groups "
            f"and systems; left out: {n_rows} row(s)" + (f", among them every row of {shown}" if lost else ""))
    return frame[every], [note]


def _others(variants: Sequence[CalibratedVariant], best: str, shown: str, acc: Estimate) -> str:
    """Every other variant whose accuracy lies inside the winner's CI (or above it), best first: the answer
    names them all, whatever the metric or the calibration."""
    def listed(where) -> str:
        chosen = sorted((v for v in variants
                         if (v.metric, v.calibration) != (best, shown) and where(v.accuracy.estimate)),
                        key=lambda v: -v.accuracy.estimate)
        return ", ".join(f"{v.metric} with {v.calibration} ({v.accuracy.estimate:.3f})" for v in chosen)

    inside = listed(lambda a: acc.ci_low <= a <= acc.ci_high)
    above = listed(lambda a: a > acc.ci_high)
    return (f"; inside that CI: {inside}" if inside else "; no other variant inside that CI") + (
        f"; above it: {above}" if above else "")


def _rule(best: str, decision: Any, n_metrics: int) -> str:
    """The rule that chose, in the decision's own words: the winning metric's calibration by its decision
    (the evidence, or the tie rule among calibrations that cannot be told apart), then the metric."""
    how = {"tie": "the tie rule of its decision", "rules": "the rule-based flow of its decision"}.get(
        decision.basis, "its decision")
    text = f"How {best}'s calibration was chosen, by {how}: {decision.reason}"
    if n_metrics > 1:
        text += ("; among metrics, each with the calibration its own decision chose, the one with the highest "
                 "out-of-fold cross-group accuracy (a tie goes to the metric listed first)")
    return text


def _shown(method: str, budget: int | None) -> str:
    return {"raw": "raw", "lgn": "lgn", "anchored": f"anchored@{budget}" if budget else "anchored"}[method]


def _within(meta: MetaEvaluation | None) -> tuple[str | None, str]:
    if meta is None:
        return None, ""
    frame = meta.to_frame()
    for stat, name in (("spa", "SPA"), ("sys_accuracy", "pairwise accuracy")):
        rows = frame[frame["statistic"] == stat]
        if rows.empty:
            continue
        # the mean over the groups every metric has a value in (WMT20: BLEURT scores the 9 pairs into English only)
        wide = rows.pivot_table(index="group", columns="metric", values="value", aggfunc="first")
        wide = wide.reindex(columns=[m for m in meta.metrics if m in wide.columns])
        common = wide.dropna()
        if common.empty:
            continue
        means = common.mean()
        groups = rows["group"].nunique()
        where = (f"over {groups} groups" if len(common) == groups else
                 f"over the {len(common)} of {groups} groups every metric has a value in")
        return str(means.idxmax()), f"highest mean {name} {where}"
    return None, ""


def calibrated_frame(result: CalibratedMeta) -> pd.DataFrame:
    """Tidy table: ``metric, calibration, accuracy, ci_low, ci_high, pearson``."""
    return pd.DataFrame([{"metric": v.metric, "calibration": v.calibration, "accuracy": v.accuracy.estimate,
                          "ci_low": v.accuracy.ci_low, "ci_high": v.accuracy.ci_high, "pearson": v.pearson.estimate}
                         for v in result.variants])
