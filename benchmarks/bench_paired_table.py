"""Paired bootstrap per language pair on a table: ``xleval score TABLE --paired-bs`` against sacrebleu's CLI.

    .venv/bin/python benchmarks/bench_paired_table.py [--pairs de-en,zh-en] [--resamples 1000] [--repeat 1] [--quick]

The input is ``wmt21/segments.parquet`` ($XLEVAL_DATA, default ../shared/data) cut to the given to-English pairs
and their MT systems (no human ``ref-B`` rows), every system of a pair tested against the pair's first system in
the file, with BLEU, chrF and TER and ``--resamples`` resamples (1000, sacrebleu's default). ``--quick``: de-en
only and 200 resamples. Both sides are whole processes, timed on the wall clock (``time.perf_counter``) as a user
runs them (CPU seconds of the children printed beside); writing the inputs is not timed:

* xleval:    one process for the whole table, ``python -m xleval score TABLE.parquet --paired-bs -pbsn N
  -m bleu chrf ter -f json -q`` (columns ``lp, system, seg_id, hypothesis, reference``; the baseline is the first
  system of each lp);
* sacrebleu: one process per pair, ``sacrebleu REF -i BASE SYS2 ... -m bleu chrf ter --paired-bs -pbsn N -f text``
  on text files written from the same rows in ``seg_id`` order (the ``sacrebleu`` script next to this Python;
  its ``-f json`` fails on a paired test, a float32 it cannot serialise, so its table is parsed).

The compiled BLEU/chrF kernels are an installation step (``python -m xleval.metrics._aot``): when they are not
built yet they are built first and that is reported apart. ``--repeat`` runs of each tool give the best-of
figures (the machine may be shared). Both use the seed 12345 (sacrebleu's default). The script checks that the
two outputs agree: every system score (printed to 10 decimals), the bootstrap mean and 95% interval, and the
p-values (4 decimals, as sacrebleu prints them), prints the ratio (sacrebleu / xleval) and exits non-zero when a
system score differs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(os.environ.get("XLEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
METRICS = ("bleu", "chrf", "ter")  # sacrebleu prints its columns in this order
WIDTH = 10  # decimals of sacrebleu's table (-w): scores compared to this many
CELL = re.compile(r"^(-?\d+\.\d+) \((-?\d+\.\d+) ± (\d+\.\d+)\)$")
PCELL = re.compile(r"^\(p = (\d+\.\d+)\)\*?$")


def _wall(cmd: list[str], env: dict, cwd: Path | None = None) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and standard output of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def _kernels_built(env: dict) -> bool:
    code = "from xleval.metrics import _aot; import sys; sys.exit(0 if _aot.load() is not None else 1)"
    return subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode == 0


def _write_pair(frame, folder: Path) -> tuple[list[str], list[str]]:
    """The reference and one file per system (first = baseline) in seg_id order; returns (paths, names)."""
    names = list(dict.fromkeys(frame["system"]))
    rows = frame.sort_values(["system", "seg_id"], kind="stable").groupby("system", sort=False)
    texts = dict(iter(rows))  # not dict(rows): a GroupBy has a .keys attribute
    base = texts[names[0]]
    paths = ["ref.txt"]  # relative to folder, where sacrebleu runs
    _write_lines(folder / paths[0], base["reference"])
    for k, name in enumerate(names):
        group = texts[name]
        same = group["seg_id"].tolist() == base["seg_id"].tolist()
        if not same or group["reference"].tolist() != base["reference"].tolist():
            raise SystemExit(f"{name}: its segments or references differ from the baseline's; cannot anchor")
        paths.append(f"sys{k:02d}.txt")
        _write_lines(folder / paths[-1], group["hypothesis"])
    return paths, names


def _write_lines(path: Path, lines) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as out:  # sacrebleu reads with newline="\n"
        out.write("".join(f"{line}\n" for line in lines))


def _parse_sacrebleu(text: str, names: list[str]) -> dict[tuple[str, str], dict[str, str]]:
    """sacrebleu's paired table (fancy_grid) -> {(system, metric): {score, mean, ci, p}} as printed."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    system = None
    for line in text.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if cells[0] == "System":
            continue
        if cells[0]:
            system = names[int(Path(cells[0].removeprefix("Baseline: ")).stem.removeprefix("sys"))]
            for metric, cell in zip(METRICS, cells[1:], strict=True):
                score, mean, ci = CELL.match(cell).groups()
                out[system, metric] = {"score": score, "mean": mean, "ci": ci}
        else:
            for metric, cell in zip(METRICS, cells[1:], strict=True):
                out[system, metric]["p"] = PCELL.match(cell).group(1)
    return out


