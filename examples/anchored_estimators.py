"""How anchored calibration estimates group offsets from few labels: the comparison behind
docs/calibration.md. For each human scale of WMT21 (raw DA, DA z, MQM) and copies with planted
shifts, keep K random judged rows per pair and calibrate with:

* xleval's estimator itself (``AnchoredCalibrator``: ``shrinkage="eb"``, the default, and
  ``shrinkage="none"``), fitted and applied as a user does;
* alternatives xleval does not ship, written here on the same two-slope map (xleval's pooled
  slopes) with the offsets' variances taken per group (no pooling with the common residual variance):
  Paule-Mandel, DerSimonian-Laird, and a hierarchical posterior over tau (uniform prior);
* "oracle" variants of the Paule-Mandel alternative: the slopes or the offsets of every label instead
  of the K-label ones.

Cross-pair accuracy of system means of the calibrated rows against the full human system means, in
sample, mean over draws.

    python examples/anchored_estimators.py [--data ../shared/data] [--draws 30]
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.calibration import AnchoredCalibrator
from xleval.calibration._pooling import paule_mandel_tau2, pooled_slopes
from xleval.metrics import score_frame
from xleval.stats import pairwise_accuracy


class Scale:
    """One human scale as arrays: groups, systems, score, system means, human (oriented: higher = better)."""

    def __init__(self, frame: pd.DataFrame, human: np.ndarray, shifts: dict | None = None, agree: bool = False):
        self.frame = frame[["lp", "system", "chrf"]].reset_index(drop=True)
        self.g = pd.factorize(frame["lp"])[0]
        self.cell = pd.factorize(frame["lp"] + "\t" + frame["system"])[0]
        self.x = frame["chrf"].to_numpy(float)
        self.m = (np.bincount(self.cell, self.x) / np.bincount(self.cell))[self.cell]
        self.h = human.copy()
        self.names = pd.factorize(frame["lp"])[1]
        for lp, shift in (shifts or {}).items():
            self.h[frame["lp"].to_numpy() == lp] += shift
        if agree:  # move every group to the common offset: the labels then agree with the metric
            offsets = self.offsets(np.where(np.isfinite(self.h), self.h, np.nan), self.slopes(self.h), "none")
            self.h = self.h - (offsets[self.g] - offsets.mean())
        lab = np.isfinite(self.h)
        self.truth = np.bincount(self.cell[lab], self.h[lab]) / np.bincount(self.cell[lab])
        self.cell_group = np.zeros(len(self.truth), dtype=int)
        self.cell_group[self.cell] = self.g

    def slopes(self, y: np.ndarray) -> np.ndarray:
        lab = np.isfinite(y)
        fit = pooled_slopes(np.column_stack([self.m, self.x - self.m])[lab], y[lab], self.g[lab], self.cell[lab])
        b, c = fit.coef
        return np.array([max(b, c), c])

    def offsets(self, y: np.ndarray, beta: np.ndarray, how: str) -> np.ndarray:
        lab = np.isfinite(y)
        r = y[lab] - (beta[0] * self.m[lab] + beta[1] * (self.x[lab] - self.m[lab]))
        g = self.g[lab]
        n = np.bincount(g)
        mean = np.bincount(g, r) / n
        v = (np.bincount(g, (r - mean[g]) ** 2) / (n - 1)) / n
        if how == "none":
            return mean
        if how == "hb":
            return _hierarchical(mean, v)
        tau2 = paule_mandel_tau2(mean, v) if how == "pm" else _dersimonian_laird(mean, v)
        w = 1 / (v + tau2)
        alpha = (w * mean).sum() / w.sum()
        return alpha + tau2 / (tau2 + v) * (mean - alpha)

    def accuracy(self, y: np.ndarray, how: str, oracle: str = "") -> float:
        full = np.where(np.isfinite(self.h), self.h, np.nan)
        beta = self.slopes(full if oracle == "slopes" else y)
        offsets = self.offsets(full if oracle == "offsets" else y, beta, "none" if oracle == "offsets" else how)
        rows = offsets[self.g] + beta[0] * self.m + beta[1] * (self.x - self.m)
        system = np.bincount(self.cell, rows) / np.bincount(self.cell)
        return pairwise_accuracy(system, self.truth, groups=self.cell_group, pairs="cross").estimate

    def library(self, y: np.ndarray, shrinkage: str) -> float:
        """xleval's own estimator, fitted on the K labels ``y`` and applied to every row."""
        model = AnchoredCalibrator(by="lp", score="chrf", human="human", shrinkage=shrinkage)  # direction: labels
        with warnings.catch_warnings():  # notes on few labels per group are the point of this study
            warnings.simplefilter("ignore")
            rows = model.fit(self.frame.assign(human=y)).transform(self.frame)
        system = np.bincount(self.cell, rows) / np.bincount(self.cell)
        return pairwise_accuracy(system, self.truth, groups=self.cell_group, pairs="cross").estimate

    def raw(self) -> float:
        system = np.bincount(self.cell, self.x) / np.bincount(self.cell)
        return pairwise_accuracy(system, self.truth, groups=self.cell_group, pairs="cross").estimate

    def draw(self, k: int, rng: np.random.Generator) -> np.ndarray:
        y = np.full(len(self.h), np.nan)
        for gi in np.unique(self.g):
            rows = np.flatnonzero((self.g == gi) & np.isfinite(self.h))
            keep = rng.choice(rows, size=min(k, len(rows)), replace=False)
            y[keep] = self.h[keep]
        return y


