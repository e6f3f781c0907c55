"""Figures of the MT report. Each builder takes data already computed and returns a matplotlib
Figure (created without pyplot, so no global state and no GUI backend).

Layout rules, so that a figure stays readable when the page is 400 px wide (the HTML scales
figures to the page width): at most ``WIDTH`` inches wide with ``FONT`` point text, panels stacked
rather than side by side, every axis labelled, legends outside the axes (below the figure) so they
never cover data. All text shown in a figure goes through :func:`label` (one place to escape names).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np

__all__ = ["label", "system_scores_figure", "metric_human_figure", "budget_curve_figure",
           "score_distributions_figure", "group_means_figure", "WIDTH", "HEXBIN_ABOVE"]

WIDTH = 5.6  # inches: 538 px at 96 dpi, shown at 0.7x on a 400 px page
FONT = 11
HEXBIN_ABOVE = 400  # points per panel above which a panel shows density (hexagons) instead of points
FLIERS_UP_TO = 3000  # rows per group up to which box plots draw the points beyond the whiskers
_STYLE = {"font.size": FONT, "axes.titlesize": FONT, "axes.labelsize": FONT, "xtick.labelsize": FONT - 1,
          "ytick.labelsize": FONT - 1, "legend.fontsize": FONT - 1, "figure.titlesize": FONT + 1,
          "axes.spines.top": False, "axes.spines.right": False}
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
            "#bcbd22", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def label(text: object) -> str:
    """Every piece of text drawn in a figure (titles, axis and tick labels, legend entries) passes
    through here. Names are drawn as typed: the figures are LiteralFigures (no mathtext), so
    ``$x$`` stays ``$x$``; what a reader could not see (control, bidi, tag, zero-width code points) is
    drawn as an escape (:func:`~xleval._base.terminal.visible_controls`), as in the terminal and the HTML."""
    from .._base.terminal import visible_controls

    return visible_controls(str(text))


@contextmanager
def _style():
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        yield


def _figure(height: float, width: float = WIDTH):
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    return Figure(figsize=(width, height), layout="constrained")


def _colour(i: int) -> str:
    return _COLOURS[i % len(_COLOURS)]


def _marker(i: int) -> str:
    return _MARKERS[(i // len(_COLOURS)) % len(_MARKERS)]


def _legend_below(fig, handles, labels, title: str | None = None) -> None:
    """A legend under the axes (constrained layout makes room), in as many columns as fit."""
    if not handles:
        return
    ncols = max(1, min(len(labels), 4 if max(len(x) for x in labels) <= 8 else 2))
    fig.legend(handles, [label(x) for x in labels], loc="outside lower center", ncols=ncols, frameon=False,
               title=label(title) if title else None)


def label_means_words(n_human: Sequence[float], n_segments: Sequence[float]) -> str:
    """The caption's sentence where a system's human value is the mean of a few labels (some systems have fewer
    labels than segments), else "": the figure's vertical spread is then mostly the labels' noise."""
    n_h = np.asarray(n_human, dtype=float)
    n_s = np.asarray(n_segments, dtype=float)
    has = n_h > 0
    if not has.any() or not (n_h[has] < n_s[has]).any():
        return ""
    counts = n_h[has]
    return (f" A system's human value is the mean of its labels ({np.median(counts):g} per system, median; "
            f"{counts.min():g} to {counts.max():g}), not of all its segments: with few labels, much of the "
            "vertical spread is their noise.")


def system_scores_figure(groups: Sequence[str], raw: Sequence[float], calibrated: Sequence[float],
                         human: Sequence[float], *, score: str, human_label: str, calibrated_label: str,
                         group_label: str, of_labels: bool = False):
    """System scores against the human score: raw (top) and calibrated (bottom), one marker per
    system, one colour per group. Calibration helps when the groups' clouds fall onto one rising line.
    ``of_labels``: a system's human value is the mean of some of its segments' labels (the axis says so)."""
    group_of = np.asarray(groups, dtype=object)
    names = sorted(set(group_of.tolist()))
    with _style():
        fig = _figure(3.0 * 2 + 0.6 + 0.25 * math.ceil(len(names) / 4))
        axes = fig.subplots(2, 1)
        handles = []
        for ax, values, xlabel in ((axes[0], raw, f"raw {score} (system score)"),
                                   (axes[1], calibrated, f"calibrated {score} ({calibrated_label})")):
            x, y = np.asarray(values, dtype=float), np.asarray(human, dtype=float)
            for i, g in enumerate(names):
                sel = group_of == g
                h = ax.scatter(x[sel], y[sel], s=28, color=_colour(i), marker=_marker(i), alpha=0.85,
                               edgecolors="white", linewidths=0.5)
                if ax is axes[0]:
                    handles.append(h)
            ax.set_xlabel(label(xlabel))
            ax.set_ylabel(label(f"{human_label} ({'mean of the labels' if of_labels else 'system mean'})"))
            ax.grid(color="#eee")
        _legend_below(fig, handles, names, title=group_label)
    return fig


def metric_human_figure(panels: Sequence[tuple[str, np.ndarray, np.ndarray, float | None, float | None]], *,
                        score: str, human_label: str):
    """Segment scores against human scores, one panel per group with that group's least-squares
    line (``panels``: ``(group, metric, human, intercept, slope)``). Shared axes: different lines
    across panels are the per-group bias calibration removes. Hexagons (darker = more segments)
    replace points in panels with more than :data:`HEXBIN_ABOVE` segments."""
    n = len(panels)
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    xs = np.concatenate([p[1] for p in panels]) if panels else np.zeros(0)
    ys = np.concatenate([p[2] for p in panels]) if panels else np.zeros(0)
    with _style():
        fig = _figure(0.6 + 2.1 * nrows)
        axes = np.atleast_1d(fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)).ravel()
        extent = (*_limits(xs), *_limits(ys))
        for ax, (group, x, h, intercept, slope) in zip(axes, panels, strict=False):  # the grid may have spare cells
            if len(x) > HEXBIN_ABOVE:
                ax.hexbin(x, h, gridsize=16, extent=extent, mincnt=1, cmap="Blues", bins="log", linewidths=0.1)
            else:
                ax.scatter(x, h, s=6, color="#1f77b4", alpha=0.35, linewidths=0)
            if intercept is not None and slope is not None and np.isfinite(slope):
                line = np.array(extent[:2])
                ax.plot(line, intercept + slope * line, color="#d62728", linewidth=1.6)
            ax.set_title(label(f"{group} (n = {len(x)})"), fontsize=FONT - 1)
            ax.grid(color="#eee")
        for ax in axes[n:]:
            ax.set_visible(False)
        fig.supxlabel(label(f"{score} (segment)"))
        fig.supylabel(label(f"{human_label} (segment)"))
    return fig


def _limits(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if not len(finite):
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    pad = 0.03 * (hi - lo) if hi > lo else 0.5
    return lo - pad, hi + pad


def budget_curve_figure(curve, *, reference: dict[str, tuple[float, float, float]] | None = None,
                        group_label: str = "group"):
    """Cross-validated cross-group accuracy against the number of human labels per group.

    ``curve``: rows with ``labels_per_group``, ``method``, ``accuracy``, ``ci_low``, ``ci_high``
    (a line with its interval as a band, per method); ``reference``: name -> (accuracy, ci_low,
    ci_high), drawn as horizontal lines in the given order (e.g. raw scores and LGN, which need no
    labels; their intervals are in the table beside the figure)."""
    import pandas as pd

    frame = pd.DataFrame(curve)
    with _style():
        fig = _figure(4.2)
        ax = fig.subplots()
        handles, names = [], []
        for i, (name, (acc, _low, _high)) in enumerate((reference or {}).items()):
            h = ax.axhline(acc, color=_colour(8 + i), linestyle=("--", ":", "-.")[i % 3], linewidth=1.4)
            handles.append(h)
            names.append(name)
        for i, (method, unsorted) in enumerate(frame.groupby("method", sort=True)):
            part = unsorted.sort_values("labels_per_group")
            x = part["labels_per_group"].to_numpy(dtype=float)
            h, = ax.plot(x, part["accuracy"], marker="o", color=_colour(i), linewidth=1.8)
            ax.fill_between(x, part["ci_low"], part["ci_high"], color=_colour(i), alpha=0.15, linewidth=0)
            handles.append(h)
            names.append(str(method))
        if len(frame) and frame["labels_per_group"].max() / max(frame["labels_per_group"].min(), 1) > 20:
            ax.set_xscale("log")
        ax.set_xlabel(label(f"human labels per {group_label}"))
        ax.set_ylabel(label("cross-group accuracy (out of fold)"))
        ax.grid(color="#eee")
        _legend_below(fig, handles, names)
    return fig


def score_distributions_figure(groups: Sequence[str], raw: Sequence[np.ndarray], calibrated: Sequence[np.ndarray],
                               *, score: str, group_label: str, calibrated_label: str = "calibrated",
                               target_mean: float | None = None):
    """Per-group box plots of raw (top) and calibrated (bottom) segment scores. Boxes show quartiles,
    whiskers 1.5 IQR, diamonds the means (points beyond the whiskers only up to :data:`FLIERS_UP_TO`
    rows per group); the legend sits below the panels."""
    from matplotlib.lines import Line2D

    with _style():
        fig = _figure(6.8)
        axes = fig.subplots(2, 1)
        for ax, values, name in ((axes[0], raw, f"raw {score}"), (axes[1], calibrated, f"{score}, {calibrated_label}")):
            _boxes(ax, groups, values)
            ax.set_xlabel(label(group_label))
            ax.set_ylabel(label(name))
        handles = [Line2D([], [], color="#c0392b"), Line2D([], [], marker="D", color="#222", linestyle="")]
        names = ["median", "mean"]
        if target_mean is not None:
            handles.append(axes[1].axhline(target_mean, color="#888", linestyle="--", linewidth=1))
            names.append("target mean")
        _legend_below(fig, handles, names)
    return fig


def _boxes(ax, groups, values) -> None:
    data = [np.asarray(v, dtype=float) for v in values]
    data = [v[np.isfinite(v)] for v in data]
    positions = np.arange(1, len(groups) + 1)
    keep = [i for i, v in enumerate(data) if len(v)]
    fliers = max((len(v) for v in data), default=0) <= FLIERS_UP_TO  # else thousands of dots: the whiskers say it
    ax.boxplot([data[i] for i in keep], positions=positions[keep], widths=0.6, showmeans=True, showfliers=fliers,
               patch_artist=True, boxprops={"facecolor": "#cfe0f3", "edgecolor": "#2b5d8a"},
               medianprops={"color": "#c0392b"}, meanprops={"marker": "D", "markerfacecolor": "#222",
                                                             "markeredgecolor": "#222", "markersize": 4},
               flierprops={"marker": ".", "markersize": 2, "alpha": 0.4})
    _group_ticks(ax, positions, groups)
    ax.grid(axis="y", color="#eee")


TICK_CHARS = 18  # a group name on an axis is cut to this many characters (the tables show it whole)


def tick_label(name: object) -> str:
    """A group name as a tick label: one line (a tab or line break drawn as its escape, as the tables show it:
    ``g\\x092`` and ``g 2`` are two groups), at most :data:`TICK_CHARS` characters (cut with an ellipsis). Long
    names rotated under a panel would otherwise squeeze the panel to nothing."""
    text = label(name)
    return text if len(text) <= TICK_CHARS else text[:TICK_CHARS - 1] + "\u2026"


def _group_ticks(ax, positions, groups) -> None:
    ticks = [tick_label(g) for g in groups]
    rotate = len(groups) > 6 or max((len(t) for t in ticks), default=0) * len(groups) > 40
    ax.set_xticks(positions, ticks, rotation=60 if rotate else 0,
                  ha="right" if rotate else "center", rotation_mode="anchor")


def group_means_figure(groups: Sequence[str], before: Sequence[float], after: Sequence[float], *,
                       score: str, group_label: str, calibrated_label: str = "calibrated",
                       after_span: float | None = None):
    """Per-group means before (top) and after (bottom) calibration on their own axes (the scales
    differ). ``after_span`` is the least half-height of the lower axis, so that rounding noise around
    a common mean is not blown up to fill the panel."""
    with _style():
        fig = _figure(5.4)
        axes = fig.subplots(2, 1, sharex=True)
        x = np.arange(len(groups))
        for ax, vals, name, colour in ((axes[0], before, f"mean raw {score}", "#2b5d8a"),
                                       (axes[1], after, f"mean {score}, {calibrated_label}", "#27865a")):
            ax.plot(x, np.asarray(vals, dtype=float), "o", color=colour)
            ax.set_ylabel(label(name))
            ax.grid(axis="y", color="#eee")
        _group_ticks(axes[1], x, groups)
        axes[1].set_xlabel(label(group_label))
        axes[0].set_xlabel(label(group_label))
        axes[0].tick_params(labelbottom=True)
        _min_span(axes[1], np.asarray(after, dtype=float), after_span)
    return fig


def _min_span(ax, values: np.ndarray, span: float | None) -> None:
    finite = values[np.isfinite(values)]
    if span is None or not len(finite) or np.ptp(finite) >= span:
        return
    mid = 0.5 * (finite.min() + finite.max())
    ax.set_ylim(mid - span, mid + span)
