"""Issue 33's TED talks, rebuilt from public files: what K labels per pair can settle between two pairs.

Google's expert MQM ratings of the WMT21 TED talks test suite (github.com/google/wmt-mqm-human-evaluation,
``ted/ende/mqm_ted_ende.tsv`` and ``ted/zhen/mqm_ted_zhen.tsv``) hold, for every rated segment of every system,
the error spans and the system's output with the spans marked. Those files alone give issue 33's TED set: 2 pairs
(en-de, zh-en), 13 MT systems each (26 cells), 529 rated segments per system. Per segment: the MQM score as
``xleval ingest mqm`` computes it (:func:`xleval.ratings.score_mqm`, Google's weights; minus the error points,
higher is better), and sentence chrF of the output (spans unmarked) against the rated human translation
(system ``ref``, the reference the ratings call ref-A). The ratings are not in the shared data; clone the
repository and name it:

    PYTHONPATH=src python examples/ted_mqm.py --mqm-repo PATH [--draws 10] [--k 25,50,100] [--many 100]
        [--board-draws 50]

(about a minute on 2 cores.) It prints:

* the set: cells, the pairs' MQM and chrF means;
* **the decision** (``decision_check.run``, ``human_scale="mqm"`` as ``--human-scale mqm`` names it): cross-pair
  accuracy of raw chrF, LGN, anchored and what ``--method auto`` applies against the full MQM cell means, K random
  rated segments per pair, ``--draws`` draws at each K of ``--k``, and every segment labelled;
* **anchored over many draws** (``--many``): the mean, the 5% quantile, and the share of draws whose calibrated
  pair means order the two pairs the wrong way; beside it the normal approximation of that share from the full
  data: the pairs' gap over the standard error of the difference of two offsets from K labels each
  (``sd * sqrt(2 / K)``, ``sd`` the segments' residual sd around the pair's mean after chrF's line), and how the
  difference of the two pairs' label means errs against its standard error (2,000 draws);
* **the leaderboard** at each K, ``--board-draws`` draws (anchored, ``--human-scale mqm``, 1,000 resamples as
  by default): the share of cells whose interval holds the full MQM mean, of cross-pair differences covered, the
  cross-pair orders its verdicts declare and how many of them are wrong
  (``calibration_simulation.pair_scores``), and the cells' errors over the sd their intervals imply (rms; 1 where
  the intervals are as wide as the errors); beside them the cross-pair orders that Benjamini and Hochberg's
  procedure at 5% would declare from the same draws.

docs/calibration.md ("Issue 33's TED talks") quotes the output. No test reads these files (they are not in the
shared data); the statistics they exercise are tested on the shared WMT21 MQM (tests/test_pairs_wmt21.py).
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats as sps

from xleval.decision import fit_calibration
from xleval.metrics import score_frame
from xleval.ratings import score_mqm

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration_simulation as sim
import decision_check

PAIRS = {"en-de": "ende", "zh-en": "zhen"}
#: the rated human translation (the ratings' ref-A), used as the reference; ref-B (zh-en) is left out with it
REFERENCE = "ref"
HUMAN_SYSTEMS = ("ref", "refB")
SPAN = re.compile(r"</?v>")


def load(repo: str | Path) -> pd.DataFrame:
    """One row per rated segment of every MT system: ``lp, system, doc_id, seg_id, hypothesis, reference``,
    ``mqm`` (minus the error points, as ``ingest mqm`` writes it) and ``chrf`` (sentence chrF)."""
    parts = []
    for lp, short in PAIRS.items():
        path = Path(repo) / "ted" / short / f"mqm_ted_{short}.tsv"
        if not path.is_file():
            print(f"ted_mqm: no {path}; --mqm-repo names a clone of github.com/google/wmt-mqm-human-evaluation",
                  file=sys.stderr)
            raise SystemExit(2)
        # Google's MQM files are plain TSV: a quote is text, never a quoting character
        spans = pd.read_csv(path, sep="\t", quoting=csv.QUOTE_NONE, dtype=str, keep_default_na=False)
        spans["lp"] = lp
        scores = score_mqm(spans)[["lp", "system", "seg_id", "mqm"]]
        texts = spans.drop_duplicates(["system", "seg_id"])[["system", "doc", "seg_id", "target"]]
        texts = texts.assign(hypothesis=texts["target"].str.replace(SPAN, "", regex=True))
        reference = texts[texts["system"] == REFERENCE].set_index("seg_id")["hypothesis"]
        mt = texts[~texts["system"].isin(HUMAN_SYSTEMS)]
        part = mt.assign(lp=lp, reference=mt["seg_id"].map(reference)).rename(columns={"doc": "doc_id"})
        parts.append(part.merge(scores, on=["lp", "system", "seg_id"], how="left", validate="one_to_one"))
    frame = pd.concat(parts, ignore_index=True)[["lp", "system", "doc_id", "seg_id", "hypothesis", "reference",
                                                  "mqm"]]
    if frame[["reference", "mqm"]].isna().any().any():
        raise SystemExit("ted_mqm: a rated segment without its reference or MQM score; is this the repository?")
    frame["seg_id"] = frame["seg_id"].astype(int)
    return score_frame(frame, ["chrf"]).frame


def decisions(table: pd.DataFrame, draws: int, budgets: list[int]) -> pd.DataFrame:
    """``decision_check.run`` at every K, and once with every segment labelled; the human column is the error
    points (``-mqm``), as ``decision_check`` reads ``mqm``."""
    points = table.assign(points=-table["mqm"])[["lp", "system", "seg_id", "chrf", "points"]]
    rows = []
    for k in [*budgets, None]:
        every = k is None
        result = decision_check.run(points, "points", "labels", 1 if every else draws,
                                    k=int(points.groupby("lp").size().max()) if every else k, human_scale="mqm")
        rows.append(result.assign(k="all" if every else k))
    return pd.concat(rows, ignore_index=True)


def many_draws(table: pd.DataFrame, k: int, n: int) -> dict[str, float]:
    """Anchored calibration (``calibrate fit --method anchored --human-scale mqm``) from ``n`` draws of K labels
    per pair: its cross-pair accuracy, and whether its calibrated pair means order the pairs as the truth does."""
    points = table.assign(points=-table["mqm"])[["lp", "system", "seg_id", "chrf", "points"]]
    truth = table.groupby(["lp", "system"])["mqm"].mean()
    right_order = np.sign(truth.groupby(level="lp").mean().diff().iloc[-1])
    accuracy, flipped = [], []
    for seed in range(n):
        sparse = decision_check.draw(points, "points", seed, "labels", k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = fit_calibration(sparse, "anchored", score="chrf", by="lp", human="labels", human_scale="mqm")
        accuracy.append(decision_check.applied_accuracy(sparse, fitted.model, truth, True))
        calibrated = decision_check.apply_calibrator(fitted.model, sparse)
        column = next(c for c in calibrated.columns if c not in sparse.columns and c != "calibration_source")
        # the calibrated scale is the error points (lower is better): turned round to compare with the truth
        levels = -calibrated.groupby("lp")[column].mean()
        flipped.append(np.sign(levels.diff().iloc[-1]) != right_order)
    accuracy_ = np.asarray(accuracy)
    return {"mean": float(accuracy_.mean()), "q05": float(np.quantile(accuracy_, 0.05)),
            "min": float(accuracy_.min()), "pair order wrong": float(np.mean(flipped))}


def expected_flips(table: pd.DataFrame, k: int) -> dict[str, float]:
    """The normal approximation of how often K random labels per pair order the two pairs the wrong way: the
    pairs' gap (of the cell means' pair means) over the standard error of the difference of two mean residuals
    of K labels, the residuals taken around each pair's chrF line (a least-squares line per pair, over all rated
    segments: what a slope fitted from many labels would explain)."""
    sds = residual_sds(table)
    gap = abs(float(table.groupby(["lp", "system"])["mqm"].mean().groupby(level="lp").mean().diff().iloc[-1]))
    se = float(np.sqrt(sum(sd**2 / k for sd, _ in sds.values())))
    return {"gap": gap, "se": se, "share": float(sps.norm.cdf(-gap / se))}


def residual_sds(table: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per pair: the segments' MQM sd around a least-squares chrF line, and the share of their variance the line
    explains."""
    out = {}
    for lp, part in table.groupby("lp"):
        slope, intercept = np.polyfit(part["chrf"], part["mqm"], 1)
        residual = part["mqm"] - (intercept + slope * part["chrf"])
        out[str(lp)] = (float(np.std(residual, ddof=1)), float(1 - residual.var() / part["mqm"].var()))
    return out


