"""Property tests of the invariants everything else relies on, on random tables: calibrating keeps
every row, in order, with the input columns untouched; chunked fitting equals one pass; GroupStats
merges are associative; inverse_transform undoes transform."""
from __future__ import annotations

import itertools
import os
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xleval.calibration import LGN, GroupStats, calibrate_frame, prepare_frame
from xleval.exceptions import InputError

FUZZ = settings(max_examples=int(os.environ.get("XLEVAL_FUZZ_EXAMPLES", "60")), deadline=None)
LPS = ["en-de", "en-fr", "en-zh", "de-en", "en-sw", "en-ja"]


@st.composite
def score_tables(draw, min_rows=2, max_rows=120):
    n = draw(st.integers(min_rows, max_rows))
    lp = draw(st.lists(st.sampled_from(LPS), min_size=n, max_size=n))
    score = draw(st.lists(st.one_of(st.floats(-1e4, 1e4), st.just(np.nan)), min_size=n, max_size=n))
    df = pd.DataFrame({"lp": lp, "row": np.arange(n), "score": score})
    return df


def _fit(df, **params):
    """The fitted LGN, or None when LGN refuses the table (no group with a usable spread)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small/degenerate groups are the point of random tables
        try:
            return LGN(by="tgt_lang", score="score", fallback=["pooled"], min_count=5, **params).fit(
                prepare_frame(df, ["tgt_lang"]))
        except InputError as exc:
            assert "usable spread" in str(exc)  # noqa: PT017 - random tables: a fit or this one refusal
            return None


@pytest.mark.parametrize("method", ["zscore", "robust", "quantile"])
@FUZZ
@given(df=score_tables(), new=score_tables(min_rows=1, max_rows=40))
def test_calibrating_keeps_every_row_in_order_and_the_input_columns(method, df, new):
    model = _fit(df, method=method)
    if model is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = calibrate_frame(model, new, where="new")
    assert len(out) == len(new)
    pd.testing.assert_frame_equal(out[new.columns], new)  # rows, order, values and dtypes untouched
    assert np.isnan(out["score_lgn"][new["score"].isna()]).all()
    assert set(out["calibration_source"]) <= {"tgt_lang", "pooled"}


@pytest.mark.parametrize("method", ["zscore", "robust", "quantile"])
@FUZZ
@given(df=score_tables(), cuts=st.lists(st.integers(0, 120), max_size=5))
def test_chunked_fit_equals_one_pass(method, df, cuts):
    one = _fit(df, method=method)
    if one is None:
        return
    frame = prepare_frame(df, ["tgt_lang"])
    bounds = sorted({0, len(df), *(c % (len(df) + 1) for c in cuts)})
    chunked = LGN(by="tgt_lang", score="score", fallback=["pooled"], min_count=5, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in itertools.pairwise(bounds):
            if b > a:
                chunked.partial_fit(frame.iloc[a:b])
        probe = frame.assign(score=np.linspace(-1e4, 1e4, len(frame)))
        np.testing.assert_allclose(chunked.transform(probe), one.transform(probe), rtol=1e-9, atol=1e-9)


@FUZZ
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=90), codes=st.data())
def test_group_stats_merge_is_associative_and_equals_one_pass(values, codes):
    x = np.asarray(values)
    keys = ["de", "fr", "zh"]
    c = np.asarray(codes.draw(st.lists(st.integers(0, 2), min_size=len(x), max_size=len(x))))
    i, j = sorted(codes.draw(st.lists(st.integers(0, len(x)), min_size=2, max_size=2)))
    part = [GroupStats.from_values(x[s], c[s], keys, with_sketch=True)
            for s in (slice(0, i), slice(i, j), slice(j, None))]
    left = part[0].merge(part[1]).merge(part[2])
    right = part[0].merge(part[1].merge(part[2]))
    whole = GroupStats.from_values(x, c, keys, with_sketch=True)
    for merged in (left, right):
        assert merged.keys == whole.keys
        np.testing.assert_array_equal(merged.count, whole.count)
        np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-9, atol=1e-6)
        np.testing.assert_allclose(merged.var(), whole.var(), rtol=1e-7, atol=1e-3)
        np.testing.assert_array_equal(merged.min, whole.min)
        np.testing.assert_array_equal(merged.max, whole.max)


@pytest.mark.parametrize("method", ["zscore", "robust", "quantile"])
@FUZZ
@given(df=score_tables(min_rows=10), probe=st.lists(st.floats(-2e4, 2e4), min_size=1, max_size=30),
       target=st.tuples(st.floats(-100, 100), st.floats(0.1, 50)))
def test_inverse_transform_undoes_transform(method, df, probe, target):
    model = _fit(df, method=method, target=target)
    if model is None:
        return
    lps = np.resize(np.asarray(LPS), len(probe))
    frame = prepare_frame(pd.DataFrame({"lp": lps, "score": probe}), ["tgt_lang"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        calibrated = model.transform(frame)
        back = model.inverse_transform(frame.assign(score=calibrated))
    np.testing.assert_allclose(back, frame["score"].to_numpy(), rtol=1e-7, atol=1e-6)
