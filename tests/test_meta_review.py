"""Review of xleval meta and xleval.stats (s11): defects found by using them as an mt-metrics-eval user would.

Oracles: scipy.stats.pearsonr on the resampled rows written out (the bootstrap's r), Cauchy-Schwarz (|r| <= 1),
the shift and scale invariance of Pearson's r (a metric and the same metric plus 1e6 have one r and one CI), the
expected Kendall tau of an uninformative metric (0, as its Pearson r), and the project's rule for bad input (one
line naming the setting and the fix, exit status 2)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from xleval.exceptions import InputError
from xleval.meta import Clustering, MetaStatistics, Spans, meta_evaluate
from xleval.stats import Resampling, resampled_pearson, stratified_resample_counts

FAST = MetaStatistics(spa=False, pdp=False)


def _table(n_sys=(5, 4), n_items=6, seed=3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp, ns in zip(("a-b", "c-d"), n_sys, strict=True):
        q = rng.normal(size=ns)
        for s in range(ns):
            for i in range(n_items):
                h = q[s] + rng.normal()
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": i, "human": round(h, 1),
                             "m": round(h + rng.normal(), 1)})
    return pd.DataFrame(rows)


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return meta_evaluate(*args, **kwargs)


# --------------------------------------------------------------- system-level Pearson's bootstrap (resampled_pearson)
def test_resampled_pearson_of_scores_far_from_zero_equals_scipy():
    """System scores around 1e6 that differ by 1e-3 (a metric on a large scale with a small spread): the one-pass
    moments E[x^2] - E[x]^2 lost every digit (inf and NaN). Oracle: scipy's pearsonr of each resample written out."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=8)
    y = x + rng.normal(size=8)
    counts = rng.multinomial(8, np.full(8, 1 / 8), size=5).astype(float)
    got = resampled_pearson(1e6 + 1e-3 * x, y, counts)
    want = [ss.pearsonr(np.repeat(x, k.astype(int)), np.repeat(y, k.astype(int))).statistic for k in counts]
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_resampled_pearson_stays_inside_minus_one_one():
    """A perfect linear relation: rounding put 86 of 200 resampled r at 1 + 2e-15, and a CI bound above 1.
    Oracle: Cauchy-Schwarz, |r| <= 1."""
    x = np.array([0.1, 0.2, 0.3, 0.7, 1.1])
    counts = stratified_resample_counts(np.zeros(5, int), 200, np.random.default_rng(0))
    r = resampled_pearson(x, 3 * x + 0.3, counts)
    assert np.nanmax(np.abs(r)) <= 1.0


def test_meta_sys_pearson_interval_does_not_move_with_a_shift_of_the_metric():
    """Pearson's r does not change when the metric is shifted and scaled, so neither do its bootstrap and its CI
    (same seed, same resamples): m and 1e6 + 1e-3 m get one interval, and it holds the estimate."""
    df = _table()
    df["far"] = 1e6 + 1e-3 * df["m"]
    res = _quiet(df, ["m", "far"], "human", statistics=FAST, resampling=Resampling(n_resamples=200, random_state=1))
    for g in ("a-b", "c-d"):
        near = next(c for c in res.cells if c.group == g and c.metric == "m" and c.statistic == "sys_pearson")
        far = next(c for c in res.cells if c.group == g and c.metric == "far" and c.statistic == "sys_pearson")
        assert far.value == pytest.approx(near.value, abs=1e-6)
        assert far.ci_low == pytest.approx(near.ci_low, abs=1e-6)
        assert far.ci_high == pytest.approx(near.ci_high, abs=1e-6)
        assert far.ci_low <= far.value <= far.ci_high


# ------------------------------------------------------------------------------------------- chance baselines
def test_chance_of_segment_kendall_is_zero_as_of_segment_pearson():
    """An uninformative metric's expected Kendall tau is 0 (tau is antisymmetric under reversing the metric's
    order, and a shuffle is as likely reversed); seg_pearson's chance said 0 and seg_kendall's was missing (NaN)."""
    res = _quiet(_table(), ["m"], "human", statistics=FAST.with_(chance=True, chance_simulations=10),
                 resampling=Resampling(n_resamples=20))
    chance = {c.statistic: c.chance for c in res.cells if c.group == "a-b"}
    assert chance["seg_pearson"] == 0.0
    assert chance["seg_kendall"] == 0.0


