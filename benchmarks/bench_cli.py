"""Whole-process cost of ``xleval score`` against sacrebleu, each run as a separate process.

    .venv/bin/python benchmarks/bench_cli.py [--rows 40000] [--seed 0] [--repeat 3]   # --rows 0 = all rows

The input is a seeded sample of ``wmt21/segments.parquet`` over every target language
(``DataFrame.sample(n=ROWS, random_state=SEED)``, kept in file order; ``--rows 0`` takes all
251,212 rows), written to a temporary Parquet file with ``lp, system, seg_id, source, hypothesis,
reference``. Both sides write the same table plus sentence-level ``bleu`` and ``chrf`` columns:

* xleval:    ``python -m xleval score IN.parquet --metric bleu,chrf -o OUT.parquet``
* sacrebleu: a Python process that reads the table with pandas and scores every row with
  ``BLEU(trg_lang=TGT, effective_order=True).sentence_score`` (sacrebleu's tokenizer choice
  for the target language, as ``sacrebleu -sl -l SRC-TGT`` does) and ``CHRF().sentence_score``,
  then writes the table with pandas.

CPU seconds (user + system) of each child come from ``resource.getrusage(RUSAGE_CHILDREN)``; the
best of ``--repeat`` runs is reported (the machine is shared). It first runs xleval once untimed
(that builds and caches the compiled kernels, as any first run does), then checks that the two
outputs agree on every segment, then prints the ratio, and the wall time of ``xleval --help``.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))

SACREBLEU_SIDE = r"""
import sys
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF
df = pd.read_parquet(sys.argv[1])
chrf, bleus, b, c = CHRF(), {}, [], []
for hyp, ref, lp in zip(df["hypothesis"].tolist(), df["reference"].tolist(), df["lp"].tolist()):
    tgt = lp.split("-")[1]
    bleu = bleus.get(tgt) or bleus.setdefault(tgt, BLEU(trg_lang=tgt, effective_order=True))
    b.append(bleu.sentence_score(hyp, [ref]).score)
    c.append(chrf.sentence_score(hyp, [ref]).score)
df["bleu"], df["chrf"] = b, c
df.to_parquet(sys.argv[2])
"""


def _child_cpu(cmd: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=40_000, help="sample size (0 = all rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import numpy as np
    import pandas as pd

    df = pd.read_parquet(DATA / "wmt21" / "segments.parquet")
    if args.rows:
        df = df.sample(n=args.rows, random_state=args.seed).sort_index()
    df = df[["lp", "system", "seg_id", "source", "hypothesis", "reference"]]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        src, ours, theirs = (str(Path(tmp) / name) for name in ("in.parquet", "xleval.parquet", "sacrebleu.parquet"))
        df.to_parquet(src, index=False)
        xleval = [sys.executable, "-m", "xleval", "score", src, "--metric", "bleu,chrf", "-o", ours]
        sacre = [sys.executable, "-c", SACREBLEU_SIDE, src, theirs]
        _child_cpu(xleval, env)  # warm-up: builds the compiled kernels once (cached for later processes)
        ours_cpu = min(_child_cpu(xleval, env) for _ in range(args.repeat))
        theirs_cpu = min(_child_cpu(sacre, env) for _ in range(max(1, args.repeat if args.rows else 1)))
        a, b = pd.read_parquet(ours), pd.read_parquet(theirs)
        differing = {m: int((np.abs(a[m].to_numpy() - b[m].to_numpy()) > 1e-9).sum()) for m in ("bleu", "chrf")}
        bitwise = {m: int((a[m].to_numpy() != b[m].to_numpy()).sum()) for m in ("bleu", "chrf")}
    helps = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "xleval", "--help"], check=True, env=env, stdout=subprocess.DEVNULL)
        helps.append(time.perf_counter() - start)
    load = os.getloadavg()[0]
    print(f"rows: {len(df):,} (seed {args.seed}); load average {load:.1f}")
    print(f"xleval score (whole process, CPU s, best of {args.repeat}): {ours_cpu:.2f}")
    print(f"sacrebleu (whole process, CPU s):                  {theirs_cpu:.2f}")
    print(f"ratio: {theirs_cpu / ours_cpu:.1f}x")
    print(f"segments differing > 1e-9: {differing}; not bitwise equal: {bitwise}")
    print(f"xleval --help wall seconds: best {min(helps):.3f}, median {sorted(helps)[2]:.3f}")
    return 1 if any(differing.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
