"""``diagnose``: the whole answer for one table — bias, before/after, agreement with humans, validity."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from .._base.caller import DEFAULT_CALLER, Caller
from .._base.progress import Steps
from .._base.result import Result
from ..calibration import HumanScale
from ..diagnostics import (
    AgreementResult,
    BiasComparison,
    BiasDiagnosis,
    ValidityCheck,
    ValidityVerdict,
    compare_bias,
    human_agreement,
    status_said,
    validity_verdict,
)
from ..table import EvalTable, pooled_pairs_note
from ._decide import METHOD_NAMES, CalibrationDecision, _lead_overruled, _table, decide_calibration, overruled_lead
from ._evidence import gather_evidence
from ._procedure import DEFAULT_PROCEDURE, Procedure
from ._sentences import MEASURED_BASES

__all__ = ["Diagnosis", "diagnose"]


@dataclass(frozen=True, eq=False)
class Diagnosis(Result):
    """Everything ``xleval diagnose`` reports.

    ``bias``: BiasDiagnosis of the raw score; ``comparison``: BiasComparison raw vs calibrated
    (None without ``calibrated``); ``agreement``: AgreementResult (None without ``human``; it
    holds the raw score and, when given, the calibrated one, compared on cross-group pairwise
    accuracy); ``validity``: ValidityCheck of LGN's equal-quality assumption on this table
    (``untested`` without ``human``); ``validity_system``: the same check on (group, system) mean
    human scores, in units of the spread of system quality within a group (None without ``human``
    or a ``system`` column); ``verdict``: the two levels combined (system level primary, the worse
    status wins); ``recommendation``: the decision (:func:`decide_calibration`: the cross-validated
    comparison at the labels in the table where it can be made, else the rule-based flow);
    ``advice``: one line from that decision (the bias rule only where no measured effect exists);
    ``score``, ``calibrated``, ``human``, ``by``.
    """

    score: str
    by: str
    bias: BiasDiagnosis
    validity: ValidityCheck
    calibrated: str | None = None
    human: str | None = None
    comparison: BiasComparison | None = None
    agreement: AgreementResult | None = None
    notes: tuple[str, ...] = field(default=())
    validity_system: ValidityCheck | None = None
    verdict: ValidityVerdict | None = None
    recommendation: CalibrationDecision | None = None
    advice: str = ""


def diagnose(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | list[str] | None = None, *,
             human: str | None = None, calibrated: str | None = None, system: str | None = "system",
             procedure: Procedure = DEFAULT_PROCEDURE, caller: Caller = DEFAULT_CALLER,
             average_by: str = "none", alternative: str = "two-sided",
             human_scale: HumanScale | str | None = None,
             decision: CalibrationDecision | None = None) -> Diagnosis:
    """Diagnose language bias of ``score`` (and of ``calibrated``), its agreement with ``human``
    and whether LGN's equal-quality assumption holds on ``data``. ``procedure``: the bias rule's
    ``threshold``, the bootstrap's ``n_resamples``, ``level`` and ``random_state`` (and the decision's
    folds). ``caller`` (:class:`Caller`): its ``commands``, the table's path and column mapping, so that the
    advice names commands that run as written, and its ``progress``. ``average_by`` (none, group, item) and
    ``alternative`` (two-sided, greater, less): how the agreement's all-pairs accuracy is averaged and the
    sidedness of the raw-vs-calibrated test (:func:`~xleval.diagnostics.human_agreement`). The progress is
    told of each finished step (bias, agreement, validity, recommendation; :mod:`xleval._base.progress`).
    ``human_scale``: ``z`` (the human
    column is standardised within groups, like WMT DA z), ``raw`` or None
    (:func:`~xleval.diagnostics.human_scale_check` looks at the data). ``decision``: the decision when
    already made on this table (the report makes it once): its evidence (bias, validity) is read, not
    measured again. The agreement reads every column in its own direction (MQM error points, an error rate and a
    calibrated column on MQM's scale are negated before it): the human column's is ``human_scale``'s
    (:class:`~xleval.calibration.HumanScale`: its ``higher_is_better``, else its name's, else higher), the
    score's and a calibrated column's by their signatures (an anchored map's ``human_better:``; else the one
    rule, :func:`xleval.metrics.higher_is_better`).
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    :data:`~xleval.table.DEFAULT_BY`, ``system="system"``)."""
    commands, progress = caller.commands, caller.progress
    scale = HumanScale.of(human_scale)
    human_scale = scale.name
    table = _table(data, score, by, human, system)
    score, human, system = table.score_column, table.human, table.system
    steps = Steps(progress, 3 + (human is not None))
    evidence = decision.evidence if decision is not None and decision.evidence is not None else None
    if evidence is None or evidence.score != score or evidence.by != table.by:
        evidence = gather_evidence(table, human_scale=human_scale, human_higher_is_better=scale.higher_is_better,
                                   procedure=procedure)
    kwargs = dict(threshold=procedure.threshold, n_resamples=procedure.n_resamples, level=procedure.level,
                  random_state=procedure.random_state)
    if calibrated is not None:
        comparison = compare_bias(table, score, calibrated, before=evidence.bias, **kwargs)
    else:
        comparison = None
    bias = evidence.bias
    steps.done()
    # the decision first: where nothing states the human scale's direction, the agreement reads it as the decision
    # found it in the labels (one direction in one answer)
    recommendation = decision or decide_calibration(table, procedure=procedure, evidence=evidence,
                                                    commands=commands)
    steps.done()
    agreement = None
    if human is not None:
        columns = [score] + ([calibrated] if calibrated else [])
        lower, note = _lower_columns(table, calibrated, human_scale, scale.higher_is_better, recommendation)
        agreement = human_agreement(table.frame, columns, human, list(table.by), system=system,
                                    compare=[(score, calibrated)] if calibrated else [],
                                    resampling=procedure.resampling, average_by=average_by, alternative=alternative,
                                    lower_is_better=lower)
        agreement = replace(agreement, notes=(*agreement.notes, note)) if note else agreement
        steps.done()
    validity, validity_system = evidence.validity_segment, evidence.validity_system
    verdict = evidence.verdict or validity_verdict(validity, None)  # without human scores: the segment check's
    steps.done()
    bias = _qualified(bias, recommendation)  # with human scores, the evidence has no reminder to check against them
    pooled = pooled_pairs_note(table.frame, list(table.by), system)  # tgt_lang over several pairs: two test sets
    return Diagnosis(score, bias.by, bias, validity, calibrated, human, comparison, agreement,
                     notes=(pooled,) if pooled is not None else (), validity_system=validity_system,
                     verdict=verdict, recommendation=recommendation,
                     advice=advice_line(bias, verdict, recommendation, human))


def _lower_columns(table: EvalTable, calibrated: str | None, human_scale: str | None, human_up: bool | None,
                   decision: CalibrationDecision) -> tuple[list[str], str]:
    """The columns of the agreement whose lower values are better, and the note that says where the human column's
    direction came from when nothing stated it: the score and a calibrated column by the one rule (a calibrated
    column's signature says its direction: an anchored map's ``human_better:``), the human column by its given or
    named direction, else the one the ``decision``'s comparison found in the labels, else higher."""
    from ..calibration._scales import direction_for
    from ._compare import score_direction

    human = table.human
    human_up = direction_for(table.frame, human, human_scale, human_up)
    note = ""
    if human_up is None and human is not None:
        found = getattr(decision.evaluation, "human_direction", None)
        if found in (1, -1):
            human_up = found == 1
            note = (f"human column {human!r}: read as {'higher' if human_up else 'lower'} is better, the direction "
                    "the decision found in the labels; say it with human_higher_is_better=True or "
                    "human_higher_is_better=False if that is wrong")
        else:  # no comparison ran (too few systems for its folds, labels in some groups only) or it was unsettled
            why = "the labels do not settle it" if decision.evaluation is not None else (
                "no out-of-fold comparison ran to read it in the labels")
            note = (f"human column {human!r}: read as higher is better, as nothing states its direction and {why}; "
                    "say it with human_higher_is_better=True or human_higher_is_better=False, or name the scale with "
                    "human_scale=")
    up = {table.score_column: score_direction(table, table.score_column, None),
          human: True if human_up is None else human_up}
    if calibrated is not None:
        up[calibrated] = score_direction(table, calibrated, None)
    return [c for c, u in up.items() if c is not None and not u], note


def _qualified(bias: BiasDiagnosis, decision: CalibrationDecision) -> BiasDiagnosis:
    """The bias rule's verdict line, qualified where the effect of calibration was measured: the rule
    reads score means only, and the measured effect decides (no second opinion beside the advice)."""
    if decision.basis not in MEASURED_BASES:
        return bias
    rule = ("the groups' scores differ beyond the rule", "no calibration needed by the")
    measured = (f"; the measured effect of calibration decides instead: {decision.accuracy['none']:.2f} raw, "
                f"{decision.accuracy['lgn']:.2f} LGN, {decision.accuracy['anchored']:.2f} anchored out of fold")
    reasons = tuple(r + measured if r.startswith(rule) else r for r in bias.reasons)
    return replace(bias, reasons=reasons)


def advice_line(bias: BiasDiagnosis, verdict: ValidityVerdict, choice: CalibrationDecision,
                human: str | None) -> str:
    """The decision in one sentence that never contradicts itself nor the measured effect: where the
    cross-validated comparison exists, its numbers speak and the 0.5-sd rule only qualifies them; the
    commands it names are the decision's (``CalibrationDecision.commands``), complete when it was made
    with an :class:`AdviceRenderer` (the CLI passes one that writes commands)."""
    d = bias.largest_smd.estimate if bias.largest_smd is not None else float("nan")
    then = " (" + " then ".join(f"`{c}`" for c in choice.commands) + ")" if choice.commands else ""
    if choice.basis in MEASURED_BASES:
        acc = choice.accuracy
        best = max(acc[m] for m in ("lgn", "anchored"))
        says = "advises" if bias.calibration_advised else "would not advise"
        rule = f"the {bias.threshold:g}-sd rule on score means alone {says} calibration (largest d = {d:.2f})"
        if choice.method == "none":
            return (f"calibration not needed: out of fold the raw scores order cross-group pairs as well as any "
                    f"calibration ({acc['none']:.2f} raw, {acc['lgn']:.2f} LGN, {acc['anchored']:.2f} anchored at "
                    f"{choice.budget} labels per group; {rule})")
        if choice.basis == "levels":
            led = "led" if acc["none"] >= best else "tied with the best"  # as the decision's reason says
            head = (f"calibration advised: the groups' score levels differ (largest d = {d:.2f} > {bias.threshold:g} "
                    f"pooled sd), so raw scores cannot rank across groups; out of fold at {choice.budget} labels per "
                    f"group the raw scores {led} ({acc['none']:.2f} raw, {acc['lgn']:.2f} LGN, "
                    f"{acc['anchored']:.2f} anchored), read against few labels per system, which does not overturn "
                    "it")
            if choice.method == "anchored":
                return f"{head}: use anchored calibration{then}"
            return f"{head}: use LGN"
        if choice.basis == "assumption":
            led = ("the raw scores and LGN led together, the raw scores ranking across groups as LGN does"
                   if overruled_lead(choice) == "none" else "LGN led")
            return (f"calibration advised: out of fold at {choice.budget} labels per group {led} ({acc['none']:.2f} "
                    f"raw, {acc['lgn']:.2f} LGN, {acc['anchored']:.2f} anchored), but {_lead_overruled(verdict)}: use "
                    f"anchored calibration{then}")
        if choice.basis == "tie":  # not clearly beaten: no claim that it moves the accuracy either way
            head = (f"calibration advised: out of fold at {choice.budget} labels per group "
                    f"{METHOD_NAMES[choice.method]} ({acc[choice.method]:.2f}) is not clearly beaten "
                    f"({acc['none']:.2f} raw, {acc['lgn']:.2f} LGN, {acc['anchored']:.2f} anchored; clearly: a lead "
                    f"above the {choice.margin:g} tolerance whose 95% paired interval excludes 0), and the tie rule "
                    f"prefers it ({rule})")
        else:
            head = (f"calibration advised: {METHOD_NAMES[choice.method]} moves cross-group accuracy from "
                    f"{acc['none']:.2f} (raw) to {acc[choice.method]:.2f} out of fold at {choice.budget} labels per "
                    f"group ({rule})")
        if choice.method == "anchored":
            return f"{head}: use anchored calibration{then}"
        return f"{head}: use LGN"
    if choice.basis == "standardised":
        steps = [c if a.action == "relabel" else f"`{c}`"
                 for a, c in zip(choice.actions, choice.commands, strict=False)]
        get = f" ({' then '.join(steps)})" if steps else ""
        return (f"calibration cannot be judged against {human!r}: it is standardised within groups, so it cannot say "
                f"whether LGN is right; get raw-scale human scores for the rows that carry it{get} and use anchored "
                "calibration; meanwhile LGN is applied")
    if not bias.calibration_advised:
        if choice.method != "none":  # the decision applies a calibration all the same: the line says its answer
            rule = (f"the {bias.threshold:g}-sd rule on score means alone would not advise calibration "
                    f"(largest d = {d:.2f})")
            return f"use {METHOD_NAMES[choice.method]}: {choice.reason} ({rule}){then}"
        text = f"calibration not needed by the {bias.threshold:g}-sd rule (largest d = {d:.2f})"
        if verdict.status in ("violated", "uninformative"):
            text += f"; and do not use LGN here: the validity check is {status_said(verdict)}"
        return text
    head = f"calibration advised (largest d = {d:.2f} > {bias.threshold:g})"
    if choice.method == "anchored":
        return f"{head}: use anchored calibration{then}"
    if verdict.status == "violated":
        return (f"{head}, but not with LGN: the validity check is {status_said(verdict)}; label about "
                f"{choice.labels_needed} rows per group and use anchored calibration{then}")
    if choice.warn:
        return (f"{head}: LGN is the only option without human labels in every group, but its equal-quality "
                f"assumption is {verdict.status}; label about {choice.labels_needed} rows per group to use anchored "
                f"calibration instead{then}")
    return f"{head}: LGN ({choice.rules.reason})"
