"""The one group-index helper: integer codes of the distinct combinations of aligned key columns.

Every per-group computation in xleval runs on these codes (``np.bincount``, gathers), so that it
is one vectorised numpy operation whatever the number of rows. Categorical columns use their own
codes (no hashing of millions of strings); several columns are combined arithmetically while the
product of their cardinalities fits an int64 (ranked through a lookup table when that product is
small, hashed otherwise), and by hashing tuples beyond (the overflow guard).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["GroupIndex", "group_index", "key_labels", "combined_codes", "segment_rank", "canonical_order",
           "groups_left_out", "python_value"]

_LIMIT = 2**62
_DENSE = 4  # combined codes below 4x the rows are ranked through a table, not hashed


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

    def row_labels(self, sep: str = "|") -> np.ndarray:
        """Each row's group label (an object array of :meth:`labels`)."""
        return np.asarray(self.labels(sep), dtype=object)[self.codes]

    def labels(self, sep: str = "|") -> list[str]:
        """One distinct text label per group (:func:`key_labels` of the keys)."""
        return key_labels(self.keys, sep)


def key_labels(keys: Sequence[tuple], sep: str = "|") -> list[str]:
    """One distinct text label per key tuple: the value, or the values joined by ``sep``. Where two keys
    would read alike (``("a|b", "c")`` and ``("a", "b|c")``, or ``1`` and ``"1"``), those keys are
    labelled by the ``repr`` of their values instead, so a label never merges groups."""
    plain = [sep.join(map(str, k)) if len(k) > 1 else str(k[0]) for k in keys]
    seen = Counter(plain)
    if len(seen) == len(plain):
        return plain
    out = [p if seen[p] == 1 else repr(k if len(k) > 1 else k[0]) for p, k in zip(plain, keys, strict=True)]
    if len(set(out)) < len(out):  # reprs that still collide (objects printed alike): number them
        out = [f"{o}#{g}" for g, o in enumerate(out)]
    return out


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
    parts = [_codes(col, name, allow_missing, where) for col, name in zip(columns, names, strict=True)]
    if len(parts) == 1:
        codes, uniques, first = parts[0]
        return GroupIndex(codes.astype(np.intp, copy=False), [(u,) for u in uniques], first)
    codes, first = _combine([c for c, _, _ in parts], [len(uniques) + 1 for _, uniques, _ in parts])
    keys = [tuple(uniques[c[r]] for c, uniques, _ in parts) for r in first]
    return GroupIndex(codes, keys, first)


def combined_codes(*codes: np.ndarray) -> np.ndarray:
    """``group_index(list(codes)).codes`` for columns that are already codes (non-negative integers): the codes
    of their combinations in order of first appearance, without factorizing each column again (the anchored
    calibrator's cells of (group, system), once per fit)."""
    columns = [np.asarray(c) for c in codes]
    return _combine(columns, [int(c.max()) + 1 if c.size else 1 for c in columns])[0]


