"""`xleval report`, `xleval leaderboard` and `xleval demo` through the real entry point: HTML and JSON
from a table, with or without a saved calibrator, answer first; user errors exit 2."""
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
    assert [s["id"] for s in payload["sections"]][:3] == ["summary", "leaderboard", "warnings"]
    assert list(payload)[4:7] == ["summary", "leaderboard", "warnings"]
    assert dict(payload["meta"])["signature"] == "synthetic|v:1"  # read from the table's sidecar
    for section in payload["sections"]:
        assert section["title"] in html.unescape(page)
    assert "wrote html report on 270 rows" in err


def test_saved_model_with_an_unseen_language(files, cli):
    out = files / "m.json"
    assert cli("report", files / "eval.tsv", "--score", "metric", "--model", files / "lgn.json",
               "-o", out, "--format", "json").exit_code == 0
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert any(w["check"] == "groups the calibrator has not seen" for w in payload["warnings"])
    assert payload["meta"]["calibration"].startswith("saved LGN")


@pytest.mark.parametrize("args, message", [
    (["--score", "nope"], "nope"),
    (["--score", "metric", "--by", "region"], "no column 'region' (the group column, given as --by)"),
    (["--score", "metric", "--format", "pdf"], "report format 'pdf': use html or json"),
    (["--score", "metric", "--method", "anchored"], "anchored calibration needs human scores"),
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


@pytest.fixture(scope="module")
def wmt_tsv(wmt21_segments, tmp_path_factory):
    """WMT21 to-English with chrF and the raw DA as `human` (the pairs differ in human quality), as TSV."""
    from xleval.metrics import score_frame

    df = wmt21_segments
    rows = df[(df["tgt_lang"] == "en") & ~df["is_human"] & (df["seg_id"] <= 150)].reset_index(drop=True)
    scored = score_frame(rows, ["chrf"]).frame.rename(columns={"human_raw": "human"})
    path = tmp_path_factory.mktemp("wmt") / "wmt21.tsv"
    write_table(scored.drop(columns=["human_z", "human_n", "da_sid"]), path)
    return path, scored.groupby(["lp", "system"]).ngroups


def test_report_answers_first_without_model_or_system_flag(wmt_tsv, tmp_path, cli):
    # The system column is found by its canonical name; the recommended calibration is fitted and cross-validated.
    path, n_cells = wmt_tsv
    base = ["report", str(path), "--score", "chrf", "--by", "lp", "--human", "human", "--n-resamples", "200"]
    rc, _, err = cli(*base, "-o", tmp_path / "r.html")
    assert rc == 0, err
    assert cli(*base, "-o", tmp_path / "r.json", "--format", "json").exit_code == 0
    payload = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert payload["summary"]["recommendation"] == "anchored"
    assert payload["summary"]["validity"] == {**payload["summary"]["validity"], "level": "system", "status": "violated",
                                              "system": "violated"}
    assert [r["labels_per_group"] for r in payload["summary"]["budget_curve"]] == [25, 50, 100, 200]
    assert len(payload["leaderboard"]) == n_cells == 100
    assert len({(r["group"], r["system"]) for r in payload["leaderboard"]}) == n_cells
    violated = [w for w in payload["warnings"] if w["status"] == "violated"]
    assert violated and violated[0]["check"] == "LGN validity check, system level" and violated[0]["action"]
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count("<img ") >= 5 and "seed" not in page.lower()  # with the budget curve
    assert page.index("<section") == page.index('<section id="summary">')
    assert "recommended calibration anchored calibration" in " ".join(err.split())  # the console may wrap


def test_leaderboard_command_formats(wmt_tsv, tmp_path, cli):
    path, n_cells = wmt_tsv
    base = ["leaderboard", str(path), "--score", "chrf", "--by", "lp", "--method", "lgn", "--n-resamples", "100"]
    rc, out, err = cli(*base)
    assert rc == 0, err
    assert "leaderboard: chrf by lp" in out and "corpus chrF from summed sufficient statistics" in out
    assert cli(*base, "--format", "json", "-o", tmp_path / "b.json").exit_code == 0
    rows = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["rows"]
    assert len(rows) == n_cells and rows[0]["rank_overall"] == 1
    assert cli(*base, "--format", "tsv", "-o", tmp_path / "b.tsv").exit_code == 0
    import pandas as pd

    tsv = pd.read_csv(tmp_path / "b.tsv", sep="\t")
    assert tsv["raw"].tolist() == [r["raw"] for r in rows]  # full precision, same rows
    assert cli(*base, "--format", "html", "-o", tmp_path / "b.html").exit_code == 0
    page = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert '<table class="sortable">' in page and page.count("<tr>") == n_cells + 1


@pytest.mark.parametrize("args, message", [
    (["--format", "html"], "give -o PAGE.html"),
    (["--method", "anchored"], "anchored calibration needs human scores"),
    (["--model", "missing.json"], "no such calibrator file"),
    # a misspelt column is not "one system per group"
    (["--system", "sys"], "no column 'sys' (the system column, given as --system)"),
    (["--metric", "chrF2"], "--metric chrF2: unknown metric"),  # a typo is not "the mean of the column"
])
def test_leaderboard_user_errors(files, cli, args, message):
    rc, _, err = cli("leaderboard", files / "eval.tsv", "--score", "metric", "--by", "tgt_lang", *args)
    assert rc == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_output_is_never_the_input(files, cli):
    target = files / "eval.tsv"
    before = target.read_bytes()
    for cmd in (["report", str(target), "--score", "metric", "-o", str(target)],
                ["leaderboard", str(target), "--score", "metric", "-o", str(target)]):
        rc, _, err = cli(*cmd)
        assert rc == 2 and "is an input" in err
    assert target.read_bytes() == before


def test_demo_prints_the_verdict_and_the_top_of_the_leaderboard(tmp_path, cli):
    rc, out, err = cli("demo", "--out", tmp_path / "demo")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Key result: against the simulation's known true quality, raw metric scores order 0.556")
    assert "0.873" in lines[0] or "0.873" in out.split("verdict")[0]
    assert "verdict: recommended calibration:" in out and "top 10 of 48" in out
    page = (tmp_path / "demo" / "report.html").read_text(encoding="utf-8")
    first = page[page.index('<section id="summary">'):]
    assert first.index("Key result") < first.index("Why:")  # the report leads with the demo's key result
    assert "seed" not in page.lower()
    # the command it names for the recommended calibration runs as printed (one line, the path quoted)
    import shlex

    command = next(line for line in lines if "ranked with the recommended calibration: " in line)
    words = shlex.split(command.split("calibration: ", 1)[1])
    assert words[0] == "xleval" and "--method" in words
    rc, ranked, err = cli(*words[1:], "--n-resamples", "50")
    assert rc == 0, err
    assert "leaderboard: metric by tgt_lang" in ranked and "human scale" in ranked


def test_two_runs_write_the_same_bytes(files, tmp_path, cli):
    for fmt in ("html", "json"):
        outs = [tmp_path / f"{i}.{fmt}" for i in range(2)]
        for out in outs:
            assert cli("report", files / "eval.tsv", "--score", "metric", "--human", "human",
                       "--n-resamples", "100", "--format", fmt, "-o", out).exit_code == 0
        assert outs[0].read_bytes() == outs[1].read_bytes()
