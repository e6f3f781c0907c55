"""Metric objects (sacrebleu-exact, vectorised BLEU/chrF; TER; neural adapters) and a registry.

Only the base class and the registry are imported eagerly; metric classes load on first use.
"""
from ._base import Metric, signature_direction
from ._direction import higher_is_better
from ._registry import available_metrics, get_metric, metric_options

__all__ = ["Metric", "BLEU", "CHRF", "TER", "COMET", "BERTScore", "EmbeddingCosine", "MetricX", "ErrorSpans",
           "ScoreCache", "signature_direction", "higher_is_better", "get_metric", "available_metrics", "metric_options",
           "score_frame", "score_inputs", "corpus_table", "ScoredFrame", "set_backend", "get_backend",
           "compare_systems", "compare_systems_frame", "SystemsComparison",
           "Score", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf", "corpus_ter",
           "sentence_ter"]

# the neural classes import torch/transformers only when a model is loaded, not at class import
_LAZY = {"BLEU": "._bleu", "CHRF": "._chrf", "TER": "._ter", "COMET": "._comet", "BERTScore": "._bertscore",
         "MetricX": "._metricx", "ErrorSpans": "._comet", "ScoreCache": "._score_cache",
         "EmbeddingCosine": "._embed", "score_frame": "._frame", "score_inputs": "._frame", "corpus_table": "._frame",
         "ScoredFrame": "._frame",
         "set_backend": "._fast", "get_backend": "._fast",
         "compare_systems": "._systems", "compare_systems_frame": "._systems", "SystemsComparison": "._systems",
         "Score": "._sacrebleu_base",
         **dict.fromkeys(("corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf",
                          "corpus_ter", "sentence_ter"), "._compat")}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
