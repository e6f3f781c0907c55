"""Which calibration to use: one decision for ``--method auto``, ``calibrate evaluate``, ``diagnose``, the
leaderboard and the report (:func:`decide_calibration` -> :class:`CalibrationDecision`).

**The evidence decides.** Where system folds are possible, raw scores, LGN and anchored calibration
are compared out of fold (:func:`xleval.decision.evaluate_calibration`: maps fitted on the other
folds' systems and labels, cross-group pairwise accuracy of system means against the human means) **at
the label budget the user has**: the labels per group in the table (anchored with every label of the
other folds), or the ``budget`` the user states (anchored with that many random labels per group).
The method with the highest mean accuracy over the repeats is applied; methods within ``MARGIN``
(0.02) of the best are tied, and the tie rule applies the first of ``PREFERENCE`` among them: anchored
(assumes nothing about the groups' true quality), then raw scores (change nothing), then LGN (assumes
equal true quality). Two rules bound what a comparison read against a few labels per system can decide: the
raw scores never rank groups whose score levels differ, and an LGN lead never overrules labels that reject LGN's
equal-quality assumption or leave it open (both apply the combined estimator, anchored; docs/calibration.md).
One set of defaults (folds, repeats, seed: :mod:`._defaults`) serves every caller.

**A standardised human column cannot be the yardstick.** Human scores standardised within groups
(per-annotator z such as WMT DA z, z per language) have equal group means by construction; measured
against them, LGN looks right whatever the truth. :func:`human_scale_check` looks at the user's
``human_scale``, exact standardisation, a z-like name and z-like group moments (or says it cannot
tell, and the evidence decides). Recognised, the decision applies LGN, says that nothing here can show
whether the groups differ, and asks for raw-scale scores for the rows that carry the z labels.

**Fallback: the rule-based flow** (:func:`choose_method`) where the evidence cannot be measured (no
human column, no system column, fewer systems than folds, one row per system, labels in fewer than two
groups or not in every group), with a plain statement of why. Its flow (need -> bias -> labels ->
validity -> method):

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
means against the 0.5-sd rule); where the evidence exists, it qualifies the rule.
The number of labels to ask for comes from the budget curve measured on WMT21 (``REFERENCE``).
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._base.result import Result
from ..diagnostics import (
    BiasDiagnosis,
    HumanScale,
    ValidityVerdict,
    human_scale_check,
    status_said,
)
from ..exceptions import InputError, RepeatedKeysWarning, warn_again
from ..table import EvalTable, as_table, numeric_column, scored_groups
from ._advice import AdviceAction, AdviceRenderer, PythonAdvice
from ._compare import CalibrationEvaluation, compare_calibrations, score_direction
from ._evidence import Evidence, gather_evidence
from ._procedure import (
    DECISION_SELECTION,
    DEFAULT_PROCEDURE,
    EVALUATION_PROCEDURE,
    MARGIN,
    N_RESAMPLES,
    PREFERENCE,
    Z_LIKE_PREFERENCE,
    Procedure,
)
from ._sentences import MEASURED_BASES, METHOD_LONG_NAMES, budget_curve, decision_reasons

__all__ = ["MethodChoice", "DecisionStep", "choose_method", "REFERENCE", "RECOMMENDED_LABELS",
           "CalibrationDecision", "decide_calibration", "decide_from_evaluation", "decide_across_metrics",
           "evaluate_calibration", "METHOD_NAMES"]

#: what each method is called in sentences
METHOD_NAMES = {"none": "the raw scores", "lgn": "LGN", "anchored": "anchored calibration"}

# Budget curve of `xleval calibrate evaluate` on WMT21 to-English sentence chrF against raw DA
# (7 language pairs, 100 systems; system folds, 20 repeats, random labels; docs/wmt21-study.md): out-of-fold
# cross-pair accuracy of system means of calibrated segments.
REFERENCE: dict[str, Any] = {"data": "WMT21 to-English, sentence chrF against raw DA (docs/wmt21-study.md)",
             "raw": 0.710, "lgn": 0.565, "anchored": {25: 0.684, 50: 0.702, 100: 0.723, 200: 0.726}}
RECOMMENDED_LABELS = 100
# below this many labels per held-out system (median) the verdict says what its out-of-fold accuracies are read
# against: measured up to about 8 per system, where that yardstick ranked LGN and anchored poorly (_yardstick)
FEW_LABELS_PER_SYSTEM = 10


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


def choose_method(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | Sequence[str] | None = None, *,
                  human: str | None = None, system: str | None = "system", source: str | None = "source",
                  evidence: Evidence | None = None, procedure: Procedure = DEFAULT_PROCEDURE,
                  commands: AdviceRenderer | None = None, human_scale: str | None = None) -> MethodChoice:
    """Choose between anchored calibration and LGN for ``score`` grouped by ``by`` (module docstring).
    ``evidence``: the bias diagnosis and validity checks when already measured
    (:func:`~xleval.decision.gather_evidence`; measured here otherwise, with ``human_scale`` and the
    ``procedure``'s threshold). ``commands``: an :class:`AdviceRenderer` that writes the advice in the
    caller's terms (the CLI's names complete commands for its table); without one the advice names
    library calls (:class:`PythonAdvice`). ``data``: an :class:`~xleval.table.EvalTable` (its roles are
    the defaults) or a frame."""
    table = _table(data, score, by, human, system)
    if evidence is None:
        evidence = gather_evidence(table, human_scale=human_scale, procedure=procedure)
    data, score, human, system = table.frame, table.score_column, table.human, table.system
    by_cols = tuple(table.by)
    labels = table.row_labels()
    ctx = commands or PythonAdvice()
    free = _free_rows(data, score, human, labels)
    to_select = AdviceAction("select", score, by_cols, system, human, _budget(free))
    to_fit = AdviceAction("fit", score, by_cols, system, human or "human", human_scale=evidence.human_scale)
    select, fit = ctx.render(to_select), ctx.render(to_fit)
    groups = sorted(set(labels.tolist()))
    steps: list[DecisionStep] = [DecisionStep("need", "scores are to be compared across groups "
                                                      f"({len(groups)} groups by {_by_name(by_cols)})")]
    bias = evidence.bias
    steps.append(DecisionStep("bias", _bias_finding(bias)))
    per_group = dict(evidence.labels_per_group)
    labelled = [g for g in groups if per_group[g] > 0]
    steps.append(DecisionStep("human labels", _labels_finding(human, per_group, labelled, groups)))
    validity = evidence.verdict if labelled else None
    advised = bias.calibration_advised
    if validity is not None and labelled and validity.status == "uninformative":
        return _standardised_labels(steps, per_group, validity, advised, ctx, to_fit, data)
    if human is not None and len(labelled) == len(groups):
        return _every_group_labelled(steps, per_group, validity, advised, (to_select, to_fit), (select, fit), free)
    missing = [g for g in groups if per_group[g] == 0]
    need = RECOMMENDED_LABELS
    ask = _ask_for_labels(missing, human, select, fit)
    asked = {"commands": (select, fit), "actions": (to_select, to_fit), "groups_to_label": tuple(missing)}
    if not labelled:
        parallel, finding = _parallel_design(data, labels, groups, system, source)
        steps.append(DecisionStep("validity", finding))
        if parallel:
            reason = ("no human labels; LGN's equal-quality assumption holds by design: every group has the same "
                      "systems translating the same source segments")
            steps.append(DecisionStep("method", "lgn"))
            return MethodChoice("lgn", reason, False, None, tuple(steps), per_group, None, None, advised, commands=())
        reason = ("no human labels: LGN is the only option, and its assumption that every group's true quality is "
                  "the same cannot be checked on this table")
        warning = (f"WARNING: LGN gives every group the same mean and erases any real quality difference between "
                   f"groups, and nothing in this table can show whether there is one. To settle it, {ask}.")
        steps.append(DecisionStep("method", "lgn (with warning)"))
        return MethodChoice("lgn", reason, True, warning, tuple(steps), per_group, need, None, advised, **asked)
    assert validity is not None  # labelled groups exist: the check ran above
    steps.append(DecisionStep("validity", validity.reason))
    reason = (f"human labels in {len(labelled)} of {len(groups)} groups: anchored calibration needs every group; "
              f"the validity check on the labelled groups: {status_said(validity)}")
    steps.append(DecisionStep("method", "lgn (with warning)"))
    return MethodChoice("lgn", reason, validity.status != "holds", f"{_partial_head(validity)}. To settle it, {ask}.",
                        tuple(steps), per_group, need, validity, advised, **asked)


def _ask_for_labels(missing: list[str], human: str | None, select: str, fit: str) -> str:
    """The advice to label the groups without labels (``select``, ``fit``: the commands), with the measured
    accuracy that backs the recommended number."""
    need = RECOMMENDED_LABELS
    reference = (f"on {REFERENCE['data']}, {need} labels per pair gave cross-pair accuracy "
                 f"{REFERENCE['anchored'][need]:.2f} against {REFERENCE['lgn']:.2f} for LGN and "
                 f"{REFERENCE['raw']:.2f} raw")
    # the selection draws in every group (it has no group filter), and the merge writes a new table: the advice
    # says both, so that the fit it names is run on the labels just collected
    return (f"label about {need} rows in each group without labels ({_list(missing)}): choose them with "
            f"`{select}` (it draws rows in every group; labels in the labelled groups help too), merge the filled-in "
            f"rows into the table, their labels into the column {human or 'human'!r}, and fit on the merged table "
            f"as `{fit}` does on this one ({reference})")


def _standardised_labels(steps: list[DecisionStep], per_group: dict[str, int], validity: ValidityVerdict,
                         advised: bool, ctx: AdviceRenderer, to_fit: AdviceAction,
                         data: pd.DataFrame | None = None) -> MethodChoice:
    """Labels standardised within groups (DA z): LGN, with the advice to get raw-scale labels of the same rows
    (or, where ``data`` has the raw column already, to fit on it)."""
    steps.append(DecisionStep("validity", validity.reason))
    reason = ("the human scores are standardised within groups: anchoring to them gives every group the same "
              "mean, which is what LGN does, and they cannot test whether that is right")
    score, by_cols, system, human = to_fit.score, to_fit.by, to_fit.system, to_fit.human
    raw = raw_column_name(human)
    to_fit_raw = AdviceAction("fit", score, by_cols, system, raw)
    fit_raw = ctx.render(to_fit_raw)
    if data is not None and raw in data.columns and pd.to_numeric(data[raw], errors="coerce").notna().any():
        # the raw scores are in the table already (WMT21's human_raw beside human_z): fit on them, nothing to fetch
        warning = (f"WARNING: {human!r} cannot compare groups (it is standardised within each group). The table has "
                   f"raw-scale scores in {raw!r}: fit on them with `{fit_raw}`.")
        steps.append(DecisionStep("method", "lgn (with warning)"))
        return MethodChoice("lgn", reason, True, warning, tuple(steps), per_group, RECOMMENDED_LABELS, validity,
                            advised, commands=(fit_raw,), actions=(to_fit_raw,))
    to_relabel = AdviceAction("relabel", score, by_cols, system, human, sum(per_group.values()), raw)
    relabel = ctx.render(to_relabel)
    warning = (f"WARNING: {human!r} cannot compare groups (it is standardised within each group). Get {relabel} "
               "(re-judge them, or fetch their raw scores: WMT publishes raw DA beside DA z); those rows, not "
               f"others, are the ones the z scores were given for. Then fit with `{fit_raw}`.")
    steps.append(DecisionStep("method", "lgn (with warning)"))
    return MethodChoice("lgn", reason, True, warning, tuple(steps), per_group, RECOMMENDED_LABELS, validity,
                        advised, commands=(relabel, fit_raw), actions=(to_relabel, to_fit_raw))


def _every_group_labelled(steps: list[DecisionStep], per_group: dict[str, int], validity: ValidityVerdict | None,
                          advised: bool, actions: tuple[AdviceAction, AdviceAction],
                          commands: tuple[str, str], free: pd.Series) -> MethodChoice:
    """Human labels in every group: anchored calibration (``actions``/``commands``: select, fit), with the
    advice to label more where a group has fewer than 10 and has rows without a label (``free``: per group)."""
    few = min(per_group.values())
    reason = (f"every group has human labels ({_range(per_group)} per group): anchored calibration puts each group "
              "on the human scale and needs no assumption about the groups' true quality")
    fewest = sorted(g for g, n in per_group.items() if n == few)
    named = f"{few}: {_list(fewest)}"
    can_select = few < 10 and int(free.reindex(fewest, fill_value=0).sum()) > 0
    if can_select:
        reason += (f"; the group(s) with fewest labels ({named}) lean on the common offset, so label up to "
                   f"{actions[0].budget} rows there (`{commands[0]}`)")
    elif few < 10:  # a table of system scores: each row a system, all of them judged (WMT20's ps-en, 6 systems)
        reason += (f"; the group(s) with fewest labels ({named}) lean on the common offset, and every row of theirs "
                   "with a score is labelled: more labels there take more rows (in a table of system scores, more "
                   "systems judged)")
    steps.append(DecisionStep("method", "anchored"))
    first = 0 if can_select else 1  # the fit alone when every group has enough, or nothing is left to label
    return MethodChoice("anchored", reason, False, None, tuple(steps), per_group, None, validity, advised,
                        commands=tuple(commands[first:]), actions=tuple(actions[first:]))


def _partial_head(validity: ValidityVerdict) -> str:
    """The warning's first sentence when only some groups have labels, by the labelled groups' validity."""
    if validity.status == "violated" and status_said(validity) == "at risk":
        return "WARNING: the labelled groups' human scores differ, by a difference that may reach the threshold"
    if validity.status == "violated":
        return "WARNING: the labelled groups differ in true quality, which LGN would erase"
    if validity.status == "uninformative":
        return "WARNING: the human scores are standardised within groups and cannot test LGN's assumption"
    if validity.status != "holds":
        return "WARNING: the human labels cannot confirm LGN's equal-quality assumption"
    return ("the labelled groups look alike, but the unlabelled ones are untested; LGN assumes their quality "
            "is the same too")


def _free_rows(data, score, human, labels) -> pd.Series:
    """Per group, the rows with a score and no label: those `calibrate select` can choose from."""
    free = np.isfinite(numeric_column(data, score))
    if human is not None and human in data.columns:
        free &= ~np.isfinite(numeric_column(data, human, argument="human"))
    return pd.Series(free).groupby(np.asarray(labels)).sum()


def _budget(free: pd.Series) -> int:
    """The rows per group the advice's `calibrate select` asks for: the recommended number, or fewer
    when no group has that many rows to choose from (select refuses a budget above every group)."""
    largest = int(free.max()) if len(free) else 0
    return max(1, min(RECOMMENDED_LABELS, largest))


def _by_name(by: Sequence[str]) -> str:
    return " and ".join(by)


def _table(data, score, by, human, system) -> EvalTable:
    """``data`` as the table the decision reads (roles given here, else the table's; a frame's grouping
    is :data:`~xleval.table.DEFAULT_BY`, its system column ``system`` when it has one)."""
    if isinstance(data, EvalTable):
        system = data.system_role(system)
    elif system == "system" and "system" not in data.columns:
        system = None
    from ..table import DEFAULT_BY

    table = as_table(data, score=score, by=by, human=human, default_by=DEFAULT_BY)
    if system is not None and system not in table.frame.columns:
        system = None
    if system != table.system:
        table = table.with_roles(system=system)
    if not table.score:
        raise InputError("no score column: give score=", argument="score")
    return scored_groups(table)  # every step of the decision reads the scored rows (a group with no score is none)


def _bias_finding(bias: BiasDiagnosis) -> str:
    if bias.largest_smd is None or bias.largest_smd_pair is None:
        return "the score has no spread within groups; the 0.5-sd rule cannot be applied"
    d = bias.largest_smd.estimate
    pair = " vs ".join(bias.largest_smd_pair)
    if bias.calibration_advised:
        return f"group means differ by up to d = {d:.2f} pooled sd ({pair}) > {bias.threshold:g}: calibration advised"
    return (f"group means differ by at most d = {d:.2f} pooled sd ({pair}) <= {bias.threshold:g}: calibration not "
            "needed by the 0.5-sd rule; it will change little")


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


def raw_column_name(human: str | None) -> str:
    """The column the advice asks raw-scale scores to go into: ``human_z`` -> ``human_raw``."""
    base = re.sub(r"(?i)[_\-. ]?z(?:[_\- ]?scores?)?$", "", human or "")
    return f"{base}_raw" if base else "human_raw"


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


@dataclass(frozen=True, eq=False)
class CalibrationDecision(Result):
    """The one decision (module docstring). ``method``: ``anchored``, ``lgn`` or ``none`` (raw scores);
    ``calibrator``: what ``fit_calibration(method="auto")`` fits (``method``, or the better calibration by
    the same tie rule when the raw scores win); ``basis``: ``evidence`` (one method beat the others by
    more than ``margin``), ``tie`` (the tie rule chose), ``levels`` (the raw scores led or tied out of fold,
    but the bias check says the groups' score levels differ: raw scores never rank across such groups, and a
    comparison that cannot set them apart cannot rank LGN against anchored either, so the combined estimator,
    anchored, is applied; LGN where the labels look like a z scale), ``assumption`` (LGN led out of fold, but
    the labels do not support its equal-quality assumption: the validity check is ``violated`` or
    ``inconclusive``; anchored is applied),
    ``standardised`` (the human column cannot be the
    yardstick) or ``rules`` (the evidence could not be measured; the rule-based flow chose); ``reason``:
    one sentence; ``paragraph``: the answer as ``calibrate evaluate`` prints it; ``warn``/``warning``:
    the loud warning or None; ``budget``: labels per group at which the evidence was measured and
    ``budget_source`` (``stated``, ``table``); ``accuracy``: out-of-fold cross-group accuracy (mean over
    repeats) of ``none``, ``lgn`` and ``anchored`` at the budget, ``runs`` its (min, max) over repeats;
    ``margin``, ``n_folds``, ``n_repeats``, ``random_state``: the procedure; ``scale``: the
    standardisation check of the human column; ``rules``: the rule-based flow's :class:`MethodChoice`
    (its advice: ``actions``, ``commands``, ``labels_needed``, ``groups_to_label``); ``evaluation``: the
    :class:`~xleval.decision.CalibrationEvaluation` (None without one); ``steps``: the trace."""

    method: str
    calibrator: str
    basis: str
    reason: str
    paragraph: str
    warn: bool
    warning: str | None
    budget: int | None
    budget_source: str
    accuracy: dict[str, float]
    runs: dict[str, tuple[float, float]]
    margin: float
    n_folds: int
    n_repeats: int
    random_state: Any
    scale: HumanScale | None
    rules: MethodChoice
    steps: tuple[DecisionStep, ...]
    evaluation: Any = None
    notes: tuple[str, ...] = field(default=())
    evidence: Evidence | None = None

    # the evidence the decision read (measured once: :func:`gather_evidence`)
    @property
    def bias(self) -> BiasDiagnosis | None:
        """The raw score's bias diagnosis."""
        return self.evidence.bias if self.evidence is not None else None

    @property
    def validity_segment(self) -> Any:
        return self.evidence.validity_segment if self.evidence is not None else None

    @property
    def validity_system(self) -> Any:
        return self.evidence.validity_system if self.evidence is not None else None

    @property
    def validity_level(self) -> str:
        """The level whose check the verdict states (``system`` or ``segment``): the one that decided it."""
        if self.validity is not None:
            return self.validity.level
        return "system" if self.validity_system is not None else "segment"

    @property
    def validity_status(self) -> str:
        return self._validity_said()[0]

    @property
    def validity_reason(self) -> str:
        return self._validity_said()[1]

    def _validity_said(self) -> tuple[str, str]:
        """LGN's validity as the answer states it: the verdict of both levels, else the segment-level check."""
        verdict, segment = self.validity, self.validity_segment
        if verdict is not None:
            return verdict.status, verdict.reason
        return (segment.status, segment.message) if segment is not None else ("untested", "")

    @property
    def reasons(self) -> tuple[str, ...]:
        """The answer's reasons as sentences, in order (bias, LGN's assumption, the method and why, the
        warning)."""
        if self.evidence is None:
            return (self.paragraph,) + ((self.warning,) if self.warning else ())
        return tuple(decision_reasons(self.evidence.bias, self.validity, self))

    @property
    def budget_curve(self) -> pd.DataFrame | None:
        """The budget curve measured beside the decision (None without one)."""
        return budget_curve(self.evaluation)

    @property
    def name(self) -> str:
        """The method as the answer names it."""
        return METHOD_LONG_NAMES[self.method]

    @property
    def human_groups(self) -> int:
        return sum(1 for n in self.labels_per_group.values() if n > 0)

    @property
    def n_groups(self) -> int:
        return len(self.labels_per_group)

    @property
    def evaluated_method(self) -> str:
        """The method as ``calibrate evaluate`` names its variants (``raw`` for ``none``)."""
        return "raw" if self.method == "none" else self.method

    @property
    def labels_per_group(self) -> dict[str, int]:
        return self.rules.labels_per_group

    @property
    def labels_needed(self) -> int | None:
        return self.rules.labels_needed if self.basis in ("rules", "standardised") else None

    @property
    def validity(self) -> ValidityVerdict | None:
        """LGN's validity verdict (both levels combined; None without human scores)."""
        if self.evidence is not None:
            return self.evidence.verdict
        return self.rules.validity

    @property
    def calibration_advised(self) -> bool | None:
        """Whether calibration changes the cross-group order for the better: the evidence when measured
        (the best calibration beats raw by more than the margin), else the 0.5-sd bias rule."""
        if self.basis in MEASURED_BASES:
            return self.method != "none"
        return self.rules.calibration_advised

    @property
    def commands(self) -> tuple[str, ...]:
        return self.rules.commands if self.basis in ("rules", "standardised") else self._evidence_commands()

    @property
    def actions(self) -> tuple[AdviceAction, ...]:
        if self.basis in ("rules", "standardised"):
            return self.rules.actions
        return tuple(a for a in self.rules.actions if a.action == "fit") if self.method == "anchored" else ()

    @property
    def groups_to_label(self) -> tuple[str, ...]:
        return self.rules.groups_to_label

    def _evidence_commands(self) -> tuple[str, ...]:
        fits = [c for a, c in zip(self.rules.actions, self.rules.commands, strict=False) if a.action == "fit"]
        return tuple(fits) if self.method == "anchored" else ()

    def summary(self) -> str:
        """One line: the method and why."""
        return f"method {self.method}: {self.reason}"


