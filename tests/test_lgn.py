"""LGN: the seed's formula, exactness of online/chunked fitting, persistence, fallbacks, intervals."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xleval.calibration import LGN, calibration_summary
from xleval.exceptions import (
    DegenerateGroupWarning,
    InputError,
    ModelFileError,
    NotFittedError,
    SignatureMismatchError,
    SmallGroupWarning,
    UnseenGroupWarning,
)


def _table(n=4000, seed=0, langs=("de", "fr", "zh", "ja", "fi")):
    rng = np.random.default_rng(seed)
    tgt = rng.choice(langs, n)
    offset = {lang: i * 7.0 for i, lang in enumerate(langs)}
    scale = {lang: 1.0 + i for i, lang in enumerate(langs)}
    base = rng.normal(0, 1, n)
    score = np.array([offset[t] for t in tgt]) + np.array([scale[t] for t in tgt]) * base
    src = rng.choice(["en", "cs"], n)
    return pd.DataFrame({"lp": [f"{s}-{t}" for s, t in zip(src, tgt, strict=True)], "tgt_lang": tgt, "score": score})


def test_seed_formula_and_target_80_10():
    """The seed's reference: per-language mean and np.std (ddof=0), then * 10 + 80 (section 2.2, step 4)."""
    df = _table()
    lgn = LGN(by="tgt_lang", target=(80, 10)).fit(df)
    calibrated = lgn.transform(df)
    stats = df.groupby("tgt_lang")["score"].agg(mu="mean", sigma=lambda s: np.std(s.to_numpy()))
    expected = (df["score"] - df["tgt_lang"].map(stats["mu"])) / df["tgt_lang"].map(stats["sigma"]) * 10 + 80
    np.testing.assert_allclose(calibrated, expected, rtol=1e-12)
    per_group = pd.Series(calibrated).groupby(df["tgt_lang"]).agg(["mean", lambda s: np.std(s.to_numpy())])
    np.testing.assert_allclose(per_group.iloc[:, 0], 80, atol=1e-9)
    np.testing.assert_allclose(per_group.iloc[:, 1], 10, atol=1e-9)
    summary = calibration_summary(df["score"], calibrated, df["tgt_lang"])
    assert summary.sd_of_means_after < 1e-9 < summary.sd_of_means_before


@pytest.mark.parametrize("by", ["tgt_lang", "lp", ["lp", "tgt_lang"]])
@pytest.mark.parametrize("method", ["zscore", "robust", "quantile"])
def test_calibration_set_is_standardised(by, method):
    df = _table(seed=1)
    calibrated = LGN(by=by, method=method).fit(df).transform(df)
    keys = df[by] if isinstance(by, str) else df[by].astype(str).agg("|".join, axis=1)
    g = pd.Series(calibrated).groupby(keys.to_numpy())
    if method == "zscore":
        np.testing.assert_allclose(g.mean(), 0, atol=1e-9)
        np.testing.assert_allclose(g.std(ddof=0), 1, atol=1e-9)
    elif method == "robust":  # median 0 exactly; MAD*1.4826 = 1
        np.testing.assert_allclose(g.median(), 0, atol=1e-9)
        mad = g.apply(lambda s: np.median(np.abs(s - np.median(s))) * 1.482602218505602)
        np.testing.assert_allclose(mad, 1, atol=1e-9)
    else:  # every group maps onto the same normal scores: identical distributions across groups
        np.testing.assert_allclose(g.mean(), 0, atol=1e-9)
        np.testing.assert_allclose(g.median(), 0, atol=1e-9)


