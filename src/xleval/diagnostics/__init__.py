"""Diagnostics: is a metric biased by language, did calibration remove it, do the scores agree
with human judgments when languages are compared, and does LGN's equal-quality assumption hold?

Every function returns a frozen result dataclass with ``to_dict()`` (rendered by the CLI and the
HTML report); statistics come from :mod:`xleval.stats`. Which calibration to use, given this
evidence, is decided one floor up, in :mod:`xleval.decision`. See docs/diagnostics.md.
"""
from ._agreement import AgreementResult, Comparison, ScoreAgreement, human_agreement, system_table
from ._bias import DEFAULT_THRESHOLD, BiasComparison, BiasDiagnosis, compare_bias, diagnose_bias
from ._validity import (
    DESIGN_ADVICE,
    HUMAN_SCALES,
    SEVERITY,
    HumanScale,
    ValidityCheck,
    ValidityVerdict,
    below_threshold,
    check_lgn_validity,
    human_scale_check,
    status_said,
    validity_verdict,
)

__all__ = [
    "human_scale_check", "HumanScale", "HUMAN_SCALES",
    "diagnose_bias", "compare_bias", "BiasDiagnosis", "BiasComparison", "DEFAULT_THRESHOLD",
    "human_agreement", "system_table", "AgreementResult", "ScoreAgreement", "Comparison",
    "check_lgn_validity", "ValidityCheck", "DESIGN_ADVICE", "validity_verdict", "ValidityVerdict", "SEVERITY",
    "below_threshold", "status_said",
]
