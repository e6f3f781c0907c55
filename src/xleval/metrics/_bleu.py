"""BLEU (Papineni et al., 2002), numerically identical to sacrebleu's, with vectorised kernels.

Modified n-gram precision with clipping (by the maximum count over the references), brevity
penalty ``BP = exp(1 - r/c)`` with ``r`` the reference length closest to ``c`` (ties: the shorter),
geometric mean over orders 1..N. Smoothing and effective order follow sacrebleu's
``BLEU.compute_bleu`` operation by operation, and the logarithms and exponentials are Python's
``math.log``/``math.exp`` (numpy's SIMD versions differ in the last bits on AVX-512 machines), so
sentence and corpus scores are bitwise sacrebleu's.

Defaults are sacrebleu's ``BLEU()``: effective order off (``corpus_bleu``); sentence-level
scoring in the style of ``sentence_bleu`` turns it on (``get_metric("bleu", level="sentence")``).
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from xleval.exceptions import InputError, MissingDependencyError, XlevalWarning

from . import _fast
from ._ngrams import build_pool, clipped_matches, in_chunks, ngram_totals
from ._sacrebleu_base import SacrebleuMetric, Score, _check_nrefs_option, _sacrebleu_version
from ._spm import SPM_MODELS, SpmTokenizer, load_spm_tokenizer
from ._tokenize import TOKENIZERS, load_tokenizer, tokenize_lines, words_to_ragged

__all__ = ["BLEU", "default_tokenizer"]

SMOOTH_DEFAULTS: dict[str, float | None] = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None, "epsilon": 1e-16}
_MY_LOG_ZERO = -9999999999.0  # sacrebleu.utils.my_log(0)

# target language -> tokenizer (sacrebleu's choice when trg_lang is known), and the fallback
# used when that tokenizer's extra is not installed
_LANG_TOKENIZER = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
_FALLBACK = {"ja-mecab": "char", "ko-mecab": "13a"}


def default_tokenizer(tgt_lang: str | None) -> str:
    """The tokenizer sacrebleu would pick for a target language (``13a`` when unknown)."""
    if not tgt_lang:
        return "13a"
    base = str(tgt_lang).replace("_", "-").split("-")[0].lower()
    return _LANG_TOKENIZER.get(base, "13a")


class BLEU(SacrebleuMetric):
    """sacrebleu-exact BLEU.

    Parameters
    ----------
    tokenize : str or None
        ``13a``, ``intl``, ``char``, ``zh``, ``none``, ``ja-mecab``, ``ko-mecab``; spBLEU's SentencePiece
        tokenizers ``flores101``, ``flores200``, ``spBLEU-1K`` (and ``spm``, flores101's old name) on a local
        model file (see ``spm_model``).
        ``None`` (default, as sacrebleu's) picks by ``tgt_lang`` (zh -> zh, ja -> ja-mecab, ko -> ko-mecab, else 13a); a
        missing MeCab extra then falls back (ja -> char, ko -> 13a) with an ``XlevalWarning``.
    lowercase : bool
    smooth_method : {"exp", "floor", "add-k", "none", "epsilon"}
        sacrebleu's methods; ``epsilon`` floors each precision (0-1 scale) at ``smooth_value``
        (default 1e-16), as the plain textbook BLEU of :meth:`BLEU.simple` does.
    smooth_value : float or None
        Parameter of ``floor``/``add-k``/``epsilon``; None = the method's default.
    max_ngram_order : int
    effective_order : bool
        Average only over orders that have n-grams. Off by default, as in sacrebleu's ``BLEU()``
        and ``corpus_bleu``; sacrebleu's ``sentence_bleu`` (and ``sacrebleu -sl``) turn it on.
        It changes corpus BLEU only when some order has no n-gram at all (tiny corpora).
    trg_lang : str
        sacrebleu's name of ``tgt_lang``.
    references : reference streams or None
        sacrebleu's cached references: used by :meth:`corpus_score` when it gets none.
    nrefs : int, "var" or None
        Number of references per segment (recorded in the signature; checked when scoring);
        ``"var"`` when segments have different numbers (``None`` entries in the reference streams).
        None (default): any number, as sacrebleu's; the signature of the object then reads
        ``nrefs:1`` and the :class:`Score` returned by ``corpus_score`` has the number scored.
    tgt_lang : str or None
        Target language, used only when ``tokenize`` is None.
    force : bool
        Accepted for sacrebleu's signature and ignored (it only silences a warning).
    spm_model : path or None
        The SentencePiece model of an spBLEU ``tokenize`` (the file, or a folder holding it under sacrebleu's
        file name: ``flores200sacrebleuspm``, ``sacrebleu_tokenizer_spm.model`` for flores101/spm,
        ``spbleu-1k_tokenizer_spm.model``). None: that file in the folder named by ``$XLEVAL_SPM_MODELS``, else
        in sacrebleu's ``$SACREBLEU/models``. Never downloaded. The signature keeps sacrebleu's
        ``tok:flores200``; the file's sha256 (12 hex digits) goes into its ``xleval:`` field.
    """

    name: ClassVar[str] = "bleu"
    range: ClassVar[tuple[float, float]] = (0.0, 100.0)
    has_stats: ClassVar[bool] = True

    def __init__(
        self,
        lowercase: bool = False,
        force: bool = False,
        tokenize: str | None = None,
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        max_ngram_order: int = 4,
        effective_order: bool = False,
        trg_lang: str = "",
        references: Sequence[Sequence[str | None]] | None = None,
        *,
        nrefs: int | str | None = None,
        tgt_lang: str | None = None,
        spm_model: str | os.PathLike | None = None,
    ):
        # positional order and names are sacrebleu's BLEU(); force only silences sacrebleu's warning
        # about tokenized input, so it is accepted and ignored
        if smooth_method not in SMOOTH_DEFAULTS:
            raise InputError(f"smooth_method={smooth_method!r} is unknown; choose from {', '.join(SMOOTH_DEFAULTS)}")
        if not isinstance(max_ngram_order, int) or max_ngram_order < 1:
            raise InputError(f"max_ngram_order must be a positive integer, got {max_ngram_order!r}")
        _check_nrefs_option(nrefs)
        if trg_lang and tgt_lang and trg_lang != tgt_lang:
            raise InputError(f"trg_lang={trg_lang!r} and tgt_lang={tgt_lang!r} differ; give one of them")
        self.tokenize = tokenize
        self.lowercase = bool(lowercase)
        self.force = bool(force)
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = max_ngram_order
        self.effective_order = bool(effective_order)
        self.nrefs = nrefs
        self.tgt_lang = tgt_lang or trg_lang or None
        self.spm_model = spm_model
        self.tokenizer = self._resolve_tokenizer(tokenize, self.tgt_lang)
        self._spm_sha256: str | None = None
        if self.tokenizer in SPM_MODELS:
            spm = load_spm_tokenizer(self.tokenizer, spm_model)
            self._spm_path, self._spm_sha256 = spm.path, spm.sha256
            self._tok_signature = spm.signature()
        elif spm_model is not None:
            raise InputError(f"spm_model= is the model of a SentencePiece tokenizer ({', '.join(SPM_MODELS)}); "
                             f"tokenize={self.tokenizer!r} does not use it", argument="spm_model", value=spm_model)
        else:
            self._tok_signature = load_tokenizer(self.tokenizer).signature()
        self._set_references(references)

    @classmethod
    def simple(cls, nrefs: int = 1) -> BLEU:
        """The plain textbook BLEU: lowercase, whitespace split, no smoothing but a 1e-16 precision floor.

        Differences from a literal transcription of the formula: scores are on sacrebleu's 0-100 scale,
        and a tie for the closest reference length takes the shorter reference (sacrebleu's rule; a
        literal transcription often takes the first listed).
        """
        return cls(tokenize="none", lowercase=True, smooth_method="epsilon", effective_order=False, nrefs=nrefs)

    def _score_details(self, stats: np.ndarray) -> dict[str, Any]:
        order = self.max_ngram_order
        _, prec, bp = bleu_parts(stats[None, :], order, self.smooth_method, self.smooth_value, self.effective_order)
        counts, totals = stats[2 : 2 + order].astype(np.float64), stats[2 + order :].astype(np.float64)
        if self.smooth_method == "add-k" and counts.any():
            # sacrebleu's compute_bleu adds k to the lists it reports (orders 2 and up), so its
            # BLEUScore.counts/totals include the smoothing; reported the same way here
            k = 1.0 if self.smooth_value is None else self.smooth_value  # SMOOTH_DEFAULTS["add-k"]
            counts[1:] += k
            totals[1:] += k
        return {"name": "BLEU", "counts": tuple(_number(x) for x in counts),
                "totals": tuple(_number(x) for x in totals),
                "precisions": tuple(float(x) for x in prec[0]), "bp": float(bp[0]), "sys_len": int(stats[0]),
                "ref_len": int(stats[1])}

    @staticmethod
    def compute_bleu(correct: Sequence[int], total: Sequence[int], sys_len: int, ref_len: int,
                     smooth_method: str = "none", smooth_value: float | None = None,
                     effective_order: bool = False, max_ngram_order: int = 4) -> Score:
        """sacrebleu's ``BLEU.compute_bleu``: the score of given sufficient statistics (note its default
        ``smooth_method="none"``, unlike the constructor's ``exp``)."""
        if smooth_method not in SMOOTH_DEFAULTS:
            raise InputError(f"smooth_method={smooth_method!r} is unknown; choose from {', '.join(SMOOTH_DEFAULTS)}")
        if len(correct) != max_ngram_order or len(total) != max_ngram_order:
            raise InputError(f"correct and total need {max_ngram_order} counts each (max_ngram_order), "
                             f"got {len(correct)} and {len(total)}")
        metric = BLEU(smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order,
                      max_ngram_order=max_ngram_order)
        stats = np.array([sys_len, ref_len, *correct, *total], dtype=np.float64)
        return metric._make_score(stats, 1)

    @staticmethod
    def _resolve_tokenizer(tokenize: str | None, tgt_lang: str | None) -> str:
        if tokenize is not None:
            if tokenize not in TOKENIZERS and tokenize not in SPM_MODELS:
                raise InputError(f"tokenize={tokenize!r} is unknown; choose from "
                                 f"{', '.join([*TOKENIZERS, *SPM_MODELS])}")
            return tokenize
        chosen = default_tokenizer(tgt_lang)
        try:
            load_tokenizer(chosen)
        except MissingDependencyError as err:
            fallback = _FALLBACK[chosen]
            warnings.warn(
                f"tokenizer {chosen!r} (for target language {tgt_lang!r}) is not available ({err}); "
                f"using {fallback!r} instead, as recorded in the signature",
                XlevalWarning,
                stacklevel=3,
            )
            return fallback
        return chosen

    # ------------------------------------------------------------------ signature
    def _smooth_str(self) -> str:
        default = SMOOTH_DEFAULTS[self.smooth_method]
        if default is None:
            return self.smooth_method
        value = default if self.smooth_value is None else self.smooth_value
        # sacrebleu prints two decimals; epsilon's tiny values need more
        text = f"{value:.2f}" if self.smooth_method != "epsilon" else f"{value:g}"
        return f"{self.smooth_method}[{text}]"

    def _signature_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "nrefs": self.signature_nrefs,
            "case": "lc" if self.lowercase else "mixed",
            "eff": self.effective_order,
            "tok": self._tok_signature,
            "smooth": self._smooth_str(),
            # like sacrebleu, no field for max_ngram_order (its signature has none)
            "version": _sacrebleu_version(),
        }
        if self._spm_sha256 is not None:  # which model file tokenised: provenance, inside the xleval: field
            fields["xleval"] = f"spm-sha256:{self._spm_sha256[:12]}"
        return fields

    # ------------------------------------------------------------------ statistics
    def _tokenizer(self) -> str | SpmTokenizer:
        """The tokenizer name, or for spBLEU the SentencePiece tokenizer on the model file (loaded once per
        process: the object holds only the path, so it pickles)."""
        if self._spm_sha256 is None:
            return self.tokenizer
        spm = load_spm_tokenizer(self.tokenizer, self._spm_path)
        if spm.sha256 != self._spm_sha256:  # the signature names the file this object was built with
            raise InputError(f"the SentencePiece model {str(self._spm_path)!r} changed since this BLEU was built; "
                             "build the metric again", argument="spm_model", value=str(self._spm_path))
        return spm

    def _to_ragged(self, lines: list[str]):
        tokenized = tokenize_lines(lines, self._tokenizer(), self.lowercase)
        return words_to_ragged([s.split() for s in tokenized])

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        if _fast.enabled():
            return _fast.in_chunks(self._fast_chunk_stats, hyps, refs, 2 + 2 * self.max_ngram_order)
        return in_chunks(self._chunk_stats, hyps, refs, 2 + 2 * self.max_ngram_order)

    def _fast_chunk_stats(self, hyps: list[str], refs: list[list[str]]) -> np.ndarray:
        """The compiled path: same statistics as :meth:`_chunk_stats`."""
        return self._pool_stats(_fast.TextPool.of(hyps, refs))

    def _stats_key(self) -> tuple:
        """Metrics with equal keys give equal statistics (score_frame computes them once for all their rows)."""
        return ("bleu", self.tokenizer, self.lowercase, self.max_ngram_order, self._spm_sha256)

    def _pool_stats(self, pool: _fast.TextPool) -> np.ndarray:
        """Statistics of the pool's segments (compiled kernels; references without None)."""
        if self.lowercase:
            pool = pool.mapped(str.lower)
        ids, off = _fast.words(pool, self._tokenizer())
        lengths = np.diff(off)
        hyp_len = lengths[pool.hyp]
        ref_len = _closest_ref_len(hyp_len, list(lengths[pool.refs]))
        correct = _fast.matches(ids, off, pool.hyp, pool.refs, self.max_ngram_order)
        total = ngram_totals(hyp_len, self.max_ngram_order)
        return np.column_stack((hyp_len, ref_len, correct, total)).astype(np.int64)

    def _chunk_stats(self, hyps: list[str], refs: list[list[str]]) -> np.ndarray:
        n, order = len(hyps), self.max_ngram_order
        pool, ref_lines = build_pool(hyps, refs, self._to_ragged)
        hyp_len = pool.lengths[:n]
        ref_len = _closest_ref_len(hyp_len, [pool.lengths[r] for r in ref_lines])
        correct = clipped_matches(pool, n, ref_lines, order, combine="max")
        total = ngram_totals(hyp_len, order)
        return np.column_stack((hyp_len, ref_len, correct, total)).astype(np.int64)

    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        return self._score_from_stats(self._sentence_stats(hyps, refs, srcs))

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        order = self.max_ngram_order
        if stats.shape[1] != 2 + 2 * order:
            raise InputError(f"BLEU stats need {2 + 2 * order} columns (got {stats.shape[1]})")
        return bleu_from_stats(stats, order, self.smooth_method, self.smooth_value, self.effective_order)


def _number(x: float) -> float:
    """An int when integral (sacrebleu's counts are ints unless a fractional add-k value was added)."""
    return int(x) if float(x).is_integer() else float(x)


def _closest_ref_len(hyp_len: np.ndarray, ref_lens: list[np.ndarray]) -> np.ndarray:
    """sacrebleu's closest reference length: smallest |hyp - ref|, ties broken by the shorter ref."""
    lens = np.stack(ref_lens)
    diff = np.abs(lens - hyp_len[None, :])
    best = np.lexsort((lens, diff), axis=0)[0] if len(ref_lens) > 1 else np.zeros(len(hyp_len), dtype=np.int64)
    return lens[best, np.arange(len(hyp_len))]


def exact_exp(x: np.ndarray) -> np.ndarray:
    """``math.exp`` elementwise: the C library's exp, which sacrebleu uses (numpy's AVX-512 exp can
    differ in the last bit)."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    return np.fromiter(map(math.exp, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def exact_log(x: np.ndarray) -> np.ndarray:
    """``math.log`` elementwise for positive values (see :func:`exact_exp`)."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    return np.fromiter(map(math.log, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def _brevity_penalty(sys_len: np.ndarray, ref_len: np.ndarray) -> np.ndarray:
    bp = np.ones(len(sys_len))
    short = (sys_len < ref_len) & (sys_len > 0)
    bp[short] = exact_exp(1 - ref_len[short] / sys_len[short])
    bp[(sys_len < ref_len) & (sys_len == 0)] = 0.0
    return bp


def bleu_from_stats(
    stats: np.ndarray, order: int, method: str, value: float | None, effective: bool
) -> np.ndarray:
    """Vectorised ``sacrebleu.BLEU.compute_bleu`` over rows of ``[sys_len, ref_len, correct.., total..]``."""
    return bleu_parts(stats, order, method, value, effective)[0]


def bleu_parts(
    stats: np.ndarray, order: int, method: str, value: float | None, effective: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(scores, precisions (rows, order) in percent, brevity penalties)`` as sacrebleu's
    ``compute_bleu`` reports them (precisions are 0 for rows without any match)."""
    stats = np.asarray(stats, dtype=np.float64)
    value = SMOOTH_DEFAULTS[method] if value is None else value
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct, total = stats[:, 2 : 2 + order].copy(), stats[:, 2 + order :].copy()
    bp = _brevity_penalty(sys_len, ref_len)
    if method == "epsilon":
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = 100.0 * np.where(total > 0, correct / np.where(total > 0, total, 1), 0.0)
        return _epsilon_bleu(bp, correct, total, value, effective), prec, bp
    rows = len(stats)
    alive = np.ones(rows, dtype=bool)
    eff = np.full(rows, order)
    smooth = np.ones(rows)
    prec = np.zeros((rows, order))
    for n in range(order):
        if method == "add-k" and n > 0:
            correct[:, n] += value
            total[:, n] += value
        alive &= total[:, n] != 0
        if effective:
            eff = np.where(alive, n + 1, eff)
        safe_total = np.where(total[:, n] != 0, total[:, n], 1.0)
        zero = alive & (correct[:, n] == 0)
        if method == "exp":
            smooth = np.where(zero, smooth * 2, smooth)
            prec[:, n] = np.where(zero, 100.0 / (smooth * safe_total), 0.0)
        elif method == "floor":
            assert value is not None  # floor has a default value
            prec[:, n] = np.where(zero, 100.0 * value / safe_total, 0.0)
        hit = alive & (correct[:, n] != 0)
        prec[:, n] = np.where(hit, 100.0 * correct[:, n] / safe_total, prec[:, n])
    logs = np.full(prec.shape, _MY_LOG_ZERO)
    positive = prec > 0
    logs[positive] = exact_log(prec[positive])
    acc = np.zeros(rows)
    for n in range(order):  # left-to-right like Python's sum()
        acc = acc + np.where(n < eff, logs[:, n], 0.0)
    # sacrebleu returns 0 early when nothing matched at all (#141)
    matched = stats[:, 2 : 2 + order].any(axis=1)
    score = np.zeros(rows)
    score[matched] = bp[matched] * exact_exp(acc[matched] / eff[matched])
    prec[~matched] = 0.0
    return score, prec, bp


def _epsilon_bleu(bp, correct, total, value, effective) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where((total > 0) & (correct > 0), correct / np.where(total > 0, total, 1), value)
    eff = np.maximum((total > 0).sum(axis=1), 1) if effective else np.full(len(bp), total.shape[1])
    mask = np.arange(total.shape[1])[None, :] < eff[:, None]
    return 100.0 * bp * exact_exp((exact_log(p) * mask).sum(axis=1) / eff)


