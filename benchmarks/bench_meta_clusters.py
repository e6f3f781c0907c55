"""Significance clusters of ~10 metrics on one WMT20 task: shared-matrix ``metric_clusters`` against a
straightforward per-resample loop, the way mt-metrics-eval's ``PermutationSigDiff`` (SPA, with
``PairwiseConfidenceError`` as the statistic) and ``PairwisePermutationSigDiff`` (acc-t) loop:
for every metric pair and every resample, build the two hybrids and recompute the statistic.

Anchor measured in the same run: the loop below (written here, on the same swap draws and the same
SPA sign matrix, so the resampled differences and p-values must be the same numbers; asserted).
The loop recomputes, per call of the statistic, what ``PairwiseConfidenceError`` recomputes: the
sign matrix, the human p-values and the hybrid's p-values system pair by system pair.

Data: WMT20 en-zh (12 MT systems x 1418 segments; the 10 first segment metrics complete for it),
human = DA z. acc-t uses every judged cell; SPA the 316 segments judged for every system (its
complete-matrix rule).

Usage: XLEVAL_DATA=/path/to/shared/data python benchmarks/bench_meta_clusters.py [--resamples 40]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from xleval._base.seeding import child_seeds
from xleval.stats import metric_clusters
from xleval.stats._pairwise import _calibrate, _unit_pairs, _verdicts


def load(lp: str, n_metrics: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    root = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    df = pd.read_parquet(root / "wmt20-metrics" / "segments.parquet")
    g = df[(df["lp"] == lp) & ~df["is_human"]]
    cols = [c for c in df.columns if c.startswith("metric:") and g[c].notna().all()][:n_metrics]
    human = g.pivot_table(index="system", columns="seg_id", values="human_da_z", dropna=False)
    metrics = {c[len("metric:"):]: g.pivot_table(index="system", columns="seg_id", values=c)
               .loc[human.index, human.columns].to_numpy() for c in cols}
    return metrics, human.to_numpy()


# ------------------------------------------------------------------------------------ the loop (anchor)
def _pvalues_loop(x: np.ndarray, signs: np.ndarray) -> np.ndarray:
    part = signs @ x.T
    n = len(x)
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = np.mean(part[:, i] - part[:, j] >= x[i].sum() - x[j].sum() - 1e-9 * max(
                1.0, abs(x[i].sum() - x[j].sum())))
    return out


def _spa_call(human: np.ndarray, x: np.ndarray) -> float:
    rng = np.random.default_rng(4)  # pce.py draws its signs on every call
    signs32 = np.rint(rng.random(size=(1000, x.shape[1]), dtype=np.float32)) * np.float32(2) - np.float32(1)
    seg = human.astype(np.float32)  # human p-values as pce.py (float32), recomputed per call as there
    part, tot = signs32 @ seg.T, np.sum(seg, axis=1)
    iu, ju = np.triu_indices(len(x), 1)
    hp = np.array([np.mean(part[:, i] - part[:, j] >= tot[i] - tot[j]) for i, j in zip(iu, ju, strict=True)])
    mp = _pvalues_loop(x, signs32.astype(np.float64))[iu, ju]
    return 1.0 - float(np.mean(np.abs(hp - mp)))


def spa_loop(metrics: dict[str, np.ndarray], human: np.ndarray, order: list[str], n_res: int, seed: int
             ) -> np.ndarray:
    n_sys, n_seg = human.shape
    swaps = np.random.default_rng(child_seeds(seed, 1)[0]).random((n_res, n_sys, n_seg)) < 0.5
    z = {k: (m - m.mean()) / m.std() for k, m in metrics.items()}
    out = np.zeros((len(order), len(order), n_res))
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            za, zb = z[order[a]], z[order[b]]
            for k in range(n_res):
                out[a, b, k] = (_spa_call(human, np.where(swaps[k], za, zb))
                                - _spa_call(human, np.where(swaps[k], zb, za)))
    return out


def acc_t_loop(metrics: dict[str, np.ndarray], human: np.ndarray, order: list[str], n_res: int, seed: int
               ) -> np.ndarray:
    keep = np.isfinite(human)
    items = np.broadcast_to(np.arange(human.shape[1])[None, :], human.shape)[keep]
    layout = _unit_pairs(items)
    hv = human[keep]
    dh = hv[layout.iu] - hv[layout.ju]
    verdicts = {}
    for k, m in metrics.items():
        dm = m[keep][layout.iu] - m[keep][layout.ju]
        verdicts[k] = _verdicts(dm, dh, _calibrate(dm, dh, layout.weights))
    swap = np.random.default_rng(child_seeds(seed, 1)[0]).random((n_res, dh.size)) < 0.5
    unit_slices = [np.flatnonzero(layout.unit == u) for u in range(layout.n_units)]
    out = np.zeros((len(order), len(order), n_res))
    for a in range(len(order)):
        for b in range(a + 1, len(order)):
            va, vb = verdicts[order[a]], verdicts[order[b]]
            for k in range(n_res):
                c1, c2 = [], []
                for idx in unit_slices:  # item by item, as PairwisePermutationSigDiff combines per item
                    s = swap[k, idx]
                    c1.append(np.mean(np.where(s, va[idx], vb[idx])))
                    c2.append(np.mean(np.where(s, vb[idx], va[idx])))
                out[a, b, k] = np.mean(c1) - np.mean(c2)
    return out


def bench(name: str, metrics: dict[str, np.ndarray], human: np.ndarray, n_res: int, seed: int) -> None:
    t0 = time.perf_counter()
    fast = metric_clusters(metrics, human, name, n_resamples=n_res, random_state=seed)
    t_fast = time.perf_counter() - t0
    order = list(fast.metrics)
    loop = spa_loop if name == "spa" else acc_t_loop
    t0 = time.perf_counter()
    slow = loop(metrics, human, order, n_res, seed)
    t_slow = time.perf_counter() - t0
    iu = np.triu_indices(len(order), 1)
    assert fast.draws is not None
    gap = float(np.max(np.abs(fast.draws[iu] - slow[iu])))
    assert gap < 1e-9, gap
    p_slow = np.array([[np.mean(slow[a, b] >= fast.values[order[a]] - fast.values[order[b]] - 1e-12)
                        for b in range(len(order))] for a in range(len(order))])
    assert np.array_equal(fast.pvalues[iu], p_slow[iu])
    print(f"{name:6s} {len(metrics)} metrics, {human.shape[0]} systems x {human.shape[1]} segments, "
          f"{n_res} resamples: shared {t_fast:7.2f} s   loop {t_slow:8.2f} s   ratio {t_slow / t_fast:7.1f}x   "
          f"(max |draw difference| {gap:.1e}, p-values equal)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lp", default="en-zh")
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=40, help="resamples of the clusters test (both versions)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    metrics, human = load(args.lp, args.metrics)
    bench("acc_t", metrics, human, args.resamples, args.seed)
    full = np.isfinite(human).all(axis=0)
    bench("spa", {k: m[:, full] for k, m in metrics.items()}, human[:, full], args.resamples, args.seed)


if __name__ == "__main__":
    main()