def decide_calibration(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | Sequence[str] | None = None,
                       *, human: str | None = None, system: str | None = "system", budget: int | None = None,
                       procedure: Procedure = DEFAULT_PROCEDURE, evidence: Evidence | None = None,
                       commands: AdviceRenderer | None = None, progress: Any = None,
                       score_higher_is_better: bool | None = None,
                       human_scale: str | None = None) -> CalibrationDecision:
    """Decide which calibration to apply to ``score`` grouped by ``by`` (module docstring).

    ``evidence``: the bias diagnosis and LGN's validity checks, measured once by the caller
    (:func:`gather_evidence`); measured here otherwise, with ``human_scale`` (``z``: the human column is
    standardised within groups, like WMT DA z; ``raw``; None: the data decide).
    ``budget``: the labels per group the user has or will have (default: the labels in the table).
    ``procedure``: folds, repeats and seed of the comparison, the bias rule's threshold and the budget
    curve shown beside the decision (never read by it); the comparison's paired intervals always use
    ``N_RESAMPLES`` resamples, so every caller decides alike. ``commands``: an :class:`AdviceRenderer`
    for the advice. ``progress``: told of each fold fitted. ``score_higher_is_better``: the metric's
    direction (None: the one rule, :func:`xleval.metrics.higher_is_better`)."""
    score_higher_is_better = score_direction(data, score, score_higher_is_better)
    table = _table(data, score, by, human, system)
    if evidence is None:
        evidence = gather_evidence(table, human_scale=human_scale, procedure=procedure)
    frame, score, human, system = table.frame, table.score_column, table.human, table.system
    by_cols = list(table.by)
    why_not = _no_evidence(frame, score, by_cols, human, system, procedure.n_folds)
    unsettled = False  # the labels do not settle the direction of the human scale, and nothing names it
    if why_not is None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                evaluation = compare_calibrations(table, procedure=procedure.with_(n_resamples=N_RESAMPLES),
                                                  progress=progress, budget=budget,
                                                  human_scale=evidence.human_scale,
                                                  human_higher_is_better=evidence.human_higher_is_better,
                                                  score_higher_is_better=score_higher_is_better)
            except InputError as exc:  # a table the comparison cannot use (e.g. systems without a finite score)
                why_not = str(exc)
                unsettled = exc.argument == "human_higher_is_better"
        if why_not is None:
            warn_again(caught, said={score})  # the evidence read the scores, and said their repeats
            return decide_from_evaluation(table, evaluation, evidence=evidence, commands=commands)
    rules = choose_method(table, evidence=evidence, commands=commands)
    scale = _scale(frame, by_cols, human, evidence.human_scale)
    decision = _from_rules(rules, scale, why_not or "", procedure.n_folds, procedure.n_repeats,
                           procedure.random_state)
    if unsettled and rules.method == "anchored" and scale is not None and scale.status == "unknown" \
            and scale.moments_say_z:
        decision = _unsettled_z_like(decision)
    return replace(decision, evidence=evidence)


