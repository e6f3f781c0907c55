"""Issue 26, ingest: a human score file named as a column of the table is read as ``human_NAME`` (said),
never over that column; a ``--system``/``-l`` value that matches nothing is refused with what exists."""
from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_cli
from test_io_layouts import _mtme_folder, _wmt_folder
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_mtme, read_mtme_system_scores, read_wmt_folder


@pytest.mark.parametrize("name", ["source", "system", "hypothesis", "lp"])
def test_a_score_file_named_as_a_column_is_renamed_and_said(tmp_path, name):
    root = _mtme_folder(tmp_path)
    scores = root / "wmt21.news" / "human-scores"
    (scores / f"en-de.{name}.seg.score").write_text("sys1\t1\nsys1\t2\nsys1\t3\nrefB\t4\nrefB\t5\nrefB\t6\n")
    r = run_cli("ingest", "mtme", root, "--test-set", "wmt21.news", "-l", "en-de", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.stderr
    assert f"human_{name}" in r.stderr and "warning" in r.stderr, r.stderr
    df = pd.read_csv(tmp_path / "t.tsv", sep="\t", dtype=str, keep_default_na=False)
    sys1 = df[df["system"] == "sys1"]
    expected = {"source": ["a", "b", "c"], "system": ["sys1"] * 3, "hypothesis": ["s1", "s2", "s3"],
                "lp": ["en-de"] * 3}[name]
    assert sys1[name].tolist() == expected  # the table's own column, untouched
    assert [float(x) for x in sys1[f"human_{name}"]] == [1.0, 2.0, 3.0]


def test_system_level_scores_named_system_are_renamed(tmp_path):
    root = _mtme_folder(tmp_path)
    (root / "wmt21.news" / "human-scores" / "en-de.system.sys.score").write_text("sys1\t0.5\nrefB\t0.25\n")
    with pytest.warns(DataQualityWarning, match="human_system"):
        frame = read_mtme_system_scores(root, "en-de", test_set="wmt21.news").set_index("system")
    assert frame.loc["sys1", "human_system"] == 0.5 and frame.loc["refB", "mqm"] == pytest.approx(-0.05)


@pytest.mark.parametrize("args, value", [(["-l", "en-de", "-l", "xx-yy"], "xx-yy"),
                                         (["-l", "en-de", "--system", "sys1", "--system", "nope"], "nope")])
def test_mtme_filter_values_that_match_nothing_are_refused(tmp_path, args, value):
    root = _mtme_folder(tmp_path)
    r = run_cli("ingest", "mtme", root, "--test-set", "wmt21.news", *args, "-o", tmp_path / "t.tsv")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert repr(value) in lines[0] or value in lines[0]
    assert ("en-de" if value == "xx-yy" else "sys1") in lines[0]  # what exists
    assert ("--lp" if value == "xx-yy" else "--system") in lines[0]
    assert not (tmp_path / "t.tsv").exists()


@pytest.mark.parametrize("args, value, exists", [(["-l", "de-en", "-l", "fr-en"], "fr-en", "en-zh"),
                                                 (["--system", "X", "--system", "Y"], "Y", "Online-B")])
def test_wmt_filter_values_that_match_nothing_are_refused(tmp_path, args, value, exists):
    root = _wmt_folder(tmp_path)
    r = run_cli("ingest", "wmt", root, *args, "-o", tmp_path / "t.tsv")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and value in lines[0] and exists in lines[0], r.stderr
    assert not (tmp_path / "t.tsv").exists()


def test_python_names_the_argument(tmp_path):
    with pytest.raises(InputError, match=r"systems='nope'.*found: Online-B, X, sys\.A"):
        read_wmt_folder(_wmt_folder(tmp_path), systems=["X", "nope"])
    with pytest.raises(InputError, match=r"lps='xx-yy'.*found: en-de"):
        read_mtme(_mtme_folder(tmp_path / "m"), ["xx-yy"], test_set="wmt21.news")
