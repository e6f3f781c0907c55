"""Report sections of a meta-evaluation (:class:`xleval.meta.MetaEvaluation`) and of its calibrated variants
(:class:`xleval.meta.CalibratedMeta`), laid out from the result objects as ``xleval meta`` prints them: one
table per statistic (groups x metrics, cluster rank ``[k]`` and chance baseline ``~x`` beside a value), the
accuracies across groups each beside its own interval, a task's ranking, the calibrated variants and the
answer. Numbers go through the one formatter (:mod:`xleval._base.numbers`), column by column as the text
tables do, so every number on the page is the text output's."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._base.numbers import MISSING, format_column
from ._model import Section, Table

if TYPE_CHECKING:
    from ..meta import CalibratedMeta, Cell, MetaEvaluation

__all__ = ["meta_section", "calibrated_meta_section"]

_LEGEND = ("[k]: significance cluster of the metric in its group (1 = best; PERM-BOTH for system-level statistics and "
           "SPA, the pairs test for acc-t); ~x: the value of an uninformative metric (chance baseline).")


def _prefix(names: list[str]) -> str:
    """The common ``prefix:`` of every metric name (``metric:``), dropped from the column headers."""
    first = names[0] if names else ""
    cut = first.find(":") + 1
    return first[:cut] if cut and all(n.startswith(first[:cut]) for n in names) else ""


def _labeller(names: list[str]):
    prefix = _prefix(names)
    return lambda m: m[len(prefix):] if prefix and len(m) > len(prefix) else m


def _values(cells: list[Cell | None]) -> list[Any]:
    """A column of cells: plain numbers where no cell carries a cluster rank or a chance baseline (the page
    formats and aligns them), else the text output's ``value [k] ~chance``, formatted over the column."""
    if all(c is None or (c.rank is None and c.chance != c.chance) for c in cells):
        return [None if c is None else c.value for c in cells]
    values = format_column([None if c is None else c.value for c in cells])
    chance = format_column([None if c is None else c.chance for c in cells])
    return [v + ("" if c is None or c.rank is None else f" [{c.rank}]") + ("" if c is None or ch == MISSING
                                                                            else f" ~{ch}")
            for v, c, ch in zip(values, cells, chance, strict=True)]


def _intervals(lows: list[float | None], highs: list[float | None]) -> list[str]:
    """``low to high`` per row, both ends formatted together (one precision), as the text output shows them."""
    both = format_column([*lows, *highs])
    n = len(lows)
    return [MISSING if both[i] == MISSING else f"{both[i]} to {both[n + i]}" for i in range(n)]


def _level(level: float) -> str:
    return f"{100 * level:g}% CI"


def _grid(result: MetaEvaluation, statistic: str, label) -> list[dict[str, Any]]:
    groups = sorted({c.group for c in result.cells if c.statistic == statistic})
    found = {(c.group, c.metric): c for c in result.cells if c.statistic == statistic}
    columns = {label(m): _values([found.get((g, m)) for g in groups]) for m in result.metrics}
    return [{result.by: g, **{name: col[i] for name, col in columns.items()}} for i, g in enumerate(groups)]


def _across(result: MetaEvaluation, label) -> list[dict[str, Any]]:
    """One row per metric: each accuracy beside its own interval (global: within-group pairs pooled, WMT23;
    cross-group: pairs of systems of different groups)."""
    ci = _level(result.level)
    columns: dict[str, list[Any]] = {}
    for name, found in (("global acc", result.global_accuracy), ("cross-group acc", result.cross_accuracy)):
        cells = [found.get(m) for m in result.metrics]
        columns[name] = _values(cells)
        columns[f"{name} {ci}"] = _intervals([None if c is None else c.ci_low for c in cells],
                                             [None if c is None else c.ci_high for c in cells])
    return [{"metric": label(m), **{name: col[i] for name, col in columns.items()}}
            for i, m in enumerate(result.metrics)]


