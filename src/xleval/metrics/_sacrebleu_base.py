"""The base of xleval's sacrebleu metrics (BLEU, chrF, TER): :class:`SacrebleuMetric`, sacrebleu's
:class:`Score` (a float with sacrebleu's attributes) and :class:`Signature` (with ``format(short=)``).

Kept apart from the metrics and from the one-call functions of :mod:`._compat`, so that the metric
modules build on it and ``_compat`` builds on them: no module of the three imports another back.
"""
from __future__ import annotations

import functools
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np

from xleval.exceptions import ArgumentTypeError, InputError

from .._base.result import Result
from ._base import Metric, References, _as_str_list, _as_streams, format_signature

__all__ = ["Score", "Signature", "SacrebleuMetric"]


@functools.lru_cache(maxsize=1)
def _sacrebleu_version() -> str:
    from .._base.versions import installed_version

    version = installed_version("sacrebleu")  # a core dependency: None only in a broken install
    if version is None:
        from importlib import metadata

        return metadata.version("sacrebleu")  # raises PackageNotFoundError, as before
    return version


def _check_nrefs_option(nrefs: Any) -> None:
    if nrefs is not None and nrefs != "var" and (not isinstance(nrefs, int) or isinstance(nrefs, bool) or nrefs < 1):
        raise InputError(f"nrefs must be a positive integer, 'var' or None, got {nrefs!r}")


@dataclass(frozen=True, eq=False, repr=False)
class Score(float, Result):
    """A corpus or sentence score, sacrebleu's score object and a float at once.

    It is the number itself (``float(s) == s.score``, arithmetic and comparisons are numeric), so
    code that treats a score as a float keeps working, and it has sacrebleu's attributes:
    ``name`` (``BLEU``, ``chrF2``, ``chrF2++``, ``TER``), ``score``; for BLEU ``counts``, ``totals``,
    ``precisions`` (percent), ``bp``, ``sys_len``, ``ref_len``, ``ratio``, ``prec_str``; for chrF
    ``char_order``, ``word_order``, ``beta``; for TER ``num_edits``, ``ref_length``. ``signature`` is
    xleval's (sacrebleu's fields, then ``|xleval:<version>``) with the number of references scored;
    ``stats`` the summed sufficient statistics. ``str()`` and ``repr()`` are :meth:`format`, as in
    sacrebleu."""

    name: str
    score: float
    signature: str
    stats: tuple[float, ...]
    counts: tuple[float, ...] | None = None
    totals: tuple[float, ...] | None = None
    precisions: tuple[float, ...] | None = None
    bp: float | None = None
    sys_len: int | None = None
    ref_len: int | None = None
    char_order: int | None = None
    word_order: int | None = None
    beta: int | None = None
    num_edits: int | None = None
    ref_length: float | None = None
    # sacrebleu's bootstrap estimate (``corpus_score(..., n_bootstrap=N)``): the mean and 95% half-width
    mean: float | None = None
    ci: float | None = None

    def __new__(cls, name: str, score: float, *args: Any, **kwargs: Any) -> Score:
        return super().__new__(cls, score)

    def __reduce__(self):  # float's pickling would call __new__ with the number only
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))

    def __float__(self) -> float:
        return self.score

    @property
    def _mean(self) -> float:
        """sacrebleu's name of the bootstrap mean (-1 without a bootstrap, as sacrebleu's)."""
        return -1.0 if self.mean is None else self.mean

    @property
    def _ci(self) -> float:
        """sacrebleu's name of the bootstrap 95% half-width (-1 without a bootstrap)."""
        return -1.0 if self.ci is None else self.ci

    @property
    def ratio(self) -> float | None:
        """BLEU's hypothesis/reference length ratio (0 when the reference length is 0), as sacrebleu's."""
        if self.sys_len is None or self.ref_len is None:
            return None
        return self.sys_len / self.ref_len if self.ref_len else 0

    @property
    def prec_str(self) -> str | None:
        """BLEU's precisions as sacrebleu prints them (``82.4/50.0/45.5/37.5``)."""
        return None if self.precisions is None else "/".join(f"{p:.1f}" for p in self.precisions)

    def _verbose(self) -> str:
        if self.precisions is None:
            return ""
        return (f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
                f"ref_len = {self.ref_len:d})")

    def format(self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False,
               confidence: tuple[float, float] | None = None) -> str:
        """sacrebleu's ``Score.format``: ``NAME = 12.34`` (BLEU adds its precisions, BP and lengths),
        ``NAME|SIGNATURE = ...`` when ``signature`` is given, the number alone with ``score_only``,
        sacrebleu's JSON object with ``is_json`` (the signature's fields become keys). ``confidence``
        (bootstrap mean, 95% half-width) adds sacrebleu's ``(μ = mean ± ci)`` after the number; as in
        sacrebleu it is left out when the mean is not positive."""
        if confidence is None and self.mean is not None and self.ci is not None:
            confidence = (self.mean, self.ci)  # a score of corpus_score(..., n_bootstrap=N) prints it, as sacrebleu's
        number = f"{self.score:.{width}f}"
        verbose = self._verbose()
        interval = None
        if confidence is not None and confidence[0] > 0:
            interval = f"μ = {confidence[0]:.{width}f} ± {confidence[1]:.{width}f}"
            number += f" ({interval})"
        if score_only:
            return number
        if is_json:
            out: dict[str, Any] = {"name": self.name, "score": float(f"{self.score:.{width}f}"),
                                   "signature": signature}
            if confidence is not None and interval is not None:
                out.update(confidence_mean=float(f"{confidence[0]:.{width}f}"),
                           confidence_var=float(f"{confidence[1]:.{width}f}"), confidence=interval)
            if verbose:
                out["verbose_score"] = verbose
            for field_ in filter(None, signature.split("|")):
                key, _, value = field_.partition(":")
                out[key] = value
            return json.dumps(out, indent=1, ensure_ascii=False)
        head = f"{self.name}|{signature}" if signature else self.name
        return f"{head} = {number}" + (f" {verbose}" if verbose else "")

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return self.format()


