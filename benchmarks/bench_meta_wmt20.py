"""WMT20 meta-evaluation at full size: (1) significance clusters of every pair and every segment metric, SPA +
acc-t at 1,000 resamples (the issue's target: under 60 CPU-s), and (2) segment-level correlations averaged by
item, by system and not averaged (``--average-by system`` should cost what ``item`` costs).

Anchor, in the same run, when ``MTME`` names a local checkout of google-research/mt-metrics-eval (its code is
read, never copied or installed): its own functions on the same inputs. (1) ``stats.PermutationSigDiff`` with
``PairwiseConfidenceError`` (SPA's test) and ``stats.PairwisePermutationSigDiff`` (acc-t's) for one metric pair of
one language pair, timed over ``--mtme-resamples`` resamples and extrapolated linearly to 1,000 resamples and to
every metric pair of every language pair (their cost is linear in both); (2) ``stats.AverageCorrelation`` with
Pearson and Kendall, ``average_by`` item and sys, on every pair's systems x segments matrices. CPU seconds
(``time.process_time``: the machine is shared, wall time is not a measure).

Usage: XLEVAL_DATA=/path/to/shared/data [MTME=/path/to/mt-metrics-eval] python benchmarks/bench_meta_wmt20.py
       [--resamples 1000] [--mtme-resamples 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.meta import Clustering, MetaStatistics, meta_evaluate, unit_correlations


def load() -> tuple[pd.DataFrame, list[str]]:
    root = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    df = pd.read_parquet(root / "wmt20-metrics" / "segments.parquet")
    df = df[~df["is_human"]]
    return df, [c for c in df.columns if c.startswith("metric:") and "@" not in c]


def cpu(fn, *args, **kwargs):
    t = time.process_time()
    out = fn(*args, **kwargs)
    return out, time.process_time() - t


def clusters(df: pd.DataFrame, metrics: list[str], n_res: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cpu(meta_evaluate, df, metrics, "human_da_z",
                   statistics=MetaStatistics(human_scale="da_z", system_scores="judged", spa=True, pdp=False),
                   clustering=Clustering(statistics=("spa", "seg_acc_t"), n_resamples=n_res))


def averaging(df: pd.DataFrame, metrics: list[str]) -> dict[str, float]:
    """CPU seconds of the segment correlations alone (unit_correlations on every pair and metric)."""
    out = {}
    for unit in ("seg_id", "system"):
        t = time.process_time()
        for _, rows in df[df["human_da_z"].notna()].groupby("lp"):
            for m in metrics:
                ok = rows[m].notna()
                if ok.sum() > 2:
                    unit_correlations(rows.loc[ok, m].to_numpy(), rows.loc[ok, "human_da_z"].to_numpy(),
                                      rows.loc[ok, unit].to_numpy())
        out["item" if unit == "seg_id" else "system"] = time.process_time() - t
    return out


def _matrices(df: pd.DataFrame, lp: str, metrics: list[str]):
    rows = df[df["lp"] == lp]
    human = rows.pivot(index="system", columns="seg_id", values="human_da_z")
    ms = {m: rows.pivot(index="system", columns="seg_id", values=m).loc[human.index, human.columns] for m in metrics
          if rows[m].notna().all()}
    return human, ms


def mtme_clusters(df: pd.DataFrame, metrics: list[str], k: int, mtme_path: str, n_res: int) -> float:
    """mt-metrics-eval's clusters for one metric pair on one pair, extrapolated to every pair and resample."""
    sys.path.insert(0, mtme_path)
    from mt_metrics_eval import stats  # the checkout's own code

    total = 0.0
    lp = "en-zh"
    human, ms = _matrices(df, lp, metrics)
    a, b = list(ms)[:2]
    full = human.notna().all(axis=0)
    n_sys = len(human)

    def corr(h: pd.DataFrame, m: pd.DataFrame):
        gold = [None if not np.isfinite(v) else float(v) for v in h.to_numpy().ravel()]
        return stats.Correlation(n_sys, gold, [float(v) for v in m.to_numpy().ravel()])

    def timed(kk: int) -> tuple[float, float]:
        psd = stats.PermutationSigDiffParams(block_size=kk + 1)  # no early stop inside the run
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.process_time()
            stats.PermutationSigDiff(corr(human.loc[:, full], ms[a].loc[:, full]), corr(human.loc[:, full],
                                     ms[b].loc[:, full]), stats.PairwiseConfidenceError, "none", kk, psd,
                                     num_sys=n_sys)
            t_spa = time.process_time() - t
            t = time.process_time()
            stats.PairwisePermutationSigDiff(corr(human, ms[a]), corr(human, ms[b]), "acc23", "item", kk, psd)
            return t_spa, time.process_time() - t

    # one-off costs (the observed statistic, acc-t's epsilon calibration) apart from the cost per resample
    (s1, a1), (s2, a2) = timed(1), timed(1 + k)
    spa_pair, acc_pair = max(s2 - s1, 0.0) / k, max(a2 - a1, 0.0) / k
    spa_once, acc_once = max(s1 - spa_pair, 0.0), max(a1 - acc_pair, 0.0)
    for lp_ in sorted(df["lp"].unique()):
        h, m_ = _matrices(df, lp_, metrics)
        n_pairs = len(m_) * (len(m_) - 1) // 2
        scale_spa = (h.notna().all(axis=0).sum() / full.sum()) * (len(h) / n_sys) ** 2  # segments x system pairs
        scale_acc = h.notna().sum().sum() / human.notna().sum().sum()
        total += n_pairs * ((spa_once + n_res * spa_pair) * scale_spa + (acc_once + n_res * acc_pair) * scale_acc)
    print(f"mt-metrics-eval, one metric pair of {lp}: SPA test {spa_once:.2f} + {spa_pair:.3f} CPU-s per resample, "
          f"acc-t test {acc_once:.2f} + {acc_pair:.3f} CPU-s per resample")
    return total


