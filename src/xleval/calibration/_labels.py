"""The label round trip's last step: filled-in labels back into the scored table.

``calibrate select`` (or ``calibrate plan``) writes the rows to annotate with their key: the group
columns, ``system`` and ``seg_id`` (the rows' identity: unchanged when the table is sorted or filtered) and
``row_id`` (the row's 0-based position in the table the rows were chosen from). :func:`merge_labels` joins
the labels back on the identity columns both files have when they name one row of the table each, else on
``row_id``; where both files carry the hypothesis, it must be the same text (a label judges that text). A
label that matches no row, a row labelled twice with different values, or a label that would replace a
different value already in the table is refused, never dropped or overwritten in silence.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._base.grouping import python_value
from .._base.result import Result
from ..exceptions import InputError

__all__ = ["merge_labels", "LabelMerge", "IDENTITY_COLUMNS"]

#: the columns that name a row, in the order they are tried (those both files have are used together)
IDENTITY_COLUMNS = ("lp", "src_lang", "tgt_lang", "domain", "system", "doc_id", "seg_id")


@dataclass(frozen=True, eq=False)
class LabelMerge(Result):
    """What :func:`merge_labels` did: ``on`` the columns joined on, ``n_labels`` filled-in labels read (an
    empty label is not one), and of the rows they label (a row labelled twice with one value counts once)
    ``n_new`` values added, ``n_same`` already in the table with the same value, ``n_replaced`` replaced
    (``overwrite``); ``notes``: labels placed by ``row_id`` where their keys matched no row."""

    on: tuple[str, ...]
    label_column: str
    into: str
    n_labels: int
    n_new: int
    n_same: int
    notes: tuple[str, ...] = ()
    n_replaced: int = 0

    def sentence(self) -> str:
        replaced = f", {self.n_replaced} replaced" if self.n_replaced else ""
        twice = self.n_labels - self.n_new - self.n_same - self.n_replaced
        again = f" ({twice} label(s) repeat a row's label)" if twice else ""
        return (f"merged {self.n_labels} label(s) from {self.label_column!r} into column {self.into!r} on "
                f"{', '.join(self.on)}: {self.n_new} new, {self.n_same} already there{replaced}{again}")


def merge_labels(table: pd.DataFrame, labels: pd.DataFrame, *, label_column: str = "human", into: str | None = None,
                 on: Sequence[str] | None = None, overwrite: bool = False) -> tuple[pd.DataFrame, LabelMerge]:
    """``table`` with the filled-in ``label_column`` of ``labels`` in column ``into`` (default: the same name),
    and what was merged. ``on``: the key columns (default: the identity columns both frames have, when they
    name one row of ``table`` each; else ``row_id``). Rows of ``labels`` with an empty label are skipped.

    Refused (:class:`~xleval.exceptions.InputError`): a label that matches no row, two labels for one row,
    a label whose hypothesis differs from the row's, a non-numeric label, and a label that would replace a
    different value of ``into`` unless ``overwrite``."""
    into = into or label_column
    if label_column not in labels.columns:
        raise InputError(f"the labels have no column {label_column!r} (columns: {list(labels.columns)}); name the "
                         "column the annotators filled in (label_column=)", argument="label_column",
                         value=label_column)
    values = pd.to_numeric(labels[label_column], errors="coerce")
    bad = labels[label_column].notna() & values.isna() & (labels[label_column].astype(str).str.strip() != "")
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"label row {_line(labels, i)} (counting the header as 1): {labels[label_column].iloc[i]!r} "
                         f"in {label_column!r} is not a number; labels are numbers (an empty cell = not labelled)",
                         argument="labels", value=labels[label_column].iloc[i])
    infinite = np.flatnonzero(np.isinf(values.to_numpy(dtype=float)))
    if infinite.size:  # a number to pandas ('inf', 1e999): merged, only `calibrate fit` would refuse it
        i = int(infinite[0])
        raise InputError(f"label row {_line(labels, i)} (counting the header as 1): {labels[label_column].iloc[i]!r} "
                         f"in {label_column!r} is not a finite number ({infinite.size} such label(s)); a label is a "
                         "finite number on the human scale (an empty cell = not labelled)", argument="labels",
                         value=labels[label_column].iloc[i])
    filled = labels.loc[values.notna().to_numpy()]
    values = values[values.notna()].to_numpy(dtype=float)
    keys = _key(table, labels, on)
    notes: list[str] = []
    rows = _rows_of(table, filled, keys, notes=notes if on is None else None)
    _same_texts(table, filled, rows)
    order = np.argsort(rows, kind="stable")
    twice = np.flatnonzero(np.diff(rows[order]) == 0)
    if twice.size:
        a, b = order[twice[0]], order[twice[0] + 1]
        if values[a] != values[b]:
            raise InputError(f"two labels for one row of the table ({_describe(filled, a, keys)}): {values[a]:g} and "
                             f"{values[b]:g}; keep one", argument="labels")
    current = (pd.to_numeric(table[into], errors="coerce").to_numpy(dtype=float) if into in table.columns
               else np.full(len(table), np.nan))
    old = current[rows]
    differs = ~np.isnan(old) & (old != values)
    if differs.any() and not overwrite:
        i = int(np.flatnonzero(differs)[0])
        raise InputError(f"the table already has {into!r} = {old[i]:g} where the labels say {values[i]:g} "
                         f"({_describe(filled, i, keys)}; {int(differs.sum())} such row(s)); merge into another column "
                         "(into=) or replace them (overwrite=True)", argument="overwrite", value=False)
    out = table.copy()
    merged = current.copy()
    merged[rows] = values
    out[into] = merged
    once = np.unique(rows, return_index=True)[1]  # a row labelled twice (the same value) is one row merged
    had, replaced = ~np.isnan(old[once]), differs[once]
    summary = LabelMerge(on=tuple(keys), label_column=label_column, into=into, n_labels=len(values),
                         n_new=int((~had).sum()), n_same=int((had & ~replaced).sum()), notes=tuple(notes),
                         n_replaced=int(replaced.sum()))
    return out, summary


def _key(table: pd.DataFrame, labels: pd.DataFrame, on: Sequence[str] | None) -> list[str]:
    if on is not None:
        keys = [on] if isinstance(on, str) else list(on)
        for side, frame in (("table", table), ("labels", labels)):
            missing = [k for k in keys if k not in frame.columns and not (k == "row_id" and side == "table")]
            if missing:
                has = "has" if side == "table" else "have"
                raise InputError(f"on={keys!r}: the {side} {has} no column {missing[0]!r}", argument="on",
                                 value=missing[0], about=side)
        return keys
    keys = [c for c in IDENTITY_COLUMNS if c in table.columns and c in labels.columns]
    if keys and "system" in keys and "seg_id" in keys and not table.duplicated(keys).any():
        return keys
    if "row_id" in labels.columns:
        return ["row_id"]
    raise InputError(f"the labels cannot be matched to rows: they have no row_id, and the columns both files have "
                     f"({keys or 'none'}) do not name one row of the table each; keep the row_id column that "
                     "`calibrate select` writes", argument="labels")


def _rows_of(table: pd.DataFrame, labels: pd.DataFrame, keys: list[str], *,
             notes: list[str] | None = None) -> np.ndarray:
    """The table position of each label row; a label matching none is refused. ``notes``: where labels match no row
    on the identity columns, :func:`_by_row_id` may place them, said there (None: no such fall-back)."""
    if keys == ["row_id"]:
        ids, ok = _row_ids(labels, len(table))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise InputError(f"{int((~ok).sum())} label(s) match no row of the table: row_id "
                             f"{labels['row_id'].iloc[i]!r} is not a row (the table has rows 0 to {len(table) - 1}); "
                             "merge into the table the rows were selected from", argument="labels")
        return ids
    left = pd.DataFrame({k: _text_key(table[k]) for k in keys}).assign(_pos=np.arange(len(table)))
    right = pd.DataFrame({k: _text_key(labels[k]) for k in keys})
    joined = right.merge(left, on=keys, how="left", validate="many_to_one")
    missing = joined["_pos"].isna().to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        placed = _by_row_id(table, labels, joined["_pos"].to_numpy(dtype=float)) if notes is not None else None
        if placed is not None and notes is not None:
            notes.append(
                f"{int(missing.sum())} label(s) match no row on {', '.join(keys)} (the first, "
                f"{_describe(labels, i, keys)}: a key rewritten since `calibrate select`, as a spreadsheet or pandas "
                "rewrites ids like 007 or trailing spaces); placed by their row_id, where the hypothesis is the text "
                "they judged and every label the keys match agrees")
            return placed
        raise InputError(f"{int(missing.sum())} label(s) match no row of the table on {', '.join(keys)}: the first, "
                         f"{_describe(labels, i, keys)}; merge into the table the rows were selected from",
                         argument="labels")
    return joined["_pos"].to_numpy(dtype=np.int64)


def _by_row_id(table: pd.DataFrame, labels: pd.DataFrame, matched: np.ndarray) -> np.ndarray | None:
    """The rows of the labels by their ``row_id``, where that placing can be checked: every id is a row, the
    labels and the table carry the hypothesis and it is the same text at every row, and every label the identity
    columns did match (``matched``: its position, NaN where none) has that row. Else None."""
    if "row_id" not in labels.columns or "hypothesis" not in labels.columns or "hypothesis" not in table.columns:
        return None
    rows, ok = _row_ids(labels, len(table))
    keyed = np.isfinite(matched)
    if not ok.all() or (matched[keyed] != rows[keyed]).any():
        return None  # not rows of this table, or the table was re-sorted or filtered since: row_id names other rows
    return None if _texts_differ(table, labels, rows).any() else rows


def _row_ids(labels: pd.DataFrame, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Each label's ``row_id`` as a position (0 where it is none) and whether it is a row of a table of ``n_rows``."""
    ids = pd.to_numeric(labels["row_id"], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(ids) & (ids == np.round(ids)) & (ids >= 0) & (ids < n_rows)
    return np.where(ok, ids, 0).astype(np.int64), ok


def _texts_differ(table: pd.DataFrame, labels: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Whether each label's hypothesis differs from the table's at its row (both frames have the column)."""
    theirs = labels["hypothesis"].fillna("").astype(str).to_numpy()
    return theirs != table["hypothesis"].fillna("").astype(str).to_numpy()[rows]


def _same_texts(table: pd.DataFrame, labels: pd.DataFrame, rows: np.ndarray) -> None:
    if "hypothesis" not in table.columns or "hypothesis" not in labels.columns:
        return
    differ = _texts_differ(table, labels, rows)
    if differ.any():
        i = int(np.flatnonzero(differ)[0])
        raise InputError(f"{int(differ.sum())} label(s) judged another hypothesis than the table's row they match "
                         f"(the first: label row {_line(labels, i)}, counting the header as 1); the table changed "
                         "since the rows were selected: merge into the table they were selected from",
                         argument="labels")


def _text_key(values: pd.Series) -> np.ndarray:
    """A key column as text that is the same whichever file it came from: whole numbers without '.0'
    (a seg_id read as float where a value is missing), other values as written."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        x = values.to_numpy(dtype=float)
        whole = np.isfinite(x) & (x == np.round(x))
        return np.where(whole, np.round(np.where(whole, x, 0)).astype(np.int64).astype(str), x.astype(str))
    return values.astype(str).to_numpy()


def _line(labels: pd.DataFrame, i: int) -> int:
    """The file line of the i-th label row (the header is line 1), when the labels were read with their row
    numbers as index."""
    label = labels.index[i]
    return int(label) + 2 if isinstance(label, (int, np.integer)) else i + 2


def _describe(labels: pd.DataFrame, i: int, keys: list[str]) -> str:
    return ", ".join(f"{k}={python_value(labels[k].iloc[i])!r}" for k in keys)
