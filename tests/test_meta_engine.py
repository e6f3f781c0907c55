"""xleval.meta.meta_evaluate: each statistic against a direct computation in the test (scipy, loops
over pairs), the complete-matrix rule, and the bad inputs refused with one line."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from xleval.exceptions import DataQualityWarning, InputError
from xleval.meta import Clustering, MetaStatistics, meta_evaluate, unit_correlations
from xleval.stats import Resampling


def _table(seed: int = 0, n_seg: int = 12, systems=("A", "B", "C", "D"),
           lps=("en-de", "en-fr", "de-en")) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp in lps:
        quality = {s: rng.normal() for s in systems}
        for s in systems:
            for i in range(n_seg):
                h = quality[s] + rng.normal()
                rows.append({"lp": lp, "system": s, "seg_id": i, "human": h,
                             "good": h + rng.normal(scale=0.5), "noisy": rng.normal(), "coarse": round(h)})
    return pd.DataFrame(rows)


def _acc(x, h):
    pairs = list(itertools.combinations(range(len(x)), 2))
    return np.mean([(np.sign(x[i] - x[j]) == np.sign(h[i] - h[j])) for i, j in pairs])


def test_system_level_statistics_equal_scipy_on_system_means():
    df = _table()
    res = meta_evaluate(df, ["good", "noisy"], "human", resampling=Resampling(n_resamples=50))
    assert res.system_scores == "complete"
    for lp, rows in df.groupby("lp"):
        means = rows.groupby("system")[["good", "noisy", "human"]].mean()
        for m in ("good", "noisy"):
            assert res.value(lp, m, "sys_pearson") == pytest.approx(ss.pearsonr(means[m], means["human"])[0], abs=1e-12)
            assert res.value(lp, m, "sys_spearman") == pytest.approx(ss.spearmanr(means[m], means["human"])[0],
                                                                      abs=1e-12)
            assert res.value(lp, m, "sys_kendall") == pytest.approx(ss.kendalltau(means[m], means["human"])[0],
                                                                     abs=1e-12)
            assert res.value(lp, m, "sys_accuracy") == pytest.approx(_acc(means[m].to_numpy(),
                                                                          means["human"].to_numpy()))
            assert res.value(lp, m, "seg_pearson") == pytest.approx(ss.pearsonr(rows[m], rows["human"])[0], abs=1e-12)
            assert res.value(lp, m, "seg_kendall") == pytest.approx(ss.kendalltau(rows[m], rows["human"])[0],
                                                                     abs=1e-12)


def test_global_and_cross_accuracy_count_the_pairs_directly():
    df = _table(1)
    res = meta_evaluate(df, ["good"], "human", resampling=Resampling(n_resamples=200, random_state=3))
    sys = df.groupby(["lp", "system"])[["good", "human"]].mean().reset_index()
    within, cross = [], []
    for i, j in itertools.combinations(range(len(sys)), 2):
        ok = np.sign(sys.good[i] - sys.good[j]) == np.sign(sys.human[i] - sys.human[j])
        (within if sys.lp[i] == sys.lp[j] else cross).append(ok)
    g, c = res.global_accuracy["good"], res.cross_accuracy["good"]
    assert g.value == pytest.approx(np.mean(within)) and g.n == len(within)
    assert c.value == pytest.approx(np.mean(cross)) and c.n == len(cross)
    assert g.ci_low <= g.value <= g.ci_high and c.ci_low <= c.value <= c.ci_high
    assert res == meta_evaluate(df, ["good"], "human", resampling=Resampling(n_resamples=200, random_state=3))  # seeded


def test_item_and_system_averaging_equal_per_unit_scipy():
    df = _table(2)
    rows = df[df.lp == "en-de"]
    for unit in ("seg_id", "system"):
        x, h, u = rows["good"].to_numpy(), rows["human"].to_numpy(), rows[unit].to_numpy()
        pearson, kendall, n, n_tau, constant = unit_correlations(x, h, u)
        per = [(ss.pearsonr(x[u == k], h[u == k])[0], ss.kendalltau(x[u == k], h[u == k])[0]) for k in np.unique(u)]
        assert n == n_tau == len(per) and constant == 0
        assert pearson == pytest.approx(np.mean([p for p, _ in per]), abs=1e-12)
        assert kendall == pytest.approx(np.mean([k for _, k in per]), abs=1e-12)
    res = meta_evaluate(df, ["coarse"], "human", statistics=MetaStatistics(average_by="item"),
                        resampling=Resampling(n_resamples=20))
    assert np.isfinite(res.value("en-de", "coarse", "seg_kendall"))


def test_acc_t_is_item_averaged_acc23_with_the_best_epsilon():
    df = _table(3, n_seg=6)
    res = meta_evaluate(df, ["coarse"], "human", resampling=Resampling(n_resamples=20))
    rows = df[df.lp == "en-fr"]
    best = 0.0
    for eps in [0.0, *np.unique(np.abs(np.subtract.outer(rows.coarse.to_numpy(), rows.coarse.to_numpy())))]:
        per_item = []
        for _, seg in rows.groupby("seg_id"):
            x, h = seg.coarse.to_numpy(), seg.human.to_numpy()
            good = [(abs(x[i] - x[j]) <= eps and h[i] == h[j]) or
                    (abs(x[i] - x[j]) > eps and h[i] != h[j] and np.sign(x[i] - x[j]) == np.sign(h[i] - h[j]))
                    for i, j in itertools.combinations(range(len(x)), 2)]
            per_item.append(np.mean(good))
        best = max(best, float(np.mean(per_item)))
    assert res.value("en-fr", "coarse", "seg_acc_t") == pytest.approx(best)


def test_complete_rule_drops_segments_with_a_warning():
    df = _table(4)
    df.loc[(df.lp == "en-de") & (df.system == "B") & (df.seg_id < 3), "human"] = np.nan
    with pytest.warns(DataQualityWarning, match="en-de 9 of 12"):
        res = meta_evaluate(df, ["good"], "human", resampling=Resampling(n_resamples=20))
    assert res.groups["en-de"]["segments"] == 9
    kept = df[(df.lp == "en-de") & (df.seg_id >= 3)].groupby("system")[["good", "human"]].mean()
    assert res.value("en-de", "good", "sys_pearson") == pytest.approx(ss.pearsonr(kept.good, kept.human)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        judged = meta_evaluate(df, ["good"], "human", statistics=MetaStatistics(system_scores="judged"),
                               resampling=Resampling(n_resamples=20))
    means = df[df.lp == "en-de"].dropna(subset=["human"]).groupby("system")[["good", "human"]].mean()
    assert judged.value("en-de", "good", "sys_pearson") == pytest.approx(ss.pearsonr(means.good, means.human)[0])


def test_spa_cell_uses_the_complete_matrix():
    from xleval.stats import soft_pairwise_accuracy

    df = _table(5)
    res = meta_evaluate(df, ["good"], "human", resampling=Resampling(n_resamples=20),
                        statistics=MetaStatistics(spa_permutations=200))
    rows = df[df.lp == "de-en"]
    m = rows.pivot(index="system", columns="seg_id", values="good").to_numpy()
    h = rows.pivot(index="system", columns="seg_id", values="human").to_numpy()
    assert res.value("de-en", "good", "spa") == pytest.approx(soft_pairwise_accuracy(m, h, n_resamples=200).statistic)


def test_system_level_table_is_used_as_it_is():
    df = _table(6).groupby(["lp", "system"])[["good", "human"]].mean().reset_index()
    res = meta_evaluate(df, ["good"], "human", segment=None, resampling=Resampling(n_resamples=20))
    assert res.system_scores == "table" and res.segment is None
    assert "spa" not in res.statistics() and "seg_pearson" not in res.statistics()


def test_scales_cross_pairs_join_groups_of_one_scale():
    df = _table(7)
    res = meta_evaluate(df, ["good"], "human",
                        statistics=MetaStatistics(human_scale={"en-de": "a", "en-fr": "a", "de-en": "b"}),
                        resampling=Resampling(n_resamples=20))
    assert res.cross_accuracy["good"].n == 16  # 4 x 4 systems of en-de x en-fr only


@pytest.mark.parametrize("change, match", [
    (lambda d: d.assign(good=3.0), "constant"),
    (lambda d: d[~((d.lp == "en-de") & (d.system != "A"))], "one judged system"),
    (lambda d: d.assign(good=d.good.where(~((d.lp == "en-fr") & (d.system == "C")))), "scores some systems"),
    (lambda d: d.assign(human=d.lp.map({"en-de": 1.0, "en-fr": 2.0, "de-en": 3.0})), "tied everywhere"),
    (lambda d: d.assign(human=np.where(d.lp == "en-de", d.human * 50, d.human)), "different scales"),
    (lambda d: d.assign(good=d.lp.map({"en-de": 1.0, "en-fr": 2.0, "de-en": 3.0})), "'good' is tied everywhere"),
])
def test_bad_inputs_are_refused(change, match):
    with pytest.raises(InputError, match=match):
        meta_evaluate(change(_table(8)), ["good"], "human", resampling=Resampling(n_resamples=20))


def test_clusters_chance_and_task_come_from_the_stats_functions():
    from xleval.stats import chance_baseline, metric_clusters

    df = _table(9)
    res = meta_evaluate(df, ["good", "noisy", "coarse"], "human", resampling=Resampling(n_resamples=20),
                        clustering=Clustering(statistics=["sys_pearson"], task="wmt24", n_resamples=50),
                        statistics=MetaStatistics(chance=True, chance_simulations=20, spa_permutations=100))
    rows = df[df.lp == "en-fr"]
    means = rows.groupby("system")[["good", "noisy", "coarse", "human"]].mean()
    direct = metric_clusters({m: means[m].to_numpy() for m in ("good", "noisy", "coarse")}, means["human"].to_numpy(),
                             "pearson", n_resamples=50, random_state=res.random_state)
    got = {c.metric: c.rank for c in res.cells if c.group == "en-fr" and c.statistic == "sys_pearson"}
    assert got == direct.ranks
    acc = next(c for c in res.cells if c.group == "en-fr" and c.metric == "good" and c.statistic == "sys_accuracy")
    assert acc.chance == pytest.approx(chance_baseline("pairwise_accuracy", means["human"].to_numpy(),
                                                       means["good"].to_numpy()).value)
    assert [c.chance for c in res.cells if c.statistic == "sys_kendall"] == [0.0] * 9
    assert res.task == "wmt24" and set(res.ranking) == {"good", "noisy", "coarse"}
    assert min(v["rank"] for v in res.ranking.values()) == 1
    spa_ranks = [c.rank for c in res.cells if c.statistic == "spa"]
    assert spa_ranks and all(r is not None for r in spa_ranks)


def test_system_level_tables_check_scales_by_range_only():
    df = _table(10).groupby(["lp", "system"])[["good", "human"]].mean().reset_index()
    df.loc[df.lp == "en-de", "human"] *= 10  # spread differs, ranges overlap: one scale with unlike systems
    assert meta_evaluate(df, ["good"], "human", segment=None, resampling=Resampling(n_resamples=20)).cross_accuracy
    with pytest.raises(InputError, match="ranges do not overlap"):
        meta_evaluate(df.assign(human=np.where(df.lp == "en-fr", df.human + 100, df.human)), ["good"], "human",
                      segment=None, resampling=Resampling(n_resamples=20))


def test_system_means_a_little_apart_are_one_scale_and_far_apart_are_not():
    # WMT20's raw DA system scores: ps-en at most 67.3, pl-en at least 73.2, on one 0-100 scale (refused before)
    df = pd.DataFrame({"lp": np.repeat(["en-de", "en-fr", "de-en"], 4), "system": list("ABCD") * 3,
                       "good": [1.0, 2, 3, 4] * 3,
                       "human": [60.0, 64, 66, 70, 75, 78, 80, 85, 50, 58, 62, 69]})  # ranges 10, 10, 19
    # de-en at most 69, en-fr at least 75: 6 apart, less than the median range (10)
    res = meta_evaluate(df, ["good"], "human", segment=None, resampling=Resampling(n_resamples=20))
    assert res.value("en-fr", "good", "sys_pearson") == pytest.approx(np.corrcoef([1, 2, 3, 4], [75, 78, 80, 85])[0, 1])
    far = df.assign(human=np.where(df.lp == "en-fr", df.human + 6, df.human))  # 12 apart: more than the median
    with pytest.raises(InputError, match=r"de-en at most 69, en-fr at least 81, further apart than the groups' "
                                         r"median range, 10\)"):
        meta_evaluate(far, ["good"], "human", segment=None, resampling=Resampling(n_resamples=20))


def test_wmt23_ranks_segment_level_pearson_too():
    """WMT23's tasks include segment-level Pearson (no averaging) per pair: its clusters come from
    metric_clusters(level="segment") on the pair's systems x segments matrices, and no task is left out."""
    from xleval.stats import metric_clusters

    df = _table(11)
    res = meta_evaluate(df, ["good", "noisy", "coarse"], "human", resampling=Resampling(n_resamples=20),
                        clustering=Clustering(task="wmt23", n_resamples=50))
    assert not [n for n in res.notes if "left out of the wmt23 average" in n], res.notes
    rows = df[df.lp == "en-de"]
    matrices = {c: rows.pivot(index="system", columns="seg_id", values=c).to_numpy()
                for c in ("good", "noisy", "coarse", "human")}
    human = matrices.pop("human")
    direct = metric_clusters(matrices, human, "pearson", level="segment", n_resamples=50,
                             random_state=res.random_state)
    got = {c.metric: c.rank for c in res.cells if c.group == "en-de" and c.statistic == "seg_pearson"}
    assert got == direct.ranks
    assert direct.values["good"] > direct.values["noisy"]


