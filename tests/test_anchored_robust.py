"""The robust anchored estimator, checked against simulated worlds with a known truth: no collapse to the
metric's order with two groups, Morris-limited shrinkage with more, the between-system slope shrunk toward
the within-system one, a slope sign the labels do not settle is not used (and said), a bounded human scale,
and the saved state (format 3; the never-released format 2 is refused)."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import AnchoredCalibrator
from xleval.calibration._pooling import shrink_offsets
from xleval.cli import main
from xleval.exceptions import DataQualityWarning, InputError, ModelFileError

PAIRS = ("de-en", "cs-en", "ja-en", "ru-en", "zh-en", "is-en")  # p0, p1, ... in the docstrings


def _world(seed, offsets, metric_bias, n_sys=8, n_seg=150, between=0.5, within=0.05, sys_sd=1.0, dev_sd=0.3,
           noise=2.0, quality=None):
    """Per group g and system s: quality q_s (human units; the same systems in every group unless given),
    metric x = 50 + bias_g + q_s / between + u (u ~ N(0, 10)), human = offset_g + q_s + within * u + d_s + e,
    with d_s the system's own deviation from the metric. Returns the rows and the true (group, system) human
    means (over every row)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(0, sys_sd, n_sys) if quality is None else np.asarray(quality, dtype=float)
    rows = []
    for g, (off, bias) in enumerate(zip(offsets, metric_bias, strict=True)):
        for s in range(len(q)):
            u = rng.normal(0, 10, n_seg)
            h = off + q[s] + within * u + rng.normal(0, dev_sd) + rng.normal(0, noise, n_seg)
            rows.append(pd.DataFrame({"lp": PAIRS[g], "system": f"s{s}", "score": 50 + bias + q[s] / between + u,
                                      "human": h}))
    df = pd.concat(rows, ignore_index=True)
    return df, df.groupby(["lp", "system"])["human"].mean()


def _keep(df, k, seed):
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(df), dtype=bool)
    for rows in df.groupby("lp").indices.values():
        keep[rng.choice(rows, size=k, replace=False)] = True
    return df.assign(human=df["human"].where(keep))


