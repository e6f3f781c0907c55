"""The ``Metric`` base class every xleval metric derives from.

A metric is an immutable object: every option that can change the number is a constructor
parameter and appears in :attr:`Metric.signature`; scoring never mutates the object. Metrics that
have summable sufficient statistics (BLEU, chrF, TER) expose them through :meth:`sentence_stats`
so that corpus, per-group and bootstrap scores are exact sums that never re-tokenise.
"""
from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from xleval.exceptions import InputError

__all__ = ["Metric", "References"]

# One reference per segment (a sequence of strings), or sacrebleu-style reference *streams*:
# a sequence of k sequences, each holding one reference per segment.
References = Sequence[str] | Sequence[Sequence[str]]


def _xleval_version() -> str:
    from xleval import __version__

    return __version__


class Metric(abc.ABC):
    """Base class of all metrics.

    Subclasses set the class attributes and implement :meth:`_signature_fields` and
    :meth:`_sentence_scores`; metrics with summable statistics also implement
    :meth:`_sentence_stats` and :meth:`_score_from_stats` (and set ``has_stats = True``).

    Attributes
    ----------
    name : str
        Short metric name, used as the score column name (``bleu``, ``chrf``, ``comet``).
    higher_is_better : bool
    range : tuple[float, float]
        The interval scores lie in (``(-inf, inf)`` when unbounded).
    has_stats : bool
        Whether :meth:`sentence_stats` / :meth:`score_from_stats` are available.
    needs_refs, needs_srcs : bool
        Which inputs :meth:`sentence_scores` requires.
    """

    name: ClassVar[str] = "metric"
    higher_is_better: ClassVar[bool] = True
    range: ClassVar[tuple[float, float]] = (0.0, 100.0)
    has_stats: ClassVar[bool] = False
    needs_refs: ClassVar[bool] = True
    needs_srcs: ClassVar[bool] = False

    # ------------------------------------------------------------------ signature
    @abc.abstractmethod
    def _signature_fields(self) -> dict[str, Any]:
        """Ordered ``key -> value`` pairs of every option that changes the number."""

    @property
    def signature(self) -> str:
        """``key:value|...`` string of every option that changes the number, plus the xleval version.

        For BLEU/chrF/TER the fields and their order are exactly sacrebleu's
        (``nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0``); ``xleval:<version>``
        is appended.
        """
        parts = [f"{key}:{_format_value(value)}" for key, value in self._signature_fields().items()]
        parts.append(f"xleval:{_xleval_version()}")
        return "|".join(parts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.signature})"

    # ------------------------------------------------------------------ public scoring API
    def sentence_scores(
        self, hyps: Sequence[str], refs: References | None = None, srcs: Sequence[str] | None = None
    ) -> np.ndarray:
        """One float per hypothesis (shape ``(n,)``, dtype float64)."""
        hyps_, refs_, srcs_ = self._check_inputs(hyps, refs, srcs)
        return np.asarray(self._sentence_scores(hyps_, refs_, srcs_), dtype=np.float64)

    def sentence_stats(
        self, hyps: Sequence[str], refs: References | None = None, srcs: Sequence[str] | None = None
    ) -> np.ndarray:
        """Per-segment sufficient statistics, shape ``(n, n_stats)``; rows sum to corpus statistics."""
        self._require_stats()
        hyps_, refs_, srcs_ = self._check_inputs(hyps, refs, srcs)
        return self._sentence_stats(hyps_, refs_, srcs_)

    def score_from_stats(self, stats: np.ndarray) -> float | np.ndarray:
        """Score of summed statistics: a float for shape ``(n_stats,)``, an array for ``(g, n_stats)``."""
        self._require_stats()
        arr = np.asarray(stats)
        if arr.ndim == 1:
            return float(self._score_from_stats(arr[None, :])[0])
        if arr.ndim != 2:
            raise InputError(f"stats must be 1-D or 2-D (got shape {arr.shape}); pass summed sentence_stats rows")
        return np.asarray(self._score_from_stats(arr), dtype=np.float64)

    def corpus_score(
        self, hyps: Sequence[str], refs: References | None = None, srcs: Sequence[str] | None = None
    ) -> float:
        """Corpus score: from summed statistics when the metric has them, else the mean segment score."""
        if self.has_stats:
            return float(self.score_from_stats(self.sentence_stats(hyps, refs, srcs).sum(axis=0)))
        return float(np.mean(self.sentence_scores(hyps, refs, srcs)))

    # ------------------------------------------------------------------ subclass hooks
    @abc.abstractmethod
    def _sentence_scores(
        self, hyps: list[str], refs: list[list[str]] | None, srcs: list[str] | None
    ) -> np.ndarray:
        """Scores for validated inputs: ``refs`` is a list of reference *streams* (each of length n)."""

    def _sentence_stats(
        self, hyps: list[str], refs: list[list[str]] | None, srcs: list[str] | None
    ) -> np.ndarray:
        raise NotImplementedError

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """Scores for a 2-D array of summed statistics (one row per group)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ validation
    def _require_stats(self) -> None:
        if not self.has_stats:
            raise InputError(
                f"metric {self.name!r} has no summable sufficient statistics; "
                "use sentence_scores() (its corpus score is the mean segment score)"
            )

    def _check_inputs(
        self, hyps: Sequence[str], refs: References | None, srcs: Sequence[str] | None
    ) -> tuple[list[str], list[list[str]] | None, list[str] | None]:
        hyps_ = _as_str_list(hyps, "hyps")
        refs_ = _as_streams(refs, len(hyps_)) if refs is not None else None
        srcs_ = _as_str_list(srcs, "srcs", len(hyps_)) if srcs is not None else None
        if self.needs_refs and refs_ is None:
            raise InputError(f"metric {self.name!r} needs references: pass refs=")
        if self.needs_srcs and srcs_ is None:
            raise InputError(f"metric {self.name!r} needs sources: pass srcs=")
        return hyps_, refs_, srcs_


def _format_value(value: Any) -> str:
    # sacrebleu writes booleans as yes/no in signatures
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _as_str_list(values: Any, what: str, n: int | None = None) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence | np.ndarray) and not hasattr(values, "__array__"):
        raise InputError(f"{what} must be a sequence of strings (one per segment), got {type(values).__name__}")
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise InputError(
                f"{what}[{i}] is {v!r} ({type(v).__name__}), not a string; "
                "fill missing texts (e.g. with '') before scoring"
            )
    if n is not None and len(out) != n:
        raise InputError(f"{what} has {len(out)} items but there are {n} hypotheses; they must be aligned")
    return out


def _as_streams(refs: Any, n: int) -> list[list[str]]:
    """Normalise references to a list of streams, each aligned with the hypotheses."""
    if isinstance(refs, str):
        raise InputError("refs must be a sequence of reference strings (one per segment), not a single string")
    refs_list = list(refs)
    if len(refs_list) and not isinstance(refs_list[0], str) and isinstance(refs_list[0], Sequence | np.ndarray):
        streams = [_as_str_list(s, f"refs stream {k}", n) for k, s in enumerate(refs_list)]
        if not streams:
            raise InputError("refs holds no reference stream")
        return streams
    return [_as_str_list(refs_list, "refs", n)]
