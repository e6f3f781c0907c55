"""Bias diagnosis: hand tables, parity with scipy, the 0.5-sd rule, and recovery of planted bias."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from xleval.calibration import LGN
from xleval.diagnostics import compare_bias, diagnose_bias
from xleval.exceptions import DataQualityWarning, InputError
from xleval.synthetic import simulate_mt_evaluation


def test_hand_table_and_scipy_parity():
    df = pd.DataFrame({"g": list("aaaabbbb"), "s": [1.0, 2, 3, 4, 3, 4, 5, 6]})
    d = diagnose_bias(df, "s", "g", n_resamples=50)
    a = d.groups.set_index("group")
    assert a.loc["a", "mean"] == 2.5 and a.loc["b", "median"] == 4.5
    assert a.loc["a", "std"] == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert a.loc["a", "iqr"] == pytest.approx(np.subtract(*np.percentile([1, 2, 3, 4], [75, 25])))
    assert d.sd_of_means == pytest.approx(np.std([2.5, 4.5], ddof=1))
    assert d.kruskal.p_value == pytest.approx(ss.kruskal([1, 2, 3, 4], [3, 4, 5, 6]).pvalue)
    # SS_between / SS_total by hand: means 2.5 and 4.5, grand mean 3.5
    x = df.s.to_numpy()
    assert d.eta_squared.estimate == pytest.approx(8 * 1.0 / ((x - 3.5) ** 2).sum())
    # Cohen's d: (4.5 - 2.5) / pooled sd, pooled sd = sd of 1..4
    assert d.largest_smd.estimate == pytest.approx(2.0 / np.std([1, 2, 3, 4], ddof=1))
    assert d.largest_smd_pair == ("b", "a")
    assert d.calibration_advised and any("> 0.5" in r for r in d.reasons)


def test_rule_not_advised_below_threshold_and_threshold_option():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"g": np.repeat(["a", "b"], 500), "s": rng.normal(0, 1, 1000) + np.repeat([0, 0.2], 500)})
    d = diagnose_bias(df, "s", "g", n_resamples=50)
    assert not d.calibration_advised
    assert diagnose_bias(df, "s", "g", threshold=0.05, n_resamples=50).calibration_advised


def test_nan_rows_are_counted_and_bad_input_refused():
    df = pd.DataFrame({"g": list("aabbb"), "s": [1.0, np.nan, 2.0, 3.0, 4.0]})
    with pytest.warns(DataQualityWarning, match="1 of 5"):
        d = diagnose_bias(df, "s", "g", n_resamples=20)
    assert d.n == 4 and d.n_excluded == 1
    assert any("fewer than 2 rows" in n for n in d.notes)  # group a has one finite row left
    with pytest.raises(InputError, match="two groups"):
        diagnose_bias(df.assign(g="a").dropna(), "s", "g")
    with pytest.raises(InputError, match="nope"):
        diagnose_bias(df, "nope", "g")
    with pytest.raises(InputError, match="is not a number"):
        diagnose_bias(df.assign(s=["x", "1", "2", "3", "4"]), "s", "g")


def test_constant_scores_do_not_advise_calibration():
    df = pd.DataFrame({"g": list("aabb"), "s": [1.0, 1.0, 1.0, 1.0]})
    d = diagnose_bias(df, "s", "g", n_resamples=20)
    assert not d.calibration_advised and d.largest_smd is None


def _expected_group_moments(sim, split_rows):
    """Mean and sd of the metric per language implied by the generative model and the drawn truth."""
    q = sim.truth.pivot(index="system", columns="tgt_lang", values="true_quality")
    out = {}
    for lang, col in q.items():
        scale, offset = sim.scales[lang], sim.offsets[lang]
        mean = 50.0 + offset + scale * col.mean()
        sd = np.sqrt(scale**2 * (col.var(ddof=0) + 1.0) + 4.0**2)  # metric_noise = 4
        out[lang] = (mean, sd, np.sqrt(scale**2 + 4.0**2) / np.sqrt(split_rows))
    return out


def test_diagnose_recovers_planted_bias_and_calibration_removes_it():
    sim = simulate_mt_evaluation(seed=3)
    cal = sim.data[sim.data.split == "calibration"]
    ev = sim.data[sim.data.split == "evaluation"].reset_index(drop=True)
    ev["metric_lgn"] = LGN(score="metric").fit(cal).transform(ev)
    result = compare_bias(ev, "metric", "metric_lgn", "tgt_lang", n_resamples=100)
    n_rows = 6 * 200
    expected = _expected_group_moments(sim, n_rows)
    got = result.before.groups.set_index("group")
    for lang, (mean, _sd, se) in expected.items():
        # the group mean given the true cell qualities is normal with standard error `se`
        assert abs(got.loc[lang, "mean"] - mean) < 4.5 * se
    means = np.array([m for m, _, _ in expected.values()])
    tolerance = 4.5 * max(e[2] for e in expected.values())
    assert result.before.sd_of_means == pytest.approx(np.std(means, ddof=1), abs=tolerance)
    assert result.before.calibration_advised
    # After LGN every language's mean is the target 0 up to the calibration split's own sampling
    # error (se / sd per group, for both splits): sd of means is at most a few such errors.
    rel_se = max(se / sd for _, sd, se in expected.values())
    assert result.after.sd_of_means < 4.5 * np.sqrt(2) * rel_se
    assert not result.after.calibration_advised
    assert list(result.table.columns[:3]) == ["group", "n", "mean_before"]


def test_demo_carries_the_diagnosis():
    from xleval.demo import run_demo

    result = run_demo(seed=0)
    d = result.diagnosis
    assert d.bias.calibration_advised and not d.comparison.after.calibration_advised
    assert d.agreement.comparisons[0].b == "metric_lgn"
    assert "diagnosis" in result.to_dict()


def test_a_score_with_no_value_is_named_not_answered_with_another_grouping():
    """On WMT21 pairs without DA, `diagnose --score human_raw` (every value missing) said "'lp' has no group with
    finite scores ... group by 'tgt_lang'", which has no score either: the error now says what is missing."""
    df = pd.DataFrame({"lp": ["en-de", "en-ja"] * 3, "tgt_lang": ["de", "ja"] * 3, "score": np.nan})
    with pytest.raises(InputError, match=r"^score 'score' has no finite value on any of the 6 rows; name a column "
                                         r"with scores$") as raised:
        diagnose_bias(df, "score", "lp")
    assert raised.value.argument == "score"


def test_a_calibrated_column_missing_where_its_score_is_missing_is_not_said_twice():
    # the report on WMT20's systems.csv warned "score 'metric:COMET': 16 of 201 row(s) have no finite value" and again
    # "score 'metric:COMET_calibrated': 16 of 201 ..." for the same rows
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"lp": np.repeat(["a-b", "c-d"], 20), "m": rng.normal(size=40)})
    df.loc[[3, 25], "m"] = np.nan
    df["cal"] = df["m"] * 2.0  # missing exactly where m is
    with pytest.warns(DataQualityWarning) as caught:
        compare_bias(df, "m", "cal", "lp")
    said = [str(w.message) for w in caught if "no finite value" in str(w.message)]
    assert said == ["score 'm': 2 of 40 row(s) have no finite value and were left out"]
    other = df.assign(cal=df["cal"].where(df.index != 7))  # and one row more: said, it is the map's own
    with pytest.warns(DataQualityWarning) as caught:
        compare_bias(other, "m", "cal", "lp")
    said = [str(w.message) for w in caught if "no finite value" in str(w.message)]
    assert said == ["score 'm': 2 of 40 row(s) have no finite value and were left out",
                    "score 'cal': 3 of 40 row(s) have no finite value and were left out"]
