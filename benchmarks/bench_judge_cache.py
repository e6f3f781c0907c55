"""A judge run against the same run answered from the score cache, on CPU (``xleval score -m judge:PATH``).

A steered tiny GPT-2 (tests/_judge_fixtures.py: greedy decoding answers GEMBA-ESA's two stages with a fixed
error list and a score) scores ``--rows`` WMT21 segments (source, hypothesis from
/work/shared/data/wmt21/segments.parquet or $XLEVAL_DATA, sampled with ``--seed``) through the judge's whole
path (prompt rendering, generation, parsing). Printed, measured in this run: the first run (every request sent
to the model, answers stored in ``cache=DIR``) against a second run of a fresh judge object on the same rows
(every answer read from the cache; the model is never loaded), and their ratio (target >= 20x). The prompt
sizes (characters and the tiny model's tokens) of the two stages are printed too.

Usage: python benchmarks/bench_judge_cache.py [--rows 64] [--batch-size 8]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _judge_fixtures import build_steered_gpt2
from xleval.judges import JudgeLocal
from xleval.metrics._judge import Judge

GOOD = {"understandable.": ["Minor:", "\n", "style/awkward", ' - "', 'the"'], "Score: ": ["7", "2"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    segs = pd.read_parquet(data / "wmt21" / "segments.parquet", columns=["lp", "source", "hypothesis"])
    segs = segs[segs["lp"] == "de-en"].sample(args.rows, random_state=args.seed)
    hyps, srcs = segs["hypothesis"].tolist(), segs["source"].tolist()
    with tempfile.TemporaryDirectory() as tmp:
        model = build_steered_gpt2(Path(tmp) / "judge", GOOD)
        cache = Path(tmp) / "cache"
        cache.mkdir()
        judge = Judge(model, src_lang="de", tgt_lang="en", local=JudgeLocal(batch_size=args.batch_size), cache=cache)
        start = time.perf_counter()
        first = judge.judge(hyps, None, srcs)
        cold = time.perf_counter() - start
        again = Judge(model, src_lang="de", tgt_lang="en", local=JudgeLocal(batch_size=args.batch_size), cache=cache)
        start = time.perf_counter()
        second = again.judge(hyps, None, srcs)
        warm = time.perf_counter() - start
        assert np.array_equal(first.scores, second.scores, equal_nan=True) and second.requests == 0
        plan = judge.plan(hyps[:1], None, srcs[:1])
        chars = sum(len(m["content"]) for m in plan.prompts[0])
    print(f"rows {args.rows}, requests {first.requests} (two ESA stages), failures {first.failures}")
    print(f"first run (model): {cold:.2f} s; second run (cache): {warm:.3f} s; ratio {cold / warm:.0f}x")
    print(f"stage-1 prompt of one segment: {chars} characters (GEMBA-ESA's system turn, 3 worked examples, the "
          "segment)")


if __name__ == "__main__":
    main()
