"""The leaderboard ranks calibrated scores in the calibrated scale's direction. An anchored map puts the
scores on the human scale, so the overall ranks, the rank-in-group intervals from the joint draws and the
pairs' verdicts follow the human scale's direction, not the metric's: MQM error points (lower is better)
under chrF, a DA-like scale (higher is better) under TER. Before, all three read the metric's direction:
on WMT21 MQM (en-de, zh-en) the worst zh-en system ranked first overall, every cross-pair verdict was
reversed, and rank-in-group intervals missed their own point rank.

The expected orders come from the table's own cell means of the human scores, never from the code."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.stats import Resampling

FEW = Resampling(n_resamples=200, random_state=0)


def _table(metric: str, seed: int = 0) -> pd.DataFrame:
    """Three pairs x five systems x 40 segments. The human scale is MQM error points (>= 0, lower is better)
    for ``chrf`` and a 0-100 rating (higher is better) for ``ter``; the pairs' true levels differ a lot, and
    the metric's per-pair bias reverses them, so raw scores order the pairs wrongly."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, level, bias in (("de-en", 1.0, -12.0), ("ja-en", 4.0, 0.0), ("ha-en", 8.0, 14.0)):
        for k in range(5):
            cell = level + 0.6 * k + 0.1 * rng.normal()  # error points of the cell
            for i in range(40):
                errors = max(cell + 0.8 * rng.normal(), 0.0)
                x = 60.0 - 3.0 * errors + bias + 1.0 * rng.normal()
                if metric == "chrf":
                    rows.append({"lp": lp, "system": f"s{k}", "seg_id": i, "doc_id": f"d{i // 5}",
                                 "human": errors, "chrf": x})
                else:
                    rows.append({"lp": lp, "system": f"s{k}", "seg_id": i, "doc_id": f"d{i // 5}",
                                 "human": 90.0 - 5.0 * errors, "ter": 100.0 - x})
    return pd.DataFrame(rows)


def _truth(df: pd.DataFrame) -> pd.Series:
    return df.groupby(["lp", "system"])["human"].mean()


CASES = [("chrf", "mqm", False), ("ter", "da", True)]


