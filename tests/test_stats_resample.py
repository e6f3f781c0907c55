"""xleval.stats' bootstrap of a weighted sample (weighted_bootstrap_counts) and percentile_bounds."""
import numpy as np
import pytest
import scipy.stats

from xleval.exceptions import InputError
from xleval.stats import percentile_bounds, weighted_bootstrap_counts


def test_each_resample_draws_the_sample_size_and_counts_are_unbiased():
    w = np.array([3.0, 1.0, 6.0])
    counts = weighted_bootstrap_counts(w, n_resamples=20000, random_state=0)
    assert counts.shape == (20000, 3) and (counts.sum(axis=1) == 10).all()  # size = total weight
    # multinomial(10, w/10): E = 10 p, sd = sqrt(10 p (1 - p)); the mean over B resamples is within 4 SE
    p = w / w.sum()
    se = np.sqrt(10 * p * (1 - p) / 20000)
    assert np.all(np.abs(counts.mean(axis=0) - 10 * p) < 4 * se)
    assert (weighted_bootstrap_counts(w, n_resamples=5, size=1000, random_state=1).sum(axis=1) == 1000).all()


def test_unit_weights_are_the_ordinary_bootstrap_of_the_rows():
    """Counts over n unit-weight points are the row bootstrap: the percentile CI of a mean matches scipy's."""
    x = np.random.default_rng(3).normal(10, 2, 60)
    counts = weighted_bootstrap_counts(np.ones_like(x), n_resamples=20000, random_state=4)
    low, high = percentile_bounds(counts @ x / len(x), 0.95)
    ref = scipy.stats.bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                                random_state=5).confidence_interval
    sd = x.std(ddof=1) / np.sqrt(len(x))
    assert abs(low - ref.low) < 0.2 * sd and abs(high - ref.high) < 0.2 * sd  # Monte-Carlo error ~0.03 sd


def test_a_compressed_sample_resamples_its_represented_size():
    """Two points standing for 30 and 70 rows: the resampled share of the first has the binomial sd of 100 draws."""
    counts = weighted_bootstrap_counts([30.0, 70.0], n_resamples=20000, random_state=6)
    share = counts[:, 0] / 100
    assert share.std() == pytest.approx(np.sqrt(0.3 * 0.7 / 100), rel=0.05)


def test_one_generator_gives_one_reproducible_stream():
    a = np.random.default_rng(7)
    first = [weighted_bootstrap_counts([1.0, 2.0], n_resamples=3, random_state=a) for _ in range(2)]
    b = np.random.default_rng(7)
    again = [weighted_bootstrap_counts([1.0, 2.0], n_resamples=3, random_state=b) for _ in range(2)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], weighted_bootstrap_counts([1.0, 2.0], n_resamples=3, random_state=8))


def test_percentile_bounds_hand_checked():
    low, high = percentile_bounds(np.arange(1001.0), 0.95)
    assert (low, high) == pytest.approx((25.0, 975.0), abs=1e-9)  # 2.5% and 97.5% of 0..1000
    lows, highs = percentile_bounds(np.column_stack([np.arange(1001.0), -np.arange(1001.0)]), 0.9)
    np.testing.assert_allclose(lows, [50.0, -950.0], atol=1e-9)
    np.testing.assert_allclose(highs, [950.0, -50.0], atol=1e-9)


@pytest.mark.parametrize("weights, kwargs, match", [
    ([1.0, -1.0], {}, "non-negative"), ([0.0, 0.0], {}, "positive sum"), ([1.0, np.nan], {}, "NaN"),
    ([1.0], {"n_resamples": 0}, "n_resamples"), ([1.0], {"random_state": -1}, "random_state"),
])
def test_bad_input_is_named(weights, kwargs, match):
    with pytest.raises(InputError, match=match):
        weighted_bootstrap_counts(weights, **kwargs)
    with pytest.raises(InputError, match="level"):
        percentile_bounds([1.0, 2.0], 1.5)


def test_percentile_bounds_leave_out_non_finite_resamples():
    """A resample where a statistic is undefined must not poison the others' interval (np.quantile
    would return NaN for the whole column), and a column with no finite value has NaN bounds."""
    col = np.arange(1001.0)
    dist = np.column_stack([np.r_[col, np.nan, np.inf], np.full(1003, np.nan)])
    low, high = percentile_bounds(dist, 0.95)
    assert (low[0], high[0]) == pytest.approx((25.0, 975.0), abs=1e-9)
    assert np.isnan(low[1]) and np.isnan(high[1])
    # along another axis the same numbers come out
    low_t, high_t = percentile_bounds(dist.T, 0.95, axis=1)
    np.testing.assert_array_equal(low_t, low)
    np.testing.assert_array_equal(high_t, high)
