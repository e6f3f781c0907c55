"""The leaderboard: every (group, system) with its raw score, its calibrated score with a bootstrap
interval, its rank within the group and across groups with rank intervals, and its human score.

Compute in steps (:func:`system_scores`, :func:`recommend_calibration`, a :class:`SystemCalibration`,
:func:`rank_systems`) or at once (:func:`leaderboard`). Rendering (text, TSV, JSON, an HTML section)
is the CLI's and the report's. See docs/report.md.
"""
from ._board import COLUMNS, Leaderboard, SystemScores, leaderboard, rank_systems, system_scores
from ._board import higher_is_better_of as higher_is_better_of  # deprecated: report/_mt.py only (issue 32)
from ._calibration import METHODS, SystemCalibration, check_model_score, fit_calibration, model_calibration
from ._decision import Recommendation, recommend_calibration
from ._system import CORPUS_METRICS, row_statistics

__all__ = [
    "leaderboard", "Leaderboard", "COLUMNS", "system_scores", "SystemScores", "rank_systems",
    "SystemCalibration", "check_model_score", "fit_calibration", "model_calibration", "METHODS",
    "Recommendation", "recommend_calibration", "CORPUS_METRICS", "row_statistics",
]