def _unsettled_z_like(decision: CalibrationDecision) -> CalibrationDecision:
    """The rules' anchored choice turned to LGN where the labels do not settle the direction of the human scale
    and look like a z scale by their moments: anchored calibration would then fit each group's offset and no
    slope (every system of a group tied; on WMT21 DA z at 25 labels per pair, 0.468 against LGN's 0.715), and
    the tie order puts LGN first for such labels (``Z_LIKE_PREFERENCE``). Naming the scale lets the comparison
    decide."""
    reason = ("the labels do not settle the direction of the human scale and look standardised within groups "
              "(their moments), so anchored calibration could fit offsets only, no slope, and LGN is applied, as the "
              "tie order does for such labels; name the scale with human_scale= (z for DA z; da, esa, mqm, ...) to "
              f"let the cross-validated comparison decide ({decision.reason})")
    steps = decision.steps[:-1] + (DecisionStep("method", "lgn: the direction is not settled, the labels look "
                                                "like a z scale"),)
    # the rules' advice was the anchored fit: LGN needs no labels and no command, and the comparison did not decide
    rules = replace(decision.rules, method="lgn", reason=reason, steps=steps, commands=(), actions=())
    return replace(decision, method="lgn", calibrator="lgn", reason=reason,
                   paragraph=reason[0].upper() + reason[1:] + ".", steps=steps, rules=rules, notes=())


