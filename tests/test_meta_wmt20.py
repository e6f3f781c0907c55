"""WMT20 metrics task oracles (shared data, wmt20-metrics): the engine's DARR Kendall-like tau equals
the organisers' published values, and system-level Kendall/Pearson equal the organisers' tables."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.meta import MetaStatistics, darr_tau, meta_evaluate
from xleval.stats import Resampling

pytestmark = pytest.mark.data

#: chrF's published DARR taus (results/output/seglevel_allsys/RR-newstest2020-<lp>-seg-nohy-cor.csv of
#: WMT-Metrics-task/wmt20-metrics, as listed in the data README, 4 decimals)
CHRF_DARR = {"cs-en": 0.0863, "de-en": 0.4379, "en-cs": 0.4722, "en-iu": 0.3439, "en-ja": 0.5060, "en-pl": 0.2504,
             "en-ru": 0.1527, "en-ta": 0.5889, "en-zh": 0.4004, "iu-en": 0.2536, "ja-en": 0.2419, "km-en": 0.2671,
             "pl-en": 0.0284, "ps-en": 0.1440, "ru-en": 0.0495, "ta-en": 0.1857}

#: system-level Kendall over MT systems vs DA z: results/output/system-level/DA-<lp>-cor.csv (commit 3e434fc)
KENDALL = {("en-cs", "metric:COMET"): 0.909090909090909, ("en-cs", "metric:BLEU"): 0.5151515151515151,
           ("en-cs", "metric:chrF"): 0.4848484848484848, ("en-cs", "metric:prism"): 0.8181818181818181,
           ("cs-en", "metric:BLEU"): 0.8484848484848484, ("cs-en", "metric:chrF"): 0.8181818181818181,
           ("cs-en", "metric:COMET"): 0.7272727272727272}

#: system-level Pearson, results/tables/tbl-DA-Pearson-MTall-exclhuman-ento.tex (3 decimals). The header labels of
#: that table are shifted (the commit is "Temporary bug fix in latex table creation"); the row of system counts
#: under them and chrF/COMET identify the columns: 1st en-cs (12), 3rd en-ja (11), 4th en-pl (14), 5th en-ru (9),
#: 6th en-ta (15), 7th en-zh (12), 8th en-iu (11).
PEARSON = {("en-cs", "metric:chrF"): 0.826, ("en-cs", "metric:BLEU"): 0.825, ("en-cs", "metric:COMET"): 0.978,
           ("en-ja", "metric:chrF"): 0.951, ("en-ja", "metric:COMET"): 0.974, ("en-pl", "metric:chrF"): 0.957,
           ("en-ru", "metric:chrF"): 0.982, ("en-ta", "metric:chrF"): 0.937, ("en-zh", "metric:COMET"): 0.007,
           ("en-zh", "metric:BLEU"): 0.928, ("en-iu", "metric:chrF"): 0.350, ("en-iu", "metric:BLEU"): 0.163}


@pytest.fixture(scope="module")
def segments(shared_data):
    df = pd.read_parquet(shared_data("wmt20-metrics", "segments.parquet"))
    return df[~df["is_human"]]


def test_chrf_darr_tau_equals_published(segments):
    taus = darr_tau(segments, "metric:chrF", "human_da_raw")
    assert {lp: round(t, 4) for lp, (t, _) in taus.items()} == CHRF_DARR


def test_every_segment_metric_darr_tau_equals_the_organisers_agree_flags(segments, shared_data):
    agree = pd.read_parquet(shared_data("wmt20-metrics", "darr_agree.parquet"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(segments, ["metric:chrF", "metric:TER", "metric:YiSi-2", "metric:parbleu"], "human_da_z",
                            statistics=MetaStatistics(darr="human_da_raw", system_scores="judged", human_scale="da_z",
                                                      spa=False), resampling=Resampling(n_resamples=2))
    checked = 0
    for name in ("chrF", "TER", "YiSi-2", "parbleu"):
        for lp, rows in agree.groupby("lp"):
            flags = rows[f"agree:{name}"].dropna().astype(float)
            if flags.empty:
                continue
            cell = [c for c in res.cells
                    if c.group == lp and c.metric == f"metric:{name}" and c.statistic == "darr_tau"]
            assert cell[0].n == len(flags)
            assert cell[0].value == pytest.approx(2 * flags.mean() - 1, abs=1e-12)
            checked += 1
    assert checked == 64


def test_system_level_kendall_and_pearson_equal_the_organisers_tables(shared_data):
    systems = pd.read_csv(shared_data("wmt20-metrics", "systems.csv"))
    systems = systems[~systems["is_human"] & systems["human_da_z"].notna()]
    lps = sorted({lp for lp, _ in [*KENDALL, *PEARSON]})
    metrics = sorted({m for _, m in [*KENDALL, *PEARSON]})
    res = meta_evaluate(systems[systems["lp"].isin(lps)], metrics, "human_da_z", segment=None,
                        statistics=MetaStatistics(human_scale="da_z"), resampling=Resampling(n_resamples=20))
    assert res.system_scores == "table"
    for (lp, m), tau in KENDALL.items():
        assert res.value(lp, m, "sys_kendall") == pytest.approx(tau, abs=1e-12)
    for (lp, m), r in PEARSON.items():
        assert round(res.value(lp, m, "sys_pearson"), 3) == r
    assert np.isfinite(res.cross_accuracy["metric:chrF"].value)


def test_raw_da_system_scores_read_as_one_scale_without_being_told(shared_data):
    # every pair's raw DA is one 0-100 scale, but WMT20's system means lie apart by pair (ps-en at most 67.3, pl-en
    # at least 73.2): meta refused them as "different scales across groups" until --human-scale was given
    systems = pd.read_csv(shared_data("wmt20-metrics", "systems.csv"))
    systems = systems[~systems["is_human"] & systems["human_da_raw"].notna()]
    means = systems.groupby("lp")["human_da_raw"]
    assert means.max()["ps-en"] < means.min()["pl-en"]  # the ranges do not overlap
    res = meta_evaluate(systems, ["metric:chrF", "metric:BLEU"], "human_da_raw", segment=None,
                        resampling=Resampling(n_resamples=20))
    told = meta_evaluate(systems, ["metric:chrF", "metric:BLEU"], "human_da_raw", segment=None,
                         statistics=MetaStatistics(human_scale="da"), resampling=Resampling(n_resamples=20))
    for lp in ("de-en", "ps-en", "en-ta"):  # oracle: Pearson of the table's own columns
        part = systems[(systems["lp"] == lp) & systems["metric:chrF"].notna()]
        assert res.value(lp, "metric:chrF", "sys_pearson") == pytest.approx(
            np.corrcoef(part["metric:chrF"], part["human_da_raw"])[0, 1], abs=1e-12)
    assert res.cross_accuracy["metric:chrF"].value == told.cross_accuracy["metric:chrF"].value
