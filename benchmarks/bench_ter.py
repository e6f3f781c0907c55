"""Sentence and corpus TER on paragraph-length segments: xleval vs sacrebleu in the same run.

    .venv/bin/python benchmarks/bench_ter.py [--n 1000] [--lines 2] [--seed 0] [--options ...]

The segments are paragraphs: WMT21 system outputs and their references with ``--lines``
consecutive lines of one document joined by a space (``--lines 2``: about 255 characters, the
length of WMT24's general-task segments; ``--lines 5``: about 95 words, 640 characters, where
sacrebleu takes seconds per segment), a random sample of ``--n`` of them over all 16 language
pairs. sacrebleu scores them with one reused ``TER()`` object, one ``sentence_score`` call per
segment (its usual loop); xleval with one batched ``TER().sentence_scores`` call. Single
process, single thread. The compiled kernel is loaded (built on the very first run, then from
numba's cache) by a warm-up call before timing; its duration is printed. Corpus TER: xleval's
``corpus_score`` against sacrebleu's aggregation of its own segment statistics
(``TER._aggregate_and_compute``, what its ``corpus_score`` returns). Exits non-zero if any
segment's edits, reference length or score, or the corpus score, differ.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sacrebleu.metrics import TER as SacreTER

from xleval.metrics import TER
from xleval.metrics._ter import _compiled

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
OPTIONS = ("normalized", "no_punct", "asian_support", "case_sensitive")


def paragraphs(segments: pd.DataFrame, lines: int) -> pd.DataFrame:
    """Consecutive ``lines`` lines of each (language pair, system, document), joined by a space."""
    df = segments.sort_values(["lp", "system", "doc_id", "seg_id"])
    block = df.groupby(["lp", "system", "doc_id"], sort=False).cumcount() // lines
    keys = [df["lp"], df["system"], df["doc_id"], block]
    return df.groupby(keys, sort=False).agg(hypothesis=("hypothesis", " ".join),
                                            reference=("reference", " ".join)).reset_index(drop=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000, help="paragraphs to score (default 1000)")
    ap.add_argument("--lines", type=int, default=2, help="lines per paragraph (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--options", nargs="*", default=[], choices=OPTIONS, help="TER options to switch on")
    args = ap.parse_args(argv)
    if _compiled() is None:
        print("numba is not installed (pip install xleval[fast]): xleval's TER would be sacrebleu's code")
        return 1
    options = dict.fromkeys(args.options, True)
    segs = pd.read_parquet(DATA / "wmt21" / "segments.parquet",
                           columns=["lp", "system", "doc_id", "seg_id", "hypothesis", "reference"])
    paras = paragraphs(segs, args.lines).sample(n=args.n, random_state=args.seed)
    hyps, refs = paras["hypothesis"].tolist(), paras["reference"].tolist()
    words = np.array([len(r.split()) for r in refs])
    print(f"{len(hyps)} paragraphs of {args.lines} lines: reference words mean {words.mean():.0f}, "
          f"max {words.max()}; characters mean {np.mean([len(r) for r in refs]):.0f}; options {options or 'none'}")

    start = time.perf_counter()
    TER(**options).sentence_scores(["a b c"], [["a c b"]])
    print(f"warm-up (loads the compiled kernel): {time.perf_counter() - start:.2f} s")

    theirs_metric = SacreTER(**options)
    start = time.perf_counter()
    theirs = [theirs_metric.sentence_score(h, [r]) for h, r in zip(hyps, refs, strict=True)]
    their_t = time.perf_counter() - start

    ours_metric = TER(**options)
    start = time.perf_counter()
    ours_stats = ours_metric.sentence_stats(hyps, refs)
    ours_scores = ours_metric.score_from_stats(ours_stats)
    ours_t = time.perf_counter() - start

    their_stats = np.array([[s.num_edits, s.ref_length] for s in theirs])
    their_scores = np.array([s.score for s in theirs])
    differing = int(((ours_stats != their_stats).any(axis=1) | (ours_scores != their_scores)).sum())
    ours_corpus = ours_metric.corpus_score(hyps, [refs])
    theirs_corpus = theirs_metric._aggregate_and_compute(their_stats.tolist())
    corpus_same = (ours_corpus.score == theirs_corpus.score and ours_corpus.num_edits == theirs_corpus.num_edits
                   and ours_corpus.ref_length == theirs_corpus.ref_length)

    print(f"sacrebleu TER().sentence_score loop: {their_t:8.2f} s  ({len(hyps) / their_t:8.1f} seg/s)")
    print(f"xleval TER().sentence_scores:        {ours_t:8.2f} s  ({len(hyps) / ours_t:8.1f} seg/s)")
    print(f"ratio: {their_t / ours_t:.1f}x   differing segments: {differing}")
    print(f"corpus TER: xleval {float(ours_corpus.score)!r} sacrebleu {float(theirs_corpus.score)!r} "
          f"({'identical' if corpus_same else 'DIFFERENT'})")
    return 0 if differing == 0 and corpus_same else 1


if __name__ == "__main__":
    sys.exit(main())
