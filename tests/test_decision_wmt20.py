"""The decision where LGN leads out of fold but the labels do not support its assumption: WMT20 raw DA out of English
(7 pairs, the organisers' segment chrF, MT systems only) with 100 random labels per pair
(examples/decision_check.py --wmt20 is the long run; docs/calibration.md)."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from xleval.decision import MARGIN, decide_calibration, fit_calibration

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OUT = "WMT20 raw DA, 7 out of English"


@pytest.fixture(scope="module")
def out_of_english(shared_data):
    """examples/decision_check.py's loader and draws (K = 100) on WMT20 out of English."""
    shared_data("wmt20-metrics", "segments.parquet")
    sys.path.insert(0, str(EXAMPLES))
    try:
        import decision_check
    finally:
        sys.path.remove(str(EXAMPLES))
    table = decision_check.load_wmt20(shared_data())[OUT]
    return decision_check, table, lambda seed: decision_check.draw(table, "human_raw", seed, "labels", 100)


@pytest.fixture(scope="module")
def draw_9(out_of_english):
    module, table, draw = out_of_english
    return module, table, draw(9)


@pytest.mark.data
@pytest.mark.parametrize(("seed", "status", "said"), [
    (9, "inconclusive", "the labels do not support LGN's equal-quality assumption (they cannot rule out a difference"),
    (16, "inconclusive", "the labels do not support LGN's equal-quality assumption (they cannot rule out a difference"),
])
def test_an_lgn_lead_out_of_fold_does_not_overrule_labels_that_leave_its_assumption_unsupported(out_of_english,
                                                                                               seed, status, said):
    """In these draws (9: the one of examples/decision_check.py's ten where LGN led; 16: a later one) LGN leads out
    of fold by more than the tolerance with a paired interval above 0, read against about 8 labels per held-out
    system, while the labels' test of equal quality cannot rule out a difference of 0.5 sd. (Draw 22, where the
    check is violated, led before the rows were put in their canonical order; since, LGN's lead there is 0.017,
    inside the tolerance, and none of draws 10-44 has a violated check beside a clear LGN lead:
    `tests/test_decision_evidence.py` builds one.) Against every label anchored calibration orders
    the cross-pair system pairs better in both, so anchored must be applied, and the reason must say why the lead
    did not decide."""
    module, table, draw = out_of_english
    sparse = draw(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decision = decide_calibration(sparse, "chrf", "lp", human="labels")
        fitted = {m: fit_calibration(sparse, m, score="chrf", by="lp", **({"human": "labels"} if m != "lgn" else {}))
                  for m in ("lgn", "anchored", "auto")}
    acc = decision.accuracy
    assert acc["lgn"] > max(acc["anchored"], acc["none"]) + MARGIN  # LGN led out of fold
    assert decision.evidence.verdict.status == status
    assert (decision.method, decision.calibrator, decision.basis) == ("anchored", "anchored", "assumption")
    assert said in decision.reason
    # the verdict says what its accuracies are read against: about 8 labels per held-out system (12 systems a pair)
    assert "the mean of each held-out system's own labels (8 per system, median)" in decision.paragraph
    assert fitted["auto"].method == "anchored"  # auto writes what it recommends
    truth = table.groupby(["lp", "system"])["human_raw"].mean()
    anchored, lgn = (module.applied_accuracy(sparse, fitted[m].model, truth) for m in ("anchored", "lgn"))
    assert anchored > lgn + MARGIN, (anchored, lgn)


@pytest.mark.data
def test_calibrate_evaluate_and_diagnose_say_the_same_reason(draw_9, tmp_path, cli_said):
    _, _, sparse = draw_9
    path = tmp_path / "k100.parquet"
    sparse.drop(columns=["human_raw"]).to_parquet(path)
    said = cli_said("calibrate", "evaluate", path, "--score", "chrf", "--by", "lp", "--human", "labels")
    assert "Trust anchored calibration here" in said and "do not support LGN's equal-quality assumption" in said
    # the budget curve is read against the same 8 labels per system, and says so
    assert "labels per group matches the better of raw and LGN" in said
    assert "measured against the same few labels per system" in said
    said = cli_said("diagnose", path, "--score", "chrf", "--by", "lp", "--human", "labels")
    assert "use anchored calibration" in said and "do not support LGN's equal-quality assumption" in said


@pytest.mark.data
def test_the_out_of_fold_comparison_misranks_lgn_and_anchored_at_100_labels_per_pair(out_of_english):
    """The finding behind the rules above and the verdict's yardstick sentence (examples/comparison_yardstick.py,
    docs/calibration.md, "What the out-of-fold comparison measures"): read against about 8 labels per held-out
    system, the comparison's anchored-minus-LGN difference has the wrong sign in most of the 10 draws while the
    difference against every label is positive in all of them, and its 95% interval covers that difference in
    under half. If a change to the comparison makes it a reliable yardstick here, this fails: revisit the rules."""
    _, table, _ = out_of_english
    sys.path.insert(0, str(EXAMPLES))
    try:
        import comparison_yardstick
    finally:
        sys.path.remove(str(EXAMPLES))
    res = comparison_yardstick.run(table, 100, 10)
    covered = int(((res["low"] <= res["full"]) & (res["full"] <= res["high"])).sum())
    wrong_sign = int((np.sign(res["oof"]) != np.sign(res["full"])).sum())
    print(f"\nWMT20 out of English, K = 100: every-label difference {res['full'].mean():+.3f}, out of fold "
          f"{res['oof'].mean():+.3f}; wrong sign in {wrong_sign} of 10, covered in {covered} of 10")
    assert (res["full"] > 0).all()
    assert wrong_sign >= 7 and covered <= 4, (wrong_sign, covered)
    assert (res["applied"] != "lgn (evidence)").all()  # the rules keep LGN's misleading leads from deciding