def _board(metric, scale):
    from xleval.leaderboard import leaderboard

    df = _table(metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(df, metric, "lp", human="human", method="anchored", resampling=FEW, human_scale=scale)
    return df, board


@pytest.mark.parametrize("metric,scale,human_up", CASES)
def test_the_overall_ranks_follow_the_human_scale_of_an_anchored_map(metric, scale, human_up):
    df, board = _board(metric, scale)
    truth = _truth(df)
    rows = board.rows
    assert board.higher_is_better is human_up
    best = truth.idxmax() if human_up else truth.idxmin()
    first = rows.iloc[0]
    assert (first["group"], first["system"]) == best
    worst = truth.idxmin() if human_up else truth.idxmax()
    assert (rows.iloc[-1]["group"], rows.iloc[-1]["system"]) == worst
    true_of_row = truth.loc[list(zip(rows["group"], rows["system"], strict=True))].to_numpy()
    # rank 1 is the best cell: the rank rises as the true quality falls
    rho = pd.Series(rows["rank_overall"].to_numpy()).corr(pd.Series(true_of_row), method="spearman")
    assert (rho < -0.9) if human_up else (rho > 0.9), rho


@pytest.mark.parametrize("metric,scale,human_up", CASES)
def test_rank_in_group_intervals_contain_their_rank(metric, scale, human_up):
    _, board = _board(metric, scale)
    rows = board.rows
    rank = rows["rank_in_group"]
    inside = (rows["rank_in_group_low"] <= rank) & (rank <= rows["rank_in_group_high"])
    assert inside.all(), rows[~inside]
    inside = (rows["rank_overall_low"] <= rows["rank_overall"]) & (rows["rank_overall"] <= rows["rank_overall_high"])
    assert inside.all(), rows[~inside]


@pytest.mark.parametrize("metric,scale,human_up", CASES)
def test_the_pairs_verdicts_name_the_cell_the_human_scale_prefers(metric, scale, human_up):
    df, board = _board(metric, scale)
    truth = _truth(df)
    pairs = board.pairs("across").table
    told = pairs[pairs["verdict"] != "cannot tell"]
    assert len(told) > 10
    a = truth.loc[list(zip(told["group_a"], told["system_a"], strict=True))].to_numpy()
    b = truth.loc[list(zip(told["group_b"], told["system_b"], strict=True))].to_numpy()
    a_truly_better = (a > b) if human_up else (a < b)
    said_a = (told["verdict"] == "A better").to_numpy()
    assert (said_a == a_truly_better).mean() >= 0.95


def test_the_command_line_ranks_mqm_error_points_lowest_first(cli, tmp_path):
    df = _table("chrf")
    path = tmp_path / "mqm.tsv"
    df.to_csv(path, sep="\t", index=False)
    out, pairs = tmp_path / "board.json", tmp_path / "pairs.tsv"
    rc, _, err = cli("leaderboard", str(path), "--score", "chrf", "--by", "lp", "--human", "human", "--method",
                     "anchored", "--human-scale", "mqm", "--n-resamples", "200", "-o", str(out), "--pairs", str(pairs))
    assert rc == 0, err
    payload = json.loads(out.read_text())
    rows = payload["rows"]
    truth = _truth(df)
    assert (rows[0]["group"], rows[0]["system"]) == truth.idxmin()
    assert payload["higher_is_better"] is False
    written = pd.read_csv(pairs, sep="\t")
    across = written[(written["scope"] == "across") & (written["verdict"] != "cannot tell")]
    assert len(across)
    for _, p in across.iterrows():  # "A better" means a lower calibrated MQM
        assert (p["verdict"] == "A better") == (p["difference"] < 0)


def test_the_report_ranks_mqm_error_points_lowest_first():
    from xleval.report import analyze_mt

    df = _table("chrf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(df, "chrf", by="lp", human="human", method="anchored", resampling=FEW,
                              human_scale="mqm")
    first = analysis.board.rows.iloc[0]
    assert (first["group"], first["system"]) == _truth(df).idxmin()


def _cross_accuracy(df: pd.DataFrame, score: str, human_up: bool) -> float:
    """Cross-group pairwise accuracy of the score's cell means against the human cell means, read in the human
    scale's direction (no ties in these tables)."""
    cells = df.groupby(["lp", "system"])[[score, "human"]].mean().reset_index()
    right = n = 0
    for i in range(len(cells)):
        for j in range(i + 1, len(cells)):
            a, b = cells.iloc[i], cells.iloc[j]
            if a["lp"] == b["lp"]:
                continue
            h = (a["human"] - b["human"]) * (1 if human_up else -1)
            right += np.sign(a[score] - b[score]) == np.sign(h)
            n += 1
    return right / n


def test_diagnose_reads_mqm_error_points_as_lower_is_better():
    """The agreement table's raw accuracy is the decision's, not its complement (WMT21 MQM: 0.812 beside the
    decision's 0.19, before)."""
    from xleval.decision import DEFAULT_PROCEDURE, diagnose

    df = _table("chrf")
    expected = _cross_accuracy(df, "chrf", human_up=False)
    assert expected < 0.4  # the metric's per-pair bias reverses the pairs: a complement would read > 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = diagnose(df, "chrf", "lp", human="human", human_scale="mqm",
                         procedure=DEFAULT_PROCEDURE.with_(n_resamples=100, random_state=0))
    acc = found.agreement.scores["chrf"].cross_group_accuracy.estimate
    assert acc == pytest.approx(expected)
    assert any("lower is better for human" in n for n in found.agreement.notes)


def test_the_report_reads_raw_and_calibrated_columns_each_in_its_own_direction():
    """Raw chrF (higher is better) and its anchored calibration onto MQM error points (lower is better) are
    both read against the human scale's direction: the calibrated column agrees better, positively."""
    from xleval.report import analyze_mt

    df = _table("chrf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(df, "chrf", by="lp", human="human", method="anchored", resampling=FEW,
                              human_scale="mqm")
    scores = analysis.diagnosis.agreement.scores
    raw = scores["chrf"].cross_group_accuracy.estimate
    calibrated = scores["chrf_calibrated"].cross_group_accuracy.estimate
    assert raw == pytest.approx(_cross_accuracy(df, "chrf", human_up=False))
    assert calibrated > 0.9 > raw
    assert scores["chrf_calibrated"].system_pooled["pearson"].estimate > 0.9


