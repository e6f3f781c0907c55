"""Speed of xleval.stats against anchors measured in the same run (ratios, not absolute times).

    .venv/bin/python benchmarks/bench_stats.py [--n 200 20000] [--resamples 1000] [--cells 1000]

Anchors: scipy.stats.bootstrap (vectorised, the reference implementation) and a plain Python loop
over resamples for a corpus-level ratio of sums (what code without sufficient statistics does). PERM-BOTH
(compare_pairwise_accuracy over many cells: the report's raw-against-calibrated test) against its own dense pair
differences, the path it takes below 5,000 pairs, with the same permutations and an identical null checked.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.stats as ss

from xleval import stats


def _time(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[200, 20000])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--cells", type=int, default=1000, help="system cells of the PERM-BOTH comparison")
    args = parser.parse_args()
    for n in args.n:
        run(n, args.resamples)
    pairwise()
    perm_both(args.cells, args.resamples)


def run(n: int, b: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    num, den = rng.poisson(20, n).astype(float), rng.poisson(25, n).astype(float) + 1

    scipy_mean = _time(lambda: ss.bootstrap((x,), np.mean, n_resamples=b, method="percentile",
                                            rng=np.random.default_rng(1)))
    ours_mean = _time(lambda: stats.bootstrap(x, "mean", n_resamples=b, random_state=1))
    strat = np.repeat(np.arange(20), n // 20)
    ours_strat = _time(lambda: stats.bootstrap(x[: strat.size], "mean", strata=strat, n_resamples=b, random_state=1))

    def loop_ratio():
        r = np.random.default_rng(1)
        return [num[i].sum() / den[i].sum() for i in (r.integers(0, n, n) for _ in range(b))]

    loop = _time(loop_ratio, repeat=1)
    ours_ratio = _time(lambda: stats.bootstrap_sums(np.column_stack([num, den]), lambda s: s[..., 0] / s[..., 1],
                                                     n_resamples=b, random_state=1))
    print(f"n={n} resamples={b}")
    print("bootstrap mean (sums path)            vs scipy.stats.bootstrap percentile : "
          f"{scipy_mean / ours_mean:6.2f}x faster")
    print("stratified bootstrap mean (20 strata) vs scipy unstratified             : "
          f"{scipy_mean / ours_strat:6.2f}x faster")
    print(f"bootstrap_sums ratio of sums          vs Python loop over resamples     : {loop / ours_ratio:6.2f}x faster")


def pairwise() -> None:
    rng = np.random.default_rng(0)
    m = 2000
    h, met = rng.normal(size=m), rng.normal(size=m)
    kendall = _time(lambda: ss.kendalltau(met, h))
    acc = _time(lambda: stats.pairwise_accuracy(met, h, tie_calibration=False))
    acc_cal = _time(lambda: stats.pairwise_accuracy(met, h), repeat=1)

    print(f"pairwise_accuracy n={m} (no calibration) / scipy kendalltau  : {acc / kendall:6.2f}x the time")
    print(f"pairwise_accuracy n={m} (tie calibration) / scipy kendalltau : {acc_cal / kendall:6.2f}x the time")


def perm_both(cells: int, b: int) -> None:
    """Raw against calibrated cross-group accuracy of system cells (31 groups): human scores rounded to thirds
    of a point (many cells tie, as means of 3 integer labels do) and continuous ones (no tie)."""
    from xleval.stats import _pairwise

    rng = np.random.default_rng(0)
    groups = rng.integers(0, 31, size=cells)
    quality = rng.normal(70, 8, size=cells)
    raw = quality + rng.normal(0, 6, size=cells) + 3 * (groups % 5)
    calibrated = quality + rng.normal(0, 4, size=cells)
    for label, human in (("human scores in thirds (ties)", np.round(quality + rng.normal(0, 5, cells)) / 3),
                         ("continuous human means (no tie)", quality + rng.normal(0, 1, cells))):
        resampling = stats.Resampling(n_resamples=b, random_state=1)

        def compare(human=human, resampling=resampling):
            return stats.compare_pairwise_accuracy(raw, calibrated, human, groups=groups, pairs="cross",
                                                   resampling=resampling)

        form_time = _time(compare, repeat=1)
        form = compare()
        saved = _pairwise._FORM_PAIRS
        _pairwise._FORM_PAIRS = 10**12  # the dense pair differences: the anchor
        try:
            dense_time = _time(compare, repeat=1)
            dense = compare()
        finally:
            _pairwise._FORM_PAIRS = saved
        same = np.array_equal(form.null_distribution, dense.null_distribution) and form.p_value == dense.p_value
        tied = int((np.subtract.outer(human, human)[np.triu_indices(cells, 1)] == 0).sum())
        print(f"PERM-BOTH {cells} cells, {b} permutations, {label}, {tied} tied pairs: "
              f"{dense_time / form_time:6.2f}x faster than the dense differences ({form_time:.2f} s against "
              f"{dense_time:.2f} s); identical null and p-value: {same}")


if __name__ == "__main__":
    main()
