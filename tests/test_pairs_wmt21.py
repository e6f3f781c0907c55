"""Issue 33's headline on real data: WMT21 sentence chrF calibrated onto raw DA, DA z (7 to-English pairs) and
MQM (en-de, zh-en) from K = 100 random labels per pair, the full-data human cell means as the truth
(examples/calibration_simulation.py and examples/interval_coverage.py are the long runs; docs/calibration.md)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import import_example
from xleval.calibration import HumanScale
from xleval.stats import Resampling

# MQM has 16 cells, DA 100; coverage moves by a few points from draw to draw (raw DA: 0.85-0.99), so 10 draws
DRAWS = {"raw DA (7 pairs)": 10, "DA z (7 pairs)": 10, "MQM (en-de, zh-en)": 12}


def _examples():
    return import_example("calibration_simulation"), import_example("interval_coverage")


@pytest.fixture(scope="module")
def study(wmt21_segments, shared_data):
    """Per set and label draw: the leaderboard's cell-interval coverage and its cross-pair verdicts, and those
    of the plain procedure and of the oracle (the plain procedure told the slope and the deviation variance that
    every judged segment gives), from the same labels."""
    sim, coverage = _examples()
    mqm = pd.read_parquet(shared_data("wmt21", "mqm_newstest2021.parquet"))
    rows = []
    for name, frame in coverage.load_sets(wmt21_segments, mqm).items():
        higher = not name.startswith("MQM")
        truth = frame.groupby(["lp", "system"])["human"].mean()
        scored = frame.rename(columns={"chrf": "score"})
        line = sim.true_line(scored)
        for d in range(DRAWS[name]):
            labelled = scored.assign(human=sim.label(scored, 100, np.random.default_rng([d, 100])))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                board = sim.leaderboard(labelled, "score", "lp", human="human", method="anchored",
                                        resampling=Resampling(n_resamples=200, random_state=d),
                                        human_scale=HumanScale(higher_is_better=higher))
            rows.append({"set": name, "procedure": "leaderboard", "draw": d, **sim.pair_scores(board, truth)})
            rows.append({"set": name, "procedure": "plain", "draw": d, **sim.plain_pairs(labelled, truth, higher)})
            rows.append({"set": name, "procedure": "oracle", "draw": d,
                         **sim.plain_pairs(labelled, truth, higher, line=line)})
    return pd.DataFrame(rows)


def _cell_coverage(study) -> pd.Series:
    return study[study["procedure"] == "leaderboard"].groupby("set")["cover cell"].mean()


def test_cell_intervals_cover_the_full_human_means_at_least_090_on_every_set(study):
    ci = _cell_coverage(study)
    assert len(ci) == 3 and (ci >= 0.90).all(), ci


def test_cell_intervals_are_not_too_wide_on_any_set(study):
    """DA z's deviations from the line are near 0 and the labels cannot tell them from 0: under the former flat
    prior on the deviation variance its cells were covered 0.994 (0.997-0.998 with BLEU and TER,
    examples/deviation_prior.py); the flat prior on the sd brings them into the band."""
    ci = _cell_coverage(study)
    assert (ci <= 0.99).all(), ci


@pytest.mark.xfail(strict=True, reason="issue 33, unmet on this set: on WMT21 raw DA at K = 100 the leaderboard "
                   "declares about 3.1% of the cross-pair orders; even an oracle told the true slope and deviation "
                   "variance declares under 15% (the next test; docs/calibration.md)")
def test_raw_da_declares_at_least_15_percent_of_the_cross_pair_orders(study):
    raw = study[(study["set"] == "raw DA (7 pairs)") & (study["procedure"] == "leaderboard")]
    assert raw["declared across"].mean() >= 0.15


def test_on_raw_da_15_percent_is_beyond_what_100_labels_per_pair_can_settle(study):
    """Why the criterion above is unmet on WMT21: the plain procedure told the slope and the deviation variance
    that every judged segment gives (only the offsets come from the 100 labels) covers the true differences
    and is rarely wrong, yet declares well under 15% of the cross-pair orders: the systems' deviations from
    chrF's line (sd about 3 DA points a cell) and the offsets' errors leave too little to decide."""
    raw = study[study["set"] == "raw DA (7 pairs)"]
    oracle = raw[raw["procedure"] == "oracle"]
    assert 0.90 <= oracle["cover across"].mean() <= 0.99
    assert oracle["n wrong across"].sum() <= 0.05 * oracle["n told across"].sum()
    assert oracle["declared across"].mean() < 0.12
    board = raw[raw["procedure"] == "leaderboard"]
    assert board["declared across"].mean() < oracle["declared across"].mean()


def test_at_most_5_percent_of_the_declared_cross_pair_orders_are_wrong(study):
    pooled = study[study["procedure"] == "leaderboard"].groupby("set")[["n wrong across", "n told across"]].sum()
    assert (pooled["n wrong across"] <= 0.05 * pooled["n told across"]).all(), pooled
    assert pooled.loc["MQM (en-de, zh-en)", "n told across"] > 0


def test_the_plain_procedure_declares_more_on_raw_da_but_is_wrong_too_often(study):
    """Why the leaderboard does not use it: on WMT21 raw DA its plug-in deviation variance (0 when the estimate is
    negative) makes the intervals too narrow: below 0.90 coverage of the true differences, more than 5% of its
    declared cross-pair orders wrong."""
    raw = study[study["set"] == "raw DA (7 pairs)"]
    plain, board = raw[raw["procedure"] == "plain"], raw[raw["procedure"] == "leaderboard"]
    assert plain["declared across"].mean() > board["declared across"].mean()
    assert plain["cover across"].mean() < 0.90
    assert plain["n wrong across"].sum() > 0.05 * plain["n told across"].sum()
