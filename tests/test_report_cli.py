"""`xleval report`: HTML and JSON from a table, with or without a saved calibrator; user errors exit 2."""
from __future__ import annotations

import html
import json
import warnings

import pytest

from xleval.calibration import LGN
from xleval.io import write_table
from xleval.synthetic import simulate_mt_evaluation


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    sim = simulate_mt_evaluation(n_systems=3, n_segments=30, languages=("de", "fi", "zh"), seed=5)
    cal = sim.data[sim.data["split"] == "calibration"]
    ev = sim.data[sim.data["split"] == "evaluation"]
    write_table(ev, root / "eval.tsv", metadata={"signatures": {"metric": "synthetic|v:1"}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 90 rows per group < min_count: shrinkage warning not under test
        LGN(by="tgt_lang", score="metric").fit(cal[cal["tgt_lang"] != "zh"], signature="synthetic|v:1") \
            .save(root / "lgn.json")
    return root


def test_html_and_json_have_the_same_content(files, cli):
    rc, _, err = cli("report", files / "eval.tsv", "--score", "metric", "--human", "human", "-o", files / "r.html")
    assert rc == 0, err
    assert cli("report", files / "eval.tsv", "--score", "metric", "--human", "human",
               "-o", files / "r.json", "--format", "json").exit_code == 0
    page = (files / "r.html").read_text(encoding="utf-8")
    payload = json.loads((files / "r.json").read_text(encoding="utf-8"))
    assert page.startswith("<!DOCTYPE html>")
    assert [s["id"] for s in payload["sections"]][:4] == ["data", "distributions", "bias", "calibration"]
    assert dict(payload["meta"])["signature"] == "synthetic|v:1"  # read from the table's sidecar
    for section in payload["sections"]:
        assert section["title"] in html.unescape(page)
    assert "wrote html report on 270 rows" in err


def test_saved_model_with_an_unseen_language(files, cli):
    out = files / "m.json"
    assert cli("report", files / "eval.tsv", "--score", "metric", "--model", files / "lgn.json",
               "-o", out, "--format", "json").exit_code == 0
    payload = json.loads(out.read_text(encoding="utf-8"))
    warns = next(s for s in payload["sections"] if s["id"] == "warnings")["warnings"]
    assert any(w.startswith("UnseenGroupWarning") for w in warns)
    assert payload["meta"]["calibrator"] == "LGN loaded from file"


@pytest.mark.parametrize("args, message", [
    (["--score", "nope"], "nope"),
    (["--score", "metric", "--by", "region"], "cannot group by 'region'"),
    (["--score", "metric", "--format", "pdf"], "html or json"),
])
def test_user_errors_are_one_line_and_exit_2(files, cli, args, message):
    rc, _, err = cli("report", files / "eval.tsv", *args, "-o", files / "bad.html")
    assert rc == 2 and message in err and "Traceback" not in err
    assert not (files / "bad.html").exists()


def test_signature_mismatch_is_refused_unless_forced(files, tmp_path, cli):
    import pandas as pd

    df = pd.read_csv(files / "eval.tsv", sep="\t")
    write_table(df, tmp_path / "other.tsv", metadata={"signatures": {"metric": "other|v:2"}})
    args = ["report", str(tmp_path / "other.tsv"), "--score", "metric", "--model", str(files / "lgn.json"),
            "-o", str(tmp_path / "r.html")]
    rc, _, err = cli(*args)
    assert rc == 2 and "signature" in err.lower()
    assert cli(*args, "--force").exit_code == 0
