"""GroupStats: vectorised per-group moments equal numpy/pandas; merge is exact and associative."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xleval.calibration import GroupStats, QuantileSketch


def _reference(values, codes, k):
    df = pd.DataFrame({"v": values, "g": codes})
    df = df[np.isfinite(df["v"])]
    g = df.groupby("g")["v"]
    return (g.size().reindex(range(k), fill_value=0).to_numpy(), g.mean().reindex(range(k)).to_numpy(),
            g.var(ddof=0).reindex(range(k)).to_numpy(), g.min().reindex(range(k)).to_numpy(),
            g.max().reindex(range(k)).to_numpy())


def test_one_pass_equals_pandas():
    rng = np.random.default_rng(1)
    values = rng.normal(3.0, 2.0, 10_000)
    values[::97] = np.nan
    values[5] = np.inf
    codes = rng.integers(0, 7, len(values))
    s = GroupStats.from_values(values, codes, list("abcdefg"))
    n, mean, var, vmin, vmax = _reference(values, codes, 7)
    np.testing.assert_array_equal(s.count, n)
    np.testing.assert_allclose(s.mean, mean, rtol=1e-13)
    np.testing.assert_allclose(s.var(), var, rtol=1e-12)
    np.testing.assert_array_equal(s.min, vmin)
    np.testing.assert_array_equal(s.max, vmax)
    assert s.n_nonfinite.sum() == (~np.isfinite(values)).sum()


@pytest.mark.parametrize("chunk", [1, 7, 1000, 5000])
def test_chunked_merge_equals_one_pass(chunk):
    rng = np.random.default_rng(2)
    values = rng.normal(1e3, 5.0, 5000)  # a large mean makes naive sum-of-squares formulas fail
    codes = rng.integers(0, 5, len(values))
    keys = list("vwxyz")
    whole = GroupStats.from_values(values, codes, keys)
    acc = GroupStats.empty()
    for start in range(0, len(values), chunk):
        part_codes = codes[start:start + chunk]
        present = np.unique(part_codes)
        remap = np.searchsorted(present, part_codes)
        acc = acc.merge(GroupStats.from_values(values[start:start + chunk], remap, [keys[i] for i in present]))
    order = [acc.keys.index(k) for k in keys]
    np.testing.assert_array_equal(acc.count[order], whole.count)
    np.testing.assert_allclose(acc.mean[order], whole.mean, rtol=1e-12)
    np.testing.assert_allclose(acc.m2[order], whole.m2, rtol=1e-12)
    np.testing.assert_array_equal(acc.min[order], whole.min)
    np.testing.assert_array_equal(acc.max[order], whole.max)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=60), st.integers(1, 10), st.integers(1, 10))
def test_merge_is_associative(values, cut1, cut2):
    v = np.asarray(values)
    codes = np.arange(len(v)) % 2
    a, b = sorted((min(cut1, len(v) - 2), min(cut1 + cut2, len(v) - 1)))
    parts = [GroupStats.from_values(v[s], codes[s], ["p", "q"]) for s in (slice(0, a), slice(a, b), slice(b, None))]
    left = parts[0].merge(parts[1]).merge(parts[2])
    right = parts[0].merge(parts[1].merge(parts[2]))
    whole = GroupStats.from_values(v, codes, ["p", "q"])
    for s in (left, right):
        np.testing.assert_array_equal(s.count, whole.count)
        np.testing.assert_allclose(s.mean, whole.mean, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(s.m2, whole.m2, rtol=1e-9, atol=1e-6)


def test_decay_scales_weights_not_means():
    s = GroupStats.from_values(np.array([1.0, 2.0, 3.0]), np.zeros(3, dtype=int), ["a"])
    half = s.scaled(0.5)
    assert half.count[0] == 1.5 and half.mean[0] == 2.0 and half.var()[0] == pytest.approx(s.var()[0])


def test_sketch_exact_below_capacity_and_bounded_above():
    rng = np.random.default_rng(3)
    x = rng.normal(size=999)
    sk = QuantileSketch.from_values(x)
    assert sk.exact and sk.quantile(0.5) == pytest.approx(np.median(x))
    big = QuantileSketch.from_values(rng.normal(size=50_000), capacity=500)
    assert len(big.values) == 500 and big.weight == pytest.approx(50_000)
    assert abs(big.quantile(0.5)) < 0.05  # rank error <= 1/500 around the median of N(0,1)


def test_round_trip_dict():
    s = GroupStats.from_values(np.arange(10.0), np.arange(10) % 3, [("en", "de"), ("en", "zh"), ("de", "en")],
                               with_sketch=True)
    back = GroupStats.from_dict(s.to_dict())
    assert back.keys == s.keys
    np.testing.assert_array_equal(back.m2, s.m2)
    np.testing.assert_array_equal(back.sketches[1].values, s.sketches[1].values)
