"""Out-of-core and Dask throughput of xleval.scale (figures are ratios against anchors run here).

    .venv/bin/python benchmarks/bench_scale.py [--rows 100000000 [N ...]] [--dask-rows 10000000] [--repeat 1]
                                               [--chunk-size 1000000] [--dir /tmp/xleval-bench] [--only a b c]

(a) chunked LGN fit + apply of a generated Parquet table (``tgt_lang`` + ``score``; generated into
    --dir on the fly, never committed): wall time, rows/s and the peak RSS of the process that ran
    it (``resource.getrusage`` in a fresh subprocess), against the 1.5 GB target; with several
    --rows, the spread of the peaks (peak RSS must not depend on the input size);
(b) the same on --dask-rows rows: single process vs a 2-worker local Dask cluster (cluster
    start-up reported separately), with the ratio; --repeat N runs it N times (a fresh process and a
    fresh cluster each) and prints the spread of the first fit's speed-up;
(c) memory-bandwidth reference: a plain numpy pass ``score * a[code] + b[code]`` over arrays of
    the same size, the bound a row-wise apply cannot beat; apply's rows/s as a share of it;
(d) ``score_chunked`` with BLEU (13a) and chrF over --score-rows rows (WMT21 segments repeated,
    written to --dir with row groups of --chunk-size/2 rows): single process vs a 2-worker local Dask
    cluster (start-up, which also warms the workers, reported separately), the speed-up and whether
    the two outputs are identical.

    .venv/bin/python benchmarks/bench_scale.py --only d [--score-rows 2000000]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

LANGS = ["en", "de", "zh", "ja", "ru", "cs", "is", "ha", "fr", "es", "pt", "it", "ko", "ar", "hi", "tr", "pl",
         "uk", "km", "ps"]


def generate(path: Path, rows: int, row_group: int = 1 << 20) -> float:
    """A Parquet table of ``rows`` rows, written one row group at a time; returns seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = time.perf_counter()
    rng = np.random.default_rng(0)
    shift = np.linspace(-20, 20, len(LANGS))
    spread = np.linspace(5, 15, len(LANGS))
    dictionary = pa.array(LANGS)
    schema = pa.schema([("tgt_lang", pa.dictionary(pa.int8(), pa.string())), ("score", pa.float64())])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for first in range(0, rows, row_group):
            n = min(row_group, rows - first)
            codes = rng.integers(0, len(LANGS), n).astype(np.int8)
            score = 60 + shift[codes] + spread[codes] * rng.standard_normal(n)
            lang = pa.DictionaryArray.from_arrays(pa.array(codes), dictionary)
            writer.write_table(pa.table({"tgt_lang": lang, "score": score}, schema=schema), row_group_size=n)
    return time.perf_counter() - start


