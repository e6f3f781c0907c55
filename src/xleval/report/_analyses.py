"""Report sections for the LM and benchmark analyses: fairness gaps, translation-tax audit and
intrinsic-metric confounds. Each takes the analysis' result object, lays its ``to_dict()`` out
with :func:`result_section` and adds the figures the analysis' own ``_plots`` module draws.
:func:`section_for` also knows the meta-evaluation (:mod:`._meta`), the output checks
(:mod:`._output_checks`) and the judges' agreement (:mod:`._judges`)."""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._figures import figure_from_matplotlib
from ._judges import judges_section
from ._meta import calibrated_meta_section, meta_section
from ._model import Figure, Report, Section, Table
from ._output_checks import output_checks_section
from ._sections import result_section, warnings_section

__all__ = ["fairness_section", "audit_section", "intrinsic_section", "section_for", "analysis_report"]

logger = logging.getLogger(__name__)


def _figures(builders: Iterable[tuple[str, Callable[[], Any]]], fmt: str) -> tuple[Figure, ...]:
    out = []
    for title, build in builders:
        fig = build()
        if fig is not None:  # a builder returns None when its data are absent (e.g. no dose-response)
            out.append(figure_from_matplotlib(fig, title, fmt=fmt))
    return tuple(out)


def fairness_section(result, *, image_format: str = "svg") -> Section:
    """A :class:`xleval.fairness.FairnessReport`: per-language levels, ratios and differences with
    CIs, the summary, resource elasticity and typological bias, with the fairness figures."""
    from ..fairness import plot_elasticity, plot_levels, plot_ratios

    figs = [("Per-language level", lambda: plot_levels(result))]
    if result.reference is not None:
        figs.append((f"Ratio to {result.reference}", lambda: plot_ratios(result)))
    if result.elasticity is not None:
        figs.append(("Resource elasticity", lambda: plot_elasticity(result)))
    payload = result.to_dict()
    payload.pop("languages", None)  # replaced by the flat per-language rows below
    section = result_section(f"Fairness gaps: {result.metric} by {result.by}", payload, id="fairness",
                             figures=_figures(figs, image_format))
    rows = Table.from_records("Per language (level, ratio and difference with CIs)", result.language_rows())
    return _with_first_table(section, rows)


def audit_section(result, *, image_format: str = "svg") -> Section:
    """A :class:`xleval.audit.AuditResult`: estimators with CIs and p-values, parser validity,
    sensitivity, dose-response and model-family interaction, with the audit figures."""
    from ..audit._plots import plot_dose_response, plot_estimates, plot_parser_validity

    figs = [("Translation-tax estimators", lambda: plot_estimates(result)),
            ("Parser validity per model and condition", lambda: plot_parser_validity(result)),
            ("Dose-response by translation residual", lambda: plot_dose_response(result))]
    return result_section("Translation-tax audit", result, id="audit", figures=_figures(figs, image_format))


def intrinsic_section(result, *, image_format: str = "svg") -> Section:
    """A :class:`xleval.intrinsic.ConfoundReport`: the per-metric summary, length correlations,
    vocabulary sensitivity and translation stability, with length and vocabulary figures."""
    from ..intrinsic._plots import length_scatter, vocab_lines

    table = result.language_table
    metrics = [m for m in ("sent_nll", "bpb", "bpc", "ppl") if m in table.columns][:3]
    figs = []
    if metrics and "bytes_per_sentence" in table.columns:
        figs.append(("Language-level metrics against length", lambda: length_scatter(table, metrics)))
    if "vocab_size" in table.columns and metrics:
        figs.append((f"{metrics[-1]} across vocabulary sizes", lambda: vocab_lines(table, metrics[-1])))
    return result_section("Intrinsic metrics: confounds", result, id="intrinsic",
                          figures=_figures(figs, image_format),
                          paragraphs=[f"Corpus-level metrics are {result.aggregation}."])


def _with_first_table(section: Section, table: Table) -> Section:
    from dataclasses import replace

    return replace(section, tables=(table, *section.tables))


_BUILDERS: dict[str, Callable[..., Section]] = {
    "FairnessReport": fairness_section, "AuditResult": audit_section, "ConfoundReport": intrinsic_section,
    "MetaEvaluation": meta_section, "CalibratedMeta": calibrated_meta_section, "OutputChecks": output_checks_section,
    "JudgeAgreement": judges_section}


def section_for(result, *, image_format: str = "svg") -> Section:
    """The section of a known analysis result; any other result with ``to_dict()`` gets the generic layout."""
    builder = _BUILDERS.get(type(result).__name__)
    if builder is None:
        return result_section(type(result).__name__, result)
    return builder(result, image_format=image_format)


def analysis_report(title: str, results: Iterable[Any] | Mapping[str, Any], *, warnings: Iterable[str] = (),
                    image_format: str = "svg") -> Report:
    """A report of one or more analysis results (fairness, audit, intrinsic, or any ``to_dict()``
    result), ending with the warnings section. ``results`` may map a name (e.g. the model each
    result is about) to its result: the name heads its section."""
    from dataclasses import replace

    named = results.items() if isinstance(results, Mapping) else ((None, r) for r in results)
    sections: list[Section] = []
    ids: set[str] = set()
    for name, result in named:
        section = section_for(result, image_format=image_format)
        if name is not None:
            section = replace(section, title=f"{name}: {section.title}")
        if section.id in ids:  # several results of one kind: every section keeps its own anchor
            section = replace(section, id=f"{section.id}-{len(sections) + 1}")
        ids.add(section.id)
        sections.append(section)
    return Report(title, (*sections, warnings_section(list(warnings))))