def _dersimonian_laird(mean: np.ndarray, v: np.ndarray) -> float:
    w = 1 / v
    alpha = (w * mean).sum() / w.sum()
    q = (w * (mean - alpha) ** 2).sum()
    return max(0.0, (q - (len(mean) - 1)) / (w.sum() - (w**2).sum() / w.sum()))


def _hierarchical(mean: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Posterior mean of the offsets under a uniform prior on tau (normal-normal model, alpha flat)."""
    taus = np.linspace(0, max(4 * np.sqrt(v.max()), 2 * np.ptp(mean)), 400)
    logp, post = [], []
    for t in taus:
        w = 1 / (v + t * t)
        alpha = (w * mean).sum() / w.sum()
        logp.append(-0.5 * np.log(w.sum()) + 0.5 * np.log(w).sum() - 0.5 * (w * (mean - alpha) ** 2).sum())
        post.append(alpha + t * t / (t * t + v) * (mean - alpha))
    p = np.exp(np.array(logp) - max(logp))
    return (p[:, None] * np.array(post)).sum(axis=0) / p.sum()


def scales(data_root) -> dict[str, Scale]:
    root = Path(data_root)
    seg = pd.read_parquet(root / "wmt21" / "segments.parquet",
                          columns=["lp", "system", "seg_id", "hypothesis", "reference", "human_z", "human_raw",
                                   "is_human"])
    seg = seg[(seg["lp"].str.endswith("-en") | (seg["lp"] == "en-de")) & ~seg["is_human"].astype(bool)]
    frame = score_frame(seg.reset_index(drop=True), ["chrf"]).frame
    toen = frame[frame["lp"].str.endswith("-en")].reset_index(drop=True)
    mqm = pd.read_parquet(root / "wmt21" / "mqm_newstest2021.parquet", columns=["lp", "system", "seg_id", "mqm"])
    rated = frame.merge(mqm, on=["lp", "system", "seg_id"]).reset_index(drop=True)
    raw, z, neg_mqm = toen["human_raw"].to_numpy(), toen["human_z"].to_numpy(), -rated["mqm"].to_numpy()
    return {"raw DA": Scale(toen, raw), "DA z": Scale(toen, z), "MQM": Scale(rated, neg_mqm),
            "raw DA, labels agree with chrF": Scale(toen, raw, agree=True),
            "DA z, labels agree with chrF": Scale(toen, z, agree=True),
            "MQM, labels agree with chrF": Scale(rated, neg_mqm, agree=True),
            "MQM, pairs 0.3 apart": Scale(rated, neg_mqm, {"zh-en": 5.05 - 1.40 - 0.3}),
            "raw DA, strong shifts": Scale(toen, raw, {"cs-en": 10, "ru-en": -10, "ha-en": 5, "de-en": -5})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA",
                                                         str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    parser.add_argument("--draws", type=int, default=30)
    args = parser.parse_args(argv)
    methods = ("pm", "dl", "hb")
    print("| human scale | K | raw | xleval (eb, the default) | xleval, no shrinkage | "
          + " | ".join(methods) + " | oracle slopes (pm) | oracle offsets |")
    print("|---|---:|---:|" + "---:|" * (len(methods) + 4))
    for name, scale in scales(args.data).items():
        for k in (25, 100):
            draws = [scale.draw(k, np.random.default_rng(seed)) for seed in range(args.draws)]
            cells = [np.mean([scale.library(y, shrinkage) for y in draws]) for shrinkage in ("eb", "none")]
            cells += [np.mean([scale.accuracy(y, how) for y in draws]) for how in methods]
            oracle = [np.mean([scale.accuracy(y, "pm", oracle=o) for y in draws]) for o in ("slopes", "offsets")]
            print(f"| {name} | {k} | {scale.raw():.3f} | " + " | ".join(f"{c:.3f}" for c in cells + oracle) + " |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
