"""The MT report: compute the results with the library, then arrange them answer first.

:func:`analyze_mt` is the compute step: system scores with their bootstrap, the recommended
calibration and why (bias, LGN's validity at system level, cross-validated agreement with humans),
the calibration applied, the leaderboard, and the detail (bias before/after, in-sample agreement,
validity checks, per-group fit lines). :func:`build_mt_report` is the layout step (no statistic is
computed there); :func:`mt_report` runs both.
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._base.caller import DEFAULT_CALLER, Caller
from .._base.grouping import group_index
from .._base.progress import Steps
from .._base.result import Result
from .._base.signature import with_direction
from ..calibration import CalibrationSummary, HumanScale, calibration_summary
from ..calibration._scales import bounded_by_name, direction_for, past_the_scale_note
from ..decision import (
    RECOMMEND_PROCEDURE,
    CalibrationDecision,
    Diagnosis,
    diagnose,
    recommend_calibration,
)
from ..exceptions import InputError, PooledPairsWarning, repeated_column
from ..leaderboard import (
    DEFAULT_READING,
    Leaderboard,
    ScoreReading,
    SystemCalibration,
    SystemScores,
    check_model_score,
    model_calibration,
    rank_systems,
    system_calibration,
    system_scores,
)
from ..metrics import higher_is_better as direction_of
from ..stats import DEFAULT_RESAMPLING, Resampling
from ..table import DEFAULT_BY, EvalTable, as_table, pooled_pairs_note, scored_groups
from ._diagnostics import agreement_section, bias_section, validity_section
from ._figures import figure_from_matplotlib
from ._judges import judges_section
from ._meta import meta_section
from ._model import Report, Section
from ._output_checks import output_checks_section
from ._plots import (
    FLIERS_UP_TO,
    budget_curve_figure,
    group_means_figure,
    label_means_words,
    metric_human_figure,
    score_distributions_figure,
    system_scores_figure,
)
from ._sections import generic_section, warnings_section
from ._summary import agreement_line, check_alerts, leaderboard_section, summary_section, verdict

__all__ = ["DataSummary", "MTAnalysis", "summarize_data", "analyze_mt", "build_mt_report", "mt_report"]

logger = logging.getLogger(__name__)

#: the report says which cells differ for boards of up to this many (group, system) cells (n^2/2 pairs)
PAIRS_UP_TO = 400


@dataclass(frozen=True, eq=False)
class DataSummary(Result):
    """Counts of the rows analysed: rows, groups, systems, missing scores and human-score coverage; and
    ``n_input_rows``, the rows of the table as given (more than ``n_rows`` where whole groups had no finite score
    and were left out; ``None``: not known, taken as ``n_rows``)."""

    n_rows: int
    n_groups: int
    n_systems: int | None
    n_missing_score: int
    n_human: int | None
    groups: pd.DataFrame  # per group: n, n_systems, n_missing_score, n_human
    n_input_rows: int | None = None

    @property
    def n_left_out(self) -> int:
        """Rows of the input in groups left out for want of any finite score."""
        return 0 if self.n_input_rows is None else self.n_input_rows - self.n_rows


def summarize_data(frame: pd.DataFrame, score: str, group: str, human: str | None = None,
                   system: str | None = "system", *, n_input_rows: int | None = None) -> DataSummary:
    """Count rows per group; a score or human value counts as present when it is finite. ``n_input_rows``:
    the rows of the table ``frame`` was taken from (its groups without a finite score left out)."""
    g = frame.groupby(group, sort=True, observed=True)
    table = pd.DataFrame({"n": g.size()})
    has_system = system is not None and system in frame.columns
    if has_system:
        table["n_systems"] = g[system].nunique()
    bad = ~np.isfinite(pd.to_numeric(frame[score], errors="coerce").to_numpy(dtype=float))
    table["n_missing_score"] = pd.Series(bad, index=frame.index).groupby(frame[group], observed=True).sum()
    if human is not None:
        present = np.isfinite(pd.to_numeric(frame[human], errors="coerce").to_numpy(dtype=float))
        table["n_human"] = pd.Series(present, index=frame.index).groupby(frame[group], observed=True).sum()
    table = table.reset_index().rename(columns={group: "group"})
    n_systems = int(frame[system].nunique()) if has_system else None
    n_human = int(table["n_human"].sum()) if human is not None else None
    return DataSummary(len(frame), len(table), n_systems, int(bad.sum()), n_human, table, n_input_rows)


@dataclass(frozen=True, eq=False)
class MTAnalysis(Result):
    """Everything the MT report shows, computed.

    ``frame``: the input rows (language columns normalised) with the calibrated segment score in
    column ``calibrated``; ``scores``: raw system scores with their bootstrap; ``recommendation``:
    which calibration and why; ``calibration``: the map applied (the recommended one, or ``model``);
    ``board``: the leaderboard; ``verification``: per-group mean/std before and after; ``diagnosis``:
    bias before/after, in-sample agreement with humans, validity checks; ``fits``: per-group
    least-squares line of the human score on the segment score (None without human scores);
    ``warnings``: warnings raised while computing; ``headline``: sentences to lead the summary with;
    ``pairs``: which (group, system) cells differ (:meth:`xleval.leaderboard.Leaderboard.pairs`, from the
    board's joint draws; anchored calibration only, where the calibrated scale is the human one).
    """

    frame: pd.DataFrame
    score: str
    calibrated: str
    group: str
    human: str | None
    system: str | None
    summary: DataSummary
    scores: SystemScores
    recommendation: CalibrationDecision
    calibration: SystemCalibration
    board: Leaderboard
    verification: CalibrationSummary
    diagnosis: Diagnosis
    fits: pd.DataFrame | None
    in_sample: bool
    warnings: tuple[str, ...] = ()
    headline: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)
    pairs: Any = None  # CellPairs of an anchored board (which cells differ), None otherwise or past PAIRS_UP_TO cells


def analyze_mt(df: EvalTable | pd.DataFrame, score: str | None = None, *, by: str | None = None,
               human: str | None = None, system: str | None = "system", model: Any = None, method: str = "auto",
               reading: ScoreReading = DEFAULT_READING, resampling: Resampling = DEFAULT_RESAMPLING,
               human_scale: HumanScale | str | None = None, headline: tuple[str, ...] = (),
               caller: Caller = DEFAULT_CALLER) -> MTAnalysis:
    """Compute every result the MT report shows (see :class:`MTAnalysis`).

    The calibration is ``model`` (a saved LGN or AnchoredCalibrator) when given, else ``method``
    (``auto``: the recommended one, fitted on this table's system scores; ``lgn``, ``anchored`` or
    ``none``). ``system`` is the system column (found by its canonical name ``system``; None or a
    missing column: each group is one system). ``reading`` (:class:`xleval.leaderboard.ScoreReading`): the
    score's metric, direction, signature and bootstrap unit, as the leaderboard reads them. ``resampling``
    (:class:`xleval.stats.Resampling`): its ``random_state`` and ``n_resamples`` drive every bootstrap and the
    cross-validation. Warnings raised on the way are recorded (and logged).
    ``caller`` (:class:`xleval.decision.Caller`): the input's name in messages, the
    :class:`xleval.decision.AdviceRenderer` whose advice names commands that run as written (the CLI passes
    one), and the progress callback, told of each finished step (system scores, recommendation, ranking,
    diagnosis, fit lines). ``human_scale`` (:class:`xleval.calibration.HumanScale`, or a bare name: ``z``,
    ``raw``, ...): the name for the decision, the direction and bounds for an anchored fit."""
    metric, signature, force, higher_is_better = (reading.metric, reading.signature, reading.force,
                                                  reading.higher_is_better)
    n_resamples, level, random_state = resampling.n_resamples, resampling.level, resampling.random_state
    scale = HumanScale.of(human_scale)
    human_scale, human_higher_is_better, human_range = scale.name, scale.higher_is_better, scale.range
    where, commands, progress = caller.where, caller.commands, caller.progress
    steps = Steps(progress, 5)
    table = _one_grouping(as_table(df, score=score, by=by, human=human, default_by=DEFAULT_BY, source=where,
                                   normalize_languages=True))
    score, human, where, by = table.score_column, table.human, table.source, table.by[0]
    n_input_rows = len(table.frame)
    with warnings.catch_warnings(record=True) as left_out:  # rows without a score: said once, among the warnings
        warnings.simplefilter("always")
        table = scored_groups(table)  # what every part of the report reads (a group with no score is none)
    # the direction a named scale fixes (MQM: by the labels' signs), as the leaderboard reads it
    human_higher_is_better = direction_for(table.frame, human, human_scale, human_higher_is_better)
    if model is not None:
        check_model_score(model, score)  # before the bootstrap: the leaderboard's rule
    frame = table.frame
    bounded = source = None
    if human_range is None and model is None:  # a named scale's bounds, as on the command line
        human_range, bounded, source = bounded_by_name(frame, human, human_scale)
    signature = signature if signature is not None else table.signature(score)  # given, else the table's
    system = table.system_role(system)
    system = system if system is not None and system in frame.columns else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the report's warnings (a negated error scale read as such among them)
        hib = (direction_of(score, signature, metric=metric, values=frame[score] if score in frame.columns else None)
               if higher_is_better is None else bool(higher_is_better))
        scores = system_scores(frame, score, by, system=system, human=human, metric=metric, unit=reading.unit,
                               n_resamples=n_resamples, level=level, random_state=random_state, where=where)
        steps.done()
        procedure = RECOMMEND_PROCEDURE.with_(n_resamples=n_resamples, random_state=random_state)
        rec = recommend_calibration(table, score, by, human=human, system=system, procedure=procedure,
                                    commands=commands, human_scale=human_scale,
                                    human_higher_is_better=human_higher_is_better, score_higher_is_better=hib)
        steps.done()
        calibration = (model_calibration(model, scores.frame, by, signature=signature, force=force, score=score,
                                         where=where) if model is not None else
                       system_calibration(rec.method if method == "auto" else method, scores.frame, score, by,
                                          human=human, system=system, human_higher_is_better=human_higher_is_better,
                                          human_range=human_range, score_higher_is_better=hib,
                                          human_scale=human_scale))
        board = rank_systems(scores, calibration, higher_is_better=hib, recommendation=rec)
        steps.done()
        calibrated = f"{score}_calibrated"
        frame = frame.assign(**{calibrated: _calibrate_rows(frame, score, by, calibration)})
        # the calibrated column's signature says its direction (an anchored map's: the human scale's), so the
        # agreement reads raw and calibrated scores each in its own direction
        said = getattr(calibration.model, "calibrated_signature", None) if calibration.is_anchored else None
        # a direction the caller gave (higher_is_better=): the diagnosis reads the score (and an LGN or raw
        # calibrated column) in it too, as the leaderboard and the decision do
        stated = signature if higher_is_better is None else with_direction(signature, hib)
        signatures = {**table.signatures, **({score: stated} if stated else {}),
                      **({calibrated: said()} if said is not None else {calibrated: stated} if stated else {})}
        diagnosis = diagnose(replace(table, _frame=frame, signatures=signatures), score, by, human=human,
                             calibrated=calibrated, system=system, procedure=procedure,
                             caller=Caller(commands=commands),
                             human_scale=scale.with_(higher_is_better=human_higher_is_better), decision=rec)
        steps.done()
        fits = _fit_lines(frame, score, human, by) if human else None
        steps.done()
    # the calibrated column repeats the score's keys: its repeats are the score's, said once
    messages = tuple(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in [*left_out, *caught]
                                   if repeated_column(w) is None or repeated_column(w) != calibrated))
    messages += (bounded,) if bounded is not None and calibration.is_anchored else ()
    pooled = pooled_pairs_note(frame, [by], system)  # tgt_lang over several pairs: two test sets in a group
    messages += (f"{PooledPairsWarning.__name__}: {pooled}",) if pooled is not None else ()
    if commands is None and calibration.is_anchored:  # the command line says it with the command that reruns it
        past = past_the_scale_note(board.rows, frame, human, human_range, source=source, human_scale=human_scale)
        messages += (past,) if past is not None else ()
    for message in messages:
        logger.warning(message)
    verification = calibration_summary(frame[score], frame[calibrated], frame[by])
    meta = {"signature": signature or getattr(model, "signature_", None), "rows": len(frame),
            "random_state": random_state}
    pairs = board.pairs(advice=commands, human_scale=human_scale) if board.draws is not None and \
        calibration.is_anchored and len(board.rows) <= PAIRS_UP_TO else None
    return MTAnalysis(frame, score, calibrated, by, human, system, summarize_data(frame, score, by, human, system,
                                                                             n_input_rows=n_input_rows),
                      scores, rec, calibration, board, verification, diagnosis, fits, model is None, messages,
                      tuple(headline), meta, pairs)


def _one_grouping(table: EvalTable) -> EvalTable:
    """``table``, refused with one clear line when it groups by more than one column (the report groups by one)."""
    if len(table.by) != 1:
        raise InputError(f"{table.source}: the report groups by one column; got by={list(table.by)!r}",
                         argument="by", value=list(table.by))
    return table


def _calibrate_rows(frame: pd.DataFrame, score: str, by: str, calibration: SystemCalibration) -> np.ndarray:
    """Each segment through its group's map (the segments' view of the calibration: their means per
    system are the calibrated system scores)."""
    return calibration.apply_rows(frame, score)


def _fit_lines(frame: pd.DataFrame, score: str, human: str, by: str) -> pd.DataFrame | None:
    """Per group, the least-squares line of the human score on the segment score (the figure's lines;
    ``scipy.stats.linregress``), NaN for a group with fewer than 2 distinct scores."""
    from scipy.stats import linregress

    x = pd.to_numeric(frame[score], errors="coerce").to_numpy(dtype=float)
    h = pd.to_numeric(frame[human], errors="coerce").to_numpy(dtype=float)
    labels = group_index([frame[by]], names=[by]).row_labels()
    both = np.isfinite(x) & np.isfinite(h)
    if both.sum() < 2:
        return None
    rows = []
    for g in sorted(set(labels[both].tolist())):
        sel = both & (labels == g)
        if np.unique(x[sel]).size < 2:
            rows.append({"group": g, "n": int(sel.sum()), "intercept": np.nan, "slope": np.nan})
            continue
        fit = linregress(x[sel], h[sel])
        rows.append({"group": g, "n": int(sel.sum()), "intercept": float(fit.intercept), "slope": float(fit.slope)})
    return pd.DataFrame(rows)


def build_mt_report(analysis: MTAnalysis, *, title: str | None = None, extra_sections: tuple[Section, ...] = (),
                    image_format: str = "svg", headline: tuple[str, ...] = (), meta: Any = None,
                    output_checks: Any = None, judges: Any = None) -> Report:
    """Arrange an :class:`MTAnalysis` answer first: summary, leaderboard, warnings, the plots, the
    detail (no statistic is computed here). ``headline``: sentences to lead the summary with.
    ``output_checks`` (an :class:`xleval.output_checks.OutputChecks`) and ``meta`` (an
    :class:`xleval.meta.MetaEvaluation`) and ``judges`` (an :class:`xleval.judges.JudgeAgreement`): their
    sections, before ``extra_sections``."""
    a = analysis
    lead = tuple(headline) + a.headline
    figures = []
    if a.human is not None:
        figures.append(_system_figure(a, image_format))
    if a.recommendation.budget_curve is not None:
        figures.append(_budget_figure(a, image_format))
    summary = summary_section(a.recommendation, a.board, score=a.score, by=a.group, figures=figures, headline=lead,
                              applied=_applied(a))
    alerts = check_alerts(a.recommendation, a.diagnosis, calibration_method=_kind(a), board=a.board)
    messages = list(a.warnings) + list(a.calibration.notes)
    sections = [summary, leaderboard_section(a.board), warnings_section(messages, checks=alerts)]
    if a.pairs is not None:
        sections.append(_pairs_section(a))
    if a.human is not None and a.fits is not None:
        sections.append(_human_section(a, image_format))
    sections += [_distribution_section(a, image_format),
                 bias_section(a.diagnosis, (_means_figure(a, image_format),)), _calibration_section(a)]
    if a.diagnosis.agreement is not None:
        # an anchored map fitted here is measured on the labels it was fitted on: say so, with the out-of-fold figures
        fitted_here = a.in_sample and a.calibration.is_anchored
        sections.append(agreement_section(a.diagnosis.agreement, in_sample=(a.calibrated,) if fitted_here else (),
                                          out_of_fold=agreement_line(a.recommendation.evaluation,
                                                                     a.recommendation.method)))
    sections.append(validity_section(a.diagnosis.validity))
    if a.diagnosis.validity_system is not None:
        sections.append(validity_section(a.diagnosis.validity_system, id="validity-system",
                                         title="Validity of LGN's equal-quality assumption, system level"))
    if output_checks is not None:
        sections.append(output_checks_section(output_checks, image_format=image_format))
    if meta is not None:
        sections.append(meta_section(meta, image_format=image_format))
    if judges is not None:
        sections.append(judges_section(judges, image_format=image_format))
    sections += list(extra_sections)
    sections.append(_data_section(a))
    facts = (("score", a.score), ("grouped by", a.group), ("systems", a.system or "none (each group is one system)"),
             ("human", a.human or "none"), ("rows", a.summary.n_rows),
             *((("input rows", a.summary.n_input_rows),) if a.summary.n_left_out else ()),
             ("calibration", _applied(a)),
             ("signature", a.meta.get("signature") or "not recorded"), ("random_state", a.meta.get("random_state")))
    report_summary = verdict(a.recommendation, a.board, score=a.score, headline=lead)
    if a.pairs is not None:  # which cells the labels tell apart, across groups and within
        told = a.pairs.declared()
        report_summary = {**report_summary, "which_cells_differ": {
            "level": a.pairs.level, "across": told["across"], "within": told["within"],
            "summary": a.pairs.summary(), "notes": list(a.pairs.notes)}}
    return Report(title or f"xleval report: {a.score} by {a.group}", tuple(sections), facts, report_summary,
                  tuple(a.board.to_dict()["rows"]))


def mt_report(df: EvalTable | pd.DataFrame, score: str | None = None, **kwargs: Any) -> Report:
    """:func:`analyze_mt` then :func:`build_mt_report` (layout options: ``title``, ``extra_sections``,
    ``image_format``, ``meta``, ``output_checks``, ``judges``)."""
    layout = {k: kwargs.pop(k) for k in ("title", "extra_sections", "image_format", "meta", "output_checks", "judges")
              if k in kwargs}
    return build_mt_report(analyze_mt(df, score, **kwargs), **layout)


def _kind(a: MTAnalysis) -> str:
    if a.calibration.method == "model":
        return "model-anchored" if a.calibration.model.kind == "anchored" else "model-lgn"
    return a.calibration.method


def _applied(a: MTAnalysis) -> str:
    if a.calibration.method == "model":
        return a.calibration.description
    how = "the recommended calibration" if a.recommendation.method == a.calibration.method else "as requested"
    return f"{a.calibration.description}; fitted on this table ({how})"


def _cal_label(a: MTAnalysis) -> str:
    return {"anchored": "anchored", "lgn": "LGN", "none": "not calibrated"}.get(a.calibration.method,
                                                                                "saved calibrator")


def _system_figure(a: MTAnalysis, image_format: str):
    rows = a.board.rows
    few = label_means_words(rows["n_human"], rows["n_segments"])
    fig = system_scores_figure(rows["group"], rows["raw"], rows["calibrated"], rows["human"], score=a.score,
                               human_label=str(a.human), calibrated_label=_cal_label(a), group_label=a.group,
                               of_labels=bool(few))
    return figure_from_matplotlib(fig, "System scores against human scores",
                                  "One marker per system, one colour per group. Top: raw scores; bottom: calibrated. "
                                  "Scores are comparable across groups when all groups fall on one rising line." + few,
                                  fmt=image_format)


def _budget_figure(a: MTAnalysis, image_format: str):
    rec = a.recommendation
    reference = {}
    if rec.evaluation is not None:
        for name, label in (("raw", "raw"), ("lgn", "LGN"), ("anchored", "anchored, the table's labels")):
            v = rec.evaluation.variant(name)
            reference[label] = (v.accuracy.estimate, v.accuracy.ci_low, v.accuracy.ci_high)
    fig = budget_curve_figure(rec.budget_curve, reference=reference, group_label=a.group)
    return figure_from_matplotlib(fig, "Accuracy against the number of human labels per group",
                                  "Cross-validated cross-group pairwise accuracy of anchored calibration fitted with "
                                  "K human labels per group (the budget curve); horizontal lines: raw and LGN, which "
                                  "need no labels, and anchored with every label in the table.", fmt=image_format)


def _human_section(a: MTAnalysis, image_format: str) -> Section:
    if a.human is None or a.fits is None:
        raise ValueError("the human-score section needs human scores and their per-group fits")
    x = pd.to_numeric(a.frame[a.score], errors="coerce").to_numpy(dtype=float)
    h = pd.to_numeric(a.frame[a.human], errors="coerce").to_numpy(dtype=float)
    labels = group_index([a.frame[a.group]], names=[a.group]).row_labels()
    both = np.isfinite(x) & np.isfinite(h)
    lines = {str(r["group"]): (r["intercept"], r["slope"]) for r in a.fits.to_dict(orient="records")
             if np.isfinite(r["slope"])}
    panels = []
    for g in sorted(set(labels[both].tolist())):
        sel = both & (labels == g)
        intercept, slope = lines.get(g, (None, None))
        panels.append((g, x[sel], h[sel], intercept, slope))
    fig = metric_human_figure(panels, score=a.score, human_label=a.human)
    image = figure_from_matplotlib(fig, f"{a.score} against {a.human}, per {a.group}",
                                   "One panel per group with its least-squares line; the axes are shared, so lines "
                                   "that differ in height or slope are the per-group bias a calibration must remove.",
                                   fmt=image_format)
    return generic_section(f"Scores against human scores, per {a.group}", figures=[image], id="human-scores")


def _distribution_section(a: MTAnalysis, image_format: str) -> Section:
    groups = [str(g) for g in a.verification.groups["group"]]
    key = group_index([a.frame[a.group]], names=[a.group]).row_labels()
    raw = [a.frame.loc[key == g, a.score].to_numpy(dtype=float) for g in groups]
    cal = [a.frame.loc[key == g, a.calibrated].to_numpy(dtype=float) for g in groups]
    target = float(a.calibration.model.target[0]) if _kind(a) in ("lgn", "model-lgn") else None
    fig = score_distributions_figure(groups, raw, cal, score=a.score, group_label=a.group,
                                     calibrated_label=_cal_label(a), target_mean=target)
    image = figure_from_matplotlib(fig, "Score distributions before and after calibration",
                                   "Top: raw segment scores; bottom: the same segments through the calibration map. "
                                   "Boxes: quartiles; whiskers: 1.5 IQR; diamonds: means. " + _outliers_caption(raw),
                                   fmt=image_format)
    return generic_section("Distributions per group", figures=[image], id="distributions")


def _outliers_caption(raw) -> str:
    """What the box plots do with the points beyond the whiskers (drawn for small groups only)."""
    largest = max((int(np.isfinite(np.asarray(v, dtype=float)).sum()) for v in raw), default=0)
    if largest <= FLIERS_UP_TO:
        return "Dots: segments beyond the whiskers."
    return (f"Segments beyond the whiskers are not drawn (a group has {largest} rows, more than {FLIERS_UP_TO}); "
            "the whiskers end at 1.5 IQR, and the means include every segment.")


def _means_figure(a: MTAnalysis, image_format: str):
    v = a.verification
    span = float(a.calibration.model.target[1]) if _kind(a) in ("lgn", "model-lgn") else None
    fig = group_means_figure([str(g) for g in v.groups["group"]], v.groups["mean_before"], v.groups["mean_after"],
                             score=a.score, group_label=a.group, calibrated_label=_cal_label(a), after_span=span)
    return figure_from_matplotlib(fig, "Group means before and after calibration", fmt=image_format)


def _calibration_section(a: MTAnalysis) -> Section:
    cal = a.calibration
    facts = {"method": cal.description, "calibrated scale": cal.scale,
             "sd of group means (segments), raw": a.verification.sd_of_means_before,
             "sd of group means (segments), calibrated": a.verification.sd_of_means_after}
    lgn_share = _lgn_weight(cal.model)
    if lgn_share is not None:  # what the labels say between the two structural priors of the offsets
        weight, sd = lgn_share
        facts["weight of LGN's equal levels in the offsets' prior"] = (
            f"{weight:.2f}, sd {sd:.2f} (0: the raw scale's common offset; 1: every group at the same true level; "
            "read from the labels: an sd near 0.3, a flat prior's, means they cannot tell the two apart; "
            "docs/calibration.md)")
    elif _two_labelled_groups(cal.model):
        facts["weight of LGN's equal levels in the offsets' prior"] = (
            "none: with two labelled groups each keeps its own labels' offset (two groups cannot weigh LGN's "
            "equal levels against the raw scale's common offset; docs/calibration.md)")
    tables = []
    if cal.model is not None:
        groups = cal.model.group_table()
        if "group" in groups.columns:  # by name, as the other per-group tables: never by the input rows' order
            groups = groups.iloc[np.argsort(groups["group"].astype(str).to_numpy(), kind="stable")]
        tables.append(("Per-group parameters of the calibration map", groups.reset_index(drop=True)))
    tables.append(("Per-group mean and population std (ddof=0) of segment scores before and after",
                   a.verification.groups))
    note = ("Fitted on the system scores of this table; the cross-validated accuracy in the summary measures the same "
            "procedure on systems it was not fitted on." if a.in_sample else "Loaded from a file fitted on other data.")
    return generic_section("Calibration", paragraphs=[note], facts=facts, tables=tables, id="calibration")


def _data_section(a: MTAnalysis) -> Section:
    s = a.summary
    left_out = ({"input rows": s.n_input_rows, "rows left out (groups with no finite score)": s.n_left_out}
                if s.n_left_out else {})
    facts = {"rows": s.n_rows, **left_out, f"groups ({a.group})": s.n_groups, "systems": s.n_systems,
             "rows with a missing/non-finite score": s.n_missing_score,
             "system score": a.scores.aggregation, "bootstrap unit": a.scores.unit}
    if a.human is not None:
        facts[f"rows with a human score ({a.human})"] = s.n_human
    return generic_section("Data summary", facts={k: v for k, v in facts.items() if v is not None},
                           tables=[("Rows per group", s.groups)], id="data")


def _pairs_section(a: MTAnalysis) -> Section:
    """Which (group, system) cells differ: the share of pairs the intervals decide, across groups and within,
    and one line per pair of groups (the leaderboard's joint draws; ``xleval leaderboard --pairs FILE``
    writes every pair)."""
    from ..calibration._pairs import share_words

    pairs = a.pairs
    counts = pairs.counts()
    n_told, n_across = counts["across"]
    level = f"{pairs.level:.0%}"
    lead = (f"Of the pairs of cells from different groups, {share_words(n_told, n_across)} are told apart: "
            f"the {level} interval of their calibrated difference excludes 0 (offsets, slope, each cell's deviation "
            "from the line, the noise of its mean over its own segments and test-set sampling drawn jointly, so one "
            "group's offset error cancels within the group "
            "and counts once across groups). The rest say \"cannot tell\": the labels do not settle them."
            if n_across else "One group: every pair is within it.")
    within = f"Within groups, {share_words(*counts['within'])} pairs of cells are told apart." if counts["within"][1] \
        else ""
    notes = list(pairs.notes)
    rows = [{"which cells differ": line} for line in pairs.summary()]
    return generic_section("Which cells differ", paragraphs=[p for p in (lead, within, *notes) if p],
                           tables=[("Per pair of groups (the clearest differences named)", rows)], id="pairs")


def _two_labelled_groups(model: Any) -> bool:
    """Whether ``model`` is a fitted anchored calibrator with the mixed prior whose labels cover two groups (each
    then keeps its own offset)."""
    if model is None or getattr(model, "kind", None) != "anchored" or getattr(model, "prior", None) != "mixed":
        return False
    return int((model.group_table()["source"] == "labels").sum()) == 2


def _lgn_weight(model: Any) -> tuple[float, float] | None:
    """The mixed prior's weight on LGN's equal levels of a fitted anchored calibrator and its posterior sd, or
    None."""
    if model is None or getattr(model, "kind", None) != "anchored" or getattr(model, "prior", None) != "mixed":
        return None
    described = model.describe()
    weight = float(described.get("lgn_weight", float("nan")))
    return (weight, float(described.get("lgn_weight_sd", float("nan")))) if np.isfinite(weight) else None

