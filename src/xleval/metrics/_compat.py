"""sacrebleu's one-call functions with sacrebleu's defaults: ``corpus_bleu`` (effective order off),
``sentence_bleu`` (on), ``corpus_chrf``/``sentence_chrf``, ``corpus_ter``/``sentence_ter``.

They take the same arguments as ``sacrebleu.compat`` and return a :class:`Score` whose ``score``
is sacrebleu's number and whose ``signature`` is xleval's (sacrebleu's fields, then the xleval
version). ``references`` of the corpus functions are reference *streams* (``[refs_a, refs_b]``),
of the sentence functions the references of that one segment, as in sacrebleu.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._base.result import Result
from ._base import Metric, count_refs

__all__ = ["Score", "corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf", "corpus_ter", "sentence_ter"]


@dataclass(frozen=True)
class Score(Result):
    """A corpus or sentence score: sacrebleu's ``name`` (``BLEU``, ``chrF2``, ``chrF2++``, ``TER``),
    ``score``, xleval's ``signature``, the summed sufficient statistics, and for BLEU sacrebleu's
    details (``counts``, ``totals``, ``precisions`` in percent, ``bp``, ``sys_len``, ``ref_len``)."""

    name: str
    score: float
    signature: str
    stats: tuple[float, ...]
    counts: tuple[int, ...] | None = None
    totals: tuple[int, ...] | None = None
    precisions: tuple[float, ...] | None = None
    bp: float | None = None
    sys_len: int | None = None
    ref_len: int | None = None

    def __float__(self) -> float:
        return self.score

    def format(self, width: int = 2) -> str:
        """``NAME = 12.34`` (BLEU adds sacrebleu's precisions, BP and lengths)."""
        text = f"{self.name} = {self.score:.{width}f}"
        if self.precisions is not None:
            assert self.sys_len is not None and self.ref_len is not None  # BLEU gives them with its precisions
            ratio = self.sys_len / self.ref_len if self.ref_len else 0
            text += (" " + "/".join(f"{p:.1f}" for p in self.precisions)
                     + f" (BP = {self.bp:.3f} ratio = {ratio:.3f} hyp_len = {self.sys_len:d} ref_len = "
                       f"{self.ref_len:d})")
        return text


def _streams_for_sentence(references: Sequence[str | None]) -> list[list[str | None]]:
    return [[r] for r in references]


def _score(metric_cls, hyps, streams, name: str, **options) -> Score:
    metric: Metric = metric_cls(nrefs=count_refs(streams), **options)
    stats = metric.sentence_stats(hyps, streams).sum(axis=0)
    value = float(metric.score_from_stats(stats))
    extra: dict[str, Any] = {}
    if name == "BLEU":
        from ._bleu import bleu_parts

        order = metric.max_ngram_order  # type: ignore[attr-defined]
        _, prec, bp = bleu_parts(stats[None, :], order, metric.smooth_method, metric.smooth_value,  # type: ignore[attr-defined]
                                 metric.effective_order)  # type: ignore[attr-defined]
        extra = {"counts": tuple(int(x) for x in stats[2 : 2 + order]),
                 "totals": tuple(int(x) for x in stats[2 + order :]),
                 "precisions": tuple(float(x) for x in prec[0]), "bp": float(bp[0]), "sys_len": int(stats[0]),
                 "ref_len": int(stats[1])}
    return Score(name=name, score=value, signature=metric.signature, stats=tuple(stats.tolist()), **extra)


def _bleu():
    from ._bleu import BLEU

    return BLEU


def _chrf():
    from ._chrf import CHRF

    return CHRF


def _ter():
    from ._ter import TER

    return TER


def _chrf_name(beta: int, word_order: int) -> str:
    return f"chrF{beta}" + "+" * word_order


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], smooth_method: str = "exp",
                smooth_value: float | None = None, force: bool = False, lowercase: bool = False,
                tokenize: str = "13a", use_effective_order: bool = False) -> Score:
    """sacrebleu's ``corpus_bleu``: effective order off. ``force`` is accepted and ignored (it only
    silences sacrebleu's warning about tokenized input)."""
    return _score(_bleu(), hypotheses, references, "BLEU", smooth_method=smooth_method, smooth_value=smooth_value,
                  lowercase=lowercase, tokenize=tokenize, effective_order=use_effective_order)


def sentence_bleu(hypothesis: str, references: Sequence[str | None], smooth_method: str = "exp",
                  smooth_value: float | None = None, lowercase: bool = False, tokenize: str = "13a",
                  use_effective_order: bool = True) -> Score:
    """sacrebleu's ``sentence_bleu``: effective order on."""
    return _score(_bleu(), [hypothesis], _streams_for_sentence(references), "BLEU", smooth_method=smooth_method,
                  smooth_value=smooth_value, lowercase=lowercase, tokenize=tokenize,
                  effective_order=use_effective_order)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], char_order: int = 6,
                word_order: int = 0, beta: int = 2, remove_whitespace: bool = True,
                eps_smoothing: bool = False) -> Score:
    """sacrebleu's ``corpus_chrf``."""
    return _score(_chrf(), hypotheses, references, _chrf_name(beta, word_order), char_order=char_order,
                  word_order=word_order, beta=beta, whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)


def sentence_chrf(hypothesis: str, references: Sequence[str | None], char_order: int = 6, word_order: int = 0,
                  beta: int = 2, remove_whitespace: bool = True, eps_smoothing: bool = False) -> Score:
    """sacrebleu's ``sentence_chrf``."""
    return _score(_chrf(), [hypothesis], _streams_for_sentence(references), _chrf_name(beta, word_order),
                  char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], normalized: bool = False,
               no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> Score:
    """sacrebleu's ``corpus_ter``."""
    return _score(_ter(), hypotheses, references, "TER", normalized=normalized, no_punct=no_punct,
                  asian_support=asian_support, case_sensitive=case_sensitive)


def sentence_ter(hypothesis: str, references: Sequence[str | None], normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> Score:
    """sacrebleu's ``sentence_ter``."""
    return _score(_ter(), [hypothesis], _streams_for_sentence(references), "TER", normalized=normalized,
                  no_punct=no_punct, asian_support=asian_support, case_sensitive=case_sensitive)