def offset_z(table: pd.DataFrame, k: int, n: int = 2000) -> dict[str, float]:
    """Over ``n`` draws of K labels per pair: the error of the difference of the two pairs' label means over its
    standard error (each pair's label variance over K): its sd and the shares beyond -1.96 and 1.96 (a normal's:
    1, 2.5%, 2.5%)."""
    scored = table[["lp", "mqm"]]
    truth = table.groupby(["lp", "system"])["mqm"].mean().groupby(level="lp").mean()
    z = np.empty(n)
    for d in range(n):
        labels = scored.assign(human=sim.label(scored, k, np.random.default_rng([d, k, 9]), column="mqm"))
        g = labels.dropna(subset=["human"]).groupby("lp")["human"].agg(["mean", "var", "count"])
        z[d] = (g["mean"].iloc[0] - g["mean"].iloc[1] - (truth.iloc[0] - truth.iloc[1])) \
            / np.sqrt((g["var"] / g["count"]).sum())
    return {"sd": float(z.std()), "below": float((z < -sps.norm.ppf(0.975)).mean()),
            "above": float((z > sps.norm.ppf(0.975)).mean())}


def boards(table: pd.DataFrame, draws: int, k: int, n_resamples: int = 1000) -> pd.DataFrame:
    """Per draw, the leaderboard's coverage and verdicts (``calibration_simulation.pair_scores``) against the full
    MQM cell means, the rms of the cells' errors over the sd their intervals imply, and the cross-pair verdicts
    that Benjamini and Hochberg's procedure at 5% would keep (``bh``: :func:`bh_verdicts`)."""
    scored = table[["lp", "system", "doc_id", "seg_id", "chrf", "mqm"]].rename(columns={"chrf": "score"})
    truth = scored.groupby(["lp", "system"])["mqm"].mean()
    rows = []
    for d in range(draws):
        board = sim.drawn_board(scored, "mqm", k, d, "mqm", n_resamples)
        cells = board.rows.set_index(["group", "system"])
        error = truth.loc[cells.index].to_numpy() - cells["calibrated"].to_numpy()
        sd = (cells["calibrated_ci_high"] - cells["calibrated_ci_low"]).to_numpy() / (2 * sim.NORMAL_95)
        rows.append({"draw": d, **sim.pair_scores(board, truth), **bh_verdicts(board, truth),
                     "rms z": float(np.sqrt(np.mean((error / sd) ** 2)))})
    return pd.DataFrame(rows)


