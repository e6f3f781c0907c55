"""Issue 33's ESA set, rebuilt from public files: WMT24 en->cs/hi/ja/zh with ESA 0-100.

The WMT24 general MT task's repository (github.com/wmt-conference/wmt24-news-systems) holds the system outputs
(``txt/``) and the ESA ratings of its human evaluation as Appraise exported them (``humeval/``); waves 2 and 3
rate the four pairs of issue 33's ESA set, en-cs, en-hi, en-ja and en-zh. Read as ``xleval ingest esa
--from-appraise`` reads them (:func:`xleval.ratings.read_appraise_esa`, as the organisers do: attention checks
and tutorial, ``#bad``, ``#dup`` and ``#incomplete`` documents dropped, a rater's latest rating of a segment
kept; ``seg_id`` the 1-based line of the pair's ``txt/`` files); a segment's ESA the mean over its raters. MT
systems only (``refA`` is rated too, and is the reference of sentence chrF).
This gives the issue's 49 cells (15, 10, 12 and 12 systems) and the pairs' true MT means it quotes (88.07, 88.10,
89.81, 87.60), raw chrF's 0.492. The ratings are not in the shared data; clone the repository and name it:

    PYTHONPATH=src python examples/esa_wmt24.py --wmt24-repo PATH [--draws 10] [--k 25,50,100] [--board-draws 20]
        [--fits K]

(about a minute on 2 cores.) Waves 0 and 1 (the other pairs) are not read. It prints:

* the set and what was dropped;
* **the decision** (``decision_check.run``, ``human_scale="esa"`` as ``--human-scale esa`` names it): cross-pair
  accuracy of raw chrF, LGN, anchored and what ``--method auto`` applies against the full ESA cell means, K random
  rated segments per pair, ``--draws`` draws at each K, and every segment labelled;
* **the leaderboard** at K = 100 (anchored, ``--human-scale esa``, 1,000 resamples as by default,
  ``--board-draws`` draws): coverage of the cells' ESA means and of the cross-pair differences, the cross-pair and
  within-pair orders its verdicts declare and how many of them are wrong (``calibration_simulation.pair_scores``);
* with ``--fits K``, what the anchored fits and the decision saw in each draw at that K (:func:`fits`, with the
  between-system slope also left unshrunk), on this set and on two shared sets where anchored calibration is far
  better than LGN (WMT21 raw DA, WMT20 raw DA into English; ``$XLEVAL_DATA``); and per set, the accuracy of the
  cells put on LGN's equal levels with one slope and no label (:func:`centred_accuracy`).

docs/calibration.md ("Issue 33's ESA set") quotes the output. No test reads these files (they are not in the
shared data).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

from xleval.decision import fit_calibration
from xleval.metrics import score_frame
from xleval.ratings import read_appraise_esa, score_esa

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration_simulation as sim
import decision_check

PAIRS = ("en-cs", "en-hi", "en-ja", "en-zh")
WAVES = ("humeval/esa_generalMT2024_wave2.csv", "humeval/esa_generalMT2024_wave3.csv")


def load(repo: str | Path) -> tuple[pd.DataFrame, list[str]]:
    """One row per rated MT segment: ``lp, system, doc_id, seg_id`` (1-based line), ``esa`` (mean over raters),
    ``chrf`` (sentence chrF against refA); and what the reader said it dropped (``xleval ingest esa
    --from-appraise``: :func:`xleval.ratings.read_appraise_esa`, then :func:`xleval.ratings.score_esa`)."""
    repo = Path(repo)
    parts, said = [], []
    for name in WAVES:
        path = repo / name
        if not path.is_file():
            print(f"esa_wmt24: no {path}; --wmt24-repo names a clone of github.com/wmt-conference/wmt24-news-systems",
                  file=sys.stderr)
            raise SystemExit(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts.append(read_appraise_esa(path))
        said += [str(w.message) for w in caught]
    segments = score_esa(pd.concat(parts, ignore_index=True), spans="spans")
    segments = segments[segments["lp"].isin(PAIRS) & (segments["system"] != "refA")].rename(columns={"doc": "doc_id"})
    texts = []
    for lp, part in segments.groupby("lp"):
        def lines(path: Path) -> list[str]:
            return path.read_text(encoding="utf-8").split("\n")
        reference = lines(repo / "txt" / "references" / f"{lp}.refA.txt")
        outputs = {s: lines(repo / "txt" / "system-outputs" / str(lp) / f"{s}.txt") for s in part["system"].unique()}
        line = part["seg_id"].to_numpy() - 1
        texts.append(part.assign(reference=[reference[i] for i in line],
                                 hypothesis=[outputs[s][i] for s, i in zip(part["system"], line, strict=True)]))
    table = score_frame(pd.concat(texts, ignore_index=True), ["chrf"]).frame
    return table[["lp", "system", "doc_id", "seg_id", "esa", "chrf"]], said


def boards(table: pd.DataFrame, draws: int, k: int = 100, n_resamples: int = 1000) -> pd.DataFrame:
    """Per draw, the leaderboard's coverage and verdicts against the full ESA cell means."""
    scored = table[["lp", "system", "doc_id", "seg_id", "chrf", "esa"]].rename(columns={"chrf": "score"})
    truth = scored.groupby(["lp", "system"])["esa"].mean()
    rows = []
    for d in range(draws):
        rows.append({"draw": d, **sim.pair_scores(sim.drawn_board(scored, "esa", k, d, "esa", n_resamples), truth)})
    return pd.DataFrame(rows)


