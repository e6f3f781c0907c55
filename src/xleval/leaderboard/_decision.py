"""Which calibration to use, and why: the verdict the report states first.

One interface, :class:`Recommendation`, holds what the verdict reads, all computed by the
diagnostics package: the bias diagnosis of the raw score; LGN's validity check at segment level
and, with a system column, at system level, combined into one verdict (system level primary, the
worse status wins, ``uninformative`` when the human scale is standardised within groups); and **the
one decision** (:func:`xleval.diagnostics.decide_calibration`, the same as ``calibrate fit --method
auto`` and ``calibrate evaluate``): raw vs LGN vs anchored cross-validated by system folds at the
labels in the table, with its budget curve, or the rule-based flow where the comparison cannot be
made. The method, the reasons and the warnings are the decision's; nothing here adds a second opinion.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._base.result import Result
from ..diagnostics import (
    DEFAULT_BUDGETS,
    N_FOLDS,
    N_REPEATS,
    RANDOM_STATE,
    AdviceRenderer,
    BiasDiagnosis,
    CalibrationDecision,
    CalibrationEvaluation,
    ValidityCheck,
    ValidityVerdict,
    check_lgn_validity,
    decide_calibration,
    diagnose_bias,
    validity_verdict,
)
from ..exceptions import InputError
from ..table import DEFAULT_BY, EvalTable, resolve_roles

__all__ = ["Recommendation", "recommend_calibration"]

_NAMES = {"none": "no calibration (raw scores)", "lgn": "LGN", "anchored": "anchored calibration"}


@dataclass(frozen=True, eq=False)
class Recommendation(Result):
    """``method``: ``anchored``, ``lgn`` or ``none`` (the decision's); ``reasons``: sentences for users, in
    order; ``choice``: the :class:`~xleval.diagnostics.CalibrationDecision` (its steps, warning, labels
    to ask for, the evidence);
    ``bias``: the raw score's BiasDiagnosis; ``validity``: the combined ValidityVerdict (None without
    human scores), ``validity_segment``/``validity_system`` the two checks; ``evaluation``: the
    cross-validated CalibrationEvaluation (None without human scores and enough systems); ``budget``:
    its budget curve; ``human_groups``/``n_groups``: groups with human scores / all groups."""

    method: str
    reasons: tuple[str, ...]
    choice: CalibrationDecision
    bias: BiasDiagnosis
    validity: ValidityVerdict | None
    validity_segment: ValidityCheck
    validity_system: ValidityCheck | None
    evaluation: CalibrationEvaluation | None
    human_groups: int
    n_groups: int
    budget: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return _NAMES[self.method]

    @property
    def validity_level(self) -> str:
        return "system" if self.validity_system is not None else "segment"

    @property
    def validity_status(self) -> str:
        return self.validity.status if self.validity is not None else self.validity_segment.status

    @property
    def validity_reason(self) -> str:
        return self.validity.reason if self.validity is not None else self.validity_segment.message


def recommend_calibration(frame: EvalTable | pd.DataFrame, score: str | None = None, by: str | None = None, *,
                          human: str | None = None, system: str | None = "system", n_folds: int = N_FOLDS,
                          n_repeats: int = N_REPEATS,
                          budgets: tuple[int, ...] = DEFAULT_BUDGETS, threshold: float = 0.5,
                          n_resamples: int = 1000, random_state: Any = RANDOM_STATE,
                          commands: AdviceRenderer | None = None, human_scale: str | None = None,
                          score_higher_is_better: bool | None = None, **_: Any) -> Recommendation:
    """Decide between anchored calibration, LGN and the raw scores for ``score`` grouped by ``by`` (module
    docstring). ``commands``: the table's path and column mapping, so that the advice names commands that
    run as written. ``human_scale``: ``z``, ``raw`` or None (the standardisation check looks at the data).
    ``frame``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    ``lp`` if present, else ``tgt_lang``).
    ``score_higher_is_better``: the metric's direction (None: the table's signature says, else higher)."""
    from ..diagnostics._evaluate import score_direction

    score_higher_is_better = score_direction(frame, score, score_higher_is_better)
    frame, roles = resolve_roles(frame, score=score, by=by, human=human, system=system, default_by=DEFAULT_BY)
    score, by, human, system = roles["score"], roles["by"], roles["human"], roles["system"]
    if score is None:
        raise InputError("no score column: give score=", argument="score")
    notes: list[str] = []
    bias = diagnose_bias(frame, score, by, threshold=threshold, n_resamples=n_resamples, random_state=random_state)
    has_system = system is not None and system in frame.columns
    segment = check_lgn_validity(frame, by, human, threshold=threshold, human_scale=human_scale)
    system_check = None
    if human is not None and has_system:
        system_check = check_lgn_validity(frame, by, human, threshold=threshold, system=system,
                                          human_scale=human_scale)
    verdict = validity_verdict(segment, system_check) if human is not None else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        choice = decide_calibration(frame, score, by, human=human, system=system if has_system else None,
                                    threshold=threshold, bias=bias, validity=verdict, random_state=random_state,
                                    commands=commands, budgets=tuple(budgets), n_folds=n_folds, n_repeats=n_repeats,
                                    n_resamples=n_resamples, human_scale=human_scale,
                                    score_higher_is_better=score_higher_is_better)
    notes.extend(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
    notes.extend(choice.notes)
    labelled = sum(1 for n in choice.labels_per_group.values() if n > 0)
    evaluation = choice.evaluation
    budget = _budget(evaluation)
    reasons = _reasons(bias, verdict, choice)
    return Recommendation(choice.method, tuple(reasons), choice, bias, verdict, segment, system_check, evaluation,
                          labelled, len(choice.labels_per_group), budget, tuple(notes))


def _budget(evaluation: CalibrationEvaluation | None) -> pd.DataFrame | None:
    """The budget curve as the report draws it: accuracy against labels per group, per selection."""
    if evaluation is None:
        return None
    curve = evaluation.curve()
    if curve.empty:
        return None
    return pd.DataFrame({"labels_per_group": curve["budget"].astype(int),
                         "method": "anchored, " + curve["selection"].astype(str) + " selection",
                         "accuracy": curve["accuracy"], "ci_low": curve["ci_low"], "ci_high": curve["ci_high"]})


def _reasons(bias, verdict, choice: CalibrationDecision) -> list[str]:
    reasons = [_bias_reason(bias, choice)]
    if verdict is not None:
        reasons.append(f"LGN's equal-quality assumption: {verdict.reason}")
    name = _NAMES[choice.method]
    if choice.evaluation is not None:  # its paragraph states the method and why, with the numbers
        reasons.append(choice.paragraph)
    else:
        reasons.append(f"{name[0].upper()}{name[1:]} is recommended: {choice.reason}.")
    if choice.warning:
        reasons.append(choice.warning)
    return reasons


def _bias_reason(bias: BiasDiagnosis, choice: CalibrationDecision) -> str:
    d = bias.largest_smd
    pair = " and ".join(bias.largest_smd_pair) if bias.largest_smd_pair else "the groups"
    size = f"{d.estimate:.2f}" if d is not None and np.isfinite(d.estimate) else "an undefined number of"
    measured = choice.basis in ("evidence", "tie")
    if bias.calibration_advised:
        text = (f"Scores differ between groups: {pair} differ by {size} pooled standard deviations (more than "
                f"{bias.threshold:g})")
        return text + (": the measured effect of calibration below decides." if measured else
                       ", so raw scores are not comparable across groups as they stand.")
    text = (f"Scores differ between groups by at most {size} pooled standard deviations ({pair}), below the "
            f"{bias.threshold:g} threshold")
    return text + (": the measured effect of calibration below decides." if measured else
                   ": raw scores are roughly comparable across groups.")
