"""meta_evaluate against numbers of mt-metrics-eval (google-research/mt-metrics-eval, commit 68a481a,
``stats.Correlation``) run once on the seeded table below and transcribed here (the project never
imports it): segment-level Pearson/Kendall with ``average_by`` none/item/sys (gold Nones filtered),
acc-t (``KendallWithTiesOpt(average_by='item', variant='acc23', sample_rate=1.0)``), system-level
Pearson/Kendall/Spearman of the judged means, and SPA (``PairwiseConfidenceError``, complete matrix)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling

MTME = {"none": (0.7835046454500121, 0.6037981469083467), "item": (0.7643403063956927, 0.6099294071455624),
        "system": (0.7127362836587174, 0.5355132410334077)}
ACC_T = 0.7631746031746033
SYSTEM = {"sys_pearson": 0.9702437895163972, "sys_kendall": 0.8333333333333334, "sys_spearman": 0.9500000000000001}
SPA = 0.9317222222222222


def _inputs():
    rng = np.random.default_rng(7)
    n_sys, n_items = 9, 40
    q = rng.normal(size=n_sys)
    gold = q[:, None] + rng.normal(size=(n_sys, n_items))
    metric = np.round(gold + rng.normal(scale=1.0, size=(n_sys, n_items)), 1)  # metric ties
    gold = np.round(gold * 4) / 4  # human ties
    mask = rng.random((n_sys, n_items)) < 0.15  # not judged
    rows = [{"lp": "x-y", "system": f"s{s}", "seg_id": i, "human": gold[s, i], "judged": not mask[s, i],
             "m": metric[s, i]} for s in range(n_sys) for i in range(n_items)]
    df = pd.DataFrame(rows)
    return df.assign(human=df["human"].where(df["judged"])), df


@pytest.mark.parametrize("average_by", ["none", "item", "system"])
def test_segment_level_equals_mt_metrics_eval(average_by):
    sparse, _ = _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(sparse, ["m"], "human",
                            statistics=MetaStatistics(average_by=average_by, system_scores="judged", spa=False),
                            resampling=Resampling(n_resamples=20))
    pearson, kendall = MTME[average_by]
    assert res.value("x-y", "m", "seg_pearson") == pytest.approx(pearson, abs=1e-12)
    assert res.value("x-y", "m", "seg_kendall") == pytest.approx(kendall, abs=1e-12)
    assert res.value("x-y", "m", "seg_acc_t") == pytest.approx(ACC_T, abs=1e-12)
    for stat, value in SYSTEM.items():
        assert res.value("x-y", "m", stat) == pytest.approx(value, abs=1e-12)


def test_spa_equals_mt_metrics_eval_on_the_complete_matrix():
    _, complete = _inputs()
    res = meta_evaluate(complete, ["m"], "human", resampling=Resampling(n_resamples=20))
    assert res.value("x-y", "m", "spa") == pytest.approx(SPA, abs=1e-12)


#: mt-metrics-eval ``AverageCorrelation(scipy.stats.pearsonr, num_sys, average_by='item', pdp=True)`` (same commit)
PDP = {"sparse": 0.771625154890507, "complete": 0.7952266057937621}


def test_pdp_equals_mt_metrics_eval():
    sparse, complete = _inputs()
    for name, df in (("sparse", sparse), ("complete", complete)):
        res = meta_evaluate(df, ["m"], "human", statistics=MetaStatistics(system_scores="judged", spa=False),
                            resampling=Resampling(n_resamples=200))
        cell = next(c for c in res.cells if c.statistic == "seg_pdp")
        assert cell.value == pytest.approx(PDP[name], abs=1e-12)
        assert cell.ci_low < cell.value < cell.ci_high


def test_pdp_by_hand():
    """3 systems x 3 items, one output not judged. Pairs (i < j) of each item, (dh, dm):
    item 0: (-2, -0.4), (-1, 0.4), (1, 0.8); item 1: (1, -0.3), (0, -0.5), (-1, -0.2); item 2: (-2, -0.6).
    sum dh dm = 2.3, sum dh^2 = 12, sum dm^2 = 1.7: PDP = 2.3 / sqrt(20.4) (mt-metrics-eval: 0.509228559185555)."""
    from xleval.stats import pairwise_difference_pearson

    h = [1, 2, np.nan, 3, 1, 2, 2, 2, 4]
    m = [0.5, 0.1, 0.3, 0.9, 0.4, 0.2, 0.1, 0.6, 0.8]
    items = [0, 1, 2] * 3
    res = pairwise_difference_pearson(m, h, items, n_resamples=50)
    assert res.estimate == pytest.approx(2.3 / np.sqrt(20.4), abs=1e-15)
    assert res.estimate == pytest.approx(0.509228559185555, abs=1e-12)
    assert res.n == 7
