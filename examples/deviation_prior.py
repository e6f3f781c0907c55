"""Which prior for the systems' deviation from the common line? The leaderboard's intervals on 15 real sets.

The leaderboard's joint draws integrate over the variance of the systems' deviations from the calibration
line, ``sigma_delta^2``, which ~100 labels per pair estimate poorly (module docstring of
``xleval.calibration._cell_interval``; docs/calibration.md, "Intervals: what they cover"). Its prior decides
how wide the intervals are where the labels cannot tell ``sigma_delta^2`` from 0. This script compares the flat
prior on the sd (xleval's) with the flat prior on the variance (the default before it) on every human scale
and segment-level metric the shared data offers:

* **WMT21** (``$XLEVAL_DATA/wmt21``): raw DA and DA z of the 7 to-English pairs, MQM of en-de and zh-en, each
  with sentence chrF, sentence BLEU and sentence TER (computed here with xleval's sacrebleu-exact metrics);
* **WMT20** (``$XLEVAL_DATA/wmt20-metrics``): raw DA of the 7 out-of-English pairs and of the 6 to-English pairs
  judged against the reference, each with the organisers' segment chrF, parBLEU and YiSi-2 (reference-free;
  their TER column is left out: its direction and scale differ by pair).

TER is negated (higher = better) so that every metric reads in the human scale's direction. MT systems only.
For each set and each of ``--draws`` draws: K random judged segments per pair are the labels
(``calibration_simulation.label``, seed ``[draw, K]``), the leaderboard is built with anchored calibration
(200 resamples, seed ``draw``) under each prior from the same labels and seed, and its 95% intervals are
checked against the full-data human means: the cells' intervals, and the intervals and verdicts of the
cross-pair and within-pair differences (``calibration_simulation.pair_scores``). Then, from every judged
segment, each pair's own deviation variance around the common line, and whether K labels per pair can tell
the pairs' variances apart (the draws use one for all).

    python examples/deviation_prior.py               # 10 draws, K = 100 (about 2.5 minutes on 2 cores)
    python examples/deviation_prior.py --draws 3     # a quick look
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.calibration import HumanScale, _cell_interval
from xleval.leaderboard import leaderboard
from xleval.metrics import score_frame
from xleval.stats import Resampling

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibration_simulation as sim
from interval_coverage import DATA

PRIORS = ("sd", "variance")
KEEP = ["lp", "system", "seg_id", "doc_id", "human"]


def wmt21_sets() -> dict[tuple[str, str], tuple[pd.DataFrame, bool]]:
    """(scale, metric) -> (rows ``lp, system, seg_id, doc_id, human, score``, human higher is better)."""
    seg = pd.read_parquet(DATA / "segments.parquet")
    to_en = seg[seg["human_raw"].notna().groupby(seg["lp"]).transform("any") & ~seg["is_human"]]
    mqm = pd.read_parquet(DATA / "mqm_newstest2021.parquet")[["lp", "system", "seg_id", "mqm"]]
    rated = seg.merge(mqm, on=["lp", "system", "seg_id"], how="inner")
    metrics = {"chrF": "chrf", "BLEU": "bleu", "-TER": "ter"}
    out = {}
    for frame, scales in ((to_en, {"WMT21 raw DA": "human_raw", "WMT21 DA z": "human_z"}),
                          (rated, {"WMT21 MQM": "mqm"})):
        scored = score_frame(frame.reset_index(drop=True), list(metrics.values())).frame
        for scale, column in scales.items():
            for name, metric in metrics.items():
                sign = -1.0 if name.startswith("-") else 1.0
                rows = scored.assign(human=scored[column], score=sign * scored[metric])[[*KEEP, "score"]]
                out[(scale, name)] = (rows, scale != "WMT21 MQM")
    return out


def wmt20_sets() -> dict[tuple[str, str], tuple[pd.DataFrame, bool]]:
    # the organisers' TER column is left out: its direction and scale vary by pair (en-zh around 40, others near 1)
    metrics = {"chrF": "metric:chrF", "parBLEU": "metric:parbleu", "YiSi-2": "metric:YiSi-2"}
    names = {sim.WMT20_OUT: "WMT20 raw DA, out of English", sim.WMT20_INTO: "WMT20 raw DA, into English"}
    out = {}
    for name, seg in sim.wmt20_tables(metrics, DATA.parent).items():
        for metric in metrics:
            rows = seg[seg[metric].notna()]
            out[(names[name], metric)] = (rows.assign(score=rows[metric])[[*KEEP, "score"]].reset_index(drop=True),
                                          True)
    return out


@contextmanager
def deviation_prior(prior: str):
    """The leaderboard's draws under ``prior`` ("sd": xleval's; "variance": the former default), in this process."""
    saved = _cell_interval._posterior_mean, _cell_interval._posterior_draws
    if prior == "variance":
        sim.prior_on_the_variance()
    try:
        yield
    finally:
        _cell_interval._posterior_mean, _cell_interval._posterior_draws = saved


def study(sets: dict, draws: int, budget: int) -> pd.DataFrame:
    rows = []
    for (scale, metric), (frame, higher) in sets.items():
        truth = frame.groupby(["lp", "system"])["human"].mean()
        for d in range(draws):
            labelled = frame.assign(human=sim.label(frame, budget, np.random.default_rng([d, budget])))
            for prior in PRIORS:
                with deviation_prior(prior), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    board = leaderboard(labelled, "score", "lp", human="human", method="anchored",
                                        resampling=Resampling(n_resamples=200, random_state=d),
                                        human_scale=HumanScale(higher_is_better=higher))
                rows.append({"scale": scale, "metric": metric, "prior": prior, "draw": d,
                             **sim.pair_scores(board, truth)})
    return pd.DataFrame(rows)


def _pair_estimate(rows: pd.DataFrame, slope: float) -> tuple[float, float]:
    """One pair's deviation variance around the line of slope ``slope`` (rows ``human, m, system``) and its
    standard error."""
    from xleval.calibration import deviation_variance

    resid = (rows["human"] - slope * rows["m"]).to_numpy()
    estimate, se, *_ = deviation_variance(resid, np.zeros(len(rows), dtype=np.int64), pd.factorize(rows["system"])[0])
    return estimate, se


def per_pair_deviation(sets: dict) -> str:
    """Per set, from every judged segment: the deviation variance of the cells around the common line (the
    between-system slope of all pairs, ``calibration_simulation.true_line``) pooled over the pairs, and within each
    pair around the same line. The leaderboard's draws use one variance for every pair."""
    lines = []
    for (scale, metric), (frame, _) in sets.items():
        full = frame[frame["human"].notna()].assign(m=frame.groupby(["lp", "system"])["score"].transform("mean"))
        slope, pooled = sim.true_line(frame)
        per_pair = []
        for lp, rows in full.groupby("lp", sort=True):
            per_pair.append(f"{lp} {_pair_estimate(rows, slope)[0]:.3g}")
        lines.append(f"- {scale}, {metric}: pooled {pooled:.3g}; per pair: " + ", ".join(per_pair))
    return "\n".join(lines)


