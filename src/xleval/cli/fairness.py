"""``xleval fairness gaps|min-size``: multilingual performance gaps and minimum test-set size."""
from __future__ import annotations

import warnings
from typing import Optional

import typer

from ..exceptions import InputError
from ..io import parse_column_mapping, read_table
from ._common import (COL_OPTION, FORMAT_OPTION, REPORT_OPTION, OutputFormat, emit_json, err_console, print_table,
                      write_analysis_report)

app = typer.Typer(no_args_is_help=True, help="Multilingual fairness gaps and minimum test-set size.")


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def _where(df, conditions: Optional[list[str]]):
    for cond in conditions or ():
        column, sep, value = cond.partition("=")
        if not sep or column not in df.columns:
            raise InputError(f"--where {cond!r}: expected COLUMN=VALUE with a column of the table ({list(df.columns)})")
        kept = df[df[column].astype(str) == value]
        if len(kept) == 0:
            raise InputError(f"--where {cond!r} leaves no rows; values of {column!r} are e.g. {sorted(map(str, df[column].unique()))[:5]}")
        df = kept
    return df


def _ci(est) -> str:
    return "" if est is None else f"{est.estimate:.4g} [{est.ci_low:.4g}, {est.ci_high:.4g}]"


def _render(name: str, rep) -> None:
    rows = [{"language": g.language, "n": g.n, "mean [CI]": _ci(g.mean), "ratio [CI]": _ci(g.ratio),
             "difference [CI]": _ci(g.difference), "below floor": "" if g.below_floor is None else
             ("yes (CI)" if g.clearly_below_floor else "yes" if g.below_floor else "no")} for g in rep.languages]
    print_table(rows, title=f"{name}{rep.metric} by {rep.by} ({rep.design}; reference {rep.reference})")
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
                      "controls": ",".join(t.controls) or "-"} for t in rep.typology], title="typological bias", digits=3)


@app.command("gaps")
def gaps(
    input: str = typer.Argument(..., help="Per-item (or per-language) results: .tsv/.csv/.jsonl/.parquet."),
    metric: str = typer.Option(..., "--metric", help="Score or 0/1 correctness column."),
    by: str = typer.Option("lang", "--by", help="Language column (lp keeps language pairs)."),
    reference: Optional[str] = typer.Option("en", "--reference", help="Reference language for ratios; 'none' to skip."),
    item: Optional[str] = typer.Option(None, "--item", help="Item id column of parallel items (paired bootstrap)."),
    resource: Optional[str] = typer.Option(None, "--resource", help="Per-language training-data size column."),
    typology: Optional[list[str]] = typer.Option(None, "--typology", help="Per-language feature column, or script/family (repeatable)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model column: one analysis per model."),
    where: Optional[list[str]] = typer.Option(None, "--where", help="Keep rows with COLUMN=VALUE (repeatable)."),
    floor: Optional[float] = typer.Option(None, "--floor", help="Usability floor (a ceiling with --lower-is-better)."),
    lower_is_better: bool = typer.Option(False, "--lower-is-better", help="The metric is a loss (e.g. bits per byte)."),
    log_performance: bool = typer.Option(False, "--log-performance", help="Fit ln(performance) on ln(size)."),
    target_gain: Optional[float] = typer.Option(None, "--target-gain", help="Gain (log model: factor) to price in data."),
    n_resamples: int = typer.Option(1000, "--n-resamples", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="random_state of the bootstrap."),
    col: Optional[list[str]] = COL_OPTION,
    fmt: OutputFormat = FORMAT_OPTION,
    report_path: Optional[str] = REPORT_OPTION,
) -> None:
    """Per-language level, ratio to a reference, resource elasticity and typological bias."""
    from ..fairness import fairness_gaps, fairness_gaps_by

    df = _where(read_table(input, columns=parse_column_mapping(col), required=[metric, by], numeric=[metric]), where)
    kwargs = dict(reference=None if (reference or "").lower() == "none" else reference, item=item, resource=resource,
                  typology=tuple(typology or ()), floor=floor, higher_is_better=not lower_is_better,
                  log_performance=log_performance, target_gain=target_gain, n_resamples=n_resamples, random_state=seed)
    if model:
        reports, notes = _caught(fairness_gaps_by, df, model, metric, by, **kwargs)
    else:
        report, notes = _caught(fairness_gaps, df, metric, by, **kwargs)
        reports = {"": report}
    write_analysis_report(report_path, f"Fairness gaps: {metric} by {by}", list(reports.values()), notes)
    if fmt == OutputFormat.json:
        body = reports[""].to_dict() if not model else {name: r.to_dict() for name, r in reports.items()}
        emit_json({"result": body, "warnings": notes})
        return
    for name, rep in reports.items():
        _render(f"{name}: " if name else "", rep)
        for note in rep.notes:
            err_console.print(f"[yellow]note:[/yellow] {note}")
    for note in notes:
        err_console.print(f"[yellow]warning:[/yellow] {note}")


@app.command("min-size")
def min_size(
    effect: Optional[float] = typer.Option(None, "--effect", help="Effect to detect: Cohen's h (proportions), d (continuous), or the accuracy difference with --paired."),
    power: float = typer.Option(0.8, "--power", help="Target power."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    paired: bool = typer.Option(False, "--paired", help="Parallel items in both languages (McNemar / paired t)."),
    one_sample: bool = typer.Option(False, "--one-sample", help="Reference level known without error (the seed's formula)."),
    kind: str = typer.Option("proportion", "--kind", help="proportion (accuracy, Cohen's h) or continuous (Cohen's d)."),
    discordant: Optional[float] = typer.Option(None, "--discordant", help="With --paired accuracy: share of items right in one language only."),
    one_sided: bool = typer.Option(False, "--one-sided", help="One-sided test."),
    n: Optional[int] = typer.Option(None, "--n", help="Items per language you have: report the smallest detectable effect instead."),
    baseline: Optional[float] = typer.Option(None, "--baseline", help="With --n: reference accuracy, to express the effect as accuracies."),
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """How many items per language detect a gap of EFFECT; or, with --n, what gap a test set can detect."""
    from ..fairness import detectable_effect, min_test_size

    if paired and one_sample:
        raise InputError("--paired and --one-sample exclude each other; choose one design")
    design = "paired" if paired else "one-sample" if one_sample else "independent"
    common = dict(power=power, alpha=alpha, design=design, kind=kind, discordant=discordant,
                  alternative="one-sided" if one_sided else "two-sided")
    if n is not None:
        result = detectable_effect(n, baseline=baseline, **common)
    elif effect is None:
        raise InputError("give --effect (how many items do I need?) or --n (what gap can my test set detect?)")
    else:
        if baseline is not None:
            raise InputError("--baseline goes with --n; with --effect give Cohen's h directly (e.g. for 0.80 vs 0.75: 0.12)")
        result = min_test_size(effect, **common)
    if fmt == OutputFormat.json:
        emit_json(result.to_dict())
        return
    rows = [{"field": k, "value": v} for k, v in result.to_dict().items() if v is not None and k != "notes"]
    print_table(rows, title="minimum test-set size" if n is None else "smallest detectable effect", digits=4)
    for note in result.notes:
        err_console.print(f"[yellow]note:[/yellow] {note}")