def _ranking(result: MetaEvaluation, label) -> list[dict[str, Any]]:
    return [{"metric": label(m), "cluster": int(r["rank"]), "weighted average rank": r["average_rank"],
             "weighted average statistic": r["average_statistic"]} for m, r in result.ranking.items()]


def _how(result: MetaEvaluation) -> str:
    return {"complete": "means over the segments judged for every system of the group",
            "judged": "means over each system's judged segments",
            "table": "the table's own (system-level table)"}.get(result.system_scores, result.system_scores)


def meta_section(result: MetaEvaluation, calibrated: CalibratedMeta | None = None, *,
                 image_format: str = "svg") -> Section:
    """The "Meta-evaluation" section of a :class:`~xleval.meta.MetaEvaluation` (``xleval meta --report``,
    ``xleval report --meta``): the text output's tables, from the same cells; with ``calibrated`` (a
    :class:`~xleval.meta.CalibratedMeta` of the same metrics) its variants and its answer too."""
    from ..meta import STATISTICS

    label = _labeller(list(result.metrics))
    tables = [Table.from_records(f"{s}: {STATISTICS[s][1]}", _grid(result, s, label)) for s in result.statistics()]
    tables.append(Table.from_records(f"Across groups ({_level(result.level)}s: systems resampled within groups, "
                                     f"{result.n_resamples} resamples, seed {result.random_state})",
                                     _across(result, label)))
    if result.ranking:
        tables.append(Table.from_records(f"{result.task} ranking (mt-metrics-eval's task weights; cluster of the "
                                         "weighted average)", _ranking(result, label)))
    scales = sorted({str(v.get("scale")) for v in result.groups.values()})
    lead = [f"{len(result.metrics)} metric(s) against {result.human} in {len(result.groups)} groups ({result.by}); "
            f"system scores: {_how(result)}; human scale(s): {', '.join(scales)}."]
    paragraphs = []
    if any(c.rank is not None for c in result.cells) or any(c.chance == c.chance for c in result.cells):
        paragraphs.append(_LEGEND)
    paragraphs += result.notes  # what the numbers rest on
    warnings: tuple[str, ...] = ()
    if calibrated is not None:
        lead.append(_answer(calibrated))
        tables.append(_calibrated_table(calibrated, label))
        warnings = calibrated.notes  # what the evaluation warned about
    return Section("meta-evaluation", "Meta-evaluation", lead=tuple(lead), tables=tuple(tables),
                   paragraphs=tuple(paragraphs), warnings=warnings)


def _answer(calibrated: CalibratedMeta) -> str:
    text = calibrated.answer
    return text[:1].upper() + text[1:]


def _calibrated_table(calibrated: CalibratedMeta, label) -> Table:
    v = calibrated.variants
    ci = _intervals([x.accuracy.ci_low for x in v], [x.accuracy.ci_high for x in v])
    level = _level(v[0].accuracy.level) if v else _level(0.95)
    rows = [{"metric": label(x.metric), "calibration": x.calibration, "cross-group acc (out of fold)":
             x.accuracy.estimate, f"cross-group acc {level}": ci[i], "pearson": x.pearson.estimate}
            for i, x in enumerate(v)]
    return Table.from_records(f"Calibrated variants ({calibrated.n_folds} system folds x {calibrated.n_repeats} "
                              f"repeats, as `calibrate evaluate`; human scale: {calibrated.human_scale})", rows)


def calibrated_meta_section(calibrated: CalibratedMeta, *, image_format: str = "svg") -> Section:
    """A :class:`~xleval.meta.CalibratedMeta` on its own (``xleval meta --calibrations ... --report``): the answer
    first, then every variant's out-of-fold cross-group accuracy beside its own interval."""
    label = _labeller(list(dict.fromkeys(x.metric for x in calibrated.variants)))
    return Section("calibrated-variants", "Calibrated variants", lead=(_answer(calibrated),),
                   tables=(_calibrated_table(calibrated, label),), warnings=tuple(calibrated.notes))