# ------------------------------------------------------------------------------------------- groups of 2 systems
def test_two_system_group_says_why_it_has_no_system_correlation():
    """Two systems: Pearson/Spearman/Kendall are +-1 whatever the metric (mt-metrics-eval prints -1.0 for such a
    pair); meta leaves them out, and now says so instead of dropping the cells silently."""
    df = _table(n_sys=(5, 2))
    res = _quiet(df, ["m"], "human", statistics=FAST, resampling=Resampling(n_resamples=20))
    assert not [c for c in res.cells if c.group == "c-d" and c.statistic == "sys_pearson"]
    assert any("3 or more systems" in n and "c-d" in n for n in res.notes)
    assert not any("3 or more systems" in n for n in _quiet(_table(), ["m"], "human", statistics=FAST,
                                                            resampling=Resampling(n_resamples=20)).notes)


# ----------------------------------------------------------------------------------- settings checked when built
@pytest.mark.parametrize("build, named", [
    (lambda: MetaStatistics(darr_threshold=float("nan")), "darr_threshold"),
    (lambda: MetaStatistics(darr_threshold=-1.0), "darr_threshold"),
    (lambda: MetaStatistics(spa_permutations=0), "spa_permutations"),
    (lambda: MetaStatistics(chance_simulations=0), "chance_simulations"),
    (lambda: MetaStatistics(human_scale=3), "human_scale"),
    (lambda: Clustering(statistics=["spa"], alpha=2.0), "alpha"),
    (lambda: Clustering(statistics=["spa"], alpha=float("nan")), "alpha"),
    (lambda: Spans(error_free=float("nan")), "error_free"),
    (lambda: Spans(critical=float("inf")), "critical"),
    (lambda: Spans(mismatch=2.0), "mismatch"),
])
def test_a_bad_setting_is_refused_naming_it(build, named):
    """Each was accepted: a NaN threshold compares false with every score, so the DARR tau, error-free or critical
    F1 silently vanished; alpha=2 turned every group's clusters into a note; spa_permutations=0 was refused in the
    words of another argument (n_resamples)."""
    with pytest.raises(InputError) as info:
        build()
    assert str(info.value).startswith(f"{named}=")


@pytest.mark.parametrize("flag", [["--error-free", "nan"], ["--critical", "inf"],
                                  ["--darr", "human", "--darr-threshold", "nan"]])
def test_cli_refuses_a_threshold_that_is_not_a_number(cli, tmp_path, flag):
    """Exit 0 with the statistic missing before; now one line naming the flag, exit status 2."""
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    rc, _, err = cli("meta", str(path), "--metrics", "m", "--human", "human", "--n-resamples", "20", *flag)
    assert rc == 2
    assert flag[-2] in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_cli_predicted_spans_without_gold_names_the_flags(cli, tmp_path):
    """The library's message named Python arguments in words the CLI could not turn into its flags."""
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    rc, _, err = cli("meta", str(path), "--metrics", "m", "--human", "human", "--predicted-spans", f"x={path}")
    assert rc == 2
    assert "--predicted-spans" in err and "--gold-spans" in err and "gold_spans" not in err


def test_cli_calibrations_follow_seed_and_n_resamples(cli, tmp_path):
    """--calibrations' intervals were drawn with calibrate evaluate's defaults (1000 resamples, seed 0) whatever
    --n-resamples and --seed said; the JSON names the draws each interval came from."""
    import json

    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    rc, out, err = cli("meta", str(path), "--metrics", "m", "--human", "human", "--n-resamples", "50", "--seed", "5",
                       "--calibrations", "raw", "--no-spa", "--no-pdp", "--format", "json")
    assert rc == 0, err
    variant = json.loads(out)["calibrated"]["variants"][0]
    assert (variant["accuracy"]["n_resamples"], variant["accuracy"]["random_state"]) == (50, 5)


# ------------------------------------------------------------------------------------ error spans and their keys
def _spans(rows):
    return pd.DataFrame(rows, columns=["lp", "system", "seg_id", "severity", "start", "end"])


def test_spans_that_name_no_row_are_refused_not_scored_perfect():
    """Gold and predicted spans keyed to segments the table lacks matched nothing, so every segment looked
    error-free in both and the span F1 was 1.0 (nothing to find, nothing found). By hand: no span is scored at all;
    the one honest answer is to refuse and name the key."""
    gold = _spans([("a-b", "sys0", 99, "major", 0, 5)])
    pred = _spans([("a-b", "sys0", 98, "major", 0, 5)])
    with pytest.raises(InputError, match="none of the 1 span"):
        _quiet(_table(), ["m"], "human", statistics=FAST, resampling=Resampling(n_resamples=20),
               spans=Spans(gold=gold, predicted={"x": pred}))


