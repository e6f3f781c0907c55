"""Which calibration to use, and why: the verdict the report and the leaderboard state first.

:func:`recommend_calibration` measures the evidence once (the bias diagnosis of the raw score; LGN's
validity check at segment level and, with a system column, at system level, combined into one verdict:
system level primary, the worse status wins, ``uninformative`` when the human scale is standardised
within groups) and makes **the one decision** (:func:`~xleval.decision.decide_calibration`, the same as
``calibrate fit --method auto`` and ``calibrate evaluate``): raw vs LGN vs anchored cross-validated by
system folds at the labels in the table, with its budget curve, or the rule-based flow where the
comparison cannot be made. The method, the reasons and the warnings are the decision's, read from the
one :class:`~xleval.decision.CalibrationDecision`; nothing here adds a second opinion.
"""
from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..diagnostics import BiasDiagnosis, ValidityVerdict
from ..table import EvalTable
from ._compare import CalibrationEvaluation
from ._decide import MEASURED_BASES, CalibrationDecision, decide_calibration
from ._evidence import gather_evidence
from ._procedure import DEFAULT_BUDGETS, DEFAULT_PROCEDURE, Procedure

__all__ = ["recommend_calibration", "budget_curve", "decision_reasons", "METHOD_LONG_NAMES"]

#: the decision's procedure with the budget curve drawn beside it (the leaderboard's and the report's)
RECOMMEND_PROCEDURE = DEFAULT_PROCEDURE.with_(budgets=DEFAULT_BUDGETS)

#: what each method is called where the answer names it
METHOD_LONG_NAMES = {"none": "no calibration (raw scores)", "lgn": "LGN", "anchored": "anchored calibration"}


def recommend_calibration(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | None = None, *,
                          human: str | None = None, system: str | None = "system",
                          procedure: Procedure = RECOMMEND_PROCEDURE,
                          commands: Any = None, human_scale: str | None = None,
                          score_higher_is_better: bool | None = None) -> CalibrationDecision:
    """The one decision for a table, with its evidence measured once (:func:`gather_evidence`: the bias of
    the raw score, LGN's validity at segment and system level) and the budget curve beside it
    (``procedure.budgets``): what the leaderboard and the report state first. Warnings raised while
    deciding are kept in the decision's ``notes``. ``commands``: an
    :class:`~xleval.decision.AdviceRenderer`, so that the advice names commands that run as written.
    ``human_scale``: ``z``, ``raw`` or None (the standardisation check looks at the data).
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    :data:`~xleval.table.DEFAULT_BY`). ``score_higher_is_better``: the metric's direction (None: the one
    rule, :func:`xleval.metrics.higher_is_better`)."""
    from ._decide import _table

    table = _table(data, score, by, human, system)
    evidence = gather_evidence(table, human_scale=human_scale, procedure=procedure)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        choice = decide_calibration(table, procedure=procedure, evidence=evidence, commands=commands,
                                    score_higher_is_better=score_higher_is_better)
    notes = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return replace(choice, notes=(*notes, *choice.notes))


def budget_curve(evaluation: CalibrationEvaluation | None) -> pd.DataFrame | None:
    """The budget curve as the report draws it: accuracy against labels per group, per selection."""
    if evaluation is None:
        return None
    curve = evaluation.curve()
    if curve.empty:
        return None
    return pd.DataFrame({"labels_per_group": curve["budget"].astype(int),
                         "method": "anchored, " + curve["selection"].astype(str) + " selection",
                         "accuracy": curve["accuracy"], "ci_low": curve["ci_low"], "ci_high": curve["ci_high"]})


def decision_reasons(bias: BiasDiagnosis, verdict: ValidityVerdict | None, choice: CalibrationDecision) -> list[str]:
    """The decision's reasons, in order, as sentences for users."""
    reasons = [_bias_reason(bias, choice)]
    if verdict is not None:
        reasons.append(f"LGN's equal-quality assumption: {verdict.reason}")
    name = METHOD_LONG_NAMES[choice.method]
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
    measured = choice.basis in MEASURED_BASES
    if bias.calibration_advised:
        text = (f"Scores differ between groups: {pair} differ by {size} pooled standard deviations (more than "
                f"{bias.threshold:g})")
        return text + (": the measured effect of calibration below decides." if measured else
                       ", so raw scores are not comparable across groups as they stand.")
    text = (f"Scores differ between groups by at most {size} pooled standard deviations ({pair}), below the "
            f"{bias.threshold:g} threshold")
    return text + (": the measured effect of calibration below decides." if measured else
                   ": raw scores are roughly comparable across groups.")
