"""Result objects: frozen, JSON-safe to_dict, distributions kept but not dumped by default."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import xleval.stats as st


def test_public_api_is_exported():
    for name in st.__all__:
        assert hasattr(st, name)


def test_results_are_frozen_and_json_safe():
    x = np.random.default_rng(0).normal(size=20)
    results = [
        st.bootstrap(x, random_state=0),
        st.permutation_test_paired(x, x[::-1], n_resamples=99, random_state=0),
        st.correlation(x, x**2, "kendall_c", n_resamples=50, random_state=0),
        st.pairwise_accuracy(x, x**2),
        st.correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]),  # NaN fields
    ]
    for res in results:
        with pytest.raises(dataclasses.FrozenInstanceError):
            res.method = "other"  # type: ignore[misc]
        out = res.to_dict()
        json.dumps(out, allow_nan=False)
        assert "distribution" not in out and "null_distribution" not in out
    full = results[0].to_dict(include_distribution=True)
    assert len(full["distribution"]) == 1000
    assert results[0].distribution.shape == (1000,)


def test_stats_and_fairness_results_share_the_one_result_base():
    import xleval.fairness as fa
    from xleval._base.result import Result

    classes = [getattr(st, n) for n in ("Estimate", "TestResult", "CorrelationResult", "PairwiseAccuracy")]
    classes += [getattr(fa, n) for n in ("SampleSize", "DetectableEffect", "LanguageGap", "GapSummary", "Elasticity",
                                         "TypologyBias", "FairnessReport")]
    assert all(issubclass(c, Result) for c in classes)


def test_numpy_booleans_and_nested_values_become_json_values():
    # the private converters these results used before wrote numpy booleans as the strings "True"/"False"
    res = st.TestResult(statistic=np.float64(2.5), p_value=np.float32(0.5), n=np.int64(7), method="m",
                        exact=np.bool_(True), notes=("a",))
    out = res.to_dict()
    assert out["exact"] is True and out["n"] == 7 and out["statistic"] == 2.5
    assert json.loads(json.dumps(out)) == out
