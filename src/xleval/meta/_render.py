"""A meta-evaluation as text (WMT-style tables: groups x metrics, one per statistic), TSV (tidy),
JSON and LaTeX. Numbers through :mod:`xleval._base.numbers` (one precision per column); names from
the data shown with their control characters escaped (text) or LaTeX-escaped (LaTeX)."""
from __future__ import annotations

import re
from typing import Any

from .._base.numbers import MISSING, format_column
from .._base.terminal import visible_controls
from ._results import STATISTICS, MetaEvaluation

__all__ = ["render_text", "render_latex", "to_json", "to_frame"]


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
    names = result.columns(statistic)
    header = [result.by] + [_label(m, result) if names is result.metrics else m for m in names]
    found = {(c.group, c.metric): c for c in result.cells if c.statistic == statistic}
    columns = []
    for m in names:
        cells = [found.get((g, m)) for g in groups]
        values = format_column([c.value if c is not None else None for c in cells])
        chance = format_column([c.chance if c is not None else None for c in cells])
        columns.append([v + ("" if c is None or c.rank is None else f" [{c.rank}]")
                        + ("" if c is None or ch == MISSING else f" ~{ch}")
                        for v, c, ch in zip(values, cells, chance, strict=True)])
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
        values = format_column([c.value if c is not None else None for c in cells])
        chance = format_column([c.chance if c is not None else None for c in cells])
        cols.append([v + ("" if c is None or c.rank is None else f" [{c.rank}]")
                     + ("" if c is None or ch == MISSING else f" ~{ch}")
                     for v, c, ch in zip(values, cells, chance, strict=True)])
        lows = format_column([c.ci_low if c is not None else None for c in cells] +
                             [c.ci_high if c is not None else None for c in cells])
        n = len(cells)
        cols.append([MISSING if lows[i] == MISSING else f"{lows[i]} to {lows[n + i]}" for i in range(n)])
    rows = [[_label(m, result)] + [col[i] for col in cols] for i, m in enumerate(result.metrics)]
    return header, rows


def _relative_rows(result: MetaEvaluation) -> tuple[list[str], list[list[str]]]:
    import math

    stats = [s for s in result.statistics() if STATISTICS[s][0] != "span"]
    cells = [*result.cells, *result.global_accuracy.values(), *result.cross_accuracy.values()]
    pooled = [s for s in ("global_accuracy", "cross_accuracy") if any(c.statistic == s for c in cells)]
    columns = []
    for stat in [*stats, *pooled]:
        means = []
        for m in result.metrics:
            vals = [c.relative for c in cells if c.metric == m and c.statistic == stat and math.isfinite(c.relative)]
            means.append(sum(vals) / len(vals) if vals else None)
        columns.append(format_column(means))
    rows = [[_label(m, result)] + [col[i] for col in columns] for i, m in enumerate(result.metrics)]
    return ["metric", *stats, *pooled], rows


def _ranking_rows(result: MetaEvaluation) -> tuple[list[str], list[list[str]]]:
    names = list(result.ranking)
    avg_rank = format_column([result.ranking[m]["average_rank"] for m in names])
    avg_stat = format_column([result.ranking[m]["average_statistic"] for m in names])
    rows = [[_label(m, result), str(int(result.ranking[m]["rank"])), avg_rank[i], avg_stat[i]]
            for i, m in enumerate(names)]
    return ["metric", "cluster", "weighted average rank", "weighted average statistic"], rows


def _calibrated_rows(result: MetaEvaluation, calibrated: Any) -> tuple[list[str], list[list[str]]]:
    header = ["metric", "calibration", "cross-group acc (out of fold)", "95% CI", "pearson"]
    v = calibrated.variants
    acc = format_column([x.accuracy.estimate for x in v])
    ci = format_column([x.accuracy.ci_low for x in v] + [x.accuracy.ci_high for x in v])
    r = format_column([x.pearson.estimate for x in v])
    rows = [[_label(x.metric, result), x.calibration, acc[i], f"{ci[i]} to {ci[len(v) + i]}", r[i]]
            for i, x in enumerate(v)]
    return header, rows


def _calibrated_title(calibrated: Any) -> str:
    return (f"Calibrated variants ({calibrated.n_folds} system folds x {calibrated.n_repeats} repeats, as `calibrate "
            f"evaluate`; human scale: {calibrated.human_scale})")


