"""Diagnostics: is a metric biased by language, did calibration remove it, do the scores agree
with human judgments when languages are compared, and does LGN's equal-quality assumption hold?

Every function returns a frozen result dataclass with ``to_dict()`` (rendered by the CLI and the
HTML report); statistics come from :mod:`xleval.stats`. See docs/diagnostics.md.
"""
from ._agreement import AgreementResult, Comparison, ScoreAgreement, human_agreement, system_table
from ._bias import DEFAULT_THRESHOLD, BiasComparison, BiasDiagnosis, compare_bias, diagnose_bias
from ._commands import AdviceAction, AdviceRenderer, PythonAdvice
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
)
from ._defaults import MARGIN, N_FOLDS, N_REPEATS, N_RESAMPLES, PREFERENCE, RANDOM_STATE
from ._diagnose import Diagnosis, advice_line, diagnose
from ._evaluate import DEFAULT_BUDGETS, CalibrationEvaluation, VariantScore, evaluate_calibration
from ._validity import (
    DESIGN_ADVICE,
    HUMAN_SCALES,
    SEVERITY,
    HumanScale,
    ValidityCheck,
    ValidityVerdict,
    check_lgn_validity,
    human_scale_check,
    validity_verdict,
)

__all__ = [
    "diagnose", "Diagnosis", "advice_line", "AdviceAction", "AdviceRenderer", "PythonAdvice",
    "decide_calibration", "decide_from_evaluation", "decide_across_metrics", "CalibrationDecision", "METHOD_NAMES",
    "N_FOLDS", "N_REPEATS", "RANDOM_STATE", "N_RESAMPLES", "MARGIN", "PREFERENCE",
    "human_scale_check", "HumanScale", "HUMAN_SCALES",
    "choose_method", "MethodChoice", "DecisionStep", "REFERENCE", "RECOMMENDED_LABELS",
    "diagnose_bias", "compare_bias", "BiasDiagnosis", "BiasComparison", "DEFAULT_THRESHOLD",
    "human_agreement", "system_table", "AgreementResult", "ScoreAgreement", "Comparison",
    "check_lgn_validity", "ValidityCheck", "DESIGN_ADVICE", "validity_verdict", "ValidityVerdict", "SEVERITY",
    "evaluate_calibration", "CalibrationEvaluation", "VariantScore", "DEFAULT_BUDGETS",
]
