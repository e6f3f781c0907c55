"""Sentence BLEU and chrF: xleval vs sacrebleu in the same run (segments/s, ratio, differing segments).

    .venv/bin/python benchmarks/bench_metrics.py [--n 50000] [--seed 0]

Scores a random sample of WMT21 segments (all target languages; 13a, zh for Chinese targets)
with sacrebleu's reused ``BLEU(effective_order=True)`` / ``CHRF()`` objects one segment at a time,
and with xleval's batched ``sentence_scores`` on both kernel paths (``numpy``, and ``numba`` when
the ``fast`` extra is installed); all single process, single thread. The numba kernels are loaded
(compiled on the very first run, then from numba's cache) by a warm-up call before timing; its
duration is printed. Prints a table and exits non-zero if any segment differs by more than 1e-9.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF

from xleval.exceptions import MissingDependencyError
from xleval.metrics import BLEU, CHRF, _fast

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _timed(func, *args):
    start = time.perf_counter()
    out = func(*args)
    return np.asarray(out, dtype=float), time.perf_counter() - start


def _one_by_one(metric, hyps, refs):
    return [metric.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)]


def _bench(name, ours, theirs, groups, backends):
    """groups: list of (hyps, refs, tokenizer); returns one result row per xleval backend."""
    their_scores, their_t = [], 0.0
    for hyps, refs, tok in groups:
        s, t = _timed(_one_by_one, theirs(tok), hyps, refs)
        their_scores.append(s)
        their_t += t
    theirs_all = np.concatenate(their_scores)
    n = len(theirs_all)
    rows = []
    for backend in backends:
        with _fast.backend(backend):
            timed = [_timed(ours(tok).sentence_scores, hyps, refs) for hyps, refs, tok in groups]
        ours_t = sum(t for _, t in timed)
        diff = np.abs(np.concatenate([o for o, _ in timed]) - theirs_all)
        rows.append({"metric": name, "xleval kernels": backend, "segments": n, "sacrebleu seg/s": n / their_t,
                     "xleval seg/s": n / ours_t, "ratio": their_t / ours_t,
                     "differing (>1e-9)": int((diff > 1e-9).sum())})
    return rows


def _warm_up() -> list[str]:
    """Load (or compile) the numba kernels outside the timed runs; the backends to time."""
    try:
        _fast.set_backend("numba")
    except MissingDependencyError as err:  # the fast extra is not installed
        print(f"numba kernels unavailable ({err}); timing the numpy path only", file=sys.stderr)
        return ["numpy"]
    start = time.perf_counter()
    for metric in (BLEU(), BLEU(tokenize="zh"), CHRF()):
        metric.sentence_scores(["a b.", "c"], ["a b .", "d"])
    print(f"numba kernels loaded in {time.perf_counter() - start:.2f} s (excluded from the timings)")
    return ["numpy", "numba"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50_000, help="segments (0 = all 251,212)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    path = DATA / "wmt21" / "segments.parquet"
    if not path.is_file():
        print(f"data not found: {path} (set XLEVAL_DATA)", file=sys.stderr)
        return 2
    df = pd.read_parquet(path, columns=["lp", "tgt_lang", "hypothesis", "reference"])
    if args.n:
        df = df.sample(args.n, random_state=args.seed)
    tok = np.where(df["tgt_lang"].to_numpy() == "zh", "zh", "13a")
    groups = [(df["hypothesis"].to_numpy()[tok == t].tolist(), df["reference"].to_numpy()[tok == t].tolist(), t)
              for t in np.unique(tok)]
    backends = _warm_up()
    rows = [
        *_bench("sentence BLEU", lambda t: BLEU(tokenize=t, effective_order=True),
                lambda t: SacreBLEU(tokenize=t, effective_order=True), groups, backends),
        *_bench("sentence chrF", lambda t: CHRF(), lambda t: SacreCHRF(), groups, backends),
    ]
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda x: f"{x:,.1f}"))
    return 1 if table["differing (>1e-9)"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
