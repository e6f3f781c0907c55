"""AnchoredCalibrator: hand-checkable maps, shrinkage, unseen groups, persistence, signatures."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import isotonic_regression

from xleval.calibration import AnchoredCalibrator
from xleval.exceptions import (
    InputError,
    ModelFileError,
    NotFittedError,
    SignatureMismatchError,
    SmallGroupWarning,
    UnseenGroupWarning,
)


def _frame(seed=0, n=200):
    rng = np.random.default_rng(seed)
    rows = []
    for g, (a, b) in {"de": (10.0, 0.5), "zh": (-3.0, 2.0)}.items():
        x = rng.uniform(0, 100, n)
        rows.append(pd.DataFrame({"tgt_lang": g, "score": x, "human": a + b * x + rng.normal(0, 1, n)}))
    return pd.concat(rows, ignore_index=True)


def test_linear_matches_least_squares_per_group():
    df = _frame()
    model = AnchoredCalibrator(min_count=10).fit(df)
    for g in ("de", "zh"):
        sub = df[df.tgt_lang == g]
        slope, intercept = np.polyfit(sub.score, sub.human, 1)
        np.testing.assert_allclose(model.transform(sub), intercept + slope * sub.score, rtol=1e-12)


def test_isotonic_matches_scipy_on_hand_data():
    df = pd.DataFrame({"tgt_lang": ["a"] * 5 + ["b"] * 2, "score": [1, 2, 2, 3, 4, 0, 1],
                       "human": [1.0, 3.0, 1.0, 0.0, 5.0, 0.0, 1.0]})
    model = AnchoredCalibrator(method="isotonic", min_count=1).fit(df)
    # distinct scores 1, 2, 3, 4 with means 1, 2, 0, 5 and weights 1, 2, 1, 1
    expected = isotonic_regression([1.0, 2.0, 0.0, 5.0], weights=[1.0, 2.0, 1.0, 1.0]).x
    np.testing.assert_allclose(expected, [1.0, 4 / 3, 4 / 3, 5.0])  # 2 (w 2) and 0 pool to 4/3
    out = model.transform(pd.DataFrame({"tgt_lang": ["a"] * 5, "score": [1, 2, 3, 3.5, 9]}))
    # interpolated inside, held constant beyond
    np.testing.assert_allclose(out, [1.0, 4 / 3, 4 / 3, (4 / 3 + 5) / 2, 5.0])


def test_small_group_is_shrunk_toward_pooled_map():
    df = _frame(n=200)
    small = df[df.tgt_lang == "zh"].head(8)
    data = pd.concat([df[df.tgt_lang == "de"], small], ignore_index=True)
    with pytest.warns(SmallGroupWarning, match="zh"):
        model = AnchoredCalibrator(min_count=32).fit(data)
    z = np.sqrt(8 / 32)
    own = np.polyval(np.polyfit(small.score, small.human, 1), small.score)
    pooled = np.polyval(np.polyfit(data.score, data.human, 1), small.score)
    np.testing.assert_allclose(model.transform(small), z * own + (1 - z) * pooled, rtol=1e-10)


def test_unseen_group_uses_pooled_map_or_is_refused():
    df = _frame()
    model = AnchoredCalibrator(min_count=10).fit(df)
    new = pd.DataFrame({"tgt_lang": ["sw"], "score": [50.0]})
    with pytest.warns(UnseenGroupWarning, match="sw"):
        out = model.transform(new)
    np.testing.assert_allclose(out, np.polyval(np.polyfit(df.score, df.human, 1), [50.0]))
    assert list(model.sources(new)) == ["pooled"]
    with pytest.raises(InputError, match="sw"):
        AnchoredCalibrator(min_count=10, fallback="error").fit(df).transform(new)


def test_rows_without_human_are_ignored_and_nan_scores_stay_nan():
    df = _frame()
    model_full = AnchoredCalibrator(min_count=10).fit(df)
    extra = df.head(5).assign(human=np.nan, score=1e6)
    model = AnchoredCalibrator(min_count=10).fit(pd.concat([df, extra]))
    np.testing.assert_allclose(model.transform(df), model_full.transform(df))
    assert np.isnan(model.transform(pd.DataFrame({"tgt_lang": ["de"], "score": [np.nan]}))[0])


def test_save_load_roundtrip_checksum_and_signature(tmp_path):
    df = _frame()
    model = AnchoredCalibrator(method="isotonic", min_count=10).fit(df, signature="chrf|v:1")
    path = tmp_path / "anchored.json"
    model.save(path)
    loaded = AnchoredCalibrator.load(path)
    np.testing.assert_array_equal(loaded.transform(df), model.transform(df))
    with pytest.raises(SignatureMismatchError, match="bleu"):
        loaded.transform(df, signature="bleu|v:1")
    loaded.transform(df, signature="bleu|v:1", force=True)
    payload = json.loads(path.read_text())
    payload["groups"]["de"]["credibility"] = 0.5
    path.write_text(json.dumps(payload))
    with pytest.raises(ModelFileError, match="checksum"):
        AnchoredCalibrator.load(path)
    with pytest.raises(ModelFileError, match="no such"):
        AnchoredCalibrator.load(tmp_path / "missing.json")


def test_bad_parameters_and_unfitted():
    with pytest.raises(NotFittedError):
        AnchoredCalibrator().transform(_frame())
    with pytest.raises(InputError, match="method"):
        AnchoredCalibrator(method="spline").fit(_frame())
    with pytest.raises(InputError, match="constant"):
        AnchoredCalibrator().fit(pd.DataFrame({"tgt_lang": ["a", "b"], "score": [1.0, 1.0], "human": [0.0, 1.0]}))
