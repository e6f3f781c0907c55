"""Issue 26, outputs and inputs: a closed standard input, one rule for '-', standard output sent into an
input, the table and its signature sidecar committed together, text writers of Parquet's other column
types, and leaderboard TSV that reads back exactly."""
from __future__ import annotations

import datetime
import decimal
import errno
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import xleval_command
from xleval.exceptions import InputError, OutputError
from xleval.io import read_table, write_table

SIDE = ".signatures.json"


def _scores(names=("A", "B", "C")) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"lp": lp, "system": name, "seg_id": i, "score": float(rng.normal(j * 0.3, 1.0)),
             "human": 0.0}
            for k, lp in enumerate(("en-de", "en-fr", "en-ja")) for j, name in enumerate(names) for i in range(20)]
    df = pd.DataFrame(rows)
    df["human"] = 50 + 10 * df["score"] + 5 * df["lp"].map({"en-de": 0, "en-fr": 1, "en-ja": 2})
    return df


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "t.tsv"
    _scores().to_csv(path, sep="\t", index=False)
    return path


def _process(*args, cwd, stdin_closed=False, stdout=None, stdin=None) -> subprocess.CompletedProcess:
    kwargs = {"stdout": stdout} if stdout is not None else {"stdout": subprocess.PIPE}
    return subprocess.run(xleval_command(*args), cwd=cwd, stdin=stdin, stderr=subprocess.PIPE, text=True,
                          timeout=300, check=False, preexec_fn=(lambda: os.close(0)) if stdin_closed else None,
                          **kwargs)


def _one_line(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("xleval: error: "), proc.stderr
    return proc.stderr


# 1. a closed standard input ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("calibrate", "fit", "-", "--score", "score", "-o", "m.json"),
                                  ("leaderboard", "-", "--score", "score"),
                                  ("score", "-", "--metric", "chrf", "-o", "o.tsv"),
                                  ("score", "-i", "-", "-r", "t.tsv", "--metric", "chrf")])
def test_closed_stdin_is_one_line(args, table, tmp_path):
    err = _one_line(_process(*args, cwd=tmp_path, stdin_closed=True))
    assert "standard input is closed" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tsv"]


# 2. '-' as an output: standard output, or refused; never a file named '-' -------------------------------------
def test_fit_output_dash_is_refused_not_a_file(cli, table, tmp_path):
    rc, out, err = cli("calibrate", "fit", table, "--score", "score", "-o", "-", cwd=tmp_path)
    assert rc == 2 and err.startswith("xleval: error: -o -: ") and "give a file name" in err, err
    assert not (tmp_path / "-").exists() and out == ""


def test_leaderboard_output_dash_is_stdout(cli, table, tmp_path):
    rc, out, err = cli("leaderboard", table, "--score", "score", "--by", "lp", "--n-resamples", "20",
                       "--format", "json", "-o", "-", cwd=tmp_path)
    assert rc == 0, err
    assert len(json.loads(out)["rows"]) == 9
    assert not (tmp_path / "-").exists()


def test_report_output_dash_is_stdout(cli, table, tmp_path):
    rc, out, err = cli("report", table, "--score", "score", "--by", "lp", "--n-resamples", "20", "--format", "json",
                       "-o", "-", cwd=tmp_path)
    assert rc == 0, err
    assert "leaderboard" in json.loads(out)
    assert not (tmp_path / "-").exists()


def test_a_second_output_dash_is_refused(cli, table, tmp_path):
    rc, _, err = cli("fairness", "gaps", table, "--metric", "score", "--by", "lp", "--report", "-", cwd=tmp_path)
    assert rc == 2 and "--report -:" in err and "give a file name" in err, err
    assert not (tmp_path / "-").exists()


def test_the_library_writes_dash_to_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from xleval.io import write_text

    write_text("-", "hello\n")
    assert capsys.readouterr().out == "hello\n" and not (tmp_path / "-").exists()


# 3. standard output sent into an input -----------------------------------------------------------------------
@pytest.mark.parametrize("args", [("leaderboard", "t.tsv", "--score", "score", "--format", "tsv"),
                                  ("leaderboard", "t.tsv", "--score", "score", "--format", "tsv", "-o", "-"),
                                  ("diagnose", "t.tsv", "--score", "score"),
                                  ("calibrate", "select", "t.tsv", "--score", "score", "--budget", "2", "-o", "-")])