@pytest.mark.parametrize("chunk", [1, 7, 1000, None])
def test_partial_fit_chunks_equal_one_pass(chunk):
    # one partial_fit per row for chunk 1: fewer rows and groups (each still above min_count), same property
    df = _table(n=400, seed=2, langs=("de", "fr")) if chunk == 1 else _table(n=3000, seed=2)
    one = LGN(by="lp").fit(df)
    online = LGN(by="lp")
    step = chunk or len(df)
    for start in range(0, len(df), step):
        online.partial_fit(df.iloc[start:start + step])
    a, b = one.group_table().set_index("group"), online.group_table().set_index("group").loc[one.group_table()["group"]]
    np.testing.assert_array_equal(a["n"], b["n"])
    scale = np.abs(df["score"]).max()  # relative to the data's magnitude: a mean near 0 has no relative digits
    np.testing.assert_allclose(b["center"], a["center"], rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(b["scale"], a["scale"], rtol=1e-12)
    np.testing.assert_allclose(online.transform(df), one.transform(df), rtol=1e-12, atol=1e-11)


def test_shuffled_batches_equal_fit_for_every_method():
    df = _table(n=2000, seed=3)
    perm = np.random.default_rng(0).permutation(len(df))
    for method in ("zscore", "robust", "quantile"):
        one = LGN(by="tgt_lang", method=method).fit(df)
        online = LGN(by="tgt_lang", method=method)
        for batch in np.array_split(perm, 9):
            online.partial_fit(df.iloc[batch])
        np.testing.assert_allclose(online.transform(df), one.transform(df), rtol=1e-12, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-10**8, 10**8).map(lambda i: i / 1e6), min_size=60, max_size=120, unique=True),
       st.sampled_from(["zscore", "robust", "quantile"]))
def test_order_preserving_within_group(values, method):
    x = np.asarray(values)
    df = pd.DataFrame({"tgt_lang": np.where(np.arange(len(x)) % 2 == 0, "de", "zh"), "score": x})
    model = LGN(by="tgt_lang", method=method, min_count=10).fit(df)
    probe = pd.DataFrame({"tgt_lang": "de", "score": np.sort(np.r_[x, x.min() - 5, x.max() + 5, x + 0.37])})
    out = model.transform(probe)
    # distinct inputs are at least 1e-6 apart (well above float rounding of the map)
    assert np.all(np.diff(out)[np.diff(probe["score"]) > 1e-7] > 0)


@pytest.mark.parametrize("method", ["zscore", "robust", "quantile"])
def test_inverse_transform_round_trips(method):
    df = _table(n=1500, seed=4)
    model = LGN(by="tgt_lang", method=method, target=(80, 10)).fit(df)
    out = model.transform(df)
    back = model.inverse_transform(df.assign(score=out))
    np.testing.assert_allclose(back, df["score"], rtol=1e-9, atol=1e-9)


def test_save_load_is_bit_identical_and_tamper_is_refused(tmp_path):
    df = _table(n=1000, seed=5)
    for method in ("zscore", "quantile"):
        model = LGN(by="lp", method=method, target=(80, 10)).fit(df, signature="bleu|tok:13a")
        path = tmp_path / f"{method}.json"
        model.save(path)
        loaded = LGN.load(path)
        assert np.array_equal(loaded.transform(df), model.transform(df))
        assert loaded.signature_ == "bleu|tok:13a"
    payload = json.loads(path.read_text())
    payload["levels"]["__by__"]["mean"][0] += 1e-6
    path.write_text(json.dumps(payload))
    with pytest.raises(ModelFileError, match="checksum"):
        LGN.load(path)
    path.write_text(path.read_text()[:200])
    with pytest.raises(ModelFileError):
        LGN.load(path)
    payload["format_version"] = 99
    path.write_text(json.dumps(payload))
    with pytest.raises(ModelFileError, match="version"):
        LGN.load(path)


def test_signature_mismatch_refused_unless_forced():
    df = _table(n=500)
    model = LGN(by="tgt_lang").fit(df, signature="bleu|tok:13a")
    with pytest.raises(SignatureMismatchError):
        model.transform(df, signature="bleu|tok:zh")
    forced = model.transform(df, signature="bleu|tok:zh", force=True)
    assert np.array_equal(forced, model.transform(df, signature="bleu|tok:13a"))


def test_not_fitted():
    with pytest.raises(NotFittedError):
        LGN(by="tgt_lang").transform(_table(n=10))


def test_small_groups_are_shrunk_toward_the_others():
    rng = np.random.default_rng(6)
    big = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr", "ru"], 300), "score": rng.normal(0, 1, 900)})
    small = pd.DataFrame({"tgt_lang": ["sw"] * 8, "score": rng.normal(10, 1, 8)})
    df = pd.concat([big, small], ignore_index=True)
    with pytest.warns(SmallGroupWarning, match="sw"):
        model = LGN(by="tgt_lang", min_count=50).fit(df)
    table = model.group_table().set_index("group")
    raw_mean = small["score"].mean()
    z = np.sqrt(8 / 50)
    prior = np.median(table.loc[["de", "fr", "ru"], "center"])
    assert table.loc["sw", "shrunk"]
    assert table.loc["sw", "center"] == pytest.approx(z * raw_mean + (1 - z) * prior)
    assert not table.loc["de", "shrunk"]


