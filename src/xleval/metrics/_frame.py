"""Scoring a long table: one column per metric, target-language-aware BLEU tokenizers, corpus
scores per (lp, system) from summed sufficient statistics."""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval.exceptions import InputError

from ._base import Metric
from ._registry import get_metric

__all__ = ["ScoredFrame", "score_frame", "score_inputs", "corpus_table", "reference_columns"]

_REF_EXTRA = re.compile(r"^reference_(\d+)$")


def reference_columns(df: pd.DataFrame) -> list[str]:
    """``reference`` then ``reference_2``, ``reference_3``, ... (sacrebleu's several references)."""
    extra = sorted((int(m.group(1)), c) for c in df.columns if (m := _REF_EXTRA.match(str(c))))
    return (["reference"] if "reference" in df.columns else []) + [c for _, c in extra]


@dataclass(frozen=True)
class ScoredFrame:
    """Per-row scores (``frame``), per-row statistics and the metric used for each row group."""

    frame: pd.DataFrame
    signatures: dict[str, str]
    signatures_by_group: dict[str, dict[str, str]] = field(default_factory=dict)
    stats: dict[str, np.ndarray | None] = field(default_factory=dict, repr=False)
    metrics: dict[str, dict[str, Metric]] = field(default_factory=dict, repr=False)
    group_of_row: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def metadata(self) -> dict[str, Any]:
        """What ``write_table(..., metadata=)`` stores: ``{"signatures": {column: signature}, ...}``."""
        meta: dict[str, Any] = {"signatures": dict(self.signatures)}
        varying = {k: v for k, v in self.signatures_by_group.items() if len(set(v.values())) > 1}
        if varying:
            meta["signatures_by_tgt_lang"] = varying
        return meta


def _texts(df: pd.DataFrame, column: str) -> list[str]:
    values = df[column]
    missing = values.isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0]) + 1
        raise InputError(
            f"column {column!r} row {row}: missing text ({int(missing.sum())} row(s) in all); "
            "fill them (e.g. with an empty string) — rows are never dropped silently"
        )
    return values.astype(str).tolist()


def _tgt_langs(df: pd.DataFrame) -> np.ndarray | None:
    """Normalised target languages (``tgt_lang``, or from ``lp``); every language column is checked,
    an ``lp`` against ``src_lang``/``tgt_lang`` too."""
    present = [c for c in ("lp", "src_lang", "tgt_lang") if c in df.columns]
    if not present:
        return None
    from xleval.io import add_language_columns

    return add_language_columns(df[present])["tgt_lang"].astype(str).to_numpy()


def score_inputs(df: pd.DataFrame) -> tuple[list[str], list[list[str]] | None, list[str] | None, np.ndarray | None]:
    """The checked inputs of scoring a table: hypotheses, reference streams (``reference``,
    ``reference_2``, ...), sources and target languages. The one validation of the in-memory and the
    streamed scoring: a missing column or text, or a bad language code, is an InputError."""
    if "hypothesis" not in df.columns:
        raise InputError(f"no 'hypothesis' column (columns: {list(df.columns)}); map yours with --col hypothesis=NAME")
    refs = [_texts(df, c) for c in reference_columns(df)] or None
    srcs = _texts(df, "source") if "source" in df.columns else None
    return _texts(df, "hypothesis"), refs, srcs, _tgt_langs(df)


def _metrics_by_group(spec: str, options: Mapping[str, Any], tgt: np.ndarray | None, nrefs: int):
    """One metric object per target-language group (BLEU picks its tokenizer by target language)."""
    kind = spec.split(":")[0].lower()
    opts = dict(options)
    if kind in ("bleu", "chrf", "chrf++", "ter"):
        opts.setdefault("nrefs", nrefs)
    if kind == "bleu" and "tokenize" not in opts and tgt is not None:
        groups, inverse = np.unique(tgt, return_inverse=True)
        return {g: get_metric(spec, tokenize=None, tgt_lang=g, **opts) for g in groups}, inverse, groups
    return {"*": get_metric(spec, **opts)}, np.zeros(0 if tgt is None else len(tgt), dtype=np.int64), np.array(["*"])


