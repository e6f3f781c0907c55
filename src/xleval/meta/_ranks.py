"""Significance clusters, chance baselines and WMT task averages for a meta-evaluation's cells, by
:mod:`xleval.stats` (``metric_clusters``: PERM-BOTH for system-level statistics and SPA, the ``pairs``
test for acc-t; ``chance_baseline``; ``wmt_tasks``/``average_clusters``: mt-metrics-eval's task
weightings)."""
from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..exceptions import InputError
from ._results import Cell

__all__ = ["CLUSTERED", "clustered_cells", "chance_cells", "task_ranking"]

#: a cell's statistic -> the name xleval.stats uses
CLUSTERED = {"sys_pearson": "pearson", "sys_spearman": "spearman", "sys_kendall": "kendall",
             "sys_accuracy": "pairwise_accuracy", "spa": "spa", "seg_acc_t": "acc_t", "seg_pearson": "pearson"}
#: statistics clustered at the segment level (xleval.stats.metric_clusters(level="segment"))
SEGMENT_LEVEL = {"seg_pearson"}


def _inputs(stat: str, data: Mapping[str, Any], metrics: Sequence[str]) -> tuple[dict[str, np.ndarray], Any] | None:
    """The metrics' and the human's scores a statistic is clustered on, for one group (None: not available)."""
    if stat in ("sys_pearson", "sys_spearman", "sys_kendall", "sys_accuracy"):
        source = data["system"]
    elif stat == "spa":
        source = data["complete"]
        if source is None or source["human"].shape[1] < 2:
            return None
    else:
        source = data["acc_t"]
        if source is None:
            return None
    ms = {m: source[m] for m in metrics if m in source}
    return (ms, source["human"]) if ms else None


def clustered_cells(cells: list[Cell], per_group: Mapping[str, Mapping[str, Any]], metrics: Sequence[str],
                    statistics: Sequence[str], *, n_resamples: int, alpha: float, seed: int,
                    notes: list[str], ties: str = "count", spa_resamples: int = 1000
                    ) -> tuple[list[Cell], dict[tuple[str, str], Any]]:
    """The cells with the cluster rank of each metric in its group for each of ``statistics``."""
    from ..stats import metric_clusters

    results: dict[tuple[str, str], Any] = {}
    for g, data in per_group.items():
        for stat in statistics:
            got = _inputs(stat, data, metrics)
            if got is None:
                continue
            try:
                results[(g, stat)] = metric_clusters(got[0], got[1], CLUSTERED[stat], n_resamples=n_resamples,
                                                     random_state=seed, alpha=alpha, ties=ties,
                                                     spa_resamples=spa_resamples,
                                                     level="segment" if stat in SEGMENT_LEVEL else "system")
            except InputError as exc:
                notes.append(f"no {stat} clusters for group {g}: {exc}")
    out = []
    for c in cells:
        res = results.get((c.group, c.statistic))
        out.append(replace(c, rank=res.ranks.get(c.metric)) if res is not None else c)
    return out, results


def chance_cells(cells: list[Cell], per_group: Mapping[str, Mapping[str, Any]], metrics: Sequence[str], *,
                 n_simulations: int, seed: int) -> list[Cell]:
    """The cells with the chance baseline of each value (:func:`xleval.stats.chance_baseline`)."""
    from ..stats import chance_baseline

    out = []
    for c in cells:
        stat = CLUSTERED.get(c.statistic)
        value = float("nan")
        if stat in ("pearson", "spearman", "kendall") or c.statistic in ("seg_kendall", "seg_pdp"):  # a correlation: 0
            value = 0.0
        elif stat is not None and c.group in per_group:
            got = _inputs(c.statistic, per_group[c.group], metrics)
            if got is not None and c.metric in got[0]:
                with contextlib.suppress(InputError):
                    value = chance_baseline(stat, got[1], got[0][c.metric], n_simulations=n_simulations,
                                            random_state=seed).value
        out.append(replace(c, chance=float(value)))
    return out


def task_ranking(label: str, tasks: Sequence[Any], clusters: Mapping[tuple[str, str], Any],
                 global_clusters: Any, notes: list[str]) -> dict[str, dict[str, float]]:
    """The weighted ranking of ``tasks`` (a preset's, as mt-metrics-eval's task weighting, or a task list):
    weighted average rank, weighted average statistic (each mapped to [0, 1]) and the clusters of that average,
    for the metrics in every task. Tasks without clusters are left out, said in a note, and the weights of the
    others renormalised."""
    from ..stats import average_clusters, weighted_average_ranks

    picked, weights = [], []
    for t in tasks:
        if len(t.languages) > 1:
            res = global_clusters
        else:
            key = {"sys": {"pearson": "sys_pearson", "spearman": "sys_spearman", "kendall": "sys_kendall",
                           "spa": "spa", "pairwise_accuracy": "sys_accuracy"},
                   "seg": {"acc_t": "seg_acc_t", "pearson": "seg_pearson"}}[t.level].get(t.statistic)
            res = clusters.get((t.lang, key)) if key else None
        if res is None:
            notes.append(f"task {t.lang} {t.level}-level {t.statistic} left out of the {label} average (no clusters "
                         "for it: no such group in the table, or too few scores)")
            continue
        picked.append(res)
        weights.append(t.weight)
    if not picked or sum(weights) <= 0:
        notes.append(f"no task of {label} could be ranked")
        return {}
    weights = [w / sum(weights) for w in weights]  # the tasks left out do not shrink the average
    ranks = weighted_average_ranks(picked, weights)
    avg = average_clusters(picked, weights)
    return {m: {"average_rank": float(ranks[m]), "average_statistic": float(avg.values[m]), "rank": int(avg.ranks[m])}
            for m in avg.metrics}
