"""Multilingual fairness gaps (absolute level, ratio to a reference language, resource
elasticity, typological bias) and the minimum test-set size to detect a gap.
See docs/fairness.md."""
from xleval.fairness._elasticity import data_multiplier, resource_elasticity
from xleval.fairness._gaps import DERIVED_FEATURES, ResourceFit, fairness_gaps, fairness_gaps_by
from xleval.fairness._plots import plot_elasticity, plot_levels, plot_power_curve, plot_ratios
from xleval.fairness._power import cohens_h, detectable_effect, min_test_size, test_power
from xleval.fairness._results import (
    DetectableEffect,
    Elasticity,
    FairnessReport,
    GapSummary,
    LanguageGap,
    SampleSize,
    TypologyBias,
)
from xleval.fairness._typology import typology_bias

__all__ = [
    "fairness_gaps",
    "fairness_gaps_by",
    "ResourceFit",
    "resource_elasticity",
    "data_multiplier",
    "typology_bias",
    "DERIVED_FEATURES",
    "plot_levels",
    "plot_ratios",
    "plot_elasticity",
    "plot_power_curve",
    "min_test_size",
    "detectable_effect",
    "test_power",
    "cohens_h",
    "SampleSize",
    "DetectableEffect",
    "LanguageGap",
    "GapSummary",
    "Elasticity",
    "TypologyBias",
    "FairnessReport",
]
