"""meta_calibrations: calibrated variants as metrics through calibrate evaluate's engine, and the
answer made by the decision code (each metric's decision, then decide_across_metrics)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.decision import DEFAULT_PROCEDURE, EVALUATION_PROCEDURE, decide_across_metrics, evaluate_calibration
from xleval.exceptions import InputError
from xleval.meta import MetaStatistics, exclude_systems, meta_calibrations, meta_evaluate, parse_calibrations
from xleval.stats import Resampling


def _table(seed=0):
    """Human raw scores on one scale; 'offset' follows humans within a group but carries a per-group offset
    (a language bias anchored calibration removes); 'noise' is unrelated to humans."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, bias in zip(("en-de", "en-fr", "en-zh", "en-ja"), (0.0, 30.0, -25.0, 15.0), strict=True):
        for s in range(8):
            q = rng.normal(70, 8)
            for i in range(40):
                h = q + rng.normal(0, 10)
                rows.append({"lp": g, "system": f"{g}-{s}", "seg_id": i, "human": h,
                             "offset": h + bias + rng.normal(0, 6), "noise": rng.normal(0, 10)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def result():
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = meta_evaluate(df, ["noise", "offset"], "human", statistics=MetaStatistics(human_scale="raw"),
                             resampling=Resampling(n_resamples=50))
        return df, meta_calibrations(df, ["noise", "offset"], "human", calibrations="raw,lgn,anchored@20",
                                     human_scale="raw", meta=meta,
                                     procedure=DEFAULT_PROCEDURE.with_(n_folds=2, n_repeats=1, random_state=1))


def _engine_offset(df: pd.DataFrame):
    """The oracle: calibrate evaluate's engine on the 'offset' metric of ``df`` (2 folds, 1 repeat, seed 1, 20
    random labels per group), and its accuracies by the names meta_calibrations gives them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate_calibration(df[["lp", "system", "offset", "human"]], "offset", "human", "lp",
                                  system="system", budget=20, human_scale="raw",
                                  procedure=EVALUATION_PROCEDURE.with_(budgets=[20], selections=("random",),
                                                                       n_folds=2, n_repeats=1, random_state=1))
    want = {v.name: v.accuracy.estimate for v in ev.variants}
    return ev, {"raw": want["raw"], "lgn": want["lgn"], "anchored@20": want["anchored@20 random"]}


def test_variants_are_calibrate_evaluates_numbers(result):
    df, res = result
    ev, want = _engine_offset(df)
    got = {v.calibration: v.accuracy.estimate for v in res.variants if v.metric == "offset"}
    assert got == want
    assert res.decided["offset"] == ev.decision.evaluated_method


def test_answer_names_the_metric_that_orders_held_out_pairs_best(result):
    _, res = result
    assert res.metric == "offset" and res.calibration == "anchored@20"
    best = max((v for v in res.variants if v.calibration == "anchored@20"), key=lambda v: v.accuracy.estimate)
    assert best.metric == "offset"
    assert res.answer.startswith("across languages, trust offset with anchored@20")
    assert "within a pair, offset" in res.answer and "human scale: raw" in res.answer


def test_decide_across_metrics_reads_each_decisions_accuracy():
    class D:
        def __init__(self, method, acc):
            self.method, self.accuracy = method, acc

    decisions = {"a": D("none", {"none": 0.7, "anchored": 0.9}), "b": D("anchored", {"none": 0.6, "anchored": 0.8}),
                 "c": D("lgn", {"lgn": float("nan")})}
    assert decide_across_metrics(decisions) == "b"  # a's decision is raw (0.7): its anchored 0.9 is not chosen
    with pytest.raises(InputError):
        decide_across_metrics({})


@pytest.mark.parametrize("spec", ["raw,bogus", "anchored@0", "lgn@5", "anchored@5,anchored@10", ""])
def test_bad_calibration_specs(spec):
    with pytest.raises(InputError, match="calibration"):
        parse_calibrations(spec)


def test_a_lower_is_better_metric_is_evaluated_in_its_direction():
    """TER (lower is better, by its name) orders held-out cross-group pairs as well as its negation does:
    calibrate evaluate's engine is told the direction, so raw TER is not read upside down."""
    rng = np.random.default_rng(3)
    rows = [{"lp": lp, "system": f"{lp}-{s}", "seg_id": i, "human": q + off + rng.normal(0, 0.3),
             "ter": 60 - 8 * (q + off) + rng.normal(0, 2)}
            for lp, off in (("en-de", 0.0), ("en-ja", 1.5), ("en-fr", 0.7)) for q, s in enumerate("ABCDEF")
            for i in range(20)]
    df = pd.DataFrame(rows)
    once = DEFAULT_PROCEDURE.with_(n_repeats=1)
    ter = meta_calibrations(df, ["ter"], "human", calibrations="raw", human_scale="raw", procedure=once)
    neg = meta_calibrations(df.assign(ter=-df["ter"]), ["ter"], "human", calibrations="raw", human_scale="raw",
                            procedure=once, lower_is_better=[])
    assert ter.variants[0].accuracy.estimate == pytest.approx(neg.variants[0].accuracy.estimate)
    assert ter.variants[0].accuracy.estimate > 0.8


def test_metrics_are_compared_on_the_groups_and_systems_every_one_scores():
    # WMT20's systems.csv: BLEURT scores the 9 pairs into English only; its out-of-fold accuracy over those 9 was
    # set against COMET's over all 16, and BLEURT with anchored was the answer "across languages" (0.928 vs 0.855);
    # the calibrated variants also kept the systems --exclude 'Human-*' left out of the tables beside them
    df = _table(3)
    df["partial"] = np.where(df["lp"].isin(["en-de", "en-fr"]), df["human"] + np.random.default_rng(0).normal(
        0, 2, len(df)), np.nan)
    human_rows = df[df["system"].str.endswith("-0")].assign(system=lambda f: "Human-" + f["lp"])
    table = pd.concat([df, human_rows], ignore_index=True)
    procedure = DEFAULT_PROCEDURE.with_(n_folds=2, n_repeats=1, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = meta_evaluate(table, ["offset", "partial"], "human", exclude=["Human-*"],
                             statistics=MetaStatistics(human_scale="raw"), resampling=Resampling(n_resamples=50))
        res = meta_calibrations(exclude_systems(table, "system", "Human-*"), ["offset", "partial"], "human",
                                calibrations="raw,lgn,anchored@20", human_scale="raw", meta=meta, procedure=procedure)
    # oracle: the engine on the rows both metrics score, without the excluded systems
    common = df[df["lp"].isin(["en-de", "en-fr"])]
    got = {v.calibration: v.accuracy.estimate for v in res.variants if v.metric == "offset"}
    assert got == _engine_offset(common)[1]
    n_all = len(df)
    said = (f"the calibrated variants are compared on the rows every metric scores, {len(common)} of {n_all} in 2 "
            f"groups, so that every metric's cross-group accuracy covers the same groups and systems; left out: "
            f"{n_all - len(common)} row(s), among them every row of en-ja (no partial), en-zh (no partial)")
    assert said in res.notes
    # within a pair: the mean over the groups both metrics have (oracle: the meta table's own values)
    acc = meta.to_frame().query("statistic == 'spa' and group in ['en-de', 'en-fr']")
    best = acc.groupby("metric")["value"].mean().idxmax()
    assert res.within == best
    assert res.within_basis == "highest mean SPA over the 2 of 4 groups every metric has a value in"


def test_metrics_that_share_fewer_than_two_groups_are_refused():
    df = _table(3)
    df["one"] = np.where(df["lp"] == "en-de", df["human"], np.nan)
    procedure = DEFAULT_PROCEDURE.with_(n_folds=2, n_repeats=1, random_state=1)
    with pytest.raises(InputError, match=r"score 1 group\(s\) in common"):
        meta_calibrations(df, ["offset", "one"], "human", calibrations="raw,lgn,anchored@20", human_scale="raw",
                          procedure=procedure)


def test_the_command_leaves_the_excluded_systems_out_of_the_calibrated_variants_too(tmp_path):
    # `meta --exclude 'Human-*' --calibrations ...` left the human translations out of the tables only
    from conftest import run_cli

    df = _table(5)
    human_rows = df[df["system"].str.endswith("-0")].assign(system=lambda f: "Human-" + f["lp"],
                                                            offset=lambda f: f["human"] - 40.0)
    path = tmp_path / "t.tsv"
    pd.concat([df, human_rows], ignore_index=True).to_csv(path, sep="\t", index=False)
    rc, out, err = run_cli("meta", path, "--metrics", "offset", "--human", "human", "--human-scale", "raw",
                           "--exclude", "Human-*", "--calibrations", "raw,lgn,anchored@20", "--folds", "2",
                           "--repeats", "1", "--n-resamples", "50", "--seed", "1", "--format", "json")
    assert rc == 0, err
    got = {v["calibration"]: v["accuracy"]["estimate"] for v in json.loads(out)["calibrated"]["variants"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = meta_calibrations(df, ["offset"], "human", calibrations="raw,lgn,anchored@20", human_scale="raw",
                                 procedure=DEFAULT_PROCEDURE.with_(n_folds=2, n_repeats=1, n_resamples=50,
                                                                   random_state=1))
    assert got == {v.calibration: v.accuracy.estimate for v in want.variants}