def _fit(df, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AnchoredCalibrator(by="lp", **kwargs).fit(df)


def test_two_pairs_one_standard_error_apart_keep_their_human_order():
    """Two pairs whose human means differ by about one standard error of the labels' mean residuals, ranked
    backwards by the metric: full empirical Bayes estimates tau2 = 0 in many draws and gives back the
    metric's (wrong) order; the default (no shrinkage with two groups) keeps the human order as often as the
    labels can tell it (about Phi(1) = 0.84 of the draws)."""
    right = {"auto": 0, "eb": 0}
    n_worlds = 80
    for seed in range(n_worlds):
        # K = 50 labels per pair: se of a mean residual ~ 2.05 / sqrt(50) = 0.29, of the difference ~ 0.41
        df, truth = _world(seed, offsets=(0.0, 0.41), metric_bias=(0.82, 0.0), within=0.1)  # metric: p0 0.41 better
        true_diff = truth["cs-en"].mean() - truth["de-en"].mean()
        assert true_diff > 0  # the human order of the pairs, which the metric reverses
        sparse = _keep(df, 50, seed)
        for shrinkage in right:
            cal = df.assign(cal=_fit(sparse, shrinkage=shrinkage, prior="common").transform(df))
            means = cal.groupby("lp")["cal"].mean()
            right[shrinkage] += (means["cs-en"] - means["de-en"]) > 0
    assert right["auto"] / n_worlds >= 0.72  # expected ~0.84; 0.72 is ~3 binomial sd below
    assert right["eb"] < right["auto"] - 0.1 * n_worlds


def test_auto_shrinkage_by_hand():
    """Morris's factor (k - 3) / (k - 1) on the empirical-Bayes shrinkage: none with 2 or 3 groups; with
    5 groups of equal offsets (tau2 = 0) each group keeps half of its distance to the common offset."""
    for k in (2, 3):
        effects = np.linspace(0, 1, k) * 0.1
        out = shrink_offsets(effects, np.ones(k), mode="auto")
        np.testing.assert_allclose(out.offset, effects)
        assert shrink_offsets(effects, np.ones(k), mode="eb").tau2 == 0  # where full EB would collapse them
    effects = np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    out = shrink_offsets(effects, np.ones(5), mode="auto")
    assert out.tau2 == 0
    np.testing.assert_allclose(out.offset, 0.2 + 0.5 * (effects - 0.2))
    # Morris's variance: lam v + (1 - lam)^2 var(mean) + 2 / (k - 3) (1 - lam)^2 (effect - mean)^2
    np.testing.assert_allclose(out.offset_var, 0.5 + 0.25 * 0.2 + 0.25 * (effects - 0.2) ** 2)
    # far apart: the same as full EB up to the factor
    far = shrink_offsets(np.array([0.0, 50.0, 100.0, 150.0, 200.0]), np.ones(5), mode="auto")
    assert np.all(far.lam > 0.999)


def test_a_group_with_one_label_leans_on_the_others_with_many_groups():
    offsets = (0.0, 1.0, -1.0, 0.5, -0.5, 0.2)
    df, _ = _world(0, offsets=offsets, metric_bias=(0.0,) * 6)
    sparse = _keep(df, 60, 0)
    one = sparse.index[(sparse.lp == "is-en") & sparse.human.notna()]
    sparse.loc[one[1:], "human"] = np.nan
    table = _fit(sparse).group_table().set_index("group")
    assert table.loc["is-en", "n_labels"] == 1
    assert table.loc["is-en", "weight"] < table.drop("is-en")["weight"].min()


def test_noisy_between_slope_is_shrunk_toward_the_within_slope():
    """Three systems per group with large deviations of their own: B is noisy. When the true B equals the
    true C, the James-Stein B is closer to it on average than the unshrunk one."""
    err_used, err_raw, weights = [], [], []
    for seed in range(40):
        df, _ = _world(seed, offsets=(0.0, 1.0, 2.0), metric_bias=(0.0, 0.0, 0.0), n_sys=3, between=0.05,
                       within=0.05, sys_sd=0.5, dev_sd=1.5, quality=None)
        model = AnchoredCalibrator(by="lp")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(_keep(df, 60, seed), strict=False)
        s = model.slopes_
        if model.direction_source_ != "data" or model.direction_ != 1:  # a draw whose labels settle no direction
            continue
        assert min(s["within"], s["between_unshrunk"]) - 1e-12 <= s["between"] <= max(s["within"],
                                                                                      s["between_unshrunk"]) + 1e-12
        err_used.append(abs(s["between"] - 0.05))
        err_raw.append(abs(s["between_estimate"] - 0.05))
        weights.append(s["between_weight"])
    assert len(err_used) >= 30
    assert np.mean(err_used) < 0.8 * np.mean(err_raw)
    assert np.median(weights) < 0.5


def test_well_determined_between_slope_is_kept():
    df, _ = _world(1, offsets=(0.0, 1.0, 2.0), metric_bias=(0.0, 0.0, 0.0), n_sys=12, between=0.5, within=0.05,
                   sys_sd=3.0, dev_sd=0.05, noise=0.5)
    model = _fit(df)
    assert model.slopes_["between_weight"] > 0.99
    assert model.slopes_["between"] == pytest.approx(0.5, rel=0.05)
    assert model.describe()["between_slope_weight"] == model.slopes_["between_weight"]


def _unsettled_between(seed_range=range(200)):
    """A draw where B is estimated negative with |z| < 1.96 while C is clearly positive (true B small and
    positive, systems with large deviations of their own)."""
    for seed in seed_range:
        df, _ = _world(seed, offsets=(0.0, 1.0), metric_bias=(0.0, 0.0), n_sys=4, between=0.05, within=0.05,
                           sys_sd=0.2, dev_sd=1.0, noise=1.0)
        sparse = _keep(df, 40, seed)
        fit = AnchoredCalibrator(by="lp", between_shrinkage="none")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit.fit(sparse, strict=False)
        b, (z_b, z_c) = fit.slopes_["between_estimate"], fit.slopes_["z"]
        if b < 0 and abs(z_b) < 1.96 and z_c > 4:
            return df, sparse
    raise AssertionError("no such draw")


def test_a_between_slope_against_the_direction_is_not_used_and_said():
    df, sparse = _unsettled_between()
    with pytest.warns(DataQualityWarning, match="between-system slope .* not used"):
        model = AnchoredCalibrator(by="lp").fit(sparse)
    assert model.direction_ == 1 and model.slopes_["between"] == model.slopes_["within"] > 0
    assert any("not used" in n for n in model.notes_)
    # within every pair, the calibrated system means keep the metric's order (never reversed)
    out = df.assign(cal=model.transform(df)).groupby(["lp", "system"])[["cal", "score"]].mean()
    for _, g in out.groupby(level="lp"):
        assert (g["cal"].rank().to_numpy() == g["score"].rank().to_numpy()).all()


def test_the_warning_reaches_calibrate_fit_json(tmp_path, capsys):
    _, sparse = _unsettled_between()
    path = tmp_path / "t.tsv"
    sparse.to_csv(path, sep="\t", index=False)
    assert main(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--method", "anchored",
                 "--human", "human", "--signature", "chrf|x", "-o", str(tmp_path / "m.json"),
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert any("between-system slope" in w and "not used" in w for w in report["warnings"])
    assert not any("not used" in n for n in report["notes"])  # said once, as a warning


def _bounded():
    """Raw-DA-like scores on 0-100 whose best systems sit near the ceiling; 40 labels per pair."""
    df, _ = _world(2, offsets=(97.0, 85.0), metric_bias=(0.0, 0.0), n_sys=6, between=0.5, within=0.1,
                       sys_sd=6.0, dev_sd=1.0, noise=2.0)
    df = df.assign(human=df["human"].clip(0, 100))
    return df, _keep(df, 40, 2)


def test_labels_inside_a_bounded_looking_range_with_means_inside_it_get_no_warning():
    df, _ = _world(0, offsets=(30.0, 20.0), metric_bias=(0.0, 0.0), n_sys=4, between=0.5, within=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)  # labels in [10, 40]: means beyond them are fine
        AnchoredCalibrator(by="lp").fit(_keep(df, 40, 0))


def test_declared_range_keeps_calibrated_scores_and_system_means_inside():
    df, sparse = _bounded()
    free = _fit(sparse)
    assert free.transform(df).max() > 100  # the linear map leaves the scale here
    model = _fit(sparse, human_range=(0, 100))
    out = df.assign(cal=model.transform(df))
    assert out["cal"].between(0, 100).all()
    assert out.groupby(["lp", "system"])["cal"].mean().between(0, 100).all()
    low, high = model.interval(df)
    assert low.min() >= 0 and high.max() <= 100
    inside = out["cal"].between(0.001, 99.999)  # where nothing was clipped the map is the free one
    np.testing.assert_allclose(out.loc[inside, "cal"], free.transform(df)[inside.to_numpy()])


def test_undeclared_but_bounded_looking_labels_get_a_warning_and_no_guess():
    df, sparse = _bounded()
    with pytest.warns(DataQualityWarning, match=r"outside \[0, 100\].*declare it with human_range=\(0, 100\)"):
        model = AnchoredCalibrator(by="lp").fit(sparse)
    assert model.human_range is None and model.transform(df).max() > 100


@pytest.mark.parametrize("bad", [(100, 0), (5, 5), ("a", 1), (0,), "0,100", (0, float("inf")), (True, 2)])
def test_bad_human_range_is_one_input_error_naming_the_argument(bad):
    df, _ = _bounded()
    with pytest.raises(InputError, match="human_range=") as refused:
        AnchoredCalibrator(by="lp", human_range=bad).fit(df)
    assert refused.value.argument == "human_range"


def test_labels_outside_a_declared_range_are_refused():
    df, _ = _bounded()
    with pytest.raises(InputError, match="outside human_range"):
        AnchoredCalibrator(by="lp", human_range=(0, 50)).fit(df)


@pytest.mark.parametrize("value", ["100,0", "0", "a,b", "0,inf"])
def test_cli_bad_human_range_exits_2_naming_the_flag(tmp_path, capsys, value):
    _, sparse = _bounded()
    path = tmp_path / "t.tsv"
    sparse.to_csv(path, sep="\t", index=False)
    code = main(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--method", "anchored",
                 "--human", "human", "--human-range", value, "-o", str(tmp_path / "m.json")])
    assert code == 2 and "--human-range" in capsys.readouterr().err


def test_cli_human_range_on_fit_and_apply(tmp_path, capsys):
    _, sparse = _bounded()
    path = tmp_path / "t.tsv"
    sparse.to_csv(path, sep="\t", index=False)
    model = tmp_path / "m.json"
    assert main(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--method", "anchored",
                 "--human", "human", "--human-range", "0,100", "--signature", "chrf|x", "-o", str(model),
                 "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fit"]["human_range"] == [0.0, 100.0]
    out = tmp_path / "out.tsv"
    assert main(["calibrate", "apply", str(model), str(path), "-o", str(out), "--signature", "chrf|x"]) == 0
    assert pd.read_csv(out, sep="\t")["score_anchored"].between(0, 100).all()
    narrower = tmp_path / "narrow.tsv"
    assert main(["calibrate", "apply", str(model), str(path), "-o", str(narrower), "--signature", "chrf|x",
                 "--human-range", "0,90"]) == 0
    assert pd.read_csv(narrower, sep="\t")["score_anchored"].max() == 90
    assert main(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--method", "lgn",
                 "--human-range", "0,100", "-o", str(tmp_path / "l.json")]) == 2


