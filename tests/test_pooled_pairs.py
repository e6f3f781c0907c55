"""A group that holds the rows of several language pairs. WMT25 by tgt_lang: de-DE holds cs-de and en-de (two test
sets from sources in two languages), and 8 of its 40 systems translated only one of them, so their de-DE scores rest
on another test set than the others'. The leaderboard, the report and fairness ranked and compared these groups
without a word; the report was refused ("both hold segment 'MUL0088#1' ... in tgt_lang 'de-DE'", from the judges'
agreement it adds of itself) and meta told the user to "average or drop the repeats"."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from conftest import run_cli
from xleval.calibration import plan_labels
from xleval.decision import Procedure, compare_calibrations, diagnose, fit_calibration
from xleval.leaderboard import leaderboard
from xleval.report import analyze_mt, build_mt_report
from xleval.stats import Resampling
from xleval.table import pooled_pairs_note

FEW = Resampling(n_resamples=50, random_state=0)


def _table() -> pd.DataFrame:
    """cs-de and en-de (segments 1-20 in each, the same ids), en-ja; systems A, B in every pair, C in en-de only."""
    rng = np.random.default_rng(0)
    rows = []
    for lp, systems in (("cs-de", "AB"), ("en-de", "ABC"), ("en-ja", "ABC")):
        for system in systems:
            for seg in range(1, 21):
                rows.append({"lp": lp, "system": system, "seg_id": seg, "doc_id": f"d{seg // 5}",
                             "score": 50 + 5 * "ABC".index(system) + rng.normal(scale=5)})
    return pd.DataFrame(rows)


WANT = ("1 tgt_lang group(s) hold the rows of several language pairs, whose test sets differ: de (cs-de, en-de); each "
        "such group's level mixes them, and 1 system(s) have the rows of only some of their group's pairs (de: 1): "
        "they are scored on another test set than the others of their group; by='lp' keeps the pairs apart")


def test_the_note_names_the_groups_their_pairs_and_the_systems_on_another_test_set():
    frame = _table().assign(tgt_lang=lambda f: f["lp"].str[3:])
    assert pooled_pairs_note(frame, ["tgt_lang"], "system") == WANT
    assert pooled_pairs_note(frame, ["tgt_lang"]) == WANT.split(", and 1 system")[0] + "; by='lp' keeps the pairs apart"
    assert pooled_pairs_note(frame, ["lp"], "system") is None  # the pairs themselves
    assert pooled_pairs_note(frame.drop(columns="lp"), ["tgt_lang"], "system") is None  # no pair to tell
    both = frame[frame["system"] != "C"]  # every system in both pairs: the level still mixes two test sets
    assert pooled_pairs_note(both, ["tgt_lang"], "system").endswith("each such group's level mixes them; by='lp' "
                                                                      "keeps the pairs apart")
    # the pair from src_lang and tgt_lang where the table has no lp column
    split = frame.assign(src_lang=frame["lp"].str[:2]).drop(columns="lp")
    assert pooled_pairs_note(split, ["tgt_lang"], "system") == WANT
    # a group of many pairs names six of them (WMT25 by src_lang: en holds 28)
    many = pd.DataFrame({"lp": [f"en-x{i:02d}" for i in range(9)], "src_lang": "en", "system": "A", "score": 1.0})
    assert pooled_pairs_note(many, ["src_lang"]).startswith(
        "1 src_lang group(s) hold the rows of several language pairs, whose test sets differ: en (en-x00, en-x01, "
        "en-x02, en-x03, en-x04, en-x05 and 3 more); each")


def test_the_leaderboard_the_report_and_the_diagnosis_say_it():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(_table(), "score", "tgt_lang", method="lgn", resampling=FEW)
        apart = leaderboard(_table(), "score", "lp", method="lgn", resampling=FEW)
        analysis = analyze_mt(_table(), "score", by="tgt_lang", method="lgn", resampling=FEW)
        diagnosis = diagnose(_table(), "score", "tgt_lang", procedure=Procedure(n_resamples=50))
        by_pair = diagnose(_table(), "score", "lp", procedure=Procedure(n_resamples=50))
    assert WANT in board.notes
    assert not [n for n in apart.notes if "several language pairs" in n]
    assert f"PooledPairsWarning: {WANT}" in analysis.warnings
    assert diagnosis.notes == (WANT,) and by_pair.notes == ()
    # in the report, its own warning with what to do (it was merged into the rows-left-out warning's "data quality")
    (alert,) = [a for a in build_mt_report(analysis).sections[2].alerts if "several language pairs" in a.message]
    assert (alert.check, alert.message) == ("groups of several language pairs", WANT)
    assert alert.action.startswith("Rank the systems within each language pair (by='lp')")


def test_calibration_says_it_where_one_offset_or_one_z_score_covers_two_test_sets(tmp_path):
    # calibrate fit --by tgt_lang on WMT25 fitted one de-DE offset (anchored) or one de-DE z-score (LGN) over cs-de
    # and en-de without a word, and calibrate plan planned one de-DE level for both
    frame = _table().assign(tgt_lang=lambda f: f["lp"].str[3:])
    frame["human"] = np.where(frame["seg_id"] % 2 == 0, frame["score"] * 0.8 + 10, np.nan)
    for method in ("lgn", "anchored"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = fit_calibration(frame, method, score="score", by="tgt_lang",
                                     human=None if method == "lgn" else "human", human_scale="da")
            apart = fit_calibration(frame, method, score="score", by="lp", human=None if method == "lgn" else "human",
                                    human_scale="da")
        assert WANT in fitted.notes, method
        assert not [n for n in apart.notes if "several language pairs" in n], method
        assert [w.category.__name__ for w in caught if str(w.message) == WANT] == ["PooledPairsWarning"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = plan_labels(frame, "tgt_lang", 120, score="score", human="human", human_scale="da")
        plan_apart = plan_labels(frame, "lp", 120, score="score", human="human", human_scale="da")
    assert WANT in plan.notes
    assert not [n for n in plan_apart.notes if "several language pairs" in n]
    # the leaderboard says it once, as it says it for raw scores, not again as the calibration's warning
    for method in ("lgn", "anchored"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            board = leaderboard(frame, "score", "tgt_lang", method=method, human="human", human_scale="da",
                                resampling=FEW)
        assert [n for n in board.notes if "several language pairs" in n] == [WANT], method
    # on the command line, with the option that keeps the pairs apart
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    rc, out, err = run_cli("calibrate", "fit", path, "--score", "score", "--by", "tgt_lang", "--method", "lgn",
                           "-o", tmp_path / "m.json")
    assert rc == 0, err
    said = " ".join((out + err).split())
    assert "1 tgt_lang group(s) hold the rows of several language pairs" in said
    assert said.count("several language pairs") == 1
    assert "--by lp keeps the pairs apart" in said


def test_the_out_of_fold_comparison_says_it():
    # calibrate evaluate --by tgt_lang on WMT25 compared the methods over groups of two test sets without a word
    rng = np.random.default_rng(1)
    rows = [{"lp": lp, "system": s, "seg_id": seg, "score": 50 + 2 * "ABCDEF".index(s) + rng.normal(scale=5)}
            for lp, systems in (("cs-de", "ABCDE"), ("en-de", "ABCDEF"), ("en-ja", "ABCDEF"))
            for s in systems for seg in range(1, 21)]
    frame = pd.DataFrame(rows).assign(tgt_lang=lambda f: f["lp"].str[3:])
    frame["human"] = frame["score"] * 0.8 + rng.normal(scale=3, size=len(frame))
    fast = Procedure(n_folds=3, n_repeats=1, n_resamples=50, budgets=(10,), selections=("random",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pooled = compare_calibrations(frame, "score", "human", "tgt_lang", procedure=fast, human_scale="da")
        apart = compare_calibrations(frame, "score", "human", "lp", procedure=fast, human_scale="da")
    assert [n for n in pooled.notes if "several language pairs" in n] == [WANT]  # F translated en-de only
    assert not [n for n in apart.notes if "several language pairs" in n]
