"""sacrebleu's one-call functions with sacrebleu's defaults: ``corpus_bleu`` (effective order off),
``sentence_bleu`` (on), ``corpus_chrf``/``sentence_chrf``, ``corpus_ter``/``sentence_ter``.

They take the same arguments as ``sacrebleu.compat`` and return a :class:`Score` whose ``score``
is sacrebleu's number and whose ``signature`` is xleval's (sacrebleu's fields, then the xleval
version). ``references`` of the corpus functions are reference *streams* (``[refs_a, refs_b]``),
of the sentence functions the references of that one segment, as in sacrebleu.
"""
from __future__ import annotations

from collections.abc import Sequence

from xleval.exceptions import ArgumentTypeError

from ._sacrebleu_base import Score

__all__ = ["Score", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf",
           "sentence_chrf", "corpus_ter", "sentence_ter"]


def _streams_for_sentence(references: Sequence[str | None]) -> list[list[str | None]]:
    if isinstance(references, str):
        raise ArgumentTypeError("references must be a list of reference strings for this segment, not a string")
    return [[r] for r in references]


def _bleu():
    from ._bleu import BLEU

    return BLEU


def _chrf():
    from ._chrf import CHRF

    return CHRF


def _ter():
    from ._ter import TER

    return TER


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], smooth_method: str = "exp",
                smooth_value: float | None = None, force: bool = False, lowercase: bool = False,
                tokenize: str = "13a", use_effective_order: bool = False) -> Score:
    """sacrebleu's ``corpus_bleu``: effective order off. ``force`` is accepted and ignored (it only
    silences sacrebleu's warning about tokenized input)."""
    return _bleu()(smooth_method=smooth_method, smooth_value=smooth_value, lowercase=lowercase, tokenize=tokenize,
                   effective_order=use_effective_order).corpus_score(hypotheses, references)


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]],
                    smooth_value: float | None = 0.1) -> Score:
    """sacrebleu's ``raw_corpus_bleu``: no tokenization, ``floor`` smoothing (0.1), effective order on."""
    return corpus_bleu(hypotheses, references, smooth_method="floor", smooth_value=smooth_value, force=True,
                       tokenize="none", use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[str | None], smooth_method: str = "exp",
                  smooth_value: float | None = None, lowercase: bool = False, tokenize: str = "13a",
                  use_effective_order: bool = True) -> Score:
    """sacrebleu's ``sentence_bleu``: effective order on."""
    return _bleu()(smooth_method=smooth_method, smooth_value=smooth_value, lowercase=lowercase, tokenize=tokenize,
                   effective_order=use_effective_order).corpus_score([hypothesis], _streams_for_sentence(references))


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], char_order: int = 6,
                word_order: int = 0, beta: int = 2, remove_whitespace: bool = True,
                eps_smoothing: bool = False) -> Score:
    """sacrebleu's ``corpus_chrf``."""
    return _chrf()(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                   eps_smoothing=eps_smoothing).corpus_score(hypotheses, references)


def sentence_chrf(hypothesis: str, references: Sequence[str | None], char_order: int = 6, word_order: int = 0,
                  beta: int = 2, remove_whitespace: bool = True, eps_smoothing: bool = False) -> Score:
    """sacrebleu's ``sentence_chrf``."""
    return _chrf()(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                   eps_smoothing=eps_smoothing).corpus_score([hypothesis], _streams_for_sentence(references))


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str | None]], normalized: bool = False,
               no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> Score:
    """sacrebleu's ``corpus_ter``."""
    return _ter()(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                  case_sensitive=case_sensitive).corpus_score(hypotheses, references)


def sentence_ter(hypothesis: str, references: Sequence[str | None], normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> Score:
    """sacrebleu's ``sentence_ter``."""
    return _ter()(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                  case_sensitive=case_sensitive).corpus_score([hypothesis], _streams_for_sentence(references))
