"""Run a command and report the peak of the summed RSS of its whole process tree (Linux /proc).

``/usr/bin/time -v`` reports the largest single process; with pytest-xdist workers or CLI tests
in subprocesses the memory that matters is the sum over the tree at one moment, which this samples
every ``--interval`` seconds (shared pages are counted in each process, so the figure is an upper
bound).

Usage: python .ci/peak_rss.py [--interval 0.2] -- COMMAND...   (exit status is the command's)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()[:100]
    except OSError:
        return "?"


def tree_rss_kib(root: int) -> list[tuple[int, int]]:
    """(RSS in KiB, pid) of ``root`` and each of its descendants."""
    tree = _children()
    stack, found = [root], []
    while stack:
        pid = stack.pop()
        found.append((_rss_kib(pid), pid))
        stack.extend(tree.get(pid, ()))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    start = time.monotonic()
    proc = subprocess.Popen(command)
    peak, peak_at, top = 0, 0.0, []
    n_procs = 0
    while proc.poll() is None:
        found = tree_rss_kib(proc.pid)
        rss = sum(r for r, _ in found)
        if rss > peak:
            peak, peak_at, n_procs = rss, time.monotonic() - start, len(found)
            top = [(r, _cmdline(pid)) for r, pid in sorted(found, reverse=True)[:4]]
        time.sleep(args.interval)
    sys.stderr.write(f"peak tree RSS: {peak / 1024**2:.2f} GiB ({n_procs} processes, at {peak_at:.0f} s of "
                     f"{time.monotonic() - start:.0f} s); largest then:\n")
    for r, cmd in top:
        sys.stderr.write(f"  {r / 1024**2:.2f} GiB  {cmd}\n")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
