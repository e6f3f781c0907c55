"""The one normalisation of output texts for equality (a copy of the source, of the reference), and the
pandas-free test for a reference copy that `xleval score` runs on an Arrow table (Parquet in, Parquet out,
no pandas): only where it finds one does the full check (:func:`xleval.output_checks.reference_copies`)
build a frame."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

__all__ = ["normalised", "MIN_SHARE", "MIN_ROWS", "may_hold_a_reference_copy"]

_NOT_WORD = re.compile(r"[\W_]+")

#: share of a system's rows (in one group) equal to the reference from which the system is a copy of it
MIN_SHARE = 0.8
#: fewest rows equal to the reference for a system to be called a copy (two identical rows of a tiny table are not)
MIN_ROWS = 10


def normalised(texts: Sequence[str]) -> np.ndarray:
    """NFKC, case folded, letters and digits only: what "exact" copy and identity compare."""
    return np.array([_NOT_WORD.sub("", unicodedata.normalize("NFKC", t).casefold()) for t in texts], dtype=object)



def may_hold_a_reference_copy(cells: Sequence[object], hypotheses: Sequence[object | None],
                              references: Sequence[object | None]) -> bool:
    """Whether any cell (a key per row: group and system) meets the copy rule (module docstring of
    :mod:`xleval.output_checks._copies`) on the rows with both texts."""
    both = np.array([isinstance(h, str) and isinstance(r, str) for h, r in zip(hypotheses, references, strict=True)])
    if not both.any():
        return False
    hyp = normalised([str(h) for h, ok in zip(hypotheses, both, strict=True) if ok])
    ref = normalised([str(r) for r, ok in zip(references, both, strict=True) if ok])
    same = (hyp == ref) & (hyp != "")
    _, cell = np.unique(np.asarray([str(c) for c, ok in zip(cells, both, strict=True) if ok], dtype=object),
                        return_inverse=True)
    n, identical = np.bincount(cell), np.bincount(cell, weights=same)
    return bool(((identical >= MIN_ROWS) & (identical >= MIN_SHARE * n)).any())
