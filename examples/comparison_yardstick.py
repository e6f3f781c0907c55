"""What the decision's out-of-fold comparison measures at a user's budget, against what the user gets.

The decision (``decide_calibration``) compares raw scores, LGN and anchored calibration out of fold: each fold's
maps score the held-out systems, and the yardstick is the mean of the held-out systems' own labels, about K / 12
labels per system at K labels per pair. Its paired interval of anchored minus LGN resamples systems within
groups. Here, for each label draw (K random judged segments per pair, as ``decision_check.py`` draws them):

* ``out of fold``: the decision's anchored minus LGN, cross-group pairwise accuracy against those few labels per
  system, and its 95% paired interval;
* ``every label``: anchored fitted on the draw's labels minus LGN (``fit_calibration``, applied to the whole
  table), cross-pair accuracy of system means against the system means of every judged segment: what the user
  gets;
* whether the interval covers the every-label difference, whether the two agree in sign, and what the decision
  applied (method and basis).

Sets: WMT21 to-English raw DA (sentence chrF against reference A) and WMT20 raw DA out of and into English (the
organisers' segment chrF); MT systems only.

    PYTHONPATH=src python examples/comparison_yardstick.py [--k 100] [--draws 10] [--data /work/shared/data]

Prints a Markdown table (docs/calibration.md quotes it).
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

from xleval.decision import decide_calibration, fit_calibration

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # run as a script; a test that imports it has put the folder on the path already
    sys.path.insert(0, HERE)
from decision_check import applied_accuracy, draw, load, load_wmt20  # noqa: E402


def every_label(sparse: pd.DataFrame, method: str, truth: pd.Series) -> float:
    """Cross-pair accuracy, against every label, of ``method`` fitted on the draw's labels."""
    fitted = fit_calibration(sparse, method, score="chrf", by="lp", **({"human": "labels"} if method != "lgn" else {}))
    return applied_accuracy(sparse, fitted.model, truth)


def run(table: pd.DataFrame, k: int, draws: int) -> pd.DataFrame:
    truth = table.groupby(["lp", "system"])["human_raw"].mean()
    rows = []
    for seed in range(draws):
        sparse = draw(table, "human_raw", seed, "labels", k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            decision = decide_calibration(sparse, "chrf", "lp", human="labels")
            full = every_label(sparse, "anchored", truth) - every_label(sparse, "lgn", truth)
        est = decision.evaluation.variant("anchored").minus_lgn
        rows.append({"draw": seed, "oof": est.estimate, "low": est.ci_low, "high": est.ci_high, "full": full,
                     "applied": f"{decision.method} ({decision.basis})"})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA", "/work/shared/data"))
    parser.add_argument("--k", type=int, nargs="+", default=[100], help="labels per pair (default 100)")
    parser.add_argument("--draws", type=int, default=10)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sets = {"WMT21 raw DA, 7 into English": load(args.data), **load_wmt20(args.data)}
    print(f"{args.draws} label draws per set and K; anchored minus LGN, cross-pair accuracy; mean (min to max) over "
          "draws\n")
    print("| set | K | out of fold | its 95% interval covers the every-label difference | every label | same sign "
          "| the decision applied |")
    print("|---|---:|---|---:|---|---:|---|")
    for name, table in sets.items():
        for k in args.k:
            res = run(table, k, args.draws)
            cover = ((res["low"] <= res["full"]) & (res["full"] <= res["high"])).sum()
            same = (np.sign(res["oof"]) == np.sign(res["full"])).sum()
            applied = ", ".join(f"{m} {n}x" for m, n in res["applied"].value_counts().sort_index().items())
            print(f"| {name} | {k} | {res['oof'].mean():+.3f} ({res['oof'].min():+.3f} to {res['oof'].max():+.3f}) | "
                  f"{cover} of {len(res)} | {res['full'].mean():+.3f} ({res['full'].min():+.3f} to "
                  f"{res['full'].max():+.3f}) | {same} of {len(res)} | {applied} |", flush=True)
    print(f"\nTotal run {time.perf_counter() - start:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
