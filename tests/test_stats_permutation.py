"""Permutation tests: exact parity with scipy.stats.permutation_test, +1 correction, null uniformity."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from xleval.exceptions import InputError
from xleval.stats import permutation_test_2samp, permutation_test_paired


def _mean_diff(x, y, axis):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_paired_exact_matches_scipy(alternative):
    rng = np.random.default_rng(1)
    a = rng.normal(size=11)
    b = a + rng.normal(0.4, 1, size=11)
    ours = permutation_test_paired(a, b, alternative=alternative)
    ref = ss.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                              n_resamples=np.inf, vectorized=True, alternative=alternative)
    assert ours.exact and ours.n_resamples == 2**11
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_two_sample_exact_matches_scipy(alternative):
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=6), rng.normal(0.8, 1, size=7)
    ours = permutation_test_2samp(x, y, alternative=alternative)
    ref = ss.permutation_test((x, y), _mean_diff, n_resamples=np.inf, vectorized=True, alternative=alternative)
    assert ours.exact
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_custom_statistic_paired_swap_matches_scipy_exactly():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=9), rng.normal(size=9)

    def med(x, y, axis):
        return np.median(x, axis=axis) - np.median(y, axis=axis)

    ours = permutation_test_paired(a, b, med)
    ref = ss.permutation_test((a, b), med, permutation_type="samples", n_resamples=np.inf, vectorized=True)
    assert ours.p_value == pytest.approx(ref.pvalue)
    loop = permutation_test_paired(a, b, lambda x, y: float(np.median(x) - np.median(y)))
    assert loop.p_value == pytest.approx(ours.p_value)


def test_randomised_p_value_uses_plus_one_correction_and_is_reproducible():
    rng = np.random.default_rng(4)
    a = rng.normal(2.0, 0.1, size=40)
    b = rng.normal(size=40)
    res = permutation_test_paired(a, b, n_resamples=999, random_state=8)
    # nothing in the null is as extreme as a 2-sd shift on 40 items: p = 1/(B+1), never 0; two-sided doubles it
    assert not res.exact and res.p_value == pytest.approx(2 / 1000)
    assert permutation_test_paired(a, b, n_resamples=999, random_state=8).p_value == res.p_value
    assert res.random_state == 8 and res.to_dict()["n_resamples"] == 999


def test_randomised_two_sample_agrees_with_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=30), rng.normal(0.5, 1, size=25)
    ours = permutation_test_2samp(x, y, n_resamples=20000, random_state=1)
    ref = ss.permutation_test((x, y), _mean_diff, n_resamples=20000, vectorized=True, rng=np.random.default_rng(2))
    se = np.sqrt(ref.pvalue * (1 - ref.pvalue) / 20000)
    assert abs(ours.p_value - ref.pvalue) < 5 * se + 1e-4


def test_bad_input():
    with pytest.raises(InputError, match="same length"):
        permutation_test_paired([1.0, 2.0], [1.0])
    with pytest.raises(InputError, match="alternative"):
        permutation_test_2samp([1.0, 2.0], [3.0], alternative="bigger")


@pytest.mark.slow
def test_p_values_are_uniform_under_the_null():
    # 400 null data sets; the share of p <= alpha must stay within ~3 binomial SEs of alpha.
    rng = np.random.default_rng(11)
    paired, two = [], []
    for sim in range(400):
        d = rng.normal(size=(2, 25))
        paired.append(permutation_test_paired(d[0], d[1], n_resamples=499, random_state=sim).p_value)
        two.append(permutation_test_2samp(d[0, :12], d[1, :15], n_resamples=499, random_state=sim).p_value)
    for pvals in (np.array(paired), np.array(two)):
        for alpha in (0.05, 0.2, 0.5):
            se = np.sqrt(alpha * (1 - alpha) / pvals.size)
            assert abs(np.mean(pvals <= alpha) - alpha) < 3 * se
