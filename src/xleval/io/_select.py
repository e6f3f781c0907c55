"""Row selection by ``COLUMN=VALUE`` conditions (the ``--where`` filter of ``xleval fairness gaps``)."""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from ..exceptions import InputError

__all__ = ["select_rows"]


def select_rows(df: pd.DataFrame, conditions: Iterable[str] | None) -> pd.DataFrame:
    """Keep the rows where every ``"COLUMN=VALUE"`` condition holds (all must hold).

    Values are compared as text (``is_human=False`` matches a boolean column), so a condition means
    what it says on the command line; ``src_lang`` and ``tgt_lang`` of a table with ``lp`` only are its
    pairs' sides, compared as normalised language codes. A condition that names no column of ``df``, or that leaves no
    row, is an :class:`~xleval.exceptions.InputError`: an empty selection is always a typo, never a
    result. The index of the kept rows is preserved.
    """
    for cond in conditions or ():
        column, sep, value = cond.partition("=")
        derived = column in ("src_lang", "tgt_lang") and column not in df.columns and "lp" in df.columns
        if not sep or (column not in df.columns and not derived):
            raise InputError(f"condition {cond!r} (conditions=): expected COLUMN=VALUE with a column of the table "
                             f"({list(df.columns)})", argument="conditions", value=cond)
        if derived:  # the language of the pair's side, as every command derives it from lp (codes normalised)
            from .langs import add_language_columns, normalize_code

            values = add_language_columns(df[["lp"]])[column].astype(str)
            kept = df[values.to_numpy() == normalize_code(value)]
        else:
            values = df[column].astype(str)
            kept = df[values.to_numpy() == value]
        if len(kept) == 0:
            raise InputError(f"condition {cond!r} (conditions=) leaves no rows; values of {column!r} are e.g. "
                             f"{sorted(values.unique())[:5]}", argument="conditions", value=cond)
        df = kept
    return df
