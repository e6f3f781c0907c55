"""Issue 26, calibration and data semantics: a signature travels with its file column, one rule for a
calibrator of another score column, bad human labels, contradicting repeated labels, merged language
codes, hand-edited calibrators, scikit-learn pipelines, one-group tables, budgets above the labels."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import InputError
from xleval.io import write_table

SIG_BLEU = "bleu|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"
SIG_CHRF = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


def _frame(n_lp=2, systems=3, segs=20, seed=0, human=False):
    rng = np.random.default_rng(seed)
    rows = []
    for i, lp in enumerate(["en-de", "en-zh", "en-fr"][:n_lp]):
        for s in range(systems):
            q = rng.normal()
            for k in range(segs):
                x = 30 + 10 * i + 3 * q + rng.normal()
                rows.append({"lp": lp, "system": f"S{s}", "seg_id": k, "bleu": x, "chrf": x + 5,
                             **({"human": 50 + 5 * q + rng.normal()} if human else {})})
    return pd.DataFrame(rows)


@pytest.fixture
def files(tmp_path):
    """scores.tsv with a BLEU and a chrF column (each with its signature), chrf.tsv with chrF only,
    and a BLEU calibrator fitted on the first."""
    frame = _frame(human=True)
    write_table(frame, tmp_path / "scores.tsv", metadata={"signatures": {"bleu": SIG_BLEU, "chrf": SIG_CHRF}})
    write_table(frame.drop(columns="bleu"), tmp_path / "chrf.tsv", metadata={"signatures": {"chrf": SIG_CHRF}})
    r = run_cli("calibrate", "fit", "scores.tsv", "--score", "bleu", "--by", "lp", "-o", "bleu.json", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    return tmp_path


# --- 1. --col bleu=chrf keeps chrF's signature ------------------------------------------------------------
def test_col_mapping_keeps_the_file_columns_signature_in_apply(files):
    r = run_cli("calibrate", "apply", "bleu.json", "chrf.tsv", "--col", "bleu=chrf", "-o", "out.tsv", cwd=files)
    assert r.exit_code == 2 and "chrF2" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / "out.tsv").exists()


@pytest.mark.parametrize("command", ["leaderboard", "report"])
def test_col_mapping_keeps_the_file_columns_signature_with_model(files, command):
    out = "out.html" if command == "report" else "out.tsv"
    r = run_cli(command, "chrf.tsv", "--score", "bleu", "--col", "bleu=chrf", "--by", "lp", "--model", "bleu.json",
                "-o", out, cwd=files)
    assert r.exit_code == 2 and "chrF2" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / out).exists()


def test_fit_with_a_mapped_column_saves_its_signature(files):
    r = run_cli("calibrate", "fit", "chrf.tsv", "--score", "bleu", "--col", "bleu=chrf", "--by", "lp",
                "-o", "m.json", cwd=files)
    assert r.exit_code == 0, r.stderr
    assert json.loads((files / "m.json").read_text())["signature"] == SIG_CHRF


def test_eval_table_renames_signatures_with_columns(files):
    from xleval.table import EvalTable

    table = EvalTable.read(files / "scores.tsv", columns={"chrf": "bleu", "bleu": "old"}, score="bleu", by="lp")
    assert table.signature("bleu") == SIG_CHRF and table.signature("old") == SIG_BLEU


# --- 2./3. a calibrator of another column: one rule; the mismatch names the table ---------------------------
@pytest.mark.parametrize("command", ["leaderboard", "report"])
def test_model_of_another_score_column_is_refused_by_both(files, command):
    out = "out.html" if command == "report" else "out.tsv"
    r = run_cli(command, "scores.tsv", "--score", "chrf", "--by", "lp", "--model", "bleu.json", "-o", out, cwd=files)
    assert r.exit_code == 2 and "fitted on column 'bleu'" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / out).exists()


def test_leaderboard_signature_mismatch_names_the_table(files):
    write_table(_frame(), files / "other.tsv", metadata={"signatures": {"bleu": SIG_CHRF}})
    r = run_cli("leaderboard", "other.tsv", "--score", "bleu", "--by", "lp", "--model", "bleu.json", cwd=files)
    assert r.exit_code == 2 and "other.tsv" in r.stderr and "Traceback" not in r.stderr, r.stderr


# --- 4. an infinite human score is bad input everywhere ---------------------------------------------------
@pytest.fixture
def inf_labels(tmp_path):
    frame = _frame(human=True)
    frame["human"] = frame["human"].astype(object)
    frame.loc[7, "human"] = "inf"
    frame.loc[9, "human"] = ""
    write_table(frame, tmp_path / "inf.tsv")
    return tmp_path


@pytest.mark.parametrize("args", [
    ("calibrate", "fit", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--method", "anchored",
     "-o", "out.json"),
    ("calibrate", "select", "inf.tsv", "--score", "bleu", "--budget", "3", "--skip-labelled", "human", "-o", "out.tsv"),
    ("leaderboard", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "-o", "out.tsv"),
    ("calibrate", "evaluate", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human"),
])
def test_infinite_human_score_is_refused(inf_labels, args):
    r = run_cli(*args, cwd=inf_labels)
    assert r.exit_code == 2 and "row 8" in r.stderr and "infinite" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not list(inf_labels.glob("out.*"))


def test_infinite_human_score_is_refused_by_the_table():
    from xleval.table import EvalTable

    table = EvalTable.from_frame(_frame(human=True).assign(human=lambda d: d["human"].where(d.index != 3, -np.inf)),
                                 score="bleu", by="lp", human="human")
    with pytest.raises(InputError, match="row 4: human score -inf is infinite"):
        table.human_values()
