"""diagnose's WMT meta-evaluation options: the all-pairs accuracy averaged by group or by item
(WMT23's segment-level accuracy), the sidedness of the raw-vs-calibrated test, both named in the
text and the JSON; averaging with the cross-group comparison is refused."""
import json

import numpy as np
import pandas as pd
import pytest


def _segments(within=1.0, offsets=(0.0, 30.0, 60.0), n_sys=4, n_seg=6, seed=0):
    """Rows (lp, system, seg_id, m, human): the metric orders each segment's systems as the humans do
    (``within=1``) or the reverse (``-1``); group offsets go the other way for the metric, so pairs
    across groups are ordered wrongly."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, off in zip(("en-de", "en-fr", "en-zh"), offsets, strict=True):
        for seg in range(n_seg):
            quality = rng.permutation(n_sys).astype(float)
            for s in range(n_sys):
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": seg, "human": off + quality[s],
                             "m": -off + within * quality[s] + 0.01 * s})
    return pd.DataFrame(rows)


def _json(cli, path, *options):
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", "--n-resamples", "50",
                       "--format", "json", *options)
    assert rc == 0, err
    return json.loads(out)["agreement"]


def test_item_averaging_is_wmt23_segment_accuracy_within_each_group(cli, tmp_path):
    path = tmp_path / "t.tsv"
    _segments(within=1.0).to_csv(path, sep="\t", index=False)
    agreement = _json(cli, path, "--average-by", "item")
    acc = agreement["scores"]["m"]["all_pairs_accuracy"]
    assert agreement["average_by"] == "item" and acc["average_by"] == "item"
    # every segment's systems ordered right: 1.0, although pairs across groups (same seg_id) are all wrong
    assert acc["estimate"] == 1.0 and acc["n_groups"] == 18
    _segments(within=-1.0).to_csv(path, sep="\t", index=False)
    assert _json(cli, path, "--average-by", "item")["scores"]["m"]["all_pairs_accuracy"]["estimate"] == 0.0


def test_group_averaging_takes_system_pairs_inside_each_group(cli, tmp_path):
    df = _segments(within=1.0)
    df["human"] += df["system"].str[1:].astype(float)  # a system effect, so system means differ
    df["m"] = -df["lp"].map({"en-de": 0.0, "en-fr": 30.0, "en-zh": 60.0}) + df["system"].str[1:].astype(float)
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    pooled = _json(cli, path)
    averaged = _json(cli, path, "--average-by", "group")
    assert averaged["scores"]["m"]["all_pairs_accuracy"]["estimate"] == 1.0  # within each group: right
    assert pooled["scores"]["m"]["all_pairs_accuracy"]["estimate"] < 0.5  # pooled: the cross pairs are wrong
    # the cross-group accuracy is never averaged
    assert averaged["scores"]["m"]["cross_group_accuracy"] == pooled["scores"]["m"]["cross_group_accuracy"]
    assert averaged["scores"]["m"]["cross_group_accuracy"]["estimate"] == 0.0


def test_text_output_names_the_averaging(cli, tmp_path):
    path = tmp_path / "t.tsv"
    _segments().to_csv(path, sep="\t", index=False)
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", "--n-resamples", "20",
                       "--average-by", "item")
    assert rc == 0, err
    assert "segment acc (mean over items)" in out and "all-pairs acc" not in out


def _calibrated(tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for g, lp in enumerate(("en-de", "en-fr", "en-zh")):
        for s in range(6):
            q = rng.normal() + g
            rows += [{"lp": lp, "system": f"s{s}", "seg_id": i, "human": q + rng.normal(),
                      "m": q - 3 * g + rng.normal(),
                      "m_cal": q + rng.normal()} for i in range(10)]
    path = tmp_path / "cal.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def test_sidedness_reaches_the_test_and_is_named(cli, tmp_path):
    path = _calibrated(tmp_path)
    p = {}
    for alternative in ("two-sided", "greater", "less"):
        agreement = _json(cli, path, "--calibrated", "m_cal", "--alternative", alternative)
        (comparison,) = agreement["comparisons"]
        assert agreement["alternative"] == comparison["permutation"]["alternative"] == alternative
        p[alternative] = comparison["permutation"]["p_value"]
    # the calibrated score orders cross-group pairs better: small one-sided p, large for the other side
    assert p["greater"] < 0.05 < 0.95 < p["less"]
    assert p["two-sided"] == pytest.approx(min(1.0, 2 * min(p["greater"], p["less"])), abs=0.03)
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", "--calibrated", "m_cal",
                       "--alternative", "greater", "--n-resamples", "50")
    assert rc == 0, err
    assert "permutation p (greater)" in out


@pytest.mark.parametrize("options, words", [
    (["--calibrated", "m_cal", "--average-by", "group"], "cross-group accuracy"),
    (["--calibrated", "m_cal", "--average-by", "item"], "cross-group accuracy"),
    (["--average-by", "item"], "needs the segment column"),
])
def test_combinations_that_do_not_apply_are_refused_with_one_line(cli, tmp_path, options, words):
    path = _calibrated(tmp_path)
    if "--calibrated" not in options:  # a table without segment ids
        pd.read_csv(path, sep="\t").drop(columns="seg_id").to_csv(path, sep="\t", index=False)
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", *options)
    assert rc == 2 and out == ""
    assert words in err and len(err.strip().splitlines()) == 1


def test_agreement_options_need_human_scores(cli, tmp_path):
    path = _calibrated(tmp_path)
    rc, _, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--average-by", "group")
    assert rc == 2 and "--human" in err


def test_wmt21_is_en_segment_accuracy_by_item_through_the_cli(cli, tmp_path, wmt21_segments):
    """WMT23's segment-level accuracy of chrF on WMT21 is-en against DA z (0.5348 averaged by item,
    reproduced in docs/stats.md), as `diagnose --average-by item` reports it."""
    from xleval.metrics import score_frame

    df = wmt21_segments[wmt21_segments["lp"] == "is-en"].reset_index(drop=True)
    # diagnose needs two groups: halves of the segments keep every segment's systems together
    df = df.assign(chrf=score_frame(df, ["chrf"]).frame["chrf"], half=df["seg_id"].astype(int) % 2)
    path = tmp_path / "is-en.tsv"
    df[["half", "system", "seg_id", "chrf", "human_z"]].to_csv(path, sep="\t", index=False)
    rc, out, err = cli("diagnose", path, "--score", "chrf", "--by", "half", "--human", "human_z",
                       "--average-by", "item", "--n-resamples", "20", "--format", "json")
    assert rc == 0, err
    acc = json.loads(out)["agreement"]["scores"]["chrf"]["all_pairs_accuracy"]
    assert round(acc["estimate"], 4) == 0.5348 and acc["average_by"] == "item"


def _evaluate_json(cli, path, *options):
    rc, out, err = cli("calibrate", "evaluate", path, "--score", "m", "--human", "human", "--by", "lp", "--folds", "3",
                       "--repeats", "2", "--budget", "5", "--selection", "spread", "--n-resamples", "400",
                       "--format", "json", *options)
    assert rc == 0, err
    return json.loads(out)


def test_calibrate_evaluate_tests_each_calibration_against_raw_with_the_sidedness_asked(cli, tmp_path):
    path = _calibrated(tmp_path)  # group offsets in the metric that humans do not see: calibration helps
    plain = _evaluate_json(cli, path)
    assert plain["alternative"] is None and all(v["vs_raw"] is None for v in plain["variants"])
    p = {}
    for alternative in ("two-sided", "greater", "less"):
        result = _evaluate_json(cli, path, "--alternative", alternative)
        assert result["alternative"] == alternative
        raw, lgn = result["variants"][0], result["variants"][1]
        assert raw["vs_raw"] is None and lgn["vs_raw"]["alternative"] == alternative
        p[alternative] = lgn["vs_raw"]["p_value"]
    assert p["greater"] < 0.05 < 0.95 < p["less"]
    assert p["two-sided"] == pytest.approx(min(1.0, 2 * min(p["greater"], p["less"])), abs=0.03)
    rc, out, err = cli("calibrate", "evaluate", path, "--score", "m", "--human", "human", "--by", "lp", "--folds", "3",
                       "--repeats", "1", "--budget", "5", "--n-resamples", "50", "--alternative", "greater")
    assert rc == 0, err
    assert "p vs raw (greater)" in out
