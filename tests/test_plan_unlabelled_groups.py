"""`calibrate plan` said the ranking across groups was "settled ... more labels are not needed" while a group had no
labels at all: that group has no level, so the gaps left it out. Its place in the ranking is unknown: not settled."""
import warnings

import numpy as np
import pandas as pd

from xleval.calibration import plan_labels


def _table() -> pd.DataFrame:
    """Three pairs 15 points apart (their order is clear from a few labels), 4 systems x 80 segments; 60 labels in
    de-en and ja-en, none in cs-en."""
    rng = np.random.default_rng(3)
    rows = []
    for g, level in (("de-en", 40.0), ("ja-en", 55.0), ("cs-en", 70.0)):
        for s in range(4):
            for i in range(80):
                score = level + 2 * s + rng.normal(0, 6)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": i, "chrf": score,
                             "labels": score + 10 + rng.normal(0, 3) if g != "cs-en" and i < 15 else np.nan})
    return pd.DataFrame(rows)


def test_a_group_without_labels_leaves_the_ranking_unsettled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = plan_labels(_table(), "lp", 150, score="chrf", human="labels")
    assert plan.status == "more"
    assert "cs-en have no labels yet" in plan.verdict and "not settled" in plan.verdict
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labelled = plan_labels(_table().query("lp != 'cs-en'"), "lp", 150, score="chrf", human="labels")
    assert labelled.status == "settled"  # the two labelled pairs alone: settled, as before
