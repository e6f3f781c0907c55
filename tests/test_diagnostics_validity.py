"""Validity check of LGN's equal-quality assumption on planted cases from xleval.synthetic.

Planted mismatches are in units of the human score's pooled within-language sd implied by the
model: with ``interaction_sd=0`` that sd is ``sqrt(system_sd^2 + 1 + human_noise^2)``.
"""
import numpy as np
import pandas as pd
import pytest

from xleval.decision import DEFAULT_PROCEDURE
from xleval.diagnostics import DESIGN_ADVICE, check_lgn_validity
from xleval.synthetic import simulate_mt_evaluation

SYSTEM_SD, HUMAN_NOISE = 0.5, 0.7
HUMAN_SD = np.sqrt(SYSTEM_SD**2 + 1 + HUMAN_NOISE**2)


def _calibration_split(seed, effect_sd=0.0, n_segments=200):
    sim = simulate_mt_evaluation(seed=seed, n_segments=n_segments, interaction_sd=0.0, system_sd=SYSTEM_SD,
                                 human_noise=HUMAN_NOISE, language_effect={"zh": effect_sd * HUMAN_SD})
    return sim.data[sim.data.split == "calibration"]


def test_untested_without_human_scores():
    df = pd.DataFrame({"tgt_lang": ["de", "fr"], "metric": [1.0, 2.0]})
    check = check_lgn_validity(df, "tgt_lang", None)
    assert check.status == "untested" and not check.warn and DESIGN_ADVICE in check.message
    assert check_lgn_validity(df.assign(human=np.nan), "tgt_lang", "human").status == "untested"


def test_hand_case_names_the_groups():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr", "sw"], 300),
                       "human": rng.normal(0, 1, 900) + np.repeat([0.0, 0.0, 1.0], 300)})
    check = check_lgn_validity(df, "tgt_lang", "human")
    assert check.status == "violated" and check.warn
    assert set(check.flagged_pairs) == {("sw", "de"), ("sw", "fr")}
    assert "sw > de" in check.message and "erase" in check.message


@pytest.mark.slow
@pytest.mark.parametrize("effect", [0.5, 0.75, 1.0])
def test_fires_on_every_planted_mismatch(effect):
    n_sims = 60
    fired = 0
    for seed in range(n_sims):
        check = check_lgn_validity(_calibration_split(seed, effect), "tgt_lang", "human")
        fired += check.warn
        if check.warn:
            assert all("zh" in pair for pair in check.flagged_pairs)  # only the planted language is named
    # the realised difference is the planted one up to ~0.03 sd of segment noise and the sd of the
    # drawn system skills (a few %), while the bound adds 1.645 * sqrt(2 / 1200) ~ 0.067 sd:
    # the model leaves no room for a miss
    assert fired == n_sims


@pytest.mark.slow
@pytest.mark.parametrize("n_segments", [5, 200])
def test_rarely_fires_on_matched_sets(n_segments):
    n_sims = 100
    fired = sum(check_lgn_validity(_calibration_split(1000 + s, 0.0, n_segments), "tgt_lang", "human").warn
                for s in range(n_sims))
    # firing needs a significant Kruskal-Wallis test at alpha = 0.05; allow 3 binomial sd of slack
    assert fired <= n_sims * 0.05 + 3 * np.sqrt(n_sims * 0.05 * 0.95)


