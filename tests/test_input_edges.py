"""An empty TSV cell is that format's spelling of a missing value, and is read as the same rows written in
Parquet with nulls: a system or group cell is refused (before, a TSV's empty system cell became a system named
'' and could rank first, while the Parquet file was refused), and an empty ``reference_2`` cell is a missing
reference (before, TSV scored it as an empty reference: TER 35.29 where Parquet and sacrebleu give 27.27).
And a human label so large that the leaderboard's variance of a variance overflows is refused with one line
(before: an OverflowError traceback from 1e77 on); a leaderboard whose `--pairs` TSV cannot hold a name writes
neither file."""
from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest
import sacrebleu


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp in ("en-de", "en-fr"):
        for s in range(3):
            for i in range(12):
                q = rng.normal()
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": i, "doc_id": f"d{i // 4}",
                             "metric": 50 + 5 * s + 3 * q + rng.normal(), "human": 60 + 5 * s + 4 * q})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("command", [["leaderboard", "--n-resamples", "30"], ["diagnose"]])
def test_an_empty_system_cell_in_a_tsv_is_refused_as_a_parquet_null_is(cli, tmp_path, command):
    df = _table()
    df["system"] = df["system"].astype(object)
    df.loc[[3, 4], "system"] = None
    tsv, parquet = tmp_path / "t.tsv", tmp_path / "t.parquet"
    df.to_csv(tsv, sep="\t", index=False)
    df.to_parquet(parquet)
    said = []
    for path in (tsv, parquet):
        rc, _, err = cli(command[0], str(path), "--score", "metric", "--human", "human", *command[1:])
        assert rc == 2 and "Traceback" not in err, err
        said.append(err.replace(path.name, "FILE"))
        assert "group column 'system' is empty at row 4 (2 row(s) in all)" in err
    assert said[0] == said[1]


def test_an_empty_second_reference_in_a_tsv_is_a_missing_reference(cli, tmp_path):
    hyps = ["the cat sat on the mat", "the dog barked"]
    first = ["the cat sat on the mat", "a dog barked very loudly"]
    second = ["the cat is on the mat", None]
    expected = sacrebleu.metrics.TER().corpus_score(hyps, [first, second]).score  # sacrebleu's None
    df = pd.DataFrame({"lp": "de-en", "system": "A", "seg_id": [1, 2], "reference": first, "reference_2": second,
                       "hypothesis": hyps})
    corpus, rows = {}, {}
    for name in ("t.tsv", "t.parquet"):
        path, out = tmp_path / name, tmp_path / f"rows_{name}.jsonl"
        df.to_csv(path, sep="\t", index=False) if name.endswith(".tsv") else df.to_parquet(path)
        rc, said, err = cli("score", str(path), "-m", "ter", "--format", "json")
        assert rc == 0, err
        corpus[name] = json.loads(said)["corpus"][0]["ter"]
        rc, _, err = cli("score", str(path), "-m", "ter", "-o", str(out))
        assert rc == 0, err
        rows[name] = pd.read_json(out, lines=True)["ter"].tolist()
    assert corpus["t.tsv"] == corpus["t.parquet"] == pytest.approx(expected)
    assert rows["t.tsv"] == rows["t.parquet"]
    assert rows["t.tsv"][1] == pytest.approx(sacrebleu.metrics.TER().sentence_score(hyps[1], [first[1]]).score)
    empty = sacrebleu.metrics.TER().corpus_score(hyps, [first, ["the cat is on the mat", ""]]).score
    assert not np.isclose(expected, empty)  # the case tells a missing reference from an empty one


@pytest.mark.parametrize("command", [["leaderboard", "--n-resamples", "30"], ["calibrate", "evaluate"]])
def test_a_human_label_whose_fourth_power_overflows_is_one_line(cli, tmp_path, command):
    df = _table()
    df.loc[5, "human"] = 1e80
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    rc, _, err = cli(*command, str(path), "--score", "metric", "--human", "human", "--human-scale", "raw")
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "column 'human' row 6: human score 1e+80 is beyond +-1e+75" in err


