"""The calibrators are scikit-learn estimators: clone, check_is_fitted, Pipeline, cross_val_score,
set_output; and importing them does not import scikit-learn."""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN, AnchoredCalibrator

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.model_selection import KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402


def _table(n=600, seed=0):
    rng = np.random.default_rng(seed)
    lp = rng.choice(["en-de", "en-fr", "en-zh"], n)
    offset = pd.Series(lp).map({"en-de": 40.0, "en-fr": 55.0, "en-zh": 25.0}).to_numpy()
    chrf = offset + rng.normal(0, 8, n)
    return pd.DataFrame({"lp": lp, "chrf": chrf, "human": 0.9 * chrf + rng.normal(0, 3, n)},
                        index=pd.RangeIndex(100, 100 + n))


ESTIMATORS = [lambda: LGN(by="lp", score="chrf"), lambda: AnchoredCalibrator(by="lp", score="chrf")]


@pytest.mark.parametrize("make", ESTIMATORS, ids=["LGN", "AnchoredCalibrator"])
def test_check_is_fitted_and_clone(make):
    model = make()
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    model.fit(_table())
    check_is_fitted(model)
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    with pytest.raises(NotFittedError):
        check_is_fitted(copy)


@pytest.mark.parametrize("make", ESTIMATORS, ids=["LGN", "AnchoredCalibrator"])
def test_pipeline_keeps_the_plain_one_dimensional_transform(make):
    df = _table()
    out = Pipeline([("cal", make())]).fit(df).transform(df)
    assert out.shape == (len(df),)
    np.testing.assert_array_equal(out, make().fit(df).transform(df))


def test_set_output_pandas_and_default():
    df = _table()
    pipe = Pipeline([("cal", LGN(by="lp", score="chrf"))]).set_output(transform="pandas")
    frame = pipe.fit(df).transform(df)
    assert list(frame.columns) == ["chrf_lgn"] and frame.index.equals(df.index)
    plain = LGN(by="lp", score="chrf").fit(df).transform(df)
    np.testing.assert_array_equal(frame["chrf_lgn"].to_numpy(), plain)
    assert pipe.get_feature_names_out().tolist() == ["chrf_lgn"]
    two_d = clone(LGN(by="lp", score="chrf").set_output(transform="default")).fit(df).transform(df)  # clone keeps it
    assert two_d.shape == (len(df), 1)
    anchored = AnchoredCalibrator(by="lp", score="chrf").set_output(transform="pandas").fit(df).transform(df)
    assert list(anchored.columns) == ["chrf_anchored"]
    from xleval.exceptions import InputError

    with pytest.raises(InputError, match="pandas"):
        LGN().set_output(transform="polars")


def test_global_pandas_output_config_is_honoured_but_default_stays_one_dimensional():
    df = _table()
    with sklearn.config_context(transform_output="pandas"):
        assert isinstance(LGN(by="lp", score="chrf").fit(df).transform(df), pd.DataFrame)
    assert LGN(by="lp", score="chrf").fit(df).transform(df).ndim == 1


def test_cross_val_score_of_the_spread_of_held_out_group_means():
    """Out of fold, LGN fitted on the other folds puts every language's held-out mean near the target
    mean (0), while the raw means differ by 15-30 points: the scorer is minus the sd of group means."""
    df = _table(n=900)

    def spread(estimator, X, y=None):
        out = estimator.transform(X)
        return -float(pd.Series(np.asarray(out).ravel(), index=X.index).groupby(X["lp"]).mean().std())

    pipe = Pipeline([("cal", LGN(by="lp", score="chrf"))])
    scores = cross_val_score(pipe, df, scoring=spread, cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    assert np.all(scores > -0.2)  # held-out group means within ~0.2 sd of each other
    assert df.groupby("lp")["chrf"].mean().std() > 10


def test_importing_the_calibrators_does_not_import_sklearn():
    code = "import sys, xleval.calibration as c; c.LGN(); print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
