"""The cost of the streamed LGN fit's repeated-key check (``xleval.scale.fit_chunked``, docs/scale.md).

    .venv/bin/python benchmarks/bench_streamed_keys.py [--rows 4000000] [--chunk-size 500000] [--repeat 3]
                                                       [--repeats 97000] [--dir /tmp/xleval-bench-keys]

Three generated Parquet tables of ``--rows`` rows (``lp`` over 20 pairs, ``system`` over 20, ``seg_id``, ``score``;
written into --dir, removed afterwards), each fitted with ``fit_chunked(LGN(by="lp"), path,
chunk_size=--chunk-size)`` in this process, best of --repeat:

* the anchor: the table without ``seg_id`` (no key, so no check: the fit as before the check);
* the same rows with ``seg_id``, every key once (the check runs and finds nothing: one pass);
* the same with --repeats keys given a second row with another score (the check finds them and reads the file
  again for its example).

It prints the times and the ratios against the anchor, and checks that the third fit warns with the count.
"""
from __future__ import annotations

import argparse
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from xleval.calibration import LGN
from xleval.exceptions import RepeatedKeysWarning
from xleval.scale import fit_chunked


def write(path: Path, rows: int, with_segment: bool, repeats: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    pairs = [f"{a}-{b}" for a in ("de", "cs", "ja", "zh", "ru") for b in ("en", "fr", "es", "it")]  # 20 pairs
    lp = np.array(pairs)[np.arange(rows) % 20]
    system = np.array([f"sys{i:02d}" for i in range(20)])[(np.arange(rows) // 20) % 20]
    seg = np.arange(rows) // 400  # (lp, system, seg_id) unique per row
    score = rng.normal(50, 10, rows)
    if repeats:  # the first `repeats` rows once more, with another score: keys that repeat with different scores
        lp, system, seg = (np.concatenate([a, a[:repeats]]) for a in (lp, system, seg))
        score = np.concatenate([score, score[:repeats] + 1.0])
    columns = {"lp": lp, "system": system, **({"seg_id": seg} if with_segment else {}), "score": score}
    pq.write_table(pa.table(columns), path, row_group_size=500_000)


def best_fit(path: Path, chunk_size: int, repeat: int) -> tuple[float, list[str]]:
    best, said = float("inf"), []
    for _ in range(repeat):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            fit_chunked(LGN(by="lp"), path, chunk_size=chunk_size)
            best = min(best, time.perf_counter() - start)
        said = [str(w.message) for w in caught if issubclass(w.category, RepeatedKeysWarning)]
    return best, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--chunk-size", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=97_000)
    parser.add_argument("--dir", default="/tmp/xleval-bench-keys")
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    cases = {"no seg_id (no check; anchor)": (False, 0), "keys once (check, one pass)": (True, 0),
             f"{args.repeats:,} keys repeated (check, second pass)": (True, args.repeats)}
    try:
        times = {}
        for name, (with_segment, repeats) in cases.items():
            path = folder / f"{with_segment}-{repeats}.parquet"
            write(path, args.rows, with_segment, repeats)
            times[name], said = best_fit(path, args.chunk_size, args.repeat)
            if repeats and not (said and said[0].startswith(f"{repeats} ")):
                raise SystemExit(f"bench_streamed_keys: expected a warning about {repeats} keys, got {said}")
        anchor = next(iter(times.values()))
        print(f"fit_chunked, {args.rows:,} rows, chunk size {args.chunk_size:,}, best of {args.repeat}:")
        for name, seconds in times.items():
            print(f"  {name}: {seconds:.2f} s ({seconds / anchor:.2f}x the anchor)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