def test_degenerate_group_goes_to_fallback_not_divided_by_one():
    df = pd.DataFrame({"lp": ["en-de"] * 60 + ["en-fr"] * 60 + ["cs-de"] * 60,
                       "score": np.r_[np.full(60, 3.0), np.random.default_rng(0).normal(0, 2, 120)]})
    with pytest.warns(DegenerateGroupWarning):
        model = LGN(by="lp").fit(df)
    with pytest.warns(UnseenGroupWarning):
        out = model.transform(df)
    sources = model.sources(df)
    assert set(sources[:60]) == {"tgt_lang"}  # en-de falls back to all 'de' rows (en-de + cs-de)
    de_rows = df[df.lp.str.endswith("de")]["score"]
    np.testing.assert_allclose(out[:60], (3.0 - de_rows.mean()) / de_rows.std(ddof=0))


def test_unseen_fallback_chain_and_error():
    df = _table(n=2000, seed=7, langs=("de", "fr", "zh"))
    model = LGN(by="lp").fit(df)
    new = pd.DataFrame({"lp": ["ru-de", "en-es", "en-ko"], "score": [1.0, 2.0, 3.0]})
    with pytest.warns(UnseenGroupWarning):  # noqa: PT031 - either call may be the one that warns
        sources = model.sources(new.assign(tgt_lang=["de", "es", "ko"]))
        out = model.transform(new.assign(tgt_lang=["de", "es", "ko"]))
    # de seen as a target language; es shares the Latin script with de/fr; ko matches nothing -> pooled
    assert list(sources) == ["tgt_lang", "script", "pooled"]
    assert np.isfinite(out).all()
    strict = LGN(by="lp", fallback=["error"]).fit(df)
    with pytest.raises(InputError, match="cannot calibrate"):
        strict.transform(new.assign(tgt_lang=["de", "es", "ko"]))
    raw = LGN(by="lp", fallback=["raw"]).fit(df)
    with pytest.warns(UnseenGroupWarning):
        assert raw.transform(new.assign(tgt_lang=["de", "es", "ko"]))[1] == 2.0


def test_family_fallback():
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"tgt_lang": np.repeat(["hi", "ta"], 100),
                       "score": np.r_[rng.normal(0, 1, 100), rng.normal(5, 1, 100)]})
    model = LGN(by="tgt_lang", fallback=["family", "error"]).fit(df)
    # Bengali is not in the calibration set but is Indo-European like Hindi
    bn = pd.DataFrame({"tgt_lang": ["bn"], "score": [0.0]})
    assert list(model.sources(bn)) == ["family"]
    hi = df.loc[df.tgt_lang == "hi", "score"]  # the only Indo-European language fitted (ta is Dravidian)
    with pytest.warns(UnseenGroupWarning):
        assert model.transform(bn)[0] == pytest.approx((0.0 - hi.mean()) / hi.std(ddof=0))


@pytest.mark.parametrize("method", ["zscore", "quantile"])
def test_nan_and_inf_scores_are_kept_and_calibrated_to_nan(method):
    df = _table(n=500)
    df.loc[[3, 10], "score"] = np.nan
    df.loc[[7], "score"] = np.inf
    model = LGN(by="tgt_lang", method=method).fit(df)
    out = model.transform(df)
    assert len(out) == 500
    assert np.isnan(out[[3, 7, 10]]).all() and np.isfinite(np.delete(out, [3, 7, 10])).all()
    assert model.group_table()["n_nonfinite"].sum() == 3


def test_decay_and_window():
    a = pd.DataFrame({"tgt_lang": ["de"] * 100, "score": np.random.default_rng(0).normal(0, 1, 100)})
    b = a.assign(score=a["score"] + 10)
    window = LGN(by="tgt_lang", window=1, min_count=1).partial_fit(a).partial_fit(b)
    assert window.group_table()["center"][0] == pytest.approx(b["score"].mean())
    decayed = LGN(by="tgt_lang", decay=0.5, min_count=1).partial_fit(a).partial_fit(b)
    expected = (0.5 * 100 * a["score"].mean() + 100 * b["score"].mean()) / 150
    assert decayed.group_table()["center"][0] == pytest.approx(expected)