def test_cross_group_accuracy_has_a_chance_baseline_checked_by_simulation():
    """The chance value of cross-group accuracy equals the mean accuracy of the metric shuffled among the
    systems (one human scale), ties in both kept, within three standard errors of 4,000 shuffles."""
    rng = np.random.default_rng(5)
    rows = [{"lp": lp, "system": f"s{i}", "human": float(rng.integers(0, 4)), "coarse": float(rng.integers(0, 3))}
            for lp in ("en-de", "en-fr", "de-en") for i in range(5)]
    df = pd.DataFrame(rows)
    res = meta_evaluate(df, ["coarse"], "human", segment=None, statistics=MetaStatistics(human_scale="da", chance=True),
                        resampling=Resampling(n_resamples=20))
    chance = res.cross_accuracy["coarse"].chance
    x, h, g = df["coarse"].to_numpy(), df["human"].to_numpy(), df["lp"].to_numpy()
    iu, ju = np.triu_indices(len(df), k=1)
    cross = g[iu] != g[ju]
    iu, ju = iu[cross], ju[cross]

    def accuracy(metric):
        dm, dh = np.sign(metric[iu] - metric[ju]), np.sign(h[iu] - h[ju])
        return np.mean(dm == dh)

    assert res.cross_accuracy["coarse"].value == pytest.approx(accuracy(x))
    draws = np.array([accuracy(rng.permutation(x)) for _ in range(4000)])
    assert abs(draws.mean() - chance) < 3 * draws.std(ddof=1) / np.sqrt(len(draws))
    assert chance != pytest.approx(0.5, abs=0.02)  # the ties move it away from a coin's 0.5


