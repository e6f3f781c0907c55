"""Human ratings as the data comes: MQM error spans with a weighting, ESA scores with spans (WMT24's Appraise
exports too), several raters per segment (mean or per-rater z), and mixed gold (one scale per language pair,
stated with the scores).

See docs/human-ratings.md.
"""
from xleval.ratings._appraise import APPRAISE_LANGUAGES, read_appraise_esa
from xleval.ratings._esa import ESA_RANGE, ESA_SEVERITIES, score_esa
from xleval.ratings._gold import attach_gold, combine_gold, gold_scales
from xleval.ratings._mqm import MQM_PRESETS, MQMWeights, mqm_weights, score_mqm
from xleval.ratings._raters import RATER_POOLING

__all__ = [
    "MQM_PRESETS",
    "MQMWeights",
    "mqm_weights",
    "score_mqm",
    "ESA_RANGE",
    "ESA_SEVERITIES",
    "score_esa",
    "read_appraise_esa",
    "APPRAISE_LANGUAGES",
    "RATER_POOLING",
    "attach_gold",
    "combine_gold",
    "gold_scales",
]
