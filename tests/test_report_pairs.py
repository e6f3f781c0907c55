"""The report says which cells differ (issue 33, item 2): from the leaderboard's joint draws, the share of
cross-group pairs of (group, system) cells the intervals decide, within groups too, and a line per pair of
groups; the same numbers as ``Leaderboard.pairs()`` and ``xleval leaderboard --pairs``."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from _three_pairs import three_pairs
from xleval.report import analyze_mt, build_mt_report, render_html
from xleval.stats import Resampling


def _table(seed: int = 0) -> pd.DataFrame:
    """Three pairs whose true levels differ by 10 human points, the metric blind to it; 30 labels per pair."""
    rng = np.random.default_rng(seed)
    frame = three_pairs(rng)
    keep = np.zeros(len(frame), bool)
    keep[rng.choice(len(frame), 90, replace=False)] = True
    return frame.assign(human=frame["human"].where(keep))


def test_the_report_states_which_cells_differ_from_the_boards_draws():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(_table(), "metric", human="human", method="anchored",
                              resampling=Resampling(n_resamples=200))
    assert analysis.pairs is not None
    again = analysis.board.pairs()
    assert again.table.equals(analysis.pairs.table)  # the same draws, the same verdicts
    told = again.declared()
    t = again.table
    across = t[t["scope"] == "across"]
    assert len(across) == 3 * 5 * 5  # 3 pairs of groups x 5 x 5 systems
    # most cross-pair orders of cells 10 human points apart are decided, and each is the true order
    decided = across[across["verdict"] != "cannot tell"]
    assert told["across"] == len(decided) / len(across) > 0.3
    level = {"en-de": -10, "en-ja": 0, "en-zh": 10}
    truth = [level[a] + 2 * int(x[1:]) > level[b] + 2 * int(y[1:])
             for a, x, b, y in decided[["group_a", "system_a", "group_b", "system_b"]].itertuples(index=False)]
    said = (decided["verdict"] == "A better").to_list()
    assert np.mean(np.array(truth) == np.array(said)) >= 0.95
    report = build_mt_report(analysis)
    assert report.summary["which_cells_differ"]["across"] == told["across"]
    section = next(s for s in report.sections if s.id == "pairs")
    assert f"{len(decided)} of 75 ({len(decided) / 75:.0%}) are told apart" in section.paragraphs[0]
    # a third and more decided: nothing to say about more labels; the verdicts across groups come in blocks
    assert not any("the labels decide" in n for n in again.notes)
    assert [n for n in again.notes if "come in blocks" in n] == [
        "verdicts across lp come in blocks: the cells of a group share the error of its offset, so the verdicts "
        "between two groups stand or fall together (each 'X vs Y' line is one piece of evidence)"]
    assert "come in blocks" in render_html(report)
    assert "Which cells differ" in render_html(report)
    # the calibration section states what the labels said between LGN's and the raw scale's prior
    facts = dict(next(s for s in report.sections if s.id == "calibration").facts)
    described = analysis.calibration.model.describe()
    weight, sd = described["lgn_weight"], described["lgn_weight_sd"]
    assert 0 <= weight <= 1 and 0 < sd <= 0.5  # a distribution on [0, 1] has an sd of at most 0.5
    fact = facts["weight of LGN's equal levels in the offsets' prior"]
    assert fact.startswith(f"{weight:.2f}, sd {sd:.2f} (0: the raw")


def test_no_pairs_where_the_calibrated_scale_is_not_the_human_one():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(_table(), "metric", human="human", method="lgn", resampling=Resampling(n_resamples=100))
    assert analysis.pairs is None
    assert all(s.id != "pairs" for s in build_mt_report(analysis).sections)


def test_with_two_labelled_groups_the_report_says_each_keeps_its_own_offset():
    """Two pairs: the mixed prior claims no weight between LGN's levels and the raw scale's (each pair keeps its
    labels' offset, docs/calibration.md), and the calibration section says so instead of printing a weight."""
    two = _table()
    two = two[two["lp"] != "en-ja"].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(two, "metric", human="human", method="anchored", resampling=Resampling(n_resamples=50))
    model = analysis.calibration.model
    table = model.group_table()
    np.testing.assert_allclose(table["offset"], table["residual_mean"])
    facts = dict(next(s for s in build_mt_report(analysis).sections if s.id == "calibration").facts)
    assert facts["weight of LGN's equal levels in the offsets' prior"].startswith(
        "none: with two labelled groups each keeps its own labels' offset")