def test_bad_parameters_are_named():
    with pytest.raises(InputError, match="method"):
        LGN(by="tgt_lang", method="minmax").fit(_table(n=10))
    with pytest.raises(InputError, match="target"):
        LGN(by="tgt_lang", target=(0, 0)).fit(_table(n=10))
    with pytest.raises(InputError, match="score column"):
        LGN(by="tgt_lang", score="bleu").fit(_table(n=10))


def test_all_constant_scores_refused():
    df = pd.DataFrame({"tgt_lang": ["de", "fr"] * 30, "score": 1.0})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match="constant"):
            LGN(by="tgt_lang").fit(df)


def test_get_set_params_like_sklearn():
    model = LGN(by="tgt_lang", method="robust", target=(80, 10))
    assert model.get_params()["method"] == "robust"
    assert model.set_params(min_count=5).min_count == 5
    assert "robust" in repr(model)
    with pytest.raises(InputError):
        model.set_params(nope=1)


@pytest.mark.slow
@pytest.mark.parametrize("n", [30, 100, 1000])
def test_zscore_interval_coverage(n):
    """95% delta-method intervals cover the true calibrated value (known mu, sigma) in 93-97% of runs."""
    rng = np.random.default_rng(n)
    mu, sigma, sims = 5.0, 2.0, 800
    probes = np.array([mu - 2 * sigma, mu, mu + 1.5 * sigma])
    truth = (probes - mu) / sigma
    hits = np.zeros(len(probes))
    for _ in range(sims):
        cal = pd.DataFrame({"tgt_lang": "de", "score": rng.normal(mu, sigma, n)})
        model = LGN(by="tgt_lang", min_count=1).fit(cal)
        low, high = model.interval(pd.DataFrame({"tgt_lang": "de", "score": probes}), level=0.95)
        hits += (low <= truth) & (truth <= high)
    coverage = hits / sims
    assert np.all((coverage >= 0.93) & (coverage <= 0.97)), coverage


@pytest.mark.slow
def test_robust_interval_coverage():
    rng = np.random.default_rng(11)
    mu, sigma, n, sims = 0.0, 1.0, 200, 300
    probe = np.array([1.0])
    hits = 0
    for _ in range(sims):
        cal = pd.DataFrame({"tgt_lang": "de", "score": rng.normal(mu, sigma, n)})
        model = LGN(by="tgt_lang", method="robust", min_count=1).fit(cal)
        low, high = model.interval(pd.DataFrame({"tgt_lang": "de", "score": probe}), level=0.95, n_resamples=300,
                                   random_state=int(rng.integers(1 << 31)))
        hits += int(low[0] <= 1.0 <= high[0])
    assert 0.90 <= hits / sims <= 0.99


def test_intervals_are_wider_for_small_groups():
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"tgt_lang": np.r_[["de"] * 1000, ["fr"] * 60], "score": rng.normal(0, 1, 1060)})
    model = LGN(by="tgt_lang").fit(df)
    low, high = model.interval(pd.DataFrame({"tgt_lang": ["de", "fr"], "score": [0.5, 0.5]}))
    width = high - low
    assert width[1] > 3 * width[0]


def test_wmt21_fit_by_lp_keeps_every_row_in_order(wmt21_segments, tmp_path):
    from xleval.calibration import calibrate_frame

    df = wmt21_segments[["lp", "system", "seg_id", "hypothesis", "reference"]].copy()
    df["ratio"] = df["hypothesis"].str.len() / df["reference"].str.len().clip(lower=1)
    model = LGN(by="lp", score="ratio").fit(df)
    path = tmp_path / "m.json"
    model.save(path)
    out = calibrate_frame(LGN.load(path), df)
    assert len(out) == 251_212
    assert out[["lp", "system", "seg_id"]].equals(df[["lp", "system", "seg_id"]])
    assert (out["calibration_source"] == "lp").all()
    means = out.groupby("lp")["ratio_lgn"].mean()
    np.testing.assert_allclose(means, 0, atol=1e-9)


