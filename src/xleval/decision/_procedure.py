"""The procedure of the cross-validated comparison, and the rule's constants, read by every caller
(``calibrate fit --method auto``, ``calibrate evaluate``, ``diagnose``, the leaderboard, the report and
``meta --calibrations``), so that the same table gets the same decision everywhere.

:class:`Procedure` is one argument (as mt-metrics-eval's ``Task`` carries a task's settings) instead of
the same folds, repeats, resamples, seed and level threaded through a dozen functions. The comparison
costs ``n_folds x n_repeats`` fits of LGN and of the anchored calibrator (measured in
docs/calibration.md), affordable inside ``fit``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..exceptions import InputError
from ..stats._resampling import Resampling

__all__ = ["Procedure", "DEFAULT_PROCEDURE", "EVALUATION_PROCEDURE", "DEFAULT_BUDGETS", "N_FOLDS", "N_REPEATS",
           "RANDOM_STATE", "N_RESAMPLES", "MARGIN",
           "PREFERENCE", "Z_LIKE_PREFERENCE", "DECISION_SELECTION"]

#: system folds of the cross-validated comparison
N_FOLDS = 5
#: fold splits (and label draws); the decision reads the mean over them
N_REPEATS = 5
#: random state of the folds and draws
RANDOM_STATE = 0
#: resamples of systems behind the paired intervals the decision reads (whatever the caller's bootstrap uses)
N_RESAMPLES = 1000
#: the tolerance: a method beats another only by more than MARGIN of out-of-fold cross-group accuracy
#: (and with the paired 95% interval of the difference above 0); methods that no other beats are tied
MARGIN = 0.02
#: the tie rule: among tied methods, the first of these. Anchored assumes nothing about the groups' true
#: quality and puts scores on the human scale; raw scores change nothing; LGN assumes equal true quality.
PREFERENCE = ("anchored", "none", "lgn")
#: the tie rule when the human column looks like a z scale by its moments (every group's mean near 0, sd
#: near 1) but nothing else says so: anchoring to such labels pulls the groups toward one mean, which LGN
#: does without the labels' noise (on WMT21 DA z, LGN led anchored at 100 labels per pair in most draws)
Z_LIKE_PREFERENCE = ("lgn", "anchored", "none")
#: how the labels of a stated budget are drawn in the comparison (``calibrate select`` was never shown
#: to beat random selection; docs/calibration.md)
DECISION_SELECTION = "random"


@dataclass(frozen=True)
class Procedure:
    """How the evidence is measured: ``n_folds`` system folds x ``n_repeats`` fold splits (and label
    draws), ``n_resamples`` resamples of systems within groups for the intervals, their ``level``, the
    ``random_state`` of every draw, the bias rule's ``threshold`` (pooled sd), and the budget curve
    measured beside the decision (``budgets``: labels per group, drawn by each of ``selections``;
    shown, never read by the decision). One value travels from the caller to every step; the defaults
    (:data:`DEFAULT_PROCEDURE`) are the decision's, so ``fit``, ``evaluate``, the leaderboard and the
    report decide alike. ``with_(...)`` changes some settings."""

    n_folds: int = N_FOLDS
    n_repeats: int = N_REPEATS
    n_resamples: int = N_RESAMPLES
    random_state: Any = RANDOM_STATE
    level: float = 0.95
    threshold: float = 0.5
    budgets: tuple[int, ...] = ()
    selections: tuple[str, ...] = (DECISION_SELECTION,)

    def __post_init__(self) -> None:
        for name in ("n_folds", "n_repeats", "n_resamples"):
            value = getattr(self, name)
            least = 2 if name == "n_folds" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise InputError(f"{name} must be an integer >= {least}; got {value!r}", argument=name, value=value)
        object.__setattr__(self, "budgets", tuple(self.budgets))
        object.__setattr__(self, "selections", tuple(self.selections))
        if not 0 < float(self.level) < 1:
            raise InputError(f"level must be between 0 and 1; got {self.level!r}", argument="level", value=self.level)

    def with_(self, **changes: Any) -> Procedure:
        """This procedure with some settings changed."""
        return replace(self, **changes)

    @property
    def resampling(self) -> Resampling:
        """Its ``n_resamples``, ``level`` and ``random_state`` as a :class:`xleval.stats.Resampling`, for the
        analyses that take one."""
        return Resampling(n_resamples=self.n_resamples, level=self.level, random_state=self.random_state)


#: the decision's procedure
DEFAULT_PROCEDURE = Procedure()
#: budget curve of ``calibrate evaluate`` (labels per group)
DEFAULT_BUDGETS = (25, 50, 100, 200)
#: ``calibrate evaluate``'s procedure: the decision's, with the budget curve by both selections
EVALUATION_PROCEDURE = Procedure(budgets=DEFAULT_BUDGETS, selections=("spread", "random"))
