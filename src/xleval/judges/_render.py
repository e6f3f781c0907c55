"""A :class:`JudgeAgreement` in words and tables, for the commands that show it beside other results (``xleval
meta``; the report lays out its own section from the same rows and sentences).

:func:`agreement_rows` orders the groups (lowest agreement first, the pooled row ``*`` last);
:func:`agreement_findings` states, for each pair of columns, where they agree least and most, where one is
the more lenient, and what the pooled pairwise agreement says about a ranking across groups;
:func:`agreement_text` is both as plain text; :func:`agreement_tidy` is the rows in ``xleval meta``'s tidy form.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._agree import POOLED

if TYPE_CHECKING:
    from ._agree import JudgeAgreement

__all__ = ["agreement_rows", "agreement_findings", "agreement_text", "agreement_tidy", "STATISTIC_COLUMNS"]

#: the statistics of a row, in the order they are shown
STATISTIC_COLUMNS = ("kendall", "pearson", "kappa", "pairwise")


def agreement_rows(result: JudgeAgreement, sort: str = "kendall") -> list[dict[str, Any]]:
    """One dict per group and pair of columns: groups by ``sort`` (lowest first; ``group``: by name), then each
    pair's pooled row ``*``."""
    t = result.table
    groups, pooled = t[t["group"] != POOLED], t[t["group"] == POOLED]
    keys = ["a", "b", "group"] if sort == "group" else ["a", "b", sort, "group"]
    ordered = groups.sort_values(keys, kind="stable")
    rows = []
    for (a, b), part in ordered.groupby(["a", "b"], sort=False):
        rows += part.to_dict(orient="records")
        rows += pooled[(pooled["a"] == a) & (pooled["b"] == b)].to_dict(orient="records")
    return rows


def _f(value: float, digits: int = 3) -> str:
    return "n/a" if value != value else f"{value:.{digits}f}"


def _one_scale(mean_a: float, mean_b: float) -> bool:
    """Whether two columns' pooled means look like one scale (same sign, within a factor 2): only then is the
    difference of their means an offset worth stating (two judges on 0-100, not a judge and MetricX)."""
    return bool(mean_a * mean_b > 0 and 0.5 <= mean_a / mean_b <= 2)


def agreement_findings(result: JudgeAgreement, statistic: str = "kendall") -> list[str]:
    """Sentences per pair of columns: the groups of lowest and highest ``statistic``, the largest mean offsets
    either way (when the two columns' pooled means look like one scale: same sign, within a factor 2), and the
    pooled system-order agreement against the groups' median."""
    t = result.table
    out = []
    for (a, b), part in t.groupby(["a", "b"], sort=False):
        groups = part[(part["group"] != POOLED) & part[statistic].notna()].sort_values([statistic, "group"])
        pooled = part[part["group"] == POOLED].iloc[0]
        if groups.empty:
            out.append(f"{a} and {b}: no {result.by} group with scores of both.")
            continue
        low, high = groups.iloc[0], groups.iloc[-1]
        text = (f"{a} and {b} agree least in {low['group']} ({statistic} {_f(low[statistic])}, "
                f"{_f(100 * low['pairwise'], 1)}% of system pairs ordered alike) and most in {high['group']} "
                f"({_f(high[statistic])}); pooled {_f(pooled[statistic])}.")
        offset = (groups["mean_a"] - groups["mean_b"]).to_numpy()
        if len(groups) > 1 and _one_scale(pooled["mean_a"], pooled["mean_b"]):
            hi, lo = groups.iloc[int(offset.argmax())], groups.iloc[int(offset.argmin())]
            text += (f" Mean {a} - {b} ranges from {offset.min():+.1f} ({lo['group']}) to {offset.max():+.1f} "
                     f"({hi['group']}): a per-{result.by} offset that a ranking across groups on either column "
                     "takes for quality.")
        median = float(groups["pairwise"].median())
        if len(groups) > 1 and pooled["pairwise"] == pooled["pairwise"] and median == median:
            text += (f" Across groups they order {_f(100 * pooled['pairwise'], 1)}% of (group, system) pairs "
                     f"alike, against a median of {_f(100 * median, 1)}% within a group.")
        out.append(text)
    return out


def agreement_text(result: JudgeAgreement, sort: str = "kendall") -> str:
    """The rows as a plain-text table (names with their control characters escaped), then the findings."""
    from xleval._base.numbers import format_column
    from xleval._base.terminal import visible_controls

    rows = agreement_rows(result, sort)
    header = [result.by, "a", "b", "n", "systems", *STATISTIC_COLUMNS, "mean_a", "mean_b"]
    keys = ["group", "a", "b", "n", "systems", *STATISTIC_COLUMNS, "mean_a", "mean_b"]
    cols = [format_column([r[k] for r in rows], k) for k in keys]
    cells = [[visible_controls(str(h), name=True) for h in header],
             *[[visible_controls(c[i], name=True) for c in cols] for i in range(len(rows))]]
    widths = [max(len(r[j]) for r in cells) for j in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if j < 3 else c.rjust(w)  # noqa: E731
                               for j, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
    bins = (f"{result.bins} quantile classes per column and group" if isinstance(result.bins, int)
            else f"fixed classes {list(result.bins)}")
    lines = [f"Judges per {result.by}: agreement of {', '.join(result.columns)} (lowest {sort} first; * = pooled "
             "over every group)", line(cells[0]), "  ".join("-" * w for w in widths), *[line(r) for r in cells[1:]],
             "", f"kendall: tau-b of segment scores; kappa: quadratic weights on {bins}; pairwise: share of system "
             "pairs ordered alike by the two columns' means (pooled: (group, system) pairs across groups).",
             *[visible_controls(s) for s in agreement_findings(result)], ""]
    return "\n".join(lines)


def agreement_tidy(result: JudgeAgreement) -> Any:
    """``group, metric, statistic, value, ci_low, ci_high, n`` (``xleval meta``'s tidy columns): metric
    ``A~B``, statistic ``judges_kendall``, ``judges_pearson``, ``judges_kappa``, ``judges_pairwise``,
    ``judges_mean_a``, ``judges_mean_b``; no intervals."""
    import numpy as np
    import pandas as pd

    rows = [{"group": r["group"], "metric": f"{r['a']}~{r['b']}", "statistic": f"judges_{s}", "value": r[s],
             "ci_low": np.nan, "ci_high": np.nan, "n": r["n"]}
            for r in result.table.to_dict(orient="records") for s in (*STATISTIC_COLUMNS, "mean_a", "mean_b")]
    return pd.DataFrame(rows, columns=["group", "metric", "statistic", "value", "ci_low", "ci_high", "n"])
