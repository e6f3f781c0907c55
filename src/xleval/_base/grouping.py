"""The one group-index helper: integer codes of the distinct combinations of aligned key columns.

Every per-group computation in xleval runs on these codes (``np.bincount``, gathers), so that it
is one vectorised numpy operation whatever the number of rows. Categorical columns use their own
codes (no hashing of millions of strings); several columns are combined arithmetically while the
product of their cardinalities fits an int64, and by hashing tuples beyond (the overflow guard).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["GroupIndex", "group_index"]

_LIMIT = 2**62


@dataclass(frozen=True)
class GroupIndex:
    """``codes[i]`` is row i's group (0..n_groups-1); ``keys[g]`` is group g's tuple of values
    (Python scalars; a missing value is None when missing values are allowed); ``first[g]`` is the
    first row of group g. Groups are numbered in order of first appearance, except a single
    categorical column, whose used categories keep the categorical's order."""

    codes: np.ndarray
    keys: list[tuple]
    first: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.keys)

    def counts(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=self.n_groups)

    def labels(self, sep: str = "|") -> list[str]:
        """One text label per group: the value, or the values joined by ``sep``."""
        return [sep.join(map(str, k)) if len(k) > 1 else str(k[0]) for k in self.keys]


def group_index(columns: Sequence[Any] | pd.DataFrame, *, names: Sequence[str] | None = None,
                allow_missing: bool = False, where: str = "data") -> GroupIndex:
    """Group index of aligned columns (a DataFrame, or a list of Series/arrays).

    A missing key value raises :class:`~xleval.exceptions.InputError` naming the column and the
    first such row, unless ``allow_missing`` (then missing is its own value, reported as None).
    Unused categories of a categorical column are never groups.
    """
    if isinstance(columns, pd.DataFrame):
        names = list(columns.columns) if names is None else list(names)
        columns = [columns[c] for c in columns.columns]
    names = list(names) if names is not None else [f"column {i + 1}" for i in range(len(columns))]
    if not columns:
        raise ValueError("group_index needs at least one column")
    parts = [_codes(col, name, allow_missing, where) for col, name in zip(columns, names)]
    n_rows = len(parts[0][0])
    if len(parts) == 1:
        codes, uniques = parts[0]
        return GroupIndex(codes, [(u,) for u in uniques], _first_rows(codes, len(uniques)))
    size = 1
    for _, uniques in parts:
        size *= len(uniques) + 1
    if size < _LIMIT:
        combined = np.zeros(n_rows, dtype=np.int64)
        for codes, uniques in parts:
            combined = combined * (len(uniques) + 1) + codes
        codes, _ = pd.factorize(combined)
    else:  # the overflow guard: hash the tuples of per-column codes
        codes, _ = pd.factorize(pd.MultiIndex.from_arrays([c for c, _ in parts]))
    codes = codes.astype(np.intp)
    first = _first_rows(codes, int(codes.max()) + 1 if n_rows else 0)
    keys = [tuple(uniques[c[r]] for c, uniques in parts) for r in first]
    return GroupIndex(codes, keys, first)


def _codes(values: Any, name: str, allow_missing: bool, where: str) -> tuple[np.ndarray, list]:
    """Codes 0..k-1 of one column (only used values) and its distinct values as Python scalars."""
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy().astype(np.intp)
        uniques = list(values.cat.categories)
    else:
        raw, found = pd.factorize(pd.Series(values) if not isinstance(values, pd.Series) else values,
                                  use_na_sentinel=True)
        codes, uniques = raw.astype(np.intp), list(found)
    if (codes < 0).any():
        if not allow_missing:
            from ..exceptions import InputError

            row = int(np.flatnonzero(codes < 0)[0]) + 1
            raise InputError(f"{where}: group column {name!r} is empty at row {row} "
                             f"({int((codes < 0).sum())} row(s) in all); fill it in or drop those rows")
        codes = np.where(codes < 0, len(uniques), codes)
        uniques = uniques + [None]
    if len(uniques) and len(codes):
        used = np.bincount(codes, minlength=len(uniques)) > 0
        if not used.all():
            codes = (np.cumsum(used) - 1)[codes]
            uniques = [u for u, keep in zip(uniques, used) if keep]
    return codes, [_py(u) for u in uniques]


def _first_rows(codes: np.ndarray, n_groups: int) -> np.ndarray:
    first = np.full(n_groups, -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the last write wins: each group's first row
    return first


def _py(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
