"""Intrinsic cross-lingual LM metrics from log-probabilities, and their confounds.

Sentence-level negative log-likelihood (Sent-NLL) on parallel text, token NLL, perplexity,
bits per token / character / byte, information parity; length statistics (characters, bytes,
tokens, corpus token count, byte and length premiums); confound analyses (vocabulary size,
length correlations, stability across equivalent translations); ingestion of
lm-evaluation-harness samples and the "Apples to Apples" results; a transformers scoring
backend (extra ``lm``, imported lazily). Corpus metrics are ratios of sums. See docs/intrinsic.md.
"""
from xleval.intrinsic._corpus import CorpusMetrics, corpus_metrics, information_parity, length_premiums, parallel_items
from xleval.intrinsic._lengths import CHAR_UNITS, count_bytes, count_chars, count_tokens, text_lengths
from xleval.intrinsic._scores import METRIC_UNITS, METRICS, LMScores, from_token_logprobs, metrics_from_sums, sentence_metrics

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
from xleval.intrinsic._ingest import APPLES_METRICS, apples_scores, read_apples_results, read_lm_eval_samples  # noqa: E402

__all__ += ["APPLES_METRICS", "apples_scores", "read_apples_results", "read_lm_eval_samples"]
from xleval.intrinsic._confounds import (  # noqa: E402
    LENGTHS,
    ConfoundReport,
    analyze_confounds,
    language_table,
    length_correlations,
    translation_stability,
    vocab_sensitivity,
)

__all__ += ["LENGTHS", "ConfoundReport", "analyze_confounds", "language_table", "length_correlations",
            "translation_stability", "vocab_sensitivity"]
from xleval.intrinsic._backend import BOS_CHOICES, LMScorer, score_texts  # noqa: E402

__all__ += ["BOS_CHOICES", "LMScorer", "score_texts"]
