"""Resampling a weighted sample: bootstrap counts over weighted points, percentile bounds per column
(over the finite values).

Some summaries keep a compressed sample rather than rows: weighted points such as a quantile
sketch (``xleval.calibration.QuantileSketch``). The bootstrap of the empirical distribution those
points stand for draws ``size`` points with replacement, each with probability proportional to its
weight: one resample is a multinomial count vector over the points. A statistic of a resample is
then a weighted statistic of the points with the counts as weights (no rows are materialised).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from xleval._base.seeding import make_rng
from xleval.exceptions import InputError
from xleval.stats import _validate as v

__all__ = ["weighted_bootstrap_counts", "percentile_bounds"]


def weighted_bootstrap_counts(weights: Any, *, n_resamples: int = 1000, size: int | None = None,
                              random_state: Any = None) -> np.ndarray:
    """A ``(n_resamples, k)`` integer matrix: how often each of ``k`` weighted points is drawn in each
    resample of ``size`` draws (default: the total weight rounded, at least 1, i.e. the sample's size
    when the weights are counts). Pass one ``numpy.random.Generator`` as ``random_state`` to draw
    several samples' resamples from one reproducible stream."""
    w = v.as_float_array(weights, "weights")
    v.check_min_size(w, 1, "weights")
    total = float(w.sum())
    if (w < 0).any() or not total > 0:
        raise InputError("weights must be non-negative with a positive sum")
    n_resamples = v.check_n_resamples(n_resamples)
    m = max(round(total), 1) if size is None else v.check_n_resamples(size)
    rng, _ = make_rng(random_state)
    return rng.multinomial(m, w / total, size=n_resamples)


def percentile_bounds(distribution: Any, level: float = 0.95, *, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval at confidence ``level`` of resampled values along ``axis`` (one interval
    per remaining position, e.g. per column of a ``(n_resamples, m)`` matrix).

    Only finite values count: a resample where a statistic is undefined (NaN, e.g. a joint bootstrap
    carried through a per-item map) leaves the others' interval as it is; a position with no finite
    value gets NaN bounds."""
    level = v.check_level(level)
    dist = np.asarray(distribution, dtype=np.float64)
    alpha = (1.0 - level) / 2.0
    if np.isfinite(dist).all():
        return np.quantile(dist, alpha, axis=axis), np.quantile(dist, 1.0 - alpha, axis=axis)
    moved = np.moveaxis(dist, axis, 0)
    columns = moved.reshape(moved.shape[0], -1)
    out = np.full((2, columns.shape[1]), np.nan)
    for j in range(columns.shape[1]):  # a loop only when some value is not finite: the rare path
        col = columns[:, j][np.isfinite(columns[:, j])]
        if col.size:
            out[:, j] = np.quantile(col, [alpha, 1.0 - alpha])
    shape = moved.shape[1:]
    return out[0].reshape(shape), out[1].reshape(shape)