def run_child(args: list[str]) -> dict:
    """Run one measurement in a fresh interpreter (its own peak RSS) and parse its JSON line."""
    proc = subprocess.run([sys.executable, __file__, "_child", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"child {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def generate_texts(path: Path, rows: int, row_group: int) -> None:
    """WMT21 segments (``lp, hypothesis, reference``) repeated to ``rows`` rows."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    data = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    table = pq.read_table(data / "wmt21" / "segments.parquet", columns=["lp", "hypothesis", "reference"])
    table = pa.concat_tables([table] * (rows // len(table) + 1)).slice(0, rows)
    pq.write_table(table, path, row_group_size=row_group, compression="zstd")


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _start(backend: str):
    """The backend of a child run (None: one process) and the seconds its cluster took to start."""
    if backend != "dask":
        return None, 0.0
    from xleval.scale import DaskBackend

    t0 = time.perf_counter()
    return DaskBackend(workers=2, processes=True).__enter__(), time.perf_counter() - t0


def _workers_cpu(be) -> float:
    return sum(be.client.run(_cpu).values()) if be is not None else 0.0


def score_child(src: str, out: str, chunk: int, backend: str) -> None:
    import warnings

    from xleval.metrics import BLEU, CHRF
    from xleval.scale import score_chunked

    warnings.simplefilter("ignore")
    be, setup = _start(backend)
    w0, c0, t0 = _workers_cpu(be), _cpu(), time.perf_counter()
    result = score_chunked([BLEU(tokenize="13a"), CHRF()], src, out, chunk_size=chunk, backend=be)
    seconds, client = time.perf_counter() - t0, _cpu() - c0
    workers = _workers_cpu(be) - w0
    if be is not None:
        be.__exit__(None, None, None)
    print(json.dumps({"score_s": seconds, "rows": result.rows, "setup_s": setup, "client_cpu": client,
                      "workers_cpu": workers}))


def child(kind: str, src: str, out: str, chunk: int, backend: str) -> None:
    import resource
    import warnings

    if kind == "score":
        score_child(src, out, chunk, backend)
        return
    if kind == "same":  # in a child: two 10M-row tables read here would stay in the parent's peak RSS, which
        import pyarrow.parquet as pq  # a forked child inherits (ru_maxrss counts the RSS before its exec)

        print(json.dumps({"same": pq.read_table(src).equals(pq.read_table(out))}))
        return

    from xleval.calibration import LGN
    from xleval.scale import apply_chunked, fit_chunked

    warnings.simplefilter("ignore")
    be, setup = _start(backend)
    w0, c0, t0 = _workers_cpu(be), _cpu(), time.perf_counter()
    model = fit_chunked(LGN(by="tgt_lang", score="score", fallback=["pooled"]), src, chunk_size=chunk, backend=be)
    t1, c1, w1 = time.perf_counter(), _cpu(), _workers_cpu(be)
    result = apply_chunked(model, src, out, chunk_size=chunk, backend=be)
    t2, c2, w2 = time.perf_counter(), _cpu(), _workers_cpu(be)
    again = fit_chunked(LGN(by="tgt_lang", score="score", fallback=["pooled"]), src, chunk_size=chunk, backend=be)
    t3 = time.perf_counter()
    assert again.to_dict() == model.to_dict()
    if be is not None:
        be.__exit__(None, None, None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux
    print(json.dumps({"fit_s": t1 - t0, "apply_s": t2 - t1, "rows": result.rows, "setup_s": setup,
                      "peak_rss": peak, "fit_cpu": [c1 - c0, w1 - w0], "apply_cpu": [c2 - c1, w2 - w1],
                      "fit_again_s": t3 - t2,
                      "model": model.to_dict()}))


def _load() -> str:
    import os

    return f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


def numpy_reference(rows: int, chunk: int) -> float:
    """Seconds for ``score * a[code] + b[code]`` over ``rows`` rows in chunks (arrays already in memory)."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, len(LANGS), chunk).astype(np.int8)
    score = rng.standard_normal(chunk)
    a, b = rng.random(len(LANGS)), rng.random(len(LANGS))
    out = np.empty(chunk)
    start = time.perf_counter()
    for _ in range(max(1, rows // chunk)):
        np.multiply(score, a[codes], out=out)
        out += b[codes]
    return (time.perf_counter() - start) * rows / (max(1, rows // chunk) * chunk)


def _dask_fit_apply(src: Path, outs: list[Path], chunk: str, chunk_size: int) -> float:
    """(b) once: a fresh single process, then a fresh 2-worker cluster; prints them; returns the first fit's
    speed-up."""
    gb = 1024 ** 3
    single = run_child(["fit_apply", str(src), str(outs[0]), chunk, "local"])
    dask = run_child(["fit_apply", str(src), str(outs[1]), chunk, "dask"])
    same_model = single["model"] == dask["model"]
    same_out = run_child(["same", str(outs[0]), str(outs[1]), chunk, "local"])["same"]
    s_tot, d_tot = single["fit_s"] + single["apply_s"], dask["fit_s"] + dask["apply_s"]
    print(f"(b) LGN fit + apply, {single['rows']:,} rows, chunk {chunk_size:,}, 2 Dask workers "
          f"(LocalCluster, 1 thread each); {_load()}")
    print(f"    fit:   single {single['fit_s']:.2f} s (CPU {single['fit_cpu'][0]:.2f}), dask {dask['fit_s']:.2f} s "
          f"(CPU client {dask['fit_cpu'][0]:.2f} + workers {dask['fit_cpu'][1]:.2f}); "
          f"speed-up {single['fit_s'] / dask['fit_s']:.2f}x; "
          f"fitted models identical: {'yes' if same_model else 'NO'}")
    print(f"    fit again in the same process / on the same cluster: single {single['fit_again_s']:.2f} s, dask "
          f"{dask['fit_again_s']:.2f} s; speed-up {single['fit_again_s'] / dask['fit_again_s']:.2f}x")
    print(f"    apply: single {single['apply_s']:.1f} s (CPU {single['apply_cpu'][0]:.1f}), dask "
          f"{dask['apply_s']:.1f} s (CPU client {dask['apply_cpu'][0]:.1f} + workers {dask['apply_cpu'][1]:.1f}); "
          f"speed-up {single['apply_s'] / dask['apply_s']:.2f}x; outputs identical: {'yes' if same_out else 'NO'}")
    print(f"    fit+apply {s_tot:.1f} s vs {d_tot:.1f} s (+ {dask['setup_s']:.1f} s cluster start): "
          f"{s_tot / d_tot:.2f}x; client peak RSS {dask['peak_rss'] / gb:.2f} GB")
    return single["fit_s"] / dask["fit_s"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000_000])
    parser.add_argument("--dask-rows", type=int, default=10_000_000)
    parser.add_argument("--score-rows", type=int, default=2_000_000)
    parser.add_argument("--chunk-size", type=int, default=1_000_000)
    parser.add_argument("--dir", default="/tmp/xleval-bench")
    parser.add_argument("--only", nargs="+", default=["a", "b", "c"])
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument("--repeat", type=int, default=1, help="(b): runs, each a fresh process and cluster")
    args = parser.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    chunk = str(args.chunk_size)
    gb = 1024 ** 3
    peaks = {}
    for rows in args.rows if "a" in args.only else ():
        src = root / f"bench_{rows}.parquet"
        gen = generate(src, rows) if not src.exists() else 0.0
        r = run_child(["fit_apply", str(src), str(root / "out_a.parquet"), chunk, "local"])
        peaks[rows] = r["peak_rss"]
        total = r["fit_s"] + r["apply_s"]
        print(f"(a) {r['rows']:,} rows, chunk {args.chunk_size:,}: generate {gen:.1f} s; fit {r['fit_s']:.1f} s "
              f"({r['rows'] / r['fit_s'] / 1e6:.2f} M rows/s), apply {r['apply_s']:.1f} s "
              f"({r['rows'] / r['apply_s'] / 1e6:.2f} M rows/s), fit+apply {total:.1f} s; "
              f"peak RSS {r['peak_rss'] / gb:.3f} GB (target < 1.5 GB: "
              f"{'met' if r['peak_rss'] < 1.5 * gb else 'MISSED'})")
        if "c" in args.only and rows == args.rows[-1]:
            ref = numpy_reference(r["rows"], args.chunk_size)
            print(f"(c) numpy score*a[code]+b[code] over {r['rows']:,} in-memory rows: {ref:.2f} s "
                  f"({r['rows'] / ref / 1e6:.0f} M rows/s); chunked apply reaches {100 * ref / r['apply_s']:.2f}% "
                  "of it (apply also decodes, normalises language codes, writes Parquet)")
        if not args.keep:
            for p in (src, root / "out_a.parquet"):
                p.unlink(missing_ok=True)
    if len(peaks) > 1:
        low, high = min(peaks.values()), max(peaks.values())
        print(f"(a) peak RSS over {', '.join(f'{n / 1e6:g}M' for n in peaks)} rows: "
              f"{', '.join(f'{v / gb:.3f}' for v in peaks.values())} GB; max/min {high / low:.2f}")
    if "b" in args.only:
        src = root / f"bench_{args.dask_rows}_{args.chunk_size}.parquet"
        if not src.exists():  # row groups of --chunk-size rows: the parts of both backends are the same batches
            generate(src, args.dask_rows, row_group=args.chunk_size)
        outs = [root / "out_b1.parquet", root / "out_b2.parquet"]
        firsts = []
        for _ in range(args.repeat):
            firsts.append(_dask_fit_apply(src, outs, chunk, args.chunk_size))
        if args.repeat > 1:
            firsts.sort()
            print(f"(b) first fit, {args.repeat} runs (a fresh process and a fresh cluster each): speed-up "
                  f"min {firsts[0]:.2f}x, median {firsts[len(firsts) // 2]:.2f}x, max {firsts[-1]:.2f}x")
        if not args.keep:
            for p in (src, *outs):
                p.unlink(missing_ok=True)
    if "d" in args.only:
        src = root / f"texts_{args.score_rows}.parquet"
        if not src.exists():
            generate_texts(src, args.score_rows, max(1, args.chunk_size // 2))
        outs = [root / "out_d1.parquet", root / "out_d2.parquet"]
        single = run_child(["score", str(src), str(outs[0]), chunk, "local"])
        dask = run_child(["score", str(src), str(outs[1]), chunk, "dask"])

        same = run_child(["same", str(outs[0]), str(outs[1]), chunk, "local"])["same"]
        print(f"(d) score_chunked BLEU (13a) + chrF on {single['rows']:,} rows, chunk {args.chunk_size:,}, "
              f"2 Dask workers (LocalCluster, 1 thread each); {_load()}")
        print(f"    single process {single['score_s']:.1f} s (CPU {single['client_cpu']:.1f}); 2 workers "
              f"{dask['score_s']:.1f} s (CPU client {dask['client_cpu']:.1f} + workers {dask['workers_cpu']:.1f}; "
              f"+ {dask['setup_s']:.1f} s cluster start); speed-up {single['score_s'] / dask['score_s']:.2f}x; "
              f"outputs identical: {'yes' if same else 'NO'}")
        if not args.keep:
            for p in (src, *outs):
                p.unlink(missing_ok=True)
    if "c" in args.only and "a" not in args.only:
        rows = args.rows[-1]
        ref = numpy_reference(rows, args.chunk_size)
        print(f"(c) numpy reference over {rows:,} rows: {ref:.2f} s ({rows / ref / 1e6:.0f} M rows/s)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _, _, kind, src, out, chunk, backend = sys.argv
        child(kind, src, out, int(chunk), backend)
    else:
        main()
