"""Soft pairwise accuracy (Thompson et al. 2024, WMT24) against mt-metrics-eval's pce.py.

Oracles: (0) stats_test.py's testPairwiseConfidenceError vector; (1) numbers printed by
mt-metrics-eval's ``pce.compute_pairwise_p_values`` and ``compute_one_minus_pce`` (GitHub
google-research/mt-metrics-eval, run on the deterministic matrices below with the default 1000
permutations and seed 4, and on WMT20 de-en); (2) an independent float32 transcription of the
procedure described in pce.py's docstring, one system pair at a time; (3) hand-checkable cases.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import require_data
from xleval import stats
from xleval.exceptions import InputError


def _matrices() -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(6)[:, None]
    j = np.arange(40)[None, :]
    human = np.sin(1.3 * i + 0.7 * j) + 0.05 * i
    metric = np.cos(0.9 * i + 1.1 * j) * 0.5 + 0.08 * i
    return metric, human


# printed by mt-metrics-eval pce.compute_pairwise_p_values(human) / (metric), upper triangles row by row
MTME_HUMAN = [0.611, 0.477, 0.512, 0.879, 1.0, 0.379, 0.451, 0.676, 0.968, 0.549, 0.736, 0.885, 0.801, 0.872, 0.817]
MTME_METRIC = [0.949, 0.966, 0.99, 0.998, 1.0, 0.962, 0.97, 0.986, 0.997, 0.949, 0.954, 0.979, 0.935, 0.954, 0.94]
MTME_SPA = 0.7389333333333334


def _loop_pvalues(scores: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """pce.py's docstring, pair by pair: signs 2m-1 from default_rng(seed).random(float32) rounded."""
    rng = np.random.default_rng(seed)
    m = np.rint(rng.random(size=(n_resamples, scores.shape[1]), dtype=np.float32))
    signs = (m * np.float32(2.0) - np.float32(1.0)).astype(np.float32)
    seg = scores.astype(np.float32)
    n = len(seg)
    out = np.full((n, n), np.nan)
    for a in range(n):
        for b in range(a + 1, n):
            null = signs @ seg[a] - signs @ seg[b]
            observed = np.sum(seg[a]) - np.sum(seg[b])
            out[a, b] = np.mean(null >= observed)
    return out


def test_stats_test_vector():
    # mt-metrics-eval stats_test.py testPairwiseConfidenceError: Correlation(2, gold [1, 2, 3, 2, 3, 4],
    # metric [2, 2, 4, 1, 3, 5]) -> 0.872 (3 places); rows are systems
    res = stats.soft_pairwise_accuracy([[2, 2, 4], [1, 3, 5]], [[1, 2, 3], [2, 3, 4]])
    assert res.statistic == pytest.approx(0.872, abs=5e-4)


def test_pvalues_equal_mt_metrics_eval_printed_values():
    metric, human = _matrices()
    iu = np.triu_indices(6, 1)
    np.testing.assert_array_equal(stats.pairwise_permutation_pvalues(human)[iu], MTME_HUMAN)
    np.testing.assert_array_equal(stats.pairwise_permutation_pvalues(metric)[iu], MTME_METRIC)
    p = stats.pairwise_permutation_pvalues(human)
    assert np.isnan(p[np.tril_indices(6)]).all()  # diagonal and lower triangle NaN, as pce.py


def test_spa_equals_mt_metrics_eval():
    metric, human = _matrices()
    res = stats.soft_pairwise_accuracy(metric, human)
    assert res.statistic == pytest.approx(MTME_SPA, abs=1e-12)
    assert (res.n_systems, res.n_segments, res.n_resamples, res.random_state, res.n_pairs) == (6, 40, 1000, 4, 15)
    d = res.to_dict()
    assert d["statistic"] == res.statistic and "metric_pvalues" not in d


@pytest.mark.parametrize(("n", "s", "seed", "r"), [(2, 1, 4, 50), (7, 33, 0, 300), (12, 257, 9, 1000)])
def test_pvalues_equal_pairwise_loop(n, s, seed, r):
    rng = np.random.default_rng(seed + 100)
    scores = rng.normal(size=(n, s)) + rng.normal(size=(n, 1))
    got = stats.pairwise_permutation_pvalues(scores, n_resamples=r, random_state=seed)
    np.testing.assert_array_equal(got, _loop_pvalues(scores, r, seed))


