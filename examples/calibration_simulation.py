"""Which offsets from few labels: the anchored calibrator's priors compared in simulation and on WMT21,
and how decisive and how honest its pairwise verdicts are.

**Accuracy.** Cross-group pairwise accuracy of calibrated system means against the cells' true human
means (the mean over every segment) for: ``raw`` (metric system means), ``lgn`` (system means z-scored
per group by the group's segment mean and sd), ``anchored`` (``prior="common"``: each group's own mean
residual, pulled toward the common offset only with 4 or more groups) and ``mixed`` (``prior="mixed"``,
the default: offsets shrunk toward a centre that mixes LGN's equal levels and the raw scale's common
offset, weighted by the labels). Simulated worlds (segments in documents shared by the systems of a
group; K random labels per group; the metric's shift of a group is N(0, 5) chrF-like points):

* ``lgn``: every group's true mean quality is the same (LGN's assumption holds; raw is biased);
* ``raw``: the groups' human levels move with the metric's (one scale: raw holds; LGN erases real gaps);
* ``half``: the human levels move with half the metric's shift (each prior half right);
* ``neither``: the human levels are unrelated to the metric's (N(0, 4) on the human scale);
* ``against``: the human levels move against the metric's shift (-0.4 times it: the metric orders the groups
  backwards, as chrF orders WMT21's MQM pairs; past LGN's levels, outside the mix the prior spans);
* ``beyond raw``: they move with 1.2 times the metric's shift (the metric understates the gaps; past the raw
  scale's levels).

**Pairs.** ``leaderboard(..., method="anchored").pairs()`` on the same kind of worlds: coverage of the
true difference of two cells' human means by the 95% interval of the difference, the share of the
cross-group pairs given a verdict, and the share of those verdicts that are wrong. On the real sets also the
same with each pair's own (unshrunk) offset (``own offsets``), issue 33's plain procedure (``plain``: own
offsets, the between-system slope of the labelled cells, a plug-in deviation variance and a z-test;
:func:`plain_pairs`) and the ``oracle``: the plain procedure told the slope and the deviation variance that
every judged segment gives (:func:`true_line`), a yardstick of what the labels' offsets alone can settle.

**WMT21** (``$XLEVAL_DATA/wmt21``): sentence chrF against raw DA (7 to-English pairs), DA z and MQM
(en-de, zh-en); **WMT20** (``$XLEVAL_DATA/wmt20-metrics``): the organisers' segment chrF against raw DA of
the 7 out-of-English pairs (source-based DA) and of the 6 to-English pairs judged against the reference
(cs, de, ja, pl, ru, ta); MT systems only; K random judged segments per pair, the truth the full-data
human means.

    python examples/calibration_simulation.py              # 20 worlds per cell, 10 WMT21 draws (~10 min)
    python examples/calibration_simulation.py --quick      # 4 worlds, 3 draws
    python examples/calibration_simulation.py --wmt-only --pairs-k 100 200   # the real sets, pairs at K = 100, 200
    python examples/calibration_simulation.py --wmt-only --n-resamples 1000     # the real sets' boards at the default
    python examples/calibration_simulation.py --deviation-prior variance     # the former flat prior on the variance
    python examples/calibration_simulation.py --tau-prior flat               # the offsets' former flat prior on tau
    python examples/calibration_simulation.py --no-wmt --groups 2 --mixed-with-two-groups   # 2 groups pulled
    python examples/calibration_simulation.py --deviation-study 40   # the deviation variance the labels tell
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from xleval.calibration import AnchoredCalibrator, HumanScale, deviation_variance
from xleval.calibration._pooling import mixed_offsets
from xleval.leaderboard import ScoreReading, leaderboard
from xleval.stats import Resampling

KINDS = ("lgn", "raw", "half", "neither")
# worlds outside the span of the two structural priors (their seeds follow KINDS, so the four above are unchanged)
BEYOND = ("against", "beyond raw")
PAIRS = np.array(["cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en", "zh-en"])
ESTIMATORS = ("raw", "lgn", "anchored", "mixed")


def world(rng: np.random.Generator, kind: str, n_groups: int, n_systems: int = 8, n_labels: int = 50,
          n_docs: int = 12, per_doc: int = 5) -> tuple[pd.DataFrame, pd.Series]:
    """One simulated world: segment rows (``lp, system, doc_id, seg_id, score, human`` with ``human`` kept on
    ``n_labels`` random rows per group) and the true human mean of every (lp, system) cell."""
    n = n_docs * per_doc
    group = np.repeat(np.arange(n_groups), n_systems * n)
    system = np.tile(np.repeat(np.arange(n_systems), n), n_groups)
    doc = np.tile(np.repeat(np.arange(n_docs), per_doc), n_groups * n_systems)
    shift = rng.normal(0, 5, n_groups)
    level = {"lgn": np.zeros(n_groups), "raw": 0.8 * shift, "half": 0.4 * shift,
             "neither": rng.normal(0, 4, n_groups), "against": -0.4 * shift, "beyond raw": 1.2 * shift}[kind]
    quality = rng.normal(0, 4, (n_groups, n_systems))
    quality -= quality.mean(axis=1, keepdims=True)  # a group's systems average to its level
    deviation = rng.normal(0, 2, (n_groups, n_systems))
    doc_x, doc_h = rng.normal(0, 5, (n_groups, n_docs)), rng.normal(0, 6, (n_groups, n_docs))
    sys_x = 50 + shift[group] + quality[group, system]
    x = sys_x + doc_x[group, doc] + rng.normal(0, 12, len(group))
    human = (60 + level[group] + 0.8 * quality[group, system] + deviation[group, system] + 0.4 * (x - sys_x)
             + doc_h[group, doc] + rng.normal(0, 20, len(group)))
    frame = pd.DataFrame({"lp": PAIRS[group], "system": np.char.add("s", system.astype(str)),
                          "doc_id": doc, "seg_id": np.tile(np.arange(n), n_groups * n_systems), "score": x,
                          "human": human})
    truth = frame.groupby(["lp", "system"])["human"].mean()
    return frame.assign(human=label(frame, n_labels, rng)), truth


def label(frame: pd.DataFrame, k: int, rng: np.random.Generator, column: str = "human") -> np.ndarray:
    """``frame[column]`` kept on ``k`` random rows per lp that have it, NaN elsewhere."""
    keep = np.zeros(len(frame), dtype=bool)
    ok = frame[column].notna().to_numpy()
    for _, idx in frame.groupby("lp").indices.items():
        pool = idx[ok[idx]]
        keep[rng.choice(pool, size=min(k, len(pool)), replace=False)] = True
    return np.where(keep, frame[column].to_numpy(dtype=float), np.nan)


def cross_accuracy(pred: pd.Series, truth: pd.Series) -> float:
    """Share of the pairs of cells in different groups ordered as the truth orders them (ties count half)."""
    truth = truth.loc[pred.index]
    g = np.asarray(pred.index.get_level_values(0))
    p, t = pred.to_numpy(dtype=float), truth.to_numpy(dtype=float)
    a, b = np.triu_indices(len(p), k=1)
    cross = g[a] != g[b]
    a, b = a[cross], b[cross]
    agree = np.sign(p[a] - p[b]) * np.sign(t[a] - t[b])
    return float(((agree > 0) + 0.5 * (agree == 0)).mean())


def estimates(frame: pd.DataFrame, higher: bool = True) -> dict[str, pd.Series]:
    """Calibrated system means of every estimator, indexed by (lp, system)."""
    cells = frame.groupby(["lp", "system"])["score"]
    out = {"raw": cells.mean()}
    stats = frame.groupby("lp")["score"].agg(["mean", "std"])
    z = (frame["score"] - frame["lp"].map(stats["mean"])) / frame["lp"].map(stats["std"])
    out["lgn"] = z.groupby([frame["lp"], frame["system"]]).mean()
    for name, prior in (("anchored", "common"), ("mixed", "mixed")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = AnchoredCalibrator(by="lp", score="score", human="human", prior=prior,
                                       human_higher_is_better=higher).fit(frame, strict=False)
            out[name] = pd.Series(model.transform(frame), index=frame.index).groupby(
                [frame["lp"], frame["system"]]).mean()
    return out


def accuracy_study(worlds: int, budgets=(25, 50, 100), groups=(2, 4, 7), seed: int = 0,
                   kinds: tuple[str, ...] = KINDS) -> pd.DataFrame:
    """One row per (kind, groups, K, world) with every estimator's cross-group accuracy."""
    rows = []
    for kind in kinds:
        for k in groups:
            for budget in budgets:
                for w in range(worlds):
                    rng = np.random.default_rng([seed, (KINDS + BEYOND).index(kind), k, budget, w])
                    frame, truth = world(rng, kind, k, n_labels=budget)
                    acc = {name: cross_accuracy(pred, truth) for name, pred in estimates(frame).items()}
                    rows.append({"kind": kind, "groups": k, "K": budget, "world": w, **acc})
    return pd.DataFrame(rows)


