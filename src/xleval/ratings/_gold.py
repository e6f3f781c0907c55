"""Gold scores onto the evaluation table, and mixed gold: one human column whose scale may differ by
language pair (WMT25: MQM for some pairs, ESA for the rest), with the scale of each pair kept beside it.

Scores on different scales can be compared within a language pair (every system of the pair has the
same scale) but not across pairs: :func:`gold_scales` tells which scale each group has, so a caller can
refuse or flag cross-group comparisons on mixed gold.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError

__all__ = ["attach_gold", "combine_gold", "gold_scales"]


def attach_gold(table: pd.DataFrame, gold: pd.DataFrame, columns: Sequence[str],
                keys: Sequence[str]) -> pd.DataFrame:
    """``table`` with ``columns`` of ``gold`` added, matched on ``keys`` (compared as text, so a ``seg_id``
    read as ``1`` in one file and ``"1"`` or ``1.0`` in the other still match). Rows of ``table`` without a rating
    get NaN (sparse labels are normal); ratings that match no row are counted in a
    :class:`DataQualityWarning`. A column of ``table`` with a name in ``columns`` is refused, not replaced."""
    missing = [k for k in keys if k not in table.columns]
    if missing:
        raise InputError(f"gold scores: the table has no {', '.join(repr(k) for k in missing)} column to match "
                         f"the ratings on (ratings are keyed by {', '.join(keys)}); add or rename that column of "
                         "the table")
    clash = [c for c in columns if c in table.columns]
    if clash:
        raise InputError(f"gold scores: the table already has a column {clash[0]!r}: drop or rename it first, or "
                         "attach the scores to a table without it; xleval does not replace a column")
    left = _text_keys(table, keys)
    right = _text_keys(gold, keys)
    index = pd.MultiIndex.from_frame(right)
    if index.has_duplicates:
        raise InputError("gold scores: a segment is rated twice in the ratings table "
                         f"({', '.join(keys)} repeat); pool raters first")
    position = index.get_indexer(pd.MultiIndex.from_frame(left))
    matched = position >= 0
    n_unmatched = len(gold) - len(set(position[matched].tolist()))
    if n_unmatched:
        warnings.warn(f"gold scores: {n_unmatched} of {len(gold)} rated segments match no row of the table "
                      f"(matched on {', '.join(keys)}); check the language pair, system names and segment ids",
                      DataQualityWarning, stacklevel=2)
    out = table.copy()
    take = position.clip(min=0)
    for col in columns:
        out[col] = pd.Series(gold[col].to_numpy()[take], index=out.index).where(matched)
    return out


def _text_keys(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({k: [_key_text(v) for v in frame[k].to_numpy()] for k in keys})


def _key_text(value) -> str:
    """A key as text: a whole number read as a float (``1.0`` from JSON, or a column with a gap) is ``1``, as the
    same id read as an integer is."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def combine_gold(table: pd.DataFrame, sources: Mapping[str, str], *, name: str = "human",
                 by: str = "lp") -> pd.DataFrame:
    """One gold column ``name`` from several (``sources``: column -> its scale column), each group of ``by``
    taking its values from the one source that rates it; ``{name}_scale`` says which scale each row has.
    A group rated in two sources is refused: pick one per group."""
    if not sources:
        raise InputError("combine_gold: give at least one gold column")
    for col, scale in sources.items():
        for c in (col, scale):
            if c not in table.columns:
                raise InputError(f"combine_gold: no column {c!r} in the table")
    if by not in table.columns:
        raise InputError(f"combine_gold: no column {by!r} to take the gold scale per group from")
    for new in (name, f"{name}_scale"):
        if new in table.columns:
            raise InputError(f"combine_gold: the table already has a column {new!r}; name the combined gold "
                             "otherwise (name=)", argument="name", value=name)
    has = {col: table.loc[table[col].notna(), by].astype(str).unique().tolist() for col in sources}
    owner: dict[str, str] = {}
    for col, groups in has.items():
        for g in groups:
            if g in owner:
                raise InputError(f"mixed gold: {by} {g!r} has gold in both {owner[g]!r} and {col!r}; mixed gold "
                                 "takes one scale per group: drop one of them for this group")
            owner[g] = col
    out = table.copy()
    group = out[by].astype(str)
    values = pd.Series(float("nan"), index=out.index)
    scales = pd.Series(pd.NA, index=out.index, dtype=object)
    for col, scale in sources.items():
        rows = group.map(lambda g, c=col: owner.get(g) == c).to_numpy(dtype=bool)
        values[rows] = _numbers(out[col], rows, col)
        scales[rows] = out.loc[rows, scale]
        unnamed = rows & values.notna().to_numpy() & (out[scale].isna() | (out[scale].astype(str).str.strip() == "")
                                                       ).to_numpy()
        if unnamed.any():  # the combined column would hold a score of no stated scale
            first = int(unnamed.nonzero()[0][0])
            raise InputError(f"combine_gold: row {first + 1} has gold in {col!r} but no scale in {scale!r} "
                             f"({int(unnamed.sum())} such row(s)); name the scale of every rated row")
    out[name] = values
    out[f"{name}_scale"] = scales
    return out


def _numbers(cells: pd.Series, rows, col: str) -> pd.Series:
    """The ``rows`` of a gold column as numbers; a cell that is there but not a number is refused (never read as
    missing)."""
    numbers = pd.to_numeric(cells, errors="coerce")
    bad = (numbers.isna() & cells.notna() & (cells.astype(str).str.strip() != "")).to_numpy() & rows
    if bad.any():
        first = int(bad.nonzero()[0][0])
        raise InputError(f"combine_gold: column {col!r} row {first + 1} holds {cells.iloc[first]!r}, not a number "
                         f"({int(bad.sum())} such cell(s)); a gold score is a number or empty: fix those cells")
    return numbers[rows].astype(float)


def gold_scales(table: pd.DataFrame, *, scale: str, by: str = "lp") -> dict[str, str]:
    """The gold scale of each group (rows without a scale ignored); a group with two scales is refused."""
    rated = table.loc[table[scale].notna(), [by, scale]].astype(str)
    per_group = rated.groupby(by, sort=True)[scale].unique()
    out: dict[str, str] = {}
    for g, values in per_group.items():
        if len(values) > 1:
            raise InputError(f"gold scales: {by} {g!r} has {len(values)} scales ({'; '.join(values)}) in column "
                             f"{scale!r}; a group's systems must be judged on one scale")
        out[str(g)] = str(values[0])
    return out
