"""The evidence a decision reads, measured once per table and score.

:func:`gather_evidence` runs the bias diagnosis of the raw score and LGN's validity check (segment
level, and system level with a system column) once; the decision, ``diagnose``, the leaderboard and
the report all read the one :class:`Evidence` (a ``report`` run used to compute the bias diagnosis
three times and each validity check three times). The cross-validated comparison is the other half of
the evidence (:func:`~xleval.decision.compare_calibrations`); it needs a human column and enough systems.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._base.result import Result
from ..calibration import direction_for
from ..diagnostics import (
    BiasDiagnosis,
    ValidityCheck,
    ValidityVerdict,
    check_lgn_validity,
    diagnose_bias,
    validity_verdict,
)
from ..diagnostics._bias import REAL_QUALITY_HINT
from ..table import EvalTable, numeric_column
from ._procedure import DEFAULT_PROCEDURE, Procedure

__all__ = ["Evidence", "gather_evidence"]


@dataclass(frozen=True, eq=False)
class Evidence(Result):
    """What the decision reads about one score of one table, measured once. ``bias``: the raw score's
    bias diagnosis; ``validity_segment`` / ``validity_system``: LGN's validity check at segment level
    and at system level (None without a system column or human scores); ``verdict``: the two combined
    (None without human scores); ``labels_per_group``: rows with a finite score and a human score, per
    group; ``human_scale``: what the user declared (a scale's name, ``z``, ``raw`` or None);
    ``human_higher_is_better``: the direction of the human scale as given, or as the scale's name fixes it
    (:func:`xleval.calibration.direction_for`; None: the labels decide). The checks run on the
    groups that have labels (all groups when every group has some)."""

    score: str
    by: tuple[str, ...]
    human: str | None
    system: str | None
    bias: BiasDiagnosis
    validity_segment: ValidityCheck
    validity_system: ValidityCheck | None
    verdict: ValidityVerdict | None
    labels_per_group: dict[str, int] = field(default_factory=dict)
    human_scale: str | None = None
    human_higher_is_better: bool | None = None


def gather_evidence(table: EvalTable, *, human_scale: str | None = None, human_higher_is_better: bool | None = None,
                    procedure: Procedure = DEFAULT_PROCEDURE) -> Evidence:
    """Measure the bias of ``table``'s score and LGN's validity on it, once (module docstring). The table's
    roles name the score, the grouping, the human column and the system column. ``human_scale``: the human
    scale's name (``mqm``, ``esa``, ``da``, ``raw``, ``z``, ...; or the table's ``HUMAN_scale`` column);
    ``human_higher_is_better``: its direction when the user declares it."""
    table = table.in_canonical_order()  # the bootstraps never depend on the rows' order
    score, by = table.score_column, tuple(table.by)
    human = table.human if table.human is not None and table.human in table.frame.columns else None
    system = table.system if table.system is not None and table.system in table.frame.columns else None
    bias = diagnose_bias(table, threshold=procedure.threshold, n_resamples=procedure.n_resamples,
                         random_state=procedure.random_state)
    labels = table.row_labels()
    groups = sorted(set(labels.tolist()))
    per_group = _labels_per_group(table.frame, score, human, labels, groups)
    labelled = [g for g in groups if per_group[g] > 0]
    frame = table.frame
    if human is not None and labelled and len(labelled) < len(groups):  # the check reads the labelled groups
        frame = frame.loc[np.isin(labels, labelled)]
    by_arg: str | list[str] = by[0] if len(by) == 1 else list(by)
    segment = check_lgn_validity(frame, by_arg, human, threshold=procedure.threshold, level=procedure.level,
                                 human_scale=human_scale)
    system_check = None
    if human is not None and system is not None:
        system_check = check_lgn_validity(frame, by_arg, human, threshold=procedure.threshold, level=procedure.level,
                                          system=system, human_scale=human_scale)
    verdict = validity_verdict(segment, system_check) if human is not None else None
    if human is not None and labelled:  # the bias rule's reminder to check the gap against human scores: done here
        bias = replace(bias, reasons=tuple(r for r in bias.reasons if not r.startswith(REAL_QUALITY_HINT)))
    direction = direction_for(table.frame, human, human_scale, human_higher_is_better)
    return Evidence(score, by, human, system, bias, segment, system_check, verdict, per_group, human_scale, direction)


def _labels_per_group(frame: pd.DataFrame, score: str, human: str | None, labels: np.ndarray,
                      groups: list[str]) -> dict[str, int]:
    if human is None:
        return dict.fromkeys(groups, 0)
    has = np.isfinite(numeric_column(frame, human, argument="human")) & np.isfinite(numeric_column(frame, score))
    counts = pd.Series(has).groupby(labels).sum()
    return {g: int(counts.get(g, 0)) for g in groups}
