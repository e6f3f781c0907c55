"""Bounded human scales (issue 34, item 10): when calibrated system scores or their intervals run past the
scale of the human labels (0-100 for raw DA and ESA, at most 0 for MQM) and no --human-range bounds them,
`leaderboard` and `report` say so, naming a cell and the flag; with the flag nothing is past and nothing is
said. The check is made against the board's own numbers."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.cli.calibrate_common import past_the_scale


def test_past_the_scale_by_hand():
    df = pd.DataFrame({"human": [10.0, 95.0, np.nan]})
    rows = [{"group": "g", "system": "A", "calibrated": 97.0, "calibrated_ci_low": 87.0, "calibrated_ci_high": 107.0},
            {"group": "g", "system": "B", "calibrated": 50.0, "calibrated_ci_low": 40.0, "calibrated_ci_high": 60.0}]
    note = past_the_scale(rows, df, "human", None)
    assert note is not None and note.startswith("1 calibrated system score(s)")
    assert "A in g (calibrated 97.0, ci_low 87.0, ci_high 107.0)" in note and "--human-range 0,100" in note
    assert "past the human scale given, 0 to 100 (--human-range 0,100)" in past_the_scale(rows, df, "human", "0,100")
    assert past_the_scale(rows, df, "human", "0,120") is None
    assert past_the_scale(rows[1:], df, "human", None) is None
    mqm = pd.DataFrame({"human": [-5.0, 0.0, -1.0]})
    # MQM names no bound on its errors: the one offered is the largest error in the labels, a range that runs
    assert "--human-range -5,0" in past_the_scale([{**rows[1], "calibrated_ci_high": 0.5}], mqm, "human", None)
    assert past_the_scale(rows, pd.DataFrame({"human": [-1.0, 1.0]}), "human", None) is None  # z: no known scale


def test_a_named_scale_is_not_guessed_from_its_labels():
    """MQM error points (0 = perfect, WMT's files: 0-25) lie in 0-100 as raw DA does: with the scale named, the note
    says MQM's bound (0, the best there is), not raw DA's 0-100 and its --human-range 0,100; a named scale without
    known bounds (Likert, HTER) gets no guessed range at all."""
    points = pd.DataFrame({"human": [0.0, 0.0, 5.0, 25.0]})
    rows = [{"group": "en-de", "system": "A", "calibrated": 0.4, "calibrated_ci_low": -0.8, "calibrated_ci_high": 1.6},
            {"group": "en-de", "system": "B", "calibrated": 2.0, "calibrated_ci_low": 0.5, "calibrated_ci_high": 3.5}]
    assert "0 to 100 (raw DA, ESA)" in past_the_scale(rows, points, "human", None)  # unnamed: the labels' guess
    past_top = [{**rows[0], "calibrated_ci_high": 101.0}]
    note = past_the_scale(rows, points, "human", None, scale_name="mqm")
    assert "0 to 100" not in note and "--human-range 0,100" not in note
    assert "1 calibrated system score(s)" in note and "at least 0 (MQM error points)" in note
    assert "A in en-de" in note and "--human-range 0,25" in note  # the largest error in the labels
    assert past_the_scale(past_top, points, "human", None, scale_name="MQM (weighted; raters all)") is not None
    assert "0 to 100" not in past_the_scale(past_top, points, "human", None, scale_name="mqm")
    for name in ("likert", "hter", "z"):
        assert past_the_scale(past_top, points, "human", None, scale_name=name) is None
    # `raw` names no bounds (one scale for every group): the labels' guess stands, as with no name
    assert "0 to 100 (raw DA, ESA)" in past_the_scale(past_top, points, "human", None, scale_name="raw")
    negated = pd.DataFrame({"human": [-5.0, 0.0, -1.0]})
    assert "at most 0 (MQM)" in past_the_scale([{**rows[1], "calibrated_ci_high": 0.5}], negated, "human", None,
                                               scale_name="mqm")


@pytest.fixture(scope="module")
def near_the_top(tmp_path_factory):
    import test_readme

    folder = tmp_path_factory.mktemp("scale")
    test_readme._user_files(folder)
    rc, _, err = run_cli("score", folder / "outputs.tsv", "-m", "chrf", "-o", folder / "scored.parquet")
    assert rc == 0, err
    df = pd.read_parquet(folder / "scored.parquet")
    df.loc[np.random.default_rng(0).random(len(df)) > 0.1, "human"] = np.nan  # about 4 labels per system
    df["human"] = (df["human"] + 12).clip(0, 100)  # the best systems judged near the top of 0-100
    df.to_parquet(folder / "near_top.parquet")
    return folder


def test_leaderboard_says_when_values_run_past_the_scale(near_the_top):
    path = near_the_top / "near_top.parquet"
    rc, out, err = run_cli("leaderboard", path, "--score", "chrf", "--human", "human", "--method", "anchored",
                           "--format", "json")
    assert rc == 0, err
    board = json.loads(out)
    rows = pd.DataFrame(board["rows"])
    past = rows[["calibrated", "calibrated_ci_low", "calibrated_ci_high"]].gt(100).any(axis=1) | \
        rows[["calibrated", "calibrated_ci_low", "calibrated_ci_high"]].lt(0).any(axis=1)
    assert past.any()  # the case of issue 34: a CI reaching past 100
    notes = [n for n in board["notes"] if "run past the human labels' scale" in n]
    assert len(notes) == 1 and notes[0].startswith(f"{int(past.sum())} calibrated system score(s)")
    rc, out, err = run_cli("leaderboard", path, "--score", "chrf", "--human", "human", "--method", "anchored",
                           "--format", "json", "--human-range", "0,100")
    assert rc == 0, err
    bounded = json.loads(out)
    values = pd.DataFrame(bounded["rows"])[["calibrated", "calibrated_ci_low", "calibrated_ci_high"]]
    assert values["calibrated"].between(0, 100).all()  # the range bounds the calibrated means
    # their intervals are not bounded by it (the board's own numbers): said, never shown silently
    outside = int((values.gt(100) | values.lt(0)).any(axis=1).sum())
    said = [n for n in bounded["notes"] if "run past the human scale given" in n]
    assert len(said) == (outside > 0) and (not said or said[0].startswith(f"{outside} calibrated"))


def test_report_warns_too(near_the_top):
    rc, _, err = run_cli("report", near_the_top / "near_top.parquet", "--score", "chrf", "--human", "human",
                         "--method", "anchored", "-o", near_the_top / "r.json", "--format", "json",
                         "--n-resamples", "200")
    assert rc == 0, err
    text = (near_the_top / "r.json").read_text()
    assert "run past the human labels' scale" in text and "--human-range 0,100" in text


def test_a_named_scale_bounds_the_calibrated_means_without_a_flag(near_the_top):
    """--human-scale esa (0-100 by its name) bounds the calibrated means as --human-range 0,100 does, and says so;
    the same table without the name is said to run past the scale, with the command line that bounds it."""
    path = near_the_top / "near_top.parquet"
    base = ("leaderboard", path, "--score", "chrf", "--human", "human", "--method", "anchored", "--format", "json")
    rc, out, err = run_cli(*base, "--human-scale", "esa")
    assert rc == 0, err
    named = json.loads(out)
    rc, out, err = run_cli(*base, "--human-range", "0,100")
    assert rc == 0, err
    flagged = json.loads(out)
    assert [r["calibrated"] for r in named["rows"]] == [r["calibrated"] for r in flagged["rows"]]
    assert pd.DataFrame(named["rows"])["calibrated"].between(0, 100).all()
    said = [n for n in named["notes"] if n.startswith("calibrated system scores are kept inside 0 to 100")]
    assert len(said) == 1 and "--human-scale esa" in said[0]
    # an interval still past 100 is said against the named scale, not against a flag never given
    assert not any("--human-range 0,100)" in n for n in named["notes"])
    rc, out, err = run_cli(*base)
    assert rc == 0, err
    (past,) = [n for n in json.loads(out)["notes"] if "run past the human labels' scale" in n]
    assert past.endswith(f"give --human-range 0,100 to keep calibrated scores inside it: xleval leaderboard {path} "
                         "--score chrf --human human --method anchored --human-range 0,100")


def test_the_scale_column_that_ingest_writes_names_the_bounds_too(near_the_top, tmp_path):
    df = pd.read_parquet(near_the_top / "near_top.parquet")
    df["human_scale"] = "ESA 0-100 (raters all)"
    df.to_parquet(tmp_path / "esa.parquet")
    rc, _, err = run_cli("report", tmp_path / "esa.parquet", "--score", "chrf", "--human", "human", "--method",
                         "anchored", "-o", tmp_path / "r.json", "--format", "json", "--n-resamples", "100")
    assert rc == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert all(0 <= r["calibrated"] <= 100 for r in report["leaderboard"])
    text = json.dumps(report)
    assert "kept inside 0 to 100, the range of the human scale (the human_scale column: ESA 0-100" in text


def test_scales_without_known_bounds_are_not_bounded():
    from xleval.calibration._scales import scale_bounds

    assert scale_bounds("esa") == scale_bounds("da") == (0.0, 100.0) and scale_bounds("sqm") == (0.0, 6.0)
    assert scale_bounds("mqm") is None and scale_bounds("z") is None and scale_bounds(None) is None


def test_labels_outside_the_named_scale_are_said_not_bounded(near_the_top):
    """A scale named wrongly (SQM is 0-6; these labels are 0-100) bounds nothing and says why."""
    rc, out, err = run_cli("leaderboard", near_the_top / "near_top.parquet", "--score", "chrf", "--human", "human",
                           "--method", "anchored", "--format", "json", "--human-scale", "sqm")
    assert rc == 0, err
    board = json.loads(out)
    (said,) = [n for n in board["notes"] if "the range of the human scale (--human-scale sqm" in n]
    assert "lie outside 0 to 6" in said and "not bounded by it" in said
    assert max(r["calibrated"] for r in board["rows"]) > 6


def test_named_mqm_is_bounded_below_by_0_and_the_advice_keeps_the_name(near_the_top):
    """The same systems judged in MQM error points (0-25, lower is better, the best near 0): with --human-scale mqm
    the intervals reaching below 0 are said against MQM's bound, not raw DA's 0-100, and the command line that
    bounds them keeps --human-scale (it sets MQM's direction)."""
    df = pd.read_parquet(near_the_top / "near_top.parquet")
    df["mqm"] = (100 - df["human"]) / 4
    path = near_the_top / "mqm.parquet"
    df.drop(columns="human").to_parquet(path)
    rc, out, err = run_cli("leaderboard", path, "--score", "chrf", "--human", "mqm", "--human-scale", "mqm",
                           "--method", "anchored", "--format", "json")
    assert rc == 0, err
    board = json.loads(out)
    low = pd.DataFrame(board["rows"])[["calibrated", "calibrated_ci_low"]].lt(0).any(axis=1)
    assert low.any()
    notes = [n for n in board["notes"] if "run past" in n]
    assert len(notes) == 1 and notes[0].startswith(f"{int(low.sum())} calibrated system score(s)"), notes
    assert "at least 0 (MQM error points)" in notes[0] and "0 to 100" not in notes[0]
    top = int(np.ceil(df["mqm"].max()))  # a whole number at or above every label
    assert f"--human-scale mqm --human-range 0,{top}" in notes[0]
    command = notes[0].split(": xleval ", 1)[1].split()  # the command the note names runs as written
    assert command[0] == "leaderboard" and command[-2:] == ["--human-range", f"0,{top}"]
    rc, _, err = run_cli(*command)
    assert rc == 0, err


def test_calibrate_fit_takes_the_named_scales_bounds_as_the_leaderboard_does(near_the_top, tmp_path):
    """`calibrate fit --human-scale esa` wrote a calibrator without bounds, so `calibrate apply` (and a leaderboard
    given the model) put systems above ESA's 100 where `leaderboard --human-scale esa` kept them inside: the fit now
    takes the named scale's range, says so, and gives what `--human-range 0,100` gives; a wrong name bounds nothing."""
    path = near_the_top / "near_top.parquet"
    base = ("calibrate", "fit", path, "--score", "chrf", "--human", "human", "--method", "anchored",
            "--format", "json")
    fits = {}
    for name, extra in (("named", ("--human-scale", "esa")), ("flag", ("--human-range", "0,100")),
                        ("none", ()), ("wrong", ("--human-scale", "sqm"))):
        out_path = tmp_path / f"{name}.json"
        rc, out, err = run_cli(*base, *extra, "-o", out_path)
        assert rc == 0, err
        fits[name] = (json.loads(out_path.read_text())["params"], out + err)
        said = json.loads(out)
        # what the command did is a note; labels outside the named scale, a warning
        assert not any("kept inside" in w for w in said["warnings"])
        assert any("kept inside" in n for n in said["notes"]) == (name == "named")
        assert any("lie outside" in w for w in said["warnings"]) == (name == "wrong")
    assert fits["named"][0]["human_range"] == fits["flag"][0]["human_range"] == [0.0, 100.0]
    assert fits["named"][0]["human_range"] != fits["none"][0]["human_range"]
    assert "kept inside 0 to 100, the range of the human scale (--human-scale esa)" in fits["named"][1]
    assert fits["wrong"][0]["human_range"] is None and "lie outside 0 to 6" in fits["wrong"][1]
    applied = {}
    for name in ("named", "none"):
        rc, _, err = run_cli("calibrate", "apply", tmp_path / f"{name}.json", path, "-o", tmp_path / f"{name}.parquet")
        assert rc == 0, err
        applied[name] = pd.read_parquet(tmp_path / f"{name}.parquet")
    column = next(c for c in applied["named"].columns if c not in pd.read_parquet(path).columns)
    assert applied["none"][column].max() > 100 >= applied["named"][column].max()  # the case the bounds are for


def test_the_library_takes_a_named_scales_bounds_as_the_command_line_does(near_the_top):
    """In Python, leaderboard(human_scale='esa'), analyze_mt and fit_calibration ignored ESA's 0-100 that the command
    line applies: the same table ranked above 100 in Python and not on the command line. Now each equals the call
    given human_range=(0, 100), with a note in the library's words; labels outside a named scale bound nothing."""
    from xleval.calibration import HumanScale
    from xleval.decision import fit_calibration
    from xleval.leaderboard import leaderboard
    from xleval.report import analyze_mt
    from xleval.stats import Resampling

    df = pd.read_parquet(near_the_top / "near_top.parquet")
    few = Resampling(n_resamples=100, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boards = {name: leaderboard(df, "chrf", human="human", method="anchored", resampling=few, human_scale=scale)
                  for name, scale in (("named", "esa"), ("flag", HumanScale(range=(0, 100))), ("none", None),
                                      ("wrong", "sqm"))}
        fits = {name: fit_calibration(df, "anchored", score="chrf", human="human", **kw)
                for name, kw in (("named", {"human_scale": "esa"}), ("flag", {"human_range": (0, 100)}))}
        named_report = analyze_mt(df, "chrf", method="anchored", human="human", resampling=few, human_scale="esa")
        flag_report = analyze_mt(df, "chrf", method="anchored", human="human", resampling=few,
                                 human_scale=HumanScale(range=(0, 100)))
    cols = ["calibrated", "calibrated_ci_low", "calibrated_ci_high"]
    calibrated = {name: b.rows[cols].to_numpy() for name, b in boards.items()}
    assert calibrated["none"].max() > 100  # the case: an interval above ESA's top (the means are bounded, not it)
    np.testing.assert_array_equal(calibrated["named"], calibrated["flag"])
    np.testing.assert_array_equal(calibrated["wrong"], calibrated["none"])  # 0-6 contradicted by the labels
    said = "kept inside 0 to 100, the range of the human scale (human_scale='esa'); give human_range="
    assert any(said in n for n in boards["named"].notes) and not any(said in n for n in boards["flag"].notes)
    assert fits["named"].model.get_params()["human_range"] == (0.0, 100.0)
    assert any(said in n for n in fits["named"].notes)
    np.testing.assert_array_equal(named_report.board.rows[cols], flag_report.board.rows[cols])
    assert any(said in m for m in named_report.warnings)


def test_the_library_says_when_labels_lie_outside_the_named_scale(near_the_top):
    """A Python call naming a scale the labels contradict (SQM is 0-6; these labels are 0-100) bounded nothing and
    said nothing, where the command line said why: now the leaderboard, analyze_mt and fit_calibration say it in
    the library's words, with the count of labels outside and one of them."""
    from xleval.decision import fit_calibration
    from xleval.leaderboard import leaderboard
    from xleval.report import analyze_mt
    from xleval.stats import Resampling

    df = pd.read_parquet(near_the_top / "near_top.parquet")
    labels = pd.to_numeric(df["human"], errors="coerce")
    outside = int((labels > 6).sum())
    assert outside > 0
    few = Resampling(n_resamples=100, random_state=0)
    said = f"{outside} human label(s) lie outside 0 to 6, the range of the human scale (human_scale='sqm'; e.g. "
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(df, "chrf", human="human", method="anchored", resampling=few, human_scale="sqm")
        fit = fit_calibration(df, "anchored", score="chrf", human="human", human_scale="sqm")
        report = analyze_mt(df, "chrf", method="anchored", human="human", resampling=few, human_scale="sqm")
    for notes in (board.notes, fit.notes, report.warnings):
        (note,) = [n for n in notes if said in n]
        assert "not bounded by it" in note and note.endswith("give the labels' range as human_range=")
    assert fit.model.get_params()["human_range"] is None


def test_the_report_says_the_librarys_notes_in_command_line_words(near_the_top, tmp_path):
    """`xleval report` wrote the library's warnings into the page and onto stderr as Python spells them
    (human_scale='sqm', human_range=): they now name the command's flags, once each."""
    out = tmp_path / "report.json"
    rc, _, err = run_cli("report", near_the_top / "near_top.parquet", "--score", "chrf", "--human", "human",
                         "--method", "anchored", "--human-scale", "sqm", "-o", out, "--n-resamples", "100")
    assert rc == 0, err
    text = out.read_text()
    page = json.loads(text)  # -o report.json writes JSON
    assert "human_scale=" not in text and "human_range=" not in text
    messages = [a["message"] for s in page["sections"] for a in s.get("alerts", [])] + \
        [w for s in page["sections"] for w in s["warnings"]]
    said = [m for m in messages if "lie outside 0 to 6" in m]
    assert len(said) == 1 and "(--human-scale sqm; e.g." in said[0] and said[0].endswith("as --human-range"), said
    assert err.count("lie outside 0 to 6") == 1 and "warning: " in err and "human_scale=" not in err


def test_the_library_says_when_values_run_past_the_scale(near_the_top):
    """Only the command line checked calibrated values against the human scale: a Python leaderboard or report
    showed intervals above raw DA's 100 without a word. The library now says it in its words (the command line
    keeps its note, which names the command that reruns it bounded: one note there, not two)."""
    from xleval.calibration import HumanScale
    from xleval.leaderboard import leaderboard
    from xleval.report import analyze_mt
    from xleval.stats import Resampling

    df = pd.read_parquet(near_the_top / "near_top.parquet")
    few = Resampling(n_resamples=100, random_state=0)
    cols = ["calibrated", "calibrated_ci_low", "calibrated_ci_high"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = leaderboard(df, "chrf", human="human", method="anchored", resampling=few)
        given = leaderboard(df, "chrf", human="human", method="anchored", resampling=few,
                            human_scale=HumanScale(range=(0, 100)))
        named = leaderboard(df, "chrf", human="human", method="anchored", resampling=few, human_scale="esa")
        report = analyze_mt(df, "chrf", method="anchored", human="human", resampling=few)
    past = int((plain.rows[cols].gt(100) | plain.rows[cols].lt(0)).any(axis=1).sum())
    assert past > 0
    (note,) = [n for n in plain.notes if "run past" in n]
    assert note.startswith(f"{past} calibrated system score(s) or their intervals run past the human labels' "
                           "scale, 0 to 100 (raw DA, ESA): e.g. ")
    assert note.endswith("; give human_range=(0, 100) to keep calibrated scores inside it")
    assert any(n == note for n in report.warnings)  # the report's board is the leaderboard's
    for board, source in ((given, "(human_range=(0, 100))"),
                          (named, "(the range of the human scale (human_scale='esa'))")):
        outside = int((board.rows[cols].gt(100) | board.rows[cols].lt(0)).any(axis=1).sum())
        said = [n for n in board.notes if "run past" in n]
        assert len(said) == (outside > 0)
        if said:
            assert f"run past the human scale given, 0 to 100 {source}: e.g." in said[0], said


def test_lgn_scores_are_not_checked_against_the_human_scale(near_the_top):
    """LGN's calibrated scores are z-scores and raw scores the metric's own: the command line said an LGN board
    'ran past the human labels' scale, 0 to 100' and advised --human-range 0,100, which LGN does not use."""
    path = near_the_top / "near_top.parquet"
    for method in ("lgn", "none"):
        rc, out, err = run_cli("leaderboard", path, "--score", "chrf", "--human", "human", "--method", method,
                               "--format", "json", "--n-resamples", "100")
        assert rc == 0, err
        board = json.loads(out)
        assert board["calibration"]["method"] == method
        if method == "lgn":
            assert pd.DataFrame(board["rows"])["calibrated"].lt(0).any()  # below 0: what was said to run past
        assert not any("run past" in n or "--human-range" in n for n in board["notes"]), board["notes"]


def _past_the_top(seed: int = 0) -> pd.DataFrame:
    """Two pairs of six systems on raw DA 0-100, labels on every segment; the best system of each pair is so far
    ahead on the metric that the line through the others puts its calibrated mean above 100."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, shift in (("en-de", 0.0), ("en-ja", 10.0)):
        for s, quality in enumerate((40.0, 50.0, 60.0, 70.0, 80.0, 99.0)):
            metric = quality / 2 + shift + (30.0 if quality == 99.0 else 0.0)
            for i in range(20):
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": i, "doc_id": f"d{i // 5}",
                             "chrf": metric + rng.normal(0, 2),
                             "human": float(np.clip(quality + rng.normal(0, 3), 0, 100))})
    return pd.DataFrame(rows)


def test_means_past_the_labels_range_are_warned_by_the_fit_not_by_the_evaluation():
    """An anchored fit whose calibrated system means leave the 0-100 the labels lie in warns (ScaleRangeWarning, a
    DataQualityWarning) and names human_range=(0, 100); the out-of-fold comparison's fold fits raised the same
    warning, and `calibrate evaluate` printed that advice though it has no --human-range to take it."""
    from xleval.calibration import AnchoredCalibrator
    from xleval.decision import evaluate_calibration
    from xleval.exceptions import DataQualityWarning, ScaleRangeWarning

    df = _past_the_top()
    with pytest.warns(ScaleRangeWarning, match=r"lie outside \[0, 100\].*human_range=\(0, 100\)") as said:
        AnchoredCalibrator(score="chrf", by="lp", human="human", system="system").fit(df)
    assert all(issubclass(w.category, DataQualityWarning) for w in said if w.category is ScaleRangeWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation = evaluate_calibration(df, "chrf", "human", "lp", system="system")
    assert not any("human_range=" in n or "ScaleRangeWarning" in n for n in evaluation.notes), evaluation.notes
