"""WMT statistics: sacrebleu's paired tests (its own PairedTest is the oracle), mt-metrics-eval's
per-group averaged acc23 (a transcription of its threshold search is the oracle), the pair-swap
and PERM-BOTH tests, Williams' test (scipy's t and hand-worked numbers), and the WMT21 figures."""
from __future__ import annotations

import itertools
import logging
import warnings

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF
from sacrebleu.significance import PairedTest

from xleval.exceptions import DataQualityWarning, InputError
from xleval.metrics import BLEU, CHRF, compare_systems
from xleval.stats import (
    Resampling,
    approximate_randomization_test,
    average_correlation,
    bootstrap_score_ci,
    compare_correlations,
    compare_pairwise_accuracy,
    paired_bootstrap_test,
    pairwise_accuracy,
    williams_test,
)

logging.getLogger("sacrebleu").setLevel(logging.ERROR)


# ------------------------------------------------------------------------------ sacrebleu's paired tests
def _systems(rng, n=60):
    words = np.array(["the", "a", "cat", "dog", "sat", "on", "mat", "rug", "and", "big", "small", "red", "blue",
                      "house"])
    ref = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(n)]

    def noisy(p):
        return [" ".join(w if rng.random() > p else rng.choice(words) for w in r.split()) for r in ref]

    return ref, {"base": noisy(0.4), "good": noisy(0.25), "same": noisy(0.4)}


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_tests_equal_sacrebleus_paired_test(test):
    ref, systems = _systems(np.random.default_rng(3))
    named = list(systems.items())
    theirs_metrics = {"BLEU": SacreBLEU(references=[ref]), "chrF2": SacreCHRF(references=[ref])}
    _, theirs = PairedTest(named, theirs_metrics, None, test_type=test, n_samples=0)()
    ours = compare_systems(named, ref, ["bleu", "chrf"], test=test)
    for ours_name, their_name in (("bleu", "BLEU"), ("chrf", "chrF2")):
        for i, name in enumerate(systems):
            mine, their = ours.results[ours_name][name], theirs[their_name][i]
            assert mine.score == their.score
            if i > 0:  # same draws (seed 12345), same statistic: identical p-values
                assert mine.p_value == their.p_value
            if test == "bs":  # sacrebleu resamples in float32: means agree to ~1e-6
                assert mine.mean == pytest.approx(float(their.mean), abs=1e-4)
                assert mine.ci == pytest.approx(float(their.ci), abs=1e-4)
    assert ours.signatures["bleu"].startswith(f"nrefs:1|{test}:{1000 if test == 'bs' else 10000}|seed:12345|case:")


def test_bootstrap_ci_equals_sacrebleu_confidence():
    ref, systems = _systems(np.random.default_rng(4))
    hyps = systems["good"]
    theirs = SacreBLEU().corpus_score(hyps, [ref], n_bootstrap=1000)
    ours = bootstrap_score_ci(BLEU().sentence_stats(hyps, ref), BLEU().score_from_stats)
    assert ours.score == theirs.score
    # sacrebleu scores its resamples from float32 statistics: equal to ~1e-7
    assert ours.mean == pytest.approx(theirs._mean, abs=1e-6) and ours.ci == pytest.approx(theirs._ci, abs=1e-6)


def test_paired_tests_behave_under_the_null_and_the_alternative():
    rng = np.random.default_rng(0)
    ref, systems = _systems(rng, n=200)
    m = CHRF()
    base, good = (m.sentence_stats(systems[k], ref) for k in ("base", "good"))
    assert paired_bootstrap_test(base, good, m.score_from_stats).p_value < 0.01
    assert approximate_randomization_test(base, good, m.score_from_stats, n_trials=2000).p_value < 0.01
    # sacrebleu counts T* > T strictly: a system against itself gets p = 1 / (B + 1), as there
    assert approximate_randomization_test(base, base, m.score_from_stats, n_trials=500).p_value == 1 / 501
    # a system that differs from the baseline on one segment only is not significantly different
    near = base.copy()
    near[0] = good[0]
    assert paired_bootstrap_test(base, near, m.score_from_stats).p_value > 0.05


def test_paired_tests_refuse_misaligned_statistics():
    m = CHRF()
    with pytest.raises(InputError, match="same shape"):
        paired_bootstrap_test(np.ones((3, 18)), np.ones((4, 18)), m.score_from_stats)
    with pytest.raises(InputError, match="at least two systems"):
        compare_systems({"a": ["x"]}, ["x"], ["bleu"], test="bs")
    with pytest.raises(InputError, match="2 segments but the references have 1"):
        compare_systems({"a": ["x"], "b": ["x", "y"]}, ["x"], ["bleu"])


