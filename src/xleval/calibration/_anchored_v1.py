"""Anchored calibrators saved in format version 1 (xleval 0.1.0) keep loading and give the numbers
they gave: per-group linear or isotonic maps, shrunk toward the pooled map with credibility
``Z = sqrt(n / min_count)``, the pooled map for unseen or degenerate groups. Only applying them is
supported; refit with this xleval for sparse labels, intervals and the between-system slope."""
from __future__ import annotations

import numpy as np

__all__ = ["LegacyMaps"]


class LegacyMaps:
    """The fitted state of a format-1 file and its transform."""

    def __init__(self, payload: dict):
        self.payload = payload
        self.pooled = payload["pooled"]
        self.groups = {str(g): m for g, m in payload["groups"].items()}
        _apply(self.pooled, np.zeros(1))  # a malformed map fails at load, not at use

    def transform(self, x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Calibrated scores and the groups that fell back to the pooled map."""
        out = np.full(len(x), np.nan)
        fell = []
        for g in np.unique(labels):
            rows = labels == g
            m = self.groups.get(str(g))
            if m is None or m["degenerate"]:
                fell.append(str(g))
                out[rows] = _apply(self.pooled, x[rows])
            else:
                z = m["credibility"]
                out[rows] = z * _apply(m["map"], x[rows]) + (1 - z) * _apply(self.pooled, x[rows])
        return out, fell

    def own(self, label: str) -> bool:
        m = self.groups.get(str(label))
        return m is not None and not m["degenerate"]


def _apply(m: dict, x: np.ndarray) -> np.ndarray:
    if m["kind"] == "linear":
        return m["intercept"] + m["slope"] * x
    out = np.interp(x, np.asarray(m["x"], dtype=float), np.asarray(m["y"], dtype=float))
    return np.where(np.isnan(x), np.nan, out)