def _parse_xleval(text: str) -> dict[str, tuple[str, dict[tuple[str, str], dict[str, str]]]]:
    """xleval's JSON -> {lp: (baseline, {(system, metric): {score, mean, ci, p}})}, formatted as sacrebleu does."""
    groups = json.loads(text)
    out = {}
    for group in [groups] if isinstance(groups, dict) else groups:  # one lp: one object, several: a list
        cells = {}
        for row in group["systems"]:
            for metric in METRICS:
                res = row[metric]
                cell = {key: f"{res[key]:.{WIDTH}f}" for key in ("score", "mean", "ci")}
                if res["p_value"] is not None:
                    cell["p"] = f"{res['p_value']:.4f}"
                cells[row["system"], metric] = cell
        out[group["group"]] = (group["baseline"], cells)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", help="comma-separated language pairs (default de-en,zh-en; --quick: de-en)")
    parser.add_argument("--resamples", type=int, help="paired bootstrap resamples (default 1000; --quick: 200)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool (best-of)")
    parser.add_argument("--quick", action="store_true", help="one pair and 200 resamples")
    args = parser.parse_args()
    pairs = (args.pairs or ("de-en" if args.quick else "de-en,zh-en")).split(",")
    resamples = args.resamples or (200 if args.quick else 1000)
    path = DATA / "wmt21" / "segments.parquet"
    if not path.is_file():
        print(f"data not found: {path} (set XLEVAL_DATA to the shared data folder; see its README.md)", file=sys.stderr)
        return 2
    sacrebleu = Path(sys.executable).with_name("sacrebleu")
    if not sacrebleu.is_file():
        print(f"sacrebleu's command line not found: {sacrebleu} (pip install sacrebleu in this venv)", file=sys.stderr)
        return 2
    import pandas as pd

    df = pd.read_parquet(path, columns=["lp", "system", "seg_id", "hypothesis", "reference", "is_human"])
    missing = sorted(set(pairs) - set(df["lp"]))
    if missing:
        print(f"--pairs: {', '.join(missing)} not in {path} (pairs there: {', '.join(sorted(set(df['lp'])))})",
              file=sys.stderr)
        return 2
    df = df[df["lp"].isin(pairs) & ~df["is_human"]].drop(columns="is_human")
    env = {key: val for key, val in os.environ.items() if key not in ("SACREBLEU_SEED", "SACREBLEU_FORMAT")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    metric_args = ["-m", *METRICS, "--paired-bs", "-pbsn", str(resamples)]
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "table.parquet"
        df.to_parquet(table, index=False)
        runs = {}
        for lp in pairs:
            folder = Path(tmp) / lp
            folder.mkdir()
            files, names = _write_pair(df[df["lp"] == lp], folder)
            runs[lp] = ([str(sacrebleu), files[0], "-i", *files[1:], *metric_args, "-f", "text", "-w", str(WIDTH),
                         "-nc"], names, folder)
        xleval = [sys.executable, "-m", "xleval", "score", str(table), *metric_args, "-f", "json", "-q"]
        build = 0.0
        if not _kernels_built(env):  # an installation step: not part of a run
            build, _, _ = _wall([sys.executable, "-m", "xleval.metrics._aot"], env)
        ours, theirs = (float("inf"), float("inf")), {lp: (float("inf"), float("inf")) for lp in pairs}
        for _ in range(args.repeat):  # xleval first, as in bench_cli.py
            wall, cpu, ours_out = _wall(xleval, env)
            ours = min(ours, (wall, cpu))
            theirs_out = {}
            for lp, (cmd, _names, folder) in runs.items():
                wall, cpu, theirs_out[lp] = _wall(cmd, env, folder)
                theirs[lp] = min(theirs[lp], (wall, cpu))
    got = _parse_xleval(ours_out)
    counts = {"score": [0, 0], "mean": [0, 0], "ci": [0, 0], "p": [0, 0]}  # [equal, compared]
    first_diff = None
    for lp, (_cmd, names, _folder) in runs.items():
        want = _parse_sacrebleu(theirs_out[lp], names)
        baseline, cells = got[lp]
        if baseline != names[0]:
            raise SystemExit(f"{lp}: xleval's baseline is {baseline}, sacrebleu's {names[0]}")
        if set(cells) != set(want):
            raise SystemExit(f"{lp}: the two outputs hold different systems or metrics")
        for key, cell in want.items():
            for field, value in cell.items():
                counts[field][1] += 1
                counts[field][0] += cells[key].get(field) == value
                if field == "score" and cells[key][field] != value and first_diff is None:
                    first_diff = f"{lp} {key[0]} {key[1]}: xleval {cells[key][field]}, sacrebleu {value}"
    systems = {lp: len(names) for lp, (_cmd, names, _folder) in runs.items()}
    segments = {lp: int((df["lp"] == lp).sum() // systems[lp]) for lp in pairs}
    load = os.getloadavg()
    print(f"WMT21 {', '.join(f'{lp} ({systems[lp]} systems x {segments[lp]:,} segments)' for lp in pairs)}; "
          f"BLEU + chrF + TER; {resamples} resamples; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
          f"{os.cpu_count()} CPUs")
    if build:
        print(f"compiled kernels built first (installation step, not counted): {build:.1f} s")
    best = f"best of {args.repeat}, " if args.repeat > 1 else ""
    print(f"xleval score TABLE --paired-bs (one process, all pairs; {best}wall s): {ours[0]:.2f} "
          f"(CPU s {ours[1]:.2f})")
    per_pair = ", ".join(f"{lp} {theirs[lp][0]:.2f}" for lp in pairs)
    total, total_cpu = sum(w for w, _ in theirs.values()), sum(c for _, c in theirs.values())
    print(f"sacrebleu REF -i BASE SYS... --paired-bs (one process per pair; {best}wall s): {total:.2f} ({per_pair}) "
          f"(CPU s {total_cpu:.2f})")
    print(f"ratio (sacrebleu / xleval): {total / ours[0]:.1f}x wall clock ({total_cpu / ours[1]:.1f}x CPU time)")
    same = counts["score"][0] == counts["score"][1]
    print(f"outputs agree: system scores {'yes' if same else 'NO'} ({counts['score'][0]}/{counts['score'][1]} equal "
          f"to {WIDTH} decimals); bootstrap mean {counts['mean'][0]}/{counts['mean'][1]}, 95% CI "
          f"{counts['ci'][0]}/{counts['ci'][1]}; p-values {counts['p'][0]}/{counts['p'][1]} (4 decimals)"
          + ("" if same else f"; first difference: {first_diff}"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
