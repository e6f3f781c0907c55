"""Review of the decision and the label-planning commands (s11): what the advice names runs as written and does
what the decision measured.

* ``calibrate evaluate --human-scale da`` (``compare_calibrations(human_scale="da")``): the fit the advice names
  keeps the scale the user named (its direction and its 0-100 bounds), as ``calibrate fit --method auto`` does; it
  said ``--human-scale raw`` (a scale with no direction and no bounds);
* ``calibrate select --skip-labelled COL``: the merge command it prints puts the labels into COL, where the labels
  already collected are and where the next select, plan and fit read them; it merged them into ``human``.
"""
from __future__ import annotations

import json
import shlex
import warnings

import numpy as np
import pandas as pd

from xleval.decision import Procedure, compare_calibrations, decide_from_evaluation
from xleval.exceptions import DataQualityWarning


def _table(seed: int = 0, k: int = 12, labels_per_group: int = 30) -> pd.DataFrame:
    """Three pairs of 6 systems whose metric levels differ; a 0-100 human column with some labels per pair."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, shift in (("de-en", -10.0), ("fr-en", 0.0), ("ru-en", 10.0)):
        for s in range(6):
            q = rng.normal(size=k)
            rows.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(k), "doc_id": "d1",
                                      "hypothesis": [f"{lp} s{s} line {i}" for i in range(k)],
                                      "chrf": 50 + shift + 2 * s + 5 * q,
                                      "da": np.clip(60 + 2 * s + 8 * q + rng.normal(0, 5, size=k), 0, 100)}))
    df = pd.concat(rows, ignore_index=True)
    keep = np.zeros(len(df), bool)
    for _, idx in df.groupby("lp").groups.items():
        keep[rng.choice(np.asarray(idx), labels_per_group, replace=False)] = True
    df["da"] = df["da"].where(keep)
    return df


_FAST = Procedure(n_folds=3, n_repeats=1, n_resamples=200, budgets=(10,), selections=("random",))


def _fit_actions(decision) -> list:
    actions = list(decision.rules.actions) if decision.rules is not None else []
    return [a for a in actions if a.action == "fit"]


def test_the_advice_of_an_evaluation_keeps_the_named_human_scale():
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        evaluation = compare_calibrations(df, "chrf", "da", "lp", procedure=_FAST, human_scale="da")
        decision = decide_from_evaluation(df, evaluation)
    fits = _fit_actions(decision)
    assert fits, decision.rules
    # the scale the user named (oracle: the argument given), not its kind: "raw" has no direction and no bounds
    assert {a.human_scale for a in fits} == {"da"}
    assert all("human_scale='da'" in c for c in decision.rules.commands if "fit_calibration" in c)


def test_calibrate_evaluate_names_the_fit_on_the_scale_given(tmp_path, cli):
    path = tmp_path / "my table.parquet"
    _table().to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rc, out, err = cli("calibrate", "evaluate", str(path), "--score", "chrf", "--human", "da", "--human-scale",
                           "da", "--folds", "3", "--repeats", "1", "--n-resamples", "200", "--budget", "10",
                           "--format", "json")
    assert rc == 0, err
    commands = [c for c in json.loads(out)["decision"]["rules"]["commands"] if " fit " in c]
    assert commands
    for command in commands:
        words = shlex.split(command)
        assert words[words.index("--human-scale") + 1] == "da", command
        assert words[3] == str(path)  # the path with a space, quoted: one word


def test_select_with_skip_labelled_merges_the_labels_into_that_column(tmp_path, cli):
    df = _table(labels_per_group=5)
    path = tmp_path / "scored table.tsv"
    df.to_csv(path, sep="\t", index=False)
    rows = tmp_path / "to label.tsv"
    rc, out, err = cli("calibrate", "select", str(path), "--score", "chrf", "--budget", "4", "--skip-labelled", "da",
                       "-o", str(rows), "--format", "json")
    assert rc == 0, err
    merge = json.loads(out)["merge"]
    chosen = pd.read_csv(rows, sep="\t")
    assert len(chosen) == 12 and df.loc[chosen["row_id"], "da"].isna().all()
    chosen["human"] = np.arange(len(chosen), dtype=float) + 0.5  # the annotators' labels
    chosen.to_csv(rows, sep="\t", index=False)
    words = shlex.split(merge)
    assert words[:3] == ["xleval", "calibrate", "merge"]
    rc, _, err = cli(*words[1:], cwd=tmp_path)
    assert rc == 0, err
    merged = pd.read_parquet(tmp_path / words[words.index("-o") + 1])
    # every new label in the column the labels already collected are in: 5 there + 4 new per pair
    assert merged.groupby("lp")["da"].count().tolist() == [9, 9, 9]
    assert merged.loc[chosen["row_id"], "da"].tolist() == chosen["human"].tolist()
    assert merged["da"].notna().sum() == df["da"].notna().sum() + len(chosen)


def _mapped_table(tmp_path):
    """A TSV whose columns are not the canonical names (read with --col), with a tab and quotes in two texts."""
    df = _table(labels_per_group=5).rename(columns={"lp": "pair", "system": "sys", "seg_id": "sid",
                                                    "hypothesis": "mt"})
    df.loc[0, "mt"], df.loc[1, "mt"] = 'he said "hi"\tthere', '"quoted'
    path = tmp_path / "mapped table.tsv"
    df.to_csv(path, sep="\t", index=False)
    return df, path


_COLS = ("--col", "lp=pair", "--col", "system=sys", "--col", "seg_id=sid", "--col", "hypothesis=mt")


def _run_merge(cli, merge: str, tmp_path, table, resorted):
    """The printed merge command, run as written on a copy of the table sorted another way (a spreadsheet's sort:
    the identity columns survive it, the row positions do not)."""
    words = shlex.split(merge)
    assert words[:3] == ["xleval", "calibrate", "merge"]
    resorted.to_csv(table, sep="\t", index=False)
    rc, _, err = cli(*words[1:], cwd=tmp_path)
    assert rc == 0, err
    return pd.read_parquet(tmp_path / words[words.index("-o") + 1])


def test_select_with_a_column_mapping_prints_a_merge_that_keys_on_the_identity_columns(tmp_path, cli):
    df, path = _mapped_table(tmp_path)
    rows = tmp_path / "to label.tsv"
    rc, out, err = cli("calibrate", "select", str(path), *_COLS, "--score", "chrf", "--budget", "5", "-o", str(rows),
                       "--format", "json")
    assert rc == 0, err
    chosen = pd.read_csv(rows, sep="\t")
    chosen["human"] = np.arange(len(chosen), dtype=float) + 100.0
    chosen.to_csv(rows, sep="\t", index=False)
    merged = _run_merge(cli, json.loads(out)["merge"], tmp_path, path,
                        df.sort_values(["sys", "sid"], kind="stable", ascending=False))
    # OUT keeps the table's own names; each label is on the row of its (lp, system, seg_id) (oracle: the keys the
    # rows file carries, matched by hand), none lost
    assert {"pair", "sys", "sid", "mt"} <= set(merged.columns)
    got = merged.dropna(subset=["human"]).set_index(["pair", "sys", "sid"])["human"]
    want = chosen.set_index(["lp", "system", "seg_id"])["human"]
    assert len(got) == len(want) == 15
    assert got.sort_index().tolist() == want.sort_index().tolist()
    assert got.sort_index().index.tolist() == want.sort_index().index.tolist()


def test_plan_with_a_column_mapping_prints_a_merge_that_keys_on_the_identity_columns(tmp_path, cli):
    df, path = _mapped_table(tmp_path)
    rows = tmp_path / "plan rows.tsv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rc, out, err = cli("calibrate", "plan", str(path), *_COLS, "--score", "chrf", "--human", "da", "--budget",
                           "30", "-o", str(rows), "--format", "json")
    assert rc == 0, err
    chosen = pd.read_csv(rows, sep="\t")
    assert len(chosen) == 15
    chosen["human"] = 50.0 + np.arange(len(chosen))
    chosen.to_csv(rows, sep="\t", index=False)
    merged = _run_merge(cli, json.loads(out)["merge"], tmp_path, path, df.iloc[::-1])
    got = merged.dropna(subset=["da"]).set_index(["pair", "sys", "sid"])["da"]
    new = chosen.set_index(["lp", "system", "seg_id"])["human"]
    assert got.loc[new.index].tolist() == new.tolist()
    assert len(got) == int(df["da"].notna().sum()) + len(new)