def test_stdout_appended_to_the_input_is_refused(args, table, tmp_path):
    before = table.read_bytes()
    with open(table, "ab") as sink:
        err = _one_line(_process(*args, cwd=tmp_path, stdout=sink))
    assert "standard output goes to the input t.tsv" in err
    assert table.read_bytes() == before


def test_stdin_redirected_from_the_file_stdout_appends_to_is_refused(table, tmp_path):
    before = table.read_bytes()
    with open(table, "rb") as source, open(table, "ab") as sink:
        err = _one_line(_process("leaderboard", "-", "--score", "score", cwd=tmp_path, stdout=sink, stdin=source))
    assert "standard output goes to the input <stdin>" in err
    assert table.read_bytes() == before


# 4. the table and its sidecar land together, or neither --------------------------------------------------------
def _failing(monkeypatch, name: str, call: int) -> None:
    """The ``call``-th call of os.NAME (1-based) fails with ENOSPC."""
    real = getattr(os, name) if name != "fsync" else os.fsync
    count = {"n": 0}

    def fake(*args, **kwargs):
        count["n"] += 1
        if count["n"] == call:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)
    monkeypatch.setattr(os, name, fake)


def _state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("name, call", [("replace", 2), ("fsync", 2), ("replace", 1)])
def test_a_failed_write_keeps_the_earlier_table_and_its_sidecar(tmp_path, monkeypatch, name, call):
    path = tmp_path / "out.tsv"
    write_table(_scores().head(3), path, metadata={"signatures": {"score": "old|v:1"}})
    before = _state(tmp_path)
    _failing(monkeypatch, name, call)
    with pytest.raises(OutputError, match=r"out\.tsv: cannot write \(No space left on device\).*no output was written"):
        write_table(_scores(), path, metadata={"signatures": {"score": "new|v:2"}})
    monkeypatch.undo()
    assert _state(tmp_path) == before  # no new table beside the old sidecar, no temporaries


def test_a_failed_first_write_leaves_neither_table_nor_sidecar(tmp_path, monkeypatch):
    path = tmp_path / "out.tsv"
    _failing(monkeypatch, "fsync", 2)  # the sidecar's: in the old writer, after the table was renamed into place
    with pytest.raises(OutputError, match="no output was written"):
        write_table(_scores(), path, metadata={"signatures": {"score": "new|v:2"}})
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_stale_sidecar_goes_with_its_table_or_stays_with_it(tmp_path, monkeypatch):
    path = tmp_path / "out.tsv"
    write_table(_scores().head(3), path, metadata={"signatures": {"score": "old|v:1"}})
    before = _state(tmp_path)
    _failing(monkeypatch, "replace", 2)  # the sidecar is moved aside, then the table's rename fails
    with pytest.raises(OutputError):
        write_table(_scores(), path)  # no metadata: the old sidecar describes a table that is gone
    monkeypatch.undo()
    assert _state(tmp_path) == before
    write_table(_scores(), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


def test_a_streamed_table_and_its_sidecar_land_together(tmp_path, monkeypatch):
    from xleval.scale import open_writer

    path = tmp_path / "out.tsv"
    write_table(_scores().head(3), path, metadata={"signatures": {"score": "old|v:1"}})
    before = _state(tmp_path)
    _failing(monkeypatch, "replace", 2)
    with pytest.raises(OutputError), open_writer(path, metadata={"signatures": {"score": "new|v:2"}}) as writer:
        writer.write(_scores())
    monkeypatch.undo()
    assert _state(tmp_path) == before


# 5. Parquet's other column types in the text writers ----------------------------------------------------------
def _typed() -> pd.DataFrame:
    return pd.DataFrame({
        "system": ["A", "B"],
        "day": [datetime.date(2020, 1, 31), None],
        "price": [decimal.Decimal("1.10"), decimal.Decimal("-0.000000000000000000001")],
        "took": pd.to_timedelta(["1.5s", None]),
        "at": [datetime.time(9, 30), datetime.time(23, 59, 59, 1)],
        "stamp": pd.to_datetime(["2020-01-31T09:30:00", None]),
    })


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv", ".csv"])
def test_dates_decimals_and_durations_are_written_as_exact_text(tmp_path, suffix):
    path = tmp_path / f"o{suffix}"
    write_table(_typed(), path)
    if suffix == ".jsonl":
        back = read_table(path)
    else:  # the text as written (xleval's reader types numbers-as-text as floats)
        back = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    assert back["day"].tolist()[0] == "2020-01-31"
    assert back["price"].astype(str).tolist() == ["1.10", "-1E-21"]
    assert pd.Timedelta(back["took"].tolist()[0]) == pd.Timedelta("1.5s")
    assert back["at"].tolist() == ["09:30:00", "23:59:59.000001"]
    assert str(back["stamp"].tolist()[0]).startswith("2020-01-31")


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv", ".csv"])
def test_binary_columns_are_refused_in_text_formats(tmp_path, suffix):
    df = pd.DataFrame({"system": ["A"], "blob": [b"\x00\xff"]})
    with pytest.raises(InputError, match=r"column 'blob' holds binary values .*write \.parquet"):
        write_table(df, tmp_path / f"o{suffix}")
    assert list(tmp_path.iterdir()) == []


def test_binary_parquet_column_through_the_cli_is_one_line(cli, tmp_path):
    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"lp": ["en-de"] * 2, "system": ["A", "B"], "seg_id": [1, 1], "hypothesis": ["a b", "a"],
                       "reference": ["a b", "a b"], "blob": [b"\x00\xff", b"\x01"],
                       "day": [datetime.date(2020, 1, 1)] * 2})
    df.to_parquet(tmp_path / "in.parquet")
    for out in ("o.jsonl", "o.tsv"):
        rc, _, err = cli("score", "in.parquet", "--metric", "chrf", "-o", out, cwd=tmp_path)
        assert rc == 2 and err.count("\n") == 1 and "column 'blob' holds binary values" in err, err
        assert not (tmp_path / out).exists()
    rc, _, err = cli("score", "in.parquet", "--metric", "chrf", "-o", "ok.parquet", cwd=tmp_path)
    assert rc == 0, err


