"""chrF (Popović 2015) and chrF++ (Popović 2017), numerically identical to sacrebleu's ``CHRF``.

Character n-grams (orders 1..char_order) of each line with whitespace removed (unless
``whitespace=True``) and, for chrF++, word n-grams (1..word_order) after sacrebleu's punctuation
splitting. Per order the statistics are ``[hyp n-grams (0 if the reference has none), ref n-grams,
matches]``; with several references the one with the best sentence F-score is kept, as sacrebleu does.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from xleval.exceptions import InputError

from . import _fast
from ._ngrams import build_pool, clipped_matches, in_chunks, ngram_totals
from ._sacrebleu_base import SacrebleuMetric, _check_nrefs_option, _sacrebleu_version
from ._tokenize import chars_to_ragged, words_to_ragged

__all__ = ["CHRF"]

_PUNCTS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _remove_punctuation(sent: str) -> list[str]:
    """sacrebleu's chrF++ word splitter: one leading or trailing punctuation mark becomes a token."""
    out: list[str] = []
    for w in sent.split():
        if len(w) == 1:
            out.append(w)
        elif w[-1] in _PUNCTS:
            out += [w[:-1], w[-1]]
        elif w[0] in _PUNCTS:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


class CHRF(SacrebleuMetric):
    """sacrebleu-exact chrF / chrF++ (``word_order=2``).

    Parameters mirror ``sacrebleu.metrics.CHRF``: ``char_order`` (6), ``word_order`` (0; 2 for
    chrF++), ``beta`` (2), ``lowercase``, ``whitespace`` (keep spaces in character n-grams),
    ``eps_smoothing`` (chrF++.py-style smoothing instead of effective order), ``references``
    (sacrebleu's cache), and ``nrefs`` (see :class:`~xleval.metrics.BLEU`).
    """

    range: ClassVar[tuple[float, float]] = (0.0, 100.0)
    has_stats: ClassVar[bool] = True

    def __init__(
        self,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        references: Sequence[Sequence[str | None]] | None = None,
        *,
        nrefs: int | str | None = None,
    ):
        for label, value, low in (("char_order", char_order, 0), ("word_order", word_order, 0), ("beta", beta, 0)):
            if not isinstance(value, int) or value < low:
                raise InputError(f"{label} must be an integer >= {low}, got {value!r}")
        if char_order == 0 and word_order == 0:  # sacrebleu accepts it, then fails on the first sentence
            raise InputError("char_order=0 with word_order=0 counts no n-grams (sacrebleu fails on the first "
                             "sentence): give char_order= of 1 or more (chrF: 6), or a word order for a word-only "
                             "score, e.g. word_order=2", argument="char_order", value=char_order)
        _check_nrefs_option(nrefs)
        self.char_order = char_order
        self.word_order = word_order
        self.beta = beta
        self.lowercase = bool(lowercase)
        self.whitespace = bool(whitespace)
        self.eps_smoothing = bool(eps_smoothing)
        self.nrefs = nrefs
        self._set_references(references)

    def _score_details(self, stats: np.ndarray) -> dict[str, Any]:
        return {"name": f"chrF{self.beta}" + "+" * self.word_order, "char_order": self.char_order,
                "word_order": self.word_order, "beta": self.beta}

    @property
    def name(self) -> str:  # type: ignore[override]
        return "chrf" + "+" * self.word_order

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "nrefs": self.signature_nrefs,
            "case": "lc" if self.lowercase else "mixed",
            "eff": not self.eps_smoothing,
            "nc": self.char_order,
            "nw": self.word_order,
            "space": self.whitespace,
            "version": _sacrebleu_version(),
        }

    # ------------------------------------------------------------------ statistics
    def _prep(self, lines: list[str]) -> list[str]:
        return [s.lower() for s in lines] if self.lowercase else lines

    def _chars(self, lines: list[str]):
        lines = self._prep(lines)
        return chars_to_ragged(lines if self.whitespace else ["".join(s.split()) for s in lines])

    def _words(self, lines: list[str]):
        return words_to_ragged([_remove_punctuation(s) for s in self._prep(lines)])

    def _per_ref_stats(self, hyps, refs) -> np.ndarray:
        """Statistics against every reference stream: shape ``(k, n, 3 * order)``."""
        parts = [self._part_stats(hyps, refs, self._chars, self.char_order)] if self.char_order > 0 else []
        if self.word_order > 0:
            parts.append(self._part_stats(hyps, refs, self._words, self.word_order))
        return np.concatenate(parts, axis=2)

    @staticmethod
    def _part_stats(hyps, refs, to_ragged, order: int) -> np.ndarray:
        n = len(hyps)
        pool, ref_lines = build_pool(hyps, refs, to_ragged)
        matches = clipped_matches(pool, n, ref_lines, order, combine="each")  # (k, n, order)
        hyp_tot = ngram_totals(pool.lengths[:n], order)
        out = np.empty((len(refs), n, 3 * order), dtype=np.int64)
        for k, lines in enumerate(ref_lines):
            ref_tot = ngram_totals(pool.lengths[lines], order)
            out[k, :, 0::3] = np.where(ref_tot > 0, hyp_tot, 0)  # sacrebleu: no hits without ref n-grams
            out[k, :, 1::3] = ref_tot
            out[k, :, 2::3] = matches[k]
        return out

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        width = 3 * (self.char_order + self.word_order)
        if _fast.enabled():
            return _fast.in_chunks(self._fast_chunk_stats, hyps, refs, width)
        return in_chunks(self._chunk_stats, hyps, refs, width)

    def _chunk_stats(self, hyps: list[str], refs: list[list[str]]) -> np.ndarray:
        return self._best_ref(self._per_ref_stats(hyps, refs))

    def _fast_chunk_stats(self, hyps: list[str], refs: list[list[str]]) -> np.ndarray:
        """The compiled path: same statistics as :meth:`_chunk_stats`."""
        return self._pool_stats(_fast.TextPool.of(hyps, refs))

    def _stats_key(self) -> tuple:
        """Metrics with equal keys give equal statistics (score_frame computes them once for all their rows)."""
        return ("chrf", self.char_order, self.word_order, self.lowercase, self.whitespace)

    def _pool_stats(self, pool: _fast.TextPool) -> np.ndarray:
        """Statistics of the pool's segments (compiled kernels; references without None)."""
        if self.lowercase:
            pool = pool.mapped(str.lower)
        parts = [_fast_part(_fast.chars(pool, self.whitespace), pool.hyp, pool.refs, self.char_order)] \
            if self.char_order > 0 else []
        if self.word_order > 0:
            units = _fast.ragged_csr(words_to_ragged([_remove_punctuation(s) for s in pool.lines]))
            parts.append(_fast_part(units, pool.hyp, pool.refs, self.word_order))
        return self._best_ref(np.concatenate(parts, axis=2))

    def _best_ref(self, stats: np.ndarray) -> np.ndarray:
        """``(k, n, width)`` statistics against each reference -> those of the best reference ``(n, width)``."""
        if len(stats) == 1:
            return stats[0]
        f = np.stack([self._score_from_stats(s) for s in stats])  # (k, n)
        best = np.argmax(f, axis=0)  # first best reference, like sacrebleu's strict '>'
        return stats[best, np.arange(stats.shape[1])]

    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        return self._score_from_stats(self._sentence_stats(hyps, refs, srcs))

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        order = self.char_order + self.word_order
        if stats.shape[1] != 3 * order:
            raise InputError(f"chrF stats need {3 * order} columns (got {stats.shape[1]})")
        return chrf_from_stats(stats, order, self.beta, self.eps_smoothing)


