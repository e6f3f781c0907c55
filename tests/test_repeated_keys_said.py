"""Rows that repeat a (pair, system, segment) key with different scores are said by every command that reads the
scores, once: `diagnose` and `calibrate fit` (before: silent), the leaderboard's TSV on stderr (before: its notes
were in the text and JSON only) and the leaderboard and report with `--method auto` (before: twice, once with the
file's name and once without). A missing segment id is no key: it repeats nothing, and the one row order of the
decision and the bias check does not fail on it (before: a TypeError traceback in `diagnose`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

SAID = "12 (lp, system, seg_id) key(s) repeat with different scores in 'metric'"


def _table(seed: int = 0) -> pd.DataFrame:
    """3 pairs of 5 systems, 12 segments each, a human label on every row."""
    rng = np.random.default_rng(seed)
    rows = []
    for p, lp in enumerate(("en-de", "en-fr", "en-ja")):
        for s in range(5):
            for i in range(12):
                q = rng.normal()
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": i, "metric": 40 + 10 * p + 3 * s + 3 * q,
                             "human": 60 + 4 * s + 4 * q + rng.normal()})
    return pd.DataFrame(rows)


@pytest.fixture
def twice(tmp_path):
    df = _table()
    again = df[(df["lp"] == "en-de") & (df["system"] == "sys1")].assign(metric=0.0)
    path = tmp_path / "twice.tsv"
    pd.concat([df, again], ignore_index=True).to_csv(path, sep="\t", index=False)
    return path


def _said(out: str, err: str) -> int:
    return " ".join((out + err).split()).count(SAID)


@pytest.mark.parametrize("command", [
    ["diagnose", "--human", "human", "--human-scale", "da"],
    ["calibrate", "fit", "--method", "lgn", "-o", "{dir}/lgn.json"],
    ["calibrate", "fit", "--method", "anchored", "--human", "human", "--human-scale", "da", "-o", "{dir}/a.json"],
    ["calibrate", "fit", "--method", "auto", "--human", "human", "--human-scale", "da", "-o", "{dir}/auto.json"],
    ["leaderboard", "--method", "none", "--n-resamples", "20", "--format", "tsv", "-o", "{dir}/b.tsv"],
    ["leaderboard", "--human", "human", "--human-scale", "da", "--n-resamples", "20"],
    ["report", "--human", "human", "--human-scale", "da", "--n-resamples", "20", "-o", "{dir}/r.json"],
], ids=["diagnose", "fit-lgn", "fit-anchored", "fit-auto", "leaderboard-tsv", "leaderboard-auto", "report"])
def test_every_command_says_the_repeated_keys_once(cli, twice, command):
    words = [w.replace("{dir}", str(twice.parent)) for w in command]
    at = 2 if words[0] == "calibrate" else 1
    rc, out, err = cli(*words[:at], twice, "--score", "metric", *words[at:])
    assert rc == 0, err
    assert _said(out, err) == 1, out + err


def test_the_report_keeps_one_copy_of_the_warning(cli, twice):
    rc, _, err = cli("report", twice, "--score", "metric", "--human", "human", "--human-scale", "da",
                     "--n-resamples", "20", "-o", twice.parent / "r.json")
    assert rc == 0, err
    import json

    report = json.loads((twice.parent / "r.json").read_text())
    messages = [w["message"] for w in report["warnings"]]
    assert sum(SAID in m for m in messages) == 1, messages


def test_a_missing_segment_id_repeats_nothing_and_the_row_order_does_not_fail(tmp_path):
    import warnings

    from xleval._base.grouping import segment_rank
    from xleval.table import EvalTable

    df = _table()
    df["seg_id"] = df["seg_id"].astype("string")  # pandas' string dtype keeps a missing id missing
    df.loc[[0, 12], "seg_id"] = pd.NA  # two rows of en-de sys0 without an id, with different scores
    ranks = segment_rank(df["seg_id"])
    assert ranks[0] == ranks[12] and ranks[1] < ranks[2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no repeated-key warning: a key with a gap is no key
        table = EvalTable.from_frame(df, score="metric", by="lp", human="human")
        table.scores()
        ordered = table.in_canonical_order()
    assert len(ordered) == len(df)


def test_repeated_labels_are_said_beside_repeated_scores(cli, tmp_path):
    """Repeats of the score in one pair and of the human label in another: both columns are named (before: the
    board and the decision kept one warning of repeated keys, whatever its column, and lost the labels')."""
    import json
    import warnings

    from xleval.decision import decide_calibration

    df = _table()
    scores = df[(df["lp"] == "en-de") & (df["system"] == "sys1")].assign(metric=0.0)
    labels = df[(df["lp"] == "en-ja") & (df["system"] == "sys2")].assign(human=lambda d: d["human"] + 7)
    both = pd.concat([df, scores, labels], ignore_index=True)
    path = tmp_path / "both.tsv"
    both.to_csv(path, sep="\t", index=False)
    rc, _, err = cli("leaderboard", path, "--score", "metric", "--human", "human", "--human-scale", "da",
                     "--n-resamples", "20", "--format", "json", "-o", tmp_path / "b.json")
    assert rc == 0, err
    notes = json.loads((tmp_path / "b.json").read_text())["notes"]
    assert sum("different scores in 'metric'" in n for n in notes) == 1, notes
    assert sum("different human scores in 'human'" in n for n in notes) == 1, notes
    only_labels = pd.concat([df, labels], ignore_index=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        decide_calibration(only_labels, "metric", "lp", human="human", human_scale="da")
    said = [str(w.message) for w in caught if "repeat with different" in str(w.message)]
    assert len(said) == 1 and "different human scores in 'human'" in said[0]
