"""The report section of the output checks (:class:`xleval.output_checks.OutputChecks`; ``xleval report
--output-checks``): laid out from the result object, nothing computed here."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._model import Section
from ._sections import generic_section

if TYPE_CHECKING:
    from ..output_checks import OutputChecks

__all__ = ["output_checks_section"]


def output_checks_section(checks: OutputChecks, *, image_format: str = "svg") -> Section:
    """The "Output checks" section: the rate of each flag per group (all systems) with its Wilson interval,
    the (group, system) cells with the highest rate of an invalid flag, and each flag's effect on each metric."""
    from ..output_checks import INVALID_FLAGS

    by = list(checks.by)
    g = checks.group_rates
    rates = [{**{c: r[c] for c in by}, "flag": r["flag"], "rows checked": r["n"], "flagged": r["count"],
              "rate %": 100 * r["rate"], "CI low %": 100 * r["ci_low"], "CI high %": 100 * r["ci_high"]}
             for r in g.to_dict(orient="records")]
    cells = checks.rates
    keys = [*by, *([checks.system] if checks.system else [])]
    worst = (cells[cells["flag"].isin(INVALID_FLAGS) & (cells["count"] > 0)]
             .sort_values("rate", ascending=False, kind="stable").head(15))
    top = [{**{c: r[c] for c in keys}, "flag": r["flag"], "flagged": r["count"], "rate %": 100 * r["rate"],
            "CI low %": 100 * r["ci_low"], "CI high %": 100 * r["ci_high"]} for r in worst.to_dict(orient="records")]
    effects = [{**{c: r[c] for c in by}, "flag": r["flag"], "metric": r["metric"], "flagged n": r["n_flagged"],
                "flagged mean": r["mean_flagged"], "unflagged mean": r["mean_unflagged"],
                "difference": r["difference"], "CI low": r["ci_low"], "CI high": r["ci_high"]}
               for r in checks.effects.to_dict(orient="records")]
    tables: list[tuple[str, Any]] = [(f"Rows flagged per {', '.join(by)}, all systems (Wilson {checks.level:g})",
                                      rates)]
    if top:
        tables.append(("Cells with the most invalid outputs (empty, copy of the source, off-target, truncated)", top))
    if effects:
        tables.append((f"Effect of each flag on each metric: mean flagged - unflagged (Welch {checks.level:g})",
                       effects))
    paragraphs = (
        "Outputs that are not translations (empty, a copy of the source, in the wrong language, cut off) fool "
        "metrics differently in each language; a comparison across languages that keeps them compares failure "
        "mixes, not quality. docs/output-checks.md defines each flag; calibration and ranking can leave them out "
        "(exclude-invalid).",
        f"Checked: {', '.join(checks.checked) or 'none'}"
        + (f"; not checked: {', '.join(checks.skipped)}" if checks.skipped else "")
        + (f"; language identifier {checks.identifier}" if checks.identifier else "") + ".",
    )
    return generic_section("Output checks", tables=tables, paragraphs=paragraphs, warnings=checks.notes,
                           id="output-checks")
