"""Calibration of metric scores across languages: mergeable group statistics, LGN, anchored calibration
(sparse human labels), selection of rows to annotate, and applying any saved calibrator to a table.

The estimators only: which one to use for a table is model selection, in :mod:`xleval.decision`."""
from ._anchored import AnchoredCalibrator
from ._anchored_v1 import LegacyAnchoredCalibrator
from ._apply import apply_calibrator, load_calibrator, output_column, output_metadata, row_interval_target
from ._cell_interval import CELL_TARGET, CellLabels, CellUncertainty, cell_uncertainty, deviation_variance
from ._estimates import GroupParams
from ._fit import (
    FIT_METHODS,
    LGN_STATISTICS,
    OFFSET_ESTIMATORS,
    PLAIN_LGN,
    UNSEEN_CHOICES,
    build_anchored,
    build_lgn,
    choose_min_count,
    default_method,
    fit_method,
    offset_estimator,
)
from ._frame import calibrate_frame, calibrated_metadata, prepare_frame, score_signature
from ._groupstats import GroupStats, QuantileSketch
from ._human_scale import HumanScale
from ._labels import LabelMerge, merge_labels
from ._lgn import LGN
from ._pairs import PAIR_COLUMNS, VERDICTS, CellPairs, cell_pairs
from ._plan import ALLOCATIONS, ROW_CHOICES, LabelDraw, LabelPlan, PlanTarget, plan_labels
from ._protocol import Calibrator
from ._scales import SCALE_NAMES, SCALES, direction_for, human_scale_direction, scale_kind, scale_named
from ._select import SELECTIONS, select_for_annotation, select_rows
from ._summary import CalibrationSummary, calibration_summary
from ._table_level import ROW_MIN_COUNT, lgn_min_count, table_level

__all__ = [
    "Calibrator", "GroupStats", "QuantileSketch", "LGN", "AnchoredCalibrator", "LegacyAnchoredCalibrator",
    "HumanScale",
    "GroupParams", "CalibrationSummary", "CellUncertainty", "CellLabels", "cell_uncertainty", "deviation_variance",
    "CELL_TARGET",
    "calibration_summary", "calibrate_frame", "calibrated_metadata", "prepare_frame", "score_signature",
    "select_for_annotation", "select_rows", "SELECTIONS", "merge_labels", "LabelMerge", "plan_labels", "LabelPlan",
    "PlanTarget", "LabelDraw",
    "ROW_CHOICES",
    "apply_calibrator", "load_calibrator", "output_column", "output_metadata", "row_interval_target",
    "lgn_min_count", "table_level", "ROW_MIN_COUNT",
    "fit_method", "build_lgn", "build_anchored", "choose_min_count", "PLAIN_LGN",
    "OFFSET_ESTIMATORS", "offset_estimator",
    "FIT_METHODS", "LGN_STATISTICS", "UNSEEN_CHOICES", "default_method",
    "CellPairs", "cell_pairs", "PAIR_COLUMNS", "VERDICTS", "ALLOCATIONS",
    "SCALES", "SCALE_NAMES", "direction_for", "human_scale_direction", "scale_kind", "scale_named",
]
