"""Metric signatures: the one algebra (parse, combine, compare, merge, rename, read the direction).

A score column carries one signature string (sacrebleu's ``key:value|...`` form, written by
:mod:`xleval.metrics`); when the metric's options differ by target language (BLEU picks ``tok:zh``
for Chinese, ``tok:13a`` elsewhere) the column's signature is the combined form
``tgt_lang=de: SIG ; tgt_lang=zh: SIG2``. A calibrator fitted on several languages must then accept
scores of a subset of them, and refuse a language scored with other options: signatures are compared
per language, never as whole strings.

The ``xleval:<version>`` field of a signature is provenance: it is recorded but not compared, so a
calibrator saved by one xleval release applies to scores written by another when every metric
option (tokenizer, smoothing, sacrebleu's version, a model's revision, ...) is the same.

This module sits in ``_base`` so that the table (signatures travel with their columns), the metrics
(which write them) and calibration (which compares them) share it without importing each other.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..exceptions import SignatureMismatchError

__all__ = ["parse_signature", "combine_signatures", "check_compatible", "merge_signatures", "metric_options",
           "renamed_signatures", "signature_direction", "with_direction"]

_SEP = " ; "
_PREFIX = "tgt_lang="
_ANY = "*"
_PROVENANCE = ("xleval:",)


def parse_signature(signature: str) -> dict[str, str]:
    """``'SIG'`` -> ``{'*': 'SIG'}``; the combined form -> ``{lang: SIG}``."""
    parts = signature.split(_SEP)
    if not all(p.startswith(_PREFIX) and ": " in p for p in parts):
        return {_ANY: signature}
    return dict(p[len(_PREFIX):].split(": ", 1) for p in parts)


def combine_signatures(per_language: Mapping[str, str]) -> str:
    """The inverse of :func:`parse_signature` (one plain signature when every language agrees)."""
    values = set(per_language.values())
    if len(values) == 1:
        return values.pop()
    return _SEP.join(f"{_PREFIX}{lang}: {sig}" for lang, sig in sorted(per_language.items()))


def metric_options(signature: str) -> str:
    """A plain signature without its provenance fields (``xleval:<version>``): what calibrators compare."""
    return "|".join(field for field in signature.split("|") if not field.startswith(_PROVENANCE))


def signature_direction(signature: str | None) -> bool | None:
    """The direction a signature states: False for ``dir:lower`` (lower is better: MetricX's error
    scores), True for ``dir:higher``, None when it says nothing (most metrics: higher is better). A calibrated
    column's own ``human_better:`` (an anchored map's: the human scale's) comes before the ``dir:`` of the
    signature it was calibrated from (after ``of:``), which an LGN column keeps.
    The rule that also reads names and flags is :func:`xleval.metrics.higher_is_better`."""
    if not signature:
        return None
    fields = str(signature).split("|")
    own = next((i for i, field in enumerate(fields) if field.startswith("of:")), len(fields))
    for field in fields[:own]:
        if field in ("human_better:lower", "human_better:higher"):
            return field == "human_better:higher"
    for field in fields:
        if field in ("dir:lower", "dir:higher"):
            return field == "dir:higher"
    return None


def with_direction(signature: str | None, higher_is_better: bool) -> str:
    """``signature`` stating ``higher_is_better`` as its ``dir:`` field, in every language of a combined signature
    (any ``dir:`` it had is replaced; the other fields are kept): a direction the caller gives travels with the
    column as a metric's own does."""
    stated = f"dir:{'higher' if higher_is_better else 'lower'}"
    per_language = parse_signature(signature) if signature else {_ANY: ""}
    return combine_signatures({lang: "|".join([*(f for f in sig.split("|") if f and not f.startswith("dir:")), stated])
                               for lang, sig in per_language.items()})


def check_compatible(fitted: str | None, given: str | None, *, languages: Any = None, what: str = "scores") -> None:
    """Raise :class:`~xleval.exceptions.SignatureMismatchError` unless every language of ``given`` was
    fitted with the same signature. A plain fitted signature covers every language; a plain ``given``
    one covers the ``languages`` of the data (all fitted languages when they are not known)."""
    if fitted is None or given is None or fitted == given:
        return
    have, want = parse_signature(fitted), parse_signature(given)
    for lang, sig in want.items():
        if lang in have:
            expected = {have[lang]}
        elif _ANY in have:
            expected = {have[_ANY]}
        elif languages is not None:
            expected = {have[x] for x in languages if x in have} or {sig}
        else:
            expected = set(have.values())
        if {metric_options(e) for e in expected} != {metric_options(sig)}:
            where = "" if lang == _ANY else f" for tgt_lang={lang}"
            raise SignatureMismatchError(
                f"{what} have metric signature {sig!r}{where} but the calibrator was fitted on {fitted!r}; "
                "score with the same metric options, or pass force=True to apply it anyway"
            )


def merge_signatures(fitted: str | None, given: str | None) -> str | None:
    """The signature of a calibrator after fitting more data scored with ``given`` (checked compatible
    language by language; new languages are added)."""
    if fitted is None or given is None:
        return given if fitted is None else fitted
    have, want = parse_signature(fitted), parse_signature(given)
    if _ANY in have and _ANY in want:
        check_compatible(fitted, given, what="batch scores")
        return fitted
    for lang, sig in want.items():
        if lang in have and metric_options(have[lang]) != metric_options(sig):
            check_compatible(fitted, given, what="batch scores")
    if _ANY in have or _ANY in want:
        check_compatible(fitted, given, what="batch scores")
        return fitted
    return combine_signatures({**want, **have})  # a language already fitted keeps its recorded signature


def renamed_signatures(signatures: Any, columns: Mapping[str, str] | None = None) -> dict[str, str]:
    """A table's signatures (keyed by the file's column names) after the readers' rename ``columns``
    (file column -> canonical name): a signature travels with its file column, never with the name it
    is mapped to, so ``columns={"chrf": "bleu"}`` gives ``bleu`` chrF's signature (and a calibrator of
    BLEU refuses it). A file column shadowed by a mapped one (``bleu`` when ``chrf`` is mapped onto it)
    keeps no signature under that name. Only text signatures are kept."""
    if not isinstance(signatures, Mapping):
        return {}
    rename = dict(columns or {})
    targets = set(rename.values())
    return {str(rename.get(k, k)): v for k, v in signatures.items()
            if isinstance(v, str) and (k in rename or k not in targets)}