def pair_scores(board, truth: pd.Series) -> dict[str, float]:
    """Coverage of the cells' true human means by their calibrated intervals (``cover cell``), and of the true
    difference, share declared and share wrong, for cross-group and within-group pairs of a leaderboard."""
    p = board.pairs().table
    h = truth.loc[list(zip(p["group_a"], p["system_a"], strict=True))].to_numpy() \
        - truth.loc[list(zip(p["group_b"], p["system_b"], strict=True))].to_numpy()
    cover = ((p["diff_low"] <= h) & (h <= p["diff_high"])).to_numpy()
    told = (p["verdict"] != "cannot tell").to_numpy()
    sign = 1.0 if board.higher_is_better else -1.0
    wrong = told & (np.where(p["verdict"] == "A better", 1.0, -1.0) * sign * h < 0)
    cells = board.rows.set_index(["group", "system"])
    human = truth.loc[cells.index].to_numpy()
    out = {"cover cell": float(((cells["calibrated_ci_low"] <= human) & (human <= cells["calibrated_ci_high"])).mean())}
    for scope in ("across", "within"):
        sel = (p["scope"] == scope).to_numpy()
        out[f"cover {scope}"] = float(cover[sel].mean()) if sel.any() else np.nan
        out[f"declared {scope}"] = float(told[sel].mean()) if sel.any() else np.nan
        out[f"wrong {scope}"] = float(wrong[sel].sum() / told[sel].sum()) if told[sel].any() else 0.0
        out[f"n wrong {scope}"], out[f"n told {scope}"] = int(wrong[sel].sum()), int(told[sel].sum())
    across = (p["scope"] == "across").to_numpy()
    if across.any():
        z = NORMAL_95
        out.update(_spread(p["difference"].to_numpy()[across], h[across],
                           (p["diff_high"] - p["diff_low"]).to_numpy()[across] / (2 * z)))
    return out


