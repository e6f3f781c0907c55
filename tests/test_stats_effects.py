"""Effect sizes: eta squared vs statsmodels' one-way ANOVA, Kruskal-Wallis vs scipy, Cohen's d by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss
import statsmodels.api as sm
import statsmodels.formula.api as smf

from xleval.exceptions import InputError
from xleval.stats import cohens_d, eta_squared, kruskal_wallis


@pytest.fixture
def grouped():
    rng = np.random.default_rng(1)
    groups = np.repeat(["de", "fr", "zh", "ja"], [12, 20, 8, 15])
    shift = pd.Series(groups).map({"de": 0.0, "fr": 0.2, "zh": 1.0, "ja": 0.5}).to_numpy()
    return rng.normal(size=groups.size) + shift, groups


def test_eta_squared_matches_statsmodels_anova(grouped):
    values, groups = grouped
    res = eta_squared(values, groups, n_resamples=300, random_state=0)
    table = sm.stats.anova_lm(smf.ols("v ~ C(g)", data=pd.DataFrame({"v": values, "g": groups})).fit())
    assert res.estimate == pytest.approx(table.sum_sq.iloc[0] / table.sum_sq.sum(), rel=1e-10)
    assert res.p_value == pytest.approx(table["PR(>F)"].iloc[0], rel=1e-8)
    assert res.ci_low < res.estimate < res.ci_high and res.n == values.size


def test_eta_squared_bca_and_small_groups(grouped):
    values, groups = grouped
    res = eta_squared(values, groups, method="bca", n_resamples=300, random_state=0)
    assert res.method.endswith("bca") and 0 <= res.ci_low < res.ci_high <= 1
    tiny = eta_squared([1.0, 2.0, 3.0, 10.0, 11.0], ["a", "a", "a", "b", "b"], n_resamples=100, random_state=0)
    assert tiny.unreliable and len([n for n in tiny.notes if "unreliable" in n]) == 2
    single = eta_squared([1.0, 2.0, 3.0, 10.0], ["a", "a", "a", "b"], n_resamples=100, random_state=0,
                         method="bca")
    assert np.isfinite(single.estimate)


def test_eta_squared_constant_values_are_undefined_not_an_error():
    res = eta_squared([1.0] * 6, ["a", "a", "a", "b", "b", "b"], n_resamples=50, random_state=0)
    assert np.isnan(res.estimate) and res.unreliable and res.p_value is None


def test_kruskal_wallis_matches_scipy(grouped):
    values, groups = grouped
    res = kruskal_wallis(values, groups)
    ref = ss.kruskal(*[values[groups == g] for g in np.unique(groups)])
    assert res.statistic == pytest.approx(ref.statistic) and res.p_value == pytest.approx(ref.pvalue)
    assert res.df == 3 and res.effect_size == pytest.approx(ref.statistic / (values.size - 1))
    const = kruskal_wallis([2.0] * 4, ["a", "a", "b", "b"])
    assert np.isnan(const.p_value) and const.unreliable
    with pytest.raises(InputError, match="at least 2 groups"):
        kruskal_wallis([1.0, 2.0], ["a", "a"])


def test_cohens_d_by_hand():
    # a = [1, 2, 3] (mean 2, var 1), b = [3, 4, 5, 6, 7] (mean 5, var 2.5)
    # pooled var = (2*1 + 4*2.5) / 6 = 2 -> d = (2 - 5) / sqrt(2)
    res = cohens_d([1.0, 2.0, 3.0], [3.0, 4.0, 5.0, 6.0, 7.0])
    d = -3 / np.sqrt(2)
    assert res.estimate == pytest.approx(d)
    se = np.sqrt(8 / 15 + d**2 / 16)
    assert res.standard_error == pytest.approx(se)
    assert res.ci_low == pytest.approx(d - ss.norm.ppf(0.975) * se)
    assert res.unreliable  # a sample of 3


@pytest.mark.slow
def test_cohens_d_interval_covers_in_simulation():
    rng = np.random.default_rng(3)
    hits = sum(
        (r := cohens_d(rng.normal(0.5, 1, 60), rng.normal(0, 1, 60))).ci_low <= 0.5 <= r.ci_high
        for _ in range(1000)
    )
    assert 0.93 <= hits / 1000 <= 0.97
