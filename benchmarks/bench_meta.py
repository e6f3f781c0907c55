"""Speed of ``xleval.meta.meta_evaluate`` on the full WMT20 metrics set, against a straightforward
per-group / per-metric loop (scipy per statistic, SPA recomputing the human p-values for each metric, a
Python loop over bootstrap resamples) written here, in the same run; same point values, printed ratio.

    XLEVAL_DATA=../shared/data .venv/bin/python benchmarks/bench_meta.py [--resamples 1000] [--permutations 1000]

Every statistic without clusters: 16 language pairs, every metric with segment scores, system-level
Pearson/Spearman/Kendall/accuracy with CIs, SPA with 1,000 permutations, segment-level Pearson/Kendall and
acc-t, global and cross-group accuracy with CIs. Target: under 60 s on the 2-core development machine.
"""
from __future__ import annotations

import argparse
import itertools
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats as ss

from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling, pairwise_accuracy, soft_pairwise_accuracy


def _data() -> tuple[pd.DataFrame, list[str]]:
    root = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    df = pd.read_parquet(root / "wmt20-metrics" / "segments.parquet")
    df = df[~df["is_human"]]
    return df, [c for c in df.columns if c.startswith("metric:")]


def anchor(df: pd.DataFrame, metrics: list[str], human: str, b: int, permutations: int) -> dict:
    """The plain loop: one group, one metric, one statistic at a time."""
    rng = np.random.default_rng(0)
    out, sys_rows = {}, []
    judged = df[df[human].notna()]
    for lp, rows in judged.groupby("lp"):
        n_sys = rows["system"].nunique()
        for m in metrics:
            r = rows[rows[m].notna()]
            if r.empty:
                continue
            means = r.groupby("system")[[m, human]].mean()
            x, h = means[m].to_numpy(), means[human].to_numpy()
            out[(lp, m, "sys_pearson")] = ss.pearsonr(x, h)[0]
            out[(lp, m, "sys_spearman")] = ss.spearmanr(x, h)[0]
            out[(lp, m, "sys_kendall")] = ss.kendalltau(x, h)[0]
            out[(lp, m, "sys_accuracy")] = np.mean([np.sign(x[i] - x[j]) == np.sign(h[i] - h[j])
                                                    for i, j in itertools.combinations(range(len(x)), 2)])
            boot = []
            for _ in range(b):
                pick = rng.integers(0, len(x), len(x))
                boot.append(np.corrcoef(x[pick], h[pick])[0, 1] if np.ptp(x[pick]) and np.ptp(h[pick]) else np.nan)
            out[(lp, m, "sys_pearson_ci")] = np.nanpercentile(boot, [2.5, 97.5])
            out[(lp, m, "seg_pearson")] = ss.pearsonr(r[m], r[human])[0]
            out[(lp, m, "seg_kendall")] = ss.kendalltau(r[m], r[human])[0]
            out[(lp, m, "seg_acc_t")] = pairwise_accuracy(r[m].to_numpy(), r[human].to_numpy(), average_by="item",
                                                          items=r["seg_id"].to_numpy()).estimate
            per_seg = r.groupby("seg_id")["system"].nunique()
            full = r[r["seg_id"].isin(per_seg.index[per_seg == n_sys])]
            if full["seg_id"].nunique() >= 2 and len(means) == n_sys:
                order = pd.unique(full["seg_id"])
                mat = full.pivot(index="system", columns="seg_id", values=m)[order].to_numpy()
                hum = full.pivot(index="system", columns="seg_id", values=human)[order].to_numpy()
                out[(lp, m, "spa")] = soft_pairwise_accuracy(mat, hum, n_resamples=permutations).statistic
            sys_rows += [{"lp": lp, "system": s, "metric": m, "x": a, "h": c}
                         for s, a, c in zip(means.index, x, h, strict=True)]
    frame = pd.DataFrame(sys_rows)
    for m, rows in frame.groupby("metric"):
        x, h, g = rows["x"].to_numpy(), rows["h"].to_numpy(), rows["lp"].to_numpy()
        for kind in ("within", "cross"):
            pairs = [(i, j) for i, j in itertools.combinations(range(len(x)), 2)
                     if (g[i] == g[j]) == (kind == "within")]
            ok = [np.sign(x[i] - x[j]) == np.sign(h[i] - h[j]) for i, j in pairs]
            out[("*", m, f"{kind}_accuracy")] = np.mean(ok)
            boot = []
            for _ in range(b):
                w = np.zeros(len(x))
                for lp in np.unique(g):
                    idx = np.flatnonzero(g == lp)
                    np.add.at(w, rng.choice(idx, len(idx)), 1)
                ww = np.array([w[i] * w[j] for i, j in pairs])
                boot.append(ww @ np.asarray(ok, float) / ww.sum())
            out[("*", m, f"{kind}_ci")] = np.percentile(boot, [2.5, 97.5])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--skip-anchor", action="store_true")
    args = parser.parse_args()
    df, metrics = _data()
    human = "human_da_z"
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(df, metrics, human,
                            statistics=MetaStatistics(system_scores="judged", human_scale="da_z",
                                                      spa_permutations=args.permutations),
                            resampling=Resampling(n_resamples=args.resamples))
    ours = time.perf_counter() - start
    print(f"meta_evaluate: 16 pairs x {len(metrics)} metrics, {len(res.cells)} cells, {args.resamples} resamples, "
          f"SPA {args.permutations} permutations: {ours:.1f} s (target < 60 s)")
    if args.skip_anchor:
        return
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = anchor(df, metrics, human, args.resamples, args.permutations)
    loop = time.perf_counter() - start
    worst = 0.0
    for (g, m, stat), value in ref.items():
        if stat.endswith("_ci"):
            continue
        pooled = (res.global_accuracy if stat == "within_accuracy" else res.cross_accuracy).get(m)
        got = (pooled.value if pooled is not None else float("nan")) if g == "*" else res.value(g, m, stat)
        if np.isfinite(value):
            worst = max(worst, abs(got - value))
    print(f"straightforward loop: {loop:.1f} s; ratio {loop / ours:.1f}x; largest difference of the point values "
          f"{worst:.2g}")


if __name__ == "__main__":
    main()