def test_spa_by_definition_and_shared_human_matrix():
    rng = np.random.default_rng(3)
    human = rng.normal(size=(8, 60)) + np.linspace(0, 1, 8)[:, None]
    metric = human + rng.normal(size=human.shape)
    hp, mp = _loop_pvalues(human, 1000, 4), _loop_pvalues(metric, 1000, 4)
    total = sum(1 - abs(hp[i, j] - mp[i, j]) for i in range(8) for j in range(i + 1, 8))
    expected = total / math.comb(8, 2)
    assert stats.soft_pairwise_accuracy(metric, human).statistic == pytest.approx(expected, abs=1e-12)
    once = stats.pairwise_permutation_pvalues(human)
    shared = stats.soft_pairwise_accuracy(metric, None, human_pvalues=once)
    assert shared.statistic == pytest.approx(expected, abs=1e-12)


def test_hand_checked_two_systems():
    # pce.py's example: A - B = 0.6 on each of 5 segments; only the all-(+1) sign rows reach the
    # observed 3.0, so p(A > B) is the share of such rows (about 1/32), p for the mirror case 1.
    a = np.array([0.8, 0.9, 0.7, 1.0, 0.6])
    b = a - 0.6
    rng = np.random.default_rng(4)
    signs = np.rint(rng.random(size=(1000, 5), dtype=np.float32))
    share = np.mean(signs.sum(axis=1) == 5)
    p = stats.pairwise_permutation_pvalues(np.vstack([a, b]))
    assert p[0, 1] == pytest.approx(share) and 0.01 < share < 0.06
    assert stats.pairwise_permutation_pvalues(np.vstack([b, a]))[0, 1] == 1.0


def test_identical_and_affine_metric_score_one():
    _, human = _matrices()
    assert stats.soft_pairwise_accuracy(human, human).statistic == 1.0
    # the p-values depend on differences of sums only: a positive scale by a power of two is exact
    assert stats.soft_pairwise_accuracy(4.0 * human, human).statistic == 1.0


def test_errors_name_the_rule():
    metric, human = _matrices()
    bad = metric.copy()
    bad[2, 5] = np.nan
    with pytest.raises(InputError, match="complete systems x segments matrix"):
        stats.soft_pairwise_accuracy(bad, human)
    with pytest.raises(InputError, match="at least 2"):
        stats.soft_pairwise_accuracy(metric[:1], human[:1])
    with pytest.raises(InputError, match="same shape"):
        stats.soft_pairwise_accuracy(metric, human[:, :10])
    with pytest.raises(InputError, match="random_state"):
        stats.soft_pairwise_accuracy(metric, human, random_state=-1)
    assert isinstance(stats.soft_pairwise_accuracy(metric, human, random_state=None).random_state, int)
    with pytest.raises(InputError, match="human_pvalues"):
        stats.soft_pairwise_accuracy(metric, None, human_pvalues=np.zeros((3, 3)))


def test_memory_order_does_not_change_the_sums():
    # pce.py sums C-ordered rows; a column-major copy (as pandas pivots give) must not change a p-value
    _, human = _matrices()
    iu = np.triu_indices(6, 1)
    np.testing.assert_array_equal(stats.pairwise_permutation_pvalues(np.asfortranarray(human))[iu], MTME_HUMAN)


@pytest.mark.data
def test_wmt20_de_en_spa_equals_mt_metrics_eval():
    # mt-metrics-eval stats.PairwiseConfidenceError on WMT20 de-en (12 MT systems, DA z, the 267
    # segments judged for every system), chrF and parbleu: printed 0.8051666666666666, 0.8346212121212121
    import pandas as pd

    df = pd.read_parquet(require_data("wmt20-metrics", "segments.parquet"),
                         columns=["lp", "system", "seg_id", "is_human", "human_da_z", "metric:chrF", "metric:parbleu"])
    g = df[(df["lp"] == "de-en") & ~df["is_human"]]
    human = g.pivot_table(index="system", columns="seg_id", values="human_da_z", dropna=False)
    full = human.notna().all(axis=0).to_numpy()
    h = human.to_numpy()[:, full]
    hp = stats.pairwise_permutation_pvalues(h)
    for col, expected in [("metric:chrF", 0.8051666666666666), ("metric:parbleu", 0.8346212121212121)]:
        m = g.pivot_table(index="system", columns="seg_id", values=col).loc[human.index, human.columns].to_numpy()
        assert stats.soft_pairwise_accuracy(m[:, full], h).statistic == pytest.approx(expected, abs=1e-12)
        assert stats.soft_pairwise_accuracy(m[:, full], None, human_pvalues=hp).statistic == pytest.approx(
            expected, abs=1e-12)
