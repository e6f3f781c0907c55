"""Choosing rows to annotate: the budget per group, spread over systems and the score's range,
distinct segments, seeds, rows already labelled, and the annotation table."""
import numpy as np
import pandas as pd
import pytest

from xleval.calibration import select_for_annotation, select_rows
from xleval.exceptions import InputError


def _table(n_sys=4, n_seg=50, groups=("en-de", "en-zh"), seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for g in groups:
        for s in range(n_sys):
            rows.append(pd.DataFrame({"lp": g, "system": f"s{s}", "seg_id": np.arange(n_seg),
                                      "doc_id": np.arange(n_seg) // 10,
                                      "source": [f"src {g} {i}" for i in range(n_seg)],
                                      "hypothesis": [f"hyp {g} {s} {i}" for i in range(n_seg)],
                                      "reference": [f"ref {g} {i}" for i in range(n_seg)],
                                      "chrf": rng.uniform(0, 100, n_seg)}))
    return pd.concat(rows, ignore_index=True)


def _codes(df):
    return (pd.factorize(df["lp"])[0], pd.factorize(df["system"])[0], df["seg_id"].to_numpy())


def test_spread_gives_the_budget_per_group_evenly_over_systems():
    df = _table()
    g, s, seg = _codes(df)
    rows = select_rows(df["chrf"], g, 10, systems=s, segments=seg, method="spread", random_state=1)
    chosen = df.iloc[rows]
    assert chosen.groupby("lp").size().tolist() == [10, 10]
    per_system = chosen.groupby(["lp", "system"]).size()
    assert per_system.max() - per_system.min() <= 1 and per_system.sum() == 20
    # no segment is chosen twice in a group while unchosen segments are left
    assert not chosen.duplicated(["lp", "seg_id"]).any()


def test_spread_covers_the_score_range_of_each_system():
    df = _table(n_sys=1, n_seg=100, groups=("en-de",))
    g, s, seg = _codes(df)
    rows = select_rows(df["chrf"], g, 5, systems=s, segments=seg, method="spread", random_state=0)
    # five strata of 20 rows each: one row from each quintile of the system's scores
    ranks = df["chrf"].rank(method="first").to_numpy()[rows] - 1
    assert sorted((ranks // 20).astype(int).tolist()) == [0, 1, 2, 3, 4]


def test_seeded_and_random_method():
    df = _table()
    g, s, seg = _codes(df)
    a = select_rows(df["chrf"], g, 7, systems=s, segments=seg, method="spread", random_state=3)
    b = select_rows(df["chrf"], g, 7, systems=s, segments=seg, method="spread", random_state=3)
    c = select_rows(df["chrf"], g, 7, systems=s, segments=seg, method="spread", random_state=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    r = select_rows(df["chrf"], g, 7, method="random", random_state=3)
    assert pd.Series(g[r]).value_counts().tolist() == [7, 7]


def test_select_rows_random_is_a_simple_random_sample():
    """method="random": a simple random sample of 40 of 200 rows leaves the systems uneven far more often
    than not."""
    df = _table(n_sys=4, n_seg=50, groups=("en-de",))
    g, s, _ = _codes(df)
    uneven = [np.ptp(np.bincount(s[select_rows(df["chrf"], g, 40, systems=s, method="random", random_state=r)]))
              > 1 for r in range(20)]
    assert sum(uneven) >= 10


def test_the_default_of_select_for_annotation_is_stratified_by_system_and_document():
    """calibrate select's default (docs/calibration.md, "Label budget"): 40 of 4 systems x 50 segments in 10
    documents is 10 per system and 1 per document of each system, in every draw; the score is never read."""
    df = _table(n_sys=4, n_seg=50, groups=("en-de",))
    df["doc_id"] = df["seg_id"] // 5
    for seed in range(10):
        out = select_for_annotation(df, "lp", 40, score="chrf", random_state=seed)
        assert (out.groupby("system").size() == 10).all()
        assert (out.groupby(["system", "doc_id"]).size() == 1).all()
    shuffled = df.assign(chrf=np.random.default_rng(0).permutation(df["chrf"].to_numpy()))
    again = select_for_annotation(shuffled, "lp", 40, score="chrf", random_state=3)
    same = select_for_annotation(df, "lp", 40, score="chrf", random_state=3)
    np.testing.assert_array_equal(again["row_id"], same["row_id"])


def test_small_groups_give_every_eligible_row_and_nan_scores_are_never_chosen():
    df = _table(n_sys=1, n_seg=5)
    df.loc[0, "chrf"] = np.nan
    g, s, seg = _codes(df)
    for method in ("spread", "random"):
        rows = select_rows(df["chrf"], g, 100, systems=s, segments=seg, method=method)
        assert len(rows) == 9 and 0 not in rows


def test_uneven_systems_get_the_rest_of_the_budget():
    df = _table(n_sys=3, n_seg=40, groups=("en-de",))
    df = df[~((df.system == "s0") & (df.seg_id >= 2))]  # s0 has 2 rows only
    g, s, seg = _codes(df)
    chosen = df.iloc[select_rows(df["chrf"], g, 12, systems=s, segments=seg, method="spread")]
    assert chosen.groupby("system").size().to_dict() == {"s0": 2, "s1": 5, "s2": 5}


def test_annotation_table(tmp_path):
    df = _table()
    df["human"] = np.nan
    df.loc[df.index[:30], "human"] = 50.0
    out = select_for_annotation(df, "lp", 6, score="chrf", skip_labelled="human", random_state=0)
    assert list(out.columns) == ["row_id", "lp", "system", "seg_id", "doc_id", "source", "hypothesis", "reference",
                                 "human"]
    assert "chrf" not in out.columns and out["human"].isna().all()
    assert len(out) == 12 and (out["row_id"] >= 30).all()  # labelled rows (0-29) are not chosen again
    back = df.iloc[out["row_id"]]
    assert back["hypothesis"].tolist() == out["hypothesis"].tolist()


@pytest.mark.parametrize("budget", [0, -3, 2.5, True])
def test_bad_budget(budget):
    df = _table()
    with pytest.raises(InputError, match="budget"):
        select_for_annotation(df, "lp", budget, score="chrf")


def test_bad_inputs():
    df = _table()
    with pytest.raises(InputError, match="no finite value"):
        select_for_annotation(df.assign(chrf=np.nan), "lp", 5, score="chrf")
    with pytest.raises(InputError, match=r"no column 'bleu' \(the score column"):
        select_for_annotation(df, "lp", 5, score="bleu")
    with pytest.raises(InputError, match="selection"):
        select_for_annotation(df, "lp", 5, score="chrf", method="best")


def test_a_budget_above_some_groups_takes_all_of_theirs_and_says_so_and_above_every_group_is_refused():
    from xleval.exceptions import DataQualityWarning

    df = pd.concat([_table(), _table(n_sys=1, n_seg=5, groups=("en-ja",))], ignore_index=True)
    with pytest.warns(DataQualityWarning, match="1 group.* fewer than 20 rows .*: en-ja"):
        out = select_for_annotation(df, "lp", 20, score="chrf")
    assert out.groupby("lp").size().to_dict() == {"en-de": 20, "en-ja": 5, "en-zh": 20}
    with pytest.raises(InputError, match="give at most 200"):
        select_for_annotation(df, "lp", 201, score="chrf")
    for name in ("lp", "row", "row_id", "hypothesis"):  # the empty label column would have blanked it
        with pytest.raises(InputError, match=f"label column '{name}'"):
            select_for_annotation(df, "lp", 5, score="chrf", label_column=name)
