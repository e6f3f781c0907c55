"""Review of the label budget (`calibrate select`, `calibrate plan`, `calibrate merge`): a seed draws the same rows
whatever the table's row order, a table with every row labelled is said as such (not "give at most 0"), an
infinite label is refused by merge naming the label file's row, and `plan -o` names the merge that puts the labels
into the --human column the next plan counts."""
from __future__ import annotations

import json
import shlex
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.calibration import LabelDraw, plan_labels, select_for_annotation
from xleval.exceptions import InputError

KEY = ["lp", "system", "seg_id"]


def _table(labelled: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    rows = [{"lp": lp, "system": system, "seg_id": seg, "doc_id": f"d{seg % 3}", "hypothesis": f"{lp} {system} {seg}",
             "chrf": float(rng.random() * 100)}
            for lp in ("de-en", "ja-en") for system in ("A", "B", "C") for seg in range(1, 13)]
    df = pd.DataFrame(rows)
    df["da"] = np.where(rng.random(len(df)) < labelled, df["chrf"] * 0.5 + rng.normal(0, 5, len(df)), np.nan)
    return df


def _keys(rows: pd.DataFrame) -> set[tuple]:
    return {tuple(map(str, r)) for r in rows[KEY].itertuples(index=False)}


@pytest.mark.parametrize("method", ["stratified", "random", "spread"])
def test_select_draws_the_same_rows_from_a_shuffled_table(method):
    df = _table()
    shuffled = df.sample(frac=1, random_state=3).reset_index(drop=True)
    first = select_for_annotation(df, "lp", 5, score="chrf", method=method, random_state=11)
    second = select_for_annotation(shuffled, "lp", 5, score="chrf", method=method, random_state=11)
    assert _keys(first) == _keys(second) and len(first) == 10
    # row_id still names the row of the table given (the shuffled one), not of a sorted copy
    assert _keys(shuffled.iloc[second["row_id"]]) == _keys(second)
    assert second["hypothesis"].tolist() == shuffled["hypothesis"].iloc[second["row_id"]].tolist()


@pytest.mark.parametrize("rows", ["stratified", "random", "systems", "spread"])
def test_plan_draws_the_same_rows_from_a_shuffled_table(rows):
    df = _table(labelled=0.2)
    shuffled = df.sample(frac=1, random_state=5).reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = plan_labels(df, "lp", 30, score="chrf", human="da", draw=LabelDraw(rows=rows, random_state=2))
        second = plan_labels(shuffled, "lp", 30, score="chrf", human="da", draw=LabelDraw(rows=rows, random_state=2))
    assert _keys(first.rows) == _keys(second.rows) and len(first.rows) == first.to_add
    picked = shuffled.iloc[second.rows["row_id"]]
    assert _keys(picked) == _keys(second.rows) and picked["da"].isna().all()


def test_select_skipping_labelled_rows_when_every_row_is_labelled_says_so():
    df = _table().assign(da=1.0)
    with pytest.raises(InputError) as caught:
        select_for_annotation(df, "lp", 2, score="chrf", skip_labelled="da")
    assert "no row left to choose" in str(caught.value) and "at most 0" not in str(caught.value)


def test_plan_with_every_row_labelled_says_so_instead_of_asking_for_an_impossible_budget():
    df = _table().assign(da=lambda d: d["chrf"] / 2)
    for budget in (10, len(df) + 1):  # below the labels and above the rows: neither can be satisfied
        with pytest.raises(InputError) as caught:
            plan_labels(df, "lp", budget, score="chrf", human="da")
        assert "every row with a score already has a label" in str(caught.value)


def test_merge_refuses_an_infinite_label_naming_the_label_files_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _table().to_parquet("scored.parquet")
    rc, _, err = run_cli("calibrate", "select", "scored.parquet", "--by", "lp", "--budget", "3", "--score", "chrf",
                         "-o", "rows.tsv")
    assert rc == 0, err
    rows = pd.read_csv("rows.tsv", sep="\t", dtype=str, keep_default_na=False)
    rows["human"] = ["50", "60", "inf", "40", "-inf", "55"]
    rows.to_csv("rows.tsv", sep="\t", index=False)
    rc, _, err = run_cli("calibrate", "merge", "rows.tsv", "scored.parquet", "-o", "labelled.parquet")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "rows.tsv: label row 4" in err and "not a finite number (2 such" in err
    assert not (tmp_path / "labelled.parquet").exists()


def test_plan_names_a_merge_into_the_human_column_that_the_next_plan_counts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _table(labelled=0.2).to_parquet("my table.parquet")
    args = ["calibrate", "plan", "my table.parquet", "--by", "lp", "--score", "chrf", "--human", "da"]
    rc, out, err = run_cli(*args, "--budget", "30", "-o", "to label.tsv", "--format", "json")
    assert rc == 0, err
    first = json.loads(out)
    rows = pd.read_csv("to label.tsv", sep="\t")
    rows["human"] = 50.0
    rows.to_csv("to label.tsv", sep="\t", index=False)
    command = shlex.split(first["merge"])
    assert command[:3] == ["xleval", "calibrate", "merge"]
    rc, _, err = run_cli(*command[1:])
    assert rc == 0, err
    rc, out, err = run_cli(*[("labelled.parquet" if a == "my table.parquet" else a) for a in args], "--budget",
                           "40", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["labelled"] == first["labelled"] + len(rows) == 30
