"""A meta-evaluation as text (WMT-style tables: groups x metrics, one per statistic), TSV (tidy),
JSON and LaTeX. Numbers through :mod:`xleval._base.numbers` (one precision per column); names from
the data shown with their control characters escaped (text) or LaTeX-escaped (LaTeX)."""
from __future__ import annotations

import re
from typing import Any

from .._base.numbers import MISSING, format_column
from .._base.terminal import visible_controls
from ._results import STATISTICS, MetaEvaluation

__all__ = ["render_text", "render_latex", "to_json"]


def _label(metric: str, result: MetaEvaluation) -> str:
    """A metric's column header: the common prefix (e.g. ``metric:``) dropped when every metric has it."""
    prefix = _prefix(result.metrics)
    return metric[len(prefix):] if prefix and len(metric) > len(prefix) else metric


def _prefix(names: tuple[str, ...]) -> str:
    first = names[0]
    cut = first.find(":") + 1
    return first[:cut] if cut and all(n.startswith(first[:cut]) for n in names) else ""


def _grid(result: MetaEvaluation, statistic: str) -> tuple[list[str], list[list[str]]]:
    groups = sorted({c.group for c in result.cells if c.statistic == statistic})
    header = [result.by] + [_label(m, result) for m in result.metrics]
    columns = [format_column([result.value(g, m, statistic) for g in groups]) for m in result.metrics]
    rows = [[g] + [col[i] for col in columns] for i, g in enumerate(groups)]
    return header, rows


def _plain_table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    header = [visible_controls(h, name=True) for h in header]
    rows = [[visible_controls(c, name=True) for c in r] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
    return [title, line(header), "  ".join("-" * w for w in widths), *[line(r) for r in rows], ""]


def _across_rows(result: MetaEvaluation) -> tuple[list[str], list[list[str]]]:
    header = ["metric", "global acc", "95% CI", "cross-group acc", "95% CI"]
    glob = [result.global_accuracy.get(m) for m in result.metrics]
    cross = [result.cross_accuracy.get(m) for m in result.metrics]
    cols = []
    for cells in (glob, cross):
        cols.append(format_column([c.value if c is not None else None for c in cells]))
        lows = format_column([c.ci_low if c is not None else None for c in cells] +
                             [c.ci_high if c is not None else None for c in cells])
        n = len(cells)
        cols.append([MISSING if lows[i] == MISSING else f"{lows[i]} to {lows[n + i]}" for i in range(n)])
    rows = [[_label(m, result)] + [col[i] for col in cols] for i, m in enumerate(result.metrics)]
    return header, rows


def render_text(result: MetaEvaluation) -> str:
    """Every statistic as a WMT-style table (one row per group, one column per metric), then the
    accuracies across groups with their CIs, then the notes (what the numbers rest on)."""
    scales = sorted({str(v.get("scale")) for v in result.groups.values()})
    lines = [f"Meta-evaluation of {len(result.metrics)} metric(s) against {result.human} by {result.by}: "
             f"{len(result.groups)} groups; system scores: {_how(result)}; human scale(s): {', '.join(scales)}", ""]
    for stat in result.statistics():
        lines += _plain_table(f"{stat}: {STATISTICS[stat][1]}", *_grid(result, stat))
    lines += _plain_table(f"Across groups (CIs: systems resampled within groups, {result.n_resamples} resamples, "
                          f"seed {result.random_state})", *_across_rows(result))
    lines += [f"note: {n}" for n in result.notes]
    return "\n".join(visible_controls(x) for x in lines).rstrip("\n") + "\n"


def _how(result: MetaEvaluation) -> str:
    return {"complete": "means over the segments judged for every system of the group",
            "judged": "means over each system's judged segments",
            "table": "the table's own (system-level table)"}[result.system_scores]


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return re.sub(r"[\\&%$#_{}~^]", lambda m: _LATEX[m.group()], visible_controls(text))


def render_latex(result: MetaEvaluation) -> str:
    """One ``tabular`` per statistic (groups x metrics) and one for the accuracies across groups."""
    out = []
    tables = [(f"{s}: {STATISTICS[s][1]}", *_grid(result, s)) for s in result.statistics()]
    tables.append(("accuracy across groups (95 percent CI)", *_across_rows(result)))
    for title, header, rows in tables:
        out += [f"% {_tex(title)}", "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
                "\\toprule", " & ".join(_tex(h) for h in header) + " \\\\", "\\midrule"]
        out += [" & ".join(_tex(c).replace(MISSING, "--") for c in r) + " \\\\" for r in rows]
        out += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(out)


def to_json(result: MetaEvaluation, warnings: list[str] | None = None) -> dict[str, Any]:
    return {**result.to_dict(), "warnings": list(warnings or [])}