@pytest.mark.parametrize("name", ["a\tb", "a\nb", "a\rb"])
def test_a_tab_or_newline_in_a_column_name_is_refused_in_tsv(tmp_path, name):
    df = pd.DataFrame({name: ["x"], "score": [1.0]})
    with pytest.raises(InputError, match="a TSV header cannot hold"):
        write_table(df, tmp_path / "o.tsv")
    write_table(df, tmp_path / "o.jsonl")
    assert read_table(tmp_path / "o.jsonl").columns.tolist() == [name, "score"]


# 6. leaderboard TSV reads back exactly ----------------------------------------------------------------------------
NAMES = ("A\u202eB", 'D"q', '"Yes," he said', "x\x1b[31my", "\U000e0041tag")


def test_leaderboard_tsv_file_reads_back_exactly_with_xleval_and_pandas(cli, tmp_path):
    source = tmp_path / "in.jsonl"
    _scores(NAMES).to_json(source, orient="records", lines=True)
    target = tmp_path / "board.tsv"
    rc, _, err = cli("leaderboard", source, "--score", "score", "--by", "lp", "--n-resamples", "20", "--format", "tsv",
                     "-o", target)
    assert rc == 0, err
    ours = read_table(target)
    theirs = pd.read_csv(target, sep="\t", dtype=str, keep_default_na=False)
    assert sorted(set(ours["system"])) == sorted(set(theirs["system"])) == sorted(NAMES)
    assert ours["raw"].astype(float).tolist() == theirs["raw"].astype(float).tolist()
    assert len(ours) == len(theirs) == 15


@pytest.mark.parametrize("name", ["A\tx", "B\nnew"])
def test_leaderboard_tsv_file_refuses_a_name_tsv_cannot_hold(cli, tmp_path, name):
    source = tmp_path / "in.jsonl"
    _scores((name, "C")).to_json(source, orient="records", lines=True)
    rc, _, err = cli("leaderboard", source, "--score", "score", "--by", "lp", "--n-resamples", "20", "--format", "tsv",
                     "-o", tmp_path / "board.tsv")
    assert rc == 2 and err.count("\n") == 1 and "--format json" in err, err
    assert not (tmp_path / "board.tsv").exists()
