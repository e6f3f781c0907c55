"""Does ``--method auto`` follow the evidence? WMT21 and WMT20, chrF, K random labels per pair.

For each draw: keep the human score on K random judged segments per language pair and blank the rest, as
a user's table would be; fit with ``fit_calibration(method="auto")`` (what ``xleval calibrate fit --method
auto`` runs), and with ``lgn`` and ``anchored`` beside it; apply each to the whole table; cross-pair
accuracy (pairs of systems from different pairs, acc23 with ties as in mt-metrics-eval) of the system
means of the calibrated segments against the system means of the full human column. Raw chrF (system
means) alongside. The sets: WMT21 to-English (7 pairs, sentence chrF against reference A) with DA z
(under a z-like and a plain column name) and raw DA; with ``--wmt20``, WMT20 raw DA of the 7
out-of-English pairs (source-based) and of the 6 to-English pairs judged against the reference (the
organisers' segment chrF), MT systems only; with ``--mqm``, WMT21 expert MQM of en-de and zh-en (error points,
``human_scale="mqm"`` as ``--human-scale mqm`` names it), the two pairs as they are (3.65 MQM apart) and with
en-de's errors moved up to 0.66 MQM from zh-en (two close pairs that chrF orders backwards, like issue 33's TED talks).
With ``--wiki``, WMT20's two Wikipedia pairs into English, km-en and ps-en (raw DA, the organisers' chrF): two
pairs at about one level that chrF puts at about one level too (the TED talks' mirror image: the metric is right).
``--k``: the budgets (default 25, 50 and 100, issue 33's).
Also the time ``decide_calibration`` takes on the WMT21 table (122k rows) and on a 50k-row subset
(de-en + cs-en + ja-en + ru-en).

    PYTHONPATH=src python examples/decision_check.py [--quick] [--k 100] [--wmt20] [--mqm] [--wiki]
        [--worlds 10 [--worlds-only]]
        [--data /work/shared/data]

``--quick``: 3 draws instead of 10. Prints a Markdown table (docs/calibration.md quotes it). ``auto`` is what the
decision applies: where it names the raw scores (``none``), the leaderboard and the report rank by them, and the
column has raw chrF's accuracy (``calibrate fit --method auto`` still writes the calibrator its reason names).

``--worlds N``: also the simulated worlds of ``calibration_simulation.py`` (kinds ``lgn``: the groups' true
quality equal; ``raw``: the metric's levels right; ``half``: each half right; ``neither``), 4 and 7 groups of 8
systems, K labels per group, N worlds per cell: the accuracy of what ``decide_calibration`` applies (raw system
means, LGN, or the anchored calibrator with its default prior) against the cells' true means, beside LGN and
anchored, and how often each method and basis was applied.
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

from xleval.calibration import apply_calibrator
from xleval.decision import N_FOLDS, N_REPEATS, decide_calibration, fit_calibration
from xleval.metrics import score_frame
from xleval.stats import pairwise_accuracy

BUDGETS = (25, 50, 100)
# (set, human column, how the table names its labels, row label, the scale as --human-scale names it): DA z
# once under a z-like name (recognised as standardised by its name and its group moments) and once under a
# plain name with no scale named (the tool cannot tell, and the cross-validated evidence decides); raw DA and
# MQM named as their user names them (``da``, ``mqm``), which fixes the direction of the human scale
CASES = [("wmt21", "human_z", "labels_z", "WMT21 DA z (column `labels_z`)", None),
         ("wmt21", "human_z", "labels", "WMT21 DA z (column `labels`)", None),
         ("wmt21", "human_raw", "labels", "WMT21 raw DA (column `labels`, `da`)", "da")]
WMT20_CASES = [(name, "human_raw", "labels", f"{name} (`da`)", "da") for name in ("WMT20 raw DA, 7 out of English",
                                                                                   "WMT20 raw DA, 6 into English")]
MQM_CASES = [(name, "mqm", "labels", name, "mqm") for name in ("WMT21 MQM (en-de, zh-en; 3.65 apart)",
                                                               "WMT21 MQM, en-de moved to 0.66 apart")]
WIKI = "WMT20 raw DA, km-en + ps-en (Wikipedia)"
WIKI_CASES = [(WIKI, "human_raw", "labels", f"{WIKI} (`da`)", "da")]


def load(data_root: str | os.PathLike) -> pd.DataFrame:
    """WMT21 to-English MT rows (no human translations) with sentence chrF against reference A."""
    columns = ["lp", "system", "seg_id", "hypothesis", "reference", "human_z", "human_raw", "is_human"]
    seg = pd.read_parquet(Path(data_root) / "wmt21" / "segments.parquet", columns=columns)
    seg = seg[seg["lp"].str.endswith("-en") & ~seg["is_human"].astype(bool)].drop(columns="is_human")
    frame = score_frame(seg.reset_index(drop=True), ["chrf"]).frame
    return frame.drop(columns=["hypothesis", "reference"])


def load_wmt20(data_root: str | os.PathLike) -> dict[str, pd.DataFrame]:
    """WMT20 judged MT rows with the organisers' segment chrF (``calibration_simulation.wmt20_tables``), in this
    script's columns (``human_raw``; no documents)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from calibration_simulation import wmt20_tables

    return {name: frame.dropna(subset=["chrf"]).drop(columns="doc_id").rename(columns={"human": "human_raw"})
            .reset_index(drop=True) for name, frame in wmt20_tables({"chrf": "metric:chrF"}, data_root).items()}


