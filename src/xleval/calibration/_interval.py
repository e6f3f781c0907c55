"""Confidence intervals of calibrated scores from the sampling uncertainty of the group statistics.

* ``zscore``: delta method, ``Var(z_hat) ~ (1 + z^2 / 2) / n`` for a near-normal calibration set;
* ``robust``/``quantile``: percentile bootstrap of the group's stored sample (its quantile sketch,
  exact below ``sketch_capacity``), resampled by :func:`xleval.stats.weighted_bootstrap_counts`;
  each resample refits the group's map and maps the rows' scores.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._estimates import robust_center_scale
from ._groupstats import QuantileSketch
from ._maps import QuantileMap, linear_coefficients

__all__ = ["delta_halfwidth", "bootstrap_bounds"]


def delta_halfwidth(z: np.ndarray, n: np.ndarray, confidence: float, target_std: float) -> np.ndarray:
    """Half-width of the delta-method interval of a z-score ``z`` from a group of ``n`` values."""
    return special.ndtri(0.5 + confidence / 2) * target_std * np.sqrt((1 + z * z / 2) / n)


def bootstrap_bounds(method: str, sketch: QuantileSketch, x: np.ndarray, target: tuple[float, float],
                     confidence: float, n_resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds of the calibrated values of ``x`` when the group's sample is resampled."""
    from ..stats import percentile_bounds, weighted_bootstrap_counts  # scipy.stats only when intervals are asked

    counts = weighted_bootstrap_counts(sketch.weights, n_resamples=n_resamples, random_state=rng)
    sims = np.empty((n_resamples, len(x)))
    for b, weights in enumerate(counts.astype(np.float64)):
        if method == "robust":
            a, c = linear_coefficients(*robust_center_scale(sketch.values, weights), target)
            sims[b] = x * a + c
        else:
            keep = weights > 0
            values, w = sketch.values[keep], weights[keep]
            sd = math.sqrt(np.average((values - np.average(values, weights=w)) ** 2, weights=w)) or 1.0
            sims[b] = QuantileMap.from_points(values, w, sd).forward(x, target)
    return percentile_bounds(sims, confidence, axis=0)
