"""Gap analysis on small hand-checkable tables; elasticity and partial correlations against
scipy / statsmodels on the same numbers; small languages, paired items, error messages."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss
import statsmodels.api as sm

from xleval.exceptions import DataQualityWarning, InputError, PooledPairsWarning
from xleval.fairness import (
    ResourceFit,
    data_multiplier,
    fairness_gaps,
    fairness_gaps_by,
    resource_elasticity,
    typology_bias,
)
from xleval.stats import Resampling

# A published-shaped per-language table (accuracy in [0, 1], CC-100-like sizes in GiB).
ACC = {"en": 0.89, "fr": 0.85, "de": 0.86, "ru": 0.83, "ar": 0.83, "hi": 0.82, "sw": 0.78, "ur": 0.78}
SIZE = {"en": 300.8, "fr": 56.8, "de": 66.6, "ru": 278.0, "ar": 28.0, "hi": 20.2, "sw": 1.6, "ur": 5.7}


def _items(acc=ACC, n=60, seed=0, small=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lang, p in acc.items():
        k = (small or {}).get(lang, n)
        correct = (rng.random(k) < p).astype(float)
        rows += [{"lang": lang, "item": i, "correct": c, "size": SIZE.get(lang, 1.0)} for i, c in enumerate(correct)]
    return pd.DataFrame(rows)


def test_levels_and_ratios_follow_the_seed_semantics():
    df = _items()
    rep = fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=200, random_state=0))
    means = df.groupby("lang")["correct"].mean()
    for gap in rep.languages:
        assert gap.mean.estimate == pytest.approx(means[gap.language])
        assert gap.n == 60
        if gap.language != "en":
            assert gap.ratio.estimate == pytest.approx(means[gap.language] / means["en"])
            assert gap.difference.estimate == pytest.approx(means[gap.language] - means["en"])
        else:
            assert gap.ratio is None
    ratios = (means.drop("en") / means["en"]).to_numpy()
    assert rep.summary.mean.estimate == pytest.approx(np.mean(means))
    assert rep.summary.worst.estimate == pytest.approx(np.min(means))
    assert rep.summary.std.estimate == pytest.approx(np.std(means))  # ddof=0, as the seed
    assert rep.summary.mean_ratio.estimate == pytest.approx(ratios.mean())
    assert rep.summary.worst_ratio.estimate == pytest.approx(ratios.min())
    for est in (rep.summary.mean, rep.summary.worst, rep.summary.mean_ratio):
        assert est.ci_low <= est.estimate <= est.ci_high
        assert est.method == "bootstrap-stratified-percentile"


def test_language_codes_are_normalised_and_reference_found():
    df = _items({"EN": 0.9, "DE": 0.8, "zh-Hans": 0.7}, n=20)
    rep = fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=50, random_state=0))
    assert [g.language for g in rep.languages] == ["de", "en", "zh"]
    assert rep.reference == "en"


@pytest.mark.parametrize("tiny", [1, 2, 3, 5])
def test_tiny_language_never_crashes_and_is_flagged(tiny):
    df = _items(small={"sw": tiny})
    rep = fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=200, random_state=1))
    sw = rep.language("sw")
    assert sw.n == tiny
    assert np.isfinite(sw.ratio.estimate)
    if tiny == 1:  # one row: no spread to resample, so no interval (a zero-width one would claim certainty)
        assert np.isnan([sw.mean.ci_low, sw.mean.ci_high, sw.ratio.ci_low, sw.ratio.ci_high]).all()
        assert np.isnan(rep.summary.worst.ci_low) and any(n.startswith("no interval") for n in sw.ratio.notes)
    else:
        assert all(np.isfinite([sw.ratio.ci_low, sw.ratio.ci_high]))
    if tiny < 5:
        assert sw.mean.unreliable and sw.ratio.unreliable and rep.summary.worst.unreliable
        assert any(note.startswith("sw: unreliable") for note in sw.ratio.notes)  # names the language


def test_paired_items_resample_together():
    # Parallel items with shared difficulty: a language is right on an item iff it is easy enough.
    rng = np.random.default_rng(3)
    difficulty = rng.random(400)
    acc = {"en": 0.9, "de": 0.85, "sw": 0.7}
    rows = [{"lang": lang, "item": i, "correct": float(d < p)}
            for lang, p in acc.items() for i, d in enumerate(difficulty)]
    df = pd.DataFrame(rows)
    paired = fairness_gaps(df, "correct", "lang", item="item", resampling=Resampling(n_resamples=2000, random_state=0))
    indep = fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=2000, random_state=0))
    assert paired.design == "paired" and indep.design == "independent"
    x = {lang: (difficulty < p).astype(float) for lang, p in acc.items()}
    n = len(difficulty)
    for lang in ("de", "sw"):
        p, i = paired.language(lang).difference, indep.language(lang).difference
        assert p.estimate == pytest.approx(i.estimate)
        # analytic standard errors: sd of the paired differences vs the two independent variances
        se_paired = np.std(x[lang] - x["en"]) / math.sqrt(n)
        se_indep = math.sqrt((np.var(x[lang]) + np.var(x["en"])) / n)
        assert p.standard_error == pytest.approx(se_paired, rel=0.12)
        assert i.standard_error == pytest.approx(se_indep, rel=0.12)
        assert se_paired < 0.8 * se_indep


def test_paired_drops_incomplete_items_with_a_warning():
    df = _items(n=30)
    df = df[~((df["lang"] == "sw") & (df["item"] < 5))]
    with pytest.warns(DataQualityWarning, match="5 items missing"):
        rep = fairness_gaps(df, "correct", "lang", item="item", resampling=Resampling(n_resamples=50, random_state=0))
    assert {g.n for g in rep.languages} == {25}


def test_duplicate_items_point_to_model_split():
    df = pd.concat([_items(n=10).assign(model="a"), _items(n=10, seed=1).assign(model="b")])
    with pytest.raises(InputError, match=r"fairness_gaps_by\(\.\.\., model=\)"):
        fairness_gaps(df, "correct", "lang", item="item")
    reps = fairness_gaps_by(df, "model", "correct", "lang", item="item",
                            resampling=Resampling(n_resamples=50, random_state=0))
    assert set(reps) == {"a", "b"}


def test_floor_flags():
    df = _items({"en": 0.9, "am": 0.3, "sw": 0.52}, n=200, seed=5)
    rep = fairness_gaps(df, "correct", "lang", floor=0.5, resampling=Resampling(n_resamples=300, random_state=0))
    am, en = rep.language("am"), rep.language("en")
    assert am.below_floor and am.clearly_below_floor
    assert not en.below_floor and not en.clearly_below_floor


def test_lower_is_better_metric_worst_is_the_max():
    df = pd.DataFrame({"lang": ["en"] * 3 + ["ar"] * 3, "bpb": [1.0, 1.1, 0.9, 1.4, 1.5, 1.3]})
    rep = fairness_gaps(df, "bpb", "lang", higher_is_better=False,
                        resampling=Resampling(n_resamples=50, random_state=0))
    assert rep.summary.worst.estimate == pytest.approx(1.4)
    assert rep.language("ar").ratio.estimate == pytest.approx(1.4)


def test_z_scores_get_differences_not_ratios():
    df = pd.DataFrame({"lp": ["de-en"] * 6 + ["ha-en"] * 6,
                       "human_z": [0.1, 0.2, -0.1, 0.0, 0.3, 0.1, -0.2, -0.4, 0.0, -0.1, -0.3, -0.2]})
    rep = fairness_gaps(df, "human_z", "lp", reference="de-en", resampling=Resampling(n_resamples=100, random_state=0))
    ha = rep.language("ha-en")
    assert ha.ratio is None and rep.summary.mean_ratio is None
    assert ha.difference.estimate == pytest.approx(-0.2 - 0.1)
    assert any("ratio scale" in n for n in rep.notes)


def test_reference_absent_is_a_clear_error():
    with pytest.raises(InputError, match="reference language 'ja' is not in column 'lang'"):
        fairness_gaps(_items(n=5), "correct", "lang", reference="ja")
    rep = fairness_gaps(_items(n=5), "correct", "lang", reference=None,
                        resampling=Resampling(n_resamples=20, random_state=0))
    assert rep.summary.mean_ratio is None


def test_a_reference_without_the_region_its_column_writes_is_named_not_taken():
    # WMT25 writes target languages with a region (cs-CZ, sr-Latn-RS, sr-RS): --reference cs named no language
    df = pd.DataFrame({"lang": ["cs-CZ", "sr-Latn-RS", "sr-RS", "de-DE"] * 3, "score": np.arange(12.0) + 1})
    with pytest.raises(InputError, match=r"pick reference='cs-CZ', or pass reference=None"):
        fairness_gaps(df, "score", "lang", reference="cs")
    with pytest.raises(InputError, match=r"pick reference='sr-Latn-RS' or reference='sr-RS', or"):
        fairness_gaps(df, "score", "lang", reference="sr")
    with pytest.raises(InputError, match=r"pick one with reference=, or"):
        fairness_gaps(df, "score", "lang", reference="ja")
    pairs = pd.DataFrame({"lp": ["en-cs-CZ", "cs-de-DE", "en-de-DE"] * 3, "score": np.arange(9.0) + 1})
    with pytest.raises(InputError, match=r"pick reference='en-de-DE', or pass"):  # the pair's sides by language
        fairness_gaps(pairs, "score", "lp", reference="en-de")


def test_a_target_language_of_several_pairs_is_said_to_mix_them():
    # WMT25: --by tgt_lang put cs-de and en-de (two test sets) into one de-DE level without a word
    lp = ["cs-de", "en-de", "en-ja", "en-cs"] * 30
    df = pd.DataFrame({"lp": lp, "score": np.arange(120.0) % 7})
    rep = fairness_gaps(df, "score", "tgt_lang", reference=None, resampling=Resampling(n_resamples=20, random_state=0))
    said = [n for n in rep.notes if "several language pairs" in n]
    assert said == ["1 tgt_lang group(s) hold the rows of several language pairs, whose test sets differ: de (cs-de, "
                    "en-de); each such group's level mixes them; by='lp' keeps the pairs apart"]
    rep = fairness_gaps(df, "score", "lp", reference=None, resampling=Resampling(n_resamples=20, random_state=0))
    assert not [n for n in rep.notes if "several language pairs" in n]
    # the languages as the analysis reads them: 'DE' and 'de' are one language, of two pairs
    spelt = df.assign(tgt_lang=df["lp"].map({"cs-de": "DE", "en-de": "de", "en-ja": "ja", "en-cs": "cs"}))
    rep = fairness_gaps(spelt, "score", "tgt_lang", reference=None,
                        resampling=Resampling(n_resamples=20, random_state=0))
    assert [n for n in rep.notes if "several language pairs" in n] == said
    rep = fairness_gaps(df, "score", "src_lang", reference=None, resampling=Resampling(n_resamples=20, random_state=0))
    assert [n for n in rep.notes if "several language pairs" in n] == [
        "1 src_lang group(s) hold the rows of several language pairs, whose test sets differ: en (en-cs, en-de, "
        "en-ja); each such group's level mixes them; by='lp' keeps the pairs apart"]


def test_one_analysis_per_model_says_a_group_of_several_pairs_once_for_the_table():
    # WMT25 by tgt_lang with --model system: the note was said once a model (40 times), each naming its own pairs
    lp = ["cs-de", "en-de", "en-ja", "en-cs"] * 30
    df = pd.DataFrame({"lp": lp, "score": np.arange(120.0) % 7, "model": (["m1"] * 4 + ["m2"] * 4) * 15})  # all pairs
    df = pd.concat([df, df.loc[df["lp"] == "en-de"].assign(model="m3")], ignore_index=True)  # m3: en-de only
    with pytest.warns(PooledPairsWarning) as said:
        reports = fairness_gaps_by(df, "model", "score", "tgt_lang", reference=None,
                                   resampling=Resampling(n_resamples=20, random_state=0))
    assert [str(w.message) for w in said if w.category is PooledPairsWarning] == [
        "1 tgt_lang group(s) hold the rows of several language pairs, whose test sets differ: de (cs-de, en-de); each "
        "such group's level mixes them, and 1 system(s) have the rows of only some of their group's pairs (de: 1): "
        "they are scored on another test set than the others of their group; by='lp' keeps the pairs apart"]
    assert sorted(reports) == ["m1", "m2", "m3"]
    assert not [n for r in reports.values() for n in r.notes if "several language pairs" in n]


def test_missing_metric_values_are_counted_not_silently_dropped():
    df = _items(n=10)
    df.loc[[0, 3], "correct"] = np.nan
    with pytest.warns(DataQualityWarning, match="2 of 80 rows"):
        fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=20, random_state=0))


def test_missing_column_names_the_columns():
    with pytest.raises(InputError, match="no column 'f1'"):
        fairness_gaps(_items(n=5), "f1", "lang")


def test_same_seed_same_report():
    a = fairness_gaps(_items(), "correct", "lang", resampling=Resampling(n_resamples=100, random_state=9)).to_dict()
    b = fairness_gaps(_items(), "correct", "lang", resampling=Resampling(n_resamples=100, random_state=9)).to_dict()
    assert a == b


# ----------------------------------------------------------------------------- elasticity
def _lang_table():
    langs = list(ACC)
    return langs, np.array([ACC[lang] * 100 for lang in langs]), np.array([SIZE[lang] for lang in langs])


def test_elasticity_equals_statsmodels_ols():
    langs, perf, size = _lang_table()
    el = resource_elasticity(perf, size, langs, target_gain=5.0)
    ols = sm.OLS(perf, sm.add_constant(np.log(size))).fit()
    assert el.slope == pytest.approx(ols.params[1])
    assert el.intercept == pytest.approx(ols.params[0])
    assert el.r_squared == pytest.approx(ols.rsquared)
    assert el.p_value == pytest.approx(ols.pvalues[1])
    low, high = ols.conf_int(0.05)[1]
    assert (el.slope_ci_low, el.slope_ci_high) == pytest.approx((low, high))
    assert el.gain_per_doubling == pytest.approx(ols.params[1] * math.log(2))
    assert el.multiplier == pytest.approx(math.exp(5.0 / ols.params[1]))
    assert el.multiplier_ci_low == pytest.approx(math.exp(5.0 / high))
    assert el.multiplier_ci_high == pytest.approx(math.exp(5.0 / low))


def test_log_performance_model_is_stated_and_fitted_on_logs():
    langs, perf, size = _lang_table()
    el = resource_elasticity(perf, size, langs, log_performance=True, target_gain=1.05)
    fit = ss.linregress(np.log(size), np.log(perf))
    assert el.log_performance and el.slope == pytest.approx(fit.slope)
    assert el.multiplier == pytest.approx(1.05 ** (1 / fit.slope))
    assert el.gain_per_doubling == pytest.approx(2**fit.slope)


def test_few_languages_and_poor_fit_warn():
    with pytest.warns(DataQualityWarning, match="only 4 languages"):
        el = resource_elasticity([50, 60.5, 69.8, 80], [1, 10, 100, 1000], list("abcd"))
    assert el.notes and "unreliable" in el.notes[0]
    with pytest.warns(DataQualityWarning, match="poor fit"):
        resource_elasticity([50, 70, 49, 71, 52, 69], [1, 2, 4, 8, 16, 32], list("abcdef"))


def test_seed_worked_example_is_inconsistent():
    # Seed: amharic 31% -> 60% with b = 2.3 "needs exp((0.6-0.31)/2.3) ~ 1.13x the data".
    assert data_multiplier(0.60 - 0.31, 2.3) == pytest.approx(1.134, abs=1e-3)  # the seed's arithmetic
    # With the slope in points (2.3 points per e-fold of data), the gain must be in points too:
    assert data_multiplier(60 - 31, 2.3) == pytest.approx(math.exp(29 / 2.3))
    assert data_multiplier(60 - 31, 2.3) > 2.9e5


def test_elasticity_inside_the_report():
    df = _items(n=40)
    rep = fairness_gaps(df, "correct", "lang", resource="size", resource_fit=ResourceFit(target_gain=0.05),
                        resampling=Resampling(n_resamples=50, random_state=0))
    means = df.groupby("lang")["correct"].mean()
    sizes = df.groupby("lang")["size"].first()
    fit = ss.linregress(np.log(sizes[means.index]), means)
    assert rep.elasticity.slope == pytest.approx(fit.slope)
    assert rep.language("sw").resource == pytest.approx(1.6)


def test_resource_must_be_constant_within_a_language():
    df = _items(n=5)
    df.loc[0, "size"] = 1.0
    with pytest.raises(InputError, match="one value per language"):
        fairness_gaps(df, "correct", "lang", resource="size")


# ----------------------------------------------------------------------------- typology
def test_partial_correlation_equals_the_ols_t_test():
    rng = np.random.default_rng(2)
    n = 12
    log_size = rng.normal(3, 2, n)
    morph = rng.normal(0, 1, n)
    perf = 60 + 3 * log_size - 4 * morph + rng.normal(0, 2, n)
    (res,) = typology_bias(perf, {"morphology": morph}, np.exp(log_size))
    ols = sm.OLS(perf, sm.add_constant(np.column_stack([morph, log_size]))).fit()
    t = ols.tvalues[1]
    assert res.correlation.estimate == pytest.approx(np.sign(t) * math.sqrt(t**2 / (t**2 + ols.df_resid)))
    assert res.correlation.p_value == pytest.approx(ols.pvalues[1])
    assert res.controls == ("ln(size)",)


@pytest.mark.filterwarnings("ignore:resource elasticity")  # random accuracies: the fit is not the point here
def test_categorical_feature_becomes_indicators_and_script_is_derived():
    df = _items(n=30)
    rep = fairness_gaps(df, "correct", "lang", resource="size", typology=["script"],
                        resampling=Resampling(n_resamples=20, random_state=0))
    labels = {t.feature for t in rep.typology}
    assert labels == {"script=Arab", "script=Cyrl", "script=Deva", "script=Latn"}
    assert all(t.n_languages == 8 for t in rep.typology)


def test_typology_with_too_few_languages_is_flagged_not_raised():
    (res,) = typology_bias([1.0, 2.0, 3.0], {"order": [0, 1, 1]}, [1, 2, 3])
    assert math.isnan(res.correlation.estimate) and "unreliable" in res.notes[0]


def test_mt_table_by_target_language_from_lp():
    df = pd.DataFrame({"lp": ["en-de"] * 4 + ["en-ja"] * 4 + ["en-zh"] * 4,
                       "chrf": [60, 58, 59, 61, 36, 35, 37, 34, 30, 31, 29, 30.0]})
    rep = fairness_gaps(df, "chrf", "tgt_lang", reference="de", resampling=Resampling(n_resamples=50, random_state=0))
    assert [g.language for g in rep.languages] == ["de", "ja", "zh"]
    assert rep.language("zh").ratio.estimate == pytest.approx(30.0 / 59.5)


def test_derived_script_uses_the_varying_side_of_language_pairs():
    df = pd.DataFrame({"lp": ["en-de", "en-ru", "en-ja", "en-cs", "en-zh", "en-is"] * 2,
                       "chrf": [59, 56, 36, 50, 30, 53, 58, 57, 35, 51, 31, 54.0]})
    rep = fairness_gaps(df, "chrf", "lp", reference="en-de", typology=["script"],
                        resampling=Resampling(n_resamples=20, random_state=0))
    assert "script=Latn" in {t.feature for t in rep.typology}  # targets, not the constant source 'en'


@pytest.mark.slow
def test_ratio_interval_covers_the_true_ratio():
    # 0/1 correctness, 200 items per language: the 95% interval of acc_sw / acc_en should cover
    # the true 0.7 / 0.9 in about 95% of replications (Monte Carlo SE ~ 1.5% at 200 replications).
    rng = np.random.default_rng(11)
    truth, hits, reps = 0.7 / 0.9, 0, 200
    for r in range(reps):
        df = pd.DataFrame({"lang": ["en"] * 200 + ["sw"] * 200,
                           "correct": np.r_[rng.random(200) < 0.9, rng.random(200) < 0.7].astype(float)})
        rep = fairness_gaps(df, "correct", "lang", resampling=Resampling(n_resamples=500, random_state=r))
        ratio = rep.language("sw").ratio
        hits += ratio.ci_low <= truth <= ratio.ci_high
    assert 0.90 <= hits / reps <= 0.99


def test_one_row_per_language_gives_points_and_no_intervals():
    """Published aggregates (one row per language): the bootstrap drew the one row every time, and the table
    showed 0.800 [0.800, 0.800], a zero-width interval that claims certainty where there is no measure of it."""
    agg = pd.DataFrame({"lang": ["en", "de", "sw"], "acc": [0.9, 0.8, 0.5]})
    rep = fairness_gaps(agg, "acc", "lang", reference="en", resampling=Resampling(n_resamples=200, random_state=0))
    de = rep.language("de")
    assert (de.mean.estimate, de.ratio.estimate, de.difference.estimate) == pytest.approx((0.8, 0.8 / 0.9, -0.1))
    for est in (de.mean, de.ratio, de.difference, rep.language("en").mean, rep.summary.mean, rep.summary.worst):
        assert np.isnan(est.ci_low) and np.isnan(est.ci_high)
    assert rep.summary.mean.estimate == pytest.approx((0.9 + 0.8 + 0.5) / 3)
    # a reference of one row beside languages of many: every difference to it has no interval; their own means do
    mixed = pd.concat([pd.DataFrame({"lang": "de", "acc": np.linspace(0, 1, 20)}),
                       pd.DataFrame({"lang": ["en"], "acc": [0.9]})], ignore_index=True)
    rep = fairness_gaps(mixed, "acc", "lang", reference="en", resampling=Resampling(n_resamples=200, random_state=0))
    de = rep.language("de")
    assert np.isfinite([de.mean.ci_low, de.mean.ci_high]).all() and de.mean.ci_low < de.mean.ci_high
    assert np.isnan(de.difference.ci_low) and np.isnan(rep.language("en").mean.ci_high)
