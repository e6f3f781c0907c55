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

import pandas as pd

from ..table import EvalTable
from ._decide import CalibrationDecision, _table, decide_calibration
from ._evidence import gather_evidence
from ._procedure import DEFAULT_BUDGETS, DEFAULT_PROCEDURE, Procedure

__all__ = ["recommend_calibration", "RECOMMEND_PROCEDURE"]

#: the decision's procedure with the budget curve drawn beside it (the leaderboard's and the report's)
RECOMMEND_PROCEDURE = DEFAULT_PROCEDURE.with_(budgets=DEFAULT_BUDGETS)



def recommend_calibration(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | None = None, *,
                          human: str | None = None, system: str | None = "system",
                          procedure: Procedure = RECOMMEND_PROCEDURE,
                          commands: Any = None, human_scale: str | None = None,
                          human_higher_is_better: bool | None = None,
                          score_higher_is_better: bool | None = None) -> CalibrationDecision:
    """The one decision for a table, with its evidence measured once (:func:`gather_evidence`: the bias of
    the raw score, LGN's validity at segment and system level) and the budget curve beside it
    (``procedure.budgets``): what the leaderboard and the report state first. Warnings raised while
    deciding are kept in the decision's ``notes``. ``commands``: an
    :class:`~xleval.decision.AdviceRenderer`, so that the advice names commands that run as written.
    ``human_scale``: the human scale's name (``mqm``, ``esa``, ``da``, ``raw``, ``z``, ...; None: the
    standardisation check looks at the data), which also fixes its direction; ``human_higher_is_better``:
    the direction when the user declares it.
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    :data:`~xleval.table.DEFAULT_BY`). ``score_higher_is_better``: the metric's direction (None: the one
    rule, :func:`xleval.metrics.higher_is_better`)."""
    table = _table(data, score, by, human, system)
    evidence = gather_evidence(table, human_scale=human_scale, human_higher_is_better=human_higher_is_better,
                               procedure=procedure)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        choice = decide_calibration(table, procedure=procedure, evidence=evidence, commands=commands,
                                    score_higher_is_better=score_higher_is_better)
    notes = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return replace(choice, notes=(*notes, *choice.notes))
