"""Per-group location and scale of LGN: estimated, shrunk when the group is small, flagged when degenerate.

* ``zscore``  : mean and population std (LGN's standard form);
* ``robust``  : median and 1.4826 * MAD (consistent with the std for normal data);
* ``quantile``: mean and std, which only serve shrinkage, the linear tails and intervals.

Small groups (``n < min_count``) are shrunk toward the median of the well-estimated groups'
parameters with limited-fluctuation credibility ``Z = sqrt(n / min_count)`` (Longley-Cook 1962):
``c = Z c_g + (1 - Z) c_prior``, ``s^2 = Z s_g^2 + (1 - Z) s_prior^2``. A group whose scale is at
most ``sigma_floor * max(1, |c|)`` is degenerate: it is never divided by, it falls back.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from ._groupstats import GroupStats, weighted_quantile

__all__ = ["GroupParams", "group_params", "pooled_params", "MAD_TO_SD", "METHODS"]

METHODS = ("zscore", "robust", "quantile")
MAD_TO_SD = 1.482602218505602  # 1 / Phi^-1(3/4)


@dataclass(frozen=True)
class GroupParams:
    """Fitted parameters of one level: per key the location, scale, n and flags."""

    keys: tuple[Hashable, ...]
    center: np.ndarray
    scale: np.ndarray
    count: np.ndarray
    shrunk: np.ndarray
    degenerate: np.ndarray

    @property
    def usable(self) -> np.ndarray:
        """Groups that calibrate their own rows: seen and not degenerate."""
        return ~self.degenerate & (self.count > 0)


def robust_center_scale(values: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """Weighted median and 1.4826 * weighted MAD of weighted points."""
    center = float(weighted_quantile(values, weights, 0.5))
    return center, MAD_TO_SD * float(weighted_quantile(np.abs(values - center), weights, 0.5))


def group_params(stats: GroupStats, method: str, min_count: int, sigma_floor: float) -> GroupParams:
    """Location and scale of every group of ``stats`` (see the module docstring)."""
    n = stats.count
    if method == "robust":
        assert stats.sketches is not None  # kept for every method but zscore
        pairs = [robust_center_scale(s.values, s.weights) if s.weight > 0 else (np.nan, np.nan) for s in stats.sketches]
        center = np.array([c for c, _ in pairs], dtype=float)
        scale = np.array([s for _, s in pairs], dtype=float)
    else:
        center, scale = stats.mean.copy(), stats.std(ddof=0)
    with np.errstate(invalid="ignore"):
        degenerate = ~(scale > sigma_floor * np.maximum(1.0, np.abs(center)))
    shrunk = (n < min_count) & ~degenerate
    if shrunk.any():
        solid = ~degenerate & ~shrunk
        pool = solid if solid.any() else ~degenerate
        c0, v0 = np.median(center[pool]), np.median(scale[pool] ** 2)
        z = np.sqrt(np.minimum(1.0, n / min_count))
        center = np.where(shrunk, z * center + (1 - z) * c0, center)
        scale = np.where(shrunk, np.sqrt(z * scale**2 + (1 - z) * v0), scale)
    return GroupParams(stats.keys, center, scale, n, shrunk, degenerate)


def pooled_params(params: GroupParams) -> tuple[float, float]:
    """The terminal ``pooled`` fallback: the median location and scale of the usable groups."""
    usable = params.usable
    if not usable.any():
        return np.nan, np.nan
    return float(np.median(params.center[usable])), float(np.median(params.scale[usable]))