def load_wiki(data_root: str | os.PathLike) -> dict[str, pd.DataFrame]:
    """WMT20's two Wikipedia pairs into English, km-en and ps-en (raw DA, the organisers' segment chrF, MT systems
    only): two groups at about one level (62.8 and 64.2 DA) that chrF puts at about one level too."""
    seg = pd.read_parquet(Path(data_root) / "wmt20-metrics" / "segments.parquet",
                          columns=["lp", "system", "seg_id", "is_human", "human_da_raw", "metric:chrF"])
    seg = seg[seg["lp"].isin(["km-en", "ps-en"]) & ~seg["is_human"].astype(bool) & seg["human_da_raw"].notna()]
    frame = seg.rename(columns={"human_da_raw": "human_raw", "metric:chrF": "chrf"}).dropna(subset=["chrf"])
    return {WIKI: frame.drop(columns="is_human").reset_index(drop=True)}


def load_mqm(data_root: str | os.PathLike) -> dict[str, pd.DataFrame]:
    """WMT21 en-de and zh-en MT rows with expert MQM (error points, higher is worse) and sentence chrF; the second
    table with the pairs moved to 0.66 MQM points apart (``anchored_estimators.MQM_CLOSE_SHIFT``): en-de's
    errors moved up rather than zh-en's down, so the labels stay error points (>= 0) and the scale's name
    fixes their direction, as it does for a user's MQM."""
    root = Path(data_root) / "wmt21"
    seg = pd.read_parquet(root / "segments.parquet",
                          columns=["lp", "system", "seg_id", "hypothesis", "reference", "is_human"])
    mqm = pd.read_parquet(root / "mqm_newstest2021.parquet", columns=["lp", "system", "seg_id", "mqm"])
    rated = seg[~seg["is_human"].astype(bool)].drop(columns="is_human").merge(mqm, on=["lp", "system", "seg_id"])
    frame = score_frame(rated.reset_index(drop=True), ["chrf"]).frame.drop(columns=["hypothesis", "reference"])
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from anchored_estimators import MQM_CLOSE_SHIFT

    moved = frame.assign(mqm=frame["mqm"] + np.where(frame["lp"] == "en-de", MQM_CLOSE_SHIFT, 0.0))
    return {MQM_CASES[0][3]: frame, MQM_CASES[1][3]: moved}


def cross_pair_accuracy(table: pd.DataFrame, values: pd.Series, truth: pd.Series) -> float:
    means = values.groupby([table["lp"], table["system"]]).mean().reindex(truth.index)
    lp = truth.index.get_level_values("lp").to_numpy()
    return float(pairwise_accuracy(means.to_numpy(), truth.to_numpy(), groups=lp, pairs="cross").estimate)