NORMAL_95 = float(sps.norm.ppf(0.975))


def drawn_board(scored: pd.DataFrame, gold: str, k: int, draw: int, scale: str, n_resamples: int = 1000):
    """The leaderboard (anchored calibration, the named human ``scale``, ``n_resamples`` resamples seeded with
    ``draw``) of ``scored`` (``lp, system, score``, ... and the ``gold`` column) with the gold kept on K random rows
    per pair (seed ``[draw, k]``) as the human labels and the rest of the gold dropped: one draw of the
    leaderboard studies of the real sets (``wmt25_stand_in.py``, ``ted_mqm.py``, ``esa_wmt24.py``)."""
    labelled = scored.assign(human=label(scored, k, np.random.default_rng([draw, k]), column=gold))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return leaderboard(labelled.drop(columns=gold), "score", "lp", human="human", method="anchored",
                           resampling=Resampling(n_resamples=n_resamples, random_state=draw),
                           human_scale=HumanScale(scale))


def _spread(estimate: np.ndarray, true: np.ndarray, sd: np.ndarray) -> dict[str, float]:
    """Cross-pair differences: their spread relative to the true ones (sd ratio), their rms error, and the
    rms sd that their 95% intervals imply (half-width / 1.96)."""
    return {"spread across": float(np.std(estimate) / np.std(true)),
            "rms error across": float(np.sqrt(np.mean((estimate - true) ** 2))),
            "rms sd across": float(np.sqrt(np.mean(sd**2)))}


