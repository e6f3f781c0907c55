"""TER: sacrebleu's tokenizer and edit distance with shifts, the edit distance compiled.

With numba installed (``pip install xleval[fast]``) each (hypothesis, reference) pair runs through
:mod:`._ter_kernels`, a literal replay of sacrebleu's ``lib_ter`` on token ids (same beam, shift
limits, candidate order, tie-breaking and candidate budget, so the same integer edit counts);
without numba, or with ``xleval.metrics.set_backend("numpy")``, sacrebleu's own pure-Python code
runs. Tokenisation (lower-casing, normalisation, punctuation, Asian support) is always sacrebleu's
``TercomTokenizer``, applied as sacrebleu applies it (twice to references).
"""
from __future__ import annotations

import functools
import logging
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ._sacrebleu_base import SacrebleuMetric, _check_nrefs_option, _sacrebleu_version

__all__ = ["TER"]

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _compiled():
    """The compiled TER kernel: from the ahead-of-time build when it exists (no numba import), else
    numba's JIT (the first JIT use builds the AOT module for the next processes, as for BLEU/chrF);
    None without numba (sacrebleu's Python code runs then)."""
    aot = os.environ.get("XLEVAL_AOT", "1") != "0"
    if aot:
        from . import _aot

        compiled = _aot.load()
        if compiled is not None and hasattr(compiled, "edit_rates"):
            return compiled
    from ._fast import jit_kernels

    return jit_kernels("xleval.metrics._ter_kernels", "sacrebleu's TER code runs", aot)


def _kernels():
    from . import _fast

    return None if _fast._state["backend"] == "numpy" else _compiled()


class TER(SacrebleuMetric):
    """Translation Edit Rate (sacrebleu ``TER``); lower is better. Statistics: ``[edits, ref_length]``."""

    name: ClassVar[str] = "ter"
    higher_is_better: ClassVar[bool] = False
    range: ClassVar[tuple[float, float]] = (0.0, float("inf"))
    has_stats: ClassVar[bool] = True
    _SIGNATURE_ABBR: ClassVar[dict[str, str]] = {**SacrebleuMetric._SIGNATURE_ABBR, "tok": "t"}
    fills_missing_refs: ClassVar[bool] = False  # sacrebleu averages the reference lengths: None is dropped there
    # rows per call when a progress bar is drawn: paragraphs take milliseconds each, so the bar moves
    progress_rows: ClassVar[int] = 2_000

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Sequence[Sequence[str | None]] | None = None,
        *,
        nrefs: int | str | None = None,
    ):
        _check_nrefs_option(nrefs)
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)
        self.nrefs = nrefs
        self._set_references(references)

    def _score_details(self, stats: np.ndarray) -> dict[str, Any]:
        return {"name": "TER", "num_edits": int(stats[0]), "ref_length": float(stats[1])}

    def _sacrebleu(self):
        from sacrebleu.metrics import TER as SacreTER

        return SacreTER(
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "nrefs": self.signature_nrefs,
            "case": "mixed" if self.case_sensitive else "lc",
            "tok": self._sacrebleu().tokenizer.signature(),
            "norm": self.normalized,
            "punct": not self.no_punct,
            "asian": self.asian_support,
            "version": _sacrebleu_version(),
        }

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        if not hyps:
            return np.zeros((0, 2))
        kernels = _kernels()
        if kernels is None or any(all(s[i] is None for s in refs) for i in range(len(hyps))):
            # no numba, or a segment without any reference (sacrebleu's code decides what that gives)
            stats = self._sacrebleu()._extract_corpus_statistics(hyps, refs)
            return np.asarray(stats, dtype=np.float64).reshape(len(hyps), 2)
        return _compiled_stats(kernels, self._sacrebleu(), hyps, refs)

    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        return self._score_from_stats(self._sentence_stats(hyps, refs, srcs))

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        edits, ref_len = stats[:, 0].astype(np.float64), stats[:, 1].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ref_len > 0, edits / np.where(ref_len > 0, ref_len, 1), np.where(edits > 0, 1.0, 0.0))
        return 100 * ratio


def _compiled_stats(kernels, sacre, hyps: list[str], refs: list[list[str | None]]) -> np.ndarray:
    """``[edits, mean reference length]`` per segment, as sacrebleu's ``_compute_segment_statistics``:
    each distinct line is tokenised once, each distinct (hypothesis, reference) pair scored once."""
    prep = sacre._preprocess_segment
    vocab: dict[str, int] = {}
    lines: list[list[int]] = []

    def intern(words: list[str]) -> int:
        lines.append([vocab.setdefault(w, len(vocab)) for w in words])
        return len(lines) - 1

    hyp_line: dict[str, int] = {}
    ref_line: dict[str, int] = {}
    hyp_idx = [hyp_line[h] if h in hyp_line else hyp_line.setdefault(h, intern(prep(h).split())) for h in hyps]
    # sacrebleu preprocesses a reference when caching it and again when splitting it into words
    seg_refs = [[ref_line[r] if r in ref_line else ref_line.setdefault(r, intern(prep(prep(r)).split()))
                 for r in col if r is not None] for col in zip(*refs, strict=True)]
    pairs: dict[tuple[int, int], int] = {}
    seg_pairs = [[pairs.setdefault((h, r), len(pairs)) for r in rs] for h, rs in zip(hyp_idx, seg_refs, strict=True)]
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    ids = np.fromiter((w for line in lines for w in line), dtype=np.int64, count=int(off[-1]))
    pair_arr = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
    edits, status = kernels.edit_rates(ids, off, np.ascontiguousarray(pair_arr[:, 0]),
                                       np.ascontiguousarray(pair_arr[:, 1]))
    if status.any():  # pairs on which sacrebleu's code raises: run it, so that it does
        from sacrebleu.metrics.lib_ter import translation_edit_rate

        vocab_list = list(vocab)
        for k in np.flatnonzero(status).tolist():
            h, r = pair_arr[k]
            words = [[vocab_list[w] for w in lines[line]] for line in (h, r)]
            edits[k] = translation_edit_rate(words[0], words[1])[0]
    stats = np.empty((len(hyps), 2), dtype=np.float64)
    for i, (ps, rs) in enumerate(zip(seg_pairs, seg_refs, strict=True)):
        stats[i, 0] = min(edits[p] for p in ps)
        stats[i, 1] = sum(lengths[r] for r in rs) / len(rs)
    return stats
