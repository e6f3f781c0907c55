"""A cell's own labels in the leaderboard's estimate of its human mean (empirical Bayes, the best linear
unbiased predictor of small-area estimation): the calibrated mean of a (group, system) cell with at least
``MIN_OWN_LABELS`` labels is the common line's plus ``weight`` times its labels' mean residual from the line.

Oracles: the weight is checked against a Monte Carlo regression of the target on the observed residual in the
model the docstring of ``xleval.calibration._cell_interval`` states (deviation plus the mean noise of a finite
set of segments, a random part of which is labelled); with every segment labelled the cells' human means are
known, so the leaderboard must return them, computed here with pandas, with no width left; a cell without labels
keeps the map's system mean, computed with the calibrator's own ``transform``.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import AnchoredCalibrator, CellLabels, CellUncertainty
from xleval.calibration._cell_interval import MIN_OWN_LABELS
from xleval.leaderboard import leaderboard
from xleval.stats import Resampling


def _uncertainty(estimate: float, within: float) -> CellUncertainty:
    return CellUncertainty(deviation_var=estimate, deviation_estimate=estimate, deviation_se=0.5 * estimate,
                           within_var=within, n_cells=8, n_labels=100, slope_cov=((0.0, 0.0), (0.0, 0.0)))


@pytest.mark.parametrize("n", [10, 20, 45])
def test_the_weight_is_the_regression_of_the_cell_mean_on_its_labels(n):
    var, within, size = 9.0, 400.0, 60
    rng = np.random.default_rng(n)
    cells = 40_000
    deviation = rng.normal(0.0, np.sqrt(var), cells)
    noise = rng.normal(0.0, np.sqrt(within), (cells, size))
    target = deviation + noise.mean(axis=1)  # the cell's mean over all of its segments, around the line
    seen = deviation + noise[:, :n].mean(axis=1)  # its labelled segments' mean residual (a random n of them)
    slope = np.cov(target, seen)[0, 1] / seen.var(ddof=1)
    shift, weight = _uncertainty(var, within).prediction(
        CellLabels(np.array([float(n)]), np.array([2.0]), np.array([0.0])), np.array([float(size)]))
    se = np.sqrt((1 - slope**2 * seen.var() / target.var()) * target.var() / seen.var() / cells)
    assert abs(weight[0] - slope) < 4 * se
    assert shift[0] == pytest.approx(2.0 * weight[0], rel=1e-12)


def test_no_labels_or_few_no_weight_and_every_segment_labelled_all_of_it():
    u = _uncertainty(9.0, 400.0)
    few = MIN_OWN_LABELS - 1
    shift, weight = u.prediction(CellLabels(np.array([0.0, few, 60.0]), np.array([5.0, 5.0, 5.0]), np.zeros(3)),
                                 np.array([60.0, 60.0, 60.0]))
    assert weight[0] == 0 and shift[0] == 0
    assert weight[1] == 0 and shift[1] == 0  # too few to lean on: the line's estimate
    assert weight[2] == pytest.approx(1.0, abs=1e-12) and shift[2] == pytest.approx(5.0, abs=1e-12)
    # an estimate below 0 is no deviation: the weight is then the labelled share of the cell's segments
    _, weight = _uncertainty(-3.0, 400.0).prediction(CellLabels(np.array([15.0]), np.zeros(1), np.zeros(1)),
                                                     np.array([60.0]))
    assert weight[0] == pytest.approx(15 / 60, abs=1e-12)


def _table(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g, shift in (("de-en", 0.0), ("ja-en", -8.0), ("ha-en", 4.0)):
        for s in range(5):
            quality, deviation = 5.0 * s, rng.normal(0, 4)
            for seg in range(30):
                x = 40 + shift + quality + rng.normal(0, 8)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": seg, "doc_id": seg // 5, "score": x,
                             "human": 60 + 1.5 * quality + deviation + 0.3 * (x - 40 - shift - quality)
                             + rng.normal(0, 10)})
    return pd.DataFrame(rows)


def test_with_every_segment_labelled_the_board_gives_the_human_means_exactly():
    table = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(table, "score", "lp", human="human", method="anchored",
                            resampling=Resampling(n_resamples=200, random_state=0))
    human = table.groupby(["lp", "system"])["human"].mean()
    rows = board.rows.set_index(["group", "system"])
    assert np.allclose(rows["calibrated"], human.loc[rows.index], atol=1e-9)
    # the target is the mean over the cell's judged segments: judged all, it is known
    assert np.allclose(rows["calibrated_ci_low"], rows["calibrated"], atol=1e-9)
    assert np.allclose(rows["calibrated_ci_high"], rows["calibrated"], atol=1e-9)
    # and the ranks follow the human means
    order = human.loc[rows.index].rank(ascending=False, method="min").to_numpy()
    assert (rows["rank_overall"].to_numpy() == order).all()


def test_a_cell_without_labels_keeps_the_line_and_a_labelled_one_moves_toward_its_labels():
    table = _table(5)
    labelled = table.assign(human=table["human"].where(table["seg_id"] % 3 == 0))
    labelled.loc[labelled["system"] == "s2", "human"] = np.nan  # s2: no labels in any pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True).fit(labelled)
        board = leaderboard(labelled, "score", "lp", model=model, human="human",
                            resampling=Resampling(n_resamples=200, random_state=0))
    line = labelled.assign(c=model.transform(labelled)).groupby(["lp", "system"])["c"].mean()
    seen = labelled.assign(r=labelled["human"] - model.transform(labelled)).groupby(["lp", "system"])["r"].mean()
    rows = board.rows.set_index(["group", "system"])
    assert board.uncertainty["deviation_estimate"] > 0  # the labels show deviations: their own labels count
    for (g, s), r in rows.iterrows():
        if s == "s2":
            assert r["calibrated"] == pytest.approx(line.loc[(g, s)], rel=1e-12)
        else:  # between the line and the labels' mean, on the labels' side
            moved = (r["calibrated"] - line.loc[(g, s)]) / seen.loc[(g, s)]
            assert 0 < moved < 1


def test_a_cells_weight_takes_its_groups_within_variance():
    """Labels of one group vary within a cell more than another's: a cell's weight is the one its group's variance
    gives (the same as an uncertainty whose pooled variance is that group's), and a group without a variance of its
    own takes the pooled one."""
    labels = CellLabels(np.array([20.0, 20.0, 20.0]), np.array([3.0, 3.0, 3.0]), np.zeros(3))
    sizes = np.array([60.0, 60.0, 60.0])
    mixed = CellUncertainty(deviation_var=9.0, deviation_estimate=9.0, deviation_se=4.5, within_var=400.0, n_cells=8,
                            n_labels=100, slope_cov=((0.0, 0.0), (0.0, 0.0)),
                            group_within_var=((0, 100.0), (1, 900.0)))
    _, weight = mixed.prediction(labels, sizes, np.array([0, 1, 5]))
    for j, within in enumerate([100.0, 900.0, 400.0]):
        assert weight[j] == pytest.approx(_uncertainty(9.0, within).prediction(labels, sizes)[1][j], rel=1e-12)
    assert weight[0] > weight[2] > weight[1]  # the quieter the group, the more a cell's own labels say
    # without codes every cell takes the pooled variance
    assert mixed.prediction(labels, sizes)[1] == pytest.approx(_uncertainty(9.0, 400.0).prediction(labels, sizes)[1])


def test_the_leaderboard_gives_each_pairs_within_variance_under_its_name():
    """Two pairs judged by raters of different consistency (noise sd 4 and 30), systems deviating from the score's
    line with sd 3: the board's uncertainty reports each pair's labels' variance within a cell under the pair's
    name, near its noise variance, and a cell's own labels weigh as its pair's variance says."""
    rng = np.random.default_rng(4)
    rows = []
    for pair, noise in (("xh-zu", 30.0), ("en-de", 4.0)):
        quality, deviation = rng.normal(70, 5, 8), rng.normal(0, 3, 8)
        for s, q in enumerate(quality):
            x = q / 2 + rng.normal(0, 3, 60)
            rows.append(pd.DataFrame({"pair": pair, "system": f"s{s}", "doc_id": np.arange(60) // 6, "score": x,
                                      "human": q + deviation[s] + (x - x.mean()) + rng.normal(0, noise, 60)}))
    frame = pd.concat(rows, ignore_index=True)
    keep = rng.random(len(frame)) < 0.4
    frame.loc[~keep, "human"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(frame, "score", "pair", human="human", method="anchored", human_scale="raw",
                            resampling=Resampling(n_resamples=50, random_state=0))
    within = board.uncertainty["group_within_var"]
    assert set(within) == {"xh-zu", "en-de"}
    assert 0.7 < within["xh-zu"] / 900.0 < 1.4 and 0.7 < within["en-de"] / 16.0 < 1.4, within
    # and a cell's own labels (about 24 of 60 segments) weigh by its pair's: about 0.95 in en-de, 0.5 in xh-zu (one
    # pooled variance gives every cell about 0.6); the interval's text says the range
    low, high = map(float, re.search(r"toward their mean by their weight \((\S+)-(\S+) here",
                                     board.intervals["calibrated"]).groups())
    assert low < 0.7 and high > 0.85, (low, high)
