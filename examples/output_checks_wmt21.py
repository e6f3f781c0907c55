"""Output checks on WMT21 newstest2021: the rates of each flag per language pair, and the recovery of
constructed failures, with how chrF and BLEU react to them (the figures of docs/output-checks.md).

1. Every system of every pair: the share of rows each flag marks, with its Wilson 95% interval.
2. Constructed failures: in one system per pair (the first by name), a seeded share of the outputs is
   replaced by the source (``--copy``, default 10%) and another by a fixed sentence in the wrong language
   (``--wrong``, default 5%: English, or German for the pairs into English). The table gives the planted
   share, the flag's rate before and after, the share of planted rows flagged (sensitivity), and for chrF and
   BLEU (xleval's, sacrebleu-exact; BLEU with effective order, tokenizer zh/ja-mecab where sacrebleu uses them)
   the mean on the flagged and unflagged rows and the corpus score of the system before and after.

    python examples/output_checks_wmt21.py [--data ../shared/data] [--pairs en-de en-ha ...] [--seed 27]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
from pathlib import Path

import numpy as np
import pandas as pd

from xleval.metrics import BLEU, CHRF
from xleval.output_checks import FLAGS, check_outputs, flag_outputs

WRONG = {"en": "The committee said on Tuesday that it would publish its findings early next year.",
         "de": "Der Ausschuss sagte am Dienstag, er werde seine Ergebnisse Anfang nächsten Jahres veröffentlichen."}


def _bleu(lp: str) -> BLEU:
    tgt = lp.split("-")[1]
    tokenize = "zh" if tgt == "zh" else "ja-mecab" if tgt == "ja" and importlib.util.find_spec("MeCab") else "13a"
    return BLEU(tokenize=tokenize, effective_order=True)


def rates(seg: pd.DataFrame) -> None:
    result = check_outputs(seg, by="lp", system="system")
    g = result.group_rates
    table = g.assign(cell=[f"{100 * r:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"
                           for r, lo, hi in zip(g["rate"], g["ci_low"], g["ci_high"], strict=True)])
    wide = table.pivot(index="lp", columns="flag", values="cell")[[f for f in FLAGS if f in result.checked]]
    print("## Share of rows flagged per pair, all systems (%, Wilson 95% interval)\n")
    print("| lp | " + " | ".join(wide.columns) + " |")
    print("|---|" + "---|" * len(wide.columns))
    for lp, row in wide.iterrows():
        print(f"| {lp} | " + " | ".join(row) + " |")
    print("\n" + "; ".join(result.notes) + "\n")


def constructed(seg: pd.DataFrame, lp: str, p_copy: float, p_wrong: float, seed: int) -> list[dict]:
    rows = seg[seg["lp"] == lp]
    system = sorted(rows["system"].unique())[0]
    rows = rows[rows["system"] == system].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    n_copy, n_wrong = round(p_copy * len(rows)), round(p_wrong * len(rows))
    copy = np.zeros(len(rows), bool)
    wrong = np.zeros(len(rows), bool)
    copy[order[:n_copy]] = True
    wrong[order[n_copy:n_copy + n_wrong]] = True
    sentence = WRONG["de" if lp.endswith("-en") else "en"]
    broken = rows.assign(hypothesis=rows["hypothesis"].where(~copy, rows["source"]).where(~wrong, sentence))
    before, _, _, _ = flag_outputs(rows)
    chrf, bleu = CHRF(), _bleu(lp)
    for name, metric in (("chrf", chrf), ("bleu", bleu)):
        broken[name] = metric.sentence_scores(broken["hypothesis"].tolist(), [broken["reference"].tolist()])
    after = check_outputs(broken, metrics=["chrf", "bleu"])
    out = []
    # a copied source is in the wrong language too (the source language), so both plantings are off-target
    for flag, planted in (("copy_source", copy), ("off_target", copy | wrong)):
        checked = after.flags["langid_checked"].to_numpy() if flag == "off_target" else np.ones(len(rows), bool)
        base_checked = before["langid_checked"].to_numpy() if flag == "off_target" else np.ones(len(rows), bool)
        flagged = after.flags[flag].to_numpy()
        effects = after.effects.query(f"flag == '{flag}'").set_index("metric")
        row = {"lp": lp, "system": system, "flag": flag,
               "planted %": 100 * planted[checked].mean(),
               "rate before %": 100 * before[flag].to_numpy()[base_checked].mean(),
               "rate after %": 100 * flagged[checked].mean(),
               "planted flagged %": 100 * flagged[planted & checked].mean()}
        for metric in ("chrf", "bleu"):
            e = effects.loc[metric]
            row[f"{metric} flagged / unflagged"] = f"{e['mean_flagged']:.1f} / {e['mean_unflagged']:.1f}"
        out.append(row)
    hyps_before, hyps_after = rows["hypothesis"].tolist(), broken["hypothesis"].tolist()
    refs = [rows["reference"].tolist()]
    for r in out:
        r["corpus chrF before -> after"] = (f"{chrf.corpus_score(hyps_before, refs).score:.1f} -> "
                                            f"{chrf.corpus_score(hyps_after, refs).score:.1f}")
        r["corpus BLEU before -> after"] = (f"{bleu.corpus_score(hyps_before, refs).score:.1f} -> "
                                            f"{bleu.corpus_score(hyps_after, refs).score:.1f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("XLEVAL_DATA", "../shared/data")))
    parser.add_argument("--pairs", nargs="*", default=["en-de", "en-ha", "en-ja", "en-zh", "de-en", "ha-en", "zh-en"])
    parser.add_argument("--copy", type=float, default=0.10)
    parser.add_argument("--wrong", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--skip-rates", action="store_true")
    args = parser.parse_args()
    seg = pd.read_parquet(args.data / "wmt21" / "segments.parquet")
    if not args.skip_rates:
        rates(seg)
    rows = [r for lp in args.pairs for r in constructed(seg, lp, args.copy, args.wrong, args.seed)]
    table = pd.DataFrame(rows)
    print(f"## Constructed failures: {100 * args.copy:g}% copies of the source, {100 * args.wrong:g}% wrong-language "
          f"sentence (seed {args.seed})\n")
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for r in table.to_dict(orient="records"):
        print("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in r.values()) + " |")


if __name__ == "__main__":
    main()
