"""acc23 pairwise accuracy with ties and tie calibration (Deutsch et al. 2023), checked by hand
and against a direct pure-Python transcription of the definition."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats as ss

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import Resampling, pairwise_accuracy


def test_hand_checked_example_without_useful_ties():
    # metric [1, 2, 3, 3], human [1, 3, 2, 2]; the 6 pairs:
    #   (0,1) m 1<2, h 1<3 -> C     (0,2) 1<3, 1<2 -> C     (0,3) 1<3, 1<2 -> C
    #   (1,2) m 2<3, h 3>2 -> D     (1,3) 2<3, 3>2 -> D     (2,3) m 3=3, h 2=2 -> tie in both
    # acc23(eps=0) = (C + T_hm) / 6 = (3 + 1) / 6 = 2/3.
    # Tie calibration: eps=1 turns (0,1), (1,2), (1,3) into metric ties -> (2 + 1) / 6 = 1/2;
    # eps=2 ties everything -> 1/6. So the best epsilon is 0.
    res = pairwise_accuracy([1, 2, 3, 3], [1, 3, 2, 2])
    assert res.estimate == pytest.approx(2 / 3)
    assert (res.concordant, res.discordant, res.ties_human, res.ties_metric, res.ties_both) == (3, 2, 0, 0, 1)
    assert res.epsilon == 0.0 and res.n_pairs == 6


def test_hand_checked_tie_calibration():
    # metric [1.0, 1.1, 3.0], human [1, 1, 2]:
    #   (0,1) |dm| = 0.1, humans tie -> T_h at eps=0, T_hm at eps >= 0.1
    #   (0,2) |dm| = 2.0, C          (1,2) |dm| = 1.9, C
    # eps=0 -> 2/3; eps=0.1 -> 3/3; eps=1.9 -> (1 + 1)/3; eps=2 -> 1/3. Best: eps = 0.1, acc = 1.
    res = pairwise_accuracy([1.0, 1.1, 3.0], [1, 1, 2])
    assert res.epsilon == pytest.approx(0.1) and res.estimate == 1.0
    assert pairwise_accuracy([1.0, 1.1, 3.0], [1, 1, 2], tie_calibration=False).estimate == pytest.approx(2 / 3)
    assert pairwise_accuracy([1.0, 1.1, 3.0], [1, 1, 2], epsilon=1.95).estimate == pytest.approx(2 / 3)


def test_cross_group_pairs_only():
    # groups a, a, b: cross pairs are (0,2) and (1,2) only.
    # metric [1, 2, 3], human [2, 1, 3]: (0,1) is discordant but within group a; (0,2), (1,2) concordant.
    m, h, g = [1.0, 2.0, 3.0], [2.0, 1.0, 3.0], ["a", "a", "b"]
    assert pairwise_accuracy(m, h, groups=g, pairs="cross").estimate == 1.0
    assert pairwise_accuracy(m, h, groups=g, pairs="cross").n_pairs == 2
    assert pairwise_accuracy(m, h, groups=g, pairs="within").estimate == 0.0
    assert pairwise_accuracy(m, h, pairs="all").estimate == pytest.approx(2 / 3)
    mask = np.zeros((3, 3), dtype=bool)
    mask[0, 1] = True
    assert pairwise_accuracy(m, h, pairs=mask).n_pairs == 1


def _reference_acc23(metric, human, mask=None, calibrate=True):
    """Direct transcription of the definition and of mt-metrics-eval's threshold search."""
    pairs = [(i, j) for i, j in itertools.combinations(range(len(metric)), 2) if mask is None or mask[i][j]]

    def acc(eps):
        good = 0
        for i, j in pairs:
            dm, dh = metric[i] - metric[j], human[i] - human[j]
            mtie, htie = abs(dm) <= eps, dh == 0
            good += (mtie and htie) or (not mtie and not htie and (dm > 0) == (dh > 0))
        return good / len(pairs)

    if not calibrate:
        return acc(0.0), 0.0
    candidates = sorted({0.0} | {abs(metric[i] - metric[j]) for i, j in pairs})
    scores = [acc(e) for e in candidates]
    best = int(np.argmax(scores))
    return scores[best], candidates[best]


