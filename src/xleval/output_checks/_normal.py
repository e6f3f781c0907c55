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
    return np.array([_normal_one(t) for t in texts], dtype=object)



def may_hold_a_reference_copy(cells: Sequence[object], hypotheses: Sequence[object | None],
                              references: Sequence[object | None]) -> bool:
    """Whether any cell (a key per row: group and system) meets the copy rule (module docstring of
    :mod:`xleval.output_checks._copies`) on the rows with both texts.

    A cell is given up as soon as its rows left cannot reach the rule (an ordinary system differs
    from the reference on its first rows), so the texts of about a fifth of the rows are normalised
    instead of all of them: the answer is the one of normalising every row."""
    rows: dict[str, list[int]] = {}
    for i, (cell, hyp, ref) in enumerate(zip(cells, hypotheses, references, strict=True)):
        if isinstance(hyp, str) and isinstance(ref, str):
            rows.setdefault(str(cell), []).append(i)
    for members in rows.values():
        n = len(members)
        if n < MIN_ROWS:
            continue
        identical = 0
        for seen, i in enumerate(members, start=1):
            hyp, ref = _normal_one(str(hypotheses[i])), _normal_one(str(references[i]))
            identical += hyp == ref and hyp != ""
            if identical >= MIN_ROWS and identical >= MIN_SHARE * n:
                return True
            reachable = identical + n - seen  # at most this many rows of the cell can be identical
            if reachable < MIN_ROWS or reachable < MIN_SHARE * n:
                break
    return False


# ASCII text: NFKC leaves it as it is, case folding is lower(), and [\W_] is every byte but [A-Za-z0-9]
_ASCII_LOWER = bytes(range(256)).lower()
_ASCII_NOT_WORD = bytes(b for b in range(256) if not chr(b).isascii() or not chr(b).isalnum())


def _normal_one(text: str) -> str:
    if text.isascii():  # the same result, without the Unicode machinery (about 3x faster)
        return text.encode("ascii").translate(_ASCII_LOWER, _ASCII_NOT_WORD).decode("ascii")
    return _NOT_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())