def render_text(result: MetaEvaluation, calibrated: Any = None) -> str:
    """Every statistic as a WMT-style table (one row per group, one column per metric), then the
    accuracies across groups with their CIs, then the notes (what the numbers rest on)."""
    scales = sorted({str(v.get("scale")) for v in result.groups.values()})
    lines = [f"Meta-evaluation of {len(result.metrics)} metric(s) against {result.human} by {result.by}: "
             f"{len(result.groups)} groups; system scores: {_how(result)}; human scale(s): {', '.join(scales)}", ""]
    for stat in result.statistics():
        lines += _plain_table(f"{stat}: {STATISTICS[stat][1]}", *_grid(result, stat))
    lines += _plain_table(f"Across groups (CIs: systems resampled within groups, {result.n_resamples} resamples, "
                          f"seed {result.random_state})", *_across_rows(result))
    if result.ceiling is not None:
        lines += _plain_table(f"Relative to the human ceiling ({result.ceiling} against {result.human}): each "
                              "value over the ceiling's, mean over groups", *_relative_rows(result))
    if result.ranking:
        lines += _plain_table(f"{result.task} ranking (mt-metrics-eval's task weights; cluster of the weighted "
                              "average)",
                              *_ranking_rows(result))
    if any(c.rank is not None for c in result.cells) or any(c.chance == c.chance for c in result.cells):
        lines += ["[k]: significance cluster of the metric in its group (1 = best; PERM-BOTH for system-level "
                  "statistics and SPA, the pairs test for acc-t); ~x: the value of an uninformative metric "
                  "(chance baseline)", ""]
    if calibrated is not None:
        lines += _plain_table(_calibrated_title(calibrated), *_calibrated_rows(result, calibrated))
        lines += [f"answer: {calibrated.answer}", ""]
    lines += [f"note: {n}" for n in result.notes]
    lines += [f"note: {n}" for n in (calibrated.notes if calibrated is not None else ())]
    return "\n".join(visible_controls(x) for x in lines).rstrip("\n") + "\n"


def _how(result: MetaEvaluation) -> str:
    return {"complete": "means over the segments judged for every system of the group",
            "judged": "means over each system's judged segments",
            "table": "the table's own (system-level table)"}[result.system_scores]


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return re.sub(r"[\\&%$#_{}~^]", lambda m: _LATEX[m.group()], visible_controls(text))


def render_latex(result: MetaEvaluation, calibrated: Any = None) -> str:
    """One ``tabular`` per statistic (groups x metrics) and one for the accuracies across groups."""
    out = []
    tables = [(f"{s}: {STATISTICS[s][1]}", *_grid(result, s)) for s in result.statistics()]
    tables.append(("accuracy across groups (95 percent CI)", *_across_rows(result)))
    if result.ranking:
        tables.append((f"{result.task} ranking", *_ranking_rows(result)))
    if calibrated is not None:
        tables.append((_calibrated_title(calibrated), *_calibrated_rows(result, calibrated)))
    for title, header, rows in tables:
        out += [f"% {_tex(title)}", "\\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
                "\\toprule", " & ".join(_tex(h) for h in header) + " \\\\", "\\midrule"]
        out += [" & ".join(_tex(c).replace(MISSING, "--") for c in r) + " \\\\" for r in rows]
        out += ["\\bottomrule", "\\end{tabular}", ""]
    return "\n".join(out)


def to_json(result: MetaEvaluation, warnings: list[str] | None = None, calibrated: Any = None) -> dict[str, Any]:
    out = {**result.to_dict(), "warnings": list(warnings or [])}
    if calibrated is not None:
        out["calibrated"] = calibrated.to_dict()
    return out


def to_frame(result: MetaEvaluation, calibrated: Any = None) -> Any:
    """The tidy table; calibrated variants as rows of statistic ``oof_cross_accuracy:CALIBRATION``, group ``*``."""
    import pandas as pd

    frame = result.to_frame()
    if calibrated is None:
        return frame
    extra = pd.DataFrame([{"group": "*", "metric": v.metric, "statistic": f"oof_cross_accuracy:{v.calibration}",
                           "value": v.accuracy.estimate, "ci_low": v.accuracy.ci_low, "ci_high": v.accuracy.ci_high,
                           "n": v.accuracy.n} for v in calibrated.variants])
    return pd.concat([frame, extra], ignore_index=True)