def decide_from_evaluation(data: EvalTable | pd.DataFrame, evaluation: CalibrationEvaluation, *,
                           evidence: Evidence | None = None,
                           commands: AdviceRenderer | None = None) -> CalibrationDecision:
    """The decision read from a finished comparison of ``data`` (:func:`compare_calibrations`), with the
    ``evidence`` of :func:`gather_evidence` (measured here when not given)."""
    table = _table(data, evaluation.score, list(evaluation.by), evaluation.human, evaluation.system)
    if evidence is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RepeatedKeysWarning)  # the comparison read these scores and said so
            # the scale's name as the caller gave it (da, mqm, hter ...: its direction and bounds go into the fit
            # the advice names), else what the comparison's check found (z or raw)
            evidence = gather_evidence(table, human_scale=evaluation.human_scale or _declared(evaluation.scale),
                                       procedure=DEFAULT_PROCEDURE.with_(random_state=evaluation.random_state))
    rules = choose_method(table, evidence=evidence, commands=commands)
    groups = [g for g, n in rules.labels_per_group.items() if n == 0]
    if groups:
        why = (f"anchored calibration needs labels in every group, and {len(groups)} group(s) have none "
               f"({_list(groups)})")
        decision = _from_rules(rules, evaluation.scale, why, evaluation.n_folds, evaluation.n_repeats,
                               evaluation.random_state)
        return replace(decision, paragraph=_numbers(evaluation, _anchored_name(evaluation)) + " " + decision.reason
                       + ".", evaluation=evaluation, evidence=evidence)
    return replace(_from_evidence(evaluation, rules), evidence=evidence)