@pytest.mark.parametrize("seed", range(6))
def test_matches_the_definition_on_random_data_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = 25
    human = rng.integers(0, 6, size=n).astype(float)  # many human ties
    metric = np.round(human + rng.normal(scale=1.5, size=n), 1)
    groups = rng.integers(0, 3, size=n)
    cross = groups[:, None] != groups[None, :]
    for mask, pairs in ((None, "all"), (cross, "cross")):
        for calibrate in (True, False):
            res = pairwise_accuracy(metric, human, groups=groups, pairs=pairs, tie_calibration=calibrate)
            acc, eps = _reference_acc23(metric.tolist(), human.tolist(), mask, calibrate)
            assert res.estimate == pytest.approx(acc)
            assert res.epsilon == pytest.approx(eps)


def test_without_ties_accuracy_is_one_plus_tau_over_two():
    rng = np.random.default_rng(9)
    m, h = rng.normal(size=50), rng.normal(size=50)
    res = pairwise_accuracy(m, h, tie_calibration=False)
    assert res.estimate == pytest.approx((1 + ss.kendalltau(m, h).statistic) / 2)


def test_monotone_rescaling_leaves_accuracy_unchanged():
    rng = np.random.default_rng(10)
    m, h = rng.normal(size=30), rng.normal(size=30)
    assert pairwise_accuracy(np.exp(m), h, tie_calibration=False).estimate == \
        pairwise_accuracy(m, h, tie_calibration=False).estimate


def test_bad_input_and_missing_values():
    with pytest.raises(InputError, match="needs groups"):
        pairwise_accuracy([1.0, 2.0], [1.0, 2.0], pairs="cross")
    with pytest.raises(InputError, match="no pairs"):
        pairwise_accuracy([1.0, 2.0], [1.0, 2.0], groups=["a", "a"], pairs="cross")
    with pytest.raises(InputError, match="epsilon"):
        pairwise_accuracy([1.0, 2.0], [1.0, 2.0], epsilon=-1)
    with pytest.raises(InputError, match="NaN"):
        pairwise_accuracy([1.0, 2.0, 3.0], [1.0, np.nan, 2.0])
    with pytest.warns(DataQualityWarning, match="1 of 4 items"):
        res = pairwise_accuracy([1.0, 2.0, 3.0, 4.0], [1.0, np.nan, 2.0, 3.0], groups=["a", "b", "b", "a"],
                                pairs="cross", nan_policy="omit")
    # remaining items 0 (a), 2 (b), 3 (a): cross pairs (0,2) and (2,3)
    assert res.n == 3 and res.n_pairs == 2


def test_compare_pairwise_accuracy_statistic_and_null():
    from xleval.stats import compare_pairwise_accuracy
    from xleval.stats._pairwise import _acc_rows

    rng = np.random.default_rng(12)
    n = 40
    human = np.round(rng.normal(size=n), 1)
    a = human + rng.normal(size=n)
    b = human + 0.2 * rng.normal(size=n)
    groups = rng.integers(0, 4, size=n)
    res = compare_pairwise_accuracy(a, b, human, groups=groups, pairs="cross",
                                    resampling=Resampling(n_resamples=500, random_state=1))
    expected = (pairwise_accuracy(b, human, groups=groups, pairs="cross").estimate
                - pairwise_accuracy(a, human, groups=groups, pairs="cross").estimate)
    assert res.statistic == pytest.approx(expected)
    assert res.p_value < 0.01 and res.random_state == 1
    same = compare_pairwise_accuracy(a, a, human, resampling=Resampling(n_resamples=200, random_state=1))
    assert same.statistic == 0 and same.p_value == 1.0
    # the batched accuracy used inside the test agrees with the one-row function row by row
    iu, ju = np.triu_indices(n, k=1)
    rows = np.stack([a, b, np.round(a, 0)])
    batched = _acc_rows(rows[:, iu] - rows[:, ju], human[iu] - human[ju], True)
    assert batched == pytest.approx([pairwise_accuracy(r, human).estimate for r in rows])


