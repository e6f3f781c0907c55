"""Joint bootstrap of several items from shared resamples, and rank intervals."""
from __future__ import annotations

import numpy as np
import pytest

from xleval.exceptions import InputError
from xleval.stats import bootstrap_sums, bootstrap_sums_joint, rank_intervals


def _ratio(s):
    return s[..., 0] / s[..., 1]


def _unit_stats(rng, n_units=30, m=4):
    sums = rng.normal(size=(n_units, m)) + np.arange(m)
    counts = rng.integers(1, 5, size=(n_units, m)).astype(float)
    return np.stack([sums * counts, counts], axis=2)


def test_each_item_equals_bootstrap_sums_with_the_same_seed():
    # Shared resamples: item j's column is what the one-item bootstrap draws for the same seed.
    stats = _unit_stats(np.random.default_rng(1))
    joint = bootstrap_sums_joint(stats, _ratio, n_resamples=500, random_state=7)
    for j in range(stats.shape[1]):
        one = bootstrap_sums(stats[:, j, :], _ratio, n_resamples=500, random_state=7)
        np.testing.assert_allclose(joint.distribution[:, j], one.distribution, rtol=1e-12)
        assert joint.estimate[j] == pytest.approx(one.estimate, rel=1e-12)
        assert (joint.ci_low[j], joint.ci_high[j]) == pytest.approx((one.ci_low, one.ci_high), rel=1e-12)
    assert joint.distribution.shape == (500, 4) and joint.random_state == 7


def test_point_estimate_is_the_ratio_of_totals():
    stats = _unit_stats(np.random.default_rng(2), m=3)
    joint = bootstrap_sums_joint(stats, _ratio, n_resamples=50, random_state=0)
    np.testing.assert_allclose(joint.estimate, stats[:, :, 0].sum(0) / stats[:, :, 1].sum(0))
    assert np.all(joint.ci_low <= joint.estimate) and np.all(joint.estimate <= joint.ci_high)


def test_shared_resamples_make_differences_tighter_than_independent_ones():
    # Two systems scored on the same documents share each document's difficulty: the CI of
    # their difference from joint resamples is much narrower than from independent resamples.
    rng = np.random.default_rng(3)
    difficulty = rng.normal(scale=5.0, size=200)
    a, b = difficulty + rng.normal(size=200), difficulty + 0.5 + rng.normal(size=200)
    stats = np.stack([np.stack([a, np.ones(200)], 1), np.stack([b, np.ones(200)], 1)], axis=1)
    joint = bootstrap_sums_joint(stats, _ratio, n_resamples=1000, random_state=0)
    diff_joint = np.diff(joint.distribution, axis=1)[:, 0]
    ind_a = bootstrap_sums(stats[:, 0], _ratio, n_resamples=1000, random_state=1).distribution
    ind_b = bootstrap_sums(stats[:, 1], _ratio, n_resamples=1000, random_state=2).distribution
    assert diff_joint.std() < 0.3 * (ind_b - ind_a).std()
    ranks = rank_intervals(joint.estimate, joint.distribution)
    assert ranks.rank.tolist() == [2, 1] and ranks.rank_high.tolist() == [2, 1]  # b is better in every resample


def test_missing_item_in_a_resample_is_nan_and_noted():
    stats = np.zeros((10, 2, 2))
    stats[:, 0] = [1.0, 1.0]
    stats[0, 1] = [3.0, 1.0]  # item 1 has rows in a single unit only
    joint = bootstrap_sums_joint(stats, _ratio, n_resamples=200, random_state=0)
    assert np.isnan(joint.distribution[:, 1]).any() and joint.estimate[1] == 3.0
    assert any("without a defined value" in n for n in joint.notes)
    assert joint.ci_low[1] == joint.ci_high[1] == 3.0


def test_ranks_hand_checked():
    est = np.array([10.0, 30.0, 20.0, 30.0])
    dist = np.array([[10.0, 30.0, 20.0, 30.0],
                     [25.0, 30.0, 20.0, 10.0],
                     [10.0, np.nan, 20.0, 30.0]])
    r = rank_intervals(est, dist, level=0.5)
    assert r.rank.tolist() == [4, 1, 3, 1]  # the two 30s tie for first
    # per resample ranks: item0 4,2,3; item1 1,1,4; item2 3,3,2; item3 1,4,1
    assert r.rank_low.tolist() == [2, 1, 2, 1] and r.rank_high.tolist() == [4, 4, 3, 4]
    low = rank_intervals(est, dist, higher_is_better=False, level=0.5)
    assert low.rank.tolist() == [1, 3, 2, 3]


def test_rank_interval_coverage_of_clearly_separated_items():
    rng = np.random.default_rng(5)
    dist = np.arange(5.0)[None, :] * 10 + rng.normal(size=(1000, 5))
    r = rank_intervals(dist.mean(0), dist)
    assert r.rank.tolist() == [5, 4, 3, 2, 1]
    assert (r.rank_low == r.rank).all() and (r.rank_high == r.rank).all()


def test_bad_input():
    with pytest.raises(InputError, match="3-D"):
        bootstrap_sums_joint(np.ones((3, 2)), _ratio)
    with pytest.raises(InputError, match="one column per item"):
        rank_intervals(np.ones(3), np.ones((10, 2)))
    with pytest.raises(InputError, match="random_state"):
        bootstrap_sums_joint(np.ones((3, 2, 2)), _ratio, random_state=-1)