def test_a_leaderboard_whose_pairs_file_is_refused_writes_neither_file(cli, tmp_path):
    """A name that a TSV file cannot hold refuses `--pairs FILE.tsv` before the leaderboard is written (before:
    the leaderboard's -o file was written, then the run exited 2 on the pairs)."""
    df = _table()
    df["system"] = df["system"].replace({"sys1": "sys\t1"})  # a tab: JSON holds it, a TSV file cannot
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    board, pairs = tmp_path / "board.json", tmp_path / "pairs.tsv"
    rc, _, err = cli("leaderboard", str(path), "--score", "metric", "--n-resamples", "20", "-o", str(board),
                     "--pairs", str(pairs))
    assert rc == 2 and "TSV cannot hold" in err and "use a .json name" in err, err
    assert not board.exists() and not pairs.exists()


def test_a_segment_scored_twice_differently_is_said(cli, tmp_path):
    """Rows that repeat a (pair, system, segment) key with different scores (a table concatenated with another run
    of a system) are each a segment of their own: the leaderboard's notes name them, and the library warns
    wherever a table's scores are read (before: averaged without a word, the system falling to last place).
    Repeats with one score (a row per rating of a segment) stay silent."""
    from xleval.exceptions import DataQualityWarning
    from xleval.table import EvalTable

    df = _table().drop(columns="doc_id")
    again = df[(df["lp"] == "en-de") & (df["system"] == "sys1")].assign(metric=0.0)
    raters = pd.concat([df, df[df["system"] == "sys2"].assign(human=1.0)], ignore_index=True)
    twice = pd.concat([df, again], ignore_index=True)
    for frame, name in ((raters, "raters.tsv"), (twice, "twice.tsv")):
        frame.to_csv(tmp_path / name, sep="\t", index=False)
    said = "12 (lp, system, seg_id) key(s) repeat with different scores in 'metric'"
    rc, out, err = cli("leaderboard", str(tmp_path / "twice.tsv"), "--score", "metric", "--n-resamples", "20")
    assert rc == 0 and said in " ".join((out + err).split()), out + err
    rc, out, err = cli("leaderboard", str(tmp_path / "raters.tsv"), "--score", "metric", "--n-resamples", "20")
    assert rc == 0 and "repeat with different scores" not in out + err
    with pytest.warns(DataQualityWarning, match="repeat with different scores"):
        EvalTable.from_frame(twice, score="metric", by="lp").scores()


def test_a_mapping_that_renames_a_needed_column_away_says_so(cli, tmp_path):
    """`--col score=metric` renames the file's 'metric' to 'score'; a calibrator fitted on 'metric' then misses it.
    The error names the mapping (before: "missing 'metric'; its columns are [..., 'metric', ...]; did you mean
    'metric'?", which the file's own header contradicts)."""
    path, model = tmp_path / "t.tsv", tmp_path / "m.json"
    _table().to_csv(path, sep="\t", index=False)
    rc, _, err = cli("calibrate", "fit", str(path), "--score", "metric", "--method", "lgn", "-o", str(model))
    assert rc == 0, err
    rc, _, err = cli("calibrate", "apply", str(model), str(path), "--col", "score=metric", "-o",
                     str(tmp_path / "o.tsv"))
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "the column mapping renames the file's 'metric' to 'score' (--col score=metric)" in err, err
    assert "did you mean" not in err and not (tmp_path / "o.tsv").exists()


def test_a_system_header_with_a_stray_space_is_refused_not_pooled(cli, tmp_path):
    """A header cell 'system ' (an export's stray space) made the leaderboard rank whole groups as one system each,
    with only a note; it is refused with the column to rename, and --system names it as it is."""
    path = tmp_path / "t.tsv"
    _table().rename(columns={"system": "system "}).to_csv(path, sep="\t", index=False)
    rc, _, err = cli("leaderboard", str(path), "--score", "metric", "--n-resamples", "20")
    assert rc == 2 and "'system ' differs from it only by spaces or case" in err and "--system 'system '" in err, err
    rc, out, err = cli("leaderboard", str(path), "--score", "metric", "--n-resamples", "20", "--system", "system ",
                       "--format", "tsv")
    assert rc == 0 and "sys1" in out, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_standard_output_is_one_line_with_where_and_what_to_do(tmp_path):
    """Standard output on a full device: the line names standard output and what to do, as `-o /dev/full` names the
    file (before: "xleval: error: No space left on device")."""
    from conftest import xleval_command

    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    with open("/dev/full", "w") as full:
        done = subprocess.run(xleval_command("leaderboard", path, "--score", "metric", "--n-resamples", "20"),
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("xleval: error: standard output: cannot write (No space left on device); free")
