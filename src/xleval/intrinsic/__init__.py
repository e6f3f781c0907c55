"""Intrinsic cross-lingual LM metrics from log-probabilities, and their confounds.

Sentence-level negative log-likelihood (Sent-NLL) on parallel text, token NLL, perplexity,
bits per token / character / byte, information parity; length statistics (characters, bytes,
tokens, corpus token count, byte and length premiums); confound analyses (vocabulary size,
length correlations, stability across equivalent translations); ingestion of
lm-evaluation-harness samples and the "Apples to Apples" results (:func:`read_scores` tells
them apart); a transformers scoring backend (extra ``lm``, imported lazily). Corpus metrics are
ratios of sums; confound tests take the language as the unit and never pool tokenizer
algorithms or model families. See docs/intrinsic.md.
"""
from xleval.intrinsic._corpus import CorpusMetrics, corpus_metrics, information_parity, length_premiums, parallel_items
from xleval.intrinsic._lengths import CHAR_UNITS, count_bytes, count_chars, count_tokens, text_lengths
from xleval.intrinsic._scores import (
    METRIC_UNITS,
    METRICS,
    LMScores,
    from_token_logprobs,
    metrics_from_sums,
    sentence_metrics,
)

__all__ = [
    "CHAR_UNITS",
    "METRICS",
    "METRIC_UNITS",
    "LMScores",
    "CorpusMetrics",
    "count_bytes",
    "count_chars",
    "count_tokens",
    "text_lengths",
    "from_token_logprobs",
    "metrics_from_sums",
    "sentence_metrics",
    "corpus_metrics",
    "information_parity",
    "length_premiums",
    "parallel_items",
]
from xleval.intrinsic._ingest import (
    APPLES_METRICS,
    TRANSLATION_SETS,
    apples_scores,
    lm_eval_scores,
    read_apples_results,
)
from xleval.intrinsic._read import APPLES_EVAL_SETS, SOURCES, detect_source, read_scores

__all__ += ["APPLES_METRICS", "APPLES_EVAL_SETS", "SOURCES", "TRANSLATION_SETS", "apples_scores", "detect_source",
            "lm_eval_scores", "read_apples_results", "read_scores"]
from xleval.intrinsic._anomalies import ANOMALY_BOUNDS, flag_anomalies  # noqa: E402
from xleval.intrinsic._confounds import (  # noqa: E402
    CONFOUND_METRICS,
    LENGTHS,
    LEVELS,
    STRATA,
    ConfoundReport,
    analyze_confounds,
    correlation_power,
    language_table,
    length_tests,
    unit_table,
)
from xleval.intrinsic._stability import stability_summary, translation_stability, vocab_sensitivity  # noqa: E402

__all__ += ["ANOMALY_BOUNDS", "CONFOUND_METRICS", "LENGTHS", "LEVELS", "STRATA", "ConfoundReport", "analyze_confounds",
            "correlation_power", "flag_anomalies", "language_table", "length_tests", "unit_table",
            "stability_summary", "translation_stability", "vocab_sensitivity"]
from xleval.intrinsic._backend import BOS_CHOICES, LMScorer, score_texts  # noqa: E402

__all__ += ["BOS_CHOICES", "LMScorer", "score_texts"]