def bh_verdicts(board, truth: pd.Series, q: float = 0.05) -> dict[str, int]:
    """The cross-pair comparisons that Benjamini and Hochberg's step-up procedure at ``q`` declares, each
    comparison's p-value twice the share of the board's joint draws on the far side of 0, and how many of them
    are wrong (the sign of the draws' majority against the truth's): the directional false discovery rate's
    usual control (Benjamini and Yekutieli 2005), beside the board's own 95% intervals."""
    groups, systems = board.rows["group"].to_numpy(), board.rows["system"].to_numpy()
    a, b = np.triu_indices(len(groups), k=1)
    across = groups[a] != groups[b]
    a, b = a[across], b[across]
    diff = board.draws[:, a] - board.draws[:, b]
    below, above = (diff <= 0).mean(axis=0), (diff >= 0).mean(axis=0)
    p = np.minimum(1.0, 2 * np.minimum(below, above))
    ranked = np.sort(p)
    passed = np.nonzero(ranked <= q * np.arange(1, len(p) + 1) / len(p))[0]
    told = p <= ranked[passed[-1]] if len(passed) else np.zeros(len(p), dtype=bool)
    h = truth.loc[list(zip(groups[a], systems[a], strict=True))].to_numpy() \
        - truth.loc[list(zip(groups[b], systems[b], strict=True))].to_numpy()
    wrong = told & (np.where(below < above, 1.0, -1.0) * h < 0)
    return {"bh told": int(told.sum()), "bh wrong": int(wrong.sum()), "bh n": len(p)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mqm-repo", required=True, help="a clone of github.com/google/wmt-mqm-human-evaluation")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", default="25,50,100", help="labels per pair")
    parser.add_argument("--many", type=int, default=100, help="draws of the anchored study")
    parser.add_argument("--board-draws", type=int, default=50, help="draws of the leaderboard study")
    args = parser.parse_args(argv)
    budgets = [int(v) for v in args.k.split(",")]
    start = time.time()
    table = load(args.mqm_repo)
    cells = table.groupby(["lp", "system"])[["mqm", "chrf"]].mean()
    print(f"TED talks: {len(table):,} rated segments, {len(cells)} cells "
          f"({', '.join(f'{lp}: {n}' for lp, n in cells.groupby(level='lp').size().items())} MT systems); "
          "pair means (of the cell means): "
          + "; ".join(f"{lp} MQM {row['mqm']:.2f}, chrF {row['chrf']:.1f}"
                      for lp, row in cells.groupby(level="lp").mean().iterrows())
          + f"; cell MQM means sd {cells['mqm'].std(ddof=0):.2f}; segments' MQM sd around chrF's line (share "
          "explained): " + "; ".join(f"{lp} {sd:.2f} ({r2:.1%})" for lp, (sd, r2) in residual_sds(table).items()),
          flush=True)

    decided = decisions(table, args.draws, budgets)
    print("\nCross-pair accuracy against the full MQM cell means (mean (min) over draws; auto's choices):\n")
    print("| K | raw chrF | LGN | anchored | auto | auto chose (basis) |\n|---|---:|---:|---|---|---|")
    for k, part in decided.groupby("k", sort=False):
        chose = ", ".join(f"{c} {n}x" for c, n in part["chose"].value_counts().sort_index().items())
        print(f"| {k} | {part['raw'].mean():.3f} | {part['lgn'].mean():.3f} | {part['anchored'].mean():.3f} "
              f"({part['anchored'].min():.3f}) | {part['auto'].mean():.3f} ({part['auto'].min():.3f}) | {chose} |")

    print(f"\nAnchored calibration over {args.many} draws of K labels per pair:\n")
    print("| K | mean | 5% quantile | worst | pair order wrong | expected (normal: gap / se) | label means' "
          "difference: z sd, below -1.96, above 1.96 (2,000 draws) |\n|---|---:|---:|---:|---:|---|---|")
    for k in budgets:
        study, flips, z = many_draws(table, k, args.many), expected_flips(table, k), offset_z(table, k)
        print(f"| {k} | {study['mean']:.3f} | {study['q05']:.3f} | {study['min']:.3f} | "
              f"{study['pair order wrong']:.2f} | {flips['share']:.2f} ({flips['gap']:.2f} / {flips['se']:.2f}) | "
              f"{z['sd']:.2f}, {z['below']:.3f}, {z['above']:.3f} |")

    print(f"\nThe leaderboard (anchored, --human-scale mqm; mean (min) over {args.board_draws} draws; errors pooled; "
          "the worst draw's share of wrong verdicts):\n")
    print("| K | covers cell mean | covers difference: across | within | cross-pair orders declared | of them wrong "
          "| worst draw | rms error / sd | Benjamini-Hochberg at 5%: declared, wrong |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for k in budgets:
        b = boards(table, args.board_draws, k)
        told, wrong = int(b["n told across"].sum()), int(b["n wrong across"].sum())
        worst = (b["n wrong across"] / b["n told across"].where(b["n told across"] > 0)).max()
        print(f"| {k} | {b['cover cell'].mean():.3f} ({b['cover cell'].min():.2f}) | {b['cover across'].mean():.3f} "
              f"| {b['cover within'].mean():.3f} | {b['declared across'].mean():.3f} | {wrong} of {told:,} "
              f"| {0.0 if worst != worst else worst:.2f} | {b['rms z'].mean():.2f} "
              f"| {b['bh told'].sum() / b['bh n'].sum():.3f}, {int(b['bh wrong'].sum())} of "
              f"{int(b['bh told'].sum()):,} |")
    print(f"\n{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