def test_system_level_uses_the_spread_of_system_means():
    """A gap of 0.6 segment sd is small beside segment noise (sd 1) but large beside the spread of
    system means (sd 0.2): only the system-level check can call it."""
    rng = np.random.default_rng(5)
    rows = []
    for lang, shift in (("de", 0.0), ("zh", 0.6)):
        for s in range(12):
            quality = shift + rng.normal(0, 0.2)
            rows += [{"tgt_lang": lang, "system": f"s{s}", "human": quality + e} for e in rng.normal(0, 1, 40)]
    df = pd.DataFrame(rows)
    segment = check_lgn_validity(df, "tgt_lang", "human")
    system = check_lgn_validity(df, "tgt_lang", "human", system="system")
    assert segment.pairs["d"].iloc[0] < 1.0
    assert system.status == "violated" and system.pairs["d"].iloc[0] > 2.0
    assert system.groups["n"].tolist() == [12, 12]  # one observation per (language, system)
    with pytest.raises(Exception, match="system column"):
        check_lgn_validity(df, "tgt_lang", "human", system="nope")


def test_wmt21_system_quality_differs_between_language_pairs(wmt21_segments):
    """On WMT21 to-English the segment-level check passes but lps differ in system quality
    measured in system sd, which is what LGN of system scores assumes away."""
    judged = wmt21_segments[(wmt21_segments.human_n > 0) & ~wmt21_segments.is_human]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check_lgn_validity(judged, "lp", "human_raw").status == "holds"
        assert check_lgn_validity(judged, "lp", "human_raw", system="system").status == "violated"


@pytest.mark.parametrize("ddof", [0, 1])
def test_a_human_column_standardised_within_groups_is_uninformative(ddof):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr", "sw"], 200), "system": np.tile(np.repeat(["a", "b"], 100), 3),
                       "human": rng.normal(0, 1, 600) + np.repeat([0.0, 0.0, 2.0], 200)})
    df["z"] = df.groupby("tgt_lang")["human"].transform(lambda s: (s - s.mean()) / s.std(ddof=ddof))
    for system in (None, "system"):
        check = check_lgn_validity(df, "tgt_lang", "z", system=system)
        assert check.status == "uninformative" and check.warn and "\n" not in check.message
        assert "standardised within each group" in check.message
    assert check_lgn_validity(df, "tgt_lang", "human").status == "violated"


def test_centred_within_groups_is_uninformative_but_near_zero_means_are_not():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr"], 300), "human": rng.normal(50, 10, 600)})
    centred = df.assign(human=df["human"] - df.groupby("tgt_lang")["human"].transform("mean") + 3.0)
    check = check_lgn_validity(centred, "tgt_lang", "human")
    assert check.status == "uninformative" and "same human mean" in check.message
    # like DA z: standardised per annotator, lp means near 0 but not equal: the check still runs
    near = df.assign(human=(df["human"] - 50) / 10 + np.where(df.tgt_lang == "de", 0.03, -0.03))
    assert check_lgn_validity(near, "tgt_lang", "human").status != "uninformative"


@pytest.mark.data
def test_wmt21_raw_da_standardised_per_pair_is_uninformative(wmt21_segments):
    import warnings

    from xleval.decision import diagnose

    judged = wmt21_segments[(wmt21_segments.human_n > 0) & ~wmt21_segments.is_human].copy()
    judged["score"] = judged["hypothesis"].str.len().astype(float)
    judged["z"] = judged.groupby("lp")["human_raw"].transform(lambda s: (s - s.mean()) / s.std())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = diagnose(judged, "score", "lp", human="z",
                          procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))
    assert result.validity.status == result.validity_system.status == result.verdict.status == "uninformative"
    assert result.recommendation.method == "lgn" and result.recommendation.warn


def _labels(rng, n, sds, means=None):
    means = np.zeros(len(sds)) if means is None else np.asarray(means)
    h = np.concatenate([rng.normal(m, s, n) for m, s in zip(means, sds, strict=True)])
    return h, np.repeat([f"g{i}" for i in range(len(sds))], n)


