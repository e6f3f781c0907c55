"""WMT20 metrics task: which metric, calibrated how, to trust within and across language pairs. A thin
user of ``xleval meta``: it writes the input tables (rows of the shared data, filtered), runs the command
with ``--format json``, and turns the JSON into the tables of docs/meta-evaluation.md.

    python examples/meta_wmt20.py [--data ../shared/data] [--tables /tmp/meta-wmt20] [--write docs/meta-evaluation.md]

Data (../shared/data/wmt20-metrics/README.md): 16 pairs, DA raw (0-100) and DA z per segment, segment
scores of 10 metrics with reference A. Human translations (``Human-*``) are left out, as WMT does.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

from xleval.cli import main as xleval

SEGMENT_METRICS = ["chrF", "TER", "YiSi-2", "parbleu", "parchrf++", "SWSS+METEOR", "BAQ_dyn", "BAQ_static", "EQ_dyn",
                   "EQ_static"]
CROSS_METRICS = ["chrF", "TER", "YiSi-2", "parbleu"]  # scored in every pair
#: the DA protocol of each pair (data README): source-based where the reference (Human-A) was judged
SOURCE_BASED = ["en-cs", "en-iu", "en-ja", "en-pl", "en-ru", "en-ta", "en-zh", "iu-en", "km-en", "ps-en"]
REFERENCE_BASED = ["cs-en", "de-en", "ja-en", "pl-en", "ru-en", "ta-en"]
CLUSTER_RESAMPLES = 200

PRESETS_AND_DIFFERENCES = [
    "## Presets: which WMT year each reproduces", "",
    "| preset | reproduces | tasks and weights |", "|---|---|---|",
    "| `--darr RAW` | WMT20 (segment level) | the organisers' DARR Kendall-like tau: same-segment pairs whose raw DA "
    "differs by 25 or more, metric ties discordant; equal to the published taus (tests/test_meta_wmt20.py) |",
    "| `--task wmt23` | WMT23, mt-metrics-eval `tasks.WMT23` | system-level pairwise accuracy over all pairs (weight: "
    "the number of pairs), then per pair system-level Pearson, segment-level Pearson (not averaged) and acc-t "
    "(weight 1 each), normalised |",
    "| `--task wmt24` | WMT24, `tasks.WMT24` | per pair system-level SPA and segment-level acc-t (averaged by item, "
    "`pairs` test), equal weights |",
    "| `--task wmt25` | WMT25, `tasks.WMT25` | the same statistics on WMT25's 16 pairs (`en-sr_Cyrl_RS`-style codes "
    "read as written), equal weights (1/32 each); the gold is MQM for en-ko_KR and ja-zh_CN and ESA (`esa-human1`) "
    "for the others: one human column with a `<human>_scale` column (as `xleval ingest gold` writes it) |",
    "| `--task FILE.json` | mt-metrics-eval's `TaskSet` of `Task`s | a JSON list of `{\"lang\", \"level\", "
    "\"statistic\", \"weight\"}` (`xleval.stats.read_tasks`); weights normalised to sum 1 |", "",
    "Every preset ranks over the pairs of the table (tasks of pairs it lacks are left out, with a note, and the "
    "others' weights renormalised).", "",
    "## Where xleval deliberately differs from mt-metrics-eval", "",
    "* **Equal to the last digit** (tests/test_meta_mtme_oracle.py, tests/test_meta_mtme_wmt20.py): system-level "
    "Pearson, Spearman, Kendall and pairwise accuracy; segment-level Pearson and Kendall with `--average-by "
    "none|item|system` (items or systems where the metric's or the human's scores are constant are left out of "
    "the average, as mt-metrics-eval leaves them out, and counted in each cell's `left_out`; on WMT20 all 218 "
    "item-averaged Pearson cells equal mt-metrics-eval's to 1e-12); acc-t; SPA (the same float32 sign "
    "permutations, seed 4); PDP (`Pearson(pdp=True)`).",
    "* **Resampling is seeded.** mt-metrics-eval draws its significance tests from numpy's global, unseeded "
    "generator; xleval's draws come from `--seed`, so p-values agree with its runs within Monte-Carlo error "
    "(about 0.02 at 1,000 resamples), not to the digit, and a run is reproducible.",
    "* **Ties in p-values.** A resampled difference equal to the observed one counts as at least as large "
    "(`--cluster-ties count`, the default: the permutation test's own rule, a tolerance of 1e-12). "
    "mt-metrics-eval compares in floating point, so an exact tie counts only when its rounding lands at or above "
    "the observed difference; `--cluster-ties mtme` does the same and, given the same draws, gives its p-values "
    "to the digit (tests/test_stats_cluster_ties.py). Its p-values can be lower (issue 36: with identical draws, "
    "20 of 105 WMT20 system-accuracy p-values were, by up to 0.048).",
    "* **No early stopping in `meta`.** mt-metrics-eval's tasks stop a test early (blocks of 100 resamples, p "
    "below 0.02 or above 0.5); `meta` runs every resample (`xleval.stats.metric_clusters(early_stopping=...)` "
    "offers the rule). WMT25's `tasks.WMT25()` defaults to k=0 (no test: ranks follow the statistic); `meta` "
    "always tests, with `--cluster-resamples`.",
    "* **Segment order.** SPA's sign permutations are drawn per segment; xleval takes segments in their id order "
    "(numbers by value), mt-metrics-eval in its data's order (the same for WMT data); its `tasks.py` also depends "
    "on `PYTHONHASHSEED` through a set, which xleval does not copy.",
    "* **Metrics with missing scores.** mt-metrics-eval evaluates only metrics that score every system and "
    "segment of a task; xleval evaluates each metric on its own rows (above) and says so.",
    "* **Additions** with no mt-metrics-eval counterpart: CIs (systems resampled within pairs; PDP and span F1: "
    "segments resampled), chance baselines, cross-pair accuracy, the human ceiling, span F1 and segment detection "
    "(below).", "",
    "## The human ceiling, spans and segment detection", "",
    "* **`--ceiling COL`**: a second human column (another rater, or WMT25's human2 scores) is scored against "
    "`--human` with every statistic, as one more column of every table, and every value gets `relative` (its "
    "value over the ceiling's in the same pair and statistic; a text table gives their means), as a 2026 study "
    "recommends reporting metric agreement against human agreement.",
    "* **`--gold-spans FILE --predicted-spans NAME=FILE`** (rows: the table's pair, system and segment columns, "
    "`severity`, `start`, `end`): WMT25 task 2's character-level F1 (critical counts as major; a character "
    "marked with the wrong severity earns `--span-mismatch`, 0.5) and the partial-overlap, partial-credit span "
    "F1 micro-averaged over the pair, each with precision, recall and a CI from segments resampled. These follow "
    "the task descriptions; they are checked by hand (tests/test_meta_spans.py), not against the organisers' "
    "scripts.",
    "* **`--error-free T`** (WMT26 task 3: gold 1 when the human score is at least T, 85 for ESA, and the gold has "
    "no span) and **`--critical T`** (WMT25's criticality analysis: gold 1 below T, 10 for ESA): each metric's F1 "
    "at its best threshold, with precision, recall and the threshold. The threshold is chosen on the same data, "
    "so the F1 is optimistic (the organisers' caveat, printed as a note).", "",
    '* **`--judges A,B|auto|none`** (default `auto`): the agreement of two or more judges (or a judge and a '
    'metric) per group — Kendall, Pearson, kappa on binned scores, pairwise system-order agreement, both means — '
    'after the meta-evaluation, in every format (TSV: statistics `judges_*`, metric `A~B`; JSON: `judges`). '
    "`auto` takes the table's judge columns (their signature says judge) when there are two or more. Without "
    '`--human`, `xleval meta TABLE` prints only this (a table of judge scores without human scores, e.g. `xleval '
    'meta wmt25.parquet` on the ingested WMT25 scores). docs/judges.md has the worked example.', "",
]


def run(args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "meta.json"
        command = ["meta", *args, "--format", "json", "-o", str(out)]
        print("xleval " + " ".join(command[:-2]), file=sys.stderr)
        rc = xleval(command)
        if rc != 0:
            raise SystemExit(f"xleval meta exited with {rc}")
        return json.loads(out.read_text())


def fmt(x, digits=3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def per_pair_table(res: dict, statistic: str, metrics: list[str]) -> list[str]:
    cells = {(c["group"], c["metric"]): c for c in res["cells"] if c["statistic"] == statistic}
    groups = sorted({g for g, _ in cells})
    lines = ["| pair | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
    for g in groups:
        row = []
        for m in metrics:
            c = cells.get((g, f"metric:{m}"))
            row.append("–" if c is None else fmt(c["value"]) + (f" ({c['rank']})" if c.get("rank") else ""))
        lines.append(f"| {g} | " + " | ".join(row) + " |")
    return lines


def cross_table(res: dict) -> list[str]:
    cal = res["calibrated"]
    lines = ["| metric | calibration | cross-pair accuracy, out of fold | 95% CI | system Pearson |",
             "|---|---|---:|---|---:|"]
    for v in cal["variants"]:
        a = v["accuracy"]
        lines.append(f"| {v['metric'].removeprefix('metric:')} | {v['calibration']} | {fmt(a['estimate'])} | "
                     f"{fmt(a['ci_low'])} to {fmt(a['ci_high'])} | {fmt(v['pearson']['estimate'])} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA", "../shared/data"))
    parser.add_argument("--tables", help="keep the input tables here (the commands quoted in the doc read them)")
    parser.add_argument("--write", help="write the markdown here (default: stdout)")
    a = parser.parse_args()
    seg = pd.read_parquet(Path(a.data) / "wmt20-metrics" / "segments.parquet")
    seg = seg[~seg["is_human"]]
    cols = ["lp", "system", "seg_id", "human_da_raw", "human_da_z", *[f"metric:{m}" for m in SEGMENT_METRICS]]
    folder = Path(a.tables or tempfile.mkdtemp(prefix="meta-wmt20-"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"all": folder / "wmt20_mt.parquet", "src": folder / "wmt20_source_based.parquet",
             "ref": folder / "wmt20_reference_based.parquet"}
    seg[cols].to_parquet(paths["all"])
    seg[seg["lp"].isin(SOURCE_BASED)][cols].to_parquet(paths["src"])
    seg[seg["lp"].isin(REFERENCE_BASED)][cols].to_parquet(paths["ref"])

    main_args = [str(paths["all"]), "--metrics-prefix", "metric:", "--human", "human_da_z", "--human-scale", "da_z",
                 "--system-scores", "judged", "--darr", "human_da_raw", "--clusters", "spa,seg_acc_t",
                 "--cluster-resamples", str(CLUSTER_RESAMPLES), "--chance"]
    wmt = run(main_args)
    cross = {}
    for key, label in (("ref", "reference-based"), ("src", "source-based")):
        cross[label] = run([str(paths[key]), "--metrics", ",".join(f"metric:{m}" for m in CROSS_METRICS),
                            "--human", "human_da_raw", "--human-scale", "raw", "--system-scores", "judged",
                            "--no-spa", "--calibrations", "raw,lgn,anchored@100"])
    text = render(wmt, cross, main_args)
    if a.write:
        Path(a.write).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def render(wmt: dict, cross: dict, main_args: list[str]) -> str:
    metrics = [m for m in SEGMENT_METRICS if any(c["metric"] == f"metric:{m}" for c in wmt["cells"])]
    out = ["# Meta-evaluation: which metric, calibrated how, to trust within and across language pairs", "",
           "Generated by `examples/meta_wmt20.py` (a thin user of `xleval meta`); do not edit by hand.", "",
           "`xleval meta TABLE --metrics A,B (or --metrics-prefix metric:) --human COL --by lp` computes, for every "
           "language pair and metric, the statistics of the WMT metrics tasks: system-level Pearson, Spearman, "
           "Kendall, pairwise accuracy and soft pairwise accuracy (SPA, Thompson et al. 2024, the WMT24 official "
           "system-level statistic; p-values of mt-metrics-eval's `pce.py`: 1,000 permutations, seed 4); "
           "segment-level Pearson/Kendall (`--average-by none|item|system`), acc-t (acc23 with tie calibration "
           "averaged by item, Deutsch et al. 2023, as WMT23/24) and, with `--darr RAW`, WMT20's DARR Kendall-like "
           "tau; across pairs, WMT23's global accuracy (system pairs inside each pair, pooled) and xleval's "
           "cross-pair accuracy (system pairs from different pairs on one human scale), with CIs from systems "
           "resampled within pairs; segment-level PDP (Pairwise Difference Pearson, on by default). `--clusters`, "
           "`--task wmt23|wmt24|wmt25|FILE.json` and `--chance` add significance clusters (mt-metrics-eval's "
           "PERM-BOTH and pairs tests), the tasks' weighted ranking and chance baselines; `--ceiling COL` the human "
           "ceiling; `--gold-spans`/`--predicted-spans` span-level F1; `--error-free T`/`--critical T` segment "
           "detection (sections below). "
           "`--calibrations raw,lgn,anchored@100` evaluates every metric raw and calibrated out of system folds "
           "(the engine of `xleval calibrate evaluate`) and answers which metric with which calibration to trust. "
           "In Python, `xleval.meta.meta_evaluate(table, metrics, human, by=, system=, segment=, exclude=, "
           "lower_is_better=, statistics=, resampling=, clustering=, spans=)` takes the same options as four values "
           "(`--clusters` is `Clustering.statistics`, `--gold-spans` is `Spans.gold`, and so on): "
           "`MetaStatistics(average_by, system_scores, human_scale, spa, spa_permutations, pdp, darr, "
           "darr_threshold, ceiling, chance)`, `Clustering(statistics, task, n_resamples, alpha, ties)`, "
           "`Spans(gold, predicted, mismatch, error_free, critical)` and "
           "`xleval.stats.Resampling(n_resamples, level, random_state)`.",
           "", "## Rules the numbers rest on", "",
           "* **System scores.** SPA needs a complete systems x segments matrix: it uses the segments judged for "
           "every system of the pair (a warning gives the counts). `--system-scores complete` (the default) makes "
           "every system score the mean over those segments; here `--system-scores judged` is used, the mean over "
           "each system's judged segments, which is WMT20's official DA system score (no segment of en-ta or ta-en "
           "is judged for all of their systems, so they have no SPA). A system-level table is used as it is.",
           "* **Human scale.** The WMT20 tables below use DA z (the official WMT20 scale), compared within each "
           "pair; z is standardised per annotator, not an absolute scale across pairs. The cross-pair tables use "
           "raw DA (0-100) and only compare pairs assessed with one protocol: reference-based DA (cs, de, ja, pl, "
           "ru, ta into English) and source-based DA (every pair out of English, and iu, km, ps into English), "
           "never one with the other (data README, 'Protocol').",
           "* **Human translations** (`Human-*`) are left out, as in WMT's tables.",
           "* **Direction.** A metric whose lower scores are better (TER by its name, MetricX by its signature's "
           "`dir:lower`, or `--lower-is-better COL`) is negated first, so every statistic reads higher as agreeing "
           "with the humans, as in WMT's tables; the WMT20 columns here are already oriented that way. A metric the "
           "table lacks (`bleu`, `chrf`, `chrf++`, `ter`) is scored from its texts first.",
           "* **Each metric on its own rows.** A metric's statistics use the rows it scored (and, for SPA and "
           "`--system-scores complete`, the segments it scored for every system of the pair, with the human "
           "scores of those same segments): listing another metric with missing scores never changes them. "
           "Significance clusters compare metrics on the rows all of them scored (a note says when that is fewer).",
           "* **Row order.** Rows are put in one order (pair, system, segment; integer segment ids by value) before "
           "anything is computed, so no statistic, resample or permutation depends on the order of the table.",
           "* **Segments and pairs.** A segment is its `seg_id` within the pair and system; where `seg_id` repeats "
           "across documents but not within one (segments numbered within documents, as in WMT25's files), it is "
           "its (`doc_id`, `seg_id`), with a note. `--by lp` on a table without an `lp` column takes the pair from "
           "`src_lang` and `tgt_lang`; the default grouping by `tgt_lang` warns when it pools pairs of one target.",
           "* **Numbers.** Score columns are read with the readers' one number parser (empty and NA cells are "
           "missing); an infinite metric or human score is refused with its row (E333), never read as missing.",
           "", *PRESETS_AND_DIFFERENCES,
           "## WMT20, every pair and every metric with segment scores", "",
           "Command: `xleval " + " ".join(["meta", "wmt20_mt.parquet", *main_args[1:]]) + "`.", "",
           f"In brackets: the metric's significance cluster in its pair (1 = best; {CLUSTER_RESAMPLES} "
           "permutations; SPA by PERM-BOTH on segment scores, acc-t by the pairs test). Chance baselines are in "
           "the JSON output (`--chance`, field `chance` of each cell).", ""]
    for stat, title in (("darr_tau", "Segment level: WMT20 DARR Kendall-like tau (published statistic)"),
                        ("seg_acc_t", "Segment level: acc-t"),
                        ("spa", "System level: SPA"),
                        ("sys_pearson", "System level: Pearson (DA z, system means)"),
                        ("sys_accuracy", "System level: pairwise accuracy")):
        out += [f"### {title}", "", *per_pair_table(wmt, stat, metrics), ""]
    out += ["The DARR taus reproduce the organisers' published values (chrF: data README; every metric: "
            "`darr_agree.parquet`), tested in tests/test_meta_wmt20.py.", "",
            "### Across pairs (DA z)", "", "| metric | global accuracy | 95% CI | chance |", "|---|---:|---|---:|"]
    for m, c in wmt["global_accuracy"].items():
        out.append(f"| {m.removeprefix('metric:')} | {fmt(c['value'])} | {fmt(c['ci_low'])} to {fmt(c['ci_high'])} | "
                   f"{fmt(c.get('chance'))} |")
    out += ["", "Cross-pair accuracy is left out of this table on purpose: DA z is not a scale shared by the pairs.",
            "", "## Across pairs: raw, LGN and anchored@100 (raw DA, one protocol at a time)", ""]
    for label, res in cross.items():
        pairs = sorted({c["group"] for c in res["cells"]})
        out += [f"### {label.capitalize()} DA: {', '.join(pairs)}", "",
                f"Command: `xleval meta wmt20_{label.replace('-', '_')}.parquet --metrics "
                f"{','.join('metric:' + m for m in CROSS_METRICS)} --human human_da_raw --human-scale raw "
                "--system-scores judged --no-spa --calibrations raw,lgn,anchored@100`.", "",
                *cross_table(res), "", f"**Answer:** {res['calibrated']['answer']}.", ""]
    out += ["Out of fold: systems are split into folds; each calibration is fitted on the other folds' systems "
            "(anchored@100: 100 random labelled segments per pair) and scores the held-out systems "
            "(docs/calibration.md)."
            " The answer is made by the decision code of `calibrate evaluate` (each metric's calibration), and among "
            "metrics by `xleval.decision.decide_across_metrics` (the metric whose chosen calibration orders "
            "held-out cross-pair system pairs best).", ""]
    return "\n".join(out)


if __name__ == "__main__":
    main()