def plain_pairs(frame: pd.DataFrame, truth: pd.Series, higher: bool = True, level: float = 0.95, *,
                line: tuple[float, float] | None = None) -> dict[str, float]:
    """Issue 33's plain procedure on a labelled table (``lp, system, score, human``): offsets = each pair's mean
    label residual with its standard error, the between-system slope from the labelled cells (least squares of
    their label means on their mean scores, one intercept per pair, weighted by labels), the cells' deviation
    variance tau^2 from their label-mean residuals (the method of moments of ``deviation_variance``, 0 if
    negative), and a z-test on each cross-pair difference with variance se^2(a_1) + se^2(a_2) + 2 tau^2.
    ``line``: ``(slope, tau^2)`` to use instead of the labels' (:func:`true_line`: the oracle).
    Returns :func:`pair_scores`' cross-pair figures."""
    lab = frame.assign(m=frame.groupby(["lp", "system"])["score"].transform("mean"))[frame["human"].notna()]
    slope, tau2 = _line(lab) if line is None else line
    resid = lab["human"] - slope * lab["m"]
    by_pair = resid.groupby(lab["lp"])
    offset, se2 = by_pair.mean(), by_pair.var() / by_pair.size()
    means = frame.groupby(["lp", "system"])["score"].mean()
    g = np.asarray(means.index.get_level_values(0))
    y = offset.loc[g].to_numpy() + slope * means.to_numpy()
    h = truth.loc[means.index].to_numpy()
    a, b = np.triu_indices(len(y), k=1)
    a, b = a[g[a] != g[b]], b[g[a] != g[b]]
    sd = np.sqrt(se2.loc[g[a]].to_numpy() + se2.loc[g[b]].to_numpy() + 2 * tau2)
    half = sps.norm.ppf(0.5 + level / 2) * sd
    diff = y[a] - y[b]
    told = np.abs(diff) > half
    wrong = told & (np.sign(diff) * np.sign(h[a] - h[b]) < 0)
    return {"cover across": float((np.abs(diff - (h[a] - h[b])) <= half).mean()), "declared across": float(told.mean()),
            "wrong across": float(wrong.sum() / told.sum()) if told.any() else 0.0,
            "n wrong across": int(wrong.sum()), "n told across": int(told.sum()), **_spread(diff, h[a] - h[b], sd)}


def _line(lab: pd.DataFrame) -> tuple[float, float]:
    """The between-system slope of the labelled cells (one intercept per pair, weighted by labels) and the
    method-of-moments deviation variance of the cells around it (0 if negative), from rows ``lp, system, m,
    human`` (``m``: the cell's mean score)."""
    cells = lab.groupby(["lp", "system"]).agg(h=("human", "mean"), m=("m", "first"), n=("human", "size"))
    design = np.column_stack([pd.get_dummies(cells.index.get_level_values(0)).to_numpy(float), cells["m"].to_numpy()])
    root = np.sqrt(cells["n"].to_numpy(float))[:, None]
    slope = float(np.linalg.lstsq(design * root, cells["h"].to_numpy() * root[:, 0], rcond=None)[0][-1])
    resid = lab["human"] - slope * lab["m"]
    centred = (resid - resid.groupby(lab["lp"]).transform("mean")).to_numpy()
    # the procedure as it defines it: one pooled within-cell variance, no slope degree of freedom
    tau2 = deviation_variance(centred, pd.factorize(lab["lp"])[0],
                              pd.factorize(lab["lp"] + "\t" + lab["system"])[0], noise="pooled")[0]
    return slope, max(float(tau2), 0.0)


