"""Fast re-scoring of a neural metric: the score cache and length-sorted batches, on CPU.

A MetricX-shaped mT5 (random weights, mT5's vocabulary of 250112, ``--d-model``/``--layers``) and a tokenizer
trained on the fly (tests/_tiny_models.py) score ``--rows`` WMT21 segments sampled with ``--seed``
(source, hypothesis, reference from /work/shared/data/wmt21/segments.parquet or $XLEVAL_DATA), as MetricX-24
hybrid. Printed, measured in this run:

* cache: scoring the rows once (no cache) against re-scoring the same rows from a warm cache
  (``cache=DIR``): the ratio is the time saved on an unchanged table (target >= 20x);
* length batching: the same adapter with ``sort_by_length=False`` (consecutive rows per batch) against
  ``sort_by_length=True`` (rows of similar token length per batch), same batch size; the scores agree.

Usage: python benchmarks/bench_neural_cache.py [--rows 512] [--batch-size 16] [--d-model 64] [--layers 2]
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

from _tiny_models import build_tiny_metricx, build_tiny_mt5_tokenizer
from xleval.metrics._metricx import MetricX


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=os.environ.get("XLEVAL_DATA", "/work/shared/data"))
    args = parser.parse_args()

    segments = pd.read_parquet(Path(args.data) / "wmt21" / "segments.parquet",
                               columns=["source", "hypothesis", "reference"]).dropna()
    rows = segments.sample(n=args.rows, random_state=args.seed)
    hyps, refs, srcs = (rows[c].astype(str).tolist() for c in ("hypothesis", "reference", "source"))
    lengths = np.array([len(h) + len(r) + len(s) for h, r, s in zip(hyps, refs, srcs, strict=True)])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        model = build_tiny_metricx(root / "metricx-24-hybrid-bench", d_model=args.d_model, layers=args.layers)
        tok = build_tiny_mt5_tokenizer(root / "tok")
        opts = {"tokenizer_path": tok, "batch_size": args.batch_size}
        unsorted = MetricX(model, sort_by_length=False, **opts)
        by_length = MetricX(model, sort_by_length=True, **opts)
        unsorted.sentence_scores(hyps[:4], refs[:4], srcs[:4])  # load both models before timing
        by_length.sentence_scores(hyps[:4], refs[:4], srcs[:4])
        t_unsorted, s_unsorted = _timed(lambda: unsorted.sentence_scores(hyps, refs, srcs))
        t_sorted, s_sorted = _timed(lambda: by_length.sentence_scores(hyps, refs, srcs))
        (root / "cache").mkdir()
        cached = MetricX(model, cache=root / "cache", **opts)
        t_fill, s_fill = _timed(lambda: cached.sentence_scores(hyps, refs, srcs))
        t_hit, s_hit = _timed(lambda: MetricX(model, cache=root / "cache", **opts).sentence_scores(hyps, refs, srcs))
    print(f"rows: {args.rows} WMT21 segments (seed {args.seed}), characters src+hyp+ref: median "
          f"{int(np.median(lengths))}, max {int(lengths.max())}; model d_model={args.d_model}, layers={args.layers}, "
          f"batch size {args.batch_size}, CPU")
    print(f"scoring, unsorted batches:       {t_unsorted:8.3f} s")
    print(f"scoring, length-sorted batches:  {t_sorted:8.3f} s   ratio unsorted/sorted = {t_unsorted / t_sorted:.2f}x  "
          f"(max |diff| {np.abs(s_sorted - s_unsorted).max():.1e})")
    print(f"scoring + filling the cache:     {t_fill:8.3f} s")
    print(f"re-scoring from the cache:       {t_hit:8.3f} s   ratio scoring/cached = {t_sorted / t_hit:.1f}x  "
          f"(identical: {bool(np.array_equal(s_hit, s_fill))})")


if __name__ == "__main__":
    main()