def fits(table: pd.DataFrame, human: str, scale: str, k: int, draws: int) -> pd.DataFrame:
    """Per draw of K labels per pair (``decision_check.draw``, the decision study's draws): the anchored fit's
    between-system slope, the mixed prior's weight on LGN's levels and its posterior sd, the range of the offsets'
    standard errors, the decision's method and basis, the labels' test of LGN's assumption, and the cross-pair
    accuracy of anchored calibration, of the same fit with the between-system slope not shrunk toward the
    within-system one (``between_shrinkage="none"``: is the slope what costs accuracy?), and of LGN."""
    truth = table.groupby(["lp", "system"])[human].mean()
    rows = []
    for seed in range(draws):
        sparse = decision_check.draw(table, human, seed, "labels", k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            auto = fit_calibration(sparse, "auto", score="chrf", by="lp", human="labels", human_scale=scale)
            anchored = fit_calibration(sparse, "anchored", score="chrf", by="lp", human="labels", human_scale=scale)
            lgn = fit_calibration(sparse, "lgn", score="chrf", by="lp")
            unshrunk = type(anchored.model)(**{**anchored.model.get_params(), "between_shrinkage": "none"})
            unshrunk.fit(sparse, strict=False)
        described, offsets = anchored.model.describe(), anchored.model.group_table()["offset_se"]
        validity = auto.decision.rules.validity
        rows.append({"draw": seed, "between slope": described["between_slope"],
                     "lgn weight": described["lgn_weight"], "its sd": described["lgn_weight_sd"],
                     "offset se": f"{offsets.min():.2f}-{offsets.max():.2f}",
                     "auto": f"{auto.decision.method} ({auto.decision.basis})",
                     "validity": validity.status if validity is not None else "",
                     "anchored": decision_check.applied_accuracy(sparse, anchored.model, truth),
                     "slope unshrunk": decision_check.applied_accuracy(sparse, unshrunk, truth),
                     "lgn": decision_check.applied_accuracy(sparse, lgn.model, truth)})
    return pd.DataFrame(rows)


def every_label_slope(table: pd.DataFrame, human: str, scale: str) -> float:
    """The between-system slope of the anchored fit with every rated segment labelled."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = fit_calibration(table.assign(labels=table[human]), "anchored", score="chrf", by="lp", human="labels",
                               human_scale=scale)
    return float(full.model.slopes_["between"])


def centred_accuracy(table: pd.DataFrame, human: str) -> float:
    """Cross-pair accuracy of chrF's cell means minus their pair's mean of cell means: LGN's equal pair levels
    with one common slope, which is where anchored offsets that took LGN's centre (gamma = 1, tau = 0) would put
    the cells."""
    truth = table.groupby(["lp", "system"])[human].mean()
    cells = table.groupby(["lp", "system"])["chrf"].mean()
    level = cells.groupby(level="lp").mean()
    return decision_check.cross_pair_accuracy(table, table["chrf"] - table["lp"].map(level), truth)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wmt24-repo", required=True, help="a clone of github.com/wmt-conference/wmt24-news-systems")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", default="25,50,100", help="labels per pair")
    parser.add_argument("--board-draws", type=int, default=20, help="draws of the leaderboard study (K = 100)")
    parser.add_argument("--fits", type=int, help="also what the fits saw in each draw at this K (and on 2 shared sets)")
    args = parser.parse_args(argv)
    start = time.time()
    table, said = load(args.wmt24_repo)
    cells = table.groupby(["lp", "system"])[["esa", "chrf"]].mean()
    print(f"WMT24 ESA: {len(table):,} rated MT segments, {len(cells)} cells "
          f"({', '.join(f'{lp}: {n}' for lp, n in cells.groupby(level='lp').size().items())} systems); "
          "pair means of the cells: "
          + "; ".join(f"{lp} ESA {row['esa']:.2f}, chrF {row['chrf']:.1f}"
                      for lp, row in cells.groupby(level="lp").mean().iterrows()), flush=True)
    print("The reader said:\n" + "\n".join(f"  {line}" for line in said))
    points = table[["lp", "system", "seg_id", "chrf", "esa"]]
    print("\nCross-pair accuracy against the full ESA cell means (mean (min) over draws; auto's choices):\n")
    print("| K | raw chrF | LGN | anchored | auto | auto minus the better of LGN and anchored (of the means) "
          "| auto chose (basis) |\n|---|---:|---:|---|---|---:|---|")
    every = int(points.groupby("lp").size().max())
    for k in [*[int(v) for v in args.k.split(",")], every]:
        part = decision_check.run(points, "esa", "labels", args.draws if k != every else 1, k=k, human_scale="esa")
        chose = ", ".join(f"{c} {n}x" for c, n in part["chose"].value_counts().sort_index().items())
        behind = part["auto"].mean() - max(part["lgn"].mean(), part["anchored"].mean())
        print(f"| {'all' if k == every else k} | {part['raw'].mean():.3f} | {part['lgn'].mean():.3f} | "
              f"{part['anchored'].mean():.3f} ({part['anchored'].min():.3f}) | {part['auto'].mean():.3f} "
              f"({part['auto'].min():.3f}) | {behind:+.3f} | {chose} |", flush=True)
    b = boards(table, args.board_draws)
    print(f"\nThe leaderboard at K = 100 (anchored, --human-scale esa; mean (min) over {args.board_draws} draws; "
          "errors pooled):\n")
    print("| covers cell mean | covers difference: across | within | cross-pair orders declared | of them wrong "
          "| within-pair declared | of them wrong |\n|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {b['cover cell'].mean():.3f} ({b['cover cell'].min():.2f}) | {b['cover across'].mean():.3f} | "
          f"{b['cover within'].mean():.3f} | {b['declared across'].mean():.3f} | {int(b['n wrong across'].sum())} of "
          f"{int(b['n told across'].sum()):,} | {b['declared within'].mean():.3f} | {int(b['n wrong within'].sum())} "
          f"of {int(b['n told within'].sum()):,} |")
    if args.fits:
        print(f"\nWhat the fits saw at K = {args.fits} (this set, then WMT21 raw DA and WMT20 raw DA into English):\n")
        shared = decision_check.load(os.environ.get("XLEVAL_DATA", "../shared/data"))
        into = decision_check.load_wmt20(os.environ.get("XLEVAL_DATA", "../shared/data"))
        for name, frame, human, scale in (("WMT24 ESA", points, "esa", "esa"),
                                          ("WMT21 raw DA", shared.drop(columns="human_z"), "human_raw", "da"),
                                          ("WMT20 into English", into[decision_check.WMT20_CASES[1][0]], "human_raw",
                                           "da")):
            seen = fits(frame, human, scale, args.fits, args.draws)
            slope, centred = every_label_slope(frame, human, scale), centred_accuracy(frame, human)
            print(f"{name}: every label's between-system slope {slope:.3g}; pair-centred chrF (no label: LGN's equal "
                  f"levels with one slope) {centred:.3f}")
            print(seen.round(3).to_string(index=False))
            print("mean: " + ", ".join(f"{c} {seen[c].mean():.3f}" for c in ("anchored", "slope unshrunk", "lgn")),
                  flush=True)
    print(f"\n{time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
