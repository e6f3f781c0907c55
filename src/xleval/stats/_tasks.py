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

__all__ = ["MetaTask", "wmt_tasks", "assign_weights", "weighted_average_ranks", "weighted_average_statistics",
           "average_clusters", "STATISTIC_RANGES"]

#: the range of each statistic (``TaskResults.range``): averages map it to [0, 1] first
STATISTIC_RANGES = {"pairwise_accuracy": (0.0, 1.0), "spa": (0.0, 1.0), "acc_t": (0.0, 1.0),
                    "pearson": (-1.0, 1.0), "spearman": (-1.0, 1.0), "kendall": (-1.0, 1.0)}
PRESETS = ("wmt23", "wmt24", "wmt24_on_wmt23")
_DEFAULT_LPS = {"wmt23": ("en-de", "he-en", "zh-en"), "wmt24": ("en-de", "en-es", "ja-zh"),
                "wmt24_on_wmt23": ("en-de", "he-en", "zh-en")}


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
    ``WMT24OnWMT23``), for ``lps`` (default: that year's pairs), sorted as there.

    WMT23: system-level pairwise accuracy over all pairs (weight ``len(lps)``), then per pair
    system-level Pearson, segment-level Pearson (no averaging) and acc-t (weight 1 each), weights
    normalised to sum 1. WMT24 (and WMT24 statistics on WMT23 data): per pair system-level SPA and
    segment-level acc-t, equal weights.
    """
    v.check_choice(preset, "preset", PRESETS)
    langs = sorted(_DEFAULT_LPS[preset] if lps is None else [str(x) for x in lps])
    if not langs:
        raise InputError("lps must name at least one language pair", argument="lps")
    test_set = "wmt24" if preset == "wmt24" else "wmt23"
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