def evaluate_calibration(data: EvalTable | pd.DataFrame, score: str | None = None, human: str | None = None,
                         by: str | Sequence[str] | None = None, *, system: str | None = None,
                         procedure: Procedure = EVALUATION_PROCEDURE, human_higher_is_better: bool | None = None,
                         score_higher_is_better: bool | None = None, progress: Any = None,
                         alternative: str | None = None, budget: int | None = None,
                         human_scale: str | None = None) -> CalibrationEvaluation:
    """The cross-validated comparison (:func:`compare_calibrations`, same arguments) and the decision read
    from it: the result's ``decision``, ``recommended`` (``raw``, ``lgn`` or ``anchored``) and ``verdict``
    (the answer in one paragraph; its advice names library calls: a caller with an
    :class:`AdviceRenderer` calls :func:`compare_calibrations` and :func:`decide_from_evaluation`)."""
    evaluation = compare_calibrations(data, score, human, by, system=system, procedure=procedure,
                                      human_higher_is_better=human_higher_is_better,
                                      score_higher_is_better=score_higher_is_better, progress=progress,
                                      alternative=alternative, budget=budget, human_scale=human_scale)
    return with_decision(evaluation, decide_from_evaluation(data, evaluation))


def with_decision(evaluation: CalibrationEvaluation, decision: CalibrationDecision) -> CalibrationEvaluation:
    """The evaluation with the decision read from it (``recommended``, ``verdict``, ``decision``)."""
    return replace(evaluation, recommended=decision.evaluated_method, verdict=decision.paragraph, decision=decision)


def decide_across_metrics(decisions: Mapping[str, CalibrationDecision]) -> str:
    """The metric to trust across groups, given each metric's own decision (:func:`decide_from_evaluation`,
    which chose its calibration): the one whose chosen calibration orders held-out cross-group system pairs
    best (out-of-fold accuracy at the decision's budget, the number the decision itself read); a tie goes to
    the metric listed first. One rule for one metric and for several."""
    if not decisions:
        raise InputError("decide_across_metrics needs at least one metric's decision")
    def accuracy(metric: str) -> float:
        value = decisions[metric].accuracy.get(decisions[metric].method, float("nan"))
        return value if value == value else float("-inf")  # no evidence (NaN) never wins

    return max(decisions, key=accuracy)


def _declared(scale: HumanScale | None) -> str | None:
    """The scale as the check found it, passed on so that every check agrees (``z``/``raw``/None)."""
    if scale is None or scale.status == "unknown":
        return None
    return "z" if scale.standardised else ("raw" if scale.source in ("declared",) else None)


def _scale(frame, by, human, declared) -> HumanScale | None:
    if human is None or human not in frame.columns:
        return None
    labels = as_table(frame, by=by).row_labels()
    return human_scale_check(numeric_column(frame, human, argument="human"), labels, human, declared)