def test_fit_from_parts_equals_fit_and_refuses_mixed_signatures():
    df = _table(n=3000, seed=12)
    parts = [LGN(by="lp").partial_fit(df.iloc[i:i + 600], signature="chrF2|x") for i in range(0, 3000, 600)]
    merged = LGN(by="lp").fit_from(parts)
    one = LGN(by="lp").fit(df, signature="chrF2|x")
    np.testing.assert_allclose(merged.transform(df), one.transform(df), rtol=1e-12, atol=1e-11)
    assert merged.signature_ == "chrF2|x"
    other = LGN(by="lp").partial_fit(df.iloc[:10], signature="BLEU|y")
    with pytest.raises(SignatureMismatchError):
        LGN(by="lp").fit_from([*parts, other])
    with pytest.raises(InputError, match="parameters"):
        LGN(by="tgt_lang").fit_from(parts)


def test_unused_categories_are_not_groups():
    rng = np.random.default_rng(13)
    tgt = pd.Categorical(np.repeat(["de", "fr"], 100), categories=["de", "fr", "sw", "xx-unused"])
    df = pd.DataFrame({"tgt_lang": tgt, "score": rng.normal(size=200)})
    # no DegenerateGroupWarning for empty categories (warnings are errors)
    model = LGN(by="tgt_lang", fallback=["error"]).fit(df)
    assert model.group_table()["group"].tolist() == ["de", "fr"]
    plain = LGN(by="tgt_lang", fallback=["error"]).fit(df.assign(tgt_lang=df["tgt_lang"].astype(str)))
    np.testing.assert_array_equal(model.transform(df), plain.transform(df.assign(tgt_lang=df["tgt_lang"].astype(str))))


def test_unused_unseen_category_in_transform_is_not_an_error():
    rng = np.random.default_rng(14)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr"], 100), "score": rng.normal(size=200)})
    model = LGN(by="tgt_lang", fallback=["error"]).fit(df)
    probe = df.assign(tgt_lang=pd.Categorical(df["tgt_lang"], categories=["de", "fr", "sw"]))
    np.testing.assert_array_equal(model.transform(probe), model.transform(df))  # no error, no warning for 'sw'
    langs = pd.Categorical(["sw"] + list(df["tgt_lang"][1:]), categories=["de", "fr", "sw"])
    with pytest.raises(InputError, match="sw"):
        model.transform(probe.assign(tgt_lang=langs))


def test_on_unseen_replaces_the_fallback_chain_without_touching_the_model():
    from xleval.calibration import calibrate_frame

    df = _table(n=2000, seed=15, langs=("de", "fr", "zh"))
    model = LGN(by="lp").fit(df)
    new = pd.DataFrame({"lp": ["ru-de", "en-ko"], "score": [1.0, 3.0]})
    with pytest.warns(UnseenGroupWarning):
        raw = calibrate_frame(model, new, on_unseen="raw")
    assert raw["score_lgn"].tolist() == [1.0, 3.0] and raw["calibration_source"].tolist() == ["raw", "raw"]
    with pytest.warns(UnseenGroupWarning):
        pooled = calibrate_frame(model, new, on_unseen="pooled")
    center, scale = model.pooled_
    np.testing.assert_allclose(pooled["score_lgn"], (new["score"] - center) / scale)
    with pytest.raises(InputError, match="cannot calibrate"):
        calibrate_frame(model, new, on_unseen="error")
    with pytest.raises(InputError, match="on_unseen='drop': use pooled, raw or error"):
        calibrate_frame(model, new, on_unseen="drop")
    with pytest.warns(UnseenGroupWarning):  # the model itself still walks its chain (ru-de -> tgt_lang de)
        assert list(calibrate_frame(model, new)["calibration_source"]) == ["tgt_lang", "pooled"]


def test_interval_takes_level_as_every_calibrator_and_xleval_stats_do():
    df = _table(n=500)
    model = LGN(by="tgt_lang").fit(df)
    narrow, wide = model.interval(df, level=0.8), model.interval(df, level=0.95)
    assert (narrow[1] - narrow[0] < wide[1] - wide[0]).all()
    with pytest.raises(TypeError):  # one keyword: the former confidence= is gone
        model.interval(df, confidence=0.8)  # type: ignore[call-arg]
    with pytest.raises(InputError, match=r"level=1\.5"):
        model.interval(df, level=1.5)
