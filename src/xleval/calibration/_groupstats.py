"""Mergeable per-group statistics: count, mean, M2, min, max (and an optional quantile sketch).

``GroupStats.from_values`` computes them per integer group code with ``np.bincount`` (no Python
loop over rows, two passes per chunk for accuracy); ``merge`` combines two summaries with the
parallel update of Chan, Golub & LeVeque (1979)::

    n = na + nb,  d = mean_b - mean_a,  mean = mean_a + d * nb / n,  M2 = M2a + M2b + d^2 na nb / n

so fitting in chunks, in parallel or online gives the one-pass numbers (to rounding, ~1e-15
relative). Counts are float weights so that exponential forgetting (``scaled``) stays exact.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["GroupStats", "QuantileSketch", "weighted_quantile", "cdf_points"]


@dataclass(frozen=True)
class QuantileSketch:
    """Weighted points summarising one group's distribution; exact (all values, weight 1) while the
    group holds at most ``capacity`` values, else compressed to ``capacity`` equal-weight points at
    the weighted mid-quantiles (rank error <= 1/capacity of the group's weight)."""

    values: np.ndarray
    weights: np.ndarray
    capacity: int = 20000

    @classmethod
    def from_values(cls, values: np.ndarray, capacity: int = 20000) -> QuantileSketch:
        v = np.sort(np.asarray(values, dtype=np.float64))
        return cls(v, np.ones_like(v), capacity)._compressed()

    @property
    def exact(self) -> bool:
        return bool(np.all(self.weights == 1.0))

    @property
    def weight(self) -> float:
        return float(self.weights.sum())

    def merge(self, other: QuantileSketch) -> QuantileSketch:
        values = np.concatenate([self.values, other.values])
        weights = np.concatenate([self.weights, other.weights])
        order = np.argsort(values, kind="stable")
        return QuantileSketch(values[order], weights[order], max(self.capacity, other.capacity))._compressed()

    def scaled(self, factor: float) -> QuantileSketch:
        return QuantileSketch(self.values, self.weights * factor, self.capacity)

    def quantile(self, q: np.ndarray | float) -> np.ndarray | float:
        """Weighted quantile with the 'mid-point' plotting position (the median of 1..n is exact)."""
        return weighted_quantile(self.values, self.weights, q, assume_sorted=True)

    def cdf_points(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values and their mid-rank CDF, (cum - w/2) / total; strictly increasing in both."""
        return cdf_points(self.values, self.weights)

    def _compressed(self) -> QuantileSketch:
        if len(self.values) <= self.capacity:
            return self
        total = self.weights.sum()
        q = (np.arange(self.capacity) + 0.5) / self.capacity
        points = np.asarray(QuantileSketch(self.values, self.weights, self.capacity).quantile(q))
        return QuantileSketch(points, np.full(self.capacity, total / self.capacity), self.capacity)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: np.ndarray | float, *,
                      assume_sorted: bool = False) -> np.ndarray | float:
    """Quantile(s) ``q`` of weighted points with the mid-point plotting position ``(cum - w/2) / total``,
    interpolated linearly (the median of 1..n is exact). Points of zero weight are ignored."""
    if not assume_sorted:
        keep = weights > 0
        values, weights = values[keep], weights[keep]
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
    cum = np.cumsum(weights)
    return np.interp(q, (cum - 0.5 * weights) / cum[-1], values)


def cdf_points(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of weighted points (zero weights ignored) and their mid-rank CDF
    ``(cum - w/2) / total``: both strictly increasing, the knots of the quantile map."""
    keep = weights > 0
    uniq, inverse = np.unique(values[keep], return_inverse=True)
    w = np.bincount(inverse, weights=weights[keep], minlength=len(uniq))
    cum = np.cumsum(w)
    return uniq, (cum - 0.5 * w) / cum[-1]


@dataclass(frozen=True)
class GroupStats:
    """Per-group count (float weight), mean, M2, min, max; ``keys[i]`` labels row ``i`` of each array.

    ``n_nonfinite`` counts NaN/inf values seen (excluded from the moments). ``sketches`` is
    None unless quantile summaries were requested.
    """

    keys: tuple[Hashable, ...]
    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    min: np.ndarray
    max: np.ndarray
    n_nonfinite: np.ndarray
    sketches: tuple[QuantileSketch, ...] | None = field(default=None)

    # construction ---------------------------------------------------------------------------
    @classmethod
    def empty(cls, keys: Sequence[Hashable] = (), with_sketch: bool = False) -> GroupStats:
        k = len(keys)
        sketches = tuple(QuantileSketch.from_values(np.empty(0)) for _ in range(k)) if with_sketch else None
        return cls(tuple(keys), np.zeros(k), np.zeros(k), np.zeros(k), np.full(k, np.inf), np.full(k, -np.inf),
                   np.zeros(k, dtype=np.int64), sketches)

    @classmethod
    def from_values(cls, values: np.ndarray, codes: np.ndarray, keys: Sequence[Hashable],
                    with_sketch: bool = False, capacity: int = 20000) -> GroupStats:
        """Statistics of ``values`` grouped by integer ``codes`` (0..len(keys)-1)."""
        values = np.asarray(values, dtype=np.float64)
        codes = np.asarray(codes, dtype=np.intp)
        k = len(keys)
        finite = np.isfinite(values)
        if finite.all():  # the usual case: no copies of the scores and codes (a batch's memory, 2x its columns)
            n_nonfinite = np.zeros(k, dtype=np.int64)
            v, c = values, codes
        else:
            n_nonfinite = np.bincount(codes[~finite], minlength=k).astype(np.int64)
            v, c = values[finite], codes[finite]
        count = np.bincount(c, minlength=k).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            mean = np.bincount(c, weights=v, minlength=k) / count
            mean = np.where(count > 0, mean, 0.0)
            dev = mean[c]  # (v - mean[c]) ** 2 in one buffer: the same values, bit for bit
            np.subtract(v, dev, out=dev)
            np.square(dev, out=dev)
            m2 = np.bincount(c, weights=dev, minlength=k)
            del dev
        _check_representable(keys, count, mean, m2, v, c)
        gmin = np.full(k, np.inf)
        gmax = np.full(k, -np.inf)
        np.minimum.at(gmin, c, v)
        np.maximum.at(gmax, c, v)
        sketches = None
        if with_sketch:
            order = np.argsort(c, kind="stable")
            bounds = np.searchsorted(c[order], np.arange(k + 1))
            sv = v[order]
            sketches = tuple(QuantileSketch.from_values(sv[bounds[i]:bounds[i + 1]], capacity) for i in range(k))
        return cls(tuple(keys), count, mean, m2, gmin, gmax, n_nonfinite, sketches)

    # algebra ----------------------------------------------------------------------------------
    def merge(self, other: GroupStats) -> GroupStats:
        """Exact combination of two summaries (keys of ``other`` not in ``self`` are appended)."""
        keys = list(self.keys)
        index = {key: i for i, key in enumerate(keys)}
        for key in other.keys:
            if key not in index:
                index[key] = len(keys)
                keys.append(key)
        a = self._aligned(keys, index)
        b = other._aligned(keys, index)
        n = a.count + b.count
        delta = b.mean - a.mean
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            share_b = np.where(n > 0, b.count / n, 0.0)
            mean = a.mean + delta * share_b
            m2 = a.m2 + b.m2 + np.where(n > 0, delta * delta * a.count * share_b, 0.0)
        _check_representable(keys, n, mean, m2, np.concatenate([a.min, a.max, b.min, b.max]), None)
        sketches = None
        if a.sketches is not None and b.sketches is not None:
            sketches = tuple(sa.merge(sb) for sa, sb in zip(a.sketches, b.sketches, strict=True))
        return GroupStats(tuple(keys), n, mean, m2, np.minimum(a.min, b.min), np.maximum(a.max, b.max),
                          a.n_nonfinite + b.n_nonfinite, sketches)

    def scaled(self, factor: float) -> GroupStats:
        """Down-weight every observation by ``factor`` (exponential forgetting); means are unchanged."""
        sketches = tuple(s.scaled(factor) for s in self.sketches) if self.sketches is not None else None
        return GroupStats(self.keys, self.count * factor, self.mean, self.m2 * factor, self.min, self.max,
                          self.n_nonfinite, sketches)

    def _aligned(self, keys: list, index: dict) -> GroupStats:
        if list(self.keys) == keys:
            return self
        k = len(keys)
        pos = np.fromiter((index[key] for key in self.keys), dtype=np.intp, count=len(self.keys))
        out = GroupStats.empty(keys, with_sketch=self.sketches is not None)
        count, mean, m2 = out.count.copy(), out.mean.copy(), out.m2.copy()
        gmin, gmax, nn = out.min.copy(), out.max.copy(), out.n_nonfinite.copy()
        count[pos], mean[pos], m2[pos] = self.count, self.mean, self.m2
        gmin[pos], gmax[pos], nn[pos] = self.min, self.max, self.n_nonfinite
        sketches = None
        if self.sketches is not None:
            assert out.sketches is not None  # made with_sketch above
            lst = list(out.sketches)
            for i, s in zip(pos, self.sketches, strict=True):
                lst[i] = s
            sketches = tuple(lst)
        assert k == len(count)
        return GroupStats(tuple(keys), count, mean, m2, gmin, gmax, nn, sketches)

    # derived ----------------------------------------------------------------------------------
    def var(self, ddof: int = 0) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.count > ddof, self.m2 / (self.count - ddof), np.nan)

    def std(self, ddof: int = 0) -> np.ndarray:
        return np.sqrt(self.var(ddof))

    def coarsen(self, labels: Sequence[Hashable]) -> GroupStats:
        """Merge groups into coarser ones: group ``i`` goes to ``labels[i]`` (e.g. language pair -> target
        language). Exact by the same parallel update, so coarse levels never need a second pass over rows."""
        out = GroupStats.empty(with_sketch=self.sketches is not None)
        for label in dict.fromkeys(labels):
            rows = [i for i, lab in enumerate(labels) if lab == label]
            out = out.merge(self.take(rows, key=label))
        return out

    def take(self, rows: Sequence[int], key: Hashable = ...) -> GroupStats:
        """Sub-summary of the given rows (optionally relabelled to one key, for merging groups)."""
        rows = list(rows)
        keys = tuple(self.keys[i] for i in rows) if key is ... else (key,) * len(rows)
        sketches = tuple(self.sketches[i] for i in rows) if self.sketches is not None else None
        sub = GroupStats(keys, self.count[rows], self.mean[rows], self.m2[rows], self.min[rows], self.max[rows],
                         self.n_nonfinite[rows], sketches)
        if key is ... or len(rows) <= 1:
            return sub
        merged = GroupStats.empty((key,), with_sketch=sketches is not None)
        for i in range(len(rows)):
            merged = merged.merge(GroupStats((key,), sub.count[[i]], sub.mean[[i]], sub.m2[[i]], sub.min[[i]],
                                             sub.max[[i]], sub.n_nonfinite[[i]],
                                             (sketches[i],) if sketches is not None else None))
        return merged

    def to_dict(self) -> dict:
        out = {
            "keys": [list(k) if isinstance(k, tuple) else k for k in self.keys],
            "count": self.count.tolist(), "mean": self.mean.tolist(), "m2": self.m2.tolist(),
            "min": self.min.tolist(), "max": self.max.tolist(), "n_nonfinite": self.n_nonfinite.tolist(),
        }
        if self.sketches is not None:
            out["sketches"] = [{"values": s.values.tolist(), "weights": s.weights.tolist(), "capacity": s.capacity}
                               for s in self.sketches]
        return out

    @classmethod
    def from_dict(cls, d: dict) -> GroupStats:
        keys = tuple(tuple(k) if isinstance(k, list) else k for k in d["keys"])
        sketches = None
        if d.get("sketches") is not None:
            sketches = tuple(QuantileSketch(np.asarray(s["values"], dtype=np.float64),
                                            np.asarray(s["weights"], dtype=np.float64), int(s["capacity"]))
                             for s in d["sketches"])
        arr = lambda name: np.asarray(d[name], dtype=np.float64)  # noqa: E731
        out = cls(keys, arr("count"), arr("mean"), arr("m2"), arr("min"), arr("max"),
                  np.asarray(d["n_nonfinite"], dtype=np.int64), sketches)
        _check_loaded(out)
        return out


def _check_loaded(stats: GroupStats) -> None:
    """Statistics read from a file are what ``from_values``/``merge`` could have made: one value per
    key everywhere, distinct keys, counts and sums of squares that are not negative (ValueError)."""
    k = len(stats.keys)
    arrays = (stats.count, stats.mean, stats.m2, stats.min, stats.max, stats.n_nonfinite)
    if any(a.shape != (k,) for a in arrays) or (stats.sketches is not None and len(stats.sketches) != k):
        raise ValueError("per-group statistics of different lengths")
    if len(set(stats.keys)) != k:
        raise ValueError("a group appears twice")
    if (stats.count < 0).any() or (stats.m2 < 0).any() or (stats.n_nonfinite < 0).any():
        raise ValueError("negative counts or sums of squares")


def _check_representable(keys, count: np.ndarray, mean: np.ndarray, m2: np.ndarray, values: np.ndarray,
                         codes: np.ndarray | None) -> None:
    """Finite scores whose sum or squared deviations overflow float64 (magnitudes near 1e308) would give
    an infinite spread and calibrated values of 0 or NaN: refuse them with the group and a fix."""
    bad = (count > 0) & ~(np.isfinite(mean) & np.isfinite(m2))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        finite = values[np.isfinite(values)] if codes is None else values[codes == i]
        largest = float(np.max(np.abs(finite))) if finite.size else float("inf")
        from ..exceptions import InputError

        raise InputError(f"group {keys[i]!r}: the spread of its scores overflows floating point (scores as large as "
                         f"{largest:.3g}); rescale the scores (e.g. divide them by 1e300) before calibrating")
