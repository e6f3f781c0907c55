"""``xleval meta``: every format, -o written whole, names from the data escaped, the library's numbers."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.meta import meta_evaluate


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "human": q + rng.normal(),
                        "metric:chrf": q + rng.normal(), "metric:bleu": rng.normal()}
                       for lp in ("en-de", "de-en\x1b[31m") for q, s in enumerate("ABCD") for i in range(10)])
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    return path, df


def test_json_carries_the_library_result(table):
    path, df = table
    r = run_cli("meta", str(path), "--metrics-prefix", "metric:", "--human", "human", "--n-resamples", "50",
                "--format", "json")
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    want = meta_evaluate(df, ["metric:chrf", "metric:bleu"], "human", n_resamples=50).to_dict()
    assert got["cells"] == json.loads(json.dumps(want["cells"]))
    assert got["system_scores"] == "complete" and got["warnings"] == []


def test_text_is_wmt_style_and_escapes_names(table):
    path, _ = table
    r = run_cli("meta", str(path), "--metrics", "metric:chrf,metric:bleu", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 0, r.stderr
    assert "\x1b" not in r.stdout and "de-en\\x1b[31m" in r.stdout
    assert "sys_pearson" in r.stdout and "cross-group acc" in r.stdout and "spa" in r.stdout
    head = next(line for line in r.stdout.splitlines() if line.startswith("lp ")).split()
    assert head == ["lp", "chrf", "bleu"]  # the shared prefix metric: is dropped from the headers


def test_tsv_and_latex_files(table, tmp_path):
    path, _ = table
    out = tmp_path / "o.tsv"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                "--format", "tsv", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    tidy = pd.read_csv(out, sep="\t")
    assert list(tidy.columns) == ["group", "metric", "statistic", "value", "ci_low", "ci_high", "n", "rank", "chance"]
    assert {"sys_pearson", "seg_acc_t", "global_accuracy", "cross_accuracy"} <= set(tidy["statistic"])
    tex = tmp_path / "o.tex"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                "--format", "latex", "-o", str(tex))
    text = tex.read_text()
    assert r.exit_code == 0 and text.count("\\begin{tabular}") == text.count("\\end{tabular}") >= 5
    assert "\x1b" not in text


def test_darr_and_system_level_table(table, tmp_path):
    path, df = table
    sys_path = tmp_path / "sys.tsv"
    df.groupby(["lp", "system"])[["human", "metric:chrf"]].mean().reset_index().to_csv(sys_path, sep="\t", index=False)
    r = run_cli("meta", str(sys_path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 0 and "system-level table" in r.stdout and "seg_pearson" not in r.stdout
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--darr", "human",
                "--darr-threshold", "1", "--no-spa", "--n-resamples", "20")
    assert r.exit_code == 0 and "darr_tau" in r.stdout and "\nspa:" not in r.stdout


def test_report_has_a_meta_evaluation_section(table, tmp_path):
    path, _ = table
    out = tmp_path / "r.json"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf,metric:bleu", "--human", "human", "--n-resamples", "20",
                "--report", str(out), "-o", str(tmp_path / "t.txt"))
    assert r.exit_code == 0, r.stderr
    report = json.loads(out.read_text())
    section = next(s for s in report["sections"] if s["id"] == "meta-evaluation")
    titles = [t["title"] for t in section["tables"]]
    assert titles[0].startswith("sys_pearson") and any(t.startswith("Across groups") for t in titles)
    assert "system scores" in section["lead"][0]
    html = tmp_path / "r.html"
    assert run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                   "--report", str(html), "-o", str(tmp_path / "u.txt")).exit_code == 0
    assert "Meta-evaluation" in html.read_text() and "\x1b" not in html.read_text()


def test_input_is_never_an_output(table):
    path, _ = table
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "-o", str(path))
    assert r.exit_code == 2 and r.stderr.startswith("xleval: error:") and path.read_text().startswith("lp\t")
