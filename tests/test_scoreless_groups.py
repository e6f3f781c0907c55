"""A group with no finite score is not a group the decision weighs. Found on WMT25's automatic scores (31
pairs, chrF++ scored in 2 of them, 100 judge labels in every pair): `xleval leaderboard --method auto` ranked
the two pairs with chrF++, but its decision counted all 31 ("human labels in 2 of 31 groups: anchored
calibration needs every group") and recommended LGN, asking for labels in 29 pairs that had them; and the
board said the rows it left out twice."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd

from _three_pairs import three_pairs
from xleval.decision import recommend_calibration
from xleval.leaderboard import leaderboard
from xleval.stats import Resampling


def _table(seed: int = 0) -> pd.DataFrame:
    """Three pairs whose true levels differ (so LGN's assumption fails), 5 systems each; the third has no score
    (its rows carry labels only); 60 labels in every pair."""
    rng = np.random.default_rng(seed)
    frame = three_pairs(rng, (-8.0, 0.0, 8.0), segments=60, step=3.0, spread=5.0, human_sd=4.0)
    frame["metric"] = frame["metric"].where(frame["lp"] != "en-zh")
    keep = np.zeros(len(frame), bool)
    for lp in ("en-de", "en-ja", "en-zh"):
        rows = np.flatnonzero(frame["lp"].to_numpy() == lp)
        keep[rng.choice(rows, 60, replace=False)] = True
    return frame.assign(human=frame["human"].where(keep))


def test_the_decision_weighs_the_groups_with_a_score():
    frame = _table()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rec = recommend_calibration(frame, "metric", "lp", human="human", human_scale="da")
    assert "of 3 groups" not in rec.reason and "en-zh" not in rec.reason
    assert set(rec.rules.labels_per_group) == {"en-de", "en-ja"}
    assert rec.method == "anchored"  # both scored pairs are labelled: the labels' offsets, not LGN's equal levels
    said = [str(w.message) for w in caught if "no finite value" in str(w.message)]
    assert said == ["score 'metric': 300 of 900 row(s) have no finite value and were left out (every row of en-zh: it "
                    "has no score)"]


def test_the_board_says_the_rows_it_leaves_out_once_and_decides_on_the_rest():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        board = leaderboard(_table(), "metric", "lp", human="human", method="auto", human_scale="da",
                            resampling=Resampling(n_resamples=100))
    assert not [w for w in caught if "finite" in str(w.message)]  # the notes say it, once
    assert sorted(board.rows["group"].unique()) == ["en-de", "en-ja"]
    assert board.recommendation.method == "anchored" and board.calibration["method"] == "anchored"
    left_out = [n for n in board.notes if "no finite metric" in n]
    assert left_out == ["300 of 900 row(s) have no finite metric and are left out of the leaderboard (every row of "
                        "en-zh: it has no score)"]


def test_the_plan_leaves_out_the_groups_without_a_score_and_names_the_rows_of_the_file():
    # the plan listed the 29 WMT25 pairs without chrF++ as groups with 0 rows, said "give at least 31 (one per
    # group)" and that the ranking was not settled because those groups had no labels (they had 100 each)
    from xleval.calibration import plan_labels

    frame = _table().sample(frac=1.0, random_state=3).reset_index(drop=True)  # row_id: the shuffled file's rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = plan_labels(frame, "lp", 150, score="metric", human="human", human_scale="da")
    assert [str(w.message) for w in caught] == ["score 'metric': 300 of 900 row(s) have no finite value and were left "
                                                "out (every row of en-zh: it has no score)"]
    assert list(plan.groups["group"]) == ["en-de", "en-ja"] and "en-zh" not in plan.verdict
    assert plan.to_add == 30 and len(plan.rows) == 30
    given = frame.iloc[plan.rows["row_id"].to_numpy()]
    for column in ("lp", "system", "seg_id"):
        assert given[column].tolist() == plan.rows[column].tolist()
    assert given["metric"].notna().all() and given["human"].isna().all()


def test_select_says_a_group_without_a_score_has_no_row_to_choose():
    # it said the 29 WMT25 pairs without chrF++ "have fewer than 20 rows to choose from, so all of theirs are chosen"
    from xleval.calibration import select_for_annotation

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = select_for_annotation(_table(), "lp", 20, score="metric")
    assert [str(w.message) for w in caught] == ["1 group(s) have no row with a finite score, so none of theirs is "
                                                "chosen: en-zh"]
    assert sorted(rows["lp"].unique()) == ["en-de", "en-ja"] and len(rows) == 40


def test_an_anchored_fit_leaves_out_a_group_without_a_score_and_an_lgn_fit_keeps_it_as_the_streamed_fit_does():
    # the anchored calibrator listed the 29 WMT25 pairs without chrF++ ("n_rows 0, offset -2.1 pooled"); an LGN fit
    # counts such a group's rows as non-finite, and `calibrate fit --chunk-size` (streamed) does the same
    from xleval.decision import fit_calibration

    frame = _table()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        anchored = fit_calibration(frame, "anchored", score="metric", by="lp", human="human", human_scale="da")
    assert list(anchored.model.group_table()["group"]) == ["en-de", "en-ja"]
    assert sum("every row of en-zh" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lgn = fit_calibration(frame, "lgn", score="metric", by="lp")
    assert not [w for w in caught if "every row of en-zh" in str(w.message)]
    stats = lgn.model.by_stats_
    assert list(stats.keys) == ["en-de", "en-ja", "en-zh"] and list(stats.n_nonfinite) == [0, 0, 300]


def _report(frame: pd.DataFrame, tmp_path, cli) -> tuple[str, dict, dict]:
    """`xleval report` of ``frame`` as JSON: what it printed (one line), the report, its data summary's facts."""
    from xleval.io import write_table

    write_table(frame, tmp_path / "t.parquet")
    rc, _, err = cli("report", tmp_path / "t.parquet", "--score", "metric", "--by", "lp", "--human", "human",
                     "--human-scale", "da", "-o", tmp_path / "r.json", "--n-resamples", "100")
    assert rc == 0, err
    payload = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    return " ".join(err.split()), payload, next(s["facts"] for s in payload["sections"] if s["id"] == "data")


def test_the_report_counts_the_rows_it_analysed_and_the_rows_it_left_out(tmp_path, cli):
    # `xleval report` on the WMT25 table said "wrote html report on 365908 rows" where it analysed 20,584 (the rows
    # of the 2 pairs with chrF++); its data summary said "rows 20584" and "rows with a missing score 0"
    said, payload, facts = _report(_table(), tmp_path, cli)
    assert "report on 600 of 900 rows (the others are in groups with no finite metric)" in said
    assert (facts["rows"], facts["input rows"], facts["rows left out (groups with no finite score)"]) == (600, 900, 300)
    assert facts["groups (lp)"] == 2
    assert (dict(payload["meta"])["rows"], dict(payload["meta"])["input rows"]) == (600, 900)
    # one meaning of "input rows" in the whole report (the agreement section called its 600 rows "input rows")
    counts = {s["title"]: (s.get("facts") or {}).get("input rows") for s in payload["sections"]}
    assert {title: n for title, n in counts.items() if n is not None} == {"Data summary": 900}


def test_a_report_with_a_score_in_every_group_says_its_rows_once(tmp_path, cli):
    frame = _table()
    said, payload, facts = _report(frame[frame["lp"] != "en-zh"], tmp_path, cli)
    assert "report on 600 rows to" in said
    assert facts["rows"] == 600 and "input rows" not in facts and "input rows" not in dict(payload["meta"])


def test_rows_without_a_score_are_said_once_by_the_leaderboard():
    # the board's note "3 of 540 row(s) have no finite score and are left out of the leaderboard" came with the
    # decision's warning "score 'score': 3 of 540 row(s) have no finite value and were left out" beside it
    rng = np.random.default_rng(1)
    frame = three_pairs(rng, (-8.0, 0.0, 8.0), segments=60, step=3.0, spread=5.0, human_sd=4.0)
    frame.loc[[3, 50, 400], "metric"] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        board = leaderboard(frame, "metric", "lp", human="human", human_scale="da",
                            resampling=Resampling(n_resamples=50, random_state=0))
    n = len(frame)
    assert f"3 of {n} row(s) have no finite metric and are left out of the leaderboard" in board.notes
    assert not [w for w in caught if "no finite value" in str(w.message)]
