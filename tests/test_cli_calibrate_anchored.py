"""`xleval calibrate fit --method anchored|auto`, `apply`/`show` of anchored calibrators, `select` and
`evaluate` through the real entry point, and their bad inputs (one line, exit status 2)."""
import json

import numpy as np
import pandas as pd
import pytest

from xleval.cli import main
from xleval.stats import pairwise_accuracy


def _world(offsets=(-8.0, 0.0, 8.0), bias=(6.0, 0.0, -6.0), n_sys=6, n_seg=60, seed=0, sign=1.0):
    rng = np.random.default_rng(seed)
    rows = []
    for g, (off, b) in enumerate(zip(offsets, bias, strict=False)):
        for s in range(n_sys):
            q = rng.normal()
            rows.append(pd.DataFrame({
                "lp": ("en-de", "en-fr", "en-zh")[g], "system": f"sys{s}", "seg_id": np.arange(n_seg),
                "source": [f"src {g} {i}" for i in range(n_seg)], "hypothesis": [f"hyp {s} {i}" for i in range(n_seg)],
                "reference": [f"ref {g} {i}" for i in range(n_seg)],
                "chrf": 50 + b + 5 * q + 5 * rng.normal(size=n_seg),
                "human": sign * (70 + off + 3 * q + 6 * rng.normal(size=n_seg))}))
    df = pd.concat(rows, ignore_index=True)
    keep = np.zeros(len(df), dtype=bool)
    for rows_ in df.groupby("lp").indices.values():
        keep[rng.choice(rows_, size=40, replace=False)] = True
    return df.assign(sparse=df["human"].where(keep))


@pytest.fixture
def table(tmp_path):
    df = _world()
    path = tmp_path / "seg.tsv"
    df.to_csv(path, sep="\t", index=False)
    return path, df


def _system_accuracy(out, column, human="human", sign=1.0):
    s = out.groupby(["lp", "system"])[[column, human]].mean().reset_index()
    return pairwise_accuracy(sign * s[column], sign * s[human], groups=s["lp"], pairs="cross").estimate


def test_anchored_fit_apply_show(tmp_path, table, capsys):
    path, df = table
    model = tmp_path / "m.json"
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                 "sparse", "-o", str(model), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["method"] == "anchored" and report["fit"]["level"] == "segment"
    assert report["fit"]["direction_source"] == "data" and "rises" in report["fit"]["direction"]
    assert [g["n_labels"] for g in report["groups"]] == [40, 40, 40]
    assert any("no metric signature" in w for w in report["warnings"])  # a TSV has none: said once, at fit time
    out_path = tmp_path / "out.parquet"
    assert main(["calibrate", "apply", str(model), str(path), "-o", str(out_path), "--interval", "0.9",
                 "--format", "json"]) == 0
    applied = json.loads(capsys.readouterr().out)
    assert applied["column"] == "chrf_anchored" and applied["calibration_source"] == {"lp": len(df)}
    out = pd.read_parquet(out_path)
    assert list(out.columns[: df.shape[1]]) == list(df.columns) and len(out) == len(df)
    low, high = out["chrf_anchored_low"], out["chrf_anchored_high"]
    assert ((low < out["chrf_anchored"]) & (out["chrf_anchored"] < high)).all()
    # on the human scale, and the cross-group order of systems follows the human one far better than raw
    assert abs(out["chrf_anchored"].mean() - df["human"].mean()) < 2.0
    assert _system_accuracy(out, "chrf_anchored") > _system_accuracy(out, "chrf") + 0.2
    assert main(["calibrate", "show", str(model), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["params"]["human"] == "sparse" and shown["fit"]["n_labels"] == 120


def test_lower_is_better_human_scale(tmp_path, capsys):
    df = _world(sign=-1.0)  # MQM-like
    path = tmp_path / "mqm.tsv"
    df.to_csv(path, sep="\t", index=False)
    for flag, source in ((None, "data"), ("--human-lower-is-better", "given")):
        model = tmp_path / f"m{source}.json"
        args = ["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                "sparse", "-o", str(model), "--format", "json"] + ([flag] if flag else [])
        assert main(args) == 0
        fit = json.loads(capsys.readouterr().out)["fit"]
        assert fit["direction_source"] == source and "falls" in fit["direction"]
    out_path = tmp_path / "out.parquet"
    assert main(["calibrate", "apply", str(model), str(path), "-o", str(out_path)]) == 0
    out = pd.read_parquet(out_path)
    assert _system_accuracy(out, "chrf_anchored", sign=-1.0) > 0.85


def test_auto_says_what_it_chose_and_why(tmp_path, table, capsys):
    path, _df = table
    model = tmp_path / "auto.json"
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--method", "auto", "--human",
                 "sparse", "-o", str(model)]) == 0
    err = capsys.readouterr().err
    # the decision cross-validated at the labels the table has (40 per group), and says so
    assert "method anchored: out of fold at 40 labels per group" in err
    assert json.loads(model.read_text())["format"] == "xleval.AnchoredCalibrator"
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--method", "auto", "-o",
                 str(model)]) == 0
    err = capsys.readouterr().err
    assert "method lgn: no human labels" in err and "WARNING" in err and "--budget 100" in err
    assert json.loads(model.read_text())["format"] == "xleval.LGN"
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--method", "auto", "--human",
                 "sparse", "-o", str(model), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["decision"].startswith("method anchored")


