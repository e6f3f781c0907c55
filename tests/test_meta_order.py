"""Every statistic of a meta-evaluation is independent of the order of the table's rows: SPA's sign
permutations, the significance tests' swaps, the bootstrap and every sum run over rows in one canonical order
(group, system, segment; integer segment ids by value). Checked by shuffling a table with missing judgements,
ties and several groups, with every option that resamples."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.meta import Clustering, MetaStatistics, meta_evaluate
from xleval.stats import Resampling


def _table(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp in ("de-en", "en-de"):
        q = rng.normal(size=6)
        for s in range(6):
            for i in range(1, 31):
                gold = q[s] + rng.normal()
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": i, "human": round(gold * 4) / 4,
                             "a": round(gold + rng.normal(), 1), "b": gold + 2 * rng.normal(),
                             "raw": 50 + 20 * gold})
    df = pd.DataFrame(rows)
    df.loc[rng.random(len(df)) < 0.1, "human"] = np.nan
    return df


def _run(df: pd.DataFrame, average_by: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(df, ["a", "b"], "human",
                            statistics=MetaStatistics(average_by=average_by, system_scores="complete", human_scale="da",
                                                      darr="raw", spa_permutations=100, chance=True,
                                                      chance_simulations=5), resampling=Resampling(n_resamples=50),
                            clustering=Clustering(statistics=("spa", "seg_acc_t", "sys_pearson", "sys_accuracy"),
                                                  n_resamples=50, task="wmt24"))
    frame = res.to_frame().sort_values(["group", "metric", "statistic"]).reset_index(drop=True)
    return frame, res


@pytest.mark.parametrize("average_by", ["none", "item", "system"])
def test_every_statistic_is_unchanged_by_shuffling_the_rows(average_by):
    df = _table()
    first, res = _run(df, average_by)
    assert {"spa", "seg_acc_t", "seg_pearson", "darr_tau", "global_accuracy"} <= set(first["statistic"])
    assert first["rank"].notna().any()
    for seed in (1, 2):
        shuffled = df.sample(frac=1.0, random_state=seed)
        again, res2 = _run(shuffled, average_by)
        pd.testing.assert_frame_equal(first, again, check_exact=True)
        assert res.ranking == res2.ranking


def test_segment_ids_as_text_are_ordered_as_numbers():
    df = _table()
    as_text = df.assign(seg_id=df["seg_id"].astype(str))
    a, _ = _run(df, "none")
    b, _ = _run(as_text.sample(frac=1.0, random_state=5), "none")
    pd.testing.assert_frame_equal(a, b, check_exact=True)
