"""The WMT23 and WMT24 metrics-task definitions, and the weighted averages that rank metrics over tasks.

Transcribed from the task sets of mt-metrics-eval's ``tasks.py`` (``WMT23``, ``WMT24``, and
``WMT24OnWMT23``, the WMT24 statistics on WMT23 data): a task is one language pair (or, for WMT23's
global system-level accuracy, all of them), one level, one statistic and its options. The weights
are those functions' weight vectors; :func:`assign_weights` is ``TaskSetResults.AssignWeights``
(spread the total evenly over the values of the first attribute, then recurse), and the averages
are ``AverageRanks``, ``AverageCorrs`` (each statistic mapped to [0, 1] by its range first) and
``AverageCorrMatrix`` (significance of the averaged statistic from the tasks' resampling draws).

Statistic names are xleval's: ``pairwise_accuracy`` (mt-metrics-eval ``accuracy``), ``pearson``,
``acc_t`` (``KendallWithTiesOpt``, acc23, ``sample_rate=1``, averaged by item, ``pairs`` test),
``spa`` (``pce``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from xleval._base.result import Result
from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._clusters import MetricClusters, assign_ranks

__all__ = ["MetaTask", "wmt_tasks", "read_tasks", "assign_weights", "weighted_average_ranks",
           "weighted_average_statistics", "average_clusters", "STATISTIC_RANGES", "WMT25_LPS", "WMT25_GOLD",
           "TASK_STATISTICS"]

#: the range of each statistic (``TaskResults.range``): averages map it to [0, 1] first
STATISTIC_RANGES = {"pairwise_accuracy": (0.0, 1.0), "spa": (0.0, 1.0), "acc_t": (0.0, 1.0),
                    "pearson": (-1.0, 1.0), "spearman": (-1.0, 1.0), "kendall": (-1.0, 1.0)}
PRESETS = ("wmt23", "wmt24", "wmt24_on_wmt23", "wmt25")
#: WMT25's 16 pairs (mt-metrics-eval ``tasks.WMT25``): target languages carry region and script
WMT25_LPS = ("cs-de_DE", "cs-uk_UA", "en-ar_EG", "en-bho_IN", "en-cs_CZ", "en-et_EE", "en-is_IS", "en-it_IT",
             "en-ja_JP", "en-ko_KR", "en-mas_KE", "en-ru_RU", "en-sr_Cyrl_RS", "en-uk_UA", "en-zh_CN", "ja-zh_CN")
#: WMT25's gold per pair (mt-metrics-eval ``meta_info``): MQM for two pairs, ESA (``esa-human1``) for the others
WMT25_GOLD = {lp: ("mqm" if lp in ("en-ko_KR", "ja-zh_CN") else "esa-human1") for lp in WMT25_LPS}
_DEFAULT_LPS = {"wmt23": ("en-de", "he-en", "zh-en"), "wmt24": ("en-de", "en-es", "ja-zh"),
                "wmt24_on_wmt23": ("en-de", "he-en", "zh-en"), "wmt25": WMT25_LPS}
#: (level, statistic) a task may name
TASK_STATISTICS = {"sys": ("pearson", "spearman", "kendall", "pairwise_accuracy", "spa"), "seg": ("acc_t", "pearson")}


@dataclass(frozen=True, eq=False)
class MetaTask(Result):
    """One task of a WMT metrics-task definition.

    ``lang``: a language pair, or several joined by commas for the global accuracy (pairs of systems
    inside each pair, pooled). ``level``: ``sys`` or ``seg``. ``average_by``: ``none`` or ``item``.
    ``test``: ``scores`` (PERM-BOTH) or ``pairs``. ``early_stopping``: (block_size, early_min,
    early_max) of mt-metrics-eval's ``Task`` defaults. ``weight``: the preset's weight.
    """

    test_set: str
    lang: str
    level: str
    statistic: str
    average_by: str = "none"
    test: str = "scores"
    sample_rate: float | None = None
    n_resamples: int = 1000
    early_stopping: tuple[int, float, float] = (100, 0.02, 0.5)
    weight: float = 1.0

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.lang.split(","))


def wmt_tasks(preset: str, lps: Sequence[str] | None = None) -> list[MetaTask]:
    """The tasks and weights of a WMT metrics task (mt-metrics-eval ``tasks.WMT23`` / ``WMT24`` /
    ``WMT24OnWMT23`` / ``WMT25``), for ``lps`` (default: that year's pairs), sorted as there.

    WMT23: system-level pairwise accuracy over all pairs (weight ``len(lps)``), then per pair
    system-level Pearson, segment-level Pearson (no averaging) and acc-t (weight 1 each), weights
    normalised to sum 1. WMT24 (and WMT24 statistics on WMT23 data) and WMT25 (16 pairs, :data:`WMT25_LPS`):
    per pair system-level SPA and segment-level acc-t (averaged by item, ``pairs`` test), equal weights.
    """
    v.check_choice(preset, "preset", PRESETS)
    langs = sorted(_DEFAULT_LPS[preset] if lps is None else [str(x) for x in lps])
    if not langs:
        raise InputError("lps must name at least one language pair", argument="lps")
    test_set = preset if preset in ("wmt24", "wmt25") else "wmt23"
    acc_t = {"statistic": "acc_t", "average_by": "item", "test": "pairs", "sample_rate": 1.0}
    rows: list[tuple[dict[str, object], float]] = []
    if preset == "wmt23":
        rows.append(({"lang": ",".join(langs), "level": "sys", "statistic": "pairwise_accuracy"}, len(langs)))
        for lp in langs:
            rows += [({"lang": lp, "level": "sys", "statistic": "pearson"}, 1.0),
                     ({"lang": lp, "level": "seg", "statistic": "pearson"}, 1.0),
                     ({"lang": lp, "level": "seg", **acc_t}, 1.0)]
    else:
        for lp in langs:
            rows += [({"lang": lp, "level": "sys", "statistic": "spa"}, 1.0),
                     ({"lang": lp, "level": "seg", **acc_t}, 1.0)]
    total = sum(w for _, w in rows)
    return [MetaTask(test_set=test_set, weight=w / total, **kw) for kw, w in rows]  # type: ignore[arg-type]


def read_tasks(path: str) -> list[MetaTask]:
    """A task list from a JSON file, as mt-metrics-eval's ``TaskSet`` of ``Task`` s: a list of objects with
    ``lang`` (a pair, or pairs joined by commas for the global system-level accuracy), ``level`` (``sys`` or
    ``seg``), ``statistic`` (:data:`TASK_STATISTICS`) and optionally ``weight`` (default 1; weights are
    normalised to sum 1), ``test_set``. Every task's statistic uses the engine's defaults (acc-t averaged by
    item with the ``pairs`` test; segment Pearson not averaged)."""
    import json
    from pathlib import Path

    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"task file {path}: cannot be read ({exc.strerror or exc}); give a JSON file",
                         argument="task") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"task file {path}: not JSON ({exc}); give a list of tasks, e.g. "
                         '[{"lang": "en-de", "level": "sys", "statistic": "spa"}]', argument="task") from None
    if not isinstance(raw, list) or not raw:
        raise InputError(f"task file {path}: give a non-empty JSON list of tasks (objects with lang, level, "
                         "statistic)", argument="task")
    rows = []
    for i, t in enumerate(raw, 1):
        where = f"task file {path}, task {i}"
        if not isinstance(t, dict):
            raise InputError(f"{where}: a task is an object with lang, level, statistic", argument="task")
        unknown = sorted(set(t) - {"lang", "level", "statistic", "weight", "test_set"})
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}; use lang, level, statistic, weight, test_set",
                             argument="task", value=unknown[0])
        lang, level, stat = t.get("lang"), t.get("level"), t.get("statistic")
        if not isinstance(lang, str) or not lang.strip():
            raise InputError(f"{where}: lang must name a language pair (or pairs joined by commas)", argument="task")
        if level not in TASK_STATISTICS or stat not in TASK_STATISTICS[level]:
            choices = "; ".join(f"{lv}: {', '.join(st)}" for lv, st in TASK_STATISTICS.items())
            raise InputError(f"{where}: level {level!r} with statistic {stat!r} is not a task xleval ranks; use "
                             f"{choices}", argument="task")
        if "," in lang and (level, stat) != ("sys", "pairwise_accuracy"):
            raise InputError(f"{where}: several pairs in one task are WMT23's global accuracy only (level sys, "
                             "statistic pairwise_accuracy)", argument="task")
        weight = t.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not np.isfinite(weight) or weight < 0:
            raise InputError(f"{where}: weight must be a non-negative number; got {weight!r}", argument="task")
        extra = ({"average_by": "item", "test": "pairs", "sample_rate": 1.0} if stat == "acc_t" else {})
        rows.append((dict(lang=",".join(sorted(x.strip() for x in lang.split(","))), level=level, statistic=stat,
                          test_set=str(t.get("test_set", "custom")), **extra), float(weight)))
    total = sum(w for _, w in rows)
    if total <= 0:
        raise InputError(f"task file {path}: the weights sum to 0; give some task a positive weight", argument="task")
    return [MetaTask(weight=w / total, **kw) for kw, w in rows]


def _attr(task: object, name: str) -> object:
    try:
        return getattr(task, name)
    except AttributeError:
        raise InputError(f"tasks have no attribute {name!r}; use one of "
                         f"{', '.join(f.name for f in fields(MetaTask))}", argument="attrs") from None


def assign_weights(tasks: Sequence[object], attrs: Sequence[str], total: float = 1.0) -> list[float]:
    """``TaskSetResults.AssignWeights``: ``total`` spread evenly over the values of ``attrs[0]``
    (in order of first appearance), each share spread over the next attribute inside that value,
    and so on; with no attribute left, equal shares. Returns one weight per task, in order."""
    if not tasks:
        return []
    if not attrs:
        return [total / len(tasks)] * len(tasks)
    groups: dict[object, list[int]] = {}
    for i, t in enumerate(tasks):
        groups.setdefault(_attr(t, attrs[0]), []).append(i)
    out = [0.0] * len(tasks)
    for members in groups.values():
        sub = assign_weights([tasks[i] for i in members], attrs[1:], total / len(groups))
        for i, w in zip(members, sub, strict=True):
            out[i] = w
    return out


def _weights(results: Sequence[MetricClusters], weights: Sequence[float] | None) -> list[float]:
    if not results:
        raise InputError("give at least one task result", argument="results")
    if weights is None:
        return [1.0 / len(results)] * len(results)
    w = [float(x) for x in weights]
    if len(w) != len(results) or not all(np.isfinite(x) and x >= 0 for x in w) or sum(w) <= 0:
        raise InputError(f"weights must be {len(results)} non-negative numbers (one per task) with a positive sum; "
                         f"got {list(weights)!r}", argument="weights")
    return w


def _common(results: Sequence[MetricClusters]) -> list[str]:
    common = [m for m in results[0].metrics if all(m in r.values for r in results[1:])]
    if not common:
        raise InputError("no metric is present in every task; averages are over the metrics of all tasks",
                         argument="results")
    return common


def weighted_average_ranks(results: Sequence[MetricClusters], weights: Sequence[float] | None = None
                           ) -> dict[str, float]:
    """``AverageRanks``: sum over tasks of weight x cluster rank, for the metrics present in every
    task, sorted by increasing average rank (uniform weights ``1/len`` by default)."""
    w = _weights(results, weights)
    avg = {m: sum(wk * r.ranks[m] for wk, r in zip(w, results, strict=True)) for m in _common(results)}
    return dict(sorted(avg.items(), key=lambda x: x[1]))


def _scaled(r: MetricClusters, m: str) -> float:
    low, high = STATISTIC_RANGES[r.statistic]
    return (r.values[m] - low) / (high - low)


def weighted_average_statistics(results: Sequence[MetricClusters], weights: Sequence[float] | None = None
                                ) -> dict[str, float]:
    """``AverageCorrs``: sum over tasks of weight x statistic mapped to [0, 1] by its range
    (correlations ``(r + 1) / 2``, accuracies as they are), sorted by decreasing average."""
    w = _weights(results, weights)
    avg = {m: sum(wk * _scaled(r, m) for wk, r in zip(w, results, strict=True)) for m in _common(results)}
    return dict(sorted(avg.items(), key=lambda x: -x[1]))


def average_clusters(results: Sequence[MetricClusters], weights: Sequence[float] | None = None, *,
                     alpha: float = 0.05, ties: str | None = None) -> MetricClusters:
    """``AverageCorrMatrix``: clusters of the weighted average statistic. For metrics i above j, the
    null draws of the average difference are the weighted sums of the tasks' resampled differences
    (each mapped by its range), and p = #{null >= observed} / draws. Tasks are resampled independently,
    so every task must keep its draws (results of :func:`metric_clusters` do) with one resample count.
    ``ties``: as :func:`metric_clusters` (None: the tasks' own rule)."""
    from xleval.stats._clusters import TIES, at_least

    w = _weights(results, weights)
    ties = ties if ties is not None else results[0].ties if results else "count"
    v.check_choice(ties, "ties", TIES)
    alpha = v.check_probability(alpha, "alpha")
    avg = weighted_average_statistics(results, w)
    names = list(avg)
    sizes = {r.n_resamples for r in results}
    if len(sizes) != 1 or any(r.draws is None for r in results):
        raise InputError("every task result needs its resampling draws with the same n_resamples to test the "
                         "average", argument="results")
    n_res = sizes.pop()
    index = [{m: i for i, m in enumerate(r.metrics)} for r in results]
    pvals = np.zeros((len(names), len(names)))
    draws = np.zeros((len(names), len(names), n_res))
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            null = np.zeros(n_res)
            for wk, r, ix in zip(w, results, index, strict=True):
                low, high = STATISTIC_RANGES[r.statistic]
                d = r.draws
                assert d is not None
                null += wk * d[ix[names[a]], ix[names[b]]] / (high - low)
            pvals[a, b] = float(np.mean(at_least(null, avg[names[a]] - avg[names[b]], ties)))
            draws[a, b], draws[b, a] = null, -null
    ranks = assign_ranks(pvals, alpha)
    first = results[0]
    return MetricClusters(
        statistic="weighted average", metrics=tuple(names), values=avg, ranks=dict(zip(names, ranks, strict=True)),
        pvalues=pvals, alpha=alpha, n_resamples=n_res, random_state=first.random_state,
        test=f"weighted sum of {len(results)} tasks' resampled differences (AverageCorrMatrix)",
        n_systems=first.n_systems, draws=draws, ties=ties)
