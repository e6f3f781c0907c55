"""The label round trip as commands (issue 34, item 7): `calibrate select` writes any text (a tab or a line
break in CSV quotes, read back alike by xleval and pandas), keys every row by its identity and a 0-based
row_id, and `calibrate merge` puts the filled-in labels back into the scored table with its signatures,
refusing a label that matches no row. Then fit and report run on the merged table, as the README shows."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.calibration import merge_labels
from xleval.exceptions import InputError
from xleval.io import read_table, read_table_metadata


def _table() -> pd.DataFrame:
    return pd.DataFrame({"lp": ["en-de"] * 4 + ["en-fr"] * 4, "system": ["A", "A", "B", "B"] * 2,
                         "seg_id": [1, 2, 1, 2] * 2, "hypothesis": [f"h{i}" for i in range(8)],
                         "chrf": np.arange(8.0)})


def test_merge_on_identity_whatever_the_order():
    table = _table()
    labels = pd.DataFrame({"row_id": [5, 0], "lp": ["en-fr", "en-de"], "system": ["A", "A"], "seg_id": [2, 1],
                           "hypothesis": ["h5", "h0"], "human": [70.0, 30.0]})
    merged, summary = merge_labels(table, labels)
    assert summary.on == ("lp", "system", "seg_id") and summary.n_labels == 2 and summary.n_new == 2
    assert merged["human"].tolist()[:6] == pytest.approx([30, np.nan, np.nan, np.nan, np.nan, 70], nan_ok=True)
    shuffled = table.iloc[::-1].reset_index(drop=True)  # sorted otherwise since: the identity still holds
    again, _ = merge_labels(shuffled, labels)
    assert again.loc[again["hypothesis"] == "h5", "human"].item() == 70
    assert again.loc[again["hypothesis"] == "h0", "human"].item() == 30


def test_merge_on_row_id_without_identity_columns():
    table = _table().drop(columns=["system", "seg_id"])
    labels = pd.DataFrame({"row_id": [3, 7], "human": [1.0, ""]})  # an empty cell is not a label
    merged, summary = merge_labels(table, labels)
    assert summary.on == ("row_id",) and summary.n_labels == 1
    assert merged["human"].notna().tolist() == [False, False, False, True, False, False, False, False]


def test_merge_refuses_what_it_cannot_place():
    table = _table()
    base = {"lp": ["en-de"], "system": ["A"], "seg_id": [1], "hypothesis": ["h0"], "human": [1.0]}
    with pytest.raises(InputError, match="1 label\\(s\\) match no row of the table on lp, system, seg_id"):
        merge_labels(table, pd.DataFrame({**base, "seg_id": [9]}))
    with pytest.raises(InputError, match="judged another hypothesis"):
        merge_labels(table, pd.DataFrame({**base, "hypothesis": ["changed"]}))
    with pytest.raises(InputError, match="two labels for one row"):
        merge_labels(table, pd.DataFrame({k: v * 2 for k, v in base.items()}).assign(human=[1.0, 2.0]))
    with pytest.raises(InputError, match="is not a number"):
        merge_labels(table, pd.DataFrame({**base, "human": ["good"]}))
    with pytest.raises(InputError, match="row_id 8 is not a row"):
        merge_labels(table.drop(columns="seg_id"), pd.DataFrame({"row_id": [8], "human": [1.0]}))
    with pytest.raises(InputError, match="already has 'chrf' = 0 where the labels say 1"):
        merge_labels(table, pd.DataFrame(base), into="chrf")
    merged, summary = merge_labels(table, pd.DataFrame(base), into="chrf", overwrite=True)
    assert merged["chrf"].iloc[0] == 1 and summary.n_new == 0


# ----------------------------------------------------------------------------------------- the commands
@pytest.fixture(scope="module")
def trip(tmp_path_factory, wmt21_segments):
    """select -> annotate (pandas, as a user would) -> merge, on two WMT21 pairs whose texts hold a tab and
    line breaks."""
    folder = tmp_path_factory.mktemp("labels")
    df = wmt21_segments[wmt21_segments["lp"].isin(["cs-en", "ru-en"]) & (wmt21_segments["seg_id"] <= 100)
                        & wmt21_segments["system"].isin(["Online-A", "Online-B", "Online-G", "Online-W"])]
    df = df[["lp", "system", "seg_id", "source", "reference", "hypothesis", "human_raw"]].reset_index(drop=True)
    df.loc[df.index % 7 == 0, "source"] = df["source"] + "\nsecond line"
    df.loc[df.index % 5 == 0, "hypothesis"] = df["hypothesis"] + "\twith a tab, \"quoted\""
    df.to_parquet(folder / "in.parquet")
    rc, _, err = run_cli("score", folder / "in.parquet", "-m", "chrf", "-o", folder / "scored.parquet")
    assert rc == 0, err
    rc, _, err = run_cli("calibrate", "select", folder / "scored.parquet", "--budget", "60", "--score", "chrf",
                         "-o", folder / "to_label.tsv", "--seed", "4")
    assert rc == 0, err
    to_label = pd.read_csv(folder / "to_label.tsv", sep="\t")  # the annotators' tool reads it with pandas
    truth = df.set_index(["lp", "system", "seg_id"])["human_raw"]
    to_label["human"] = truth.loc[list(zip(to_label["lp"], to_label["system"], to_label["seg_id"], strict=True))] \
        .to_numpy()
    to_label.to_csv(folder / "labelled.tsv", sep="\t", index=False)
    return folder, df, to_label


def test_select_writes_every_text_and_a_0_based_row_id(trip):
    folder, df, to_label = trip
    ours = read_table(folder / "to_label.tsv")
    assert len(ours) == 120 and ours.columns[0] == "row_id"
    assert ours["hypothesis"].tolist() == to_label["hypothesis"].tolist()
    assert ours["source"].str.contains("\n").any() and ours["hypothesis"].str.contains("\t").any()
    # row_id is pandas' index of the table the rows were chosen from: .loc gives back the same row
    back = df.loc[to_label["row_id"]]
    assert back["hypothesis"].tolist() == to_label["hypothesis"].tolist()
    assert back["system"].tolist() == to_label["system"].tolist()


def test_merge_keeps_the_signatures_and_places_every_label(trip):
    folder, _, to_label = trip
    rc, out, err = run_cli("calibrate", "merge", folder / "labelled.tsv", folder / "scored.parquet", "-o",
                           folder / "merged.parquet", "--format", "json")
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["on"] == ["lp", "system", "seg_id"] and summary["n_labels"] == summary["n_new"] == \
        int(to_label["human"].notna().sum())
    assert read_table_metadata(folder / "merged.parquet") == read_table_metadata(folder / "scored.parquet") != {}
    merged = read_table(folder / "merged.parquet")
    labelled = merged.dropna(subset=["human"])
    assert len(labelled) == summary["n_labels"]
    assert labelled["human"].tolist() == labelled["human_raw"].tolist()  # each label on its own row
    # a TSV table keeps its signatures in the sidecar
    rc, _, err = run_cli("calibrate", "merge", folder / "labelled.tsv", folder / "scored.parquet", "-o",
                         folder / "merged.jsonl")
    assert rc == 0, err
    assert read_table_metadata(folder / "merged.jsonl")["signatures"] == \
        read_table_metadata(folder / "scored.parquet")["signatures"]


def test_merge_refuses_a_label_that_matches_no_row(trip):
    folder, _, to_label = trip
    stray = to_label.copy()
    stray.loc[3, "seg_id"] = 9999
    stray.loc[3, "row_id"] = stray.loc[4, "row_id"]  # and its row_id names another row: nothing places it
    stray.to_csv(folder / "stray.tsv", sep="\t", index=False)
    rc, _, err = run_cli("calibrate", "merge", folder / "stray.tsv", folder / "scored.parquet", "-o",
                         folder / "never.parquet")
    assert rc == 2 and "1 label(s) match no row of the table on lp, system, seg_id" in err
    assert "seg_id=9999" in err and not (folder / "never.parquet").exists()


def test_fit_and_report_run_on_the_merged_table_without_a_signature_warning(trip):
    folder, _, _ = trip
    if not (folder / "merged.parquet").exists():
        run_cli("calibrate", "merge", folder / "labelled.tsv", folder / "scored.parquet", "-o",
                folder / "merged.parquet")
    rc, _, err = run_cli("calibrate", "fit", folder / "merged.parquet", "--score", "chrf", "--human", "human",
                           "--method", "anchored", "--human-higher-is-better", "-o", folder / "cal.json")
    assert rc == 0, err
    assert "signature" not in err.lower()
    rc, _, err = run_cli("report", folder / "merged.parquet", "--score", "chrf", "--human", "human", "--model",
                         folder / "cal.json", "-o", folder / "report.html", "--n-resamples", "50")
    assert rc == 0, err
    assert "signature" not in err.lower()


def test_select_states_the_key_and_the_merge_command_runs_as_printed(trip, monkeypatch):
    import shlex

    folder, _, _ = trip
    monkeypatch.chdir(folder)
    rc, _, err = run_cli("calibrate", "select", "scored.parquet", "--budget", "5", "--score", "chrf", "-o",
                         "few.tsv", "--label-column", "judged")
    assert rc == 0, err
    said = " ".join(err.split())
    assert "keyed by lp, system, seg_id and row_id (its 0-based position in scored.parquet" in said
    command = said.split("once 'judged' is filled in: ", 1)[1]
    assert command == "xleval calibrate merge few.tsv scored.parquet --label-column judged -o labelled.parquet"
    rows = pd.read_csv("few.tsv", sep="\t")
    rows["judged"] = 50.0
    rows.to_csv("few.tsv", sep="\t", index=False)
    rc, _, err = run_cli(*shlex.split(command)[1:])
    assert rc == 0, err
    assert read_table("labelled.parquet")["judged"].notna().sum() == len(rows)


def test_a_key_rewritten_by_a_spreadsheet_is_placed_by_row_id_and_said(tmp_path):
    """doc_id '007' written by select, read back by pandas as 7 and written again; a system name's trailing space
    trimmed. The identity columns then match no row; row_id places the labels, as the hypotheses and the labels
    the keys still match confirm, and a note says so. A re-sorted table (row_id names other rows) is refused."""
    table = _table().assign(doc_id=["007", "007", "008", "008"] * 2, system=["A ", "A ", "B", "B"] * 2)
    labels = pd.DataFrame({"row_id": [0, 2, 5], "lp": ["en-de", "en-de", "en-fr"], "system": ["A", "B", "A"],
                           "doc_id": [7, 8, 7], "seg_id": [1, 1, 2], "hypothesis": ["h0", "h2", "h5"],
                           "human": [30.0, 50.0, 70.0]})
    merged, summary = merge_labels(table, labels)
    assert merged["human"].tolist()[:6] == pytest.approx([30, np.nan, 50, np.nan, np.nan, 70], nan_ok=True)
    (note,) = summary.notes
    assert note.startswith("3 label(s) match no row on lp, system, doc_id, seg_id (the first, lp='en-de', "
                           "system='A', doc_id=7, seg_id=1") and "placed by their row_id" in note
    with pytest.raises(InputError, match="3 label\\(s\\) match no row of the table"):
        merge_labels(table.iloc[::-1].reset_index(drop=True), labels)  # row_id now names other rows
    with pytest.raises(InputError, match="match no row of the table"):
        merge_labels(table, labels, on=["lp", "system", "doc_id", "seg_id"])  # keys named: no fall-back


def test_merge_counts_rows_once_and_says_what_it_replaced():
    table = _table().assign(human=[10.0] + [np.nan] * 7)
    labels = pd.DataFrame({"lp": ["en-de"] * 3, "system": ["A", "A", "A"], "seg_id": [1, 2, 2],
                           "hypothesis": ["h0", "h1", "h1"], "human": [20.0, 40.0, 40.0]})
    _, summary = merge_labels(table, labels, overwrite=True)
    assert (summary.n_labels, summary.n_new, summary.n_same, summary.n_replaced) == (3, 1, 0, 1)
    assert summary.sentence().endswith(": 1 new, 0 already there, 1 replaced (1 label(s) repeat a row's label)")
    with pytest.raises(InputError, match=r"label row 4 .*'inf' in 'human' is not a finite number"):
        merge_labels(table, labels.assign(human=["20", "40", "inf"]))


def test_a_refusal_about_the_table_names_the_table(tmp_path):
    """`--on lp,nope`: the table has no column 'nope'; the message named the labels file."""
    table, labels = tmp_path / "scored.tsv", tmp_path / "filled.tsv"
    _table().to_csv(table, sep="\t", index=False)
    pd.DataFrame({"lp": ["en-de"], "system": ["A"], "seg_id": [1], "nope": [1], "human": [1.0]}).to_csv(
        labels, sep="\t", index=False)
    rc, _, err = run_cli("calibrate", "merge", labels, table, "-o", tmp_path / "out.tsv", "--on", "lp,nope")
    assert rc == 2 and err.startswith(f"xleval: error: {table}: --on ['lp', 'nope']: the table has no column 'nope'")
    rc, _, err = run_cli("calibrate", "merge", labels, table, "-o", tmp_path / "out.tsv", "--on", "lp,chrf")
    assert rc == 2 and err.startswith(f"xleval: error: {labels}: --on ['lp', 'chrf']: the labels have no column")