def test_system_level_accuracy_with_segment_bootstrap_via_sums():
    # Recipe for system-level CIs: one row per segment, columns = per-system metric sums, per-system
    # human sums; resample segments; the score recomputes system means and their pairwise accuracy.
    from xleval.stats import bootstrap_sums

    rng = np.random.default_rng(13)
    n_seg, n_sys = 200, 6
    quality = np.linspace(0, 1, n_sys)
    human = quality + rng.normal(scale=1.0, size=(n_seg, n_sys))
    metric = quality + rng.normal(scale=1.0, size=(n_seg, n_sys))
    stats = np.hstack([metric, human])

    def acc(sums):
        return pairwise_accuracy(sums[:n_sys], sums[n_sys:], tie_calibration=False).estimate

    res = bootstrap_sums(stats, acc, n_resamples=200, random_state=0, vectorized=False)
    assert res.estimate == pairwise_accuracy(metric.mean(0), human.mean(0), tie_calibration=False).estimate
    assert 0 <= res.ci_low <= res.estimate <= res.ci_high <= 1


def _acc23_by_brute_force(dm: np.ndarray, dh: np.ndarray) -> float:
    """acc23 with the best epsilon, every candidate (0 and each |dm|) tried: the definition, no sort."""
    best = 0.0
    for eps in np.concatenate([[0.0], np.abs(dm)]):
        mtie, htie = np.abs(dm) <= eps, dh == 0
        good = (mtie & htie) | (~mtie & ~htie & (np.sign(dm) == np.sign(dh)))
        best = max(best, good.mean())
    return best


@pytest.mark.parametrize("human_ties", [False, True])
def test_tie_calibrated_rows_equal_the_definition_with_and_without_human_ties(human_ties):
    """_acc_rows skips its sort where no human pair ties (system means across groups): then the best epsilon only
    loses concordant pairs and adds nothing. Both paths against the definition, metric ties included."""
    from xleval.stats._pairwise import _acc_rows

    rng = np.random.default_rng(7)
    dh = rng.integers(-3, 4, size=300).astype(float) if human_ties else rng.normal(size=300)
    assert (dh == 0).any() == human_ties
    dm = np.round(rng.normal(size=(6, 300)) + 0.8 * dh, 1)  # rounded: metric ties, exact zeros
    got = _acc_rows(dm, dh, calibrate=True)
    want = [_acc23_by_brute_force(row, dh) for row in dm]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dense", [True, False])
def test_resampled_pair_sums_equal_the_weights_they_avoid(monkeypatch, dense):
    """The bootstrap of pairwise accuracy sums counts[b, i] * counts[b, j] * value over pairs; the quadratic form
    (and its blocked fallback) must give exactly what the (B, P) weight matrix gives."""
    from xleval.stats import _grouped_bootstrap as gb

    if not dense:
        monkeypatch.setattr(gb, "_DENSE_LIMIT", 0)
        monkeypatch.setattr(gb, "_BLOCK_CELLS", 1000)  # several blocks
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(4), [5, 7, 6, 9])
    counts = gb.stratified_resample_counts(groups, 50, rng)
    iu, ju = gb.pair_indices(groups, "cross")
    values = rng.integers(0, 2, size=(3, len(iu))).astype(float)
    weights = counts[:, iu] * counts[:, ju]
    np.testing.assert_array_equal(gb.resampled_pair_sums(values, counts, iu, ju), weights @ values.T)
    correct = values[0]
    np.testing.assert_array_equal(gb.resampled_pair_accuracy(correct, counts, iu, ju),
                                  (weights @ correct) / weights.sum(axis=1))


