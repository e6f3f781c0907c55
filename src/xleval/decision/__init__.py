"""Which calibration, and how sure: model selection above the estimators (:mod:`xleval.calibration`)
and the evidence (:mod:`xleval.diagnostics`), as scikit-learn's ``model_selection`` sits above its
estimators.

One run measures the evidence once (:func:`gather_evidence`: bias of the raw score, LGN's validity at
segment and system level), compares raw, LGN and anchored calibration out of fold
(:func:`compare_calibrations`; it never calls the decision), and reads **one decision** from both
(:func:`decide_calibration` -> :class:`CalibrationDecision`: the method, why, the tie rule, the warning,
the advice). The leaderboard, the report, ``diagnose``, ``calibrate fit/evaluate`` and the command line
render that one object. :class:`Procedure` carries the comparison's settings (folds, repeats,
resamples, seed, level, the bias rule's threshold, the budget curve) as one argument.
"""
from .._base.caller import DEFAULT_CALLER, Caller
from ._advice import AdviceAction, AdviceRenderer, PythonAdvice
from ._compare import ALTERNATIVES, CalibrationEvaluation, VariantScore, compare_calibrations, score_direction
from ._decide import (
    METHOD_NAMES,
    RECOMMENDED_LABELS,
    REFERENCE,
    CalibrationDecision,
    DecisionStep,
    MethodChoice,
    choose_method,
    decide_across_metrics,
    decide_calibration,
    decide_from_evaluation,
    evaluate_calibration,
    raw_column_name,
    with_decision,
)
from ._diagnose import Diagnosis, advice_line, diagnose
from ._evidence import Evidence, gather_evidence
from ._fit import FIT_SETTINGS, FittedCalibration, fit_calibration
from ._procedure import (
    DECISION_SELECTION,
    DEFAULT_BUDGETS,
    DEFAULT_PROCEDURE,
    EVALUATION_PROCEDURE,
    MARGIN,
    N_FOLDS,
    N_REPEATS,
    N_RESAMPLES,
    PREFERENCE,
    RANDOM_STATE,
    Z_LIKE_PREFERENCE,
    Procedure,
)
from ._recommend import RECOMMEND_PROCEDURE, recommend_calibration
from ._sentences import MEASURED_BASES, METHOD_LONG_NAMES, budget_curve, decision_reasons

__all__ = [
    "Procedure", "DEFAULT_PROCEDURE", "Caller", "DEFAULT_CALLER",
    "EVALUATION_PROCEDURE", "DEFAULT_BUDGETS", "N_FOLDS", "N_REPEATS",
    "N_RESAMPLES", "RANDOM_STATE", "MARGIN", "PREFERENCE", "Z_LIKE_PREFERENCE", "DECISION_SELECTION",
    "Evidence", "gather_evidence",
    "compare_calibrations", "evaluate_calibration", "CalibrationEvaluation", "VariantScore", "ALTERNATIVES",
    "score_direction",
    "decide_calibration", "decide_from_evaluation", "decide_across_metrics", "with_decision", "CalibrationDecision",
    "choose_method", "MethodChoice", "DecisionStep", "METHOD_NAMES", "METHOD_LONG_NAMES", "REFERENCE",
    "RECOMMENDED_LABELS", "raw_column_name",
    "recommend_calibration", "RECOMMEND_PROCEDURE", "budget_curve", "decision_reasons", "MEASURED_BASES",
    "fit_calibration", "FittedCalibration", "FIT_SETTINGS",
    "diagnose", "Diagnosis", "advice_line",
    "AdviceAction", "AdviceRenderer", "PythonAdvice",
]
