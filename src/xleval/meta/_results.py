"""Frozen results of a meta-evaluation: one :class:`Cell` per (group, metric, statistic), the
global and cross-group accuracies per metric, and the run's settings and notes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._base.result import Result
from ..exceptions import InputError

__all__ = ["Cell", "MetaEvaluation", "STATISTICS"]

#: statistic name -> (level, what it is), in the order tables show them
STATISTICS: dict[str, tuple[str, str]] = {
    "sys_pearson": ("system", "Pearson r of system scores with human system scores"),
    "sys_spearman": ("system", "Spearman rho of system scores"),
    "sys_kendall": ("system", "Kendall tau-b of system scores"),
    "sys_accuracy": ("system", "pairwise accuracy of system pairs (exact ties)"),
    "spa": ("system", "soft pairwise accuracy (Thompson et al. 2024)"),
    "seg_pearson": ("segment", "Pearson r of segment scores"),
    "seg_kendall": ("segment", "Kendall tau-b of segment scores"),
    "seg_pdp": ("segment", "PDP: Pearson r of the within-item differences of system scores (pairs of outputs of "
                           "one segment; EMNLP 2025)"),
    "seg_acc_t": ("segment", "acc-t: acc23 with tie calibration, averaged by item (WMT23/24)"),
    "darr_tau": ("segment", "WMT20 DARR Kendall-like tau: (C - D) / (C + D), metric ties discordant"),
    "span_char_f1": ("span", "character-level F1 of error spans (WMT25; wrong severity: partial credit)"),
    "span_char_precision": ("span", "character-level precision of error spans"),
    "span_char_recall": ("span", "character-level recall of error spans"),
    "span_overlap_f1": ("span", "partial-overlap, partial-credit span F1, micro-averaged"),
    "span_overlap_precision": ("span", "partial-overlap span precision, micro-averaged"),
    "span_overlap_recall": ("span", "partial-overlap span recall, micro-averaged"),
    "error_free_f1": ("segment", "F1 of finding error-free segments at the metric's best threshold (WMT26)"),
    "error_free_precision": ("segment", "precision of finding error-free segments at that threshold"),
    "error_free_recall": ("segment", "recall of finding error-free segments at that threshold"),
    "error_free_threshold": ("segment", "the best threshold: segments scoring at least it are flagged error-free"),
    "critical_f1": ("segment", "F1 of finding critical segments at the metric's best threshold (WMT25)"),
    "critical_precision": ("segment", "precision of finding critical segments at that threshold"),
    "critical_recall": ("segment", "recall of finding critical segments at that threshold"),
    "critical_threshold": ("segment", "the best threshold: segments scoring below it are flagged critical"),
}


@dataclass(frozen=True, eq=False)
class Cell(Result):
    """One statistic of one metric in one group (``group`` is ``"*"`` for the pooled ones).

    ``rank``: the metric's significance cluster (1 = best; None when not clustered); ``chance``: the
    statistic's value for an uninformative metric (NaN when not asked);
    ``ci_low``/``ci_high``: a percentile CI from resampling systems within groups for the system-level
    Pearson and accuracies, the Fisher-type CI for Kendall/Spearman/segment correlations, NaN where none
    exists; ``n``: systems (system level) or rows/pairs (segment level) the value rests on (for correlations
    averaged by item or system: the units averaged); ``left_out``: units (items or systems) of two or more rows
    left out of an average because the metric's or the human's scores are constant there (mt-metrics-eval
    leaves them out too: their correlation is undefined); ``relative``: the value divided by the human ceiling's
    value in the same group and statistic (NaN without a ceiling, :attr:`MetaEvaluation.ceiling`)."""

    group: str
    metric: str
    statistic: str
    value: float
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    n: int = 0
    rank: int | None = None
    chance: float = float("nan")
    left_out: int = 0
    relative: float = float("nan")


@dataclass(frozen=True, eq=False)
class MetaEvaluation(Result):
    """Agreement of several metrics with humans, per group and across groups.

    ``cells``: every (group, metric, statistic) value; ``global_accuracy`` / ``cross_accuracy``: metric ->
    Cell (pairs of systems within a group pooled over groups, WMT23's global accuracy; pairs of systems of
    different groups, xleval's cross-group accuracy); ``groups``: group -> (systems, segments used for
    system scores, human scale); ``system_scores``: how system scores were made (``"complete"``: means over
    the segments judged for every system of the group; ``"judged"``: each system's judged segments;
    ``"table"``: the table is system-level); ``notes``: what the numbers rest on."""

    metrics: tuple[str, ...]
    human: str
    by: str
    system: str
    segment: str | None
    average_by: str
    system_scores: str
    cells: tuple[Cell, ...]
    global_accuracy: dict[str, Cell]
    cross_accuracy: dict[str, Cell]
    groups: dict[str, dict[str, Any]]
    level: float
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())
    task: str | None = None
    ranking: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the second human column scored as a metric (the human ceiling), or None
    ceiling: str | None = None
    #: the sources of predicted error spans (columns of the span statistics' tables)
    span_sources: tuple[str, ...] = ()

    def columns(self, statistic: str) -> tuple[str, ...]:
        """The columns of a statistic's table: the span sources for span statistics, else the metrics."""
        return self.span_sources if STATISTICS.get(statistic, ("",))[0] == "span" else self.metrics

    def value(self, group: str, metric: str, statistic: str) -> float:
        """The value of one cell (NaN when the cell is absent: a statistic not computed for that group and metric).
        A group, metric or statistic that names none of this result's is refused, with the names there are (a
        misspelt name is not a missing value)."""
        for c in self.cells:
            if c.group == group and c.metric == metric and c.statistic == statistic:
                return c.value
        for what, name, known in (("group", group, {c.group for c in self.cells}),
                                  ("metric", metric, {c.metric for c in self.cells}),
                                  ("statistic", statistic, set(STATISTICS))):
            if known and name not in known:
                raise InputError(f"{what} {name!r} is not in this meta-evaluation; its {what}s are "
                                 f"{', '.join(sorted(map(str, known)))}", argument=what, value=name)
        return float("nan")

    def statistics(self) -> list[str]:
        """The statistics present, in :data:`STATISTICS` order."""
        present = {c.statistic for c in self.cells}
        return [s for s in STATISTICS if s in present]

    def to_frame(self) -> Any:
        """Tidy table: ``group, metric, statistic, value, ci_low, ci_high, n`` (pooled rows have group ``*``)."""
        import pandas as pd

        rows = [c.to_dict() for c in self.cells]
        for name, d in (("global_accuracy", self.global_accuracy), ("cross_accuracy", self.cross_accuracy)):
            rows += [{**c.to_dict(), "statistic": name} for c in d.values()]
        return pd.DataFrame(rows, columns=["group", "metric", "statistic", "value", "ci_low", "ci_high", "n", "rank",
                                           "chance", "left_out", "relative"])
