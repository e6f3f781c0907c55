"""The leaderboard and the report fit anchored calibration too: they take its direction of the human
scale and its bounds (``--human-higher-is-better/--human-lower-is-better``, ``--human-range``), as
``calibrate fit`` does."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from xleval.calibration import AnchoredCalibrator, HumanScale
from xleval.cli import main
from xleval.leaderboard import leaderboard
from xleval.stats import Resampling


def _table(seed: int = 0) -> pd.DataFrame:
    """Raw-DA-like labels near the top of a 0-100 scale: an unbounded line puts good systems above 100."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, shift in (("de-en", 0.0), ("ja-en", -10.0), ("ha-en", 5.0)):
        for s in range(6):
            quality = 6.0 * s
            for seg in range(40):
                x = 40 + shift + quality + rng.normal(0, 8)
                human = min(100.0, 70 + 2.0 * quality + 0.3 * (x - 40 - shift - quality) + rng.normal(0, 3))
                rows.append({"lp": g, "system": f"{g}-s{s}", "seg_id": seg, "doc_id": seg // 10, "score": x,
                             "human": human if seg % 4 == 0 else np.nan})
    return pd.DataFrame(rows)


def _board(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return leaderboard(_table(), "score", "lp", human="human", method="anchored",
                           resampling=Resampling(n_resamples=50), **kwargs)


def test_a_declared_range_keeps_calibrated_system_means_inside():
    free = _board()
    assert free.rows["calibrated"].max() > 100  # the line leaves the scale: the case the bounds are for
    bounded = _board(human_scale=HumanScale(range=(0.0, 100.0)))
    assert bounded.rows["calibrated"].max() <= 100 and bounded.rows["calibrated"].min() >= 0
    # the bounds clip; they do not move the line elsewhere (the two maps' cells, without the cells' own labels,
    # which would move each cell toward them by a weight the clipped rows change)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unbounded map's system means leave [0, 100]: the case
        maps = [AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True,
                                   human_range=bounds).fit(_table()) for bounds in (None, (0.0, 100.0))]
        lines = [leaderboard(_table().drop(columns="human"), "score", "lp", model=m,
                             resampling=Resampling(n_resamples=50)).rows.set_index(["group", "system"])["calibrated"]
                 for m in maps]
    assert lines[0].max() > 100 and lines[1].max() <= 100
    inside = lines[0] < 100
    assert np.allclose(lines[1][inside], lines[0][inside].loc[lines[1][inside].index])


def test_a_given_direction_reaches_the_fit():
    down = _board(human_scale=HumanScale(higher_is_better=False))  # contradicts the labels: offsets only, warned
    up = _board(human_scale=HumanScale(higher_is_better=True))
    assert up.rows.groupby("group")["calibrated"].nunique().min() > 1  # systems ordered within a group
    # against the labels: no slope is used (each cell then moves only toward its own labels' mean)
    assert any("against the direction of the human scale: it is not used" in n for n in down.notes)
    assert not any("against the direction of the human scale" in n for n in up.notes)


def test_the_commands_take_the_options(tmp_path, capsys):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["leaderboard", str(path), "--score", "score", "--human", "human", "--method", "anchored",
                     "--human-range", "0,100", "--human-higher-is-better", "--format", "json", "--n-resamples", "50"])
    assert code in (0, None), capsys.readouterr().err
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["leaderboard", str(path), "--score", "score", "--human", "human", "--human-range", "100,0"])
    err = capsys.readouterr().err
    assert code == 2 and "--human-range" in err and len(err.strip().splitlines()) == 1
