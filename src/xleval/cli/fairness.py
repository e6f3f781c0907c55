"""``xleval fairness gaps|min-size``: multilingual performance gaps and minimum test-set size."""
from __future__ import annotations

import warnings

import click

from .._base.numbers import format_column
from ..exceptions import InputError
from ..io import parse_column_mapping, select_rows
from ._common import (
    PROBABILITY,
    FiniteFloat,
    check_outputs,
    col_option,
    emit_json,
    err_console,
    format_option,
    print_table,
    progress_bar,
    report_option,
    say,
    write_analysis_report,
)


@click.group("fairness", no_args_is_help=True, help="Multilingual fairness gaps and minimum test-set size.")
def app() -> None:
    pass


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def _ci(est) -> str:
    """An estimate and its interval in one precision ('8.70 [8.63, 8.76]', not '8.7 [8.629, 8.759]')."""
    if est is None:
        return ""
    value, low, high = format_column([est.estimate, est.ci_low, est.ci_high])
    return f"{value} [{low}, {high}]"


def _render(name: str, rep) -> None:
    rows = [{"language": g.language, "n": g.n, "mean [CI]": _ci(g.mean), "ratio [CI]": _ci(g.ratio),
             "difference [CI]": _ci(g.difference), "below floor": "" if g.below_floor is None else
             ("yes (CI)" if g.clearly_below_floor else "yes" if g.below_floor else "no")} for g in rep.languages]
    reference = "no reference" if rep.reference is None else f"reference {rep.reference}"
    print_table(rows, title=f"{name}{rep.metric} by {rep.by} ({rep.design}; {reference})")
    s = rep.summary
    summary = [{"statistic": k, "estimate [CI]": _ci(getattr(s, k))} for k in
               ("mean", "worst", "std", "mean_ratio", "worst_ratio", "mean_difference", "worst_difference")
               if getattr(s, k) is not None]
    print_table(summary, title="across languages")
    if rep.elasticity is not None:
        e = rep.elasticity
        model = "ln(performance)" if e.log_performance else "performance"
        err_console.print(f"elasticity: {model} = {e.intercept:.4g} + {e.slope:.4g} ln(size) "
                          f"(slope CI [{e.slope_ci_low:.4g}, {e.slope_ci_high:.4g}], R^2 {e.r_squared:.3f}, "
                          f"{e.n_languages} languages); per doubling: {e.gain_per_doubling:.4g}"
                          + (f"; data x{e.multiplier:.4g} for {e.target_gain:g}" if e.multiplier is not None else ""))
    if rep.typology:
        print_table([{"feature": t.feature, "r": t.correlation.estimate, "CI low": t.correlation.ci_low,
                      "CI high": t.correlation.ci_high, "p": t.correlation.p_value,
                      "controls": ",".join(t.controls) or "-"} for t in rep.typology], title="typological bias",
                      digits=3)


@app.command("gaps")
@click.argument("input")
@click.option("--metric", required=True, help="Score or 0/1 correctness column.")
@click.option("--by", default="lang", help="Language column (lp keeps language pairs).")
@click.option("--reference", default="en", help="Reference language for ratios; 'none' to skip.")
@click.option("--item", help="Item id column of parallel items (paired bootstrap).")
@click.option("--resource", help="Per-language training-data size column.")
@click.option("--typology", multiple=True, help="Per-language feature column, or script/family (repeatable).")
@click.option("--model", help="Model column: one analysis per model.")
@click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="Keep rows with COLUMN=VALUE (repeatable).")
@click.option("--floor", type=FiniteFloat(), help="Usability floor (a ceiling with --lower-is-better).")
@click.option("--lower-is-better/--higher-is-better", "lower_is_better", default=None,
              help="The metric is a loss (e.g. bits per byte, MetricX). Default: as the column's metric signature says "
                   "(dir:lower for MetricX), else by its name (ter), else higher is better.")
