"""Span-level meta-evaluation and the segment detections (xleval.meta._spans, meta --gold-spans/--predicted-spans,
--error-free, --critical), each against a hand computation."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.meta import MetaStatistics, Spans, meta_evaluate
from xleval.meta._spans import detection_f1, span_f1
from xleval.stats import Resampling

KEYS = ["lp", "system", "seg_id"]
#: segment A: gold major 0-10, predicted minor 5-15; segment B: gold minor 0-4, predicted minor 0-4 and critical
#: 10-12; segment C: no span in either
GOLD = pd.DataFrame({"lp": ["x", "x"], "system": ["s", "s"], "seg_id": ["A", "B"], "severity": ["major", "minor"],
                     "start": [0, 0], "end": [10, 4]})
PRED = pd.DataFrame({"lp": ["x", "x", "x"], "system": ["s", "s", "s"], "seg_id": ["A", "B", "B"],
                     "severity": ["minor", "minor", "critical"], "start": [5, 0, 10], "end": [15, 4, 12]})
SEGMENTS = pd.DataFrame({"lp": ["x"] * 3, "system": ["s"] * 3, "seg_id": ["A", "B", "C"]})


def _f1(p, r):
    return 2 * p * r / (p + r)


def test_character_level_f1_by_hand():
    """Characters: A: gold 10, predicted 10, 5 shared with the wrong severity (credit 0.5 each): 2.5; B: 4 shared,
    right severity: 4; predicted 2 more (critical = major). Credit 6.5; predicted 16, gold 14 characters."""
    row = next(r for r in span_f1(GOLD, PRED, SEGMENTS, keys=KEYS, n_resamples=0) if r["statistic"] == "span_char_f1")
    assert row["precision"] == pytest.approx(6.5 / 16) and row["recall"] == pytest.approx(6.5 / 14)
    assert row["value"] == pytest.approx(_f1(6.5 / 16, 6.5 / 14)) and row["n"] == 3


def test_partial_overlap_partial_credit_micro_f1_by_hand():
    """A: the pair overlaps 5 of 10 predicted and 5 of 10 gold characters, wrong severity: 0.5 * 0.5 each way;
    B: an exact match (1, 1) and an unmatched predicted span. Precision 1.25 / 3 spans, recall 1.25 / 2."""
    row = next(r for r in span_f1(GOLD, PRED, SEGMENTS, keys=KEYS, n_resamples=0)
               if r["statistic"] == "span_overlap_f1")
    assert row["precision"] == pytest.approx(1.25 / 3) and row["recall"] == pytest.approx(1.25 / 2)
    assert row["value"] == pytest.approx(_f1(1.25 / 3, 1.25 / 2))


def test_full_credit_for_a_wrong_severity_changes_the_char_f1():
    row = next(r for r in span_f1(GOLD, PRED, SEGMENTS, keys=KEYS, mismatch=1.0, n_resamples=0)
               if r["statistic"] == "span_char_f1")
    assert row["precision"] == pytest.approx(9 / 16)


def test_detection_f1_at_the_best_threshold_by_hand():
    """Error-free (flag high scores): scores 90 80 70 60 50, gold 1 0 1 0 0. Flagging the top 1/2/3/4/5 gives F1
    2/3, 1/2, 4/5, 2/3, 4/7: best 0.8 at threshold 70 (precision 2/3, recall 1). Critical (flag low scores):
    5 and 8 are critical, 20 and 50 not: flagging below 20 finds both (F1 1)."""
    res = detection_f1([90, 80, 70, 60, 50], [True, False, True, False, False], flag_high=True)
    assert res["f1"] == pytest.approx(0.8) and res["threshold"] == 70
    assert res["precision"] == pytest.approx(2 / 3) and res["recall"] == 1.0
    crit = detection_f1([5, 20, 8, 50], [True, False, True, False], flag_high=False)
    assert crit["f1"] == 1.0 and crit["threshold"] == 20


def _table():
    rng = np.random.default_rng(2)
    rows = []
    for s in range(4):
        for i in range(12):
            h = float(rng.integers(0, 101))
            rows.append({"lp": "x", "system": f"s{s}", "seg_id": f"g{i}", "human": h, "m": h + rng.normal(0, 15)})
    return pd.DataFrame(rows)


def test_meta_reports_span_and_detection_cells(tmp_path):
    df = _table()
    gold = pd.DataFrame({"lp": ["x"], "system": ["s0"], "seg_id": ["g1"], "severity": ["major"], "start": [0],
                         "end": [5]})
    pred = gold.assign(severity="minor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(df, ["m"], "human",
                            spans=Spans(gold=gold, predicted={"judge": pred}, error_free=85, critical=10),
                            resampling=Resampling(n_resamples=20), statistics=MetaStatistics(spa=False))
    assert res.span_sources == ("judge",) and res.columns("span_char_f1") == ("judge",)
    # one span, right place, wrong severity: precision = recall = 0.5 at character level
    assert res.value("x", "judge", "span_char_f1") == pytest.approx(0.5)
    clean = (df["human"] >= 85) & ~((df["system"] == "s0") & (df["seg_id"] == "g1"))
    expected = detection_f1(df["m"], clean, flag_high=True)
    assert res.value("x", "m", "error_free_f1") == pytest.approx(expected["f1"])
    assert res.value("x", "m", "error_free_threshold") == expected["threshold"]
    assert res.value("x", "m", "critical_f1") == pytest.approx(detection_f1(df["m"], df["human"] < 10,
                                                                            flag_high=False)["f1"])
    assert any("optimistic" in n for n in res.notes)
    # the command line: text and JSON carry them
    table, g, p = tmp_path / "t.tsv", tmp_path / "gold.tsv", tmp_path / "pred.tsv"
    df.to_csv(table, sep="\t", index=False)
    gold.to_csv(g, sep="\t", index=False)
    pred.to_csv(p, sep="\t", index=False)
    args = ["meta", str(table), "--metrics", "m", "--human", "human", "--gold-spans", str(g), "--predicted-spans",
            f"judge={p}", "--error-free", "85", "--critical", "10", "--no-spa", "--n-resamples", "20"]
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    assert "span_char_f1" in r.stdout and "judge" in r.stdout and "critical_threshold" in r.stdout
    out = json.loads(run_cli(*args, "--format", "json").stdout)
    assert {c["statistic"] for c in out["cells"]} >= {"span_overlap_f1", "error_free_f1", "critical_recall"}
    r = run_cli("meta", str(table), "--metrics", "m", "--human", "human", "--gold-spans", str(g), "--predicted-spans",
                "judge")
    assert r.exit_code == 2 and "give NAME=FILE" in r.stderr
