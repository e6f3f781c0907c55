"""Do the leaderboard's intervals cover the human ranking? WMT21, K random labels per language pair.

For each human scale of WMT21 (raw DA and DA z for the 7 to-English pairs, MQM for en-de and zh-en;
``../shared/data/wmt21``, see its README) and each of ``--draws`` draws: keep the human score of K
random judged segments per pair (the labels), blank the rest, build the leaderboard with anchored
calibration of sentence chrF (``xleval.leaderboard.leaderboard(..., method="anchored")``, 1000
resamples of documents, 95%), and count how often

* the calibrated CI of a (pair, system) cell covers the cell's **full-data** human mean (over all of
  its judged segments: what judging them all would give);
* the overall rank interval covers the rank of that human mean among all cells (ranked in the
  leaderboard's direction), and the rank-in-pair interval its rank within the pair;
* for comparison, the interval the leaderboard gave before (the bootstrap of the system's mean chrF
  through the fitted map, held fixed: the raw CI mapped) covers the human mean.

Coverage is pooled over the cells of a draw; the table shows the mean and the min-max over draws.
MT systems only (the human translations ``ref-B`` are left out); the score is the mean sentence chrF
(texts dropped, so the leaderboard does not recompute corpus chrF in every draw).

    python examples/interval_coverage.py            # K=100, 10 draws (about 2 minutes)
    python examples/interval_coverage.py --quick    # K=100, 3 draws, 200 resamples
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from xleval.decision import fit_calibration
from xleval.leaderboard import leaderboard
from xleval.metrics import score_frame
from xleval.stats import Resampling

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "wmt21"
KEEP = ["lp", "system", "seg_id", "doc_id", "chrf", "human"]


def load_sets(seg: pd.DataFrame | None = None, mqm: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Per human scale: one row per scored segment with chrF, the full human score (NaN = not judged).
    ``seg``, ``mqm``: WMT21's ``segments.parquet`` and ``mqm_newstest2021.parquet`` (default: read from ``DATA``)."""
    seg = pd.read_parquet(DATA / "segments.parquet") if seg is None else seg
    to_en = seg[seg["human_raw"].notna().groupby(seg["lp"]).transform("any") & ~seg["is_human"]]
    scored = score_frame(to_en.reset_index(drop=True), ["chrf"]).frame
    mqm = pd.read_parquet(DATA / "mqm_newstest2021.parquet") if mqm is None else mqm
    mqm = mqm[["lp", "system", "seg_id", "mqm"]]
    rated = seg.merge(mqm, on=["lp", "system", "seg_id"], how="inner")
    rated = score_frame(rated.reset_index(drop=True), ["chrf"]).frame
    return {"raw DA (7 pairs)": scored.assign(human=scored["human_raw"])[KEEP],
            "DA z (7 pairs)": scored.assign(human=scored["human_z"])[KEEP],
            "MQM (en-de, zh-en)": rated.assign(human=rated["mqm"])[KEEP]}


def draw_labels(frame: pd.DataFrame, k: int, rng: np.random.Generator) -> pd.DataFrame:
    """``frame`` with the human score kept on ``k`` random judged rows per pair."""
    keep = np.zeros(len(frame), dtype=bool)
    judged = frame["human"].notna().to_numpy()
    for _, idx in frame.groupby("lp").indices.items():
        pool = idx[judged[idx]]
        keep[rng.choice(pool, size=min(k, len(pool)), replace=False)] = True
    return frame.assign(human=np.where(keep, frame["human"], np.nan))


def coverage(frame: pd.DataFrame, k: int, seed: int, n_resamples: int) -> dict[str, float]:
    truth = frame.groupby(["lp", "system"])["human"].mean()
    labelled = draw_labels(frame, k, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = leaderboard(labelled, "chrf", "lp", human="human", method="anchored",
                            resampling=Resampling(n_resamples=n_resamples, random_state=seed))
        fitted = fit_calibration(labelled, "anchored", score="chrf", by="lp", human="human", system="system")
        slope = fitted.model.slopes_
    rows = board.rows.set_index(["group", "system"])
    h = truth.loc[rows.index].to_numpy()
    # the interval before: the raw score's bootstrap (here the mean chrF's) through the fitted map, held fixed
    ends = rows["calibrated"].to_numpy()[:, None] + slope["between"] * (
        rows[["raw_ci_low", "raw_ci_high"]].to_numpy() - rows[["raw"]].to_numpy())
    fixed = (ends.min(axis=1) <= h) & (h <= ends.max(axis=1))
    sign = -1 if board.higher_is_better else 1
    overall = rankdata(sign * h, method="min")
    within = rows.assign(h=sign * h).groupby(level="group")["h"].rank(method="min").to_numpy()
    inside = (rows["calibrated_ci_low"] <= h) & (h <= rows["calibrated_ci_high"])
    return {"CI": float(inside.mean()), "CI, map fixed": float(fixed.mean()),
            "rank overall": float(((rows["rank_overall_low"] <= overall) & (overall <= rows["rank_overall_high"]))
                                  .mean()),
            "rank in pair": float(((rows["rank_in_group_low"] <= within) & (within <= rows["rank_in_group_high"]))
                                  .mean()),
            "CI half-width": float(((rows["calibrated_ci_high"] - rows["calibrated_ci_low"]) / 2).mean()),
            "|error|": float(np.abs(rows["calibrated"].to_numpy() - h).mean())}


def spread(values: pd.Series, fmt: str) -> str:
    """Mean (min-max) over draws."""
    return f"{values.mean():{fmt}} ({values.min():{fmt}}-{values.max():{fmt}})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--labels", type=int, default=100, help="random labels per pair (K)")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--n-resamples", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="3 draws, 200 resamples")
    args = parser.parse_args()
    draws, n_resamples = (3, 200) if args.quick else (args.draws, args.n_resamples)
    start = time.perf_counter()
    lines = ["| human scale | cells | CI covers human mean | map-fixed CI (before) covers | overall rank interval "
             "covers | rank-in-pair interval covers | CI half-width | mean abs error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, frame in load_sets().items():
        runs = pd.DataFrame([coverage(frame, args.labels, seed, n_resamples) for seed in range(draws)])
        cells = frame.groupby(["lp", "system"]).ngroups
        lines.append(f"| {name} | {cells} | " + " | ".join(
            spread(runs[col], fmt) for col, fmt in (("CI", ".3f"), ("CI, map fixed", ".3f"), ("rank overall", ".3f"),
                                                   ("rank in pair", ".3f"),
                                                   ("CI half-width", ".3g"), ("|error|", ".3g"))) + " |")
    print(f"K={args.labels} random labels per pair, {draws} draws, {n_resamples} resamples, 95% intervals; "
          "mean (min-max) over draws")
    print("\n".join(lines))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