def test_a_span_that_names_no_row_is_counted_in_a_warning():
    """One gold span with a mistyped pair ('A-B'): left out as before, now with a DataQualityWarning that counts it.
    The F1 of the rest by hand: gold marks characters 0-4 major, the prediction 0-3 major: precision 4/4, recall
    4/5, F1 = 2 * 1 * 0.8 / 1.8 = 8/9."""
    from xleval.exceptions import DataQualityWarning

    gold = _spans([("a-b", "sys0", 1, "major", 0, 5), ("A-B", "sys1", 1, "minor", 0, 3)])
    pred = _spans([("a-b", "sys0", 1, "major", 0, 4)])
    with pytest.warns(DataQualityWarning, match="1 of the 2 span"):
        res = meta_evaluate(_table(), ["m"], "human", statistics=FAST, resampling=Resampling(n_resamples=20),
                            spans=Spans(gold=gold, predicted={"x": pred}))
    assert res.value("a-b", "x", "span_char_f1") == pytest.approx(8 / 9, abs=1e-12)


def test_cli_human_scale_naming_a_group_twice_is_refused(cli, tmp_path):
    """'a-b=x,a-b=y,c-d=x': the last scale won, silently, so a-b and c-d no longer shared one and the cross-group
    accuracy vanished; now one line naming the group, exit status 2."""
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    rc, _, err = cli("meta", str(path), "--metrics", "m", "--human", "human", "--n-resamples", "20", "--no-spa",
                     "--no-pdp", "--human-scale", "a-b=x,a-b=y,c-d=x")
    assert rc == 2
    assert "'a-b'" in err and len(err.strip().splitlines()) == 1


def test_calibrations_do_not_depend_on_row_order():
    """docs/meta-evaluation.md: 'no statistic, resample or permutation depends on the order of the table'. The
    anchored calibration's label draws did: the evaluation was given no segment column, so a system's rows kept the
    table's order (anchored@3 accuracy 0.75 in order, 0.71 shuffled). Oracle: the same rows in canonical order."""
    from xleval.decision import Procedure
    from xleval.meta import meta_calibrations

    df = _table()
    once = Procedure(n_folds=2, n_repeats=1, n_resamples=20)

    def variants(frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = meta_calibrations(frame, ["m"], "human", calibrations="raw,anchored@3", procedure=once)
        return [(v.calibration, v.accuracy.estimate, v.accuracy.ci_low, v.pearson.estimate) for v in res.variants]

    want = variants(df)
    for seed in (1, 2, 3):
        got = variants(df.sample(frac=1, random_state=seed))
        assert [g[0] for g in got] == [w[0] for w in want]
        np.testing.assert_allclose([g[1:] for g in got], [w[1:] for w in want], atol=1e-12)


def test_a_fractional_span_offset_is_refused():
    """Offsets are whole characters (the message says so); start 0.5 was truncated to 0, silently, and the span
    scored as covering characters 0-4."""
    gold = _spans([("a-b", "sys0", 1, "major", 0.5, 5)])
    pred = _spans([("a-b", "sys0", 1, "major", 0, 4)])
    with pytest.raises(InputError, match="whole offsets"):
        _quiet(_table(), ["m"], "human", statistics=FAST, resampling=Resampling(n_resamples=20),
               spans=Spans(gold=gold, predicted={"x": pred}))


def test_segment_level_clusters_of_a_system_level_table_are_refused():
    """A system-level table has no SPA or acc-t cell: --clusters seg_acc_t ranked nothing and said nothing, while
    --task wmt24 (the same statistics) was refused; now refused alike, naming the setting."""
    sys_table = _table().groupby(["lp", "system"], as_index=False)[["human", "m"]].mean()
    sys_table["m2"] = sys_table["m"] * 2 + np.arange(len(sys_table)) % 3
    with pytest.raises(InputError, match=r"^clusters="):
        _quiet(sys_table, ["m", "m2"], "human", segment=None, statistics=FAST,
               resampling=Resampling(n_resamples=20), clustering=Clustering(statistics=["sys_pearson", "seg_acc_t"],
                                                                            n_resamples=20))
