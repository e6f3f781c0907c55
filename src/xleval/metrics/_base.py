"""The ``Metric`` base class every xleval metric derives from.

A metric is an immutable object: every option that can change the number is a constructor
parameter and appears in :attr:`Metric.signature`; scoring never mutates the object. Metrics that
have summable sufficient statistics (BLEU, chrF, TER) expose them through :meth:`sentence_stats`
so that corpus, per-group and bootstrap scores are exact sums that never re-tokenise.
"""
from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, overload

import numpy as np

from xleval.exceptions import ArgumentTypeError, InputError

from .._base.signature import signature_direction  # re-exported: the algebra lives in _base

__all__ = ["Metric", "References", "count_refs", "format_signature", "signature_direction", "CORPUS_METRICS"]

#: registry names whose corpus score is a function of summed per-segment statistics (built for the table's number
#: of references; their corpus score has its own signature, BLEU's eff:no)
CORPUS_METRICS = ("bleu", "chrf", "chrf++", "ter")

# One reference per segment (a sequence of strings), or sacrebleu-style reference *streams*:
# a sequence of k sequences, each holding one reference per segment. A stream may hold ``None``
# where a segment has fewer references than others (sacrebleu's convention for a varying number).
References = Sequence[str] | Sequence[Sequence[str | None]]


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
    # class defaults that an instance may override (COMET as QE, embeddings against the source)
    needs_refs: bool = True
    needs_srcs: bool = False
    # Whether a missing reference (None) may be replaced by another reference of the same segment
    # without changing the number (true for max/best-over-references metrics: BLEU, chrF; not for
    # TER, which averages the reference lengths and handles None itself, as sacrebleu does).
    fills_missing_refs: ClassVar[bool] = True
    # Whether the signature counts the references as sacrebleu does (``nrefs:``): BLEU, chrF, TER.
    # Only these check the references against ``nrefs`` and accept None for a missing one; the
    # neural metrics take the best over several references (BERTScore, embeddings) or one (COMET).
    counts_refs: ClassVar[bool] = False
    nrefs: int | str | None = 1
    _seen_nrefs: int | str = 1  # with nrefs=None: the number of references of the last scoring

    @property
    def signature_nrefs(self) -> int | str:
        """The ``nrefs:`` of the signature: ``nrefs``, or with ``nrefs=None`` the number of references
        last scored by this object (1 before any scoring), as sacrebleu reports it."""
        return self._seen_nrefs if self.nrefs is None else self.nrefs

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
        return format_signature(self._signature_fields())

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

    def sentence_score(self, hypothesis: str, references: Sequence[str | None] | None = None,
                       source: str | None = None) -> float:
        """Score of one segment; ``references`` lists that segment's references (sacrebleu's
        ``sentence_score(hypothesis, references)`` convention)."""
        if not isinstance(hypothesis, str):
            raise ArgumentTypeError(f"hypothesis must be a string, got {type(hypothesis).__name__}")
        if isinstance(references, str):
            raise ArgumentTypeError("references must be a list of reference strings for this segment, not a string")
        refs = None if references is None else [[r] for r in references]
        srcs = None if source is None else [source]
        return float(self.sentence_scores([hypothesis], refs, srcs)[0])

    # ------------------------------------------------------------------ subclass hooks
    @abc.abstractmethod
    def _sentence_scores(
        self, hyps: list[str], refs: list[list[str | None]] | None, srcs: list[str] | None
    ) -> np.ndarray:
        """Scores for validated inputs: ``refs`` is a list of reference *streams* (each of length n);
        a missing reference (None) is left in only where ``fills_missing_refs`` is False."""

    def _sentence_stats(
        self, hyps: list[str], refs: list[list[str | None]] | None, srcs: list[str] | None
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
    ) -> tuple[list[str], list[list[str | None]] | None, list[str] | None]:
        hyps_ = _as_str_list(hyps, "hyps")
        refs_ = _as_streams(refs, len(hyps_)) if refs is not None else None
        srcs_ = _as_str_list(srcs, "srcs", len(hyps_)) if srcs is not None else None
        if self.needs_refs and refs_ is None:
            raise InputError(f"metric {self.name!r} needs references: pass refs=")
        if self.needs_srcs and srcs_ is None:
            raise InputError(f"metric {self.name!r} needs sources: pass srcs=")
        if refs_ is not None and self.counts_refs:
            self._check_nrefs(refs_)
            if self.fills_missing_refs:
                refs_ = _fill_missing(refs_)
        elif refs_ is not None and any(None in s for s in refs_):
            raise InputError(f"metric {self.name!r} needs a reference in every stream (got None); "
                             "score those segments with their own references")
        return hyps_, refs_, srcs_

    def _check_nrefs(self, refs: list[list[str | None]]) -> None:
        """The references must match ``nrefs`` (sacrebleu counts each segment's non-None references:
        one count for all segments, or ``var`` when they differ)."""
        given = count_refs(refs)
        if self.nrefs is None:  # any number, as sacrebleu's; the signature reports the last one scored
            self._seen_nrefs = given
            return
        if given != self.nrefs:
            detail = ("the number of references varies by segment" if given == "var"
                      else f"{given} reference(s) per segment given")
            raise InputError(
                f"{detail} but this {type(self).__name__} was built with nrefs={self.nrefs!r}; "
                f"build it with nrefs={given!r} so the signature is right"
            )


