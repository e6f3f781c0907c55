"""The leaderboard: corpus scores from summed statistics (sacrebleu is the oracle), the joint
bootstrap over documents (the stats engine is the oracle), rank intervals from shared resamples,
the calibrated column, and the recommendation on real data whose language pairs differ in quality."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN
from xleval.exceptions import InputError
from xleval.leaderboard import ScoreReading, leaderboard, model_calibration, system_scores
from xleval.stats import Resampling, bootstrap_sums


def _ratio(s):
    return s[..., 0] / s[..., 1]


@pytest.fixture(scope="module")
def wmt_sample(wmt21_segments):
    """chrF and BLEU of 3 to-English pairs x 4 systems x the first 120 segments (with documents)."""
    from xleval.metrics import score_frame

    df = wmt21_segments
    lps = ["de-en", "ja-en", "zh-en"]
    rows = df[df["lp"].isin(lps) & ~df["is_human"] & (df["seg_id"] <= 120)]
    keep = rows.groupby("lp")["system"].unique().map(lambda s: sorted(s)[:4])
    rows = rows[[sys in keep[lp] for lp, sys in zip(rows["lp"], rows["system"], strict=True)]].reset_index(drop=True)
    return score_frame(rows, ["chrf", "bleu"]).frame


def test_corpus_scores_equal_sacrebleu(wmt_sample):
    import sacrebleu

    for metric, make in (("chrf", sacrebleu.CHRF), ("bleu", lambda: sacrebleu.BLEU(tokenize="13a"))):
        scores = system_scores(wmt_sample, metric, "lp", n_resamples=20, random_state=0)
        assert scores.aggregation.startswith(f"corpus {'chrF' if metric == 'chrf' else 'BLEU'} from summed")
        assert len(scores.table) == 12
        for row in scores.table.itertuples():
            part = wmt_sample[(wmt_sample["lp"] == row.group) & (wmt_sample["system"] == row.system)]
            expected = make().corpus_score(part["hypothesis"].tolist(), [part["reference"].tolist()]).score
            assert row.raw == pytest.approx(expected, abs=1e-9), (metric, row.group, row.system)
            assert row.n_segments == len(part)
        assert scores.unit.startswith("documents (doc_id)")


def test_without_texts_or_with_other_options_a_system_score_is_the_mean(wmt_sample):
    means = wmt_sample.groupby(["lp", "system"])["chrf"].mean()
    bare = wmt_sample.drop(columns=["hypothesis", "reference", "source"])
    scores = system_scores(bare, "chrf", "lp", n_resamples=20)
    assert scores.aggregation == "mean of segment scores"
    assert "the table has no 'hypothesis' or 'reference' columns, so the corpus chrf" in scores.notes[0]
    alone = system_scores(wmt_sample.drop(columns="reference"), "chrf", "lp", n_resamples=20)
    assert "the table has no 'reference' column, so" in alone.notes[0]
    other = wmt_sample.assign(chrf=wmt_sample["chrf"] * 1.01)  # not what chrF gives for these texts
    scores2 = system_scores(other, "chrf", "lp", n_resamples=20)
    assert scores2.aggregation == "mean of segment scores" and "does not reproduce column 'chrf'" in scores2.notes[0]
    for s, factor in ((scores, 1.0), (scores2, 1.01)):
        got = s.table.set_index(["group", "system"])["raw"]
        assert np.allclose(got.to_numpy(), means.loc[got.index].to_numpy() * factor, rtol=1e-12)


def test_the_interval_is_the_stats_engine_cluster_bootstrap():
    # One group, one system: the leaderboard's interval is bootstrap_sums over documents with the group's seed.
    rng = np.random.default_rng(1)
    docs = np.repeat(np.arange(30), rng.integers(1, 6, 30))
    x = rng.normal(size=len(docs)) + docs * 0.1
    df = pd.DataFrame({"lp": "de-en", "system": "a", "doc_id": docs.astype(str), "score": x})
    scores = system_scores(df, "score", "lp", n_resamples=500, random_state=7)
    board = leaderboard(df, "score", "lp", method="none", resampling=Resampling(n_resamples=500, random_state=7))
    ref = bootstrap_sums(np.column_stack([x, np.ones_like(x)]), _ratio, clusters=docs.astype(str), n_resamples=500,
                         random_state=scores.group_seeds["de-en"])
    row = board.rows.iloc[0]
    assert (row["raw"], row["raw_ci_low"], row["raw_ci_high"]) == pytest.approx((ref.estimate, ref.ci_low, ref.ci_high),
                                                                                rel=1e-12)


def test_systems_of_a_group_share_their_resamples():
    # b is a + 0.3 on every segment while documents differ by a lot: the raw intervals overlap, but b beats a
    # in every resample because both are drawn from the same documents.
    rng = np.random.default_rng(2)
    docs = np.repeat(np.arange(40), 5)
    difficulty = rng.normal(scale=10.0, size=40)[docs]
    a = difficulty + rng.normal(size=len(docs))
    frames = [pd.DataFrame({"lp": "de-en", "system": name, "doc_id": docs, "score": values})
              for name, values in (("a", a), ("b", a + 0.3))]
    board = leaderboard(pd.concat(frames), "score", "lp", method="none",
                        resampling=Resampling(n_resamples=300, random_state=0))
    rows = board.rows.set_index("system")
    assert rows.loc["b", "raw_ci_low"] < rows.loc["a", "raw_ci_high"]  # overlapping intervals
    assert (rows.loc["b", "rank_in_group_low"], rows.loc["b", "rank_in_group_high"]) == (1, 1)
    assert (rows.loc["a", "rank_in_group_low"], rows.loc["a", "rank_in_group_high"]) == (2, 2)


def test_a_group_without_documents_resamples_its_segments():
    """WMT20's km-en and ps-en write doc_id 'wikipedia' on every row: resampling that one document gave those
    groups zero-width intervals. A group with fewer than 5 documents now resamples its segments, as unit='seg_id'
    would, and says so; the other groups keep their documents; a unit the user names is kept."""
    rng = np.random.default_rng(5)
    rows = []
    for lp, docs in (("de-en", np.repeat(np.arange(20), 4)), ("km-en", np.zeros(80, dtype=int))):
        for system, shift in (("a", 0.0), ("b", 0.4)):
            rows.append(pd.DataFrame({"lp": lp, "system": system, "seg_id": np.arange(80),
                                      "doc_id": np.where(lp == "km-en", "wikipedia", docs.astype(str)),
                                      "score": rng.normal(size=80) + shift}))
    df = pd.concat(rows, ignore_index=True)
    few = Resampling(n_resamples=300, random_state=3)
    board = leaderboard(df, "score", "lp", method="none", resampling=few)
    by_doc = leaderboard(df, "score", "lp", method="none", reading=ScoreReading(unit="doc_id"), resampling=few)
    by_seg = leaderboard(df, "score", "lp", method="none", reading=ScoreReading(unit="seg_id"), resampling=few)
    cols = ["raw_ci_low", "raw_ci_high"]

    def part(b, lp):
        return b.rows[b.rows["group"] == lp].set_index("system")[cols]

    pd.testing.assert_frame_equal(part(board, "km-en"), part(by_seg, "km-en"))
    pd.testing.assert_frame_equal(part(board, "de-en"), part(by_doc, "de-en"))
    km = part(board, "km-en")
    assert (km["raw_ci_high"] - km["raw_ci_low"] > 0.2).all()  # the mean of 80 unit-variance segments: about 0.44
    stuck = part(by_doc, "km-en")
    assert (stuck["raw_ci_high"] == stuck["raw_ci_low"]).all()  # what one document gave before
    assert any(n.startswith("km-en: 1 distinct doc_id value(s)") and "segments (doc_id, seg_id)" in n
               for n in board.notes)
    assert not any("distinct doc_id" in n for n in by_doc.notes)
    assert "segments in km-en" in board.unit and "segments in" not in by_doc.unit


def test_the_report_takes_the_unit_its_note_names(tmp_path):
    """The report's leaderboard said 'give unit= to choose' for a group of one document, but the report took no
    unit, in Python or on the command line: analyze_mt reads ScoreReading.unit and `report --unit`, as the
    leaderboard does, and the note names the flag."""
    import json
    import warnings

    from conftest import run_cli
    from xleval.report import analyze_mt

    rng = np.random.default_rng(5)
    rows = []
    for lp, one_doc in (("de-en", False), ("km-en", True)):
        for system, shift in (("a", 0.0), ("b", 0.4), ("c", 0.8)):
            rows.append(pd.DataFrame({"lp": lp, "system": system, "seg_id": np.arange(40),
                                      "doc_id": "wikipedia" if one_doc else (np.arange(40) // 4).astype(str),
                                      "score": rng.normal(size=40) + shift}))
    df = pd.concat(rows, ignore_index=True)
    few = Resampling(n_resamples=200, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = analyze_mt(df, "score", by="lp", method="none", resampling=few)
        by_seg = analyze_mt(df, "score", by="lp", method="none", resampling=few, reading=ScoreReading(unit="seg_id"))
    assert default.scores.unit != by_seg.scores.unit and by_seg.scores.unit.startswith("seg_id")
    assert any("distinct doc_id" in n for n in default.board.notes)
    assert not any("distinct doc_id" in n for n in by_seg.board.notes)
    df.to_parquet(tmp_path / "t.parquet")
    for extra in ((), ("--unit", "seg_id")):
        rc, _, err = run_cli("report", tmp_path / "t.parquet", "--score", "score", "--method", "none",
                             "--n-resamples", "100", "-o", tmp_path / "r.json", *extra)
        assert rc == 0, err
        text = (tmp_path / "r.json").read_text()
        report = json.loads(text)
        said = [w for s in report["sections"] for w in s["warnings"] if "distinct doc_id" in w]
        assert len(said) == (0 if extra else 1) and "unit=" not in text
        assert not said or said[0].endswith("give --unit to choose")


@pytest.fixture(scope="module")
def simulated():
    from xleval.synthetic import simulate_mt_evaluation

    sim = simulate_mt_evaluation(n_systems=4, n_segments=60, languages=("de", "fi", "zh"), seed=4)
    return sim.data[sim.data["split"] == "evaluation"].reset_index(drop=True), \
        sim.data[sim.data["split"] == "calibration"].reset_index(drop=True)


def test_rows_ranks_and_human_means(simulated):
    ev, _ = simulated
    ev = ev.copy()
    ev.loc[ev.index[:7], "human"] = np.nan
    board = leaderboard(ev, "metric", "tgt_lang", human="human", method="lgn", resampling=Resampling(n_resamples=200))
    rows = board.rows
    assert len(rows) == 12 and list(rows["rank_overall"]) == sorted(rows["rank_overall"])
    human = ev.groupby(["tgt_lang", "system"])["human"].agg(["mean", "count"])
    for r in rows.itertuples():
        assert r.human == pytest.approx(human.loc[(r.group, r.system), "mean"], rel=1e-12)
        assert r.n_human == human.loc[(r.group, r.system), "count"]
        assert r.rank_overall_low <= r.rank_overall <= r.rank_overall_high
        assert r.calibrated_ci_low <= r.calibrated <= r.calibrated_ci_high
    for _, part in rows.groupby("group"):  # within a group the raw order is the rank
        assert list(part.sort_values("raw", ascending=False)["rank_in_group"]) == [1, 2, 3, 4]
    assert board.calibration["method"] == "lgn" and board.recommendation is None


def test_without_ids_rows_are_paired_by_position():
    # No doc_id/seg_id: a system's k-th row is unit k; b = a + 0.3 row by row, so b wins every resample.
    rng = np.random.default_rng(3)
    a = rng.normal(scale=10.0, size=60)
    df = pd.concat([pd.DataFrame({"lp": "de-en", "system": s, "score": v}) for s, v in (("a", a), ("b", a + 0.3))])
    board = leaderboard(df, "score", "lp", method="none", resampling=Resampling(n_resamples=200))
    assert board.unit.startswith("rows (by their position")
    assert board.rows.set_index("system").loc["b", "rank_in_group_high"] == 1


def test_a_saved_calibrator_maps_each_system_score(simulated):
    ev, cal = simulated
    for method in ("zscore", "quantile"):  # a saved map calibrates segments; a system's score is their mean
        model = LGN(by="tgt_lang", score="metric", target=(80, 10), min_count=10, method=method).fit(cal)
        board = leaderboard(ev, "metric", "lp", model=model, resampling=Resampling(n_resamples=100))
        assert board.calibration["method"] == "model" and board.calibration["scale"] == "target mean 80, sd 10"
        calibrated = ev.assign(c=model.transform(ev)).groupby(["lp", "system"])["c"].mean()
        for r in board.rows.itertuples():
            assert r.calibrated == pytest.approx(calibrated.loc[(r.group, r.system)], rel=1e-12)
            assert r.calibrated_ci_low <= r.calibrated <= r.calibrated_ci_high


def test_same_seed_same_board_and_bad_input(simulated):
    ev, _ = simulated
    a = leaderboard(ev, "metric", "tgt_lang", method="lgn", resampling=Resampling(n_resamples=100, random_state=3)).rows
    b = leaderboard(ev, "metric", "tgt_lang", method="lgn", resampling=Resampling(n_resamples=100, random_state=3)).rows
    c = leaderboard(ev, "metric", "tgt_lang", method="lgn", resampling=Resampling(n_resamples=100, random_state=4)).rows
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["raw_ci_low"], c["raw_ci_low"])
    with pytest.raises(InputError, match="anchored calibration needs human scores"):
        leaderboard(ev, "metric", "tgt_lang", method="anchored", resampling=Resampling(n_resamples=10))
    with pytest.raises(InputError, match="method 'best'"):
        leaderboard(ev, "metric", "tgt_lang", method="best")
    with pytest.raises(InputError, match="no column 'bleu'"):
        leaderboard(ev, "bleu", "tgt_lang")


def test_lower_is_better_for_ter():
    df = pd.DataFrame({"lp": "de-en", "system": ["a"] * 5 + ["b"] * 5, "seg_id": list(range(5)) * 2,
                       "ter": [10.0, 20, 30, 40, 50] + [15.0, 25, 35, 45, 55]})
    board = leaderboard(df, "ter", "lp", method="none", resampling=Resampling(n_resamples=100))
    assert board.higher_is_better is False
    assert board.rows.set_index("system").loc["a", "rank_in_group"] == 1


def test_recommendation_where_language_pairs_differ_in_quality(wmt21_segments):
    """WMT21 to-English, raw DA: the pairs' system sets differ in human quality (system-level validity
    check violated), so LGN must not be recommended and the anchored map is."""
    from xleval.metrics import score_frame

    df = wmt21_segments
    rows = df[(df["tgt_lang"] == "en") & ~df["is_human"] & (df["seg_id"] <= 150)].reset_index(drop=True)
    scored = score_frame(rows, ["chrf"]).frame.rename(columns={"human_raw": "human"})
    board = leaderboard(scored, "chrf", "lp", human="human", resampling=Resampling(n_resamples=200, random_state=0))
    rec = board.recommendation
    assert rec.validity_level == "system" and rec.validity_system.status == "violated"
    assert rec.validity_status == "violated" and rec.method == "anchored"
    assert any("violated at system level" in r for r in rec.reasons)
    lgn = rec.evaluation.variant("lgn").minus_raw
    assert lgn.ci_high < 0  # out of fold, LGN orders cross-pair system pairs worse than raw
    assert rec.budget_curve is not None and list(rec.budget_curve["labels_per_group"]) == [25, 50, 100, 200]
    assert len(board.rows) == rows.groupby(["lp", "system"]).ngroups == 100
    assert board.calibration["method"] == "anchored"


def test_a_saved_anchored_calibrator_is_loaded_and_applied(simulated, tmp_path):
    from xleval.calibration import AnchoredCalibrator, load_calibrator

    ev, cal = simulated
    AnchoredCalibrator(by="tgt_lang", score="metric", human="human").fit(cal).save(tmp_path / "a.json")
    model = load_calibrator(tmp_path / "a.json")
    assert type(model).__name__ == "AnchoredCalibrator"
    # without the human column: the board's cells are the map's (labelled cells move toward their labels,
    # tests/test_cell_labels.py)
    board = leaderboard(ev.drop(columns="human"), "metric", "tgt_lang", model=model,
                        resampling=Resampling(n_resamples=50))
    assert board.calibration["description"].startswith("saved anchored calibrator")
    assert board.calibration["scale"] == "human scale"
    mapped = ev.assign(c=model.transform(ev)).groupby(["tgt_lang", "system"])["c"].mean()  # = a_g + B * system mean
    for r in board.rows.itertuples():
        assert r.calibrated == pytest.approx(mapped.loc[(r.group, r.system)], rel=1e-9)
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.json"):
        load_calibrator(tmp_path / "bad.json")


def test_without_anchored_calibration_the_intervals_are_the_bootstraps_as_before():
    # method none: the calibrated interval is the raw one and the rank intervals are those of the raw resamples
    from xleval.stats import rank_intervals

    rng = np.random.default_rng(5)
    docs = np.repeat(np.arange(20), 4)
    frames = [pd.DataFrame({"lp": lp, "system": s, "doc_id": docs, "score": rng.normal(q, 5, len(docs))})
              for lp in ("de-en", "fi-en") for s, q in (("a", 50), ("b", 51), ("c", 53))]
    df = pd.concat(frames, ignore_index=True)
    board = leaderboard(df, "score", "lp", method="none", resampling=Resampling(n_resamples=300, random_state=2))
    scores = system_scores(df, "score", "lp", n_resamples=300, random_state=2)
    rows = board.rows.set_index(["group", "system"])
    for g, est in scores.estimates.items():
        part = rows.loc[g].loc[scores.systems(g)["system"]]
        assert np.allclose(part["calibrated_ci_low"], est.ci_low)
        assert np.allclose(part["calibrated_ci_high"], est.ci_high)
        ranks = rank_intervals(est.estimate, est.distribution)
        assert (part["rank_in_group_low"].to_numpy() == ranks.rank_low).all()
        assert (part["rank_in_group_high"].to_numpy() == ranks.rank_high).all()
    assert set(board.rows["interval_target"]) == {"score under test-set resampling (calibration map fixed)"}
    assert board.uncertainty == {}


def test_a_saved_anchored_calibrator_of_other_groups_gives_intervals_for_the_human_means(simulated):
    from xleval.calibration import AnchoredCalibrator

    ev, cal = simulated
    model = AnchoredCalibrator(by="tgt_lang", score="metric", human="human").fit(cal)
    # model by tgt_lang
    board = leaderboard(ev, "metric", "lp", human="human", model=model, resampling=Resampling(n_resamples=100))
    assert board.rows["interval_target"].iloc[0].startswith("human cell mean")
    assert board.uncertainty["n_labels"] == int(ev["human"].notna().sum())
    # each lp draws the offset error of its own tgt_lang group (not the common offset's)
    calibration = model_calibration(model, ev, "lp")
    assert {lp: calibration.model_group(lp) for lp in ev["lp"].unique()} == {"en-de": "de", "en-fi": "fi",
                                                                             "en-zh": "zh"}
    # no labels: map error
    bare = leaderboard(ev.drop(columns="human"), "metric", "lp", model=model, resampling=Resampling(n_resamples=100))
    assert bare.uncertainty["n_labels"] == 0 and bare.uncertainty["deviation_var"] is None  # NaN in JSON: null


def test_a_score_or_human_column_with_no_value_is_refused_before_any_work(tmp_path):
    """`report --human human_z --meta bleu,chrf --output-checks` on WMT21 pairs without DA read the table, scored
    BLEU and chrF and ran the output checks (14 s) before saying the human column had no values; the leaderboard
    warned that every row was left out, then refused. Both now refuse at once, naming the flag."""
    from conftest import run_cli

    df = pd.DataFrame({"lp": ["en-de"] * 4 + ["en-ja"] * 4, "system": ["a", "b"] * 4, "seg_id": [1, 1, 2, 2] * 2,
                       "chrf": [50.0, 40.0, 55.0, 45.0] * 2, "human": np.nan})
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    for command in (("leaderboard",), ("report", "-o", tmp_path / "r.html")):
        rc, _, err = run_cli(*command, path, "--score", "chrf", "--human", "human")
        assert rc == 2 and err.count("\n") == 1, err
        assert err.startswith(f"xleval: error: {path}: --human 'human' has no value on any of the 8 rows"), err
        rc, _, err = run_cli(*command, path, "--score", "human")
        assert rc == 2 and "--score 'human' has no value on any of the 8 rows" in err and err.count("\n") == 1, err
        # the same column twice: refused before the table is read (the report did so after 17 s on WMT21)
        rc, _, err = run_cli(*command, tmp_path / "no_such.tsv", "--score", "chrf", "--human", "chrf")
        assert rc == 2 and "--score and --human name the same column ('chrf')" in err, err
    assert not (tmp_path / "r.html").exists()
