"""One entry point from files to :class:`LMScores`: a scores table, lm-eval samples or the Apples results.

:func:`read_scores` decides what a file is (``source="auto"``) from its content, not from a list
kept by the command line: a Parquet file with the Apples long-format columns is the Apples
results; a ``samples_*.jsonl`` file, or a JSONL file whose first record has ``doc_id`` and an
lm-eval ``[loglikelihood, n]`` perplexity field, is lm-eval samples; anything else is a scores
table (TSV/CSV/JSONL/Parquet with ``lang`` and ``nll``/``loglik``/``token_logprobs``).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from xleval.exceptions import InputError

from ._ingest import _LM_EVAL_PAIRS, TRANSLATION_SETS, apples_scores, lm_eval_scores, read_apples_results
from ._scores import LMScores

__all__ = ["SOURCES", "APPLES_EVAL_SETS", "detect_source", "read_scores"]

SOURCES = ("auto", "scores", "apples", "lm-eval")
APPLES_EVAL_SETS = ("flores", "pud", "parallel10", "wmt19")  # wmt19 = the five en-de translation sets together
_APPLES_COLUMNS = {"metric", "value", "source_file", "eval_set"}


def detect_source(path: str | os.PathLike) -> str:
    """``apples``, ``lm-eval`` or ``scores``: what the file at ``path`` holds, judged from its content."""
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq") and p.is_file():
        import pyarrow.parquet as pq

        try:
            names = set(pq.read_schema(p).names)
        except (OSError, ValueError):  # not a Parquet file: the table reader reports it properly
            return "scores"
        return "apples" if names >= _APPLES_COLUMNS else "scores"
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        if p.name.startswith("samples_"):  # by name: a FIFO is read once, by the reader, not sniffed first
            return "lm-eval"
        return "lm-eval" if p.is_file() and _first_record_is_lm_eval(p) else "scores"
    return "scores"


def _first_record_is_lm_eval(path: Path) -> bool:
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.strip():
                try:
                    first = json.loads(line)
                except (ValueError, RecursionError):  # not JSON: the table reader says what is wrong
                    return False
                return isinstance(first, dict) and "doc_id" in first and any(k in first for k in _LM_EVAL_PAIRS)
    return False


def read_scores(
    paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    source: str = "auto",
    eval_set: str | None = None,
    lang: str | None = None,
    model: str | None = None,
    unit: str = "nats",
    columns: Mapping[str, str] | None = None,
    char_unit: str = "codepoints",
) -> LMScores:
    """Per-sentence LM scores from one or more files of one kind.

    ``source``: ``auto`` (see :func:`detect_source`), ``scores``, ``apples`` or ``lm-eval``.
    ``eval_set`` chooses the corpus of an Apples results file (``flores``, ``pud``,
    ``parallel10``, or ``wmt19`` for the five en-de translation sets). ``lang``/``model``
    override what lm-eval runs say. ``unit`` declares the log base of a scores table (lm-eval
    logs natural logs); ``columns`` renames a scores table's columns (file column -> canonical name,
    as :func:`xleval.io.parse_column_mapping` returns it).
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not items:
        raise InputError("no input files given")
    if source not in SOURCES:
        raise InputError(f"source {source!r}: use one of {', '.join(SOURCES)}")
    kinds = {str(p): (detect_source(p) if source == "auto" else source) for p in items}
    if len(set(kinds.values())) > 1:
        listing = ", ".join(f"{p} ({k})" for p, k in kinds.items())
        raise InputError(f"the inputs are of different kinds ({listing}); give files of one kind")
    kind = next(iter(kinds.values()))
    where = items[0] if len(items) == 1 else f"{len(items)} files"
    if kind == "apples":
        return _apples(items, eval_set)
    if kind == "lm-eval":
        frames = [lm_eval_scores(p, lang=lang, model=model) for p in items]
        return LMScores.from_frame(pd.concat(frames, ignore_index=True), unit="nats", char_unit=char_unit,
                                   where=str(where))
    from xleval.io import read_table

    # a JSONL record's token_logprobs is an array: read as the JSON text a TSV cell holds (LMScores parses both)
    lists = [file for file, canonical in (columns or {}).items() if canonical == "token_logprobs"] or \
        ["token_logprobs"]
    frames = [read_table(p, columns=dict(columns or {}), required=["lang"], lists=lists) for p in items]
    return LMScores.from_frame(pd.concat(frames, ignore_index=True), unit=unit, char_unit=char_unit, where=str(where))


def _apples(items: list, eval_set: str | None) -> LMScores:
    if len(items) != 1:
        raise InputError("give one Apples results file at a time")
    if eval_set not in APPLES_EVAL_SETS:
        raise InputError(f"an Apples results file holds several corpora; choose one with eval_set= "
                         f"({', '.join(APPLES_EVAL_SETS)}); got {eval_set!r}", argument="eval_set", value=eval_set)
    sets = list(TRANSLATION_SETS) if eval_set == "wmt19" else [eval_set]
    return apples_scores(read_apples_results(items[0], experiments=["main"], eval_sets=sets), where=str(items[0]))
