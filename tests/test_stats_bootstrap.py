"""Bootstrap engine: parity with scipy.stats.bootstrap, strata, clusters, sums, paired, coverage."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

from xleval.exceptions import InputError
from xleval.stats import bootstrap, bootstrap_sums, paired_bootstrap


@pytest.fixture
def skewed():
    return np.random.default_rng(11).exponential(size=37)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("statistic", [np.mean, np.median, "mean"])
def test_matches_scipy_bootstrap_for_same_seed(skewed, method, statistic):
    ours = bootstrap(skewed, statistic, n_resamples=999, method=method, random_state=5)
    func = np.mean if statistic == "mean" else statistic
    ref = ss.bootstrap((skewed,), func, n_resamples=999, method=method, rng=np.random.default_rng(5))
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, rel=1e-12)
    assert ours.standard_error == pytest.approx(ref.standard_error, rel=1e-10)
    assert ours.estimate == pytest.approx(float(func(skewed)))
    assert ours.random_state == 5 and ours.n == 37 and ours.n_resamples == 999


def test_non_vectorised_callable_gives_the_same_distribution(skewed):
    vec = bootstrap(skewed, np.median, n_resamples=200, random_state=1)
    loop = bootstrap(skewed, lambda x: float(np.median(x)), n_resamples=200, random_state=1)
    np.testing.assert_allclose(vec.distribution, loop.distribution)


def test_same_seed_same_result_and_fresh_seed_is_recorded(skewed):
    a = bootstrap(skewed, random_state=3)
    b = bootstrap(skewed, random_state=3)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    fresh = bootstrap(skewed)
    again = bootstrap(skewed, random_state=fresh.random_state)
    assert (fresh.ci_low, fresh.ci_high) == (again.ci_low, again.ci_high)


def test_sums_path_equals_general_path_for_a_ratio_of_sums():
    rng = np.random.default_rng(2)
    num, den = rng.poisson(5, 60).astype(float), rng.poisson(9, 60).astype(float) + 1
    sums = bootstrap_sums(np.column_stack([num, den]), lambda s: s[..., 0] / s[..., 1], n_resamples=300,
                          random_state=4)
    loop = bootstrap((num, den), lambda a, b: a.sum() / b.sum(), n_resamples=300, random_state=4)
    assert sums.estimate == pytest.approx(num.sum() / den.sum())
    np.testing.assert_allclose(sums.distribution, loop.distribution, rtol=1e-12)


def test_stratified_resamples_keep_every_group_even_of_size_one():
    rng = np.random.default_rng(0)
    sizes = [1, 2, 3, 4, 5, 30]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    values = rng.normal(size=groups.size)
    # The statistic sees the group column resampled with the values: it must always find every group
    # with its original size.
    seen = bootstrap((values, groups.astype(float)), lambda v, g: float(np.all(np.bincount(g.astype(int)) == sizes)),
                     strata=groups, n_resamples=200, random_state=0)
    assert np.all(seen.distribution == 1.0)
    res = bootstrap(values, "mean", strata=groups, n_resamples=200, random_state=0)
    flagged = [n for n in res.notes if n.startswith("unreliable")]
    assert len(flagged) == 4 and res.unreliable  # groups of 1..4 items; the group of 5 is fine
    assert np.isfinite(res.ci_low) and np.isfinite(res.ci_high)


@pytest.mark.parametrize("sizes", [[1], [1, 1], [2, 1, 3], [5, 4, 3, 2, 1]])
def test_stratified_tiny_groups_never_crash(sizes):
    groups = np.repeat([f"g{i}" for i in range(len(sizes))], sizes)
    values = np.arange(groups.size, dtype=float)
    for method in ("percentile", "bca"):
        res = bootstrap(values, np.mean, strata=groups, n_resamples=50, method=method, random_state=1)
        assert res.unreliable
        assert res.ci_low <= res.estimate + 1e-12 or "degenerate" in " ".join(res.notes)


def test_stratified_mean_varies_only_through_within_group_spread():
    # Two groups of constant values: stratified resamples keep group sizes, so the mean never moves.
    values = np.array([0.0] * 10 + [1.0] * 10)
    groups = np.repeat(["a", "b"], 10)
    res = bootstrap(values, "mean", strata=groups, n_resamples=100, random_state=0)
    assert res.ci_low == res.ci_high == pytest.approx(0.5)
    assert any("degenerate" in n for n in res.notes)
    plain = bootstrap(values, "mean", n_resamples=100, random_state=0)
    assert plain.ci_high > plain.ci_low


def test_cluster_bootstrap_keeps_clusters_whole_and_paths_agree():
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(8), [1, 2, 3, 4, 5, 6, 7, 8])
    values = rng.normal(size=clusters.size) + clusters
    whole = bootstrap((clusters.astype(float),), lambda c: float(np.all(
        np.bincount(c.astype(int), minlength=8) % np.arange(1, 9) == 0)), clusters=clusters, n_resamples=100,
        random_state=2)
    assert np.all(whole.distribution == 1.0)
    fast = bootstrap(values, "mean", clusters=clusters, n_resamples=300, random_state=9, method="bca")
    slow = bootstrap(values, lambda x: float(np.mean(x)), clusters=clusters, n_resamples=300, random_state=9,
                     method="bca")
    np.testing.assert_allclose(fast.distribution, slow.distribution, rtol=1e-12)
    assert fast.ci_low == pytest.approx(slow.ci_low) and fast.ci_high == pytest.approx(slow.ci_high)


def test_cluster_must_lie_in_one_stratum():
    with pytest.raises(InputError, match="spans several strata"):
        bootstrap(np.arange(4.0), clusters=[0, 0, 1, 1], strata=["a", "b", "b", "b"])


def test_paired_bootstrap_is_bootstrap_of_differences():
    rng = np.random.default_rng(4)
    a = rng.normal(size=40)
    b = a - 0.3 + rng.normal(scale=0.1, size=40)
    res = paired_bootstrap(a, b, n_resamples=500, random_state=0)
    ref = bootstrap(a - b, "mean", n_resamples=500, random_state=0)
    assert (res.ci_low, res.ci_high) == (ref.ci_low, ref.ci_high)
    assert 0 < res.ci_low < 0.3 < res.ci_high
    med = paired_bootstrap(a, b, np.median, n_resamples=200, random_state=0)
    assert med.estimate == pytest.approx(np.median(a) - np.median(b))


@pytest.mark.parametrize("kwargs,match", [
    ({"level": 95}, "level"),
    ({"method": "basic"}, "method"),
    ({"n_resamples": 1}, "n_resamples"),
    ({"random_state": -1}, "random_state"),
    ({"strata": [None, "a", "a"]}, "missing label"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(InputError, match=match):
        bootstrap(np.arange(3.0), **kwargs)


def test_nan_in_data_is_refused_with_its_row():
    with pytest.raises(InputError, match=r"rows 2"):
        bootstrap([1.0, 2.0, np.nan, 4.0])


def test_undefined_resamples_are_counted_not_hidden():
    # A ratio with a zero denominator in most rows: resamples with no nonzero denominator are undefined.
    stats = np.array([[1.0, 1.0]] + [[0.0, 0.0]] * 9)
    res = bootstrap_sums(stats, lambda s: np.divide(s[..., 0], s[..., 1], out=np.full(s.shape[:-1], np.nan),
                                                    where=s[..., 1] != 0), n_resamples=200, random_state=0)
    assert any("undefined" in n for n in res.notes) and res.unreliable


@pytest.mark.slow
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_95_percent_intervals_of_a_mean_cover_the_truth(method):
    # 1000 normal data sets of n = 100, true mean 0. Percentile/BCa intervals of a mean are slightly
    # narrow for finite n (about 94.5% at n = 100); the binomial SE of the coverage over 1000
    # simulations is 0.7 points, so 93-97% is a fair band.
    rng = np.random.default_rng(2024)
    hits = 0
    n_sim = 1000
    for sim in range(n_sim):
        x = rng.normal(size=100)
        res = bootstrap(x, "mean", n_resamples=1000, method=method, random_state=sim)
        hits += res.ci_low <= 0.0 <= res.ci_high
    assert 0.93 <= hits / n_sim <= 0.97


@pytest.mark.slow
def test_cluster_bootstrap_covers_where_row_bootstrap_undercovers():
    # Items with a shared random effect (intra-class correlation 0.5): resampling rows ignores the
    # dependence and under-covers badly; resampling clusters restores nominal coverage.
    rng = np.random.default_rng(7)
    n_sim, n_clusters, size = 500, 40, 5
    clusters = np.repeat(np.arange(n_clusters), size)
    cover_cluster = cover_rows = 0
    for sim in range(n_sim):
        x = np.repeat(rng.normal(size=n_clusters), size) + rng.normal(size=clusters.size)
        c = bootstrap(x, "mean", clusters=clusters, n_resamples=500, random_state=sim)
        r = bootstrap(x, "mean", n_resamples=500, random_state=sim)
        cover_cluster += c.ci_low <= 0 <= c.ci_high
        cover_rows += r.ci_low <= 0 <= r.ci_high
    assert 0.92 <= cover_cluster / n_sim <= 0.97
    assert cover_rows / n_sim < 0.85


# ----------------------------------------------------------------------------- distribution -> estimate
def test_estimate_from_distribution_is_the_percentile_interval_of_the_finite_resamples():
    from xleval.stats import estimate_from_distribution

    dist = np.r_[np.linspace(0.0, 1.0, 101), np.nan, np.inf]
    est = estimate_from_distribution(0.5, dist, n=30, level=0.9, random_state=3)
    assert (est.ci_low, est.ci_high) == (pytest.approx(0.05), pytest.approx(0.95))  # 5th/95th of 0..1 step 0.01
    assert est.standard_error == pytest.approx(np.std(np.linspace(0.0, 1.0, 101), ddof=1))
    assert est.method == "bootstrap-percentile" and est.random_state == 3 and est.n == 30 and est.n_resamples == 103
    assert est.notes == ("2 of 103 resamples gave an undefined statistic and were left out",)


def test_estimate_from_distribution_reproduces_the_engines_intervals_from_its_distribution():
    from xleval.stats import estimate_from_distribution

    x = np.random.default_rng(8).normal(size=25)
    for method in ("percentile", "bca"):
        ours = bootstrap(x, "median", method=method, n_resamples=500, random_state=4)
        jack = np.array([np.median(np.delete(x, i)) for i in range(len(x))])
        again = estimate_from_distribution(ours.estimate, ours.distribution, n=len(x), method=method,
                                           random_state=4, jackknife=jack)
        assert (again.ci_low, again.ci_high, again.standard_error) == (ours.ci_low, ours.ci_high, ours.standard_error)
        assert again.method == ours.method


def test_estimate_from_distribution_refuses_bca_without_a_jackknife():
    from xleval.stats import estimate_from_distribution

    with pytest.raises(InputError, match="jackknife"):
        estimate_from_distribution(0.0, [0.1, 0.2, 0.3], n=3, method="bca")
