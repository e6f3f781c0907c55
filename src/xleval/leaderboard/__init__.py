"""The leaderboard: every (group, system) with its raw score, its calibrated score with a bootstrap
interval, its rank within the group and across groups with rank intervals, and its human score.

Compute in steps (:func:`system_scores`, :func:`xleval.decision.recommend_calibration`, a
:class:`SystemCalibration` from :func:`system_calibration`, :func:`rank_systems`) or at once
(:func:`leaderboard`). Rendering (text, TSV, JSON, an HTML section)
is the CLI's and the report's. See docs/report.md.
"""
from ._board import COLUMNS, Leaderboard, SystemScores, leaderboard, rank_systems, system_scores
from ._calibration import METHODS, SystemCalibration, check_model_score, model_calibration, system_calibration
from ._reading import DEFAULT_READING, ScoreReading
from ._system import CORPUS_METRICS, row_statistics

__all__ = [
    "leaderboard", "ScoreReading", "DEFAULT_READING",
    "Leaderboard", "COLUMNS", "system_scores", "SystemScores", "rank_systems",
    "SystemCalibration", "check_model_score", "system_calibration", "model_calibration", "METHODS",
    "CORPUS_METRICS", "row_statistics",
]
