"""Metric names -> ``"module:Class"`` strings, so that listing metrics imports nothing.

A plain name (``bleu``) calls ``Class(**options)``; a parametrised name ``kind:ARG``
(``comet:/models/wmt22-comet-da``) calls ``Class(ARG, **options)`` — the neural adapters take
their local model path as the first positional argument.

The registry also knows each metric's options, under the prefix sacrebleu's command line gives
them (``bleu_tokenize``, ``chrf_lowercase``, ``ter_case_sensitive``; ``neural_batch_size`` for the
neural adapters): :func:`metric_options` picks a metric's options out of one flat mapping, so a
command line can offer every option once and each metric gets only its own (``-lc`` lowercases
BLEU only, as in sacrebleu; chrF has ``chrf_lowercase``). And it knows the sentence-level
defaults that differ from the corpus ones: sacrebleu's ``sentence_bleu`` (and ``sacrebleu -sl``)
turns BLEU's effective order on, its ``BLEU()``/``corpus_bleu`` leave it off.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from xleval.exceptions import InputError

from ._base import Metric

__all__ = ["get_metric", "available_metrics", "metric_options", "METRICS", "LEVELS"]

LEVELS = ("corpus", "sentence")


@dataclass(frozen=True)
class _Entry:
    target: str  # "module:Class"
    defaults: dict[str, Any] = field(default_factory=dict)
    takes_arg: bool = False  # the name takes ":ARG" (a local model path)
    prefix: str | tuple[str, ...] = ""  # option prefix(es) in a flat mapping (sacrebleu's CLI convention)
    options: tuple[str, ...] = ()  # constructor options a flat mapping may set
    sentence: dict[str, Any] = field(default_factory=dict)  # sentence-level defaults


_BLEU_OPTS = ("tokenize", "lowercase", "smooth_method", "smooth_value", "max_ngram_order", "effective_order",
              "spm_model")
_CHRF_OPTS = ("char_order", "word_order", "beta", "lowercase", "whitespace", "eps_smoothing")
_TER_OPTS = ("normalized", "no_punct", "asian_support", "case_sensitive")
_NEURAL_OPTS = ("batch_size", "device", "precision", "progress", "cache")
_METRICX_OPTS = (*_NEURAL_OPTS, "variant", "tokenizer_path", "max_length")
_JUDGE_OPTS = (*_NEURAL_OPTS, "prompt", "use_refs", "column", "max_new_tokens", "concurrency", "timeout", "retries",
               "backoff", "api_key_env")

METRICS: dict[str, _Entry] = {
    "bleu": _Entry("xleval.metrics._bleu:BLEU", prefix="bleu", options=_BLEU_OPTS,
                   sentence={"effective_order": True}),
    "chrf": _Entry("xleval.metrics._chrf:CHRF", prefix="chrf", options=_CHRF_OPTS),
    "chrf++": _Entry("xleval.metrics._chrf:CHRF", {"word_order": 2}, prefix="chrf", options=_CHRF_OPTS),
    "ter": _Entry("xleval.metrics._ter:TER", prefix="ter", options=_TER_OPTS),
    "comet": _Entry("xleval.metrics._comet:COMET", takes_arg=True, prefix="neural", options=_NEURAL_OPTS),
    "bertscore": _Entry("xleval.metrics._bertscore:BERTScore", takes_arg=True, prefix="neural", options=_NEURAL_OPTS),
    "embed": _Entry("xleval.metrics._embed:EmbeddingCosine", takes_arg=True, prefix="neural", options=_NEURAL_OPTS),
    "metricx": _Entry("xleval.metrics._metricx:MetricX", takes_arg=True, prefix=("neural", "metricx"),
                      options=_METRICX_OPTS),
    # judge:PATH (a local causal LM) or judge:http://HOST:PORT/v1#MODEL (an OpenAI-compatible server)
    "judge": _Entry("xleval.metrics._judge:Judge", takes_arg=True, prefix=("neural", "judge"), options=_JUDGE_OPTS),
}


def available_metrics() -> list[str]:
    """Registered metric names; parametrised ones are shown as ``kind:PATH``."""
    return [f"{name}:PATH" if entry.takes_arg else name for name, entry in METRICS.items()]


def _entry(spec: str) -> tuple[str, str, str, _Entry]:
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"metric name must be a non-empty string, got {spec!r}; choose from {available_metrics()}")
    kind, sep, arg = spec.strip().partition(":")
    entry = METRICS.get(kind.lower())
    if entry is None:
        raise InputError(f"unknown metric {spec!r}; choose from {', '.join(available_metrics())}")
    if entry.takes_arg and not arg:
        if kind.lower() == "judge":
            raise InputError("metric 'judge' needs a local model folder or a server: use 'judge:PATH' or "
                             "'judge:http://HOST:PORT/v1#MODEL'")
        raise InputError(f"metric {kind!r} needs a local model path: use '{kind}:PATH'")
    if not entry.takes_arg and sep:
        raise InputError(f"metric {kind!r} takes no ':' argument (got {spec!r})")
    return kind.lower(), sep, arg, entry


def get_metric(spec: str, *, level: str = "corpus", **options: Any) -> Metric:
    """Build a metric from its registry name, e.g. ``get_metric("bleu", tokenize="zh")``.

    ``options`` override the name's defaults (``chrf++`` is ``chrf`` with ``word_order=2``).
    ``level="sentence"`` applies sacrebleu's sentence-level defaults (BLEU with effective order,
    as ``sentence_bleu``) where an option does not say otherwise; ``"corpus"`` (default) gives the
    class defaults (``BLEU()`` = ``corpus_bleu``).
    """
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    _, _, arg, entry = _entry(spec)
    cls: Callable[..., Metric] = _load(entry.target)  # the model-path metrics take it first
    kwargs = {**entry.defaults, **(entry.sentence if level == "sentence" else {}), **options}
    if entry is METRICS["judge"]:  # its local and server settings one by one, as the other metrics take theirs
        from ._judge_options import judge_settings

        kwargs = judge_settings(kwargs)
    return cls(arg, **kwargs) if entry.takes_arg else cls(**kwargs)


def metric_options(spec: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The options of metric ``spec`` among flat, prefixed ``settings`` (None = not given).

    ``metric_options("bleu", {"bleu_lowercase": True, "chrf_lowercase": False})`` ->
    ``{"lowercase": True}``. Keys with another metric's prefix are ignored; a key with this
    metric's prefix that it does not take is an error.
    """
    _, _, _, entry = _entry(spec)
    heads = [p + "_" for p in ((entry.prefix,) if isinstance(entry.prefix, str) else entry.prefix)]
    out: dict[str, Any] = {}
    for key, value in settings.items():
        head = next((h for h in heads if key.startswith(h)), None)
        if value is None or head is None:
            continue
        name = key[len(head):]
        if name not in entry.options:
            raise InputError(f"option {key!r} is not an option of {spec!r}; it takes {', '.join(entry.options)}")
        out[name] = value
    return out


def _load(target: str) -> type[Metric]:
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)
