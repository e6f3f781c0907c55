"""Where the slopes do not settle the direction of the human scale: how often the slope's lean, the labels' shape,
and the two together are right (docs/calibration.md, "Direction, and slope signs the labels do not settle").

WMT21 to-English raw DA (7 pairs) and DA z, WMT21 expert MQM (en-de, zh-en; error points, lower is better), and
the same MQM with zh-en moved to 0.66 MQM from en-de; sentence chrF. For each of ``--draws`` draws of K = 25, 50
and 100 random labels per pair (``numpy.random.default_rng([draw, K])``), fit ``AnchoredCalibrator`` without a
direction (``strict=False``) and read its slopes: a draw is *settled* when the better determined slope's |z|
reaches t(0.975, clusters - 1) (then the fit takes its sign, source ``data``); in the other draws, the slope's
*lean* (its sign), the labels' *shape* (``xleval.calibration._anchored.shape_of_labels``: the end of the range
they pile up at, by D'Agostino's skewness test), and what the fit now does (``shape``: both agree and the lean is
taken; ``none``: offsets only, or E122 from ``calibrate fit``), each against the scale's true direction.

    PYTHONPATH=src python examples/direction_rules.py [--draws 40] [--data ../shared/data]
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.calibration import build_anchored
from xleval.calibration._anchored import settled_z, shape_of_labels
from xleval.metrics import score_frame

BUDGETS = (25, 50, 100)


def load(root: Path) -> dict[str, tuple[pd.DataFrame, str, int]]:
    """Each set: its table, its human column, and the sign of the true slope of the human score on chrF."""
    seg = pd.read_parquet(root / "wmt21" / "segments.parquet",
                          columns=["lp", "system", "seg_id", "hypothesis", "reference", "human_raw", "human_z",
                                   "is_human"])
    seg = seg[~seg["is_human"].astype(bool)]
    toen = seg[seg["lp"].str.endswith("-en") & seg["human_raw"].notna()].reset_index(drop=True)
    toen = score_frame(toen, ["chrf"]).frame
    mqm = pd.read_parquet(root / "wmt21" / "mqm_newstest2021.parquet", columns=["lp", "system", "seg_id", "mqm"])
    rated = seg.drop(columns=["human_raw", "human_z"]).merge(mqm, on=["lp", "system", "seg_id"])
    rated = score_frame(rated.reset_index(drop=True), ["chrf"]).frame
    gap = rated.groupby("lp")["mqm"].mean()
    moved = rated.assign(mqm=rated["mqm"] - np.where(rated["lp"] == "zh-en", gap["zh-en"] - gap["en-de"] - 0.66, 0))
    return {"WMT21 raw DA (7 pairs)": (toen, "human_raw", 1), "WMT21 DA z (7 pairs)": (toen, "human_z", 1),
            "WMT21 MQM (en-de, zh-en)": (rated, "mqm", -1), "WMT21 MQM, 0.66 apart": (moved, "mqm", -1)}


def draw(frame: pd.DataFrame, column: str, seed: int, k: int) -> pd.DataFrame:
    rng = np.random.default_rng([seed, k])
    keep = np.zeros(len(frame), dtype=bool)
    for _, idx in sorted(frame.groupby("lp").indices.items()):
        keep[rng.choice(idx, size=k, replace=False)] = True
    return frame.assign(h=np.where(keep, frame[column], np.nan))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA", "../shared/data"))
    args = parser.parse_args()
    start = time.perf_counter()
    print("| human scale | K | settled (right / wrong) | unsettled | lean right | shape right (unclear) "
          "| lean and shape agree: taken (right / wrong) |")
    print("|---|---:|---|---:|---:|---|---|")
    totals = np.zeros(6, dtype=int)
    for name, (frame, column, truth) in load(Path(args.data)).items():
        for k in BUDGETS:
            settled_right = settled_wrong = unsettled = lean_right = shape_right = unclear = right = wrong = 0
            for seed in range(args.draws):
                table = draw(frame, column, seed, k)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = build_anchored("lp", "chrf", "h").fit(table, strict=False)
                z = max((v for v in model.slopes_["z"] if np.isfinite(v)), key=abs)
                lean = 1 if z > 0 else -1
                if abs(z) >= settled_z(model.slopes_["n_clusters"]):
                    settled_right += lean == truth
                    settled_wrong += lean != truth
                    continue
                unsettled += 1
                lean_right += lean == truth
                shape = shape_of_labels(table["h"].to_numpy(dtype=float))
                said = None if shape is None else (1 if shape.higher_is_better else -1)  # chrF: higher is better
                unclear += said is None
                shape_right += said == truth
                if model.direction_source_ == "shape":
                    right += model.direction_ == truth
                    wrong += model.direction_ != truth
            totals += [unsettled, lean_right, shape_right, unclear, right, wrong]
            print(f"| {name} | {k} | {settled_right} / {settled_wrong} | {unsettled} | {lean_right} | "
                  f"{shape_right} ({unclear}) | {right + wrong} ({right} / {wrong}) |", flush=True)
    u, lr, sr, uc, r, w = totals
    print(f"\nunsettled draws {u}: lean right {lr}, shape right {sr} (unclear {uc}), taken {r + w} ({r} right, "
          f"{w} wrong); {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
