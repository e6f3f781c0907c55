"""Meta-evaluation of several metrics against human scores, per group and across groups, in the
statistics of the WMT metrics tasks (system- and segment-level correlations, pairwise accuracy,
SPA, acc-t, WMT20's DARR tau, global and cross-group accuracy with CIs). See docs/meta-evaluation.md."""
from ._calibrated import (
    CalibratedMeta,
    CalibratedVariant,
    calibrated_frame,
    exclude_systems,
    meta_calibrations,
    parse_calibrations,
)
from ._compute import COMPUTED_METRICS, score_missing_metrics
from ._engine import AVERAGE_BY, SYSTEM_SCORES, darr_tau, meta_evaluate, metric_directions, unit_correlations
from ._options import DEFAULT_STATISTICS, Clustering, MetaStatistics, Spans
from ._results import STATISTICS, Cell, MetaEvaluation

__all__ = ["meta_evaluate", "MetaStatistics", "Clustering", "Spans", "DEFAULT_STATISTICS",
           "metric_directions", "meta_calibrations", "parse_calibrations", "calibrated_frame",
           "CalibratedMeta", "CalibratedVariant", "darr_tau", "unit_correlations", "MetaEvaluation", "Cell",
           "STATISTICS", "AVERAGE_BY", "SYSTEM_SCORES", "COMPUTED_METRICS", "score_missing_metrics", "exclude_systems"]