def test_select_writes_rows_ready_for_annotation(tmp_path, table, capsys):
    path, _df = table
    out = tmp_path / "to_annotate.tsv"
    assert main(["calibrate", "select", str(path), "--by", "lp", "--budget", "12", "--score", "chrf", "-o", str(out),
                 "--seed", "3", "--selection", "spread", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["per_group"] == {"en-de": 12, "en-fr": 12, "en-zh": 12}
    chosen = pd.read_csv(out, sep="\t")
    assert list(chosen.columns) == ["row_id", "lp", "system", "seg_id", "source", "hypothesis", "reference", "human"]
    assert chosen.groupby(["lp", "system"]).size().tolist() == [2] * 18
    again = tmp_path / "again.tsv"
    assert main(["calibrate", "select", str(path), "--by", "lp", "--budget", "12", "--score", "chrf", "-o", str(again),
                 "--seed", "3", "--selection", "spread"]) == 0
    assert again.read_text() == out.read_text()


def test_evaluate_text_and_json(tmp_path, table, capsys):
    path, _ = table
    args = ["calibrate", "evaluate", str(path), "--score", "chrf", "--human", "human", "--by", "lp",
            "--budget", "10,30", "--repeats", "2", "--n-resamples", "100"]
    assert main(args + ["--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    names = [v["name"] for v in result["variants"]]
    assert names == ["raw", "lgn", "anchored", "anchored@10 spread", "anchored@10 random", "anchored@30 spread",
                     "anchored@30 random"]
    assert result["recommended"] == "anchored" and set(result["selection_gain"]) == {"10", "30"}
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "Trust anchored calibration here" in text and "anchored@30 spread" in text


@pytest.mark.parametrize("args, message", [
    (["fit", "--method", "anchored", "--human", "nohuman"], "has no values"),
    (["fit", "--method", "anchored", "--human", "const"], "is constant"),
    (["fit", "--method", "anchored", "--human", "word"], "is not a number"),
    (["fit", "--method", "anchored"], "give the human score column with --human"),
    (["fit", "--method", "lgn", "--human", "sparse"], "used by --method anchored or auto"),
    (["fit", "--method", "anchored", "--human", "sparse", "--chunk-size", "10"], "fits in memory"),
    (["evaluate", "--human", "nohuman"], "has no values"),
    (["evaluate", "--human", "const"], "constant"),
    (["evaluate", "--human", "word"], "is not a number"),
    (["evaluate", "--human", "human", "--budget", "10,x"], "whole numbers"),
    (["evaluate", "--human", "human", "--selection", "best"], "--selection"),
    (["select", "--budget", "0"], "budget"),
])
def test_bad_inputs_are_one_line_and_exit_2(tmp_path, table, capsys, args, message):
    _path, df = table
    df = df.assign(nohuman=np.nan, const=3.0, word="good")
    bad = tmp_path / "bad.tsv"
    df.to_csv(bad, sep="\t", index=False)
    command = [args[0], str(bad), "--score", "chrf", "--by", "lp", *args[1:]]
    if args[0] == "fit":
        command += ["-o", str(tmp_path / "m.json")]
    if args[0] == "select":
        command += ["-o", str(tmp_path / "s.tsv")]
    assert main(["calibrate", *command]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_groups_with_zero_or_one_label(tmp_path, table, capsys):
    _path, df = table
    one = df.index[df.lp == "en-zh"][0]
    labels = df["sparse"].where(df.lp != "en-zh")
    labels[one] = df.loc[one, "human"]
    cases = {"zero": df["sparse"].where(df.lp != "en-zh"), "one": labels}
    for name, column in cases.items():
        p = tmp_path / f"{name}.tsv"
        df.assign(sparse=column).to_csv(p, sep="\t", index=False)
        model = tmp_path / f"{name}.json"
        assert main(["calibrate", "fit", str(p), "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                     "sparse", "-o", str(model), "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        zs = next(g for g in report["groups"] if g["group"] == "en-zh")
        assert zs["n_labels"] == (0 if name == "zero" else 1)
        assert zs["source"] == ("pooled" if name == "zero" else "labels")
        assert any("en-zh" in w for w in report["warnings"] + report["notes"])
        # auto: a group without labels means LGN, loudly, naming that group
        assert main(["calibrate", "fit", str(p), "--score", "chrf", "--by", "lp", "--method", "auto", "--human",
                     "sparse", "-o", str(model)]) == 0
        err = capsys.readouterr().err
        assert ("method lgn" in err and "en-zh" in err) if name == "zero" else "method anchored" in err


def test_offsets_option_chooses_the_offset_estimator(tmp_path, cli):
    """`calibrate fit --offsets` reaches the estimators of docs/calibration.md ("Offsets from all the evidence")
    from the command line: `own` keeps every group's labels' mean residual, `common-eb` pulls fully toward the
    common offset (4 groups: both differ from the default mixed prior), and the saved calibrator says which."""
    rng = np.random.default_rng(5)
    rows = []
    for g, level in enumerate((-6.0, 0.0, 3.0, 8.0)):
        for s in range(5):
            q = rng.normal()
            rows.append(pd.DataFrame({"lp": ("en-de", "en-fr", "en-zh", "en-ja")[g], "system": f"sys{s}",
                                      "chrf": 50 + 5 * q + 5 * rng.normal(size=50),
                                      "human": 70 + level + 3 * q + 15 * rng.normal(size=50)}))
    df = pd.concat(rows, ignore_index=True)
    df["human"] = df["human"].where(rng.random(len(df)) < 0.12)
    path = tmp_path / "seg.tsv"
    df.to_csv(path, sep="\t", index=False)
    offsets = {}
    for choice in (None, "own", "common-eb"):
        out = tmp_path / f"{choice}.json"
        extra = ["--offsets", choice] if choice else []
        rc, _, err = cli("calibrate", "fit", path, "--score", "chrf", "--by", "lp", "--method", "anchored",
                         "--human", "human", "--human-scale", "da", "-o", out, *extra)
        assert rc == 0, err
        model = json.loads(out.read_text())
        params = model["params"]
        assert (params["prior"], params["shrinkage"]) == {None: ("mixed", "auto"), "own": ("mixed", "none"),
                                                          "common-eb": ("common", "eb")}[choice]
        groups = model["groups"]
        offsets[choice] = np.array([groups[g]["offset"] for g in sorted(groups)])
        residual = np.array([groups[g]["residual_mean"] for g in sorted(groups)])
        if choice == "own":
            np.testing.assert_allclose(offsets[choice], residual)
    assert np.abs(offsets["own"] - offsets[None]).max() > 0.05
    assert np.abs(offsets["common-eb"] - offsets[None]).max() > 0.05
    # the common offset pulls hardest: the spread of the offsets is smallest under common-eb
    assert offsets["common-eb"].std() < offsets["own"].std()


def test_offsets_option_with_lgn_is_one_clear_line(tmp_path, cli):
    df = _world()
    path = tmp_path / "seg.tsv"
    df.to_csv(path, sep="\t", index=False)
    rc, _, err = cli("calibrate", "fit", path, "--score", "chrf", "--by", "lp", "--method", "lgn", "--offsets", "own",
                     "-o", tmp_path / "m.json")
    assert rc == 2 and "--offsets" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