@click.option("--log-performance", is_flag=True, help="Fit ln(performance) on ln(size).")
@click.option("--target-gain", type=FiniteFloat(0, low_open=True), help="Gain (log model: factor) to price in data.")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, help="Bootstrap resamples.")
@click.option("--seed", type=click.IntRange(0), default=0, help="random_state of the bootstrap.")
@col_option
@format_option
@report_option
def gaps(input, metric, by, reference, item, resource, typology, model, where, floor, lower_is_better, log_performance,
         target_gain, n_resamples, seed, col, fmt, report_path) -> None:
    """Per-language level, ratio to a reference, resource elasticity and typological bias.

    INPUT holds per-item (or per-language) results: .tsv/.csv/.jsonl/.parquet.
    """
    from ..fairness import ResourceFit, fairness_gaps, fairness_gaps_by
    from ..metrics import higher_is_better
    from ..stats import Resampling
    from ..table import EvalTable

    check_outputs({"--report": report_path}, inputs=[input])
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=[metric, by], numeric=[metric],
                           score=metric, by=None, normalize_languages=False)  # its signatures travel with it
    df = select_rows(table.frame, where)
    # the one direction rule: the flag, else the score's signature (MetricX: dir:lower), else its name (ter)
    up = higher_is_better(metric, table.signature(), given=None if lower_is_better is None else not lower_is_better,
                          values=df[metric])
    kwargs = dict(reference=None if (reference or "").lower() == "none" else reference, item=item, resource=resource,
                  typology=tuple(typology), floor=floor, higher_is_better=up,
                  resource_fit=ResourceFit(log_performance=log_performance, target_gain=target_gain),
                  resampling=Resampling(n_resamples=n_resamples, random_state=seed))
    with progress_bar(f"fairness gaps of {input}") as advance:
        if model:
            reports, notes = _caught(fairness_gaps_by, df, model, metric, by, progress=advance, **kwargs)
        else:
            report, notes = _caught(fairness_gaps, df, metric, by, progress=advance, **kwargs)
            reports = {"": report}
    write_analysis_report(report_path, f"Fairness gaps: {metric} by {by}", reports if model else [reports[""]], notes)
    if fmt == "json":
        body = reports[""].to_dict() if not model else {name: r.to_dict() for name, r in reports.items()}
        emit_json({"result": body, "warnings": notes})
        return
    for name, rep in reports.items():
        _render(f"{name}: " if name else "", rep)
        for note in rep.notes:
            say("note", note)
    for note in notes:
        say("warning", note)


@app.command("min-size")
@click.option("--effect", type=FiniteFloat(),
              help="Effect to detect: Cohen's h (proportions), d (continuous), or the accuracy "
              "difference with --paired.")
@click.option("--power", type=PROBABILITY, default=0.8, help="Target power.")
@click.option("--alpha", type=PROBABILITY, default=0.05, help="Significance level.")
@click.option("--paired", is_flag=True, help="Parallel items in both languages (McNemar / paired t).")
@click.option("--one-sample", is_flag=True, help="Reference level known without error (a one-sample test).")
@click.option("--kind", default="proportion", help="proportion (accuracy, Cohen's h) or continuous (Cohen's d).")
@click.option("--discordant", type=FiniteFloat(0, 1, low_open=True),
              help="With --paired accuracy: share of items right in one language only.")
@click.option("--one-sided", is_flag=True, help="One-sided test.")
@click.option("--n", type=click.IntRange(1),
              help="Items per language you have: report the smallest detectable effect instead.")
@click.option("--baseline", type=PROBABILITY, help="With --n: reference accuracy, to express the effect as accuracies.")
@format_option
def min_size(effect, power, alpha, paired, one_sample, kind, discordant, one_sided, n, baseline, fmt) -> None:
    """How many items per language detect a gap of EFFECT; or, with --n, what gap a test set can detect."""
    from ..fairness import DetectableEffect, SampleSize, detectable_effect, min_test_size

    if paired and one_sample:
        raise InputError("--paired and --one-sample exclude each other; choose one design")
    design = "paired" if paired else "one-sample" if one_sample else "independent"
    common = dict(power=power, alpha=alpha, design=design, kind=kind, discordant=discordant,
                  alternative="one-sided" if one_sided else "two-sided")
    if n is not None and effect is not None:
        raise InputError("--effect and --n ask opposite questions (items needed for an effect / effect detectable "
                         "with n items); give one of them")
    result: DetectableEffect | SampleSize
    if n is not None:
        result = detectable_effect(n, baseline=baseline, **common)
    elif effect is None:
        raise InputError("give --effect (how many items do I need?) or --n (what gap can my test set detect?)")
    else:
        if baseline is not None:
            raise InputError("--baseline goes with --n; with --effect give Cohen's h directly "
                             "(e.g. for 0.80 vs 0.75: 0.12)")
        result = min_test_size(effect, **common)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    rows = [{"field": k, "value": v} for k, v in result.to_dict().items() if v is not None and k != "notes"]
    print_table(rows, title="minimum test-set size" if n is None else "smallest detectable effect", digits=4)
    for note in result.notes:
        say("note", note)
