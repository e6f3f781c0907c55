"""The system-score figure says when a system's human value is the mean of a few labels: on WMT21 raw DA with 100
labels per pair (about 6 per system) its vertical axis said "human (system mean)", and systems spread from 20 to
100 on one or two labels each, which reads as the systems' quality."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from _three_pairs import three_pairs
from xleval.leaderboard import leaderboard
from xleval.report import analyze_mt, build_mt_report, leaderboard_report
from xleval.stats import Resampling


def _table(labels: int | None, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = three_pairs(rng, (-5.0, 0.0, 5.0))
    if labels is None:
        return frame
    keep = np.zeros(len(frame), bool)
    keep[rng.choice(len(frame), labels, replace=False)] = True
    return frame.assign(human=frame["human"].where(keep))


def _figure(sections):
    return next(f for s in sections for f in s.figures if f.title == "System scores against human scores")


def test_the_figure_says_a_systems_human_value_is_the_mean_of_its_labels():
    frame = _table(labels=90)
    per_system = frame.groupby(["lp", "system"])["human"].count()
    words = (f"A system's human value is the mean of its labels ({np.median(per_system):g} per system, median; "
             f"{per_system.min()} to {per_system.max()}), not of all its segments")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(frame, "metric", human="human", method="anchored", resampling=Resampling(n_resamples=50))
        board = leaderboard(frame, "metric", "lp", human="human", method="anchored",
                            resampling=Resampling(n_resamples=50))
    for figure in (_figure(build_mt_report(analysis).sections), _figure(leaderboard_report(board).sections)):
        assert words in figure.caption
        assert {y for _, y in figure.axes} == {"human (mean of the labels)"}


def test_every_segment_judged_keeps_the_system_mean():
    frame = _table(labels=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(frame, "metric", human="human", method="anchored", resampling=Resampling(n_resamples=50))
    figure = _figure(build_mt_report(analysis).sections)
    assert "mean of its labels" not in figure.caption
    assert {y for _, y in figure.axes} == {"human (system mean)"}