def score_frame(
    df: pd.DataFrame,
    metrics: Sequence[str],
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> ScoredFrame:
    """Add one float column per metric (named by the metric) to a copy of ``df``.

    ``df`` needs ``hypothesis`` and (for reference-based metrics) ``reference`` (+ ``reference_2``
    ...), optionally ``source``. BLEU without an explicit ``tokenize`` option picks its tokenizer
    per target language (``tgt_lang``, or from ``lp``); each group's signature is recorded.
    """
    options = options or {}
    hyps, refs, srcs, tgt = score_inputs(df)
    out = df.copy()
    result = ScoredFrame(out, {})
    for spec in metrics:
        by_group, inverse, groups = _metrics_by_group(spec, options.get(spec, {}), tgt, len(refs or []) or 1)
        first = next(iter(by_group.values()))
        column = first.name if not spec.lower().startswith(("comet:", "bertscore:", "embed:")) else spec.split(":")[0]
        scores, stats = _score_groups(by_group, inverse, groups, hyps, refs, srcs)
        out[column] = scores
        sigs = {str(g): m.signature for g, m in by_group.items()}
        result.signatures[column] = _combined_signature(sigs)
        result.signatures_by_group[column] = sigs
        result.stats[column] = stats
        result.metrics[column] = {str(g): m for g, m in by_group.items()}
        result.group_of_row[column] = inverse if len(groups) > 1 or groups[0] != "*" else np.zeros(len(df), dtype=np.int64)
    return result


def _score_groups(by_group, inverse, groups, hyps, refs, srcs):
    n = len(hyps)
    metrics = list(by_group.values())
    has_stats = all(m.has_stats for m in metrics)
    scores = np.full(n, np.nan)
    stats = None
    rows_of = [np.arange(n)] if len(metrics) == 1 else [np.flatnonzero(inverse == i) for i in range(len(groups))]
    for metric, rows in zip(metrics, rows_of):
        pick = (lambda xs: [xs[i] for i in rows]) if len(metrics) > 1 else (lambda xs: xs)
        h = pick(hyps)
        r = [pick(s) for s in refs] if refs is not None else None
        s = pick(srcs) if srcs is not None else None
        if has_stats:
            st = metric.sentence_stats(h, r, s)
            if stats is None:
                stats = np.zeros((n, st.shape[1]), dtype=st.dtype)
            stats[rows] = st
            scores[rows] = metric.score_from_stats(st) if len(st) else []
        else:
            scores[rows] = metric.sentence_scores(h, r, s)
    return scores, stats


def _combined_signature(sigs: Mapping[str, str]) -> str:
    values = set(sigs.values())
    if len(values) == 1:
        return values.pop()
    return " ; ".join(f"tgt_lang={g}: {s}" for g, s in sorted(sigs.items()))


def corpus_table(scored: ScoredFrame, by: Sequence[str] = ("lp", "system")) -> pd.DataFrame:
    """Corpus score per group of ``by`` for every metric: summed sufficient statistics where the
    metric has them (exactly sacrebleu's corpus_score), else the mean segment score."""
    df = scored.frame
    keys = [c for c in by if c in df.columns]
    if keys:
        codes, uniques = pd.MultiIndex.from_frame(df[keys].astype(str)).factorize()
        table = pd.DataFrame(list(uniques), columns=keys)
    else:
        codes = np.zeros(len(df), dtype=np.int64)
        table = pd.DataFrame(index=[0])
    table["n"] = np.bincount(codes, minlength=len(table))
    for column, stats in scored.stats.items():
        table[column] = _corpus_column(scored, column, stats, codes, len(table))
    return table


def _corpus_column(scored, column, stats, codes, n_groups) -> np.ndarray:
    if stats is None:  # mean of segment scores
        values = scored.frame[column].to_numpy(dtype=float)
        return np.bincount(codes, weights=values, minlength=n_groups) / np.bincount(codes, minlength=n_groups)
    metrics = list(scored.metrics[column].values())
    group = scored.group_of_row[column]
    summed = np.column_stack([np.bincount(codes, weights=stats[:, j], minlength=n_groups) for j in range(stats.shape[1])])
    # each (lp, system) must lie in one target language, whose metric (tokenizer) scores it
    metric_of = np.zeros(n_groups, dtype=np.int64)
    metric_of[codes] = group
    if len(metrics) > 1 and (metric_of[codes] != group).any():
        raise InputError(
            f"corpus {column} groups mix target languages scored with different tokenizers; "
            "group by lp (or tgt_lang) too, or fix the tokenizer with tokenize="
        )
    out = np.empty(n_groups)
    for i, metric in enumerate(metrics):
        sel = metric_of == i
        if sel.any():
            out[sel] = metric.score_from_stats(summed[sel])
    return out
