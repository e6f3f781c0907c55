"""Speed of the cross-pair accuracy bootstrap and its paired test against anchors measured in the same run.

    .venv/bin/python benchmarks/bench_pair_bootstrap.py [--groups 31] [--systems 34] [--resamples 1000]

The report's agreement section and the calibration decision bootstrap the accuracy of system pairs from different
groups (WMT25: 31 pairs x about 34 systems, 550,000 cross pairs) and test raw against calibrated accuracy by
permutation. Anchors, the code before this benchmark was written:
* the (resamples x pairs) weight matrix ``counts[:, i] * counts[:, j]`` times the pairs' outcomes, against
  ``resampled_pair_sums`` (the quadratic form c' V c; the same sums, exact);
* tie-calibrated acc23 by sorting every permutation's |differences|, against ``_acc_rows``, which skips the sort
  when no human pair ties (then the best epsilon adds nothing) and, with few ties, counts at the tied pairs'
  differences only (the same values).
Each line prints the ratio and checks the two give equal results.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from xleval.stats import _grouped_bootstrap as gb
from xleval.stats._pairwise import _acc_rows


def _time(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _acc_rows_sorted(dm: np.ndarray, dh: np.ndarray) -> np.ndarray:
    """The anchor: tie calibration by a sort of every row (the algorithm with no shortcut)."""
    htie = dh == 0
    con = (np.sign(dm) == np.sign(dh)) & (dm != 0) & ~htie
    ad = np.abs(dm)
    order = np.argsort(ad, axis=1, kind="stable")
    ad = np.take_along_axis(ad, order, axis=1)
    gain = np.cumsum(htie[order].astype(np.int64) - np.take_along_axis(con, order, axis=1), axis=1)
    last = np.concatenate([ad[:, 1:] != ad[:, :-1], np.ones((len(ad), 1), dtype=bool)], axis=1)
    best = np.where(last, gain, np.iinfo(np.int64).min).max(axis=1)
    best = np.where(ad[:, 0] > 0, np.maximum(best, 0), best)
    return (con.sum(axis=1) + best) / dm.shape[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=31)
    parser.add_argument("--systems", type=int, default=34)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(args.groups), args.systems)
    human = rng.normal(size=len(groups)) + groups * 0.1
    metric = human + rng.normal(scale=0.5, size=len(groups))
    counts = gb.stratified_resample_counts(groups, args.resamples, rng)
    iu, ju = gb.pair_indices(groups, "cross")
    correct = gb.pairs_correct(metric, human, iu, ju, 0.0)
    print(f"{len(groups)} systems in {args.groups} groups, {len(iu):,} cross pairs, {args.resamples} resamples")

    def weights():
        w = counts[:, iu] * counts[:, ju]
        return (w @ correct) / w.sum(axis=1)

    anchor, want = _time(weights, repeat=1)
    ours, got = _time(lambda: gb.resampled_pair_accuracy(correct, counts, iu, ju))
    assert np.array_equal(got, want)
    print(f"bootstrap of cross-pair accuracy   vs (B x P) weight matrix : {anchor / ours:7.1f}x faster "
          f"({ours:.2f} s against {anchor:.2f} s; equal)")

    dh = human[iu] - human[ju]
    swaps = rng.random((20, len(groups))) < 0.5  # 20 permutations of PERM-BOTH, as the paired test draws them
    rows = np.where(swaps, metric, human + rng.normal(scale=0.7, size=len(groups)))
    dm = rows[:, iu] - rows[:, ju]
    anchor, want = _time(lambda: _acc_rows_sorted(dm, dh), repeat=1)
    ours, got = _time(lambda: _acc_rows(dm, dh, calibrate=True))
    assert np.allclose(got, want, rtol=0, atol=1e-15)
    print(f"tie-calibrated acc23, 20 permutations vs sort of every row   : {anchor / ours:7.1f}x faster "
          f"({ours:.3f} s against {anchor:.2f} s; equal; no human tie)")
    tied = np.round(human, 2)  # human means on a coarse grid: a few cells of equal means, as judge labels give
    dh = tied[iu] - tied[ju]
    anchor, want = _time(lambda: _acc_rows_sorted(dm, dh), repeat=1)
    ours, got = _time(lambda: _acc_rows(dm, dh, calibrate=True))
    assert np.array_equal(got, want)
    print(f"tie-calibrated acc23, 20 permutations vs sort of every row   : {anchor / ours:7.1f}x faster "
          f"({ours:.3f} s against {anchor:.2f} s; equal; {int((dh == 0).sum()):,} human ties)")


if __name__ == "__main__":
    main()
