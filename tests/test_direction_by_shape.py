"""Where the slopes do not settle the direction of the human scale and nothing names it, the slope's lean is taken
when the labels' shape says the same: ratings of machine translation pile up at the scale's good end (raw DA and
ESA near the top, MQM error points at 0). Before, such a fit was refused (E122) or used offsets only, tying every
system of a group (issue 33, item 4: "all 13 systems of a pair are tied"); on WMT21 raw DA, DA z and MQM the lean and
the shape agreed in 100 of 126 such draws, all of them right (examples/direction_rules.py, docs/calibration.md)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xleval.calibration import build_anchored
from xleval.calibration._anchored import settled_z, shape_of_labels
from xleval.exceptions import DataQualityWarning, InputError


def _world(seed: int, error_points: bool = False) -> pd.DataFrame:
    """Three pairs x 6 systems x 40 segments; 25 labels per pair that the score barely predicts (the slopes stay
    unsettled), on a quality scale piled up near 95 or, ``error_points``, on an error scale piled up at 0."""
    rng = np.random.default_rng(seed)
    rows = [{"lp": g, "system": f"s{s}", "seg_id": i, "chrf": level + 2 * s + rng.normal(0, 8)}
            for g, level in (("a-x", 50.0), ("b-x", 55.0), ("c-x", 60.0)) for s in range(6) for i in range(40)]
    df = pd.DataFrame(rows)
    tail = rng.exponential(12, len(df))
    human = np.clip(tail if error_points else 95 - tail, 0, 100).round(1)
    keep = np.zeros(len(df), bool)
    for g in df["lp"].unique():
        keep[rng.choice(np.flatnonzero(df["lp"] == g), 25, replace=False)] = True
    return df.assign(h=np.where(keep, human, np.nan))


def _fit(df: pd.DataFrame, human: str = "h", strict: bool = True):
    """The anchored fit of ``df`` and the messages of the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = build_anchored("lp", "chrf", human).fit(df, strict=strict)
    return model, " ".join(str(w.message) for w in caught if issubclass(w.category, DataQualityWarning))


def _lean(model) -> tuple[float, float]:
    zs = [v for v in model.slopes_["z"] if np.isfinite(v)]
    return max(zs, key=abs), settled_z(model.slopes_["n_clusters"])


def test_the_shape_says_which_end_the_labels_pile_up_at():
    rng = np.random.default_rng(0)
    quality = np.clip(95 - rng.exponential(12, 60), 0, 100)
    errors = rng.choice([0, 0, 0, 1, 5, 25], 60).astype(float)
    oracle = stats.skew(quality)
    shape = shape_of_labels(quality)
    assert shape is not None and shape.higher_is_better and shape.skewness == pytest.approx(oracle)
    assert shape_of_labels(errors) is not None and not shape_of_labels(errors).higher_is_better
    assert shape_of_labels(-errors).higher_is_better  # negated error points: higher is better
    assert shape_of_labels(rng.uniform(0, 100, 60)) is None  # no clear shape says nothing
    assert shape_of_labels(quality[:7]) is None  # too few labels for the test
    assert shape_of_labels(np.full(20, 50.0)) is None


@pytest.mark.parametrize("error_points", [False, True])
def test_the_lean_is_taken_where_the_shape_agrees(error_points):
    model, said = _fit(_world(0, error_points))  # strict: refused with E122 before
    word = "lower" if error_points else "higher"
    assert f"the slope's lean and the labels' shape agree, so {word} is taken as better" in said
    z, settled = _lean(model)
    assert abs(z) < settled  # the slopes do not settle it
    assert model.direction_source_ == "shape"
    assert model.higher_is_better_ is (not error_points)
    assert np.sign(z) == model.direction_
    # the systems of a group are no longer tied: a slope is used
    assert model.slopes_["within"] != 0 or model.slopes_["between"] != 0


def test_a_lean_the_shape_contradicts_is_still_refused():
    df = _world(3)  # the slope leans down while the labels pile up at the top
    model, said = _fit(df, strict=False)
    z, settled = _lean(model)
    assert -settled < z < 0
    assert model.direction_source_ == "none" and "no slope is used" in said
    with pytest.raises(InputError, match="do not settle the direction"):
        _fit(df)


def test_a_named_scale_comes_before_the_shape():
    model, said = _fit(_world(0).rename(columns={"h": "mqm"}), "mqm")  # quality-shaped, named as error points
    assert "is taken by its name, lower is better" in said
    assert model.direction_source_ == "name" and not model.higher_is_better_
