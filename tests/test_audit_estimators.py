"""E1/E3/E4 estimators, dose-response, family interaction and bad input on hand-checkable tables."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss
from statsmodels.stats.contingency_tables import mcnemar

from xleval.audit import (
    AUDIT_RESAMPLING,
    ESTIMATORS,
    audit,
    dose_response,
    family_interaction,
    prepare_audit_table,
    render_checklist,
)
from xleval.exceptions import InputError

FAST = dict(n_resamples=200, n_permutations=199, random_state=0)
AUDIT_FAST = dict(resampling=AUDIT_RESAMPLING.with_(n_resamples=200, random_state=0), n_permutations=199)


def _table(rows):
    return pd.DataFrame(rows, columns=["item_id", "model", "condition", "correct"])


def _paired_rows(model, a_cond, b_cond, a, b, prefix="q"):
    rows = [(f"{prefix}{i}", model, a_cond, x) for i, x in enumerate(a)]
    rows += [(f"{prefix}{i}", model, b_cond, x) for i, x in enumerate(b)]
    return rows


def test_e1_per_model_matches_hand_count_and_mcnemar():
    a = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1]
    b = [0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1]
    res = audit(_table(_paired_rows("m", "source", "back_translated", a, b)), **AUDIT_FAST)
    c = res.contrast("E1", "m")
    assert c.estimate == pytest.approx(np.mean(a) - np.mean(b))
    assert c.discordant == (5, 1)  # a right & b wrong, a wrong & b right
    oracle = mcnemar([[4, 5], [1, 2]], exact=True).pvalue
    assert c.p_value == pytest.approx(oracle)
    assert c.p_value == pytest.approx(ss.binomtest(1, 6, 0.5).pvalue)  # exact McNemar = binomial on discordant pairs
    assert c.ci_low <= c.estimate <= c.ci_high
    assert res.family_interaction is not None and not res.family_interaction.tested
    assert any("only 1 model" in n for n in res.family_interaction.notes)


def test_pooled_averages_models_within_item_and_weights_items_equally():
    rows = _paired_rows("m1", "translated", "naturalized", [1, 1, 0, 1], [0, 1, 0, 0])
    rows += _paired_rows("m2", "translated", "naturalized", [1, 0], [1, 0])  # m2 scored only q0, q1
    c = audit(_table(rows), **AUDIT_FAST).contrast("E4")
    item_diffs = [np.mean([1, 0]), np.mean([0, 0]), 0, 1]
    assert c.estimate == pytest.approx(np.mean(item_diffs))
    assert c.n_a == 4 and c.test.startswith("permutation-paired")


def test_item_in_one_condition_only_is_counted_and_excluded():
    rows = _paired_rows("m", "source", "back_translated", [1, 0, 1, 1], [0, 0, 1, 0])
    rows.append(("extra", "m", "source", 1))
    res = audit(_table(rows), **AUDIT_FAST)
    c = res.contrast("E1", "m")
    assert c.n_unpaired == 1 and c.n_a == 4
    assert c.estimate == pytest.approx(0.5)
    assert res.items_single_condition == 1
    assert any("only one of source/back_translated" in n for n in res.notes)


def test_e3_is_an_unpaired_difference_of_means():
    rows = [(f"t{i}", "m", "translated", x) for i, x in enumerate([1, 1, 0, 1, 1])]
    rows += [(f"n{i}", "m", "native", x) for i, x in enumerate([0, 1, 0])]
    res = audit(_table(rows), **AUDIT_FAST)
    c = res.contrast("E3", "m")
    assert c.estimate == pytest.approx(0.8 - 1 / 3)
    assert (c.n_a, c.n_b, c.paired) == (5, 3, False)
    assert c.test == "permutation-two-sample"
    assert "external-validity" in res.estimators["E3"]["not_identified"]


def test_invalid_policy_sensitivity_and_model_without_valid_parses():
    df = pd.DataFrame({
        "item_id": [f"q{i}" for i in range(6)] * 4,
        "model": ["good"] * 12 + ["broken"] * 12,
        "condition": (["source"] * 6 + ["back_translated"] * 6) * 2,
        "answer": "A",
        "response": ["A", "A", "A", "no", "A", "B"] + ["A", "B", "A", "A", "B", "B"] + ["?"] * 12,
    })
    res = audit(df, **AUDIT_FAST)
    assert res.models_without_valid_parses == ("broken",)
    assert "broken" in res.flagged_models
    wrong = res.contrast("E1", "good")
    excluded = res.contrast("E1", "good", policy="exclude")
    assert wrong.estimate == pytest.approx(4 / 6 - 3 / 6)  # the unparsable 'no' (q3, source) counted wrong
    assert excluded.estimate == pytest.approx(4 / 5 - 2 / 5) and excluded.n_a == 5  # q3 dropped from both sides
    assert res.contrast("E1", "broken", policy="exclude") is None
    assert res.contrast("E1", "broken").acc_a == 0.0  # counted wrong: zero accuracy, and flagged
    text = render_checklist(res)
    assert "models with no valid parse at all: broken" in text


def test_dose_response_threshold_split_matches_hand_means():
    rows = []
    diffs = {"q0": (1, 0), "q1": (1, 0), "q2": (1, 1), "q3": (0, 0), "q4": (1, 1), "q5": (0, 1)}
    for item, (t, n) in diffs.items():
        rows += [(item, "m", "translated", t), (item, "m", "naturalized", n)]
    df = _table(rows)
    df["residual"] = df["item_id"].map({"q0": 5, "q1": 4, "q2": 4, "q3": 1, "q4": 2, "q5": 1})
    spec = ESTIMATORS["E4"]
    out, notes = dose_response(prepare_audit_table(df), spec, threshold=4, **FAST)
    assert notes == ()
    assert out.high.estimate == pytest.approx(2 / 3) and out.low.estimate == pytest.approx(-1 / 3)
    assert out.contrast == pytest.approx(1.0) and out.split == "pre-declared threshold"
    median, _ = dose_response(prepare_audit_table(df), spec, **FAST)
    assert median.threshold == pytest.approx(3.0)  # median of 5,4,4,1,2,1
    no_res, why = dose_response(prepare_audit_table(df.drop(columns="residual")), spec)
    assert no_res is None and "no 'residual'" in why[0]


def test_family_interaction_detects_a_planted_family_difference():
    rng = np.random.default_rng(5)
    rows = []
    for model, family, effect in [("a1", "A", 0.4), ("a2", "A", 0.4), ("b1", "B", 0.0), ("b2", "B", 0.0)]:
        p = rng.uniform(0.2, 0.5, 300)
        t, n = rng.random(300) < p + effect, rng.random(300) < p
        rows += [(f"q{i}", model, family, "translated", int(x)) for i, x in enumerate(t)]
        rows += [(f"q{i}", model, family, "naturalized", int(x)) for i, x in enumerate(n)]
    df = pd.DataFrame(rows, columns=["item_id", "model", "model_family", "condition", "correct"])
    out = family_interaction(prepare_audit_table(df), ESTIMATORS["E4"])
    assert out.tested and out.df == 1 and out.grouping == "model_family"
    assert out.p_value < 1e-4
    assert out.effects["A"] > 0.3 and abs(out.effects["B"]) < 0.1
    same = df.assign(model_family="one")
    out1 = family_interaction(prepare_audit_table(same), ESTIMATORS["E4"])
    assert not out1.tested and "one family" in out1.notes[0]


@pytest.mark.parametrize("bad, message", [
    ({"condition": "english?"}, "not a condition"),
    ({"correct": 2}, "not 0 or 1"),
])
def test_bad_values_are_input_errors(bad, message):
    df = _table(_paired_rows("m", "source", "back_translated", [1, 0], [0, 0]))
    for col, value in bad.items():
        df.loc[0, col] = value
    with pytest.raises(InputError, match=message):
        audit(df)


def test_duplicates_and_missing_columns_are_input_errors():
    df = _table(_paired_rows("m", "source", "back_translated", [1, 0], [0, 0]))
    with pytest.raises(InputError, match="repeat item"):
        audit(pd.concat([df, df.iloc[:1]]))
    with pytest.raises(InputError, match="missing column"):
        audit(df.drop(columns="model"))
    with pytest.raises(InputError, match="correct"):
        audit(df.drop(columns="correct"))


def test_condition_aliases_and_no_estimator_note():
    df = _table(_paired_rows("m", "Back-Translated", "source", [1, 0], [0, 0]))
    res = audit(df, **AUDIT_FAST)
    assert res.contrast("E1", "m") is not None
    assert any("E4 (naturalization contrast) not run" in n for n in res.notes)
    assert "estimators not run for lack of conditions: E3, E4" in render_checklist(res)


def test_cluster_by_subject_resamples_subjects_and_says_mcnemar_is_unclustered():
    from xleval.audit import simulate_audit_data

    df, _ = simulate_audit_data(n_items=80, n_models=2, n_native=20, n_subjects=8, random_state=6)
    plain = audit(df, **AUDIT_FAST)
    clustered = audit(df, cluster_by_subject=True, **AUDIT_FAST)
    c, p = clustered.contrast("E1", "model-0"), plain.contrast("E1", "model-0")
    assert c.estimate == pytest.approx(p.estimate)  # clustering changes the uncertainty, not the estimate
    assert "cluster" in c.ci_method and "cluster" not in p.ci_method
    assert any("McNemar treats items as independent" in n for n in c.notes)
    assert clustered.contrast("E1").test.endswith("-clustered")
