"""LGN fit/transform speed against the seed's reference implementation and the memory-bandwidth bound.

Anchors measured in the same run:
* the seed's implementation (section 3.3): pandas ``groupby`` fit, row-wise ``DataFrame.apply`` transform
  (timed on a 200k-row slice and scaled linearly: at 10M rows it would take tens of minutes);
* a plain numpy pass ``x * a[g] + b[g]`` over the same arrays (the memory-bandwidth bound of transform).

Usage: python benchmarks/bench_calibration.py [--rows 1000000 10000000] [--groups 20]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from xleval.calibration import LGN


class SeedLGNCalibrator:
    """The seed's reference implementation (section 3.3), kept verbatim in spirit as the baseline."""

    def __init__(self, global_mean=0.0, global_std=1.0):
        self.lang_stats = {}
        self.global_mean = global_mean
        self.global_std = global_std

    def fit(self, df):
        for lang, group in df.groupby("tgt_lang"):
            scores = group["raw_score"].astype(float).values
            mu, sigma = np.mean(scores), np.std(scores)
            self.lang_stats[lang] = {"mu": mu, "sigma": sigma if sigma >= 1e-9 else 1.0}
        return self

    def transform(self, df):
        df = df.copy()

        def calibrate_row(row):
            stats = self.lang_stats[row["tgt_lang"]]
            return (row["raw_score"] - stats["mu"]) / stats["sigma"] * self.global_std + self.global_mean

        df["calibrated_score"] = df.apply(calibrate_row, axis=1)
        return df


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--seed-slice", type=int, default=200_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    langs = np.array([f"l{i:02d}" for i in range(args.groups)], dtype=object)
    print(f"{'rows':>11} {'step':<28} {'seconds':>9} {'rows/s':>14} {'ratio':>10}")
    for n in args.rows:
        codes = rng.integers(0, args.groups, n)
        tgt = pd.Categorical.from_codes(codes, categories=langs)
        scores = rng.normal(50, 10, n) + codes
        df = pd.DataFrame({"tgt_lang": tgt, "score": scores})
        seed_df = pd.DataFrame({"tgt_lang": tgt, "raw_score": scores})

        t_fit, model = best_of(lambda df=df: LGN(target=(80, 10)).fit(df))
        t_tr, out = best_of(lambda model=model, df=df: model.transform(df))
        a = 10.0 / model.params_["__by__"].scale
        b = 80.0 - model.params_["__by__"].center * a
        order = np.array([model.groups_.index(lang) for lang in langs])
        a, b = a[order], b[order]
        t_np, ref = best_of(lambda scores=scores, a=a, b=b, codes=codes: scores * a[codes] + b[codes])
        assert np.allclose(out, ref, rtol=1e-12, atol=1e-9)

        t_sfit, seed = best_of(lambda seed_df=seed_df: SeedLGNCalibrator(80, 10).fit(seed_df), repeat=1)
        m = min(args.seed_slice, n)
        t_sslice, seed_out = best_of(lambda seed=seed, seed_df=seed_df, m=m: seed.transform(seed_df.iloc[:m]), repeat=1)
        assert np.allclose(seed_out["calibrated_score"].to_numpy(), out[:m], rtol=1e-9, atol=1e-9)
        t_str = t_sslice * n / m

        rows = [
            ("xleval fit", t_fit, t_sfit / t_fit, "x seed fit"),
            ("seed fit (pandas groupby)", t_sfit, 1.0, ""),
            ("xleval transform", t_tr, t_str / t_tr, "x seed transform"),
            ("seed transform (apply, est.)", t_str, 1.0, f"timed on {m} rows"),
            ("numpy x*a[g]+b[g] (bound)", t_np, t_tr / t_np, "transform / bound"),
        ]
        for name, t, ratio, note in rows:
            print(f"{n:>11,} {name:<28} {t:>9.3f} {n / t:>14,.0f} {ratio:>10.1f} {note}")


if __name__ == "__main__":
    main()
