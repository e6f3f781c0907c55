"""Per-row flags for outputs that fool metrics: empty, copy of the source, identical to the reference,
extreme length, truncated, off-target language. Definitions (docs/output-checks.md says the same):

* ``empty``: the hypothesis is missing or only white space.
* ``copy_source``: the hypothesis is the source, exactly after normalisation (NFKC, case folded, everything but
  letters and digits removed) or nearly: chrF(hypothesis, source) >= ``near_copy`` (default 70; sacrebleu's chrF
  with the source as the reference) and, with a reference, higher than chrF(hypothesis, reference) (a headline
  of names translated right is as close to its reference). A row whose reference is itself a copy of the source
  (normalised equality, or chrF(reference, source) >= 90: a name, a URL, a number) is never flagged: copying it
  is the right translation.
* ``identical_reference``: the hypothesis equals the reference after the same normalisation (a perfect
  translation, a leaked reference, or a reference submitted as a system). Informational: not in the default
  invalid set.
* ``extreme_length``: the log ratio of the hypothesis' length to the reference's (the source's without a
  reference), in characters without white space, is more than ``length_z`` (default 3.5) robust standard
  deviations from the group's median (robust sd = 1.4826 x median absolute deviation over the group's rows of
  every system, the Iglewicz-Hoaglin outlier rule). Groups compare like with like: the ratio depends on the
  language pair.
* ``truncated``: a non-empty hypothesis that ends mid-sentence (the source ends with a sentence-final mark,
  ``. ! ? 。 ！ ？ … ؟ ।`` before any closing quotes or brackets, and the hypothesis does not) and is short for its
  group (robust z of the length ratio below ``-truncated_z``, default 2). It finds outputs cut off before the end;
  it cannot find a dropped middle clause or a dropped sentence that leaves a clean ending (those show as short
  ``extreme_length`` at best).
* ``off_target``: the language identifier's answer for the hypothesis is not the target language (compared on
  the base language, macrolanguages folded, Nigerian Pidgin accepted for English:
  :func:`~xleval.output_checks._langid.accepts`). Checked only
  where the hypothesis has at least ``min_letters`` letters (default 20: short strings, names and numbers are
  not identifiable) and, with a reference column, where the identifier gives the reference's own line the target
  language (a line it cannot identify correctly tells nothing about the hypothesis); ``langid_checked`` says which
  rows were checked.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._names import FLAGS, INVALID_FLAGS
from ._normal import normalised

__all__ = ["FLAGS", "INVALID_FLAGS", "normalised", "text_column", "chrf_to", "ends_mid_sentence", "length_units",
           "robust_z", "letter_count"]

_NOT_WORD = re.compile(r"[\W_]+")
_NOT_LETTER = re.compile(r"[\W\d_]+")
_FINAL = frozenset(".!?。！？…؟।")
_CLOSERS = "\"'”’»)]」』›"
#: chrF(reference, source) from which the reference itself is a copy of the source (copying is then right)
REFERENCE_COPY = 90.0
MAD_SCALE = 1.4826  # the median absolute deviation of a normal sample times this estimates its sd
MEAN_AD_SCALE = 1.2533  # the same for the mean absolute deviation (sqrt(pi / 2))


def text_column(values: pd.Series) -> list[str]:
    """A text column as strings, missing values as ''."""
    return ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in values.tolist()]


def chrf_to(hyps: list[str], others: list[str]) -> np.ndarray:
    """Sentence chrF (sacrebleu defaults) of each text against one other text, 0-100."""
    from ..metrics import CHRF

    if not hyps:
        return np.zeros(0)
    return CHRF().sentence_scores(hyps, [others])


def ends_mid_sentence(text: str) -> bool:
    stripped = text.rstrip().rstrip(_CLOSERS).rstrip()
    return not stripped or stripped[-1] not in _FINAL


def length_units(texts: list[str]) -> np.ndarray:
    return np.array([len("".join(t.split())) for t in texts], dtype=np.float64)


def robust_z(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """(x - group median) / (1.4826 MAD of the group), or 1.2533 x the mean absolute deviation where the MAD is
    0; NaN where both are 0, x is NaN or the group has fewer than 3 values."""
    out = np.full(len(values), np.nan)
    for g in np.unique(codes):
        rows = np.flatnonzero(codes == g)
        x = values[rows]
        finite = x[np.isfinite(x)]
        if finite.size < 3:
            continue
        med = np.median(finite)
        scale = MAD_SCALE * np.median(np.abs(finite - med))
        if scale == 0:  # more than half the rows alike: the mean absolute deviation (Iglewicz and Hoaglin 1993)
            scale = MEAN_AD_SCALE * np.mean(np.abs(finite - med))
        if scale > 0:
            out[rows] = (x - med) / scale
    return out


def letter_count(texts: list[str]) -> np.ndarray:
    return np.array([len(_NOT_LETTER.sub("", t)) for t in texts], dtype=np.int64)
