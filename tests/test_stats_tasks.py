"""WMT23/WMT24 task presets and the weighted averages over tasks (mt-metrics-eval's tasks.py).

Oracles: the task lists and weight vectors of tasks.py's ``WMT23``/``WMT24`` functions (read from
its source), ``tasks_test.py``'s ``testAssignWeights`` expectations (transcribed; its task set
needs no data), and the formulas of ``AverageRanks``/``AverageCorrs``/``AverageCorrMatrix``
computed by hand on small synthetic results.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from xleval import stats
from xleval.exceptions import InputError


def test_wmt23_preset():
    tasks = stats.wmt_tasks("wmt23")
    assert len(tasks) == 10
    first = tasks[0]
    assert (first.lang, first.level, first.statistic) == ("en-de,he-en,zh-en", "sys", "pairwise_accuracy")
    assert first.languages == ("en-de", "he-en", "zh-en")
    assert first.weight == pytest.approx(3 / 12)
    rest = [(t.lang, t.level, t.statistic, t.average_by, t.test) for t in tasks[1:]]
    assert rest[:3] == [("en-de", "sys", "pearson", "none", "scores"), ("en-de", "seg", "pearson", "none", "scores"),
                        ("en-de", "seg", "acc_t", "item", "pairs")]
    assert [t.lang for t in tasks[1:]] == ["en-de"] * 3 + ["he-en"] * 3 + ["zh-en"] * 3
    assert all(t.weight == pytest.approx(1 / 12) for t in tasks[1:])
    assert tasks[3].sample_rate == 1.0 and tasks[3].early_stopping == (100, 0.02, 0.5)


def test_wmt24_preset_and_custom_pairs():
    tasks = stats.wmt_tasks("wmt24")
    assert [(t.lang, t.level, t.statistic) for t in tasks] == [
        ("en-de", "sys", "spa"), ("en-de", "seg", "acc_t"), ("en-es", "sys", "spa"), ("en-es", "seg", "acc_t"),
        ("ja-zh", "sys", "spa"), ("ja-zh", "seg", "acc_t")]
    assert all(t.weight == pytest.approx(1 / 6) for t in tasks) and tasks[0].test_set == "wmt24"
    mine = stats.wmt_tasks("wmt23", lps=["zh-en", "en-de"])
    assert mine[0].lang == "en-de,zh-en" and mine[0].weight == pytest.approx(2 / 8)
    assert stats.wmt_tasks("wmt24_on_wmt23")[0].test_set == "wmt23"
    with pytest.raises(InputError, match="preset"):
        stats.wmt_tasks("wmt19")


@dataclass
class _Task:  # the attributes tasks_test.py's task set differs in
    test_set: str
    lang: str
    statistic: str


def test_assign_weights_transcribes_tasks_test():
    # tasks_test.py TaskSetResultsTest: accuracy over 3 pairs, pearson x 3 pairs, kendall x 2 pairs
    tasks = [_Task("wmt22", "en-de,en-ru,zh-en", "accuracy"), _Task("wmt22", "en-de", "pearson"),
             _Task("wmt22", "en-ru", "pearson"), _Task("wmt22", "zh-en", "pearson"),
             _Task("wmt22", "en-de", "kendall"), _Task("wmt22", "en-ru", "kendall")]
    every = ["test_set", "lang", "statistic"]
    assert stats.assign_weights(tasks, every) == pytest.approx([1 / 4, 1 / 8, 1 / 8, 1 / 4, 1 / 8, 1 / 8])
    assert stats.assign_weights(tasks, ["statistic"]) == pytest.approx([1 / 3, 1 / 9, 1 / 9, 1 / 9, 1 / 6, 1 / 6])
    assert stats.assign_weights(tasks, ["test_set"]) == pytest.approx([1 / 6] * 6)
    assert stats.assign_weights(tasks, []) == pytest.approx([1 / 6] * 6)
    with pytest.raises(InputError, match="no attribute"):
        stats.assign_weights(tasks, ["corr_fcn"])


def _results() -> list[stats.MetricClusters]:
    rng = np.random.default_rng(5)
    human = np.linspace(0, 1, 6)[:, None] + rng.normal(size=(6, 30))
    metrics = {f"m{k}": human + rng.normal(size=human.shape) * (0.5 + k) for k in range(3)}
    sys_r = stats.metric_clusters(metrics, human, "pearson", n_resamples=200, random_state=1)
    seg_r = stats.metric_clusters(metrics, human, "acc_t", n_resamples=200, random_state=2)
    return [sys_r, seg_r]


def test_average_ranks_and_statistics_by_formula():
    results = _results()
    w = [0.25, 0.75]
    ranks = stats.weighted_average_ranks(results, w)
    for m in ("m0", "m1", "m2"):
        assert ranks[m] == pytest.approx(0.25 * results[0].ranks[m] + 0.75 * results[1].ranks[m])
    assert list(ranks.values()) == sorted(ranks.values())
    avg = stats.weighted_average_statistics(results, w)
    for m in ("m0", "m1", "m2"):
        # Pearson maps (r + 1) / 2, accuracy stays
        assert avg[m] == pytest.approx(0.25 * (results[0].values[m] + 1) / 2 + 0.75 * results[1].values[m])
    assert list(avg.values()) == sorted(avg.values(), reverse=True)
    uniform = stats.weighted_average_ranks(results)
    assert uniform["m0"] == pytest.approx((results[0].ranks["m0"] + results[1].ranks["m0"]) / 2)


def test_average_clusters_from_draws():
    results = _results()
    w = [0.5, 0.5]
    res = stats.average_clusters(results, w)
    a, b = res.metrics[0], res.metrics[2]
    null = np.zeros(200)
    for wk, r, scale in zip(w, results, (2.0, 1.0), strict=True):
        null += wk * r.draws[r.metrics.index(a), r.metrics.index(b)] / scale
    observed = res.values[a] - res.values[b]
    assert res.pvalues[0, 2] == pytest.approx(np.mean(null >= observed - 1e-12))
    assert list(res.ranks.values()) == stats.assign_ranks(res.pvalues, 0.05)


def test_weights_checked():
    results = _results()
    with pytest.raises(InputError, match="weights"):
        stats.weighted_average_ranks(results, [1.0])
    with pytest.raises(InputError, match="weights"):
        stats.weighted_average_statistics(results, [-1.0, 2.0])


def test_wmt25_preset_is_mt_metrics_evals_shape():
    """mt-metrics-eval tasks.WMT25: 16 pairs (regional codes), per pair system-level pce (SPA) and segment-level
    KendallWithTiesOpt averaged by item with the pairs test, weights all 1/32."""
    from xleval.stats import WMT25_LPS

    tasks = stats.wmt_tasks("wmt25")
    assert len(WMT25_LPS) == 16 and "en-sr_Cyrl_RS" in WMT25_LPS
    assert len(tasks) == 32 and {t.test_set for t in tasks} == {"wmt25"}
    assert [t.lang for t in tasks[::2]] == sorted(WMT25_LPS)
    assert all(t.weight == pytest.approx(1 / 32) for t in tasks)
    seg = [t for t in tasks if t.level == "seg"]
    assert {(t.statistic, t.average_by, t.test) for t in seg} == {("acc_t", "item", "pairs")}
    assert {t.statistic for t in tasks if t.level == "sys"} == {"spa"}


def test_read_tasks_from_a_file(tmp_path):
    import json

    from xleval.exceptions import InputError
    from xleval.stats import read_tasks

    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"lang": "en-de", "level": "sys", "statistic": "spa", "weight": 3},
                                {"lang": "en-de", "level": "seg", "statistic": "acc_t"}]), encoding="utf-8")
    tasks = read_tasks(str(path))
    assert [t.weight for t in tasks] == [0.75, 0.25]
    assert tasks[1].average_by == "item" and tasks[1].test == "pairs"
    for bad, says in (([{"lang": "en-de", "level": "seg", "statistic": "spa"}], "is not a task"),
                      ([{"lang": "en-de,de-en", "level": "sys", "statistic": "spa"}], "global accuracy only"),
                      ([{"lang": "en-de", "level": "sys", "statistic": "spa", "wieght": 1}], "unknown field 'wieght'"),
                      ({"lang": "en-de"}, "non-empty JSON list")):
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(InputError, match=says):
            read_tasks(str(path))
