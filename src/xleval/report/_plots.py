"""Figures of the MT report. Each builder takes data already computed and returns a matplotlib
Figure (created without pyplot, so no global state and no GUI backend)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["score_distributions_figure", "group_means_figure"]


def score_distributions_figure(groups: Sequence[str], raw: Sequence[np.ndarray], calibrated: Sequence[np.ndarray],
                               *, score: str, group_label: str, target_mean: float | None = None):
    """The seed's section 3.4 figure: per-group box plots of raw (left) and calibrated (right)
    scores. Boxes show quartiles, whiskers 1.5 IQR, diamonds the means."""
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    width = min(16.0, 4.0 + 0.9 * len(groups))
    fig = Figure(figsize=(width, 4.2), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, values, name in ((axes[0], raw, f"raw {score}"), (axes[1], calibrated, f"calibrated {score}")):
        _boxes(ax, groups, values)
        ax.set_title(f"{name} by {group_label}")
        ax.set_xlabel(group_label)
        ax.set_ylabel(name)
    if target_mean is not None:
        axes[1].axhline(target_mean, color="#888", linestyle="--", linewidth=1, label="target mean")
        axes[1].legend(loc="lower right", fontsize=8, frameon=False)
    return fig


def _boxes(ax, groups, values) -> None:
    data = [np.asarray(v, dtype=float) for v in values]
    data = [v[np.isfinite(v)] for v in data]
    positions = np.arange(1, len(groups) + 1)
    keep = [i for i, v in enumerate(data) if len(v)]
    ax.boxplot([data[i] for i in keep], positions=positions[keep], widths=0.6, showmeans=True,
               patch_artist=True, boxprops={"facecolor": "#cfe0f3", "edgecolor": "#2b5d8a"},
               medianprops={"color": "#c0392b"}, meanprops={"marker": "D", "markerfacecolor": "#222",
                                                             "markeredgecolor": "#222", "markersize": 4},
               flierprops={"marker": ".", "markersize": 2, "alpha": 0.4})
    ax.set_xticks(positions, list(groups), rotation=45 if len(groups) > 8 else 0)
    ax.grid(axis="y", color="#eee")


def group_means_figure(groups: Sequence[str], before: Sequence[float], after: Sequence[float], *,
                       score: str, group_label: str, after_span: float | None = None):
    """Per-group means before and after calibration on their own axes (the two scales differ).
    ``after_span`` (e.g. the target std) is the least half-height of the right axis, so that
    rounding noise around a common mean is not blown up to fill the panel."""
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    fig = Figure(figsize=(min(12.0, 3.0 + 0.6 * len(groups)), 3.4), layout="constrained")
    axes = fig.subplots(1, 2, sharex=True)
    x = np.arange(len(groups))
    for ax, vals, name, colour in ((axes[0], before, "raw", "#2b5d8a"), (axes[1], after, "calibrated", "#27865a")):
        ax.plot(x, np.asarray(vals, dtype=float), "o", color=colour)
        ax.set_title(f"mean {name} {score} per {group_label}")
        ax.set_xticks(x, list(groups), rotation=45 if len(groups) > 8 else 0)
        ax.grid(axis="y", color="#eee")
    _min_span(axes[1], np.asarray(after, dtype=float), after_span)
    return fig


def _min_span(ax, values: np.ndarray, span: float | None) -> None:
    finite = values[np.isfinite(values)]
    if span is None or not len(finite) or np.ptp(finite) >= span:
        return
    mid = 0.5 * (finite.min() + finite.max())
    ax.set_ylim(mid - span, mid + span)
