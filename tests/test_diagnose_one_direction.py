"""One direction of the human scale in one answer: where nothing states it, `diagnose`'s decision finds it in the
labels, and its agreement table read the same column as higher is better. On WMT21 MQM (error points) without
`--human-scale`, the table printed a cross-group accuracy of 0.844 while the recommendation beside it read 0.156
raw (the hand count: 10 of 64 cross-pair system pairs ordered as lower MQM = better)."""
import itertools
import warnings

import numpy as np
import pandas as pd

from xleval.decision import diagnose
from xleval.exceptions import DataQualityWarning


def _error_points() -> pd.DataFrame:
    """Three pairs x 5 systems x 60 segments, every segment judged in error points (lower is better) that fall
    clearly as the score rises within a pair, while the pairs' score levels run against their error levels."""
    rng = np.random.default_rng(7)
    rows = []
    for g, (level, errors) in {"a-x": (40.0, 2.0), "b-x": (55.0, 6.0), "c-x": (70.0, 10.0)}.items():
        for s in range(5):
            quality = rng.normal(0, 3)
            for i in range(60):
                score = level + 2.0 * quality + rng.normal(0, 4)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": i, "chrf": score,
                             "judged": max(0.0, errors - quality + rng.normal(0, 2))})
    return pd.DataFrame(rows)


def _hand_cross_group_accuracy(frame: pd.DataFrame) -> float:
    means = frame.groupby(["lp", "system"])[["chrf", "judged"]].mean()
    agree = total = 0
    for (a, ra), (b, rb) in itertools.combinations(means.iterrows(), 2):
        if a[0] == b[0]:
            continue
        total += 1
        agree += np.sign(ra["chrf"] - rb["chrf"]) == np.sign(rb["judged"] - ra["judged"])  # fewer errors: better
    return agree / total


def test_the_agreement_reads_the_human_column_as_the_decision_found_it():
    frame = _error_points()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        result = diagnose(frame, "chrf", "lp", human="judged")
    assert result.recommendation.evaluation.human_direction == -1  # the labels settle it: lower is better
    accuracy = result.agreement.scores["chrf"].cross_group_accuracy.estimate
    assert accuracy == _hand_cross_group_accuracy(frame)  # 8 of 75: the pairs' levels run against the errors
    assert any("read as lower is better, the direction the decision found in the labels" in n
               for n in result.agreement.notes)


def test_a_table_of_system_scores_is_read_in_the_direction_the_decision_found():
    # WMT20's systems.csv (one row per system, raw DA): no comparison ran on a table of system scores, and diagnose
    # said the labels "do not settle" the direction where calibrate fit settles it (z = 5.27); error points were
    # then read as higher is better, and every within-pair correlation came out negative. The decision now measures
    # such a table out of fold, and the agreement reads the direction it found there
    system_means = _error_points().groupby(["lp", "system"], as_index=False)[["chrf", "judged"]].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        result = diagnose(system_means, "chrf", "lp", human="judged")
    assert result.recommendation.evaluation.human_direction == -1
    within = result.agreement.scores["chrf"].system_within
    for lp, part in system_means.groupby("lp"):  # oracle: Pearson of chrF with the negated error points
        assert within[lp].estimate > 0
        assert np.isclose(within[lp].estimate, np.corrcoef(part["chrf"], -part["judged"])[0, 1])
    assert result.agreement.scores["chrf"].cross_group_accuracy.estimate == _hand_cross_group_accuracy(system_means)
    assert any("read as lower is better, the direction the decision found in the labels" in n
               for n in result.agreement.notes)
    # with too few systems for the folds nothing reads the labels: said so (it said "the labels do not settle it")
    four = system_means[system_means["system"] != "s4"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        result = diagnose(four, "chrf", "lp", human="judged")
    assert any("read as higher is better, as nothing states its direction and no out-of-fold comparison ran to read "
               "it in the labels" in n for n in result.agreement.notes)
