"""Figure builders for the report (matplotlib imported lazily; each returns a Figure, never shows it)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["length_scatter", "vocab_lines"]


def length_scatter(lang_table: pd.DataFrame, metrics: Sequence[str] = ("sent_nll", "bpb"),
                   length: str = "bytes_per_sentence") -> Any:
    """One panel per metric: language-level metric against a length measure, one point per
    (language, setting), labelled by language."""
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    fig = Figure(figsize=(4 * len(metrics), 3.4), layout="constrained")
    for ax, metric in zip(fig.subplots(1, len(metrics), squeeze=False)[0], metrics, strict=True):
        ax.scatter(lang_table[length], lang_table[metric], s=14)
        for _, row in lang_table.drop_duplicates("lang").iterrows():
            ax.annotate(str(row["lang"]), (row[length], row[metric]), fontsize=7)
        ax.set_xlabel(length.replace("_", " "))
        ax.set_ylabel(metric)
    return fig


def vocab_lines(lang_table: pd.DataFrame, metric: str = "ppl", vocab_col: str = "vocab_size") -> Any:
    """The metric of each language across vocabulary sizes (a flat line = insensitive)."""
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    fig = Figure(figsize=(4.5, 3.4), layout="constrained")
    ax = fig.subplots()
    for lang, t in lang_table.sort_values(vocab_col).groupby("lang"):
        ax.plot(t[vocab_col], t[metric], marker="o", label=str(lang))
    ax.set_xlabel(vocab_col.replace("_", " "))
    ax.set_ylabel(metric)
    ax.legend(fontsize=6, ncols=2)
    return fig
