"""Metric objects (sacrebleu-exact, vectorised BLEU/chrF; TER; neural adapters) and a registry."""
from ._base import Metric
from ._registry import available_metrics, get_metric

__all__ = ["Metric", "get_metric", "available_metrics"]