def _no_evidence(frame, score, by: list[str], human, system, n_folds) -> str | None:
    """Why system folds are impossible on this table, or None."""
    if human is None:
        return "no human column"
    if human not in frame.columns:
        return f"no column {human!r}"
    if system is None or system not in frame.columns:
        return "no system column to split into folds"
    labels = as_table(frame, by=by).row_labels()
    has = np.isfinite(numeric_column(frame, human, argument="human")) & np.isfinite(numeric_column(frame, score))
    groups = set(labels.tolist())
    labelled = set(labels[has].tolist())
    if len(labelled) < 2:
        return f"human labels in {len(labelled)} group(s); the comparison needs at least two"
    if labelled != groups:
        return (f"anchored calibration needs labels in every group, and {len(groups - labelled)} group(s) have none "
                f"({_list(sorted(groups - labelled))})")
    n_systems = frame.loc[has, system].nunique()
    if n_systems < n_folds:
        return f"{n_systems} systems with labels cannot be split into {n_folds} folds"
    return None


def _anchored_name(evaluation) -> str:
    return f"anchored@{evaluation.budget} {DECISION_SELECTION}" if evaluation.budget is not None else "anchored"


def _budget_words(evaluation) -> tuple[int, str, str]:
    """The budget the evidence is read at, where it comes from, and how it reads."""
    if evaluation.budget is not None:
        k = int(evaluation.budget)
        return k, "stated", f"{k} random labels per group (the budget given)"
    per = list(evaluation.labels_per_group.values()) or [0]
    k = int(min(per))
    span = f"{min(per)}" if min(per) == max(per) else f"{min(per)}-{max(per)}"
    return k, "table", (f"the labels in the table ({span} per group; each fold's map sees those of the other "
                        f"folds' systems)")


def _numbers(evaluation, anchored: str) -> str:
    acc = {m: evaluation.variant(n).accuracy.estimate for m, n in (("none", "raw"), ("lgn", "lgn"),
                                                                   ("anchored", anchored))}
    _, _, where = _budget_words(evaluation)
    return (f"Out of fold ({evaluation.n_folds} system folds x {evaluation.n_repeats} repeats), cross-group pairwise "
            f"accuracy is {acc['none']:.3f} raw, {acc['lgn']:.3f} with LGN "
            f"({_diff(evaluation.variant('lgn').minus_raw)} vs raw) and {acc['anchored']:.3f} anchored with {where} "
            f"({_diff(evaluation.variant(anchored).minus_raw)} vs raw)." + _yardstick(evaluation))


def _yardstick(evaluation) -> str:
    """What the out-of-fold accuracies are measured against, where that is a few labels per system: the mean
    of each held-out system's own labels. At 2-8 labels per system (WMT21 and WMT20 raw DA, 25-100 labels per
    pair; ``examples/comparison_yardstick.py``) the comparison's anchored-minus-LGN difference was a third or less
    of the difference against every label (near 0 on WMT21 at 25 labels per pair), of the wrong sign in most
    draws on WMT20 out of English, and its 95% interval covered the every-label difference in 0-5 draws of 10:
    the interval resamples systems, not the labels behind each system's mean."""
    if not _few_labels_per_system(evaluation):
        return ""
    per_system = _labels_per_system(evaluation)
    return (f" These accuracies are read against the mean of each held-out system's own labels ({per_system:g} per "
            "system, median), and their intervals resample systems, not those labels: with so few labels per system "
            "the comparison ranks LGN and anchored calibration poorly (docs/calibration.md, \"What the out-of-fold "
            "comparison measures\").")


def _few_labels_per_system(evaluation) -> bool:
    """Whether each held-out system's yardstick is the mean of a few segment labels (fewer than
    :data:`FEW_LABELS_PER_SYSTEM`); not on a table of system scores (one row per system and group), whose one label
    is the system's human score (WMT20's systems.csv: raw DA over hundreds of judgments)."""
    n_rows = evaluation.systems["n_rows"] if "n_rows" in evaluation.systems else pd.Series(dtype=float)
    system_scores = bool(len(n_rows)) and bool((n_rows <= 1).all())
    return _labels_per_system(evaluation) < FEW_LABELS_PER_SYSTEM and not system_scores


def _labels_per_system(evaluation) -> float:
    """The median number of labels of an evaluated system: what each held-out system's yardstick is a mean of."""
    n_labels = evaluation.systems["n_labels"] if "n_labels" in evaluation.systems else pd.Series(dtype=float)
    return float(n_labels.median()) if len(n_labels) else float("nan")


def _from_evidence(evaluation, rules: MethodChoice) -> CalibrationDecision:
    anchored = _anchored_name(evaluation)
    names = {"none": "raw", "lgn": "lgn", "anchored": anchored}
    acc = {m: float(evaluation.variant(n).accuracy.estimate) for m, n in names.items()}
    runs = {m: (float(min(evaluation.variant(n).runs)), float(max(evaluation.variant(n).runs)))
            for m, n in names.items()}
    budget, source, _ = _budget_words(evaluation)
    lower = _paired_lower_bounds(evaluation, names)
    scale = evaluation.scale
    z_like = scale is not None and scale.status == "unknown" and bool(scale.moments_say_z)
    order = Z_LIKE_PREFERENCE if z_like else PREFERENCE
    tied = _tied(acc, lower, order)
    # what is fitted is the method chosen; only where the raw scores are chosen is a calibrator picked among the
    # two calibrations (ties are not transitive: anchored can tie with a raw lead while LGN beats it, and the
    # calibration written must be the one the sentence names)
    calibrator = tied[0] if tied[0] != "none" else _tied(acc, lower, tuple(m for m in order if m != "none"))[0]
    figures = (f"{acc['anchored']:.3f} anchored, {acc['none']:.3f} raw, {acc['lgn']:.3f} LGN (out-of-fold "
               f"cross-group accuracy at {budget} labels per group)")
    steps = list(rules.steps[:-1]) + [DecisionStep("evidence", figures)]
    notes: list[str] = []
    warning, warn = None, False
    if scale is not None and scale.standardised:
        method, basis = "lgn", "standardised"
        calibrator = "lgn"
        reason = (f"{scale.reason}: measured against it, every method is judged by a scale whose groups are equal "
                  f"by construction ({figures}), so this comparison cannot show whether the groups differ; "
                  "LGN is applied (it assumes what the scale assumes)")
        warning, warn = rules.warning, True
        verdict = (f"Do not read this as evidence across groups: {scale.reason}. LGN is applied, and nothing in this "
                   "table can show whether the groups differ in quality.")
    else:
        method = tied[0]
        basis = "evidence" if len(tied) == 1 else "tie"
        reason = _comparison_reason(acc, tied, order, budget, figures, evaluation.level, z_like)
        verdict = f"Trust {METHOD_NAMES[method]} here: {reason}."
        if scale is not None and scale.status == "unknown":
            notes.append(scale.reason)
    unsupported = None if z_like else _unsupported(rules.validity)  # the verdict that leaves LGN unsupported
    raw_overruled = False
    if method == "lgn" and basis == "evidence" and unsupported is not None:
        calibrator, reason = _lgn_unsupported(figures, unsupported)
        method, basis = calibrator, "assumption"
        verdict = f"Trust {METHOD_NAMES[method]} here: {reason}."
    elif method == "none" and rules.calibration_advised:
        calibrator, reason = _levels_differ(acc, figures, rules, z_like)
        method, basis = calibrator, "levels"
        verdict = f"Trust {METHOD_NAMES[method]} here: {reason}."
    elif method == "none" and "lgn" in tied and unsupported is not None:
        calibrator, reason = _raw_unsupported(figures, unsupported)
        method, basis, raw_overruled = calibrator, "assumption", True
        verdict = f"Trust {METHOD_NAMES[method]} here: {reason}."
    elif method == "none":  # the score levels are equal and the labels support equal quality: the raw scores stay
        reason += (f"; a calibrator, where one must be fitted, is {METHOD_NAMES[calibrator]} (the better "
                   "calibration by the same rule)")
    steps.append(DecisionStep("method", method + {"tie": " (tie rule)", "levels": " (levels differ)",
                                                  "assumption": RAW_OVERRULED if raw_overruled else
                                                  " (LGN's assumption unsupported)"}.get(basis, "")))
    noisy = basis in ("levels", "assumption") or _few_labels_per_system(evaluation)
    paragraph = _numbers(evaluation, anchored) + " " + verdict + _curve(evaluation, noisy)
    if source == "table" and len(evaluation.curve()):
        paragraph += (" The decision is made at the labels in this table; a table with fewer labels per group may "
                      "call for another method (state that number as the evaluation's budget to decide there).")
    return CalibrationDecision(method, calibrator, basis, reason, paragraph, warn, warning, budget, source, acc, runs,
                               MARGIN, evaluation.n_folds, evaluation.n_repeats, evaluation.random_state, scale,
                               rules, tuple(steps), evaluation=evaluation, notes=tuple(notes))


