"""Correlations: parity with scipy.stats (coefficients, p-values, Pearson CI) and statsmodels
(partial correlation p-value = OLS t-test)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
import statsmodels.api as sm

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import correlation, partial_correlation


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    x = np.round(rng.normal(size=40), 1)  # rounding creates ties, which matter for Kendall
    return x, np.round(x + rng.normal(size=40), 1)


@pytest.mark.parametrize("method,ref", [
    ("pearson", ss.pearsonr),
    ("spearman", ss.spearmanr),
    ("kendall_b", lambda x, y: ss.kendalltau(x, y, variant="b")),
    ("kendall_c", lambda x, y: ss.kendalltau(x, y, variant="c")),
])
def test_coefficient_and_p_value_match_scipy(xy, method, ref):
    res = correlation(*xy, method, random_state=0, n_resamples=200)
    expected = ref(*xy)
    assert res.estimate == pytest.approx(expected.statistic, rel=1e-12)
    assert res.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert res.n == 40 and res.ci_low < res.estimate < res.ci_high


def test_pearson_fisher_interval_matches_scipy(xy):
    res = correlation(*xy, "pearson", level=0.9)
    ref = ss.pearsonr(*xy).confidence_interval(confidence_level=0.9)
    assert (res.ci_low, res.ci_high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    assert res.ci_method == "fisher"


def test_spearman_and_kendall_intervals_use_the_documented_variances(xy):
    n = 40
    z = ss.norm.ppf(0.975)
    rho = correlation(*xy, "spearman")
    se = np.sqrt((1 + rho.estimate**2 / 2) / (n - 3))  # Bonett & Wright (2000)
    assert rho.ci_low == pytest.approx(np.tanh(np.arctanh(rho.estimate) - z * se))
    tau = correlation(*xy, "kendall")
    se = np.sqrt(0.437 / (n - 4))  # Fieller, Hartley & Pearson (1957)
    assert tau.method == "kendall_b"
    assert tau.ci_high == pytest.approx(np.tanh(np.arctanh(tau.estimate) + z * se))


def test_bootstrap_interval_is_reproducible_and_recorded(xy):
    a = correlation(*xy, "spearman", ci="bootstrap", n_resamples=300, random_state=4)
    b = correlation(*xy, "spearman", ci="bootstrap", n_resamples=300, random_state=4)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert a.ci_method == "bootstrap-percentile" and a.random_state == 4 and a.n_resamples == 300


def test_constant_input_gives_nan_and_a_note_not_a_warning():
    res = correlation([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0])
    assert np.isnan(res.estimate) and res.unreliable
    assert res.to_dict()["estimate"] is None


def test_nan_policy():
    x, y = [1.0, 2.0, np.nan, 4.0, 5.0], [2.0, 1.0, 3.0, 5.0, 4.0]
    with pytest.raises(InputError, match="NaN"):
        correlation(x, y)
    with pytest.warns(DataQualityWarning, match="1 of 5 rows"):
        res = correlation(x, y, nan_policy="omit")
    assert res.n == 4
    with pytest.raises(InputError, match="kendall_c"):
        correlation([1.0, 2.0, 3.0], [1.0, 3.0, 2.0], "kendall_c", ci="fisher")


def test_partial_correlation_matches_ols_t_test():
    rng = np.random.default_rng(5)
    n = 60
    z = rng.normal(size=(n, 2))
    x = z @ [1.0, -0.5] + rng.normal(size=n)
    y = 0.4 * x + z @ [0.3, 0.8] + rng.normal(size=n)
    res = partial_correlation(x, y, z)
    ols = sm.OLS(y, sm.add_constant(np.column_stack([x, z]))).fit()
    t, df = ols.tvalues[1], ols.df_resid
    assert res.p_value == pytest.approx(ols.pvalues[1], rel=1e-9)
    assert res.estimate == pytest.approx(t / np.sqrt(t**2 + df), rel=1e-9)
    se = 1 / np.sqrt(n - 3 - 2)
    assert res.ci_low == pytest.approx(np.tanh(np.arctanh(res.estimate) - ss.norm.ppf(0.975) * se))


def test_partial_correlation_removes_a_confound():
    # x and y both follow z and are otherwise independent: high raw r, partial r near 0.
    rng = np.random.default_rng(6)
    z = rng.normal(size=500)
    x, y = z + 0.3 * rng.normal(size=500), z + 0.3 * rng.normal(size=500)
    assert correlation(x, y).estimate > 0.8
    part = partial_correlation(x, y, z)
    assert part.ci_low < 0 < part.ci_high
    spear = partial_correlation(x, y, z, method="spearman")
    assert spear.method == "partial_spearman" and abs(spear.estimate) < 0.15


def test_partial_correlation_needs_enough_rows():
    with pytest.raises(InputError, match="more than 5 rows"):
        partial_correlation([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0], np.ones((5, 2)))


def test_partial_correlation_with_a_redundant_covariate_equals_the_plain_one():
    # A constant covariate is absorbed by the intercept: nothing is partialled out, no df is lost.
    rng = np.random.default_rng(8)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    part = partial_correlation(x, y, np.ones(30))
    plain = correlation(x, y)
    assert part.estimate == pytest.approx(plain.estimate)
    assert part.p_value == pytest.approx(plain.p_value)
    assert (part.ci_low, part.ci_high) == pytest.approx((plain.ci_low, plain.ci_high))
