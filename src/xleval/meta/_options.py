"""The options of :func:`xleval.meta.meta_evaluate`, as three small values instead of two dozen keywords
(as mt-metrics-eval's ``Task`` carries a task's settings): which statistics and how
(:class:`MetaStatistics`), the significance clusters and the task ranking (:class:`Clustering`), and the
error spans and detection tasks (:class:`Spans`). How it resamples is :class:`xleval.stats.Resampling`.
Each checks itself when built (one :class:`~xleval.exceptions.InputError` naming the setting and the fix);
``with_(...)`` changes some settings."""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from ..exceptions import InputError
from ._ranks import CLUSTERED

__all__ = ["MetaStatistics", "Clustering", "Spans", "DEFAULT_STATISTICS", "AVERAGE_BY", "SYSTEM_SCORES",
           "CLUSTER_TIES"]

AVERAGE_BY = ("none", "item", "system")
SYSTEM_SCORES = ("complete", "judged")
CLUSTER_TIES = ("count", "mtme")


def _check_choice(value: str, name: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise InputError(f"{name}={value!r}: use one of {', '.join(choices)}", argument=name, value=value)


def _check_count(value: Any, name: str, minimum: int) -> None:
    """An integer count (permutations, resamples, simulations) of at least ``minimum``, at most the bound every
    resampling of xleval.stats keeps (each resample is kept in memory)."""
    from ..stats._validate import MAX_RESAMPLES

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not minimum <= int(value) <= MAX_RESAMPLES:
        raise InputError(f"{name}={value!r}: give an integer from {minimum} to {MAX_RESAMPLES}", argument=name,
                         value=value)


def _check_number(value: Any, name: str, low: float | None = None, high: float | None = None,
                  open_bounds: bool = False) -> None:
    """A finite number (inside [low, high], or (low, high) with ``open_bounds``): a NaN or inf threshold compares
    false with every score and would silently leave the statistic out."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok and low is not None:
        ok = float(value) > low if open_bounds else float(value) >= low
    if ok and high is not None:
        ok = float(value) < high if open_bounds else float(value) <= high
    if not ok:
        where = ("a finite number" if low is None and high is None else
                 f"a number {'above' if open_bounds else 'of at least'} {low:g}" if high is None else
                 f"a number strictly between {low:g} and {high:g}" if open_bounds else
                 f"a number from {low:g} to {high:g}")
        raise InputError(f"{name}={value!r}: give {where}", argument=name, value=value)


@dataclass(frozen=True)
class MetaStatistics:
    """Which statistics :func:`~xleval.meta.meta_evaluate` computes, and how.

    ``average_by``: how segment-level correlations are averaged (``none``, ``item``, ``system``:
    mt-metrics-eval's ``average_by``); ``system_scores``: ``complete`` (means over the segments judged for
    every system) or ``judged`` (each system's own judged segments); ``human_scale``: one scale name for
    every group, or group -> scale name (cross-group pairs only join groups of one scale); ``spa``: soft
    pairwise accuracy, from ``spa_permutations`` permutations; ``pdp``: the segment-level Pairwise Difference
    Pearson; ``darr``: the raw human column of WMT20's DARR pairs (raw difference >= ``darr_threshold``);
    ``ceiling``: a second human column scored as one more row (the human ceiling); ``chance``: each value's
    chance baseline (acc-t's from ``chance_simulations`` shuffles)."""

    average_by: str = "none"
    system_scores: str = "complete"
    human_scale: str | Mapping[str, str] | None = None
    spa: bool = True
    spa_permutations: int = 1000
    pdp: bool = True
    darr: str | None = None
    darr_threshold: float = 25.0
    ceiling: str | None = None
    chance: bool = False
    chance_simulations: int = 100

    def __post_init__(self) -> None:
        _check_choice(self.average_by, "average_by", AVERAGE_BY)
        _check_choice(self.system_scores, "system_scores", SYSTEM_SCORES)
        if self.human_scale is not None and not isinstance(self.human_scale, (str, Mapping)):
            raise InputError(f"human_scale={self.human_scale!r}: give a scale name (e.g. 'da_z') or a mapping "
                             "group -> scale name", argument="human_scale", value=self.human_scale)
        _check_count(self.spa_permutations, "spa_permutations", 1)
        _check_number(self.darr_threshold, "darr_threshold", 0.0)
        _check_count(self.chance_simulations, "chance_simulations", 1)

    def with_(self, **changes: Any) -> MetaStatistics:
        """These settings with some changed."""
        return replace(self, **changes)


@dataclass(frozen=True)
class Clustering:
    """Significance clusters of the metrics per group, and a WMT task's ranking.

    ``statistics``: the statistics (``sys_pearson``, ``sys_accuracy``, ``spa``, ``seg_acc_t``, ...) whose
    metrics get cluster ranks per group, from ``n_resamples`` permutations at ``alpha``; ``task``: ``wmt23``,
    ``wmt24`` or ``wmt25`` (that year's statistics and weights over the table's groups) or a list of
    :class:`xleval.stats.MetaTask`, adding the clusters the tasks need and their weighted ranking; ``ties``:
    how a resampled difference equal to the observed one counts (``count``: as at least as large;
    ``mtme``: mt-metrics-eval's floating-point ``>=``; :func:`xleval.stats.metric_clusters`)."""

    statistics: Sequence[str] = ()
    task: Any = None
    n_resamples: int = 1000
    alpha: float = 0.05
    ties: str = "count"

    def __post_init__(self) -> None:
        statistics = (self.statistics,) if isinstance(self.statistics, str) else tuple(self.statistics)
        object.__setattr__(self, "statistics", statistics)
        bad = [c for c in statistics if c not in CLUSTERED]
        if bad:
            raise InputError(f"clusters: {bad} cannot be clustered; use {', '.join(CLUSTERED)}", argument="clusters",
                             value=bad[0])
        _check_choice(self.ties, "cluster_ties", CLUSTER_TIES)
        _check_count(self.n_resamples, "n_resamples", 0)  # 0: no test (mt-metrics-eval's k=0)
        _check_number(self.alpha, "alpha", 0.0, 1.0, open_bounds=True)

    def __bool__(self) -> bool:
        """Whether any clusters are asked for (statistics or a task)."""
        return bool(self.statistics) or self.task is not None

    def with_(self, **changes: Any) -> Clustering:
        """These settings with some changed."""
        return replace(self, **changes)


@dataclass(frozen=True, eq=False)
class Spans:
    """Error spans and the detection tasks, scored per group over the judged segments.

    ``gold`` / ``predicted`` (name -> table): error spans (rows: the table's ``by``, ``system`` and
    ``segment`` columns, ``severity``, ``start``, ``end``), scored by WMT25's character-level F1 with
    ``mismatch`` credit for a wrong severity and the partial-overlap span F1; one column per predicted
    source. ``error_free``: the human score from which a segment without a gold span is error-free (WMT26:
    85); ``critical``: the human score below which a segment is critical (WMT25: 10); each metric's F1 at its
    best threshold."""

    gold: pd.DataFrame | None = None
    predicted: Mapping[str, pd.DataFrame] | None = None
    mismatch: float = 0.5
    error_free: float | None = None
    critical: float | None = None

    def __post_init__(self) -> None:
        if self.predicted and self.gold is None:
            raise InputError("predicted_spans= are scored against gold_spans=, which is missing: give the gold "
                             "spans too", argument="gold_spans")
        _check_number(self.mismatch, "mismatch", 0.0, 1.0)
        for name in ("error_free", "critical"):
            if getattr(self, name) is not None:
                _check_number(getattr(self, name), name)

    def __bool__(self) -> bool:
        """Whether anything is scored (predicted spans or a detection task)."""
        return bool(self.predicted) or self.error_free is not None or self.critical is not None

    def with_(self, **changes: Any) -> Spans:
        """These settings with some changed."""
        return replace(self, **changes)


#: every statistic's default
DEFAULT_STATISTICS = MetaStatistics()