def applied_accuracy(table: pd.DataFrame, model, truth: pd.Series, lower_is_better: bool = False) -> float:
    """Cross-pair accuracy, against ``truth`` (oriented higher = better), of the system means of ``model`` applied
    to every row of ``table`` (what ``calibrate apply`` writes); an anchored model's values are on the human scale,
    turned round when it is ``lower_is_better``."""
    calibrated = apply_calibrator(model, table)
    added = [c for c in calibrated.columns if c not in table.columns and c != "calibration_source"]
    values = calibrated[added[0]]
    return cross_pair_accuracy(table, -values if lower_is_better and model.kind == "anchored" else values, truth)


def draw(table: pd.DataFrame, human: str, seed: int, column: str = "labels", k: int = 100) -> pd.DataFrame:
    """The table with ``human`` kept on ``k`` random judged rows per pair (in ``column``)."""
    rng = np.random.default_rng(seed)
    keep = np.concatenate([rng.choice(np.asarray(rows), size=min(k, len(rows)), replace=False)
                           for rows in table[table[human].notna()].groupby("lp").groups.values()])
    labels = np.full(len(table), np.nan)
    labels[keep] = table[human].to_numpy()[keep]
    return table.assign(**{column: labels})


def run(table: pd.DataFrame, human: str, column: str, draws: int, k: int = 100,
        human_scale: str | None = None, score: str = "chrf") -> pd.DataFrame:
    """One row per draw: cross-pair accuracy of the raw ``score`` (chrF), of what ``auto`` applied, of LGN and of
    anchored, and what ``auto`` chose. ``human_scale``: the scale as the user of ``--human-scale`` names it
    (``mqm``: the human column is MQM error points, lower is better)."""
    lower = human_scale == "mqm"
    truth = table.groupby(["lp", "system"])[human].mean() * (-1 if lower else 1)
    scale = {"human_scale": human_scale} if human_scale else {}
    rows = []
    for seed in range(draws):
        sparse = draw(table, human, seed, column, k)
        out = {"draw": seed, "raw": cross_pair_accuracy(sparse, sparse[score], truth)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for method in ("auto", "lgn", "anchored"):
                kwargs = {"human": column, **scale} if method != "lgn" else {}
                fitted = fit_calibration(sparse, method, score=score, by="lp", **kwargs)
                out[method] = applied_accuracy(sparse, fitted.model, truth, lower)
                if method == "auto":  # what the decision applies: the raw scores rank where it names them
                    decision = fitted.decision
                    out["chose"] = f"{decision.method} ({decision.basis})"
                    out[method] = out["raw"] if decision.method == "none" else out[method]
        rows.append(out)
    return pd.DataFrame(rows)


def timing(table: pd.DataFrame) -> dict[str, float]:
    sparse = draw(table, "human_raw", 0)
    subset = sparse[sparse["lp"].isin(["de-en", "cs-en", "ja-en", "ru-en"])].reset_index(drop=True)
    out = {}
    for name, frame in (("full", sparse), ("subset", subset)):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            decide_calibration(frame, "chrf", "lp", human="labels")
        out[name] = time.perf_counter() - start
        out[f"{name}_rows"] = len(frame)
    return out


def held_out_report(table: pd.DataFrame, human: str, draws: int, ks: list[int], scale: str = "da") -> None:
    """Print what the held-out examples (``wikipedia_wmt21``, ``news_wmt22``) report on a set of judged rows
    (``lp, system, seg_id, chrf``, the ``human`` column; ``doc_id`` if known): the decision study (:func:`run`) at
    each K of ``ks`` and with every label, and at K = 100 over ``draws`` draws the leaderboard (anchored, the named
    human ``scale``, 1,000 resamples) beside issue 33's plain procedure, and the leaderboard's estimate of the cells'
    deviation variance from the common line: with every judged segment as a label, and its mean over the draws."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import calibration_simulation as sim

    points = table[["lp", "system", "seg_id", "chrf", human]]
    print("\n| K | raw chrF | LGN | anchored | auto (worst) | auto chose (basis) |\n|---|---:|---:|---:|---|---|")
    every = int(points.groupby("lp").size().max())
    for k in [*ks, every]:
        part = run(points, human, "labels", draws if k != every else 1, k=k, human_scale=scale)
        chose = ", ".join(f"{c} {n}x" for c, n in part["chose"].value_counts().sort_index().items())
        print(f"| {'all' if k == every else k} | {part['raw'].mean():.3f} | {part['lgn'].mean():.3f} | "
              f"{part['anchored'].mean():.3f} | {part['auto'].mean():.3f} ({part['auto'].min():.3f}) | {chose} |",
              flush=True)
    scored = table.rename(columns={"chrf": "score", human: "gold"})
    truth = scored.groupby(["lp", "system"])["gold"].mean()
    rows, deviation = [], []
    for d in range(draws):
        labelled = scored.assign(human=sim.label(scored, 100, np.random.default_rng([d, 100]), column="gold"))
        board = sim.drawn_board(scored, "gold", 100, d, scale)
        deviation.append(board.uncertainty["deviation_estimate"])
        rows.append({"procedure": "leaderboard", **sim.pair_scores(board, truth)})
        rows.append({"procedure": "plain", **sim.plain_pairs(labelled[["lp", "system", "score", "human"]], truth)})
    b = pd.DataFrame(rows)
    print(f"\nK = 100, {draws} draws (mean (min); errors pooled):\n")
    print("| procedure | covers cell mean | covers difference: across | cross-pair orders declared | of them wrong |\n"
          "|---|---:|---:|---:|---:|")
    for procedure, part in b.groupby("procedure", sort=False):
        cell = f"{part['cover cell'].mean():.3f} ({part['cover cell'].min():.2f})" if "cover cell" in part else ""
        cell = "" if cell.startswith("nan") else cell
        print(f"| {procedure} | {cell} | {part['cover across'].mean():.3f} | {part['declared across'].mean():.3f} | "
              f"{int(part['n wrong across'].sum())} of {int(part['n told across'].sum()):,} |")
    every_label = sim.drawn_board(scored, "gold", 10**9, 0, scale, n_resamples=20).uncertainty["deviation_estimate"]
    print(f"\nThe cells' deviation variance from the common line (the leaderboard's method-of-moments estimate): "
          f"{every_label:.1f} from every judged segment; at K = 100, {np.mean(deviation):.1f} on average over the "
          f"{draws} draws (sd {np.std(deviation):.1f})")


def worlds(n: int, budgets) -> pd.DataFrame:
    """One row per simulated world (kind, groups, K): the accuracy of what the decision applied, of LGN and of
    anchored (``calibration_simulation.estimates``: ``lgn`` and ``mixed``), and the decision's method and basis."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import calibration_simulation as sim

    rows = []
    for kind in sim.KINDS:
        for groups in (4, 7):
            for k in budgets:
                for w in range(n):
                    rng = np.random.default_rng([7, sim.KINDS.index(kind), groups, k, w])
                    frame, truth = sim.world(rng, kind, groups, n_labels=k)
                    accuracy = {m: sim.cross_accuracy(v, truth) for m, v in sim.estimates(frame).items()}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        decision = decide_calibration(frame, "score", "lp", human="human")
                    applied = {"none": "raw", "lgn": "lgn", "anchored": "mixed"}[decision.method]
                    rows.append({"kind": kind, "groups": groups, "k": k, "auto": accuracy[applied],
                                 "lgn": accuracy["lgn"], "anchored": accuracy["mixed"], "raw": accuracy["raw"],
                                 "chose": f"{decision.method} ({decision.basis})"})
    return pd.DataFrame(rows)


def print_worlds(n: int, budgets) -> None:
    res = worlds(n, budgets)
    print(f"\nSimulated worlds ({n} per kind, group count and K; 8 systems a group): cross-group accuracy against "
          "the cells' true means, mean (min-max)\n")
    print("| world | groups | K | raw | LGN | anchored | auto | auto − better of LGN/anchored, per world "
          "| auto chose |")
    print("|---|---:|---:|---|---|---|---|---|---|")
    for (kind, groups, k), cell in res.groupby(["kind", "groups", "k"], sort=False):
        print(table_row([kind, groups, k], cell), flush=True)


def table_row(keys: list, res: pd.DataFrame) -> str:
    """One Markdown row of the draws or worlds ``res`` (columns ``raw``, ``lgn``, ``anchored``, ``auto`` and
    ``chose``, the method and basis applied): the means and ranges, auto's shortfall to the better of LGN and
    anchored per draw and of the means, and how often each method was applied."""
    gap = res["auto"] - res[["lgn", "anchored"]].max(axis=1)
    better = max(res["lgn"].mean(), res["anchored"].mean())
    chose = ", ".join(f"{m} {n}x" for m, n in res["chose"].value_counts().sort_index().items())
    return (f"| {' | '.join(map(str, keys))} | {res['raw'].mean():.3f} | {spread(res['lgn'])} | "
            f"{spread(res['anchored'])} | {spread(res['auto'])} | mean {gap.mean():+.3f} (min {gap.min():+.3f}); "
            f"of the means {res['auto'].mean() - better:+.3f} | {chose} |")


def spread(values: pd.Series) -> str:
    return f"{values.mean():.3f} ({values.min():.3f}–{values.max():.3f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA", "/work/shared/data"))
    parser.add_argument("--quick", action="store_true", help="3 draws instead of 10")
    parser.add_argument("--k", type=int, nargs="+", default=list(BUDGETS), help="labels per pair (default 25 50 100)")
    parser.add_argument("--wmt20", action="store_true", help="also WMT20 raw DA out of and into English")
    parser.add_argument("--mqm", action="store_true",
                        help="also WMT21 MQM (en-de, zh-en), as it is and with the pairs moved 0.66 MQM apart")
    parser.add_argument("--wiki", action="store_true",
                        help="also WMT20's two Wikipedia pairs, km-en and ps-en (raw DA), two groups at one level")
    parser.add_argument("--worlds", type=int, default=0, help="also N simulated worlds per kind, group count and K")
    parser.add_argument("--worlds-only", action="store_true", help="the simulated worlds alone (with --worlds)")
    args = parser.parse_args(argv)
    draws = 3 if args.quick else 10
    start = time.perf_counter()
    if args.worlds_only:
        print_worlds(args.worlds or draws, args.k)
        print(f"\nTotal run {time.perf_counter() - start:.0f} s.")
        return 0
    tables = {"wmt21": load(args.data), **(load_wmt20(args.data) if args.wmt20 else {}),
              **(load_mqm(args.data) if args.mqm else {}), **(load_wiki(args.data) if args.wiki else {})}
    wmt21 = tables["wmt21"]
    print(f"WMT21 to-English, sentence chrF: {len(wmt21)} rows, {wmt21.groupby(['lp', 'system']).ngroups} "
          f"(pair, system) cells; K = {', '.join(map(str, args.k))} random labels per pair; {draws} draws; "
          f"the decision: {N_FOLDS} system folds x {N_REPEATS} repeats\n")
    print("| human scale | K | raw chrF | LGN | anchored | auto | auto − better of LGN/anchored, per draw "
          "| auto chose |")
    print("|---|---:|---|---|---|---|---|---|")
    cases = CASES + (WMT20_CASES if args.wmt20 else []) + (MQM_CASES if args.mqm else []) \
        + (WIKI_CASES if args.wiki else [])
    for key, human, column, name, scale in cases:
        for k in args.k:
            print(table_row([name, k], run(tables[key], human, column, draws, k, scale)), flush=True)
    if args.worlds:
        print_worlds(args.worlds, args.k)
    t = timing(wmt21)
    print(f"\ndecide_calibration: {t['full']:.1f} s on {t['full_rows']} rows, {t['subset']:.1f} s on "
          f"{t['subset_rows']} rows (2 shared cores). Total run {time.perf_counter() - start:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
