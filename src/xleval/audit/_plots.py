"""Static figures of an audit for the HTML report. Each builder takes an :class:`AuditResult`
and returns a matplotlib ``Figure`` (built without pyplot, so no global state and no GUI);
matplotlib is imported here only, never at ``import xleval``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xleval.audit._audit import AuditResult

__all__ = ["plot_estimates", "plot_parser_validity", "plot_dose_response"]


def _figure(width: float, height: float) -> Any:
    from .._base.mathtext import LiteralFigure as Figure  # names from the data are never mathtext

    return Figure(figsize=(width, height), layout="constrained")


def _shown(name: str) -> str:
    # a name from the data is drawn on one line with its control characters as escapes, as on the terminal and in
    # the HTML (a newline would break a tick label, an escape character would make the SVG invalid XML)
    from .._base.terminal import visible_controls

    return visible_controls(str(name))


def plot_estimates(result: AuditResult) -> Any:
    """Forest plot: every estimator x model contrast with its CI (pooled rows in bold)."""
    rows = list(result.contrasts)
    fig = _figure(6.5, 0.3 * max(len(rows), 3) + 1.0)
    ax = fig.add_subplot()
    y = list(range(len(rows)))[::-1]
    for yi, c in zip(y, rows, strict=True):
        pooled = c.model == "pooled"
        ax.errorbar(c.estimate, yi, xerr=[[c.estimate - c.ci_low], [c.ci_high - c.estimate]], fmt="o",
                    color="black" if pooled else "tab:blue", capsize=3, markersize=6 if pooled else 4)
    ax.axvline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_yticks(y, [f"{c.estimator} {_shown(c.model)}" for c in rows])
    ax.set_xlabel(f"accuracy difference (condition a - b), {rows[0].level:.0%} CI" if rows else "accuracy difference")
    ax.set_title("Translation-tax estimators")
    return fig


def plot_parser_validity(result: AuditResult) -> Any:
    """Parser validity rate per model x condition, with the threshold line."""
    import numpy as np

    models = sorted({v.model for v in result.validity})
    conditions = sorted({v.condition for v in result.validity})
    rate = {(v.model, v.condition): v.rate for v in result.validity}
    fig = _figure(6.5, 3.2)
    ax = fig.add_subplot()
    width = 0.8 / max(len(conditions), 1)
    x = np.arange(len(models))
    for k, cond in enumerate(conditions):
        ax.bar(x + k * width, [rate.get((m, cond), np.nan) for m in models], width, label=cond)
    ax.axhline(result.validity_threshold, color="red", linewidth=0.8, linestyle="--")
    ax.set_xticks(x + width * (len(conditions) - 1) / 2, [_shown(m) for m in models], rotation=30, ha="right")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("valid parses")
    ax.legend(fontsize="small", ncol=2)
    ax.set_title("Answer-parser validity")
    return fig


def plot_dose_response(result: AuditResult) -> Any | None:
    """Paired contrast in the low and high residual strata with CIs; None when not run."""
    d = result.dose_response
    if d is None:
        return None
    fig = _figure(4.0, 3.2)
    ax = fig.add_subplot()
    for x, s in enumerate((d.low, d.high)):
        ax.errorbar(x, s.estimate, yerr=[[s.estimate - s.ci_low], [s.ci_high - s.estimate]], fmt="o", capsize=4)
    ax.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks([0, 1], [f"low (n={d.low.n_items})", f"high (n={d.high.n_items})"])
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylabel(f"{d.estimator} accuracy difference")
    ax.set_title(f"Dose-response: high - low = {d.contrast:+.3f}")
    return fig
