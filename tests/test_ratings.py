"""Human ratings as the data comes: MQM spans -> scores (Freitag et al. 2021 weights, most specific key
wins), several raters (mean, per-rater z), ESA 0-100 with spans, and mixed gold with its scale per group.

Oracles: the weights of the paper (Major 5, Minor 1, Neutral 0, major Non-translation 25, minor
Fluency/Punctuation 0.1) applied by hand to small tables, and per-rater z-scores computed with numpy in
the test; the mt-metrics-eval convention that a segment's score is minus the mean over raters of their
summed weights (its converters/score_mqm.py)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import DataQualityWarning, InputError
from xleval.ratings import attach_gold, combine_gold, gold_scales, mqm_weights, score_esa, score_mqm

# --- weights ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("severity", "category", "weight"), [
    ("Major", "Accuracy/Mistranslation", 5.0),
    ("Minor", "Accuracy/Mistranslation", 1.0),
    ("Major", "Non-translation!", 25.0),
    ("Minor", "Fluency/Punctuation", 0.1),
    ("Major", "Fluency/Punctuation", 5.0),   # the 0.1 key is minor/...: a major punctuation error is major
    ("minor", "fluency/punctuation", 0.1),   # case does not matter
    ("Neutral", "Style/Awkward", 0.0),
    ("No-error", "No-error", 0.0),            # no key matches: 0 (a segment seen and found clean)
    ("Critical", "Accuracy", 0.0),            # unknown severity: no key, 0 (as mt-metrics-eval)
    ("Minor", "", 1.0),
])
def test_wmt_weights_follow_the_paper_and_the_most_specific_key(severity, category, weight):
    assert mqm_weights("wmt").weight(severity, category) == pytest.approx(weight)


def test_custom_weights_parse_and_round_trip():
    w = mqm_weights("Major:10, Minor:2 Major/Accuracy/Omission:7")
    assert w.weight("Major", "Accuracy/Omission") == 7
    assert w.weight("Major", "Accuracy/Addition") == 10
    assert mqm_weights(w.spec()).weights == w.weights
    assert mqm_weights({"Major": 3}).weight("major", "x") == 3


@pytest.mark.parametrize(("spec", "fragment"), [
    ("", "empty"),
    ("Major=5", "'Major=5' is not 'severity"),
    ("Major:five", "not a finite number"),
    ("Major:inf", "not a finite number"),
    ("Major:5 major:3", "given twice"),
])
def test_bad_weight_specs_are_one_line(spec, fragment):
    with pytest.raises(InputError, match=fragment):
        mqm_weights(spec)


# --- MQM scores --------------------------------------------------------------------------------------------

def _spans() -> pd.DataFrame:
    rows = [  # system, seg_id, rater, severity, category
        ("A", 1, "r1", "Major", "Accuracy/Mistranslation"),
        ("A", 1, "r1", "Minor", "Fluency/Punctuation"),
        ("A", 1, "r2", "Minor", "Fluency/Grammar"),
        ("A", 2, "r1", "No-error", "No-error"),
        ("A", 2, "r2", "Major", "Non-translation!"),
        ("B", 1, "r1", "No-error", "No-error"),
        ("B", 2, "r2", "Minor", "Style/Awkward"),
        ("B", 2, "r2", "Minor", "Fluency/Spelling"),
    ]
    df = pd.DataFrame(rows, columns=["system", "seg_id", "rater", "severity", "category"])
    df.insert(0, "lp", "en-de")
    return df


def test_mqm_scores_are_minus_the_mean_over_raters_of_summed_weights():
    out = score_mqm(_spans()).set_index(["system", "seg_id"])
    # A/1: r1 = 5 + 0.1, r2 = 1 -> -(5.1 + 1) / 2; A/2: r1 = 0, r2 = 25 -> -12.5
    assert out.loc[("A", 1), "mqm"] == pytest.approx(-3.05)
    assert out.loc[("A", 2), "mqm"] == pytest.approx(-12.5)
    assert out.loc[("B", 1), "mqm"] == 0.0
    assert out.loc[("B", 2), "mqm"] == pytest.approx(-2.0)
    assert out["mqm_raters"].tolist() == [2, 2, 1, 1]
    assert out.loc[("A", 1), "mqm_errors"] == pytest.approx(1.5)  # r1 two errors, r2 one
    assert out.loc[("B", 1), "mqm_errors"] == 0.0
    assert set(out["mqm_scale"]) == {"MQM (wmt weights; raters mean)"}


def test_rater_z_standardises_each_rater_over_its_segments():
    spans = _spans()
    out = score_mqm(spans, raters="z").set_index(["system", "seg_id"])
    # by hand: r1 rated A/1 (-5.1), A/2 (0), B/1 (0); r2 rated A/1 (-1), A/2 (-25), B/2 (-2)
    r1 = np.array([-5.1, 0.0, 0.0])
    r2 = np.array([-1.0, -25.0, -2.0])
    z1 = (r1 - r1.mean()) / r1.std(ddof=1)
    z2 = (r2 - r2.mean()) / r2.std(ddof=1)
    assert out.loc[("A", 1), "mqm"] == pytest.approx((z1[0] + z2[0]) / 2)
    assert out.loc[("A", 2), "mqm"] == pytest.approx((z1[1] + z2[1]) / 2)
    assert out.loc[("B", 1), "mqm"] == pytest.approx(z1[2])
    assert out.loc[("B", 2), "mqm"] == pytest.approx(z2[2])
    assert out["mqm_scale"].iloc[0].startswith("MQM rater-z")


def test_rater_z_is_within_each_language_pair():
    a = _spans()
    b = _spans().assign(lp="en-ja")
    b.loc[b["severity"] == "Minor", "severity"] = "Major"  # a harsher pair: raw scores differ, z does not
    both = score_mqm(pd.concat([a, b]), raters="z")
    per_lp = both.pivot_table(index=["system", "seg_id"], columns="lp", values="mqm")
    single = score_mqm(a, raters="z").set_index(["system", "seg_id"])["mqm"]
    np.testing.assert_allclose(per_lp["en-de"].loc[single.index], single)
    assert not np.allclose(per_lp["en-ja"], per_lp["en-de"])


def test_rater_z_refuses_a_rater_with_one_segment():
    spans = _spans()
    spans.loc[len(spans)] = ["en-de", "C", 1, "r3", "Minor", "Fluency"]
    with pytest.raises(InputError, match=r"rater 'r3' in 'en-de' rated only one segment.*raters='mean'"):
        score_mqm(spans, raters="z")


def test_a_span_without_severity_is_refused_with_its_row():
    spans = _spans()
    spans.loc[3, "severity"] = " "
    with pytest.raises(InputError, match=r"row 4 has no 'severity'.*No-error"):
        score_mqm(spans)


# --- ESA ---------------------------------------------------------------------------------------------------

def _esa() -> pd.DataFrame:
    return pd.DataFrame({
        "lp": "cs-uk", "system": ["A", "A", "A", "B"], "seg_id": [1, 1, 2, 1], "rater": ["x", "y", "x", "y"],
        "score": [80, 60, 95, 40],
        "spans": [json.dumps([{"severity": "minor", "start": 0, "end": 3}]),
                  json.dumps([{"severity": "major"}, {"severity": "minor"}]), "[]",
                  json.dumps([{"severity": "major"}, {"severity": "major"}])],
    })


def test_esa_scores_average_raters_and_count_spans():
    out = score_esa(_esa(), spans="spans").set_index(["system", "seg_id"])
    assert out.loc[("A", 1), "esa"] == 70.0
    assert out.loc[("A", 1), "esa_raters"] == 2
    assert out.loc[("A", 1), "esa_minor"] == 1.0   # (1 + 1) / 2
    assert out.loc[("A", 1), "esa_major"] == 0.5   # (0 + 1) / 2
    assert out.loc[("B", 1), "esa_major"] == 2.0
    assert out["esa_scale"].iloc[0] == "ESA 0-100 (raters mean)"


@pytest.mark.parametrize(("change", "fragment"), [
    ({"score": [80, 60, 101, 40]}, r"row 3: score = 101 is not a number from 0 to 100"),
    ({"score": [80, 60, "n/a", 40]}, r"row 3: score = 'n/a'"),
    ({"rater": ["x", "x", "x", "y"]}, "row 2 rates segment .* a second time by rater 'x'"),
    ({"spans": ["[]", "{not json", "[]", "[]"]}, "row 2: the error spans are not JSON"),
    ({"spans": ["[]", "[]", json.dumps([{"severity": "critical"}]), "[]"]}, "row 3: a span has severity 'critical'"),
])
def test_bad_esa_ratings_are_one_line(change, fragment):
    ratings = _esa().assign(**change)
    with pytest.raises(InputError, match=fragment):
        score_esa(ratings, spans="spans")


# --- gold onto the table, mixed gold -----------------------------------------------------------------------

def _table() -> pd.DataFrame:
    return pd.DataFrame({"lp": ["en-de"] * 4 + ["cs-uk"] * 3, "system": ["A", "A", "B", "B", "A", "A", "B"],
                         "seg_id": [1, 2, 1, 2, 1, 2, 1], "chrf": [50.0, 60, 40, 45, 30, 32, 35]})


def test_attach_gold_matches_keys_as_text_and_leaves_unrated_rows_nan():
    scores = score_mqm(_spans().assign(seg_id=lambda d: d["seg_id"].astype(str)))
    out = attach_gold(_table(), scores, ["mqm", "mqm_scale"], ["lp", "system", "seg_id"])
    assert out["mqm"].tolist()[:4] == pytest.approx([-3.05, -12.5, 0.0, -2.0])
    assert out["mqm"].iloc[4:].isna().all()
    assert out["chrf"].tolist() == _table()["chrf"].tolist()


def test_attach_gold_warns_on_ratings_that_match_no_row_and_refuses_a_clash():
    scores = score_mqm(_spans().assign(system=lambda d: d["system"].replace({"B": "Z"})))
    with pytest.warns(DataQualityWarning, match="2 of 4 rated segments match no row"):
        attach_gold(_table(), scores, ["mqm"], ["lp", "system", "seg_id"])
    with pytest.raises(InputError, match="already has a column 'chrf'"):
        attach_gold(_table(), scores.rename(columns={"mqm": "chrf"}), ["chrf"], ["lp", "system", "seg_id"])


def test_mixed_gold_takes_one_scale_per_group_and_says_which():
    table = attach_gold(_table(), score_mqm(_spans()), ["mqm", "mqm_scale"], ["lp", "system", "seg_id"])
    table = attach_gold(table, score_esa(_esa()), ["esa", "esa_scale"], ["lp", "system", "seg_id"])
    out = combine_gold(table, {"mqm": "mqm_scale", "esa": "esa_scale"})
    assert out["human"].tolist() == pytest.approx([-3.05, -12.5, 0.0, -2.0, 70.0, 95.0, 40.0])
    assert gold_scales(out, scale="human_scale") == {"cs-uk": "ESA 0-100 (raters mean)",
                                                    "en-de": "MQM (wmt weights; raters mean)"}
    both = table.assign(esa=table["esa"].fillna(50.0))
    with pytest.raises(InputError, match="lp 'en-de' has gold in both 'mqm' and 'esa'"):
        combine_gold(both, {"mqm": "mqm_scale", "esa": "esa_scale"})


def test_gold_scales_refuse_a_group_judged_on_two_scales():
    table = pd.DataFrame({"lp": ["a-b", "a-b"], "s": ["MQM", "ESA"]})
    with pytest.raises(InputError, match="lp 'a-b' has 2 scales"):
        gold_scales(table, scale="s")


# --- command line ------------------------------------------------------------------------------------------

def test_ingest_mqm_reads_a_wmt_span_file_with_quotes_as_text(tmp_path):
    spans = _spans().drop(columns="lp")
    spans["target"] = ['"Ja," sagte er.', "x", "y", "z", "w", "v", "u", "t"]  # WMT files keep quotes as text
    path = tmp_path / "mqm_newstest2021_ende.tsv"
    path.write_text(spans.to_csv(sep="\t", index=False, quoting=3, escapechar=None), encoding="utf-8")
    table = tmp_path / "outputs.tsv"
    _table().to_csv(table, sep="\t", index=False)
    rc, _, err = run_cli("ingest", "mqm", path, "--lp", "en-de", "--quoting", "none", "--into", table,
                           "-o", tmp_path / "with_mqm.tsv")
    assert rc == 0, err
    got = pd.read_csv(tmp_path / "with_mqm.tsv", sep="\t")
    assert got["mqm"].tolist()[:4] == pytest.approx([-3.05, -12.5, 0.0, -2.0])
    assert got["mqm"].iloc[4:].isna().all()
    assert "MQM scores added to" in err


def test_ingest_esa_then_gold_gives_one_human_column(tmp_path):
    esa = tmp_path / "esa.jsonl"
    _esa().to_json(esa, orient="records", lines=True)
    table = tmp_path / "t.parquet"
    attach_gold(_table(), score_mqm(_spans()), ["mqm", "mqm_scale"], ["lp", "system", "seg_id"]).to_parquet(table)
    rc, _, err = run_cli("ingest", "esa", esa, "--spans", "spans", "--into", table, "-o", tmp_path / "t2.parquet")
    assert rc == 0, err
    rc, _, err = run_cli("ingest", "gold", tmp_path / "t2.parquet", "--from", "mqm", "--from", "esa",
                         "-o", tmp_path / "t3.parquet")
    assert rc == 0, err
    out = pd.read_parquet(tmp_path / "t3.parquet")
    assert out["human"].tolist() == pytest.approx([-3.05, -12.5, 0.0, -2.0, 70.0, 95.0, 40.0])
    assert out["human_scale"].iloc[-1] == "ESA 0-100 (raters mean)"
    assert "2 scale(s) over 2 group(s)" in err


@pytest.mark.parametrize(("args", "fragment"), [
    (("--weights", "Major=5"), "is not 'severity[/category]:weight'"),
    ((), "has no lp column: give the language pair of its rows with --lp"),
])
def test_ingest_mqm_bad_input_is_one_line(tmp_path, args, fragment):
    path = tmp_path / "spans.tsv"
    _spans().drop(columns="lp").to_csv(path, sep="\t", index=False)
    rc, _, err = run_cli("ingest", "mqm", path, *args, "-o", tmp_path / "out.tsv")
    assert rc == 2
    assert fragment in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.tsv").exists()
