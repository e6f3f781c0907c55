"""Metric names -> ``"module:Class"`` strings, so that listing metrics imports nothing.

A plain name (``bleu``) calls ``Class(**options)``; a parametrised name ``kind:ARG``
(``comet:/models/wmt22-comet-da``) calls ``Class(ARG, **options)`` — the neural adapters take
their local model path as the first positional argument.
"""
from __future__ import annotations

import importlib
from typing import Any

from xleval.exceptions import InputError

from ._base import Metric

__all__ = ["get_metric", "available_metrics", "METRICS"]

# name -> (target "module:Class", default options, whether the name takes ":ARG")
METRICS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "bleu": ("xleval.metrics._bleu:BLEU", {}, False),
    "chrf": ("xleval.metrics._chrf:CHRF", {}, False),
    "chrf++": ("xleval.metrics._chrf:CHRF", {"word_order": 2}, False),
    "ter": ("xleval.metrics._ter:TER", {}, False),
    "comet": ("xleval.metrics._comet:COMET", {}, True),
    "bertscore": ("xleval.metrics._bertscore:BERTScore", {}, True),
    "embed": ("xleval.metrics._embed:EmbeddingCosine", {}, True),
}


def available_metrics() -> list[str]:
    """Registered metric names; parametrised ones are shown as ``kind:PATH``."""
    return [f"{name}:PATH" if takes_arg else name for name, (_, _, takes_arg) in METRICS.items()]


def get_metric(spec: str, **options: Any) -> Metric:
    """Build a metric from its registry name, e.g. ``get_metric("bleu", tokenize="zh")``.

    ``options`` override the name's defaults (``chrf++`` is ``chrf`` with ``word_order=2``).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"metric name must be a non-empty string, got {spec!r}; choose from {available_metrics()}")
    kind, sep, arg = spec.strip().partition(":")
    entry = METRICS.get(kind.lower())
    if entry is None:
        raise InputError(f"unknown metric {spec!r}; choose from {', '.join(available_metrics())}")
    target, defaults, takes_arg = entry
    if takes_arg and not arg:
        raise InputError(f"metric {kind!r} needs a local model path: use '{kind}:PATH'")
    if not takes_arg and sep:
        raise InputError(f"metric {kind!r} takes no ':' argument (got {spec!r})")
    cls = _load(target)
    kwargs = {**defaults, **options}
    return cls(arg, **kwargs) if takes_arg else cls(**kwargs)


def _load(target: str) -> type[Metric]:
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)