def test_format_3_roundtrip_keeps_the_new_state(tmp_path):
    df, sparse = _bounded()
    model = _fit(sparse, human_range=(0, 100))
    path = tmp_path / "m.json"
    model.save(path)
    payload = json.loads(path.read_text())
    assert payload["format_version"] == 4 and payload["params"]["human_range"] == [0.0, 100.0]
    loaded = AnchoredCalibrator.load(path)
    assert loaded.get_params() == model.get_params() and loaded.describe() == model.describe()
    assert loaded.slopes_ == json.loads(json.dumps(model.slopes_))
    np.testing.assert_array_equal(loaded.transform(df), model.transform(df))
    np.testing.assert_array_equal(loaded.interval(df)[1], model.interval(df)[1])


def test_the_never_released_format_2_is_refused(tmp_path):
    """Format 2 lived between 0.1.0 (format 1) and format 3 without a release (CHANGELOG; issue 32): a file
    that declares it is refused with the refit hint, as every unknown version is."""
    from xleval.calibration import load_calibrator
    from xleval.calibration._persist import checksum

    _, sparse = _bounded()
    payload = _fit(sparse).to_dict()
    payload["format_version"] = 2
    payload["checksum"] = checksum(payload)
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(payload))
    for load in (AnchoredCalibrator.load, load_calibrator):
        with pytest.raises(ModelFileError, match="format version 2, this xleval reads version 4; refit it"):
            load(path)


def test_fit_calibration_gives_offsets_only_for_an_unsettled_direction_unless_strict():
    """Callers without a direction option (the leaderboard, the report) get offsets only and a warning;
    `calibrate fit` (strict=True) refuses and names its direction flags."""
    from xleval.decision import fit_calibration

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"lp": np.repeat(["de-en", "cs-en"], 200), "system": np.tile(np.repeat(list("abcd"), 50), 2),
                       "score": rng.normal(50, 10, 400)})
    df["human"] = np.where(rng.random(400) < 0.3, rng.normal(70, 10, 400), np.nan)  # unrelated to the score
    with pytest.raises(InputError, match="do not settle the direction"):
        fit_calibration(df, "anchored", score="score", by="lp", human="human", strict=True)
    with pytest.warns(DataQualityWarning):
        fitted = fit_calibration(df, "anchored", score="score", by="lp", human="human")
    assert fitted.model.slopes_["between"] == fitted.model.slopes_["within"] == 0
    assert any("do not settle the direction" in n for n in fitted.notes)
