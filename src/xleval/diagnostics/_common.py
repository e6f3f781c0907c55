"""Input plumbing shared by the diagnostics: pick the rows a statistic can use, count the rest."""
from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import DataQualityWarning

__all__ = ["finite_rows"]


def finite_rows(values: np.ndarray, what: str, notes: list[str], *, warn: bool = True) -> np.ndarray:
    """Boolean mask of finite values; the excluded ones are counted in ``notes`` (and warned about)."""
    keep = np.isfinite(values)
    n_bad = int((~keep).sum())
    if n_bad:
        msg = f"{what}: {n_bad} of {len(values)} row(s) have no finite value and were left out"
        notes.append(msg)
        if warn:
            warnings.warn(msg, DataQualityWarning, stacklevel=3)
    return keep
