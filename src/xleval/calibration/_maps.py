"""The two maps of LGN, each written once and used in both directions.

* linear (``zscore``, ``robust``, and the ``pooled`` fallback of every method):
  ``y = a x + b`` with ``a = target_std / scale``, ``b = target_mean - center * a``; the inverse is
  ``x = (y - b) / a``.
* quantile: ``y = target_mean + target_std * Phi^-1(F(x))`` with ``F`` the mid-rank empirical CDF
  of a group's points, linearly interpolated between distinct values and continued linearly
  (slope ``1 / scale``) beyond them, so the map is strictly increasing and invertible.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._groupstats import cdf_points

__all__ = ["linear_coefficients", "QuantileMap"]


def linear_coefficients(center, scale, target: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)`` of the linear map ``a x + b`` taking ``center``/``scale`` to the target mean/std."""
    t_mean, t_std = (float(v) for v in target)
    a = t_std / np.asarray(scale, dtype=np.float64)
    return a, t_mean - np.asarray(center, dtype=np.float64) * a


@dataclass(frozen=True)
class QuantileMap:
    """The quantile map of one group: knots ``values`` -> normal scores ``z`` and the tail slope."""

    values: np.ndarray
    z: np.ndarray
    scale: float

    @classmethod
    def from_points(cls, values: np.ndarray, weights: np.ndarray, scale: float) -> QuantileMap:
        knots, probs = cdf_points(values, weights)
        z = special.ndtri(probs) if len(knots) > 1 else np.zeros(1)
        return cls(knots, z, float(scale))

    def forward(self, x: np.ndarray, target: tuple[float, float]) -> np.ndarray:
        t_mean, t_std = (float(v) for v in target)
        return _through(x, self.values, self.z, 1.0 / self.scale) * t_std + t_mean

    def inverse(self, y: np.ndarray, target: tuple[float, float]) -> np.ndarray:
        t_mean, t_std = (float(v) for v in target)
        return _through(((y - t_mean) / t_std), self.z, self.values, self.scale)


def _through(x: np.ndarray, xp: np.ndarray, fp: np.ndarray, slope: float) -> np.ndarray:
    """Piecewise linear through the knots ``(xp, fp)``, continued with ``slope`` beyond them."""
    y = np.interp(x, xp, fp)
    y = np.where(x < xp[0], fp[0] + (x - xp[0]) * slope, y)
    return np.where(x > xp[-1], fp[-1] + (x - xp[-1]) * slope, y)