def _comparison_reason(acc: dict[str, float], tied: list[str], order: tuple[str, ...], budget: int, figures: str,
                       level: float, z_like: bool) -> str:
    """The decision's sentence when the out-of-fold comparison chose: a clear winner, or the tie rule."""
    method = tied[0]
    if len(tied) == 1:
        others = ", ".join(f"{acc[m]:.3f} {_short(m)}" for m in order if m != method)
        return (f"out of fold at {budget} labels per group, {METHOD_NAMES[method]} orders cross-group system "
                f"pairs best: {acc[method]:.3f} against {others}, a lead above the {MARGIN:g} tolerance whose "
                f"{level:.0%} paired interval excludes 0")
    return (f"no clear winner out of fold at {budget} labels per group ({figures}): "
            f"{' and '.join(METHOD_NAMES[m] for m in tied)} lie within {MARGIN:g} of the best or cannot be "
            f"told from it ({level:.0%} paired interval includes 0); the tie rule applies "
            f"{METHOD_NAMES[method]} " + (
                "(the human scores look like a z scale by their moments: among tied methods LGN, which "
                "does what anchoring to such labels does without their noise, then anchored, then the raw "
                "scores)" if z_like else
                "(among tied methods: anchored, which assumes nothing about the groups' true quality, then "
                "the raw scores, which change nothing, then LGN)"))


def _levels_differ(acc: dict[str, float], figures: str, rules: MethodChoice, z_like: bool) -> tuple[str, str]:
    """The calibrator and the sentence where the raw scores led or tied out of fold but the groups' score levels
    differ (the bias check): raw scores would rank across groups by those levels, and an out-of-fold lead of the
    raw scores, read against a few labels per system, is too weak to overturn that (it was chance-level on
    held-out data). The same comparison then cannot be trusted to rank LGN against anchored either (on WMT21 raw
    DA at 25 labels per pair it put LGN, 0.568, above anchored, 0.717, in 2 draws of 10:
    examples/decision_check.py), so the combined estimator is applied: anchored, whose offsets move to LGN's
    equal levels as far as the labels support them; LGN where the labels look like a z scale (the tie order's
    reason)."""
    levels = next((st.finding for st in rules.steps if st.step == "bias"), "the groups' score levels differ")
    calibrator = "lgn" if z_like else "anchored"
    led = "led" if acc["none"] >= max(acc.values()) else "tied with the best"
    why = ("the human scores look like a z scale by their moments, so LGN, which does what anchoring to such "
           "labels does without their noise" if z_like else
           "anchored calibration, whose offsets move toward LGN's equal levels as far as the labels support them")
    return calibrator, (f"the groups' score levels differ ({levels}), so the raw scores cannot rank across groups; "
                        f"out of fold the raw scores {led} ({figures}), a comparison read against few labels per "
                        f"system, which cannot be trusted to rank the methods at this budget: {why}, is applied")


def _unsupported(validity: ValidityVerdict | None) -> ValidityVerdict | None:
    """The validity verdict where it leaves LGN's equal-quality assumption unsupported, else None: the check
    found a significant difference between the groups' human means (``violated``; said "at risk" when its
    estimate is below the threshold), or cannot rule out one as large as its threshold (``inconclusive``)."""
    return validity if validity is not None and validity.status in ("violated", "inconclusive") else None


def _lgn_unsupported(figures: str, validity: ValidityVerdict) -> tuple[str, str]:
    """The calibrator and the sentence where LGN led out of fold but the labels do not support its assumption.
    The out-of-fold comparison scores each held-out system against the mean of its few labels, and its interval
    resamples systems, not the labels the maps are fitted on: on WMT20 raw DA out of English at 100 labels per
    pair it put LGN clearly ahead in 2 of 10 draws (1 since the half-Cauchy prior on the offsets' spread), while
    against every label anchored calibration was better in every draw (by about 0.04 in those two;
    ``examples/decision_check.py --wmt20``;
    ``examples/comparison_yardstick.py`` measures how often that interval covers the every-label difference).
    The labels' own test of equal quality, which anchored's mixed prior already weighs, is the stronger
    evidence there: an LGN lead decides only where that test holds."""
    return "anchored", (f"out of fold LGN led ({figures}), but {_lead_overruled(validity)}: anchored calibration, "
                        "whose offsets move toward LGN's equal levels as far as the labels support them, is applied")