def test_large_units_take_kendall_from_scipy_with_the_same_numbers(monkeypatch):
    from xleval.meta import _engine

    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=300), 1)
    h = np.round(x + rng.normal(size=300), 1)
    units = np.repeat(np.arange(6), 50)
    h[units == 2] = 1.0  # a constant unit: left out of both averages
    small = unit_correlations(x, h, units)
    monkeypatch.setattr(_engine, "_PAIRWISE_UNIT", 10)
    large = unit_correlations(x, h, units)
    assert small.n_constant == large.n_constant == 1 and small.n_kendall == large.n_kendall == 5
    assert large.kendall == pytest.approx(small.kendall, abs=1e-12)
    assert large.pearson == small.pearson


def test_a_metric_that_scores_only_some_groups_is_said_beside_its_accuracies_across_groups():
    # WMT20's systems.csv: BLEURT scores the 9 pairs into English only; its cross-group accuracy (0.841) stood beside
    # COMET's over all 16 (0.744) without a word
    df = _table(10)
    df["partial"] = df["good"].where(df["lp"] != "en-fr")
    with pytest.warns(DataQualityWarning, match="en-fr 0 of 12 .partial."):  # the segments each metric rests on
        res = meta_evaluate(df, ["good", "partial"], "human", resampling=Resampling(n_resamples=20))
    assert ("metrics that score only some groups: partial 2 of 3 (none in en-fr): their accuracies across groups pool "
            "those groups only and do not compare with the other metrics' (keep the groups every metric scores to "
            "compare them, as the calibrated variants are compared)") in res.notes
    # oracle: the metric's own accuracy across groups is the one over the groups it scores
    alone = meta_evaluate(df[df["lp"] != "en-fr"], ["partial"], "human", resampling=Resampling(n_resamples=20))
    assert res.cross_accuracy["partial"].value == alone.cross_accuracy["partial"].value
    full = meta_evaluate(df, ["good"], "human", resampling=Resampling(n_resamples=20))
    assert not [n for n in full.notes if "only some groups" in n]