def test_z_like_moments_allow_a_small_samples_spread_of_group_sds():
    from xleval.diagnostics import human_scale_check

    # 25 labels per group of a z column: a group's sample sd can fall below 0.5 (WMT21 DA z: the next test), so
    # a fixed band misses some samples; the sd's standard error at the band's edge (0.07 here) is allowed for
    rng = np.random.default_rng(3)
    h, g = _labels(rng, 25, [0.85] * 7)
    h[g == "g0"] = (h[g == "g0"] - h[g == "g0"].mean()) / h[g == "g0"].std(ddof=1) * 0.45  # sample sd 0.45
    assert human_scale_check(h, g, "human_z").standardised
    # ... but not a group whose sd is 0.2 (4 standard errors below the band's edge), nor a pooled sd of 2, nor
    # means of 1
    h2 = h.copy()
    h2[g == "g0"] = h[g == "g0"] / 0.45 * 0.2
    assert human_scale_check(h2, g, "human_z").status == "unknown"
    assert human_scale_check(*_labels(rng, 25, [2.0] * 7), "human_z").status == "unknown"
    assert human_scale_check(*_labels(rng, 25, [0.85] * 7, [1.0] * 7), "human_z").status == "unknown"
    # with many labels the band is what it was: a group sd of 0.45 from 1000 labels is not z-like
    h3, g3 = _labels(rng, 1000, [0.85] * 6 + [0.45])
    assert human_scale_check(h3, g3, "human_z").status == "unknown"


@pytest.mark.data
def test_wmt21_da_z_is_recognised_from_25_labels_per_pair_and_raw_da_is_not(wmt21_segments):
    from xleval.diagnostics import human_scale_check

    judged = wmt21_segments[(wmt21_segments.human_n > 0) & ~wmt21_segments.is_human]
    judged = judged[judged["lp"].str.endswith("-en")]
    rng = np.random.default_rng(0)
    seen = {"human_z": 0, "human_raw": 0}
    sds, outside = [], 0
    for _ in range(100):
        rows = np.concatenate([rng.choice(np.flatnonzero((judged["lp"] == lp).to_numpy()), 25, replace=False)
                               for lp in judged["lp"].unique()])
        sample = judged.iloc[rows]
        for column in seen:
            seen[column] += human_scale_check(sample[column].to_numpy(float), sample["lp"].to_numpy(),
                                              "human_z").standardised
        sd = sample.groupby("lp")["human_z"].std()
        sds.extend(sd)
        outside += bool(((sd < 0.5) | (sd > 1.5)).any())
    # per-annotator z (sd 0.81-0.89 per pair): a fixed band [0.5, 1.5] for every pair's sample sd misses the draws
    # where one pair's sd strays out of it; raw DA (sd ~25) is never taken for z
    print(f"WMT21 DA z, 25 labels per pair: pairs' sample sds {min(sds):.2f}-{max(sds):.2f}, outside [0.5, 1.5] in "
          f"{outside} of 100 draws; recognised in {seen['human_z']} of 100 draws")  # docs/calibration.md (-s)
    assert outside > 0  # the draws include the case the band's standard errors are for
    assert seen["human_z"] >= 93 and seen["human_raw"] == 0


@pytest.mark.data
@pytest.mark.parametrize("k", [10, 25, 100])
def test_wmt21_mqm_never_looks_like_a_z_scale(shared_data, k):
    """MQM error points (sd 2.8 en-de, 5.9 zh-en; means 1.4 and 5.0) and their negation, under a z-like name: the
    sample-aware band must not take a few labels of them for a z scale."""
    import pandas as pd

    from xleval.diagnostics import human_scale_check

    mqm = pd.read_parquet(shared_data("wmt21", "mqm_newstest2021.parquet"))
    rng = np.random.default_rng(k)
    for _ in range(50):
        rows = np.concatenate([rng.choice(np.flatnonzero((mqm["lp"] == lp).to_numpy()), k, replace=False)
                               for lp in ("en-de", "zh-en")])
        sample = mqm.iloc[rows]
        for sign in (1.0, -1.0):
            assert not human_scale_check(sign * sample["mqm"].to_numpy(float), sample["lp"].to_numpy(),
                                         "mqm_z").standardised
