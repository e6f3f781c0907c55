"""Issue 34, item 3: no Python class name in the text of the report, the leaderboard or the validity check
(a warning's category, a calibrator's class, a constructor call)."""
import numpy as np
import pandas as pd

from xleval.calibration import AnchoredCalibrator
from xleval.diagnostics import check_lgn_validity
from xleval.leaderboard import leaderboard
from xleval.report import leaderboard_text
from xleval.report._sections import alert_from_warning
from xleval.stats import Resampling


def test_a_warning_category_is_not_shown():
    alert = alert_from_warning("SomeNewKindOfWarning: the groups have 3 rows")
    assert alert.message == "the groups have 3 rows"
    assert alert_from_warning("plain note: kept whole").message == "plain note: kept whole"


def test_the_validity_warning_names_a_method_not_a_class():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"lp": np.repeat(["a", "b"], 200),
                       "human": np.r_[rng.normal(70, 10, 200), rng.normal(50, 10, 200)]})
    check = check_lgn_validity(df, "lp", "human")
    assert check.status == "violated" and "anchored calibration" in check.message
    assert "Calibrator" not in check.message


def test_a_saved_anchored_calibrator_is_described_in_words():
    rng = np.random.default_rng(1)
    rows = []
    for lp, shift in (("en-de", 0.0), ("en-fr", 5.0)):
        for s in range(4):
            x = rng.normal(50 + shift + 3 * s, 5, 30)
            rows.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(30), "m": x,
                                      "human": 20 + 0.8 * x + rng.normal(0, 3, 30)}))
    df = pd.concat(rows, ignore_index=True)
    model = AnchoredCalibrator(score="m", by="lp", human="human", system="system").fit(df)
    board = leaderboard(df, "m", "lp", model=model, resampling=Resampling(n_resamples=20))
    text = leaderboard_text(board)
    assert board.calibration["description"].startswith("saved anchored calibrator (by lp)")
    assert "AnchoredCalibrator" not in text and "Warning:" not in text
