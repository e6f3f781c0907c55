"""Per-language agreement between score columns: judges with judges, or a judge with a metric.

For every group (language pair by default) and every pair of columns A, B, on the rows where both are finite:

* ``kendall``: Kendall's tau-b of the segment scores (ties handled as tau-b does: judges answer on a coarse grid);
* ``pearson``: Pearson's r of the segment scores;
* ``kappa``: Cohen's kappa, quadratically weighted, of the scores binned into ``bins`` ordered classes: an integer
  gives quantile bins of each column within the group (tied scores share a bin), so two columns on different
  scales are compared by rank class; a sequence of edges gives the same fixed bins to both (two judges on one
  0-100 scale);
* ``pairwise``: the share of pairs of systems that the two columns' system means (over the rows both scored)
  order the same way (a tie in one column and not the other is a disagreement);
* ``mean_a``/``mean_b``: the columns' means there, so a language where one judge is harsher stands out.

The same statistics over all rows pooled are the group ``*``; there ``systems`` and ``pairwise`` count (group,
system) units, so the pairs include systems of different languages: the comparisons a ranking across languages
makes. ``kappa`` pooled bins over all rows. Lower agreement in a language means the judges'
scores there are a weaker basis for comparing systems, and that ranking across languages on either of them
carries more judge-specific bias: calibrate per language (``xleval calibrate``) against human labels.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval._base.result import Result
from xleval.exceptions import InputError
from xleval.table import repeated_key_columns

__all__ = ["JudgeAgreement", "judge_agreement"]

POOLED = "*"  # the group label of the statistics over all rows
_COLUMNS = ["group", "a", "b", "n", "systems", "kendall", "pearson", "kappa", "pairwise", "mean_a", "mean_b"]


@dataclass(frozen=True, eq=False)
class JudgeAgreement(Result):
    """Agreement per group and pair of columns: ``table`` (one row per group and pair; columns ``group``, ``a``,
    ``b``, ``n``, ``systems``, ``kendall``, ``pearson``, ``kappa``, ``pairwise``, ``mean_a``, ``mean_b``; the
    pooled rows have group ``*``), ``by`` (the grouping column), ``bins`` (as given)."""

    table: Any
    by: str
    bins: Any
    columns: tuple[str, ...]

    def least_agreeing(self, k: int = 5, statistic: str = "kendall") -> Any:
        """The ``k`` groups (pooled row excluded) with the lowest ``statistic``, lowest first."""
        t = self.table
        return t[t["group"] != POOLED].sort_values(statistic).head(k).reset_index(drop=True)


def judge_agreement(df: Any, columns: Sequence[str], *, by: str = "lp", system: str = "system",
                    bins: int | Sequence[float] = 5) -> JudgeAgreement:
    """Agreement of every pair of ``columns`` in each ``by`` group of ``df``; see the module docstring. ``lp`` is
    derived from ``src_lang`` and ``tgt_lang`` when the table has no such column."""
    import pandas as pd

    from xleval.io import with_pair_column

    df = with_pair_column(df, by, "data")  # lp from the two codes (a table of `xleval ingest judge`)
    cols = list(dict.fromkeys(columns))
    if len(cols) < 2:
        raise InputError(f"columns: name two or more score columns to compare, got {list(columns)!r}",
                         argument="columns", value=list(columns))
    missing = [c for c in [*cols, by, system] if c not in df.columns]
    if missing:
        raise InputError(f"no column {missing[0]!r} in the table (columns: {list(df.columns)[:12]}); map yours with "
                         f"columns={{'YOUR_COLUMN': {missing[0]!r}}}", argument="columns", value=missing[0])
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer | Sequence):
        raise InputError(f"bins must be a number of classes or a sequence of edges, got {bins!r}", argument="bins",
                         value=bins)
    if isinstance(bins, int | np.integer):
        if bins < 2:
            raise InputError(f"bins must be at least 2 (quantile classes), got {bins}", argument="bins", value=bins)
    else:
        edges = np.asarray([float(e) for e in bins])
        if len(edges) < 3 or not np.all(np.diff(edges) > 0):
            raise InputError(f"bins as edges must be three or more increasing numbers, got {list(bins)!r}",
                             argument="bins", value=list(bins))
    from xleval._base.grouping import group_index
    from xleval.table import numeric_column, require_some_value

    # the one number parser: a cell that is not a number is an error naming its row, never a silent NaN
    values = {c: numeric_column(df, c, argument="columns") for c in cols}
    for c, v in values.items():
        require_some_value(v, c, argument="columns")
    # distinct labels for distinct keys (1 and "1" stay two groups)
    groups = np.asarray(group_index(df[[by]]).row_labels(), dtype=str)
    if POOLED in set(groups):  # the pooled rows would be two rows of one name, and each would hide the other
        row = int(np.flatnonzero(groups == POOLED)[0])
        raise InputError(f"column {by!r}: a group is named {POOLED!r} (first in data row {row + 1}), the name of all "
                         "groups pooled in the agreement table; rename that group in the table",
                         argument="by", value=by)
    systems = np.asarray(group_index(df[[system]]).row_labels(), dtype=str)
    if not isinstance(bins, int | np.integer):
        _check_in_edges(values, edges)
    if "seg_id" in df.columns:
        _check_unique_segments(df, by, system)
    rows = []
    labels = [*sorted(set(groups)), POOLED]
    # pooled, the units are (group, system): the pairs then include systems of different languages, the
    # comparisons a ranking across languages makes
    # a unit is the pair of codes, never the two labels joined by a separator: a tab in a group or system name
    # would make ("a\tb", "c") and ("a", "b\tc") one unit
    units = group_index(df[[by, system]]).codes
    for label in labels:
        sel = np.ones(len(df), dtype=bool) if label == POOLED else groups == label
        who = units if label == POOLED else systems
        for a, b in itertools.combinations(cols, 2):
            rows.append({"group": label, "a": a, "b": b, **_pair(values[a][sel], values[b][sel], who[sel], bins)})
    table = pd.DataFrame(rows, columns=_COLUMNS)
    return JudgeAgreement(table, by, bins if isinstance(bins, int) else tuple(bins), tuple(cols))


def _check_in_edges(values: dict[str, np.ndarray], edges: np.ndarray) -> None:
    # a score outside the fixed classes would be put in the first or last class without a word, and two judges
    # would "agree" on a 250 and a 90
    for column, v in values.items():
        outside = np.isfinite(v) & ((v < edges[0]) | (v >= edges[-1]))
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            raise InputError(f"column {column!r}: data row {row + 1}: score {v[row]:g} is outside the kappa classes "
                             f"[{edges[0]:g}, {edges[-1]:g}) of bins {edges.tolist()} ({int(outside.sum())} score(s) "
                             "outside); give edges that cover every score, or a number of quantile classes",
                             argument="bins", value=edges.tolist())


def _check_unique_segments(df: Any, by: str, system: str) -> None:
    # a segment given twice would count twice in every statistic and in the system means. A segment is keyed as
    # everywhere (the pair, the document where known, the system, seg_id: repeated_key_columns) within its group:
    # by tgt_lang, WMT25's cs-de and en-de rows share seg_ids in de-DE and are different segments
    key = list(dict.fromkeys([by, *(repeated_key_columns(df.columns, system=system) or [system, "seg_id"])]))
    later = df.duplicated(key, keep="first").to_numpy()
    if later.any():
        second = int(np.flatnonzero(later)[0])
        keys = df.groupby(key, dropna=False, sort=False).ngroup().to_numpy()
        rows = [int(np.flatnonzero(keys == keys[second])[0]), second]
        first = df.iloc[second]
        where = ", ".join(f"{c} {first[c]!r}" for c in key if c not in (system, "seg_id"))
        raise InputError(f"data rows {rows[0] + 1} and {rows[1] + 1} both hold segment {first['seg_id']!r} of system "
                         f"{first[system]!r} in {where}; keep one row per {', '.join(key)}",
                         argument="columns", value="seg_id")


def _pair(x: np.ndarray, y: np.ndarray, systems: np.ndarray, bins: int | Sequence[float]) -> dict[str, Any]:
    from scipy import stats

    ok = np.isfinite(x) & np.isfinite(y)
    x, y, systems = x[ok], y[ok], systems[ok]
    n = len(x)
    out: dict[str, Any] = {"n": n, "systems": len(set(systems)), "kendall": np.nan, "pearson": np.nan,
                           "kappa": np.nan, "pairwise": np.nan, "mean_a": np.nan, "mean_b": np.nan}
    if n == 0:
        return out
    out["mean_a"], out["mean_b"] = float(x.mean()), float(y.mean())
    if n >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        out["kendall"] = float(stats.kendalltau(x, y).statistic)
        out["pearson"] = float(np.corrcoef(x, y)[0, 1])
    out["kappa"] = _weighted_kappa(_bin(x, bins), _bin(y, bins))
    out["pairwise"] = _pairwise(x, y, systems)
    return out


def _bin(x: np.ndarray, bins: int | Sequence[float]) -> np.ndarray:
    """Ordered classes 0..k-1: quantile classes of the ranks (ties share a class), or fixed edges."""
    if isinstance(bins, int | np.integer):
        from scipy.stats import rankdata

        ranks = rankdata(x, method="average")
        return np.minimum((ranks - 0.5) * bins // len(x), bins - 1).astype(np.int64)
    edges = np.asarray([float(e) for e in bins])
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2).astype(np.int64)


def _weighted_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights (1 - ((i - j) / (k - 1))**2 agreement credit)."""
    k = int(max(a.max(), b.max())) + 1
    if k < 2:
        return np.nan
    observed = np.zeros((k, k))
    np.add.at(observed, (a, b), 1.0)
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    weights = ((i - j) / (k - 1)) ** 2  # disagreement weights
    denominator = (weights * expected).sum()
    return float(1 - (weights * observed).sum() / denominator) if denominator > 0 else np.nan


def _pairwise(x: np.ndarray, y: np.ndarray, systems: np.ndarray) -> float:
    names, codes = np.unique(systems, return_inverse=True)
    if len(names) < 2:
        return np.nan
    counts = np.bincount(codes)
    mx = np.bincount(codes, weights=x) / counts
    my = np.bincount(codes, weights=y) / counts
    i, j = np.triu_indices(len(names), k=1)
    return float(np.mean(np.sign(mx[i] - mx[j]) == np.sign(my[i] - my[j])))
