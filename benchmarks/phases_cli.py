"""Where the CPU time of one ``xleval score TABLE --metric bleu,chrf -o OUT`` goes, phase by phase.

    .venv/bin/python benchmarks/phases_cli.py [--rows 40000] [--seed 0]   # --rows 0 = all rows

Runs the command once in this process on the sample ``bench_cli.py`` uses (kernels already built:
run ``bench_cli.py`` or any ``xleval score`` first) and prints the CPU seconds (user + system, this
process's threads) spent in each wrapped function; phases nest (``words`` is inside
``BLEU._pool_stats``, the ``kernel.*`` lines inside both). Wrapping costs a little; the whole-process
figure to quote is ``bench_cli.py``'s.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import resource
import sys
import tempfile
from pathlib import Path

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=40_000, help="sample size (0 = all rows)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = str(Path(tmp) / "in.parquet"), str(Path(tmp) / "out.parquet")
        _sample(args.rows, args.seed, src)
        start = _cpu()
        spent = _run(src, out)
        total = _cpu() - start
    print(f"rows: {args.rows or 'all'} (seed {args.seed}); load average {os.getloadavg()[0]:.1f}")
    print(f"{'whole command (imports included)':34s} {total:.3f}")
    for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {name:32s} {seconds:.3f}")
    return 0


def _sample(rows: int, seed: int, path: str) -> None:
    """The benchmark's sample, written by a child process (so this process starts without pandas)."""
    import subprocess

    code = ("import sys, pandas as pd; df = pd.read_parquet(sys.argv[1]); n = int(sys.argv[2]); "
            "df = df.sample(n=n, random_state=int(sys.argv[3])).sort_index() if n else df; "
            "df[['lp', 'system', 'seg_id', 'source', 'hypothesis', 'reference']].to_parquet(sys.argv[4], index=False)")
    subprocess.run([sys.executable, "-c", code, str(DATA / "wmt21" / "segments.parquet"), str(rows), str(seed), path],
                   check=True)


def _run(src: str, out: str) -> dict[str, float]:
    spent: dict[str, float] = {}

    def wrap(owner, name: str, label: str) -> None:
        func = getattr(owner, name)

        @functools.wraps(func)
        def timed(*a, **k):
            begin = _cpu()
            try:
                return func(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + _cpu() - begin

        setattr(owner, name, timed)

    import xleval.io._parquet as parquet
    import xleval.io._write as write
    from xleval.metrics import _bleu, _chrf, _fast, _frame, _tokenize

    kernels = _fast._kernels()
    for name in ("tokenize_re", "intern_tokens", "clipped_matches_shared", "strip_space", "gather_lines",
                 "utf8_units"):
        if hasattr(kernels, name):
            wrap(kernels, name, f"kernel.{name}")
    wrap(parquet, "read_parquet", "read Parquet")
    wrap(write, "write_table", "write Parquet")
    wrap(_fast.TextPool, "from_arrow", "pool from Arrow")
    wrap(_fast.TextPool, "subset", "pool subset")
    wrap(_fast, "words", "BLEU tokens")
    wrap(_tokenize, "tokenize_lines", "sacrebleu tokenizers (MeCab)")
    wrap(_bleu.BLEU, "_pool_stats", "BLEU statistics")
    wrap(_chrf.CHRF, "_pool_stats", "chrF statistics")
    wrap(_bleu, "bleu_from_stats", "BLEU scores from statistics")
    wrap(_chrf, "chrf_from_stats", "chrF scores from statistics")
    wrap(_frame, "_build", "metric objects")
    from xleval.cli import main as cli

    with contextlib.suppress(SystemExit):  # the command line exits with its status
        cli(["score", src, "--metric", "bleu,chrf", "-o", out])
    return spent


if __name__ == "__main__":
    sys.exit(main())