# ------------------------------------------------------------------------------ averaged acc23
def _mtme_tau_optimization(metric_rows, human_rows):
    """Transcription of mt-metrics-eval's tau_optimization (acc23, sample_rate=1) over rows (units):
    every pair inside a row, sorted by |metric difference|; each threshold turns the pairs up to it
    into metric ties; the average of the rows' acc23 is tracked incrementally; the first maximum wins."""
    pairs, stats = [], {}
    for r, (m, h) in enumerate(zip(metric_rows, human_rows, strict=True)):
        for i, j in itertools.combinations(range(len(m)), 2):
            if h[i] == h[j] and m[i] == m[j]:
                kind = "both"
            elif h[i] == h[j]:
                kind = "human"
            elif m[i] == m[j]:
                kind = "metric"
            else:
                kind = "con" if (h[i] > h[j]) == (m[i] > m[j]) else "dis"
            pairs.append((abs(m[i] - m[j]), r, kind, "both" if h[i] == h[j] else "metric"))
            stats.setdefault(r, {"con": 0, "dis": 0, "human": 0, "metric": 0, "both": 0})[kind] += 1

    def acc(s):
        return (s["con"] + s["both"]) / sum(s.values())

    total = sum(acc(s) for s in stats.values())
    thresholds, taus = [0.0], [total / len(stats)]
    for diff, r, kind, tie_kind in sorted(pairs, key=lambda p: p[0]):
        total -= acc(stats[r])
        stats[r][kind] -= 1
        stats[r][tie_kind] += 1
        total += acc(stats[r])
        if thresholds[-1] == diff:
            taus[-1] = total / len(stats)
        else:
            thresholds.append(diff)
            taus.append(total / len(stats))
    best = int(np.argmax(taus))
    return taus[best], thresholds[best]


@pytest.mark.parametrize("seed", range(5))
def test_item_averaged_acc23_equals_mt_metrics_eval_search(seed):
    rng = np.random.default_rng(seed)
    n_items, sizes = 12, rng.integers(1, 7, size=12)  # unequal items, some with one row (no pair)
    items = np.repeat(np.arange(n_items), sizes)
    human = rng.integers(0, 4, size=len(items)).astype(float)
    metric = np.round(human + rng.normal(scale=1.2, size=len(items)), 1)
    rows_m = [metric[items == k] for k in range(n_items) if (items == k).sum() >= 2]
    rows_h = [human[items == k] for k in range(n_items) if (items == k).sum() >= 2]
    expected, eps = _mtme_tau_optimization(rows_m, rows_h)
    order = rng.permutation(len(items))  # row order must not matter
    res = pairwise_accuracy(metric[order], human[order], average_by="item", items=items[order])
    assert res.estimate == pytest.approx(expected, abs=1e-12)
    assert res.n_groups == len(rows_m) and res.average_by == "item" and "averaged by item" in res.method
    # the chosen epsilon reaches the best average (ties between thresholds may pick another one)
    assert pairwise_accuracy(metric, human, average_by="item", items=items,
                             epsilon=eps).estimate == pytest.approx(expected, abs=1e-12)


def test_averaging_differs_from_pooling_and_needs_its_labels():
    # item 0: 2 rows (1 pair, concordant); item 1: 4 rows (6 pairs, 3 concordant)
    m = np.array([1, 2, 1, 2, 3, 4.0])
    h = np.array([1, 2, 1, 2, 4, 3.0])
    items = np.array([0, 0, 1, 1, 1, 1])
    pooled = pairwise_accuracy(m, h, groups=items, pairs="within", tie_calibration=False)
    averaged = pairwise_accuracy(m, h, average_by="item", items=items, tie_calibration=False)
    assert pooled.estimate == pytest.approx(6 / 7)  # 1 + 5 of 7 pairs
    assert averaged.estimate == pytest.approx((1 + 5 / 6) / 2)
    assert pairwise_accuracy(m, h, average_by="group", groups=items,
                             tie_calibration=False).estimate == averaged.estimate
    with pytest.raises(InputError, match="needs items="):
        pairwise_accuracy(m, h, average_by="item")
    with pytest.raises(InputError, match="pairs='all'"):
        pairwise_accuracy(m, h, average_by="group", groups=items, pairs="cross")


def test_pair_swap_statistic_is_the_difference_of_the_accuracies():
    rng = np.random.default_rng(5)
    items = np.repeat(np.arange(30), 5)
    human = rng.integers(0, 5, size=150).astype(float)
    a = np.round(human + rng.normal(scale=2.0, size=150), 1)
    b = np.round(human + rng.normal(scale=0.8, size=150), 1)
    res = compare_pairwise_accuracy(a, b, human, average_by="item", items=items, resample="pairs",
                                    resampling=Resampling(n_resamples=2000, random_state=0))
    acc = {k: pairwise_accuracy(x, human, average_by="item", items=items).estimate for k, x in (("a", a), ("b", b))}
    assert res.statistic == pytest.approx(acc["b"] - acc["a"], abs=1e-12)
    assert res.alternative == "greater" and "one-sided" in res.method and "pair-swap" in res.method
    assert res.p_value < 0.01  # b is much closer to the humans
    flipped = compare_pairwise_accuracy(b, a, human, average_by="item", items=items, resample="pairs",
                                        resampling=Resampling(n_resamples=2000, random_state=0))
    assert flipped.p_value > 0.99


