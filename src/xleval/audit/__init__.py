"""Translation-tax audit of translated benchmarks (estimators E1-E4).

``audit(df)`` takes item-level results (item_id, model, condition, correct or response +
answer, optional model_family / subject / residual) and returns an :class:`AuditResult`:
parser validity per model x condition, the E1 back-translation gap, E3 native-control
contrast and E4 naturalization contrast (per model and pooled, with CIs and p-values, under
both invalid-answer policies), the dose-response split by translation residual, the
model-family interaction, E2 inter-rater agreement when ratings are given, and a markdown
reporting checklist (``render_checklist(result)``).
"""
from xleval.audit._agreement import annotation_agreement, krippendorff_alpha, rating_scale, weighted_kappa
from xleval.audit._audit import AUDIT_RESAMPLING, AuditResult, audit
from xleval.audit._checklist import render_checklist
from xleval.audit._data import CONDITION_ALIASES, CONDITIONS, prepare_audit_table
from xleval.audit._estimators import ESTIMATORS, EstimatorSpec, paired_contrast, unpaired_contrast
from xleval.audit._interaction import dose_response, family_interaction
from xleval.audit._lmeval import lm_eval_answers
from xleval.audit._parse import AnswerParser, parser_validity
from xleval.audit._results import (
    AnnotationAgreement,
    Contrast,
    DoseResponse,
    FamilyInteraction,
    ParserValidity,
    RaterAgreement,
    StratumEffect,
)
from xleval.audit._simulate import simulate_audit_data

__all__ = [
    "AUDIT_RESAMPLING",
    "audit",
    "AuditResult",
    "AnswerParser",
    "CONDITIONS",
    "CONDITION_ALIASES",
    "ESTIMATORS",
    "EstimatorSpec",
    "prepare_audit_table",
    "parser_validity",
    "paired_contrast",
    "unpaired_contrast",
    "dose_response",
    "family_interaction",
    "weighted_kappa",
    "krippendorff_alpha",
    "annotation_agreement",
    "rating_scale",
    "render_checklist",
    "lm_eval_answers",
    "simulate_audit_data",
    "Contrast",
    "DoseResponse",
    "StratumEffect",
    "FamilyInteraction",
    "ParserValidity",
    "RaterAgreement",
    "AnnotationAgreement",
]
