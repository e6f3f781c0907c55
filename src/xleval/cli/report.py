"""``xleval report``: one self-contained HTML report (or JSON with the same content) for a scored table."""
from __future__ import annotations

import click

from ._common import by_option, calibration_choice_options, col_option, err_console, progress_bar, read_ranked_table
from .calibrate_advice import human_scale_option
from .check_outputs import output_checks_section
from .meta import meta_report_section


@click.command("report")
@click.argument("input")
@click.option("--score", required=True, help="Score column to report on.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Where to write the report ('-' = stdout).")
@by_option("Group by lp, tgt_lang or a column name.")
@click.option("--human", help="Human score column: agreement with humans, LGN's validity, anchored calibration.")
@calibration_choice_options
@human_scale_option
@click.option("--format", "fmt", default="html", metavar="[html|json]",
              help="html (self-contained page) or json (the same content).")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, help="Bootstrap and permutation resamples.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Seed of the bootstrap and the cross-validation.")
@click.option("--force", is_flag=True, help="Use the calibrator even if the score's metric signature differs.")
@click.option("--output-checks", is_flag=True,
              help="Add a section of output checks (empty, copied, off-target, truncated outputs per group and their "
                   "effect on the score; docs/output-checks.md); needs the hypothesis texts.")
@click.option("--meta", "meta_metrics", metavar="A,B,...",
              help="Add a meta-evaluation section: these metric columns (bleu, chrf, chrf++, ter are scored from the "
                   "texts if absent) against --human in WMT's statistics, as `xleval meta` computes them.")
@col_option
def report(input, score, output, by, human, system, method, model, metric, human_up, human_range, human_scale, fmt,
           n_resamples, seed, force, output_checks, meta_metrics, col) -> None:
    """Write one self-contained HTML (or JSON) report for a scored table.

    INPUT is a scored table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). The report answers
    first: is there language bias, may LGN be used, which calibration and why, agreement with humans
    across groups (cross-validated), the leaderboard and every check that did not pass; then plots
    and detail.
    """
    from ..exceptions import InputError
    from ..io import check_output_path
    from ..report import check_format, mt_report, write_report
    from .calibrate_common import parse_human_range

    check_format(fmt)
    if meta_metrics is not None and not meta_metrics.replace(",", "").strip():
        raise InputError(f"--meta {meta_metrics!r} names no metric column; give the metric columns to "
                         "meta-evaluate, e.g. --meta bleu,chrf, or leave --meta out")
    check_output_path(output, inputs=[input] + ([model] if model is not None else []), stdout=True)
    df, calibrator, signature, commands = read_ranked_table(input, score=score, human=human, system=system,
                                                            model=model, col=col)
    extra = (output_checks_section(df, by, system, score, input),) if output_checks else ()
    if meta_metrics:
        extra += (meta_report_section(df, meta_metrics, human, by, system, input, col, n_resamples, seed),)
    with progress_bar(f"report on {input}") as advance:
        result = mt_report(df, score, by=by, human=human, system=system, model=calibrator, method=method, metric=metric,
                           signature=signature, force=force, n_resamples=n_resamples, random_state=seed,
                           where=input, commands=commands, progress=advance, human_scale=human_scale,
                           human_higher_is_better=human_up, human_range=parse_human_range(human_range),
                           extra_sections=extra)
    write_report(result, output, fmt=fmt)
    n_warn = len(result.alerts)
    summary = result.summary or {}
    inside = f"; {n_warn} warning(s) inside" if n_warn else ""
    shown = "standard output" if output == "-" else output
    err_console.print(f"wrote {fmt} report on {len(df)} rows to {shown}: recommended calibration "
                      f"{summary.get('recommendation_name', '?')}{inside}")