def per_pair_from_labels(sets: dict, draws: int, budget: int) -> str:
    """Can K labels per pair tell the pairs' deviation variances apart? Per set and draw: each pair's own
    estimate around the common line of all judged segments (its standard error from ``deviation_variance``), and
    the between-pair variance of those estimates beyond their standard errors (Paule-Mandel, as for the offsets);
    0 means the labels cannot tell the pairs apart, and a per-pair variance shrunk toward the pooled one would be
    the pooled one."""
    from xleval.calibration._pooling import paule_mandel_tau2

    lines = []
    for (scale, metric), (frame, _) in sets.items():
        slope, _ = sim.true_line(frame)
        full = frame.assign(m=frame.groupby(["lp", "system"])["score"].transform("mean"))
        spreads = []
        for d in range(draws):
            labelled = full.assign(human=sim.label(frame, budget, np.random.default_rng([d, budget])))
            own = [_pair_estimate(rows, slope) for _, rows in labelled[labelled["human"].notna()].groupby("lp")]
            estimates, ses = np.array(own).T
            ok = np.isfinite(estimates) & (ses > 0)
            spreads.append(paule_mandel_tau2(estimates[ok], ses[ok] ** 2) if ok.sum() > 1 else np.nan)
        spreads = np.array(spreads)
        lines.append(f"- {scale}, {metric}: between-pair variance of the pairs' own estimates 0 in "
                     f"{int((spreads == 0).sum())} of {draws} draws (mean {np.nanmean(spreads):.3g})")
    return "\n".join(lines)


def summary(result: pd.DataFrame) -> str:
    """Per prior: how many sets' mean cell coverage falls below, inside and above [0.90, 0.99], the worst draw,
    and the cross-pair verdicts pooled over every set and draw."""
    lines = []
    per_set = result.groupby(["prior", "scale", "metric"])["cover cell"].agg(["mean", "min"])
    for prior in PRIORS:
        cov = per_set.loc[prior]
        sel = result[result["prior"] == prior]
        told, wrong = int(sel["n told across"].sum()), int(sel["n wrong across"].sum())
        lines.append(f"- flat prior on the {prior}: mean cell coverage below 0.90 on {int((cov['mean'] < 0.90).sum())} "
                     f"of {len(cov)} sets, inside [0.90, 0.99] on {int(cov['mean'].between(0.90, 0.99).sum())}, "
                     f"above 0.99 on {int((cov['mean'] > 0.99).sum())} (range {cov['mean'].min():.3f}-"
                     f"{cov['mean'].max():.3f}); worst draw {cov['min'].min():.2f}; cross-pair orders declared "
                     f"{sel['declared across'].mean():.1%} on average, {wrong} of {told} wrong"
                     + (f" ({wrong / told:.1%})" if told else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--k", type=int, default=100, help="labels per pair (default 100)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sets = {**wmt21_sets(), **wmt20_sets()}
    result = study(sets, args.draws, args.k)
    print(f"## Cell intervals and pairwise verdicts (95%), K = {args.k}, mean (min) over {args.draws} draws\n")
    print(sim._table(result, ["scale", "metric", "prior"], ("cover cell", "cover across", "cover within",
                                                          "declared across", "wrong across", "declared within")))
    print("\n" + summary(result))
    print("\nThe cells' deviation variance from the common line, all judged segments (one variance in the draws):\n")
    print(per_pair_deviation(sets))
    print(f"\nWhat K = {args.k} labels per pair tell of the pairs' deviation variances:\n")
    print(per_pair_from_labels(sets, args.draws, args.k))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