def _fast_part(units, hyp_idx: np.ndarray, ref_idx: np.ndarray, order: int) -> np.ndarray:
    """Compiled counterpart of :meth:`CHRF._part_stats`: ``(k, n, 3 * order)``."""
    ids, off = units
    lengths = np.diff(off)
    hyp_tot = ngram_totals(lengths[hyp_idx], order)
    out = np.empty((len(ref_idx), len(hyp_idx), 3 * order), dtype=np.int64)
    for k, lines in enumerate(ref_idx):
        ref_tot = ngram_totals(lengths[lines], order)
        out[k, :, 0::3] = np.where(ref_tot > 0, hyp_tot, 0)  # sacrebleu: no hits without ref n-grams
        out[k, :, 1::3] = ref_tot
        out[k, :, 2::3] = _fast.matches(ids, off, hyp_idx, lines[None, :], order)
    return out


def chrf_from_stats(stats: np.ndarray, order: int, beta: int, eps_smoothing: bool) -> np.ndarray:
    """Vectorised ``sacrebleu.CHRF._compute_f_score`` over rows of ``[hyp, ref, match] * order``."""
    stats = np.asarray(stats, dtype=np.float64)
    rows = len(stats)
    eps, factor = 1e-16, beta**2
    score, avg_prec, avg_rec = np.zeros(rows), np.zeros(rows), np.zeros(rows)
    effective = np.zeros(rows, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(order):
            n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
            prec = np.where(n_hyp > 0, n_match / n_hyp, eps)
            rec = np.where(n_ref > 0, n_match / n_ref, eps)
            denom = factor * prec + rec
            score += np.where(denom > 0, (1 + factor) * prec * rec / denom, eps)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec += np.where(both, prec, 0.0)
            avg_rec += np.where(both, rec, 0.0)
            effective += both
        if eps_smoothing:
            return 100 * score / order
        avg_prec = np.where(effective > 0, avg_prec / effective, 0.0)
        avg_rec = np.where(effective > 0, avg_rec / effective, 0.0)
        f = (1 + factor) * avg_prec * avg_rec
        f = f / ((factor * avg_prec) + avg_rec)
    return np.where(avg_prec + avg_rec != 0, 100 * f, 0.0)
