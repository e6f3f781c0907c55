"""Significance clusters of metrics (WMT's PERM-BOTH and pairs tests) against mt-metrics-eval.

Oracles: (1) values and mean p-values printed by mt-metrics-eval (GitHub
google-research/mt-metrics-eval, stats.py: ``PairwiseConfidenceError``, ``KendallWithTiesOpt``,
``PermutationSigDiff``, ``PairwisePermutationSigDiff``; p-values averaged over np.random seeds 0-4)
on the seeded synthetic task below: our p-values must agree within Monte-Carlo error; (2) scipy's
correlations; (3) mt-metrics-eval's stats_test.py vectors (``Agreement``, ``KendallWithTiesOpt``);
(4) an explicit per-resample loop written here (hybrids built cell by cell, SPA from its definition)
on the same swap draws, which must give the same null differences.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from conftest import require_data
from xleval import stats
from xleval._base.seeding import child_seeds
from xleval.exceptions import InputError


def _task() -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    human = np.linspace(0, 1, 8)[:, None] + rng.normal(size=(8, 60))
    metrics = {f"m{k}": human * (0.3 + 0.3 * k) + rng.normal(size=(8, 60)) * (1 + 0.5 * k) for k in range(4)}
    return metrics, human


MTME_SPA = {"m0": 0.6876785714285714, "m1": 0.8254642857142858, "m2": 0.7107142857142856, "m3": 0.8754642857142857}
MTME_ACC_T = {"m0": 0.5976190476190477, "m1": 0.6398809523809523, "m2": 0.6452380952380954, "m3": 0.6339285714285714}
MTME_P = {
    "pearson": {("m3", "m1"): 0.3338, ("m1", "m2"): 0.0900, ("m3", "m0"): 0.0456, ("m2", "m0"): 0.4378},
    "spa": {("m3", "m1"): 0.205, ("m1", "m2"): 0.068, ("m3", "m0"): 0.019, ("m2", "m0"): 0.444},
    "acc_t": {("m3", "m1"): 0.6456, ("m1", "m2"): 0.6362, ("m3", "m0"): 0.0148, ("m2", "m0"): 0.0030},
}


def _p(res: stats.MetricClusters, better: str, worse: str) -> float:
    a, b = res.metrics.index(better), res.metrics.index(worse)
    # the matrix holds p(i better than j) for i above j; the other direction is 1 - p up to ties
    return float(res.pvalues[a, b]) if a < b else float(np.mean(-res.draws[b, a] >= res.values[better]
                                                                     - res.values[worse] - 1e-12))


@pytest.mark.parametrize("statistic", ["pearson", "spa", "acc_t"])
def test_pvalues_agree_with_mt_metrics_eval(statistic):
    metrics, human = _task()
    res = stats.metric_clusters(metrics, human, statistic, n_resamples=2000, random_state=11,
                                spa_resamples=1000)
    for (better, worse), p in MTME_P[statistic].items():
        assert _p(res, better, worse) == pytest.approx(p, abs=0.06), (better, worse)


def test_values_equal_mt_metrics_eval_and_scipy():
    metrics, human = _task()
    spa = stats.metric_clusters(metrics, human, "spa", n_resamples=5)
    acc = stats.metric_clusters(metrics, human, "acc_t", n_resamples=5)
    for name in metrics:
        assert spa.values[name] == pytest.approx(MTME_SPA[name], abs=1e-12)
        assert acc.values[name] == pytest.approx(MTME_ACC_T[name], abs=1e-12)
        assert acc.epsilons is not None and acc.epsilons[name] == 0.0
        item = stats.pairwise_accuracy(metrics[name].ravel(), human.ravel(), average_by="item",
                                       items=np.tile(np.arange(60), 8))
        assert acc.values[name] == pytest.approx(item.estimate, abs=1e-12)
    hs = human.mean(axis=1)
    for statistic, fn in [("pearson", scipy.stats.pearsonr), ("spearman", scipy.stats.spearmanr),
                          ("kendall", scipy.stats.kendalltau)]:
        res = stats.metric_clusters(metrics, human, statistic, n_resamples=5)
        for name, m in metrics.items():
            assert res.values[name] == pytest.approx(fn(hs, m.mean(axis=1))[0], abs=1e-12)


def test_stats_test_vectors():
    # stats_test.py testAgreement: gold [1, 2, 3, 3, 4], metric [1, 1, 2, 1, 2] -> 5 of 10 pairs agree
    res = stats.metric_clusters({"m": [1, 1, 2, 1, 2]}, [1, 2, 3, 3, 4], "pairwise_accuracy", n_resamples=5)
    assert res.values["m"] == 0.5
    # testKendallWithTiesOpt: Correlation(1, [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3]) acc23, sample_rate 1 -> 0.7
    gold, metric = np.array([[1, 2, 2, 3, 4]]).T, np.array([[2, 1, 1.5, 5, 3]]).T
    assert stats.metric_clusters({"m": metric}, gold, "acc_t", n_resamples=5).values["m"] == pytest.approx(0.7)


def test_assign_ranks_like_mt_metrics_eval():
    # rank increases when a metric of the current cluster beats the next one (p <= alpha)
    p = np.zeros((4, 4))
    p[0, 1], p[0, 2], p[1, 2], p[0, 3], p[1, 3], p[2, 3] = 0.2, 0.01, 0.3, 0.001, 0.04, 0.5
    assert stats.assign_ranks(p, 0.05) == [1, 1, 2, 2]  # 3 is compared with 2 only (its cluster)
    assert stats.assign_ranks(p, 0.005) == [1, 1, 1, 2]
    assert stats.assign_ranks(np.zeros((1, 1))) == [1]


def _spa64(h_p: np.ndarray, x: np.ndarray, signs: np.ndarray) -> float:
    iu, ju = np.triu_indices(len(x), 1)
    part = signs @ x.T
    p = np.array([np.mean(part[:, i] - part[:, j] >= x[i].sum() - x[j].sum() - 1e-9)
                  for i, j in zip(iu, ju, strict=True)])
    return 1 - np.mean(np.abs(h_p[iu, ju] - p))


def test_spa_draws_equal_explicit_loop():
    metrics, human = _task()
    metrics = {k: v[:5, :20] for k, v in metrics.items() if k in ("m1", "m3")}
    human = human[:5, :20]
    res = stats.metric_clusters(metrics, human, "spa", n_resamples=30, random_state=7, spa_resamples=200)
    swaps = np.random.default_rng(child_seeds(7, 1)[0]).random((30, 5, 20)) < 0.5
    signs = np.rint(np.random.default_rng(4).random((200, 20), dtype=np.float32)).astype(np.float64) * 2 - 1
    h_p = stats.pairwise_permutation_pvalues(human, n_resamples=200)
    za, zb = (scipy.stats.zscore(metrics[n], axis=None) for n in res.metrics)
    for k in range(30):
        hyb_a, hyb_b = np.where(swaps[k], za, zb), np.where(swaps[k], zb, za)
        assert res.draws[0, 1, k] == pytest.approx(_spa64(h_p, hyb_a, signs) - _spa64(h_p, hyb_b, signs), abs=1e-12)


def test_system_draws_equal_explicit_loop_and_ranks():
    metrics, human = _task()
    res = stats.metric_clusters(metrics, human, "kendall", n_resamples=50, random_state=2)
    swaps = np.random.default_rng(child_seeds(2, 1)[0]).random((50, 8)) < 0.5
    hs = human.mean(axis=1)
    za, zb = (scipy.stats.zscore(metrics[n].mean(axis=1)) for n in res.metrics[:2])
    for k in range(50):
        a = scipy.stats.kendalltau(hs, np.where(swaps[k], za, zb))[0]
        b = scipy.stats.kendalltau(hs, np.where(swaps[k], zb, za))[0]
        assert res.draws[0, 1, k] == pytest.approx(a - b, abs=1e-12)
    assert list(res.ranks.values()) == stats.assign_ranks(res.pvalues, 0.05)
    assert res.to_dict()["metrics"] == list(res.metrics)


def test_global_accuracy_counts_pairs_within_groups():
    human = np.array([1.0, 2, 3, 10, 20, 30])
    metric = np.array([3.0, 2, 1, 100, 200, 300])  # wrong within group 1, right within group 2
    res = stats.metric_clusters({"m": metric}, human, "pairwise_accuracy", groups=[1, 1, 1, 2, 2, 2],
                                n_resamples=5)
    assert res.values["m"] == 0.5


def test_early_stopping_like_permutation_sig_diff():
    # PermutationSigDiff: at every block boundary i, stop if count / i < early_min or > early_max
    metrics, human = _task()
    res = stats.metric_clusters(metrics, human, "pearson", n_resamples=1000, early_stopping=(100, 0.02, 0.5))
    used, draws = res.n_resamples_used, res.draws
    assert used is not None and draws is not None
    stopped = 0
    for a, b in zip(*np.triu_indices(4, 1), strict=True):
        delta = res.values[res.metrics[a]] - res.values[res.metrics[b]]
        hits = draws[a, b] >= delta - 1e-12
        k = int(used[a, b])
        assert res.pvalues[a, b] == pytest.approx(hits[:k].mean())
        for end in range(100, k, 100):
            assert 0.02 <= hits[:end].mean() <= 0.5
        if k < 1000:
            stopped += 1
            assert not 0.02 <= hits[:k].mean() <= 0.5
    assert stopped >= 1


def test_errors():
    metrics, human = _task()
    with pytest.raises(InputError, match="constant"):
        stats.metric_clusters({"a": metrics["m0"], "c": np.ones_like(human)}, human, "pearson")
    with pytest.raises(InputError, match="at least 2"):
        stats.metric_clusters({"a": metrics["m0"][:1]}, human[:1], "spa")
    bad = metrics["m0"].copy()
    bad[3, 4] = np.nan
    with pytest.raises(InputError, match="missing"):
        stats.metric_clusters({"a": bad}, human, "acc_t")
    holes = human.copy()
    holes[1, 2] = np.nan
    with pytest.raises(InputError, match="segments judged for every system"):
        stats.metric_clusters(metrics, holes, "spa")
    with pytest.raises(InputError, match="tied"):
        stats.metric_clusters(metrics, np.ones_like(human), "acc_t")
    with pytest.raises(InputError, match="tied"):
        stats.metric_clusters(metrics, np.ones_like(human), "kendall")
    with pytest.raises(InputError, match="statistic"):
        stats.metric_clusters(metrics, human, "bleu")


def test_segment_pearson_draws_equal_explicit_loop():
    metrics, human = _task()
    human = human.copy()
    human[0, :5] = np.nan  # cells without a human score are left out
    res = stats.metric_clusters(metrics, human, "pearson", level="segment", n_resamples=40, random_state=5)
    keep = np.isfinite(human)
    for name, m in metrics.items():
        assert res.values[name] == pytest.approx(scipy.stats.pearsonr(m[keep], human[keep])[0], abs=1e-12)
    swaps = np.random.default_rng(child_seeds(5, 1)[0]).random((40, int(keep.sum()))) < 0.5
    za, zb = (scipy.stats.zscore(metrics[n][keep]) for n in res.metrics[:2])
    for k in range(40):
        a = scipy.stats.pearsonr(human[keep], np.where(swaps[k], za, zb))[0]
        b = scipy.stats.pearsonr(human[keep], np.where(swaps[k], zb, za))[0]
        assert res.draws[0, 1, k] == pytest.approx(a - b, abs=1e-9)
    with pytest.raises(InputError, match="level='segment'"):
        stats.metric_clusters(metrics, human, "kendall", level="segment")


@pytest.mark.data
def test_wmt20_system_kendall_reproduces_published_taus():
    # published WMT20 en-cs system-level Kendall tau vs DA z (DA-en-cs-cor.csv of
    # WMT-Metrics-task/wmt20-metrics, quoted in the data README): chrF, BLEU, COMET, prism, YiSi-1
    import pandas as pd

    systems = pd.read_csv(require_data("wmt20-metrics", "systems.csv"))
    g = systems[(systems["lp"] == "en-cs") & ~systems["is_human"] & systems["human_da_z"].notna()]
    published = {"chrF": 0.485, "BLEU": 0.515, "COMET": 0.909, "prism": 0.818, "YiSi-1": 0.606}
    res = stats.metric_clusters({m: g[f"metric:{m}"].to_numpy() for m in published}, g["human_da_z"].to_numpy(),
                                "kendall", n_resamples=200)
    for m, tau in published.items():
        assert res.values[m] == pytest.approx(tau, abs=5e-4)
        assert res.values[m] == pytest.approx(scipy.stats.kendalltau(g[f"metric:{m}"], g["human_da_z"])[0], abs=1e-12)


def test_permutation_sig_diff_test_vector():
    # stats_test.py PermutationSigDiffTest: Correlation(4, gold, metric) (4 systems x 2 items), Pearson
    # with no averaging; mt-metrics-eval's p for "metric2 > metric1" averaged over np.random seeds 0-9
    # is 0.5109; metric1 is (barely) the better one, so our p for "metric1 > metric2" is about 1 - that
    gold = np.reshape([1, 2, 3, 4, 5, 5, 7, 8], (4, 2))
    m1, m2 = np.reshape([1, 2, 3, 3, 7, 3, 5, 5], (4, 2)), np.reshape([2, 1, 2, 6, 8, 8, 7, 6], (4, 2))
    res = stats.metric_clusters({"m1": m1, "m2": m2}, gold, "pearson", level="segment", n_resamples=5000)
    assert res.metrics == ("m1", "m2")
    delta = scipy.stats.pearsonr(m1.ravel(), gold.ravel())[0] - scipy.stats.pearsonr(m2.ravel(), gold.ravel())[0]
    assert res.values["m1"] - res.values["m2"] == pytest.approx(delta, abs=1e-12)
    assert res.pvalues[0, 1] == pytest.approx(1 - 0.5109, abs=0.03)
    assert res.ranks == {"m1": 1, "m2": 1}


@pytest.mark.parametrize("statistic", ["pearson", "spa", "acc_t"])
def test_no_test_with_zero_resamples_like_k0(statistic):
    # mt-metrics-eval CompareMetrics(k=0): a zero significance matrix, so AssignRanks gives 1, 2, 3, ...
    metrics, human = _task()
    res = stats.metric_clusters(metrics, human, statistic, n_resamples=0)
    assert list(res.ranks.values()) == [1, 2, 3, 4]
    full = stats.metric_clusters(metrics, human, statistic, n_resamples=5)
    assert res.values == full.values and res.metrics == full.metrics