def test_tie_calibrated_rows_with_few_human_ties_equal_the_definition():
    """Few human ties (system means, a few equal): _acc_rows searches the tied pairs' differences instead of sorting
    every pair; against the definition, with metric ties and exact zeros among the tied pairs."""
    from xleval.stats import _pairwise

    rng = np.random.default_rng(11)
    dh = rng.normal(size=400)
    dh[rng.choice(400, 12, replace=False)] = 0.0  # 12 human ties: fewer than one in 8 pairs
    assert _pairwise.FEW_TIES * int((dh == 0).sum()) < dh.size
    dm = np.round(rng.normal(size=(8, 400)) + 0.8 * dh, 1)
    dm[0, dh == 0] = 0.0  # a row whose every human-tied pair is an exact metric tie
    dm[1] = np.where(dh == 0, rng.choice([0.1, -0.1, 0.2], size=400), np.sign(dh) * np.maximum(np.abs(dm[1]), 0.3))
    dm[1, :5] = np.sign(dh[:5]) * 0.1  # a few concordant pairs the best epsilon (0.2) costs
    got = _pairwise._acc_rows(dm, dh, calibrate=True)
    want = [_acc23_by_brute_force(row, dh) for row in dm]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert _acc23_by_brute_force(dm[1], dh) > np.mean((np.sign(dm[1]) == np.sign(dh)) & (dh != 0))  # eps > 0 wins


def _swapped_by_definition(x: np.ndarray, y: np.ndarray, human: np.ndarray, iu: np.ndarray, ju: np.ndarray,
                           calibrate: bool) -> float:
    """acc23(y) - acc23(x) over the pairs (iu, ju), each from the definition (every epsilon tried)."""
    dh = human[iu] - human[ju]

    def acc(row: np.ndarray) -> float:
        dm = row[iu] - row[ju]
        if calibrate:
            return _acc23_by_brute_force(dm, dh)
        return float((((dm == 0) & (dh == 0)) | ((dh != 0) & (dm != 0) & (np.sign(dm) == np.sign(dh)))).mean())

    return acc(y) - acc(x)


