"""An output file's extension sets the format when --format is not given: `leaderboard -o board.json` wrote a text
table under a .json name, `report -o report.json` an HTML page, `meta -o meta.tsv` the text tables; each now writes
what the name says, as `--report PATH` already did. A --format given wins over the name."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(0)
    rows = []
    for lp, shift in (("en-de", 0.0), ("en-ja", 8.0)):
        for s in range(4):
            for i in range(24):
                quality = 60 + 6 * s + rng.normal(0, 8)
                rows.append({"lp": lp, "system": f"sys{s}", "doc_id": f"d{i // 4}", "seg_id": i,
                             "hypothesis": f"output {s} {i} of {lp}", "chrf": quality / 2 + shift + rng.normal(0, 3),
                             "bleu": quality / 3 + rng.normal(0, 3), "human": float(np.clip(quality, 0, 100))})
    path = tmp_path_factory.mktemp("format") / "scored.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _run(*args):
    result = run_cli(*args)
    rc, _, err = result
    assert rc == 0, err
    return result


@pytest.mark.parametrize("command", [
    ("leaderboard", "{t}", "--score", "chrf", "--human", "human", "--n-resamples", "50"),
    ("meta", "{t}", "--metrics", "chrf,bleu", "--human", "human", "--n-resamples", "20", "--no-spa"),
    ("check-outputs", "{t}", "--score", "chrf"),
])
def test_json_and_tsv_by_the_name(table, tmp_path, command):
    args = [table if a == "{t}" else a for a in command]
    _run(*args, "-o", tmp_path / "out.json")
    json.loads((tmp_path / "out.json").read_text())  # JSON, not a text table
    _run(*args, "-o", tmp_path / "out.tsv")
    frame = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert len(frame) > 0 and len(frame.columns) > 3
    assert not (tmp_path / "out.tsv").read_text().lstrip().startswith("{")


def test_report_json_by_the_name_and_a_given_format_wins(table, tmp_path):
    args = ("report", table, "--score", "chrf", "--human", "human", "--n-resamples", "50")
    _run(*args, "-o", tmp_path / "report.json")
    assert json.loads((tmp_path / "report.json").read_text())["format"] == "xleval.report"
    _run(*args, "-o", tmp_path / "page.json", "--format", "html")
    assert (tmp_path / "page.json").read_text().lstrip().lower().startswith("<!doctype html")
    _run("leaderboard", table, "--score", "chrf", "-o", tmp_path / "board.json", "--format", "text")
    assert not (tmp_path / "board.json").read_text().lstrip().startswith("{")
    _run("leaderboard", table, "--score", "chrf", "-o", tmp_path / "board.out")  # no format named: text
    assert "rank" in (tmp_path / "board.out").read_text()


def test_judges_agree_writes_json_to_the_file_when_asked(table, tmp_path):
    """`judges agree --format json -o FILE` wrote TSV into FILE (-o took precedence over --format); now JSON, as
    does -o agreement.json; other names keep TSV."""
    args = ("judges", "agree", table, "--judges", "chrf,bleu")
    _run(*args, "--format", "json", "-o", tmp_path / "agreement.out")
    _run(*args, "-o", tmp_path / "agreement.json")
    for name in ("agreement.out", "agreement.json"):
        payload = json.loads((tmp_path / name).read_text())
        assert {r["group"] for r in payload["table"]} >= {"en-de", "en-ja"}
    _run(*args, "-o", tmp_path / "agreement.tsv")
    assert set(pd.read_csv(tmp_path / "agreement.tsv", sep="\t")["a"]) == {"chrf"}