#: the method step's words where a raw lead with equal score levels was overruled (basis ``assumption``)
RAW_OVERRULED = " (equal levels unsupported)"


def overruled_lead(decision: CalibrationDecision) -> str:
    """Whose out-of-fold lead a decision of basis ``assumption`` overruled: ``none`` (the raw scores, with the
    groups' score levels equal) or ``lgn``."""
    step = next((st.finding for st in decision.steps if st.step == "method"), "")
    return "none" if step.endswith(RAW_OVERRULED) else "lgn"


def _raw_unsupported(figures: str, validity: ValidityVerdict) -> tuple[str, str]:
    """The calibrator and the sentence where the raw scores and LGN led out of fold together (LGN tied with the
    raw lead: the groups' score levels are close enough that the raw scores rank across groups as LGN does, by
    equal levels; the bias check does not advise calibration) and the labels do not support equal quality across
    groups: that lead needs LGN's support. On WMT21 MQM with zh-en moved to 0.66 points from en-de (chrF's levels of
    the two pairs within 0.04 sd; the labels' check inconclusive) the raw scores were applied in 1-2 draws of 10 at
    25-100 labels per pair and order the pairs backwards (0.219 cross-pair accuracy, anchored 0.73-0.83 on average;
    ``examples/decision_check.py --mqm``). A raw lead that LGN does not share is not LGN's ranking and stays (where
    the bias check does not advise calibration)."""
    return "anchored", (f"out of fold the raw scores and LGN led together ({figures}): the groups' score levels are "
                        "close enough that the raw scores rank across groups as LGN does, by equal levels; but "
                        f"{_lead_overruled(validity)}: anchored calibration, whose offsets move toward equal levels as "
                        "far as the labels support them, is applied")


def _lead_overruled(validity: ValidityVerdict) -> str:
    """Why an LGN lead out of fold does not decide, where the labels' check does not hold (the decision's reason
    and ``diagnose``'s advice line say it in the same words)."""
    return (f"{_labels_on_lgn(validity)}, and a lead read against a few labels per held-out system does not "
            "overturn that")


def _labels_on_lgn(validity: ValidityVerdict) -> str:
    """What the labels' validity check says of LGN's assumption, where it does not hold."""
    if validity.status == "inconclusive":
        return ("the labels do not support LGN's equal-quality assumption (they cannot rule out a difference of "
                f"{validity.deciding.threshold:g} sd between the groups' human means; the validity check: "
                "inconclusive)")
    return ("the labels reject LGN's equal-quality assumption (the groups' human means differ significantly; the "
            f"validity check: {status_said(validity)})")


def _tied(acc: dict[str, float], lower: dict[tuple[str, str], float], order: tuple[str, ...]) -> list[str]:
    """The methods of ``order`` (in its order) tied with the best of them: those the best does not clearly
    beat. The best clearly beats ``m`` when its out-of-fold accuracy is higher by more than MARGIN *and*
    the lower bound of the paired interval of the difference is above 0: with few labels per system the
    held-out truth is noisy, and a lead inside that noise is no evidence."""
    best = max(order, key=lambda m: acc[m])
    return [m for m in order if m == best or not (acc[best] - acc[m] > MARGIN and lower[(best, m)] > 0)]


def _paired_lower_bounds(evaluation, names: dict[str, str]) -> dict[tuple[str, str], float]:
    """Lower bound of the paired interval of accuracy(a) - accuracy(b) for every ordered pair of methods
    (the evaluation's paired differences: systems resampled within groups, the same resamples for all)."""
    anchored, lgn = evaluation.variant(names["anchored"]), evaluation.variant("lgn")
    intervals = {("anchored", "none"): anchored.minus_raw, ("lgn", "none"): lgn.minus_raw,
                 ("anchored", "lgn"): anchored.minus_lgn}
    out = {}
    for (a, b), est in intervals.items():
        out[(a, b)] = float(est.ci_low)
        out[(b, a)] = float(-est.ci_high)
    return out


def _from_rules(rules: MethodChoice, scale, why_not: str, n_folds, n_repeats, random_state) -> CalibrationDecision:
    standardised = scale is not None and scale.standardised and rules.validity is not None \
        and rules.validity.status == "uninformative"
    basis = "standardised" if standardised else "rules"
    reason = (f"{rules.reason} (the cross-validated comparison could not be measured: {why_not}; the rule-based "
              "flow decided)")
    steps = rules.steps[:-1] + (DecisionStep("evidence", f"not measured: {why_not}"), rules.steps[-1])
    notes = (scale.reason,) if scale is not None and scale.status == "unknown" else ()
    return CalibrationDecision(rules.method, rules.method, basis, reason, reason[0].upper() + reason[1:] + ".",
                               rules.warn, rules.warning, None, "", {}, {}, MARGIN, int(n_folds), int(n_repeats),
                               random_state, scale, rules, steps, notes=notes)


def _short(method: str) -> str:
    return {"none": "raw", "lgn": "LGN", "anchored": "anchored"}[method]


def _curve(evaluation, noisy: bool = False) -> str:
    """The budget curve in words; ``noisy``: the decision has just said that the comparison cannot separate the
    methods at this budget, or that it is read against a few labels per system, so the curve's verdict on raw
    and LGN is qualified the same way."""
    curve = evaluation.curve()
    if curve.empty:
        return ""
    selection = str(curve["selection"].iloc[0])
    curve = curve[curve["selection"] == selection]
    text = (f" With K labels per group ({selection} selection): "
            + ", ".join(f"K={int(k)} {a:.3f}" for k, a in zip(curve["budget"], curve["accuracy"], strict=True)) + ".")
    goal = max(evaluation.variant("raw").accuracy.estimate, evaluation.variant("lgn").accuracy.estimate)
    enough = curve.loc[curve["accuracy"] >= goal, "budget"]
    end = ", measured against the same few labels per system." if noisy else "."
    if len(enough):
        return text + f" {int(enough.min())} labels per group already match the better of raw and LGN ({goal:.3f})" \
            + end
    return text + (f" No budget up to {int(curve['budget'].max())} labels per group matches the better of raw and "
                   f"LGN ({goal:.3f})" + end)


def _diff(est) -> str:
    if est is None:
        return ""
    mark = "" if (est.ci_low <= 0 <= est.ci_high) else ", CI excludes 0"
    return f"{est.estimate:+.3f}, 95% CI {est.ci_low:+.3f} to {est.ci_high:+.3f}{mark}"
