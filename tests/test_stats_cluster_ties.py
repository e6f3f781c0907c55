"""The tie rule of the significance tests' p-values (xleval.stats.metric_clusters, ties=).

Oracle: mt-metrics-eval (google-research/mt-metrics-eval, commit 68a481a) ``stats.PermutationSigDiff`` with the
global-accuracy statistic of ``data.CompareMetricsWithGlobalAccuracy`` (``_Accuracy``: agreements summed over the
groups, divided by the pairs), run once outside the project on the table below with xleval's own swap draws fed to
it in place of ``np.random.binomial`` (so the draws are identical), 1000 resamples; its p-values are transcribed
here. With ``ties="mtme"`` (its floating-point ``>=``) xleval gives the same p-values to the digit; with the default
``ties="count"`` a resampled difference equal to the observed one counts, and some p-values are higher."""
from __future__ import annotations

import numpy as np
import pytest

from xleval.exceptions import InputError
from xleval.stats import average_clusters, metric_clusters

#: "better>worse" -> p-value of mt-metrics-eval, same draws
MTME = {"m0>m1": 0.216, "m0>m2": 0.122, "m0>m3": 0.009, "m1>m2": 0.28, "m1>m3": 0.014, "m2>m3": 0.079}


def _inputs():
    rng = np.random.default_rng(11)
    groups = np.repeat(["a", "b", "c"], [5, 6, 7])
    q = rng.normal(size=len(groups))
    human = np.round(q * 2) / 2  # ties in the human scores
    metrics = {f"m{k}": np.round(q + rng.normal(scale=0.6 + 0.2 * k, size=len(groups)), 1) for k in range(4)}
    return metrics, human, groups


def _pvalues(res):
    order = res.metrics
    return {f"{order[a]}>{order[b]}": float(res.pvalues[a, b]) for a in range(len(order))
            for b in range(a + 1, len(order))}


def test_mtme_tie_rule_gives_mt_metrics_eval_pvalues_with_the_same_draws():
    metrics, human, groups = _inputs()
    res = metric_clusters(metrics, human, "pairwise_accuracy", groups=groups, n_resamples=1000, random_state=0,
                          ties="mtme")
    assert res.ties == "mtme"
    assert _pvalues(res) == MTME


def test_counting_ties_is_never_lower_and_here_higher():
    metrics, human, groups = _inputs()
    counted = _pvalues(metric_clusters(metrics, human, "pairwise_accuracy", groups=groups, n_resamples=1000,
                                       random_state=0))
    assert all(counted[k] >= MTME[k] for k in MTME)
    assert counted["m1>m2"] == pytest.approx(0.338) and counted["m1>m2"] > MTME["m1>m2"]


def test_the_tie_rule_is_checked_and_carried_to_the_average():
    metrics, human, groups = _inputs()
    with pytest.raises(InputError, match="ties"):
        metric_clusters(metrics, human, "pairwise_accuracy", groups=groups, n_resamples=10, ties="strict")
    res = metric_clusters(metrics, human, "pairwise_accuracy", groups=groups, n_resamples=50, ties="mtme")
    assert average_clusters([res, res]).ties == "mtme"


def test_compiled_and_numpy_spa_clusters_give_the_same_draws(monkeypatch):
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    h = rng.normal(size=(7, 30))
    ms = {f"m{i}": h + rng.normal(scale=1 + i / 3, size=h.shape) for i in range(3)}
    ms["tied"] = np.round(h * 2) / 2
    compiled = metric_clusters(ms, h, "spa", n_resamples=40, random_state=3, spa_resamples=200)
    monkeypatch.setenv("XLEVAL_NUMBA", "0")
    plain = metric_clusters(ms, h, "spa", n_resamples=40, random_state=3, spa_resamples=200)
    assert np.array_equal(compiled.draws, plain.draws) and np.array_equal(compiled.pvalues, plain.pvalues)