def mtme_averaging(df: pd.DataFrame, metrics: list[str], mtme_path: str) -> dict[str, float]:
    sys.path.insert(0, mtme_path)
    import scipy.stats
    from mt_metrics_eval import stats

    out = {}
    for avg in ("item", "sys"):
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for lp in sorted(df["lp"].unique()):
                human, ms = _matrices(df, lp, metrics)
                gold = [None if not np.isfinite(v) else float(v) for v in human.to_numpy().ravel()]
                for m in ms.values():
                    vals = [float(v) for v in m.to_numpy().ravel()]
                    for fn in (scipy.stats.pearsonr, scipy.stats.kendalltau):
                        stats.AverageCorrelation(fn, len(human), average_by=avg)(gold, vals)
        out["item" if avg == "item" else "system"] = time.process_time() - t
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--mtme-resamples", type=int, default=2)
    args = parser.parse_args()
    df, metrics = load()
    _, t_clusters = clusters(df, metrics, args.resamples)
    avg = averaging(df, metrics)
    print(f"xleval: WMT20 {df['lp'].nunique()} pairs x {len(metrics)} metrics, SPA + acc-t + clusters at "
          f"{args.resamples} resamples: {t_clusters:.1f} CPU-s (target: under 60)")
    print(f"xleval: segment correlations averaged by item {avg['item']:.2f} CPU-s, by system {avg['system']:.2f} "
          f"CPU-s (system / item {avg['system'] / avg['item']:.2f})")
    mtme = os.environ.get("MTME")
    if mtme:
        est = mtme_clusters(df, metrics, args.mtme_resamples, mtme, args.resamples)
        print(f"mt-metrics-eval (extrapolated): the same clusters {est:,.0f} CPU-s; ratio {est / t_clusters:,.0f}x")
        m_avg = mtme_averaging(df, metrics, mtme)
        print(f"mt-metrics-eval: averaged by item {m_avg['item']:.2f} CPU-s, by sys {m_avg['system']:.2f} CPU-s; "
              f"ratios item {m_avg['item'] / avg['item']:.1f}x, system {m_avg['system'] / avg['system']:.1f}x")


if __name__ == "__main__":
    main()
