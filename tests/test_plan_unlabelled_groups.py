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


def test_a_budget_below_one_label_per_group_names_the_group_left_without(tmp_path, cli):
    """A budget of 2 over three pairs leaves one pair without a label, and anchored calibration then cannot fit at
    all; the warning said only that "some systems get none"."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([{"lp": g, "system": f"s{s}", "seg_id": i, "chrf": rng.normal(50, 5), "labels": np.nan}
                          for g in ("de-en", "ja-en", "cs-en") for s in range(3) for i in range(20)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = plan_labels(frame, "lp", 2, score="chrf", human="labels")
    left = [g for g, n in zip(plan.groups["group"], plan.groups["planned"], strict=True) if n == 0]
    assert len(left) == 1
    said = " ".join(str(w.message) for w in caught)
    assert f"budget=2 leaves group(s) {left[0]} without a label" in said and "give at least 3" in said
    path = tmp_path / "t.tsv"
    frame.to_csv(path, sep="\t", index=False)
    r = cli("calibrate", "plan", path, "--score", "chrf", "--human", "labels", "--budget", "2")
    assert r.exit_code == 0, r.stderr
    assert f"--budget 2 leaves group(s) {left[0]} without a label" in " ".join(r.stderr.split())
