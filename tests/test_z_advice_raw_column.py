"""The advice for labels standardised within groups (DA z) asked to fetch raw-scale scores into a new column
``human_raw`` even where the table has that column already (WMT21 has ``human_raw`` beside ``human_z``): the
advice is then to fit on it."""
import warnings

import numpy as np
import pandas as pd

from xleval.decision import recommend_calibration


def _table(with_raw: bool) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for g, level in (("de-en", 70.0), ("zh-en", 60.0), ("ja-en", 55.0)):
        for s in range(5):
            q = rng.normal(0, 5)
            for i in range(40):
                raw = level + q + rng.normal(0, 15)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": i, "chrf": 0.5 * raw + rng.normal(0, 5),
                             "human_raw": raw})
    df = pd.DataFrame(rows)
    df["human_z"] = df.groupby("lp")["human_raw"].transform(lambda x: (x - x.mean()) / x.std())
    return df if with_raw else df.drop(columns=["human_raw"])


def _warning(df: pd.DataFrame) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decision = recommend_calibration(df, "chrf", "lp", human="human_z")
    return decision.warning or ""


def test_the_advice_fits_on_the_raw_column_the_table_has():
    said = _warning(_table(with_raw=True))
    assert "The table has raw-scale scores in 'human_raw'" in said and "human_raw" in said
    assert "fetch their raw scores" not in said
    without = _warning(_table(with_raw=False))  # no raw column: get the raw scores of the same rows, as before
    assert "fetch their raw scores" in without
