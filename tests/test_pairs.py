"""Which cells differ (issue 33, item 2): every pair of (group, system) cells with the interval of the
difference from the leaderboard's joint draws and a verdict; coverage checked on simulated worlds whose
cell means are known."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import import_example
from xleval.calibration import HumanScale, cell_pairs
from xleval.leaderboard import leaderboard
from xleval.stats import Resampling


def _examples():
    return import_example("calibration_simulation")


def test_intervals_are_percentiles_of_the_differences_of_the_draws_and_verdicts_read_the_direction():
    rng = np.random.default_rng(0)
    draws = np.column_stack([rng.normal(10, 1, 4000), rng.normal(5, 1, 4000), rng.normal(9.5, 1, 4000)])
    points = np.array([10.0, 5.0, 9.5])
    pairs = cell_pairs(["x", "x", "y"], ["a", "b", "c"], points, draws, level=0.9)
    t = pairs.table
    assert list(zip(t["system_a"], t["system_b"], strict=True)) == [("a", "b"), ("a", "c"), ("b", "c")]
    for (i, j), row in zip([(0, 1), (0, 2), (1, 2)], t.itertuples(), strict=True):
        d = draws[:, i] - draws[:, j]
        assert row.difference == points[i] - points[j]
        assert row.diff_low == pytest.approx(np.quantile(d, 0.05), abs=1e-12)
        assert row.diff_high == pytest.approx(np.quantile(d, 0.95), abs=1e-12)
    assert t["verdict"].tolist() == ["A better", "cannot tell", "B better"]
    assert t["scope"].tolist() == ["within", "across", "across"]
    lower = cell_pairs(["x", "x", "y"], ["a", "b", "c"], points, draws, level=0.9, higher_is_better=False)
    assert lower.table["verdict"].tolist() == ["B better", "cannot tell", "A better"]
    assert pairs.declared() == {"within": 1.0, "across": 0.5, "all": 2 / 3}
    assert cell_pairs(["x", "x", "y"], ["a", "b", "c"], points, draws, scope="across").table.shape[0] == 2


def test_an_error_shared_by_two_cells_cancels_in_their_difference():
    """Two cells of one group share a large offset error (sd 10): each marginal interval is wide and they
    overlap, but their difference (true 3, sd 0.5 apart from the shared error) is declared; a cell of another
    group, 3 above on average with its own offset error, is not."""
    rng = np.random.default_rng(1)
    shared, other = rng.normal(0, 10, 4000), rng.normal(0, 10, 4000)
    draws = np.column_stack([13 + shared + rng.normal(0, 0.3, 4000), 10 + shared + rng.normal(0, 0.3, 4000),
                             16 + other])
    t = cell_pairs(["g", "g", "h"], ["a", "b", "c"], np.array([13.0, 10.0, 16.0]), draws).table
    assert t.loc[0, "verdict"] == "A better" and t.loc[0, "diff_high"] - t.loc[0, "diff_low"] < 2
    assert (t.loc[1:, "verdict"] == "cannot tell").all()


def test_leaderboard_pairs_come_from_the_same_draws_as_its_intervals():
    sim = _examples()
    frame, _ = sim.world(np.random.default_rng(3), "neither", 3, n_systems=4, n_labels=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(frame, "score", "lp", human="human", method="anchored",
                            resampling=Resampling(n_resamples=300), human_scale=HumanScale(higher_is_better=True))
    rows = board.rows
    pairs = board.pairs()
    t = pairs.table
    assert len(t) == len(rows) * (len(rows) - 1) // 2
    assert (t["scope"] == "within").sum() == 3 * 6
    cal = rows.set_index(["group", "system"])["calibrated"]
    np.testing.assert_allclose(t["difference"], cal.loc[list(zip(t.group_a, t.system_a, strict=True))].to_numpy()
                               - cal.loc[list(zip(t.group_b, t.system_b, strict=True))].to_numpy())
    # the board's draws are in rows order: their percentiles are the calibrated intervals
    low = np.quantile(board.draws, 0.025, axis=0)
    np.testing.assert_allclose(low, rows["calibrated_ci_low"])
    assert pairs.target == board.intervals["calibrated"]
    assert all(" vs " in line or ": within" in line for line in pairs.summary())


def test_coverage_of_the_true_differences_in_simulation():
    """The fast variant of examples/calibration_simulation.py's pairs study (2 worlds of each kind with 4 and 7
    groups, K = 100, 200 resamples): the 95% intervals of the differences cover the true difference of the
    cells' human means between 0.90 and 0.99 across groups and within, and at most 5% of the declared
    cross-group orders are wrong."""
    sim = _examples()
    study = sim.pairs_study(2, groups=(4, 7))
    for scope in ("across", "within"):
        assert 0.90 <= study[f"cover {scope}"].mean() <= 0.99, study[f"cover {scope}"].describe()
    assert study["n wrong across"].sum() <= 0.05 * study["n told across"].sum()
    assert study["n told across"].sum() > 0


def test_cli_pairs_file_tsv_and_json(tmp_path, cli):
    sim = _examples()
    frame, _ = sim.world(np.random.default_rng(4), "neither", 2, n_systems=3, n_labels=60)
    path = tmp_path / "w.tsv"
    frame.to_csv(path, sep="\t", index=False)
    base = ("leaderboard", path, "--score", "score", "--by", "lp", "--human", "human", "--method", "anchored",
            "--human-scale", "da", "--n-resamples", "100")
    rc, _, err = cli(*base, "--pairs", tmp_path / "p.tsv")
    assert rc == 0, err
    table = pd.read_csv(tmp_path / "p.tsv", sep="\t")
    assert list(table.columns) == ["group_a", "system_a", "group_b", "system_b", "scope", "difference", "diff_low",
                                   "diff_high", "verdict"]
    assert len(table) == 15 and set(table["verdict"]) <= {"A better", "B better", "cannot tell"}
    assert "pairs of cells" in err and "cs-en vs de-en:" in err
    rc, _, err = cli(*base, "--pairs", tmp_path / "p.json")
    assert rc == 0, err
    payload = json.loads((tmp_path / "p.json").read_text())
    assert len(payload["table"]) == 15 and payload["summary"] and set(payload["declared"]) == {"within", "across",
                                                                                               "all"}


def test_share_words_keep_a_decimal_only_where_a_share_would_round_to_0_or_100_percent():
    from xleval.calibration._pairs import share_words

    assert share_words(19, 4197) == "19 of 4,197 (0.5%)"  # not "0%" beside 19 decided pairs
    assert share_words(0, 753) == "0 of 753 (0%)"
    assert share_words(30, 75) == "30 of 75 (40%)"
    assert share_words(995, 1000) == "995 of 1,000 (99.5%)"
    assert share_words(1000, 1000) == "1,000 of 1,000 (100%)"
    assert share_words(0, 0) == "none"


def test_a_verdict_prints_its_three_numbers_to_one_precision():
    from xleval.calibration._pairs import _pair_words

    row = pd.Series({"group_a": "cs-en", "system_a": "A", "group_b": "ha-en", "system_b": "B", "verdict": "A better",
                     "difference": 11.2345, "diff_low": 0.0763, "diff_high": 22.5432})
    assert _pair_words(row) == "cs-en/A above ha-en/B (+11.2 [0.1, 22.5])"  # was (+11.2 [0.0763, 22.5])
    row = row.copy()
    row.update({"verdict": "B better", "difference": -0.12345, "diff_low": -0.40123, "diff_high": -0.0123})
    assert _pair_words(row) == "ha-en/B above cs-en/A (-0.123 [-0.401, -0.012])"


def test_the_summary_folds_the_pairs_of_groups_without_a_verdict_into_one_line():
    # with 7 language pairs the summary printed 28 lines, 25 of them "0 of N pair(s) differ" (WMT21 raw DA, 100 labels
    # per pair); with WMT25's 31 pairs it would print 496
    from xleval.calibration import cell_pairs

    rng = np.random.default_rng(0)
    points = np.array([10.0, 0.0, 0.0, 0.0])
    noise = rng.normal(size=(400, 4)) * np.array([0.1, 0.1, 100.0, 100.0])  # g3's cells: nothing can be told
    pairs = cell_pairs(["g1", "g2", "g3", "g3"], ["A", "B", "C", "D"], points, points + noise)
    lines = pairs.summary()
    assert len(lines) == 2 and lines[0].startswith("g1 vs g2: 1 of 1 pair(s) differ; e.g. g1/A above g2/B (+10")
    assert lines[1] == ("no verdict in the other 3 of 4 pairs of groups or groups within (5 pairs of cells; cannot "
                        "tell at 95%): g1 vs g3; g2 vs g3; g3: within")
    assert pairs.summary(named=2)[1].endswith("): g1 vs g3; g2 vs g3; and 1 more")
    quiet = cell_pairs(["g2", "g3", "g3"], ["B", "C", "D"], points[1:], (points + noise)[:, 1:])
    assert quiet.summary() == ["no verdict in any of the 2 pairs of groups or groups within (3 pairs of cells; "
                               "cannot tell at 95%): g2 vs g3; g3: within"]


def test_a_verdicts_bound_near_0_never_prints_as_0():
    # WMT21 raw DA, 100 labels per pair: ru-en/NVIDIA-NeMo above ha-en/TWB with the interval 0.039 to 18.3 printed
    # as [0.0, 18.3], which reads as touching 0 beside a verdict that says it does not
    from xleval.calibration._pairs import _pair_words

    row = pd.Series({"group_a": "ru-en", "system_a": "A", "group_b": "ha-en", "system_b": "B", "verdict": "A better",
                     "difference": 7.6742, "diff_low": 0.0389, "diff_high": 18.3313})
    assert _pair_words(row) == "ru-en/A above ha-en/B (+7.67 [0.04, 18.33])"
    # a lower-is-better scale (MQM error points): "A better" is an interval below 0, its bound nearest 0 the high one
    row = row.copy()
    row.update({"difference": -7.6742, "diff_low": -18.3313, "diff_high": -0.0021})
    assert _pair_words(row) == "ru-en/A above ha-en/B (-7.674 [-18.331, -0.002])"


def test_few_decided_comparisons_name_the_labels_per_system_and_the_plan_command(tmp_path, cli):
    sim = _examples()
    frame, _ = sim.world(np.random.default_rng(4), "lgn", 4, n_systems=5, n_labels=20)  # 4 labels per system
    path = tmp_path / "w.tsv"
    frame.to_csv(path, sep="\t", index=False)
    rc, _, err = cli("leaderboard", path, "--score", "score", "--by", "lp", "--human", "human", "--method",
                     "anchored", "--human-scale", "da", "--n-resamples", "100", "--pairs", tmp_path / "p.tsv")
    assert rc == 0, err
    table = pd.read_csv(tmp_path / "p.tsv", sep="\t")
    across = table[table["scope"] == "across"]
    told = int((across["verdict"] != "cannot tell").sum())
    assert told < 0.1 * len(across)
    flat = " ".join(err.split())
    assert f"a verdict for {told} of {len(across)} (" in flat
    assert f"note: the labels decide {told} of {len(across)} (" in flat and "about 4 human labels per system" in flat
    labels = int(frame["human"].notna().sum())  # 80: the plan asks for twice as many in all
    assert f"xleval calibrate plan {path} --budget {2 * labels} --score score --by lp --human human" in flat
    assert "xleval.calibration" not in flat  # the command line names its command, not the library's function
    assert ("note: verdicts across lp come in blocks" in flat) == (told > 0)


def test_verdicts_of_a_map_held_fixed_are_not_said_to_come_in_blocks():
    """Only the anchored draws carry the groups' offset errors; LGN's verdicts are the test-set bootstrap's."""
    sim = _examples()
    frame, _ = sim.world(np.random.default_rng(3), "neither", 3, n_systems=4, n_labels=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lgn = leaderboard(frame, "score", "lp", human="human", method="lgn", resampling=Resampling(n_resamples=200))
        anchored = leaderboard(frame, "score", "lp", human="human", method="anchored",
                               resampling=Resampling(n_resamples=200), human_scale=HumanScale(higher_is_better=True))
    assert lgn.pairs().counts()["across"][0] > 0 and not lgn.pairs().notes
    told = anchored.pairs().counts()["across"][0]
    assert any("come in blocks" in n for n in anchored.pairs().notes) == (told > 0)
