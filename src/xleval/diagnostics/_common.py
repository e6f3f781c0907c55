"""Input plumbing shared by the diagnostics: pick the rows a statistic can use, count the rest."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError

__all__ = ["group_labels", "finite_rows", "require_columns", "numeric"]


def require_columns(data: pd.DataFrame, columns: list[str], what: str = "data") -> None:
    """InputError naming the missing columns and the ones that exist."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"{what} must be a pandas DataFrame; got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InputError(f"column(s) {missing} not in the {what}; columns are {list(data.columns)} "
                         "(name them with --score/--by/--human/--system or map them with --col)")


def group_labels(data: pd.DataFrame, by: str | list[str]) -> np.ndarray:
    """One string label per row: the ``by`` column, or several columns joined by '|'."""
    cols = [by] if isinstance(by, str) else list(by)
    require_columns(data, cols)
    frame = data[cols]
    missing = frame.isna().any(axis=1).to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0]) + 1
        raise InputError(f"group column(s) {cols} empty at row {row} ({int(missing.sum())} row(s) in all); "
                         "fill them in or drop those rows")
    if len(cols) == 1:
        return frame[cols[0]].astype(str).to_numpy(dtype=object)
    return frame.astype(str).agg("|".join, axis=1).to_numpy(dtype=object)


def numeric(data: pd.DataFrame, column: str) -> np.ndarray:
    require_columns(data, [column])
    try:
        return pd.to_numeric(data[column], errors="raise").to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        bad = pd.to_numeric(data[column], errors="coerce").isna() & data[column].notna()
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise InputError(f"column {column!r} must be numeric; row {row} holds {data[column].iloc[row - 1]!r}") from None


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
