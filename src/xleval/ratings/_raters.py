"""Shared by the human-rating readers: segment keys, rows without a key, and pooling several raters."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..exceptions import InputError

__all__ = ["RATER_POOLING", "default_keys", "check_missing", "rater_z"]

#: how several raters of one segment become one score: the mean of their scores, or the mean of their
#: scores standardised per rater (z over every segment the rater rated in the same language pair)
RATER_POOLING = ("mean", "z")


def default_keys(frame: pd.DataFrame, keys: tuple[str, ...] | None) -> tuple[str, ...]:
    """The segment key columns: ``keys`` as given, else ``lp`` (if present), ``system``, ``doc`` (if
    present) and ``seg_id``."""
    if keys is not None:
        return tuple(keys)
    return tuple(k for k in ("lp", "system", "doc", "seg_id") if k in frame.columns or k in ("system", "seg_id"))


def check_missing(keys: pd.DataFrame, extra: pd.Series, name: str, what: str) -> None:
    """Refuse a row with no segment key, rater or ``name`` value (one line naming the first such row)."""
    cells = pd.concat([keys, extra.rename(name)], axis=1)
    bad = cells.isna() | cells.astype(str).apply(lambda col: col.str.strip() == "")
    if bad.to_numpy().any():
        row, col = np.argwhere(bad.to_numpy())[0]
        raise InputError(f"{what}: row {int(row) + 1} has no {cells.columns[col]!r}: every row needs its segment "
                         f"key, rater and {name}" + (" (use 'No-error' for a segment rated without errors)"
                                                     if name == "severity" else ""))


def rater_z(per_rater: pd.DataFrame, lp: str | None, what: str) -> pd.Series:
    """Each rater's values standardised over that rater's segments (in each language pair)."""
    by = ["rater"] if lp is None else [lp, "rater"]
    grouped = per_rater.groupby(by, sort=False, dropna=False)["value"]
    mean, std, count = grouped.transform("mean"), grouped.transform("std"), grouped.transform("count")
    bad = (count < 2) | ~(std > 0)
    if bad.any():
        row = per_rater[bad].iloc[0]
        where = f"rater {row['rater']!r}" + (f" in {row[lp]!r}" if lp is not None else "")
        n = int(count[bad].iloc[0])
        what_it_did = "rated only one segment" if n < 2 else f"gave all {n} of its segments the same score"
        raise InputError(f"{what} rater z: {where} {what_it_did}; a z-score needs two different scores per rater: "
                         "use raters='mean'")
    return (per_rater["value"] - mean) / std
