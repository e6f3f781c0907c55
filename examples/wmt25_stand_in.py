"""An LLM judge as a stand-in gold: issue 33's ESA criteria on WMT25, where the truth of every cell is known.

The shared WMT25 set (``$XLEVAL_DATA/wmt25-autoscores``) has the per-segment scores of five metrics for every
system of the general MT task's 31 pairs, and no human scores. GEMBA-ESA with GPT-4.1 answers on ESA's 0-100
scale. Taken as the gold, it lets the procedures be checked on data with real structure (27-43 systems per pair,
paragraph segments, documents shared across pairs) where the truth is known: K "labels" per pair are the judge's
scores of K random segments, and a cell's truth is the judge's mean over all of its segments. **This is not a
check against humans.** An LLM judge's errors are not an annotator's: it answers on a coarse grid, the same way
each time, and the metrics may share its biases. What it checks is the statistics: whether the calibrated
ranking, its intervals and its verdicts behave as they say, when the labels are a random sample of a known
population.

Sets: the four pairs of issue 33's ESA set (``en-cs_CZ``, ``en-hi_IN``, ``en-ja_JP``, ``en-zh_CN``, as WMT25
writes them) and all 31 pairs. Metrics: CometKiwi-XL (reference-free) and MetricX-24-Hybrid-XL. For each draw
(seed ``[draw, K]`` for the leaderboard's labels, ``draw`` for the decision's, as in ``decision_check.py``):

* **decision** (``decision_check.run``, ``human_scale="esa"`` as ``--human-scale esa`` names it): cross-pair
  accuracy of the raw metric's system means, of LGN, of anchored and of what ``--method auto`` applies, against
  the judge's full cell means, at every K of ``--k`` (default 25, 50, 100) on the four pairs; at K = 100 on all 31
  with ``--all-pairs`` (about 40 s a draw);
* **two close pairs** (issue 33's TED talks: two pairs of about the same quality that the metric orders the other
  way): the three couples of pairs whose judge means are within 1 point, the metric's reversed most
  (:func:`close_couples`), the decision at every K and with every segment labelled (``all``, one draw);
* **leaderboard** at K = 100 (anchored, ``--human-scale esa``, 200 resamples): the share of cells whose interval
  holds the judge's mean, of cross-pair differences covered, the cross-pair orders its verdicts declare and how
  many of them are wrong (``calibration_simulation.pair_scores``).

    PYTHONPATH=src python examples/wmt25_stand_in.py [--draws 10] [--k 25,50,100] [--all-pairs]

About 8 minutes on 2 cores without ``--all-pairs``. docs/calibration.md quotes the output;
``tests/test_wmt25_stand_in.py`` checks issue 33's criteria on the four pairs with CometKiwi.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

import pandas as pd

from xleval.calibration import prepare_frame

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration_simulation as sim
import decision_check

GOLD = "GEMBA-ESA-GPT4.1"
METRICS = {"CometKiwi-XL": "kiwi", "MetricX-24-Hybrid-XL": "metricx"}
ESA_PAIRS = ("en-cs_CZ", "en-hi_IN", "en-ja_JP", "en-zh_CN")
SETS = {"4 pairs (en-cs, en-hi, en-ja, en-zh)": ESA_PAIRS, "31 pairs": None}


def load(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per segment of every system: ``lp, system, doc_id, seg_id``, the gold (``gold``, the judge's 0-100)
    and one column per metric of :data:`METRICS`. ``root``: the shared data (default ``$XLEVAL_DATA``)."""
    root = Path(root or os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    rows = []
    for path in sorted((root / "wmt25-autoscores").glob("*.jsonl.gz")):
        system = path.name[:-len(".jsonl.gz")]
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                record = json.loads(line)
                scores = record["metric_scores"]
                doc = record["document_id"]
                for i, gold in enumerate(scores[GOLD]):
                    rows.append((record["language_pair"], system, doc, f"{doc}#{i}", gold,
                                 *(scores[name][i] for name in METRICS)))
    return pd.DataFrame(rows, columns=["lp", "system", "doc_id", "seg_id", "gold", *METRICS.values()])


def close_couples(frame: pd.DataFrame, metric: str = "kiwi", n: int = 3, within: float = 1.0) -> list[tuple[str, str]]:
    """Issue 33's TED talks on this data: the ``n`` couples of pairs whose gold means are within ``within`` points
    while the metric's means order them the other way, those with the largest reversal of the metric first."""
    means = frame.groupby("lp")[["gold", metric]].mean()
    couples = []
    for i, a in enumerate(means.index):
        for b in means.index[i + 1:]:
            gold, score = means.loc[a, "gold"] - means.loc[b, "gold"], means.loc[a, metric] - means.loc[b, metric]
            if abs(gold) < within and gold * score < 0:
                couples.append((abs(score), (a, b)))
    return [pair for _, pair in sorted(couples, reverse=True)[:n]]


def decision(frame: pd.DataFrame, metric: str, draws: int, k: int) -> pd.DataFrame:
    """``decision_check.run`` on one metric: per draw the accuracy of raw, auto, LGN and anchored, and auto's
    choice."""
    table = frame[["lp", "system", "seg_id", "gold", metric]].reset_index(drop=True)
    return decision_check.run(table, "gold", "labels", draws, k=k, human_scale="esa", score=metric)


def boards(frame: pd.DataFrame, metric: str, draws: int, k: int = 100, n_resamples: int = 200) -> pd.DataFrame:
    """Per draw, the leaderboard's coverage and verdicts (``calibration_simulation.pair_scores``) against the
    judge's full cell means (indexed by the board's own group keys: the tables normalise ``en-cs_CZ`` to
    ``en-cs-CZ``)."""
    scored = frame[["lp", "system", "doc_id", "seg_id", "gold", metric]].rename(columns={metric: "score"})
    truth = _truth(scored)
    rows = []
    for d in range(draws):
        board = sim.drawn_board(scored, "gold", k, d, "esa", n_resamples)
        rows.append({"draw": d, **sim.pair_scores(board, truth)})
    return pd.DataFrame(rows)


def _truth(scored: pd.DataFrame) -> pd.Series:
    """The judge's mean of every cell, indexed by (the key the leaderboard gives its pair, system)."""
    means = scored.groupby(["lp", "system"])["gold"].mean()
    pairs = list(scored["lp"].unique())
    keys = dict(zip(pairs, prepare_frame(pd.DataFrame({"lp": pairs}), ["lp"])["lp"].astype(str), strict=True))
    return means.set_axis(pd.MultiIndex.from_tuples([(keys[lp], s) for lp, s in means.index]))


def _decision_table(results: dict) -> str:
    lines = ["| set | metric | K | raw | LGN | anchored | auto (worst draw) | auto applied |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for (name, metric, k), res in results.items():
        chose = ", ".join(f"{c} {n}" for c, n in res["chose"].value_counts().items())
        lines.append(f"| {name} | {metric} | {k} | {res['raw'].mean():.3f} | {res['lgn'].mean():.3f} | "
                     f"{res['anchored'].mean():.3f} | {res['auto'].mean():.3f} ({res['auto'].min():.3f}) | {chose} |")
    return "\n".join(lines)


def _board_table(results: dict) -> str:
    lines = ["| set | metric | covers cell mean (worst) | covers difference: across | within | cross-pair orders "
             "declared | of them wrong (pooled) | within-pair declared | wrong |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (name, metric), res in results.items():
        told, wrong = int(res["n told across"].sum()), int(res["n wrong across"].sum())
        told_w, wrong_w = int(res["n told within"].sum()), int(res["n wrong within"].sum())
        lines.append(f"| {name} | {metric} | {res['cover cell'].mean():.3f} ({res['cover cell'].min():.2f}) | "
                     f"{res['cover across'].mean():.3f} | {res['cover within'].mean():.3f} | "
                     f"{res['declared across'].mean():.3f} | {wrong} of {told:,} ({wrong / max(told, 1):.1%}) | "
                     f"{res['declared within'].mean():.3f} | {wrong_w} of {told_w:,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", default="25,50,100", help="budgets of the decision study (labels per pair)")
    parser.add_argument("--all-pairs", action="store_true", help="the decision study on all 31 pairs too (K = 100)")
    parser.add_argument("--data", help="the shared data (default $XLEVAL_DATA)")
    args = parser.parse_args(argv)
    start = time.time()
    frame = load(args.data)
    levels = frame.groupby("lp")["gold"].mean().sort_values()
    print(f"WMT25: {len(frame):,} segments, {frame['lp'].nunique()} pairs, {frame['system'].nunique()} systems; "
          f"gold {GOLD} (0-100), its pair means from {levels.iloc[0]:.1f} ({levels.index[0]}) to "
          f"{levels.iloc[-1]:.1f} ({levels.index[-1]}); loaded in {time.time() - start:.0f} s", flush=True)
    decided, ranked, couples = {}, {}, {}
    for a, b in close_couples(frame):
        part = frame[frame["lp"].isin((a, b))]
        for k in [int(v) for v in args.k.split(",")]:
            couples[(f"{a} / {b}", "CometKiwi-XL", k)] = decision(part, "kiwi", args.draws, k)
        every = part.groupby("lp")["gold"].size().max()  # every segment judged: the ceiling of the labels
        couples[(f"{a} / {b}", "CometKiwi-XL", "all")] = decision(part, "kiwi", 1, int(every))
    print(f"  two close pairs: {time.time() - start:.0f} s", flush=True)
    for name, pairs in SETS.items():
        part = frame if pairs is None else frame[frame["lp"].isin(pairs)]
        for metric, column in METRICS.items():
            budgets = [int(v) for v in args.k.split(",")] if pairs is not None else ([100] if args.all_pairs else [])
            for k in budgets:
                decided[(name, metric, k)] = decision(part, column, args.draws, k)
            ranked[(name, metric)] = boards(part, column, args.draws)
            print(f"  {name}, {metric}: {time.time() - start:.0f} s", flush=True)
    print("\nCross-pair accuracy against the judge's cell means (mean over draws):\n")
    print(_decision_table(decided))
    print("\nTwo close pairs the metric orders the other way (TED-like; gold means within 1 point), CometKiwi-XL:\n")
    print(_decision_table(couples))
    print("\nThe leaderboard at K = 100 (anchored, --human-scale esa; mean (min) over draws):\n")
    print(_board_table(ranked))
    print(f"\n{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