def _combine(columns: list[np.ndarray], widths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Codes (first appearance) and first rows of the combinations of code columns, each below its width: one
    integer per row, ranked through a table when small, else hashed; past 2**62 the tuples are hashed."""
    n_rows = len(columns[0])
    size = 1
    for width in widths:
        size *= width
    if size < _LIMIT:
        combined = columns[0].astype(np.int64)  # in place from here: no temporaries of n_rows
        for column, width in zip(columns[1:], widths[1:], strict=True):
            combined *= width
            combined += column
        if size <= _DENSE * max(n_rows, 1):
            return _dense_codes(combined, size)
        codes = pd.factorize(combined)[0].astype(np.intp)
    else:  # the overflow guard: hash the tuples of per-column codes
        codes = pd.factorize(pd.MultiIndex.from_arrays(columns))[0].astype(np.intp)
    return codes, _first_rows(codes, int(codes.max()) + 1 if n_rows else 0)


def _codes(values: Any, name: str, allow_missing: bool, where: str) -> tuple[np.ndarray, list, np.ndarray]:
    """Codes 0..k-1 of one column (only used values; a categorical's own small integer type), its
    distinct values as Python scalars, and the first row of each."""
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        uniques = list(values.cat.categories)
    else:
        codes, found = pd.factorize(pd.Series(values) if not isinstance(values, pd.Series) else values,
                                    use_na_sentinel=True)
        uniques = list(found)
    if not allow_missing and len(uniques) and isinstance(uniques[0], str):
        # a TSV's empty cell is its spelling of a missing value (read as ''), as a Parquet null is: the same
        # refusal, never a group or system named ''
        blank = np.flatnonzero(np.asarray(uniques, dtype=object) == "")
        if len(blank):
            codes = np.where(codes == blank[0], -1, codes)
    if (codes < 0).any():
        if not allow_missing:
            from ..exceptions import InputError

            row = int(np.flatnonzero(codes < 0)[0]) + 1
            raise InputError(f"{where}: group column {name!r} is empty at row {row} "
                             f"({int((codes < 0).sum())} row(s) in all); fill it in or drop those rows")
        codes = np.where(codes < 0, len(uniques), codes.astype(np.intp))
        uniques = uniques + [None]
    first = _first_rows(codes, len(uniques))
    used = first >= 0
    if len(codes) and not used.all():  # only a categorical has values no row uses
        codes = (np.cumsum(used) - 1)[codes]
        uniques = [u for u, keep in zip(uniques, used, strict=True) if keep]
        first = first[used]
    return codes, [python_value(u) for u in uniques], first


def _dense_codes(combined: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes in order of first appearance for values below ``size``, without hashing: a table of
    ``size`` entries maps each value present to its rank by first row."""
    first_of = _first_rows(combined, size)
    present = np.flatnonzero(first_of >= 0)
    order = np.argsort(first_of[present], kind="stable")
    remap = np.empty(size, dtype=np.intp)
    remap[present[order]] = np.arange(len(present))
    return remap[combined], first_of[present[order]]


def _first_rows(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """The first row of each code in 0..n_groups-1 (-1 for a code no row has). A prefix of the rows
    usually holds every group, so prefixes are searched first (thousands of rows, not millions)."""
    target, counted, size = n_groups, False, 4096
    while size < len(codes):
        found, rows = np.unique(codes[:size], return_index=True)
        if len(found) == target:
            first = np.full(n_groups, -1, dtype=np.int64)
            first[found] = rows
            return first
        if not counted:  # some code is not in the prefix: how many codes occur at all?
            target, counted = int(np.count_nonzero(np.bincount(codes, minlength=n_groups))), True
            continue
        size *= 16
    first = np.full(n_groups, -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)  # the last write wins: each group's first row
    return first


def groups_left_out(index: GroupIndex, keep: np.ndarray) -> str:
    """Words for the groups of ``index`` that ``keep`` (a row mask) leaves no row of (``""`` when every group keeps
    some): "(every row of en-zh: it has no score)", or "(every row of 29 groups, which have no score: cs-de-DE, ...
    and 21 more)"."""
    kept = np.bincount(index.codes[np.asarray(keep, dtype=bool)], minlength=index.n_groups) > 0
    names = index.labels()
    gone = sorted((names[g] for g in np.flatnonzero(~kept)), key=str)
    if not gone:
        return ""
    shown = ", ".join(str(g) for g in gone[:8]) + (f" and {len(gone) - 8} more" if len(gone) > 8 else "")
    return f" (every row of {shown}: it has no score)" if len(gone) == 1 else \
        f" (every row of {len(gone)} groups, which have no score: {shown})"


def python_value(value: Any) -> Any:
    """A numpy scalar as the Python value it is (7, not np.int64(7)); anything else as it is."""
    return value.item() if hasattr(value, "item") else value


def segment_rank(segments: pd.Series) -> np.ndarray:
    """Each row's segment as a rank: integer ids (or their text: '2' before '10') by value, other ids as text
    after them."""
    # numpy's text of every cell: pandas' string dtype keeps a missing id missing through astype(str), and a
    # missing id beside text ids cannot be sorted (the key checks refuse those; this order must not fail first)
    text = segments.to_numpy(dtype=object).astype(str)
    values, codes = np.unique(text, return_inverse=True)
    number = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy()
    integral = np.isfinite(number) & (np.floor(np.where(np.isfinite(number), number, 0)) == number)
    order = np.lexsort((values.astype(str), np.where(integral, number, 0.0), ~integral))
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank[codes.ravel()]


def canonical_order(groups: np.ndarray, systems: np.ndarray | None = None,
                    segment_ranks: np.ndarray | None = None, ties: Sequence[np.ndarray] = ()) -> np.ndarray:
    """Row positions sorted by group, system and segment (``segment_ranks``: :func:`segment_rank` of the segment
    ids), then by the ``ties`` (columns read as text, in turn), rows of one key in their order (a stable sort): so
    that no fold, label draw, resample or permutation depends on the order of the rows (the decision, the bias
    check, meta, the rows chosen for labelling)."""
    keys = [np.asarray(groups, dtype=object).astype(str)]
    if systems is not None:
        keys.append(np.asarray(systems, dtype=object).astype(str))
    if segment_ranks is not None:
        keys.append(np.asarray(segment_ranks))
    keys += [np.asarray(t, dtype=object).astype(str) for t in ties]
    return np.lexsort(keys[::-1])
