"""Matplotlib figures of a :class:`FairnessReport` for the HTML report (which renders them).

Each builder returns a ``matplotlib.figure.Figure`` made without pyplot (no global state, no
GUI backend); matplotlib is imported here only, so ``import xleval`` stays light.
"""
from __future__ import annotations

from typing import Any, cast

import numpy as np

from xleval.fairness._results import FairnessReport
from xleval.stats import Estimate

__all__ = ["plot_levels", "plot_ratios", "plot_elasticity", "plot_power_curve"]


def _figure(width: float = 6.4, height: float = 3.6) -> tuple[Any, Any]:
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _errorbars(ax: Any, estimates: list, labels: list[str], colors: list[str]) -> None:
    x = np.arange(len(labels))
    mid = np.array([e.estimate for e in estimates])
    low = np.array([e.ci_low for e in estimates])
    high = np.array([e.ci_high for e in estimates])
    ax.bar(x, mid, color=colors, alpha=0.8)
    ax.errorbar(x, mid, yerr=[np.clip(mid - low, 0, None), np.clip(high - mid, 0, None)], fmt="none", ecolor="black",
                capsize=3, linewidth=1)
    ax.set_xticks(x, labels, rotation=45 if len(labels) > 8 else 0)


def plot_levels(report: FairnessReport) -> Any:
    """Per-language mean with its CI; the reference in a second colour; the floor as a line."""
    fig, ax = _figure()
    gaps = sorted(report.languages, key=lambda g: g.mean.estimate, reverse=report.higher_is_better)
    colors = ["tab:orange" if g.language == report.reference else
              "tab:red" if g.below_floor else "tab:blue" for g in gaps]
    _errorbars(ax, [g.mean for g in gaps], [g.language for g in gaps], colors)
    if report.floor is not None:
        ax.axhline(report.floor, color="tab:red", linestyle="--", linewidth=1, label=f"floor {report.floor:g}")
        ax.legend(loc="best", fontsize="small")
    ax.set_ylabel(report.metric + ("" if report.higher_is_better else " (lower is better)"))
    ax.set_title(f"{report.metric} per language ({int(report.level * 100)}% CI, {report.design})")
    return fig


def plot_ratios(report: FairnessReport) -> Any:
    """Ratio (or, off a ratio scale, difference) to the reference language with CIs; 1 (or 0) marked."""
    use_ratio = all(g.ratio is not None for g in report.languages if g.language != report.reference)
    gaps = [g for g in report.languages if g.language != report.reference]
    if not gaps or report.reference is None:
        raise ValueError("the report has no reference language; nothing to plot")
    # every language but the reference has a difference, and a ratio when use_ratio
    ests = cast("list[Estimate]", [g.ratio if use_ratio else g.difference for g in gaps])
    order = np.argsort([e.estimate for e in ests])[:: 1 if not report.higher_is_better else -1]
    fig, ax = _figure()
    _errorbars(ax, [ests[i] for i in order], [gaps[i].language for i in order], ["tab:blue"] * len(gaps))
    ax.axhline(1.0 if use_ratio else 0.0, color="black", linewidth=0.8)
    what = "ratio to" if use_ratio else "difference from"
    ax.set_ylabel(f"{report.metric}: {what} {report.reference}")
    ax.set_title(f"{what.capitalize()} {report.reference} ({int(report.level * 100)}% CI)")
    return fig


def plot_elasticity(report: FairnessReport) -> Any:
    """Language means against ln(data size) with the fitted line."""
    el = report.elasticity
    if el is None:
        raise ValueError("the report has no elasticity fit (no resource column)")
    points = {g.language: (g.resource, g.mean.estimate) for g in report.languages if g.language in el.languages}
    x = np.log(np.array([points[lang][0] for lang in el.languages], dtype=float))
    y = np.array([points[lang][1] for lang in el.languages])
    fig, ax = _figure()
    ax.scatter(x, y, color="tab:blue")
    for xi, yi, lang in zip(x, y, el.languages, strict=True):
        ax.annotate(lang, (xi, yi), textcoords="offset points", xytext=(3, 3), fontsize="small")
    grid = np.linspace(x.min(), x.max(), 50)
    fitted = el.intercept + el.slope * grid
    ax.plot(grid, np.exp(fitted) if el.log_performance else fitted, color="tab:orange",
            label=f"slope {el.slope:.3g} [{el.slope_ci_low:.3g}, {el.slope_ci_high:.3g}], R² {el.r_squared:.2f}")
    ax.set_xlabel("ln(training data size)")
    ax.set_ylabel(report.metric)
    ax.legend(loc="best", fontsize="small")
    ax.set_title("Resource elasticity")
    return fig


def plot_power_curve(effects: Any, *, power: float = 0.8, alpha: float = 0.05, design: str = "independent",
                     kind: str = "proportion", discordant: float | None = None) -> Any:
    """Items per language needed against the effect to detect (log scale)."""
    from xleval.fairness._power import min_test_size

    effects = np.asarray(effects, dtype=float)
    ns = [min_test_size(e, power=power, alpha=alpha, design=design, kind=kind,
                        discordant=discordant).n for e in effects]
    fig, ax = _figure()
    ax.plot(effects, ns, marker="o")
    ax.set_yscale("log")
    ax.set_xlabel({"proportion": "Cohen's h" if design != "paired" else "accuracy difference"}.get(kind, "Cohen's d"))
    ax.set_ylabel("items per language")
    ax.set_title(f"Minimum test-set size (power {power:g}, alpha {alpha:g}, {design})")
    ax.grid(True, which="both", alpha=0.3)
    return fig
