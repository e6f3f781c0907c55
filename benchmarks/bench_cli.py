"""Whole-process cost of ``xleval score`` against sacrebleu, each run as a separate process.

    .venv/bin/python benchmarks/bench_cli.py [--rows 40000] [--seed 0] [--repeat 3] [--importtime]  # --rows 0: all

The input is a seeded sample of ``wmt21/segments.parquet`` over every target language
(``DataFrame.sample(n=ROWS, random_state=SEED)``, kept in file order; ``--rows 0`` takes all
251,212 rows), written to a temporary Parquet file with ``lp, system, seg_id, source, hypothesis,
reference``. Both sides write the same table plus sentence-level ``bleu`` and ``chrf`` columns:

* xleval:    ``python -m xleval score IN.parquet --metric bleu,chrf -o OUT.parquet``
* sacrebleu: a Python process that reads the table with pandas and scores every row with
  ``BLEU(trg_lang=TGT, effective_order=True).sentence_score`` (sacrebleu's tokenizer choice
  for the target language, as ``sacrebleu -sl -l SRC-TGT`` does) and ``CHRF().sentence_score``,
  then writes the table with pandas.

CPU seconds (user + system) of each child come from ``resource.getrusage(RUSAGE_CHILDREN)``.
The headline is the **cold single run**, the way a user runs it: one fresh process per tool, each
run once, xleval first (no warm-up run of xleval before it). The compiled BLEU/chrF kernels are an
installation step (``python -m xleval.metrics._aot``, about a minute once per install, or done by
the first run ever): when they are not built yet, they are built first and that is reported apart.
Then ``--repeat`` more runs of each tool give the best-of figures (the machine may be shared). It
checks that the two outputs agree on every segment and prints both ratios, the load average, and
the wall time of ``xleval --help``. ``--importtime`` adds the import time of the score command
(``python -X importtime``), the part of a short run that scoring does not earn back.
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


def _kernels_built(env: dict) -> bool:
    code = "from xleval.metrics import _aot; import sys; sys.exit(0 if _aot.load() is not None else 1)"
    return subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


def _import_ms(cmd: list[str], env: dict) -> float:
    """Total self import time (ms) of a process (``-X importtime`` lines on stderr)."""
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=env, check=True, capture_output=True, text=True)
    total = 0
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            total += int(line.split(":", 1)[1].split("|")[0])
    return total / 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=40_000, help="sample size (0 = all rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each tool after the cold one (best-of)")
    parser.add_argument("--importtime", action="store_true", help="also report the score command's import time")
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
        build = 0.0
        if not _kernels_built(env):  # an installation step: not part of a run
            build = _child_cpu([sys.executable, "-m", "xleval.metrics._aot"], env)
        cold_ours = _child_cpu(xleval, env)  # the first xleval process after installation
        cold_theirs = _child_cpu(sacre, env)
        ours_cpu = min([cold_ours] + [_child_cpu(xleval, env) for _ in range(args.repeat)])
        theirs_cpu = min([cold_theirs] + [_child_cpu(sacre, env) for _ in range(args.repeat if args.rows else 0)])
        imports = _import_ms(xleval, env) if args.importtime else None
        a, b = pd.read_parquet(ours), pd.read_parquet(theirs)
        differing = {m: int((np.abs(a[m].to_numpy() - b[m].to_numpy()) > 1e-9).sum()) for m in ("bleu", "chrf")}
        bitwise = {m: int((a[m].to_numpy() != b[m].to_numpy()).sum()) for m in ("bleu", "chrf")}
    helps = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "xleval", "--help"], check=True, env=env, stdout=subprocess.DEVNULL)
        helps.append(time.perf_counter() - start)
    load = os.getloadavg()
    print(f"rows: {len(df):,} (seed {args.seed}); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"{os.cpu_count()} CPUs")
    if build:
        print(f"compiled kernels built first (installation step, not counted): {build:.1f} CPU s")
    print(f"cold single run (one process per tool, CPU s): xleval {cold_ours:.2f}, sacrebleu {cold_theirs:.2f}; "
          f"ratio: {cold_theirs / cold_ours:.1f}x")
    print(f"best of {1 + args.repeat} runs (CPU s): xleval {ours_cpu:.2f}, sacrebleu {theirs_cpu:.2f}; "
          f"ratio: {theirs_cpu / ours_cpu:.1f}x")
    if imports is not None:
        print(f"xleval score: imports {imports:.0f} ms of the run (python -X importtime, self times summed)")
    print(f"segments differing > 1e-9: {differing}; not bitwise equal: {bitwise}; "
          f"identical: {'yes' if not any(differing.values()) else 'NO'}")
    print(f"xleval --help wall seconds: best {min(helps):.3f}, median {sorted(helps)[2]:.3f}")
    return 1 if any(differing.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
