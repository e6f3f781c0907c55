"""Chance baselines checked by simulation: a randomly relabelled metric's mean statistic equals the
baseline within its standard error (each simulation here is written independently of the module:
mt-metrics-eval-style Agreement by a loop, SPA by the public function on shuffled rows, acc-t by
``pairwise_accuracy`` on metrics shuffled within items)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from xleval import stats
from xleval.exceptions import InputError


def _agreement(gold: np.ndarray, metric: np.ndarray) -> float:  # mt-metrics-eval's Agreement
    pairs = list(itertools.combinations(range(len(gold)), 2))
    return sum(np.sign(gold[a] - gold[b]) == np.sign(metric[a] - metric[b]) for a, b in pairs) / len(pairs)


def _within(mean: float, values: np.ndarray, expected: float, extra_se: float = 0.0) -> None:
    se = np.hypot(values.std(ddof=1) / np.sqrt(len(values)), extra_se)
    assert abs(mean - expected) <= 3.5 * se, (mean, expected, se)


def test_correlations_are_zero_and_a_random_metric_agrees():
    rng = np.random.default_rng(0)
    human = rng.integers(0, 4, size=12).astype(float)  # ties in the humans
    metric = rng.normal(size=12)
    for name, fn in [("pearson", scipy.stats.pearsonr), ("kendall", scipy.stats.kendalltau)]:
        assert stats.chance_baseline(name).value == 0.0
        sims = np.array([fn(human, rng.permutation(metric))[0] for _ in range(3000)])
        _within(sims.mean(), sims, 0.0)


def test_pairwise_accuracy_with_ties_by_simulation():
    rng = np.random.default_rng(1)
    human = rng.integers(0, 3, size=10).astype(float)
    metric = rng.integers(0, 4, size=10).astype(float)
    res = stats.chance_baseline("pairwise_accuracy", human, metric)
    sims = np.array([_agreement(human, rng.permutation(metric)) for _ in range(3000)])
    _within(sims.mean(), sims, res.value)
    assert res.value != pytest.approx(0.5, abs=0.02)  # ties move it away from a coin flip
    # without metric ties: half of the untied human pairs
    t_h = np.mean([human[a] == human[b] for a, b in itertools.combinations(range(10), 2)])
    assert stats.chance_baseline("pairwise_accuracy", human).value == pytest.approx((1 - t_h) / 2)


def test_spa_exact_over_relabellings_by_simulation():
    rng = np.random.default_rng(2)
    human = np.linspace(0, 1, 6)[:, None] + rng.normal(size=(6, 25))
    metric = human + rng.normal(size=human.shape)
    res = stats.chance_baseline("spa", human, metric)
    hp = stats.pairwise_permutation_pvalues(human)
    sims = np.array([stats.soft_pairwise_accuracy(metric[rng.permutation(6)], None, human_pvalues=hp).statistic
                     for _ in range(400)])
    _within(sims.mean(), sims, res.value)
    assert res.value < stats.soft_pairwise_accuracy(metric, human).statistic


def test_acc_t_by_independent_simulation():
    rng = np.random.default_rng(3)
    human = rng.integers(0, 5, size=(5, 30)).astype(float)
    human[rng.random(human.shape) < 0.2] = np.nan
    metric = rng.normal(size=human.shape).round(1)
    res = stats.chance_baseline("acc_t", human, metric, n_simulations=100, random_state=0)
    assert res.standard_error is not None and res.n_simulations == 100
    keep = np.isfinite(human)
    items = np.broadcast_to(np.arange(30), human.shape)[keep]
    sims = []
    for _ in range(150):
        shuffled = metric.copy()
        for j in range(30):
            rows = np.flatnonzero(keep[:, j])
            shuffled[rows, j] = shuffled[rng.permutation(rows), j]
        sims.append(stats.pairwise_accuracy(shuffled[keep], human[keep], average_by="item", items=items).estimate)
    sims_arr = np.array(sims)
    _within(sims_arr.mean(), sims_arr, res.value, res.standard_error)
    # epsilon = 0 is one of the candidates: calibration never falls below the exact-ties acc23 of a
    # shuffled metric (per-item formula)
    exact = []
    for j in range(30):
        h, m = human[keep[:, j], j], metric[keep[:, j], j]
        if len(h) >= 2:
            iu, ju = np.triu_indices(len(h), 1)
            t_h, t_m = np.mean(h[iu] == h[ju]), np.mean(m[iu] == m[ju])
            exact.append((1 - t_h) * (1 - t_m) / 2 + t_h * t_m)
    assert res.value >= np.mean(exact) - 3 * res.standard_error


def test_global_accuracy_groups_and_errors():
    human = np.array([1.0, 2, 2, 5, 6, 7])
    res = stats.chance_baseline("pairwise_accuracy", human, groups=[0, 0, 0, 1, 1, 1])
    # group 0: 3 pairs, 1 tied -> 2/3 * 1/2; group 1: 3 pairs, none tied -> 1/2; pooled by pairs
    assert res.value == pytest.approx((3 * (2 / 3) / 2 + 3 * 0.5) / 6)
    with pytest.raises(InputError, match="metric="):
        stats.chance_baseline("spa", np.ones((3, 4)))
    with pytest.raises(InputError, match="human="):
        stats.chance_baseline("acc_t")
    with pytest.raises(InputError, match="statistic"):
        stats.chance_baseline("bleu")
