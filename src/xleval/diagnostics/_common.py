"""Input plumbing shared by the diagnostics: pick the rows a statistic can use, count the rest."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning
from ..table import as_table, numeric_column, require_columns

__all__ = ["group_labels", "finite_rows", "require_columns", "numeric"]


def group_labels(data: pd.DataFrame, by: str | list[str]) -> np.ndarray:
    """One label per row, distinct for distinct groups: the table's group index of the ``by``
    column(s) (:meth:`xleval.table.EvalTable.row_labels`; group keys are tuples, never joined text)."""
    return as_table(data, by=by).row_labels()


def numeric(data: pd.DataFrame, column: str, argument: str | None = None) -> np.ndarray:
    return numeric_column(data, column, argument=argument)


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