def true_line(frame: pd.DataFrame) -> tuple[float, float]:
    """The slope and deviation variance that every judged segment gives (``frame``: ``lp, system, score,
    human``, every human score kept): what the labels of :func:`plain_pairs` estimate, known to an oracle."""
    full = frame.assign(m=frame.groupby(["lp", "system"])["score"].transform("mean"))
    return _line(full[full["human"].notna()])


def pairs_study(worlds: int, budget: int = 100, groups=(2, 4, 7), n_resamples: int = 200,
                seed: int = 1) -> pd.DataFrame:
    rows = []
    for kind in KINDS:
        for k in groups:
            for w in range(worlds):
                rng = np.random.default_rng([seed, KINDS.index(kind), k, w])
                frame, truth = world(rng, kind, k, n_labels=budget)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    board = leaderboard(frame, "score", "lp", human="human", method="anchored",
                                        resampling=Resampling(n_resamples=n_resamples, random_state=w),
                                        human_scale=HumanScale(higher_is_better=True))
                rows.append({"kind": kind, "groups": k, "world": w, **pair_scores(board, truth)})
    return pd.DataFrame(rows)


WMT20_OUT, WMT20_INTO = "WMT20 raw DA, 7 out of English", "WMT20 raw DA, 6 into English"


def wmt20_tables(metrics: dict[str, str], root: str | os.PathLike | None = None) -> dict[str, pd.DataFrame]:
    """WMT20 raw DA, MT systems only, one row per judged segment (``lp, system, seg_id, doc_id, human`` and one
    column per metric: ``metrics`` maps our name to the organisers' column, NaN where they have no score), for
    the 7 pairs out of English (source-based DA) and the 6 to-English pairs judged against the reference.
    ``root``: the shared data (default ``$XLEVAL_DATA``)."""
    root = Path(root or os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    seg = pd.read_parquet(root / "wmt20-metrics" / "segments.parquet",
                          columns=["lp", "system", "seg_id", "doc_id", "is_human", "human_da_raw", *metrics.values()])
    seg = seg[~seg["is_human"].astype(bool) & seg["human_da_raw"].notna()]
    seg = seg.rename(columns={"human_da_raw": "human", **{v: k for k, v in metrics.items()}})
    keep = ["lp", "system", "seg_id", "doc_id", "human", *metrics]
    into = seg["lp"].isin(["cs-en", "de-en", "ja-en", "pl-en", "ru-en", "ta-en"])
    return {WMT20_OUT: seg.loc[seg["lp"].str.startswith("en-"), keep].reset_index(drop=True),
            WMT20_INTO: seg.loc[into, keep].reset_index(drop=True)}


def load_wmt20() -> dict[str, pd.DataFrame]:
    """WMT20 raw DA with the organisers' segment chrF (``chrf``), the rows that have it."""
    return {name: frame.dropna(subset=["chrf"]).reset_index(drop=True)
            for name, frame in wmt20_tables({"chrf": "metric:chrF"}).items()}


def verdict_boards(labelled: pd.DataFrame, higher: bool, n_resamples: int, seed: int) -> dict:
    """The leaderboard as it is (``leaderboard``: anchored, the default prior) and with each pair's own offset
    (``own offsets``: a saved ``AnchoredCalibrator(prior="common", shrinkage="none")``, the mean label residual
    of the pair, unshrunk), from the same labels and seed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resampling = Resampling(n_resamples=n_resamples, random_state=seed)
        boards = {"leaderboard": leaderboard(labelled, "score", "lp", human="human", method="anchored",
                                             resampling=resampling, human_scale=HumanScale(higher_is_better=higher))}
        own = AnchoredCalibrator(by="lp", score="score", human="human", prior="common", shrinkage="none",
                                 human_higher_is_better=higher).fit(labelled, strict=False)
        boards["own offsets"] = leaderboard(labelled, "score", "lp", human="human", model=own,
                                            reading=ScoreReading(force=True), resampling=resampling)
    return boards


def wmt21_study(draws: int, budgets=(25, 50, 100), n_resamples: int = 200,
                pair_budgets=(100,)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Accuracy of every estimator per WMT21 (and WMT20) scale and K in ``budgets``, and the pairs at each K in
    ``pair_budgets`` (``examples/interval_coverage`` loads the WMT21 sets)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from interval_coverage import load_sets

    acc_rows, pair_rows = [], []
    for name, frame in {**load_sets(), **load_wmt20()}.items():
        higher = not name.startswith("MQM")
        truth = frame.groupby(["lp", "system"])["human"].mean()
        scored = frame.rename(columns={"chrf": "score"})
        line = true_line(scored)
        for budget in sorted(set(budgets) | set(pair_budgets)):
            for d in range(draws):
                labelled = scored.assign(human=label(scored, budget, np.random.default_rng([d, budget])))
                if budget in budgets:
                    acc = {n: cross_accuracy(p if higher or n in ("raw", "lgn") else -p, truth if higher else -truth)
                           for n, p in estimates(labelled, higher).items()}
                    acc_rows.append({"scale": name, "K": budget, "draw": d, **acc})
                if budget in pair_budgets:
                    for procedure, board in verdict_boards(labelled, higher, n_resamples, d).items():
                        pair_rows.append({"scale": name, "K": budget, "procedure": procedure, "draw": d,
                                          **pair_scores(board, truth)})
                    pair_rows.append({"scale": name, "K": budget, "procedure": "plain", "draw": d,
                                      **plain_pairs(labelled, truth, higher)})
                    pair_rows.append({"scale": name, "K": budget, "procedure": "oracle", "draw": d,
                                      **plain_pairs(labelled, truth, higher, line=line)})
    return pd.DataFrame(acc_rows), pd.DataFrame(pair_rows)


def deviation_study(draws: int, k: int = 100) -> pd.DataFrame:
    """Per WMT21/WMT20 set: the cells' deviation variance from the common line as every judged segment gives it,
    and over ``draws`` label draws at K = ``k``: its method-of-moments estimate (mean and sd over the draws), the
    estimate's stated standard error (mean), and the posterior mean the leaderboard's draws use (mean, min, max).
    Where the estimate's standard error is several times the true variance, that posterior mean is the labels'
    best guess and lands above small true values: the intervals then cover more than they say."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from interval_coverage import load_sets

    rows = []
    for name, frame in {**load_sets(), **load_wmt20()}.items():
        scored = frame.rename(columns={"chrf": "score", "human": "gold"})
        scale = "mqm" if name.startswith("MQM") else "z" if "z" in name.split() else "da"
        every = drawn_board(scored, "gold", 10**9, 0, scale, n_resamples=20).uncertainty
        got = pd.DataFrame([drawn_board(scored, "gold", k, d, scale, n_resamples=20).uncertainty for d in range(draws)])
        rows.append({"scale": name, "every label": every["deviation_estimate"],
                     "estimate: mean": got["deviation_estimate"].mean(), "sd": got["deviation_estimate"].std(),
                     "stated se: mean": got["deviation_se"].mean(), "posterior mean used": got["deviation_var"].mean(),
                     "min": got["deviation_var"].min(), "max": got["deviation_var"].max(),
                     "within-cell variance": got["within_var"].mean()})
    return pd.DataFrame(rows)


WORST = "mean (worst: min; for the shares wrong, max)"


def _table(frame: pd.DataFrame, keys: list[str], columns: tuple[str, ...]) -> str:
    """Mean (worst) per row of ``keys``: the worst of a share wrong is its largest value, of anything else its
    smallest."""
    grouped = frame.groupby(keys, sort=False)[list(columns)]
    means, low, high = grouped.mean(), grouped.min(), grouped.max()
    worst = {c: (high if c.startswith("wrong") else low)[c] for c in columns}
    head = "| " + " | ".join(keys) + " | " + " | ".join(
        f"{c} ({'max' if c.startswith('wrong') else 'min'})" for c in columns) + " |"
    lines = [head, "|" + "---|" * len(keys) + "---:|" * len(columns)]
    for key, row in means.iterrows():
        cells = [f"{row[c]:.3f} ({worst[c].loc[key]:.2f})" for c in columns]
        shown = key if isinstance(key, tuple) else (key,)
        lines.append("| " + " | ".join(map(str, shown)) + " | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def headline(acc: pd.DataFrame) -> dict[str, float]:
    """The numbers the test checks: per kind, mixed minus the better of LGN and anchored (mean over worlds,
    groups and K), and mixed minus the worse of them in the half-right worlds."""
    out = {}
    for kind, sel in acc.groupby("kind"):
        best = sel[["lgn", "anchored"]].mean().max()
        out[f"{kind}: mixed - best of lgn/anchored"] = float(sel["mixed"].mean() - best)
    return out


def simulation(worlds: int, groups: tuple[int, ...] = (2, 4, 7)) -> None:
    acc = accuracy_study(worlds, groups=groups, kinds=KINDS + BEYOND)
    print(f"## Simulation: cross-group accuracy, mean (min) over {worlds} worlds per row\n")
    print(_table(acc, ["kind", "groups", "K"], ESTIMATORS))
    print(f"\nBy kind (groups {', '.join(map(str, groups))}, all K):\n")
    print(_table(acc, ["kind"], ESTIMATORS))
    for key, value in headline(acc).items():
        print(f"- {key}: {value:+.3f}")
    if groups != (2, 4, 7):
        return
    pairs = pairs_study(max(2, worlds // 2))
    print(f"\n## Simulation: pairwise verdicts at K = 100 (95%), {WORST} over {max(2, worlds // 2)} worlds\n")
    print(_table(pairs, ["kind", "groups"], ("cover cell", "cover across", "cover within", "declared across",
                                             "wrong across", "declared within", "wrong within")))
    told = pairs["n told across"].sum()
    print(f"\npooled: cell coverage {pairs['cover cell'].mean():.3f}, cross-group {pairs['cover across'].mean():.3f}, "
          f"within {pairs['cover within'].mean():.3f}; cross-group verdicts wrong {pairs['n wrong across'].sum()} "
          f"of {told}")


def real_sets(draws: int, pair_budgets: tuple[int, ...], n_resamples: int = 200) -> None:
    wacc, wpairs = wmt21_study(draws, n_resamples=n_resamples, pair_budgets=pair_budgets)
    print(f"\n## WMT21 and WMT20: cross-pair accuracy, mean (min) over {draws} label draws\n")
    print(_table(wacc, ["scale", "K"], ESTIMATORS))
    print(f"\n## WMT21 and WMT20: pairwise verdicts (95%), {WORST} over {draws} draws\n")
    keys = ["scale", "K", "procedure"]
    print(_table(wpairs, keys, ("cover cell", "cover across", "cover within", "declared across", "wrong across",
                                "declared within", "wrong within")))
    print("\nThe cross-pair differences: their spread relative to the true ones (sd ratio), their rms error and "
          "the rms sd their intervals imply (half-width / 1.96), mean (min) over draws:\n")
    print(_table(wpairs, keys, ("spread across", "rms error across", "rms sd across")))
    pooled = wpairs.groupby(keys, sort=False)[["n wrong across", "n told across"]].sum()
    print("\ncross-pair verdicts wrong, pooled over draws (leaderboard; plain = issue 33's plain procedure):")
    for (scale, k, procedure), row in pooled.iterrows():
        told = int(row["n told across"])
        print(f"- {scale}, K = {k}, {procedure}: {int(row['n wrong across'])} of {told}"
              + (f" ({row['n wrong across'] / told:.1%})" if told else ""))


def prior_on_the_variance() -> None:
    """Replace, in this process, the flat prior on the deviation sd of the leaderboard's joint draws by a flat
    prior on its variance (posterior: the estimate's normal truncated at 0), the default before this release that
    docs/calibration.md compares (``--deviation-prior variance``). An experiment, not an option of xleval."""
    from xleval.calibration import _cell_interval

    def mean(estimate: float, se: float) -> float:
        if not se > 0:
            return max(estimate, 0.0)
        return float(sps.truncnorm.mean(-estimate / se, np.inf, loc=estimate, scale=se))

    def draws(estimate: float, se: float, n: int, rng: np.random.Generator) -> np.ndarray:
        if not se > 0:
            return np.full(n, max(estimate, 0.0))
        return sps.truncnorm.rvs(-estimate / se, np.inf, loc=estimate, scale=se, size=n, random_state=rng)

    _cell_interval._posterior_mean, _cell_interval._posterior_draws = mean, draws


def flat_prior_on_tau() -> None:
    """Replace, in this process, the half-Cauchy prior on the offsets' spread ``tau`` of the mixed model by the
    flat prior before this release (``--tau-prior flat``; docs/calibration.md compares the two). An experiment,
    not an option of xleval."""
    from xleval.calibration import _anchored

    _anchored.mixed_offsets = functools.partial(mixed_offsets, tau_prior="flat")


def mixed_with_two_groups() -> None:
    """Use, in this process, the mixed prior's pull with 2 groups too, as before this release (each of two groups
    now keeps its own offset; ``--mixed-with-two-groups``, docs/calibration.md compares the two). An experiment,
    not an option of xleval."""
    from xleval.calibration import _pooling

    _pooling.MIN_GROUPS_MIXED = 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 worlds per cell, 3 WMT21 draws")
    parser.add_argument("--worlds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--no-wmt", action="store_true", help="simulation only")
    parser.add_argument("--wmt-only", action="store_true", help="the real sets only")
    parser.add_argument("--pairs-k", type=int, nargs="+", default=[100],
                        help="labels per pair (K) of the pairwise study on the real sets (default 100)")
    parser.add_argument("--deviation-prior", choices=["sd", "variance"], default="sd",
                        help="prior of the deviation variance in the leaderboard's draws: flat on the sd "
                             "(xleval's) or flat on the variance (the former default docs/calibration.md measures)")
    parser.add_argument("--tau-prior", choices=["half-cauchy", "flat"], default="half-cauchy",
                        help="prior of the offsets' spread tau in the mixed model (4 groups or more): half-Cauchy "
                             "(xleval's) or flat (the former default docs/calibration.md measures)")
    parser.add_argument("--groups", type=int, nargs="+", default=[2, 4, 7],
                        help="group counts of the simulated worlds' accuracy study (the pairwise study runs only with "
                             "the default 2 4 7)")
    parser.add_argument("--n-resamples", type=int, default=200,
                        help="resamples of the leaderboards on the real sets (200; the leaderboard's default is 1000)")
    parser.add_argument("--deviation-study", type=int, metavar="DRAWS", default=0,
                        help="only the cells' deviation variance at K = 100 on the real sets, over DRAWS draws")
    parser.add_argument("--mixed-with-two-groups", action="store_true",
                        help="pull two groups' offsets toward the mixed centre as 3 or more are (the former default "
                             "docs/calibration.md measures)")
    args = parser.parse_args(argv)
    if args.mixed_with_two_groups:
        mixed_with_two_groups()
    if args.deviation_prior == "variance":
        prior_on_the_variance()
    if args.tau_prior == "flat":
        flat_prior_on_tau()
    worlds, draws = (4, 3) if args.quick else (args.worlds, args.draws)
    start = time.perf_counter()
    if args.deviation_study:
        print(f"## The cells' deviation variance: every label, and at K = 100 over {args.deviation_study} draws\n")
        study = deviation_study(args.deviation_study)
        print("| " + " | ".join(study.columns) + " |\n|---|" + "---:|" * (len(study.columns) - 1))
        for _, row in study.iterrows():
            print(f"| {row.iloc[0]} | " + " | ".join(f"{v:.3g}" for v in row.iloc[1:]) + " |")
        print(f"\n({time.perf_counter() - start:.0f} s)")
        return 0
    if not args.wmt_only:
        simulation(worlds, tuple(args.groups))
    if not args.no_wmt:
        real_sets(draws, tuple(args.pairs_k), args.n_resamples)
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
