"""How an analysis resamples: one value instead of the same ``n_resamples``, ``level`` and ``random_state``
threaded through every function (as mt-metrics-eval's ``Task`` carries a task's settings). The meta-evaluation,
the fairness gaps, the audit and the leaderboard take it as ``resampling=``; :class:`xleval.decision.Procedure`
keeps the same three settings beside its folds."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from xleval._base.seeding import resolve_seed
from xleval.stats._validate import check_level, check_n_resamples

__all__ = ["Resampling", "DEFAULT_RESAMPLING", "FRESH_RESAMPLING"]


@dataclass(frozen=True)
class Resampling:
    """``n_resamples`` bootstrap resamples (or permutations) behind every interval, the intervals' ``level``
    and the ``random_state`` of every draw (an integer seed, None for a fresh one recorded in the result, or a
    numpy Generator). Checked when built; ``with_(...)`` changes some settings."""

    n_resamples: int = 1000
    level: float = 0.95
    random_state: Any = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_resamples", check_n_resamples(self.n_resamples))
        object.__setattr__(self, "level", check_level(self.level))
        if self.random_state is not None and not isinstance(self.random_state, np.random.Generator):
            resolve_seed(self.random_state)  # an InputError naming random_state and the fix

    def with_(self, **changes: Any) -> Resampling:
        """These settings with some changed."""
        return replace(self, **changes)


#: 1000 resamples, 95% intervals, seed 0: every analysis's default
DEFAULT_RESAMPLING = Resampling()
#: the same with a fresh seed (recorded in the result): the default of the fairness gaps and of
#: :func:`xleval.stats.compare_pairwise_accuracy`
FRESH_RESAMPLING = Resampling(random_state=None)
