"""The decision's sentences in the command's words (issue 33, item 4: "its warning names a Python argument
(``human_higher_is_better=True``) on the command line"). Where the labels do not settle the direction of the human
scale, the decision says how to state it. The library says it in Python; every command said it in Python too,
in the leaderboard's "calibration:" line, its JSON (the decision's steps), diagnose's answer, and the report's
paragraphs and summary, although the notes beside them were already in flags. And diagnose had no flag to state
the direction, nor passed a stated direction on (``diagnose(human_scale=HumanScale(higher_is_better=False))``
dropped it)."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.calibration import HumanScale
from xleval.decision import diagnose, recommend_calibration

PYTHON_WORDS = re.compile(r"human_higher_is_better=|human_scale='")
FLAGS = "--human-higher-is-better or --human-lower-is-better"
UNSETTLED = "do not settle the direction of the human scale"


def _table() -> pd.DataFrame:
    """Two pairs x 6 systems x 60 segments; 30 labels per pair that the score does not predict (0-100, not
    z-like), so no slope settles the human scale's direction; the pairs' score levels differ."""
    rng = np.random.default_rng(3)
    rows = []
    for g, level in (("en-de", 50.0), ("zh-en", 60.0)):
        for s in range(6):
            for i in range(60):
                rows.append({"lp": g, "system": f"sys{s}", "doc_id": f"d{i // 10}", "seg_id": i,
                             "chrf": level + s + rng.normal(0, 8), "human": np.nan})
    df = pd.DataFrame(rows)
    for g in ("en-de", "zh-en"):
        picked = rng.choice(np.flatnonzero(df["lp"] == g), 30, replace=False)
        df.loc[picked, "human"] = rng.uniform(0, 100, 30).round(1)
    return df


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("words") / "unsettled.parquet"
    _table().to_parquet(path, index=False)
    return path


def test_the_library_says_it_in_python():
    decision = recommend_calibration(_table(), "chrf", "lp", human="human")
    assert UNSETTLED in decision.reason and "human_higher_is_better=True" in decision.reason
    # the reasons are one paragraph: each ends its sentence
    assert all(r.rstrip().endswith((".", "!", "?")) for r in decision.reasons), decision.reasons


@pytest.mark.parametrize("fmt", ["text", "json", "tsv"])
def test_the_leaderboard_says_it_in_flags(table, fmt):
    r = run_cli("leaderboard", table, "--score", "chrf", "--by", "lp", "--human", "human", "--n-resamples", "50",
                "--format", fmt)
    assert r.exit_code == 0, r.stderr
    said = r.stdout + r.stderr
    assert UNSETTLED in said and FLAGS in said
    assert not PYTHON_WORDS.search(said), PYTHON_WORDS.search(said)
    if fmt == "text":
        (line,) = [n for n in said.splitlines() if n.startswith("calibration: ")]
        assert FLAGS in line and not re.search(r"\) [A-Z]", line)  # one paragraph of ended sentences


@pytest.mark.parametrize("suffix", [".html", ".json"])
def test_the_report_says_it_in_flags(table, tmp_path, suffix):
    out = tmp_path / f"report{suffix}"
    r = run_cli("report", table, "--score", "chrf", "--by", "lp", "--human", "human", "--n-resamples", "50",
                "-o", out)
    assert r.exit_code == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert UNSETTLED in text and FLAGS in text
    assert not PYTHON_WORDS.search(text.replace("&#x27;", "'").replace("&#39;", "'"))
    if suffix == ".json":
        got = json.loads(text)
        assert any(FLAGS in r for r in got["summary"]["reasons"])


def test_diagnose_says_it_in_flags_and_takes_the_flag(table):
    r = run_cli("diagnose", table, "--score", "chrf", "--by", "lp", "--human", "human", "--n-resamples", "50",
                "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert UNSETTLED in r.stdout and FLAGS in r.stdout and not PYTHON_WORDS.search(r.stdout)
    assert any(FLAGS in s["finding"] for s in json.loads(r.stdout)["recommendation"]["steps"])
    stated = run_cli("diagnose", table, "--score", "chrf", "--by", "lp", "--human", "human", "--n-resamples", "50",
                     "--human-higher-is-better")
    assert stated.exit_code == 0, stated.stderr
    assert "recommended: " in stated.stdout and UNSETTLED not in stated.stdout


def test_diagnose_passes_a_stated_direction_on():
    unsettled = diagnose(_table(), "chrf", "lp", human="human")
    assert UNSETTLED in unsettled.recommendation.reason
    stated = diagnose(_table(), "chrf", "lp", human="human", human_scale=HumanScale(higher_is_better=True))
    assert UNSETTLED not in stated.recommendation.reason
    assert stated.recommendation.evidence.human_higher_is_better is True


def test_a_range_is_said_as_the_flag_takes_it():
    """The anchored map's note suggests ``human_range=(0, 100)``; the command line said ``--human-range (0, 100)``,
    which the flag refuses (it reads LOW,HIGH)."""
    from xleval.cli import leaderboard as leaderboard_module
    from xleval.cli._errors import cli_words

    command = next(v for v in vars(leaderboard_module).values() if getattr(v, "name", None) == "leaderboard"
                   and hasattr(v, "params"))
    said = cli_words("bound them with human_range=(0, 100), or human_range=(-25.5, 0.0) for MQM", command)
    assert said == "bound them with --human-range 0,100, or --human-range -25.5,0.0 for MQM"
    r = run_cli("leaderboard", "nope.tsv", "--score", "s", "--human-range", "-25.5,0.0")
    assert r.exit_code == 2 and "nope.tsv: no such file" in r.stderr  # -25.5,0.0 was taken as the flag's value
