"""`xleval calibrate fit|apply|show` and `xleval demo` through the CLI entry point (``xleval.cli.main``, in process)."""
import json

import numpy as np
import pandas as pd
import pytest

from xleval.synthetic import simulate_mt_evaluation


@pytest.fixture
def table(tmp_path):
    sim = simulate_mt_evaluation(n_segments=60, seed=3)
    path = tmp_path / "cal.tsv"
    sim.data.to_csv(path, sep="\t", index=False)
    return path, sim


def test_fit_apply_show_round_trip(tmp_path, table, cli):
    path, _sim = table
    model = tmp_path / "m.json"
    rc, out, err = cli("calibrate", "fit", path, "--score", "metric", "--by", "lp", "--target", "80,10", "-o", model,
                       "--format", "json")
    assert rc == 0, err
    report = json.loads(out)
    assert report["verification"]["sd_of_means_after"] < 1e-9
    assert all(abs(g["mean_after"] - 80) < 1e-9 for g in report["verification"]["groups"])
    output = tmp_path / "out.parquet"
    rc, out, err = cli("calibrate", "apply", model, path, "-o", output, "--interval", "0.95", "--format", "json")
    assert rc == 0, err
    df = pd.read_parquet(output)
    original = pd.read_csv(path, sep="\t")
    assert len(df) == len(original) and list(df.columns[: original.shape[1]]) == list(original.columns)
    assert df["seg_id"].tolist() == original["seg_id"].tolist()
    assert {"metric_lgn", "calibration_source", "metric_lgn_low", "metric_lgn_high"} <= set(df.columns)
    assert (df["metric_lgn_low"] < df["metric_lgn"]).all() and (df["metric_lgn"] < df["metric_lgn_high"]).all()
    rc, out, _ = cli("calibrate", "show", model, "--format", "json")
    assert rc == 0 and json.loads(out)["params"]["target"] == [80.0, 10.0]


def test_apply_keeps_nan_rows_and_counts_them(tmp_path, table, cli):
    path, _ = table
    model = tmp_path / "m.json"
    assert cli("calibrate", "fit", path, "--score", "metric", "-o", model, "--format", "json").exit_code == 0
    df = pd.read_csv(path, sep="\t")
    df.loc[[0, 5], "metric"] = np.nan
    bad = tmp_path / "nan.tsv"
    df.to_csv(bad, sep="\t", index=False)
    rc, out, err = cli("calibrate", "apply", model, bad, "-o", tmp_path / "o.tsv", "--format", "json")
    assert rc == 0, err
    result = json.loads(out)
    assert result["n_nan"] == 2 and result["rows"] == len(df)
    assert any("NaN" in w for w in result["warnings"])


@pytest.mark.parametrize("args, message", [
    (["calibrate", "fit", "{missing}", "--score", "metric", "-o", "{out}"], "no such file"),
    (["calibrate", "fit", "{table}", "--score", "nope", "-o", "{out}"], "missing required column"),
    (["calibrate", "fit", "{table}", "--score", "metric", "--method", "minmax", "-o", "{out}"], "method"),
    (["calibrate", "fit", "{table}", "--score", "metric", "--target", "80", "-o", "{out}"], "MEAN,STD"),
    (["calibrate", "fit", "{table}", "--score", "metric", "-o", "{nodir}"], "does not exist"),
    (["calibrate", "apply", "{missing}", "{table}", "-o", "{out}"], "no such calibrator"),
])
def test_errors_are_one_line_and_exit_2(tmp_path, table, args, message, cli):
    path, _ = table
    subst = {"missing": tmp_path / "nope.tsv", "out": tmp_path / "o.json", "table": path,
             "nodir": tmp_path / "no" / "dir" / "m.json"}
    rc, _out, err = cli(*[a.format(**subst) for a in args])
    assert rc == 2
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_signature_mismatch_needs_force(tmp_path, table, cli):
    path, _ = table
    model = tmp_path / "m.json"
    assert cli("calibrate", "fit", path, "--score", "metric", "--signature", "bleu|tok:13a", "-o", model,
               "--format", "json").exit_code == 0
    rc, _, err = cli("calibrate", "apply", model, path, "-o", tmp_path / "o.tsv", "--signature", "bleu|tok:zh")
    assert rc == 2 and "signature" in err
    assert not (tmp_path / "o.tsv").exists()
    rc, _, err = cli("calibrate", "apply", model, path, "-o", tmp_path / "o.tsv", "--signature", "bleu|tok:zh",
                     "--force")
    assert rc == 0, err


def test_unseen_error_mode(tmp_path, table, cli):
    path, _sim = table
    model = tmp_path / "m.json"
    df = pd.read_csv(path, sep="\t")
    df[df.tgt_lang != "sw"].to_csv(tmp_path / "no_sw.tsv", sep="\t", index=False)
    rc, _, err = cli("calibrate", "fit", tmp_path / "no_sw.tsv", "--score", "metric", "-o", model, "--format", "json")
    assert rc == 0, err
    rc, _, err = cli("calibrate", "apply", model, path, "-o", tmp_path / "o.tsv", "--on-unseen", "error")
    assert rc == 2 and "sw" in err


def test_demo_recovers_the_cross_language_ranking(tmp_path, cli):
    rc, out, err = cli("demo", "--out", tmp_path / "demo", "--format", "json")
    assert rc == 0, err
    result = json.loads(out)
    raw, cal = result["agreement"]["raw"], result["agreement"]["calibrated"]
    assert cal["cross_group_pairwise_accuracy"] > raw["cross_group_pairwise_accuracy"] + 0.1
    assert (tmp_path / "demo" / "lgn.json").exists() and (tmp_path / "demo" / "summary.json").exists()


@pytest.mark.parametrize("chunk", [None, "50"])
def test_apply_keeps_input_signatures_and_names_the_calibrator(tmp_path, table, chunk, cli):
    from xleval.io import read_table_metadata, write_table

    _path, sim = table
    scored = tmp_path / "scored.parquet"
    write_table(sim.data, scored, metadata={"signatures": {"metric": "chrF2|nc:6|synthetic"}})
    model = tmp_path / "m.json"
    assert cli("calibrate", "fit", scored, "--score", "metric", "-o", model, "--format", "json").exit_code == 0
    out = tmp_path / "out.parquet"
    args = ["calibrate", "apply", model, scored, "-o", out, "--format", "json"]
    assert cli(*args, *(["--chunk-size", chunk] if chunk else [])).exit_code == 0
    sigs = read_table_metadata(out)["signatures"]
    assert sigs["metric"] == "chrF2|nc:6|synthetic"
    # the default grouping: lp, which the table has
    assert sigs["metric_lgn"].startswith("lgn|method:zscore|by:lp|target:0,1|of:chrF2|nc:6|synthetic")


def test_missing_output_folder_is_refused_before_fitting(tmp_path, table, cli):
    path, _ = table
    rc, _, err = cli("calibrate", "fit", path, "--score", "metric", "-o", tmp_path / "nope" / "m.json")
    assert rc == 2 and "does not exist" in err