def test_perm_both_one_sided_is_about_half_the_two_sided_p():
    rng = np.random.default_rng(8)
    human = rng.normal(size=40)
    a, b = human + rng.normal(size=40), human + rng.normal(size=40) * 0.8
    one = compare_pairwise_accuracy(a, b, human, resampling=Resampling(n_resamples=3000, random_state=1))
    less = compare_pairwise_accuracy(a, b, human, alternative="less",
                                     resampling=Resampling(n_resamples=3000, random_state=1))
    two = compare_pairwise_accuracy(a, b, human, alternative="two-sided",
                                    resampling=Resampling(n_resamples=3000, random_state=1))
    assert one.alternative == "greater" and two.alternative == "two-sided"
    assert two.p_value == pytest.approx(min(1.0, 2 * min(one.p_value, less.p_value)))
    assert any("(1 + #" in note for note in one.notes)


# ------------------------------------------------------------------------------ correlations
def test_williams_test_hand_worked():
    # r_a = 0.5, r_b = 0.6, r_ab = 0.7, n = 100:
    # k = 1 - .25 - .36 - .49 + 2 * .5 * .6 * .7 = 0.32; rbar = 0.55
    # t = 0.1 * sqrt(99 * 1.7) / sqrt(2 * 99 / 97 * 0.32 + 0.3025 * 0.027) = 1.6074...
    t = 0.1 * np.sqrt(99 * 1.7) / np.sqrt(2 * 99 / 97 * 0.32 + 0.55**2 * 0.3**3)
    res = williams_test(0.5, 0.6, 0.7, 100)
    assert res.effect_size == pytest.approx(t) and res.df == 97
    from scipy.stats import t as student

    assert res.p_value == pytest.approx(student.sf(t, 97))
    assert williams_test(0.5, 0.6, 0.7, 100, "two-sided").p_value == pytest.approx(2 * student.sf(t, 97))
    assert williams_test(0.6, 0.5, 0.7, 100).p_value == pytest.approx(1 - student.sf(t, 97))
    with pytest.raises(InputError, match="more than 3"):
        williams_test(0.5, 0.6, 0.7, 3)


def test_compare_correlations_williams_and_permutation_agree_on_direction():
    rng = np.random.default_rng(11)
    human = rng.normal(size=600)
    a, b = human + rng.normal(size=600) * 2, human + rng.normal(size=600) * 1.0
    w = compare_correlations(a, b, human, test="williams")
    p = compare_correlations(a, b, human, n_resamples=2000, random_state=0)
    r = [average_correlation(x, human).estimate for x in (a, b)]
    assert w.statistic == pytest.approx(r[1] - r[0]) and p.statistic == pytest.approx(r[1] - r[0])
    assert w.p_value < 0.01 and p.p_value < 0.01 and "Williams" in w.method and "PERM-BOTH" in p.method
    with pytest.raises(InputError, match="Pearson"):
        compare_correlations(a, b, human, method="kendall", test="williams")


def test_item_averaged_correlation_is_the_mean_of_item_correlations():
    rng = np.random.default_rng(2)
    items = np.repeat(np.arange(10), 6)
    human, metric = rng.normal(size=60), rng.normal(size=60)
    from scipy.stats import pearsonr

    expected = np.mean([pearsonr(human[items == k], metric[items == k]).statistic for k in range(10)])
    res = average_correlation(metric, human, average_by="item", items=items)
    assert res.estimate == pytest.approx(expected) and np.isnan(res.p_value)


# ------------------------------------------------------------------------------ WMT21 figures
def test_wmt21_is_en_segment_accuracy_averaged_by_item_and_pooled(wmt21_segments):
    """The issue's figures: chrF on is-en, acc23 with tie calibration, 0.5348 averaged by segment
    (WMT23's definition) vs 0.5373 pooled over the within-segment pairs."""
    from xleval.metrics import score_frame

    df = wmt21_segments[wmt21_segments["lp"] == "is-en"].reset_index(drop=True)
    chrf = score_frame(df, ["chrf"]).frame["chrf"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # unjudged segments are left out
        item = pairwise_accuracy(chrf, df["human_z"], average_by="item", items=df["seg_id"], nan_policy="omit")
        pooled = pairwise_accuracy(chrf, df["human_z"], groups=df["seg_id"], pairs="within", nan_policy="omit")
    assert round(item.estimate, 4) == 0.5348 and round(pooled.estimate, 4) == 0.5373
