"""``diagnose``: the whole answer for one table — bias, before/after, agreement with humans, validity."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from .._base.progress import Progress, Steps
from .._base.result import Result
from ..exceptions import InputError
from ..table import EvalTable, resolve_roles
from ._agreement import AgreementResult, human_agreement
from ._bias import DEFAULT_THRESHOLD, BiasComparison, BiasDiagnosis, compare_bias, diagnose_bias
from ._commands import AdviceRenderer
from ._decide import METHOD_NAMES, CalibrationDecision, decide_calibration
from ._validity import ValidityCheck, ValidityVerdict, check_lgn_validity, validity_verdict

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
             threshold: float = DEFAULT_THRESHOLD,
             n_resamples: int = 1000, level: float = 0.95, random_state: Any = 0,
             commands: AdviceRenderer | None = None, average_by: str = "none",
             alternative: str = "two-sided", progress: Progress | None = None,
             human_scale: str | None = None, decision: CalibrationDecision | None = None) -> Diagnosis:
    """Diagnose language bias of ``score`` (and of ``calibrated``), its agreement with ``human``
    and whether LGN's equal-quality assumption holds on ``data``. ``commands``: the table's path and
    column mapping, so that the advice names commands that run as written. ``average_by`` (none, group,
    item) and ``alternative`` (two-sided, greater, less): how the agreement's all-pairs accuracy is
    averaged and the sidedness of the raw-vs-calibrated test (:func:`human_agreement`). ``progress``:
    told of each finished step (bias, agreement, validity, recommendation; :mod:`xleval._base.progress`).
    ``human_scale``: ``z`` (the human column is standardised within groups, like WMT DA z), ``raw`` or None
    (:func:`~xleval.diagnostics.human_scale_check` looks at the data). ``decision``: the decision when already
    made on this table (the report makes it once).
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    ``lp`` if present, else ``tgt_lang``,
    ``system="system"``)."""
    data, roles = resolve_roles(data, score=score, by=by, human=human, system=system)
    score, by, human, system = roles["score"], roles["by"], roles["human"], roles["system"]
    if score is None:
        raise InputError("no score column: give score=", argument="score")
    steps = Steps(progress, 3 + (human is not None))
    kwargs = dict(threshold=threshold, n_resamples=n_resamples, level=level, random_state=random_state)
    if calibrated is not None:
        comparison = compare_bias(data, score, calibrated, by, **kwargs)
        bias = comparison.before
    else:
        comparison, bias = None, diagnose_bias(data, score, by, **kwargs)
    steps.done()
    agreement = None
    if human is not None:
        columns = [score] + ([calibrated] if calibrated else [])
        agreement = human_agreement(data, columns, human, by, system=system,
                                    compare=[(score, calibrated)] if calibrated else [], level=level,
                                    n_resamples=n_resamples, random_state=random_state, average_by=average_by,
                                    alternative=alternative)
        steps.done()
    validity = check_lgn_validity(data, by, human, threshold=threshold, level=level, human_scale=human_scale)
    validity_system = None
    if human is not None and system is not None and system in data.columns:
        validity_system = check_lgn_validity(data, by, human, threshold=threshold, level=level, system=system,
                                             human_scale=human_scale)
    verdict = validity_verdict(validity, validity_system)
    steps.done()
    recommendation = decision or decide_calibration(
        data, score, by, human=human, system=system, threshold=threshold, bias=bias,
        validity=verdict if human is not None else None, commands=commands, human_scale=human_scale)
    steps.done()
    bias = _qualified(bias, recommendation)
    return Diagnosis(score, bias.by, bias, validity, calibrated, human, comparison, agreement,
                     validity_system=validity_system, verdict=verdict, recommendation=recommendation,
                     advice=advice_line(bias, verdict, recommendation, human))


def _qualified(bias: BiasDiagnosis, decision: CalibrationDecision) -> BiasDiagnosis:
    """The bias rule's verdict line, qualified where the effect of calibration was measured: the rule
    reads score means only, and the measured effect decides (no second opinion beside the advice)."""
    if decision.basis not in ("evidence", "tie"):
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
    if choice.basis in ("evidence", "tie"):
        acc = choice.accuracy
        best = max(acc[m] for m in ("lgn", "anchored"))
        says = "advises" if bias.calibration_advised else "would not advise"
        rule = f"the {bias.threshold:g}-sd rule on score means alone {says} calibration (largest d = {d:.2f})"
        if choice.method == "none":
            return (f"calibration not needed: out of fold the raw scores order cross-group pairs as well as any "
                    f"calibration ({acc['none']:.2f} raw, {acc['lgn']:.2f} LGN, {acc['anchored']:.2f} anchored at "
                    f"{choice.budget} labels per group; {rule})")
        head = (f"calibration advised: {METHOD_NAMES[choice.method]} moves cross-group accuracy from "
                f"{acc['none']:.2f} (raw) to {acc[choice.method]:.2f} out of fold at {choice.budget} labels per group "
                f"({rule})")
        if choice.basis == "tie":
            head += f"; the better calibration reaches {best:.2f}, within the {choice.margin:g} tolerance (tie rule)"
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
        text = f"calibration not needed by the {bias.threshold:g}-sd rule (largest d = {d:.2f})"
        if verdict.status in ("violated", "uninformative"):
            text += f"; and do not use LGN here: the validity check is {verdict.status}"
        return text
    head = f"calibration advised (largest d = {d:.2f} > {bias.threshold:g})"
    if choice.method == "anchored":
        return f"{head}: use anchored calibration{then}"
    if verdict.status == "violated":
        return (f"{head}, but not with LGN: the validity check is {verdict.status}; label about {choice.labels_needed} "
                f"rows per group and use anchored calibration{then}")
    if choice.warn:
        return (f"{head}: LGN is the only option without human labels in every group, but its equal-quality "
                f"assumption is {verdict.status}; label about {choice.labels_needed} rows per group to use anchored "
                f"calibration instead{then}")
    return f"{head}: LGN ({choice.rules.reason})"
