"""Which calibration to use (``--method auto``): LGN's decision flow with human anchors added.

The flow of the LGN guide (need -> bias -> data -> method -> verify -> interpret) becomes:

1. **Human labels in every group** -> ``anchored``: the labels put every group on the human scale,
   so no assumption about the groups' true quality is needed.
2. **No human labels at all** -> ``lgn``. Its equal-quality assumption cannot be tested with
   human scores; it holds by design only when every group has the same systems translating the
   same source segments (a multi-way parallel calibration set). Otherwise the choice comes with a
   loud warning that says how many labels per group would settle it.
3. **Labels in some groups** -> the validity check runs on the labelled groups (system level
   first); ``lgn`` either way (anchored needs every group), with a warning naming the groups to
   label, loud unless the check holds.

Every choice records the bias diagnosis (largest standardised difference of the groups' score
means against the 0.5-sd rule): below it, calibration is not needed and LGN changes little.
The number of labels to ask for comes from the budget curve measured on WMT21 (``REFERENCE``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._base.result import Result
from ..exceptions import InputError
from ..table import EvalTable, as_table, numeric_column, resolve_roles
from ._bias import DEFAULT_THRESHOLD, BiasDiagnosis, diagnose_bias
from ._commands import AdviceAction, AdviceRenderer, PythonAdvice
from ._validity import ValidityVerdict, check_lgn_validity, validity_verdict

__all__ = ["MethodChoice", "DecisionStep", "choose_method", "REFERENCE", "RECOMMENDED_LABELS"]

# Budget curve of `xleval calibrate evaluate` on WMT21 to-English sentence chrF against raw DA
# (7 language pairs, 100 systems; system folds, 20 repeats; docs/wmt21-study.md): out-of-fold
# cross-pair accuracy of system means of calibrated segments.
REFERENCE: dict[str, Any] = {"data": "WMT21 to-English, sentence chrF against raw DA (docs/wmt21-study.md)",
             "raw": 0.710, "lgn": 0.564, "anchored": {25: 0.685, 50: 0.713, 100: 0.713, 200: 0.729}}
RECOMMENDED_LABELS = 100


@dataclass(frozen=True, eq=False)
class DecisionStep(Result):
    """One step of the decision flow and what the data said there."""

    step: str
    finding: str


@dataclass(frozen=True, eq=False)
class MethodChoice(Result):
    """The method chosen (``anchored`` or ``lgn``), why (``reason``), the loud ``warning`` (None when
    there is nothing to warn about), the decision trace (``steps``), human labels per group, the
    labels per group to ask for (``labels_needed``), the validity verdict and the bias rule;
    ``actions``: what the advice asks for, as facts (:class:`AdviceAction`: rows to select for
    labelling, the anchored fit), in order; ``groups_to_label``: the groups without labels;
    ``commands``: those actions as xleval command lines (complete when :func:`choose_method` was
    given an :class:`AdviceRenderer`, library calls without one; a caller may render ``actions`` itself)."""

    method: str
    reason: str
    warn: bool
    warning: str | None
    steps: tuple[DecisionStep, ...]
    labels_per_group: dict[str, int]
    labels_needed: int | None
    validity: ValidityVerdict | None
    calibration_advised: bool | None
    notes: tuple[str, ...] = field(default=())
    commands: tuple[str, ...] = field(default=())
    actions: tuple[AdviceAction, ...] = field(default=())
    groups_to_label: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        """One line: the method and why."""
        return f"method {self.method}: {self.reason}"


def choose_method(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | list[str] | None = None, *,
                  human: str | None = None, system: str | None = "system", source: str | None = "source",
                  threshold: float = DEFAULT_THRESHOLD,
                  bias: BiasDiagnosis | None = None, validity: ValidityVerdict | None = None,
                  n_resamples: int = 200, random_state: Any = 0,
                  commands: AdviceRenderer | None = None) -> MethodChoice:
    """Choose between anchored calibration and LGN for ``score`` grouped by ``by`` (module docstring).
    ``bias`` and ``validity`` may be passed when already computed (``diagnose`` does). ``commands``:
    an :class:`AdviceRenderer` that writes the advice in the caller's terms (the CLI's names complete
    commands for its table); without one the advice names library calls (:class:`PythonAdvice`).
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame."""
    data, roles = resolve_roles(data, score=score, by=by, human=human, system=system)
    score, by, human, system = roles["score"], roles["by"], roles["human"], roles["system"]
    if score is None:
        raise InputError("no score column: give score=", argument="score")
    labels = as_table(data, by=by).row_labels()
    ctx = commands or PythonAdvice()
    by_cols = (by,) if isinstance(by, str) else tuple(by)
    to_select = AdviceAction("select", score, by_cols, system, human, _budget(data, score, human, labels))
    to_fit = AdviceAction("fit", score, by_cols, system, human or "human")
    select, fit = ctx.render(to_select), ctx.render(to_fit)
    groups = sorted(set(labels.tolist()))
    steps: list[DecisionStep] = [DecisionStep("need", "scores are to be compared across groups "
                                                      f"({len(groups)} groups by {_by_name(by)})")]
    if bias is None:
        bias = diagnose_bias(data, score, by, threshold=threshold, n_resamples=n_resamples, random_state=random_state)
    steps.append(DecisionStep("bias", _bias_finding(bias)))
    per_group = _labels_per_group(data, score, human, labels, groups)
    labelled = [g for g in groups if per_group[g] > 0]
    steps.append(DecisionStep("human labels", _labels_finding(human, per_group, labelled, groups)))
    if labelled and validity is None:
        validity = _verdict(data, by, human, system, labels, labelled, threshold)
    if validity is not None and labelled and validity.status == "uninformative":
        steps.append(DecisionStep("validity", validity.reason))
        reason = ("the human scores are standardised within groups: anchoring to them gives every group the same "
                  "mean, which is what LGN does, and they cannot test whether that is right")
        warning = (f"WARNING: {human!r} cannot compare groups (it is standardised within each group). Use human scores "
                   f"on one scale for all groups (raw DA, MQM) for about {RECOMMENDED_LABELS} rows per group "
                   f"(choose them with `{select}`) and fit anchored calibration on those.")
        steps.append(DecisionStep("method", "lgn (with warning)"))
        return MethodChoice("lgn", reason, True, warning, tuple(steps), per_group, RECOMMENDED_LABELS, validity,
                            bias.calibration_advised, commands=(select,), actions=(to_select,))
    if human is not None and len(labelled) == len(groups):
        few = min(per_group.values())
        reason = (f"every group has human labels ({_range(per_group)} per group): anchored calibration puts each group "
                  "on the human scale and needs no assumption about the groups' true quality")
        if few < 10:
            reason += (f"; the group(s) with fewest labels ({few}) lean on the common offset, so label up to "
                       f"{RECOMMENDED_LABELS} rows there (`{select}`)")
        steps.append(DecisionStep("method", "anchored"))
        return MethodChoice("anchored", reason, False, None, tuple(steps), per_group, None, validity,
                            bias.calibration_advised, commands=((select, fit) if few < 10 else (fit,)),
                            actions=((to_select, to_fit) if few < 10 else (to_fit,)))
    missing = [g for g in groups if per_group[g] == 0]
    need = RECOMMENDED_LABELS
    evidence = (f"on {REFERENCE['data']}, {need} labels per pair gave cross-pair accuracy "
                f"{REFERENCE['anchored'][need]:.2f} against {REFERENCE['lgn']:.2f} for LGN and {REFERENCE['raw']:.2f} "
                "raw")
    ask = (f"label about {need} rows in each group without labels ({_list(missing)}): choose them with `{select}`, "
           f"merge the filled-in {human or 'human'!r} column into the table and fit with `{fit}` ({evidence})")
    if not labelled:
        parallel, finding = _parallel_design(data, labels, groups, system, source)
        steps.append(DecisionStep("validity", finding))
        if parallel:
            reason = ("no human labels; LGN's equal-quality assumption holds by design: every group has the same "
                      "systems translating the same source segments")
            steps.append(DecisionStep("method", "lgn"))
            return MethodChoice("lgn", reason, False, None, tuple(steps), per_group, None, None,
                                bias.calibration_advised, commands=())
        reason = ("no human labels: LGN is the only option, and its assumption that every group's true quality is "
                  "the same cannot be checked on this table")
        warning = (f"WARNING: LGN gives every group the same mean and erases any real quality difference between "
                   f"groups, and nothing in this table can show whether there is one. To settle it, {ask}.")
        steps.append(DecisionStep("method", "lgn (with warning)"))
        return MethodChoice("lgn", reason, True, warning, tuple(steps), per_group, need, None,
                            bias.calibration_advised, commands=(select, fit), actions=(to_select, to_fit),
                            groups_to_label=tuple(missing))
    assert validity is not None  # labelled groups exist: the check ran above
    steps.append(DecisionStep("validity", validity.reason))
    loud = validity.status != "holds"
    reason = (f"human labels in {len(labelled)} of {len(groups)} groups: anchored calibration needs every group; "
              f"the validity check on the labelled groups: {validity.status}")
    if validity.status == "violated":
        head = "WARNING: the labelled groups differ in true quality, which LGN would erase"
    elif validity.status == "uninformative":
        head = "WARNING: the human scores are standardised within groups and cannot test LGN's assumption"
    elif loud:
        head = "WARNING: the human labels cannot confirm LGN's equal-quality assumption"
    else:
        head = ("the labelled groups look alike, but the unlabelled ones are untested; LGN assumes their quality "
                "is the same too")
    warning = f"{head}. To settle it, {ask}."
    steps.append(DecisionStep("method", "lgn (with warning)"))
    return MethodChoice("lgn", reason, loud, warning, tuple(steps), per_group, need, validity,
                        bias.calibration_advised, commands=(select, fit), actions=(to_select, to_fit),
                        groups_to_label=tuple(missing))


def _budget(data, score, human, labels) -> int:
    """The rows per group the advice's `calibrate select` asks for: the recommended number, or fewer
    when no group has that many rows to choose from (select refuses a budget above every group)."""
    free = np.isfinite(numeric_column(data, score))
    if human is not None and human in data.columns:
        free &= ~np.isfinite(numeric_column(data, human))
    largest = int(pd.Series(free).groupby(labels).sum().max()) if len(labels) else 0
    return max(1, min(RECOMMENDED_LABELS, largest))


def _by_name(by) -> str:
    return by if isinstance(by, str) else "+".join(by)


def _bias_finding(bias: BiasDiagnosis) -> str:
    if bias.largest_smd is None or bias.largest_smd_pair is None:
        return "the score has no spread within groups; the 0.5-sd rule cannot be applied"
    d = bias.largest_smd.estimate
    pair = " vs ".join(bias.largest_smd_pair)
    if bias.calibration_advised:
        return f"group means differ by up to d = {d:.2f} pooled sd ({pair}) > {bias.threshold:g}: calibration advised"
    return (f"group means differ by at most d = {d:.2f} pooled sd ({pair}) <= {bias.threshold:g}: calibration not "
            "needed by the 0.5-sd rule; it will change little")


def _labels_per_group(data, score, human, labels, groups) -> dict[str, int]:
    if human is None:
        return dict.fromkeys(groups, 0)
    has = np.isfinite(numeric_column(data, human)) & np.isfinite(numeric_column(data, score))
    counts = pd.Series(has).groupby(labels).sum()
    return {g: int(counts.get(g, 0)) for g in groups}


def _labels_finding(human, per_group, labelled, groups) -> str:
    if human is None:
        return "no human column given"
    if not labelled:
        return f"the human column {human!r} has no values on scored rows"
    return f"{len(labelled)} of {len(groups)} groups have labels ({_range(per_group)} per group)"


def _range(per_group: dict[str, int]) -> str:
    values = list(per_group.values())
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)}-{max(values)}"


def _list(names: list[str]) -> str:
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _verdict(data, by, human, system, labels, labelled, threshold) -> ValidityVerdict:
    subset = data.loc[np.isin(labels, labelled)]
    segment = check_lgn_validity(subset, by, human, threshold=threshold)
    sys_check = None
    if system is not None and system in data.columns:
        sys_check = check_lgn_validity(subset, by, human, threshold=threshold, system=system)
    return validity_verdict(segment, sys_check)


def _parallel_design(data, labels, groups, system, source) -> tuple[bool, str]:
    """Same systems and the same source segments in every group?"""
    if system is None or system not in data.columns:
        return False, "no system column: whether every group has the same systems cannot be seen"
    systems = {g: frozenset(data[system].to_numpy()[labels == g].tolist()) for g in groups}
    if len(set(systems.values())) > 1:
        return False, "untested: the groups have different systems (no human scores to test the assumption)"
    if source is None or source not in data.columns:
        return False, "the groups share their systems, but there is no source column to see whether they translate " \
                      "the same segments"
    sources = {g: frozenset(data[source].to_numpy()[labels == g].tolist()) for g in groups}
    if len(set(sources.values())) > 1:
        return False, "untested: the groups share their systems but translate different source segments"
    return True, "holds by design: the same systems translate the same source segments in every group"