def format_signature(fields: dict[str, Any]) -> str:
    """``key:value|...`` of the fields, then ``xleval:<version>``.

    A field named ``xleval`` is provenance that is not one of sacrebleu's fields (the checksum of spBLEU's
    model file): it is written inside the ``xleval:`` field, after the version and a comma
    (``xleval:0.4.0,spm-sha256:0123456789ab``), so the other fields stay exactly sacrebleu's.
    """
    parts = [f"{key}:{_format_value(value)}" for key, value in fields.items() if key != "xleval"]
    provenance = f",{fields['xleval']}" if "xleval" in fields else ""
    parts.append(f"xleval:{_xleval_version()}{provenance}")
    return "|".join(parts)


def _format_value(value: Any) -> str:
    # sacrebleu writes booleans as yes/no in signatures
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@overload
def _as_str_list(values: Any, what: str, n: int | None = None, allow_none: Literal[False] = False) -> list[str]: ...


@overload
def _as_str_list(values: Any, what: str, n: int | None = None, *, allow_none: Literal[True]) -> list[str | None]: ...


def _as_str_list(values: Any, what: str, n: int | None = None,
                 allow_none: bool = False) -> list[str] | list[str | None]:
    if isinstance(values, str) or (not isinstance(values, Sequence | np.ndarray) and not hasattr(values, "__array__")):
        raise ArgumentTypeError(f"{what} must be a sequence of strings (one per segment), got {type(values).__name__}")
    out = list(values)
    allowed = {str, type(None)} if allow_none else {str}
    if not set(map(type, out)) <= allowed:  # one C-level pass; find the culprit only on failure
        for i, v in enumerate(out):
            if not isinstance(v, str) and not (allow_none and v is None):
                advice = ("None marks a missing reference (sacrebleu's convention)" if allow_none
                          else "fill missing texts (e.g. with '') before scoring")
                raise ArgumentTypeError(f"{what}[{i}] is {v!r} ({type(v).__name__}), not a string; {advice}")
    if n is not None and len(out) != n:
        # a TypeError too, as sacrebleu's (newer versions) for streams of the wrong length
        raise ArgumentTypeError(f"{what} has {len(out)} items but there are {n} hypotheses; they must be aligned")
    return out


def _as_streams(refs: Any, n: int) -> list[list[str | None]]:
    """Normalise references to a list of streams, each aligned with the hypotheses. ``None`` marks
    a missing reference (a segment with fewer references than others); every segment needs one."""
    if isinstance(refs, str):
        raise ArgumentTypeError("refs must be a sequence of reference strings (one per segment), not a single string")
    if not isinstance(refs, Sequence | np.ndarray) and not hasattr(refs, "__array__"):
        raise ArgumentTypeError(f"refs must be a sequence of reference strings (one per segment) or of reference "
                                f"streams, got {type(refs).__name__}")
    refs_list = list(refs)
    first = next((r for r in refs_list if r is not None), None)
    if len(refs_list) and not isinstance(first, str) and isinstance(first, Sequence | np.ndarray):
        streams = [_as_str_list(s, f"refs stream {k}", n, allow_none=True) for k, s in enumerate(refs_list)]
    else:
        streams = [_as_str_list(refs_list, "refs", n, allow_none=True)]
    if any(None in s for s in streams):
        for i, segment in enumerate(zip(*streams, strict=True)):
            if all(r is None for r in segment):
                raise InputError(f"refs: segment {i} has no reference (every reference is None); give one, "
                                 "or leave the segment out")
    return streams


def count_refs(refs: Sequence[Sequence[str | None]]) -> int | str:
    """sacrebleu's number of references: the count of non-None references per segment when it is the
    same for every segment, else ``"var"``."""
    if not any(None in s for s in refs):
        return len(refs)
    counts = {sum(r is not None for r in segment) for segment in zip(*refs, strict=True)}
    return counts.pop() if len(counts) == 1 else "var"


def _fill_missing(refs: list[list[str | None]]) -> list[list[str | None]]:
    """Replace each missing reference by the segment's first present one: for metrics that take the
    maximum (BLEU's clipping counts, closest length) or the best (chrF) over references, a repeated
    reference changes nothing, so this equals sacrebleu's dropping of the None entries. (Typed as its
    input so that it can replace it; no None is left.)"""
    if not any(None in s for s in refs):
        return refs
    first = [next(r for r in segment if r is not None) for segment in zip(*refs, strict=True)]
    return [[f if r is None else r for r, f in zip(stream, first, strict=True)] for stream in refs]