def _sacrebleu_twin(metric: Any) -> Any:
    """A sacrebleu metric whose ``_compute_score_from_stats`` is ``metric``'s (the tokenizer plays no part in it), or
    None for a setting sacrebleu lacks."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    if hasattr(metric, "max_ngram_order"):
        if metric.smooth_method not in BLEU.SMOOTH_DEFAULTS:
            return None
        return BLEU(tokenize="none", smooth_method=metric.smooth_method, smooth_value=metric.smooth_value,
                    max_ngram_order=metric.max_ngram_order, effective_order=metric.effective_order)
    if hasattr(metric, "char_order"):
        return CHRF(char_order=metric.char_order, word_order=metric.word_order, beta=metric.beta,
                    eps_smoothing=metric.eps_smoothing)
    if hasattr(metric, "case_sensitive"):
        return TER()
    return None


def sacrebleu_resampled_score(metric: Any) -> Any:
    """The score of summed statistics (B, k) -> (B,) in sacrebleu's own arithmetic, as its bootstrap and paired
    tests compute every resample (the sums as float32, each scored by its ``_compute_score_from_stats``: chrF and
    TER in float32), for :func:`xleval.stats.paired_bootstrap_test` and ``bootstrap_score_ci``, whose means and
    intervals are then sacrebleu's to the last digit; ``metric.score_from_stats`` (float64) for a setting sacrebleu
    lacks. The sums are integers, exact in either type: only the scoring differs (TER ``31.25``, sacrebleu's
    ``31.2``, in float64 rounds to ``31.3``)."""
    twin = _sacrebleu_twin(metric)
    if twin is None:
        return metric.score_from_stats

    def score(summed: Any) -> Any:
        return np.array([twin._compute_score_from_stats(row).score for row in np.asarray(summed, np.float32)])

    return score


class Signature(str):
    """A metric's signature string with sacrebleu's ``format(short=...)`` (``str()`` is the long form)."""

    _abbr: dict[str, str]

    def __new__(cls, text: str, abbreviations: dict[str, str]) -> Signature:
        obj = super().__new__(cls, text)
        obj._abbr = abbreviations
        return obj

    def format(self, short: bool = False) -> str:  # type: ignore[override]  # sacrebleu's Signature.format
        if not short:
            return str(self)
        pairs = (part.partition(":") for part in self.split("|"))
        return "|".join(f"{self._abbr.get(key, key)}:{value}" for key, _, value in pairs)


class SacrebleuMetric(Metric):
    """BLEU, CHRF and TER: sacrebleu's ``corpus_score``/``sentence_score`` returning a :class:`Score`,
    sacrebleu's ``references=`` cache, and the number of references taken from the data when the
    object was built without ``nrefs`` (as sacrebleu counts them)."""

    counts_refs: ClassVar[bool] = True
    _references: list[list[str | None]] | None = None
    # sacrebleu's ``bs`` and ``seed`` once ``corpus_score(..., n_bootstrap=N)`` ran: in the signature from then on,
    # as sacrebleu's metric keeps them
    _bootstrap: dict[str, Any] | None = None

    @property
    def signature(self) -> str:
        return format_signature(self._fields())

    def _fields(self) -> dict[str, Any]:
        """The signature's fields, with sacrebleu's ``bs`` and ``seed`` after ``nrefs`` once a bootstrap ran."""
        fields_ = self._signature_fields()
        if not self._bootstrap:
            return fields_
        items = list(fields_.items())
        return dict(items[:1] + list(self._bootstrap.items()) + items[1:])

    def _set_references(self, references: Any) -> None:
        if references is not None:
            if isinstance(references, str) or not len(references):
                raise InputError("references must be a non-empty list of reference streams (sacrebleu's convention)")
            self._references = _as_streams(references, len(references[0]))

    def _score_details(self, stats: np.ndarray) -> dict[str, Any]:
        """``name`` and the score's sacrebleu attributes for summed statistics."""
        raise NotImplementedError

    # sacrebleu's short signature names (``Signature.format(short=True)``); TER abbreviates tok to t
    _SIGNATURE_ABBR: ClassVar[dict[str, str]] = {"version": "v", "nrefs": "#", "case": "c", "eff": "e",
                                                 "smooth": "s", "nc": "nc", "nw": "nw", "space": "s", "tok": "tok",
                                                 "norm": "nr", "punct": "pn", "asian": "as", "seed": "rs"}

    def get_signature(self) -> Signature:
        """sacrebleu's ``get_signature()``: :attr:`signature` as a string that also has
        ``format(short=False)``."""
        return Signature(self.signature, self._SIGNATURE_ABBR)

    def stats_score(self, stats: Any) -> Score:
        """The :class:`Score` of summed sufficient statistics (as :meth:`corpus_score` returns it), for
        callers that computed the per-segment statistics once and sum them per system or segment."""
        return self._make_score(np.asarray(stats), self.signature_nrefs)

    def _make_score(self, stats: np.ndarray, nrefs: int | str) -> Score:
        fields_ = self._fields()
        fields_["nrefs"] = nrefs
        return Score(score=float(self.score_from_stats(stats)), signature=format_signature(fields_),
                     stats=tuple(stats.tolist()), **self._score_details(stats))

    def corpus_score(self, hypotheses: Sequence[str], references: References | None = None,
                     sources: Sequence[str] | int | None = None, *, n_bootstrap: int = 1) -> Score:
        """sacrebleu's ``corpus_score(hypotheses, references, n_bootstrap=1)``: a :class:`Score` (also a float) of
        the summed statistics. ``references`` None uses the references given to the constructor; ``sources``:
        the sources where a metric reads them (an integer in its place is sacrebleu's third argument,
        ``n_bootstrap``). ``n_bootstrap`` > 1 adds sacrebleu's bootstrap estimate (``mean``, ``ci``: ``μ = mean ±
        ci`` in :meth:`Score.format`), seeded as sacrebleu's (``SACREBLEU_SEED``, default 12345; ``none``: a
        fresh seed), and puts ``bs`` and ``seed`` into this metric's signature from then on, as sacrebleu does."""
        srcs: Sequence[str] | None = None
        if isinstance(sources, (int, np.integer)) and not isinstance(sources, bool):
            n_bootstrap = int(sources)
        elif not isinstance(sources, (int, np.integer)):
            srcs = sources
        if references is None:
            references = self._references
            if references is None:
                raise InputError(f"{type(self).__name__}.corpus_score needs references: pass references, or build "
                                 "the metric with references=")
        if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or n_bootstrap < 1:
            raise ArgumentTypeError(f"n_bootstrap must be a positive integer (1: no bootstrap), got {n_bootstrap!r}")
        hyps_ = _as_str_list(hypotheses, "hypotheses")
        if not hyps_:
            raise ArgumentTypeError("hypotheses is empty: give at least one hypothesis (sacrebleu fails on it too)")
        streams = _as_streams(references, len(hyps_))
        per_segment = self.sentence_stats(hyps_, streams, srcs)
        if n_bootstrap == 1:
            return self._make_score(per_segment.sum(axis=0), self.signature_nrefs)
        from ..stats._paired_mt import seed_from_environment

        seed, seed_text = seed_from_environment()
        mean, ci = self.bootstrap_estimate(per_segment, int(n_bootstrap), seed)
        self._bootstrap = {"bs": int(n_bootstrap), "seed": seed_text}
        score = self._make_score(per_segment.sum(axis=0), self.signature_nrefs)
        return replace(score, mean=mean, ci=ci)

    def bootstrap_estimate(self, stats: Any, n_resamples: int, seed: int | None) -> tuple[float, float]:
        """sacrebleu's bootstrap estimate (``corpus_score(..., n_bootstrap=N)``, ``sacrebleu --confidence``) of the
        per-segment ``stats``: the mean of the resampled scores and the half-width of their 95% interval, to the
        last digit. As sacrebleu: the seed's N resamples of the n rows (drawn by :mod:`xleval.stats` as sacrebleu draws
        them), each resample's statistics summed in
        float32 and scored by sacrebleu's own ``_compute_score_from_stats`` (a float64 computation differs in the
        sixth digit, and in the printed one when it lands on a tie: TER ``31.25`` is sacrebleu's ``31.2``).
        ``seed`` None: a fresh one. A setting sacrebleu lacks (BLEU's epsilon smoothing) is resampled in float64."""
        if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
            raise ArgumentTypeError(f"n_resamples must be a positive integer, got {n_resamples!r}")
        arr = np.asarray(stats)
        if arr.ndim != 2 or not len(arr):
            raise ArgumentTypeError("stats must be the per-segment statistics of sentence_stats (2-D, one row or "
                                    f"more), got shape {arr.shape}")
        from ..stats import bootstrap_score_ci

        # sacrebleu's draws (stats resamples them as its rng.choice does) and its scores of each resample
        res = bootstrap_score_ci(arr, sacrebleu_resampled_score(self), n_resamples=n_resamples, random_state=seed)
        assert res.distribution is not None
        scores = sorted(res.distribution)  # sacrebleu's Score.estimate_ci: statistics.mean of the sorted scores,
        low = len(scores) // 40  # in their own type (float32 for chrF and TER)
        return float(statistics.mean(scores)), float(0.5 * (scores[len(scores) - low - 1] - scores[low]))

    def sentence_score(self, hypothesis: str, references: Sequence[str | None] | None = None,
                       source: str | None = None) -> Score:
        """sacrebleu's ``sentence_score(hypothesis, references)``: ``references`` lists this
        segment's references; returns a :class:`Score`."""
        if not isinstance(hypothesis, str):
            raise ArgumentTypeError(f"hypothesis must be a string, got {type(hypothesis).__name__}")
        if isinstance(references, str) or not isinstance(references, Sequence) or not len(references):
            raise ArgumentTypeError("references must be a non-empty list of reference strings for this segment")
        return self.corpus_score([hypothesis], [[r] for r in references])