@pytest.mark.parametrize("kind", ["cross ties", "all ties", "within", "mask", "binary metric", "no human tie"])
@pytest.mark.parametrize("calibrate", [True, False])
def test_swapped_accuracy_equals_the_definition_for_every_swap(kind, calibrate):
    """PERM-BOTH's statistic without the pair differences (a quadratic form in the swaps for the concordant pairs,
    the near pairs for tie calibration's gain) against the definition, swap by swap: human ties, metric ties,
    rows where the two metrics agree, the pair masks, and a metric of two values (every pair near: the row is
    counted densely)."""
    from xleval.stats._pairwise import _SwappedAccuracy

    rng = np.random.default_rng(len(kind) * 7 + calibrate)
    n = 36
    groups = rng.integers(0, 4, size=n)
    human = rng.normal(size=n) if kind == "no human tie" else rng.integers(0, 5, size=n).astype(float)
    a = np.round(human + rng.normal(size=n), 1)
    b = np.round(human + 0.5 * rng.normal(size=n), 1)
    b[:4] = a[:4]  # a swap changes nothing there
    if kind == "binary metric":
        a, b = (a > np.median(a)).astype(float), (b > np.median(b)).astype(float)
    mask = {"cross ties": groups[:, None] != groups[None, :], "within": groups[:, None] == groups[None, :],
            "mask": rng.random((n, n)) < 0.4}.get(kind, np.ones((n, n), dtype=bool))
    iu, ju = np.nonzero(np.triu(mask, k=1))
    statistic = _SwappedAccuracy(a, b, human, iu, ju, calibrate)
    swaps = rng.random((40, n)) < 0.5
    swaps[0] = False  # the observed statistic: no swap
    x, y = np.where(swaps, b, a), np.where(swaps, a, b)
    got = statistic(x, y, axis=1)
    want = [_swapped_by_definition(xr, yr, human, iu, ju, calibrate) for xr, yr in zip(x, y, strict=True)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert statistic(a, b) == pytest.approx(want[0], abs=1e-12)
    assert len(set(np.round(want, 12))) > 3  # the swaps move the statistic: a test that can fail


@pytest.mark.parametrize("levels", [4, 40, 0])
def test_compare_pairwise_accuracy_gives_the_dense_null_from_the_quadratic_form(monkeypatch, levels):
    """Over many pairs compare_pairwise_accuracy counts with the quadratic form; the same permutations through the
    dense pair differences (the form switched off) give the same null distribution, bit for bit, and the same
    p-value: with many human ties, a few, and none."""
    from xleval.stats import _pairwise, compare_pairwise_accuracy

    rng = np.random.default_rng(levels)
    n = 240
    groups = rng.integers(0, 8, size=n)
    human = rng.integers(0, levels, size=n).astype(float) if levels else rng.normal(size=n)
    a = human + rng.normal(size=n) + 0.3 * groups
    b = np.round(human + rng.normal(size=n), 2)
    assert int(np.triu(groups[:, None] != groups[None, :], k=1).sum()) >= _pairwise._FORM_PAIRS  # the form's size
    few = Resampling(n_resamples=300, random_state=5)
    form = compare_pairwise_accuracy(a, b, human, groups=groups, pairs="cross", resampling=few)
    monkeypatch.setattr(_pairwise, "_FORM_PAIRS", 10**12)
    dense = compare_pairwise_accuracy(a, b, human, groups=groups, pairs="cross", resampling=few)
    np.testing.assert_array_equal(form.null_distribution, dense.null_distribution)
    assert (form.statistic, form.p_value, form.method) == (dense.statistic, dense.p_value, dense.method)
    assert np.unique(form.null_distribution).size > 10


@pytest.mark.parametrize("seed", range(8))
def test_the_smallest_best_epsilon_with_few_human_ties_equals_the_sort(seed):
    """Tie calibration's epsilon where few human pairs tie comes from the tied pairs' differences alone (no sort of
    every pair): the same epsilon as the sort (the weighted path, unit weights) and, on a small sample, as trying
    every epsilon; with exact metric ties, a tied pair at difference 0, and an epsilon above 0 that wins."""
    from xleval.stats._pairwise import FEW_TIES, _calibrate

    rng = np.random.default_rng(seed)
    n_pairs = 3000
    dh = rng.normal(size=n_pairs)
    n_tied = int(rng.integers(1, n_pairs // FEW_TIES))
    dh[rng.choice(n_pairs, n_tied, replace=False)] = 0.0
    dm = np.round(rng.normal(size=n_pairs) + (0.5 + seed % 3) * dh, 1 + seed % 2)
    if seed % 2:
        dm[dh == 0] = rng.choice([0.0, 0.1, -0.1], size=n_tied)  # tied pairs the metric nearly ties: epsilon > 0
    got = _calibrate(dm, dh)
    assert got == _calibrate(dm, dh, np.ones(n_pairs))
    small = slice(0, 200)
    if FEW_TIES * int((dh[small] == 0).sum()) < 200:
        brute = max(np.concatenate([[0.0], np.abs(dm[small])]),
                    key=lambda e: (_definition_counts(dm[small], dh[small], e), -e))
        assert _calibrate(dm[small], dh[small]) == brute


def _definition_counts(dm: np.ndarray, dh: np.ndarray, eps: float) -> int:
    mtie, htie = np.abs(dm) <= eps, dh == 0
    return int(((mtie & htie) | (~mtie & ~htie & (np.sign(dm) == np.sign(dh)))).sum())