def test_meta_negates_mqm_error_points_named_by_the_scale():
    from xleval.meta import MetaStatistics, meta_evaluate

    df = _table("chrf")
    stats = MetaStatistics(human_scale="mqm", spa=False, pdp=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = meta_evaluate(df, ["chrf"], "human", by="lp", statistics=stats,
                               resampling=Resampling(n_resamples=50, random_state=0))
    cells = df.groupby(["lp", "system"])[["chrf", "human"]].mean()
    for lp, part in cells.groupby(level=0):
        expected = np.corrcoef(part["chrf"], -part["human"])[0, 1]
        assert result.value(lp, "chrf", "sys_pearson") == pytest.approx(expected)
        assert expected > 0.9
    assert any("negated" in n and "mqm" in n for n in result.notes)


def _few_labels(df: pd.DataFrame, per_system: int, seed: int = 0) -> pd.DataFrame:
    """``per_system`` labels per system (the rest NaN), as a user who judged a few segments of each."""
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(df), bool)
    for _, idx in df.groupby(["lp", "system"]).indices.items():
        keep[rng.choice(idx, per_system, replace=False)] = True
    return df.assign(human=df["human"].where(keep))


def test_the_comparison_reads_a_named_scale_and_refuses_an_unsettled_one():
    """The out-of-fold comparison reads every accuracy in the human scale's direction: the name fixes it (MQM
    error points: lower), and where nothing names it and the labels do not settle it, the comparison is
    refused as `calibrate fit` refuses (E122). Before, the sign of a within-group correlation of a few labels
    per system was taken, without a test (issue 33: it flipped in 10 of 40 TED draws)."""
    from xleval.decision import EVALUATION_PROCEDURE, evaluate_calibration
    from xleval.exceptions import InputError

    df = _table("chrf")
    procedure = EVALUATION_PROCEDURE.with_(n_repeats=1, n_resamples=100, budgets=(25,), selections=("random",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = evaluate_calibration(df, "chrf", "human", "lp", procedure=procedure, human_scale="mqm")
    assert named.human_direction == -1 and named.direction_source == "given"
    raw = next(v for v in named.variants if v.name == "raw")
    assert raw.accuracy.estimate == pytest.approx(_cross_accuracy(df, "chrf", human_up=False))

    noise = np.abs(np.random.default_rng(3).normal(3.0, 2.0, size=len(df)))  # labels that say nothing
    sparse = _few_labels(df.assign(human=noise), 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match="do not settle the direction of the human scale"):
            evaluate_calibration(sparse, "chrf", "human", "lp", procedure=procedure)
        named = evaluate_calibration(sparse, "chrf", "human", "lp", procedure=procedure, human_scale="mqm")
    assert named.human_direction == -1


def test_meta_calibrations_read_the_named_scale(cli, tmp_path):
    """`meta --calibrations --human-scale mqm` measures the calibrations against MQM read lower is better, as
    `calibrate evaluate --human-scale mqm` does (before: only z and raw reached the calibrations, and their
    accuracies were read against the scale's direction found in a correlation, or turned)."""
    df = _table("chrf")
    path = tmp_path / "mqm.tsv"
    df.to_csv(path, sep="\t", index=False)
    out = tmp_path / "meta.json"
    rc, _, err = cli("meta", str(path), "--metrics", "chrf", "--human", "human", "--by", "lp", "--human-scale", "mqm",
                     "--calibrations", "raw,lgn", "--no-spa", "-o", str(out), "--format", "json")
    assert rc == 0, err
    payload = json.loads(out.read_text())
    assert payload["calibrated"]["human_scale"] == "mqm"  # before: "as given (not stated)"
    variants = payload["calibrated"]["variants"]
    raw = next(v for v in variants if v["calibration"] == "raw")
    assert raw["accuracy"]["estimate"] == pytest.approx(_cross_accuracy(df, "chrf", human_up=False))


def test_an_anchored_columns_signature_says_the_human_scales_direction():
    """The one direction rule reads an anchored calibrated column by its own ``human_better:``, not by the
    ``dir:`` of the metric it was calibrated from (MetricX's ``dir:lower`` after ``of:``): before, an anchored
    MetricX column on a 0-100 scale read as lower is better. An LGN column keeps its metric's ``dir:``."""
    from xleval._base.signature import signature_direction

    metricx = "metricx|variant:24-ref|refs:yes|dir:lower|xleval:0.1.0"
    assert signature_direction(f"anchored|by:lp|human:esa|human_better:higher|level:system|labels:100|of:{metricx}")
    assert signature_direction(f"anchored|by:lp|human:mqm|human_better:lower|level:system|labels:100|of:{metricx}") \
        is False
    assert signature_direction(f"lgn|by:lp|of:{metricx}") is False
