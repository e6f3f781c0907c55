"""``xleval report``: one self-contained HTML report (or JSON with the same content) for a scored table."""
from __future__ import annotations

import click

from ._common import (
    by_option,
    calibration_choice_options,
    col_option,
    err_console,
    format_of_output,
    in_cli_words,
    keep_reference_copies_option,
    logged_warnings_said,
    progress_bar,
    read_ranked_table,
    reference_copy_step,
)
from .calibrate_advice import human_scale_option


@click.command("report")
@click.argument("input")
@click.option("--score", required=True, help="Score column to report on.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Where to write the report ('-' = stdout).")
@by_option("Group by lp, tgt_lang or a column name.")
@click.option("--human", help="Human score column: agreement with humans, LGN's validity, anchored calibration.")
@calibration_choice_options
@human_scale_option
@click.option("--format", "fmt", default="html", metavar="[html|json]",
              help="html (self-contained page) or json (the same content); default: json for an -o named .json, "
                   "else html.")
@click.option("--unit", help="Column the leaderboard's bootstrap resamples (default: doc_id, else seg_id, else rows).")
@click.option("--lower-is-better/--higher-is-better", "lower_is_better", default=None,
              help="The score's direction, as `xleval leaderboard` takes it (default: from its signature, else its "
                   "metric's name: TER and MetricX rank low scores first).")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, help="Bootstrap and permutation resamples.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Seed of the bootstrap and the cross-validation.")
@click.option("--force", is_flag=True, help="Use the calibrator even if the score's metric signature differs.")
@click.option("--output-checks", is_flag=True,
              help="Add a section of output checks (empty, copied, off-target, truncated outputs per group and their "
                   "effect on the score; docs/output-checks.md); needs the hypothesis texts.")
@click.option("--meta", "meta_metrics", metavar="A,B,...",
              help="Add a meta-evaluation section: these metric columns (bleu, chrf, chrf++, ter are scored from the "
                   "texts if absent) against --human in WMT's statistics, as `xleval meta` computes them.")
@click.option("--judges", "judges", metavar="A,B,...|auto|none", default="auto", show_default=True,
              help="Add the section 'Judges per language': the agreement of these columns per group, as `xleval "
                   "judges agree`; auto: the table's judge columns (their signature says judge) when there are two "
                   "or more; none: no such section.")
@keep_reference_copies_option
@col_option
def report(input, score, output, by, human, system, method, model, metric, human_up, human_range, human_scale, fmt,
           unit, lower_is_better, n_resamples, seed, force, output_checks, meta_metrics, judges, keep_reference_copies,
           col) -> None:
    """Write one self-contained HTML (or JSON) report for a scored table.

    INPUT is a scored table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). The report answers
    first: is there language bias, may LGN be used, which calibration and why, agreement with humans
    across groups (cross-validated), the leaderboard and every check that did not pass; then plots
    and detail.
    """
    fmt = format_of_output(fmt, output, ("html", "json"))  # -o report.json writes JSON
    from ..calibration import HumanScale
    from ..calibration._scales import direction_for
    from ..decision import Caller
    from ..exceptions import InputError
    from ..io import check_output_path
    from ..leaderboard import ScoreReading
    from ..report import check_format, mt_report, write_report
    from ..stats import Resampling
    from .calibrate_common import parse_human_range, rerun_command, scale_notes, scale_range
    from .meta import judges_agreement

    check_format(fmt)
    if meta_metrics is not None and not meta_metrics.replace(",", "").strip():
        raise InputError(f"--meta {meta_metrics!r} names no metric column; give the metric columns to "
                         "meta-evaluate, e.g. --meta bleu,chrf, or leave --meta out")
    if meta_metrics is not None and human is None:  # before the table is read and its outputs checked
        raise InputError("--meta compares metrics with human scores: give the human column with --human")
    check_output_path(output, inputs=[input] + ([model] if model is not None else []), stdout=True)
    data, calibrator, commands = read_ranked_table(input, score=score, human=human, system=system, by=by,
                                                   model=model, col=col)
    human_up = direction_for(data.frame, human, human_scale, human_up)  # a named scale says its direction
    kept, copies = reference_copy_step(data.frame, data.by, system, input, keep_reference_copies)
    data = data.with_rows(kept.index)
    df = data.frame
    extra = (_copies_section(copies),) if copies else ()
    checks = _output_checks(df, data.by, system, score, input) if output_checks else None
    meta = (_meta(df, meta_metrics, human, data.by, system, input, data.signatures, n_resamples, seed)
            if meta_metrics else None)
    agreement = judges_agreement(df, judges, input, data.signatures, list(data.by), system)
    # a named scale with known bounds (ESA, raw DA 0-100) bounds the calibrated scores without a flag
    bounds = scale_range(df, human, human_scale, human_range)
    with progress_bar(f"report on {input}") as advance, logged_warnings_said("xleval.report"):
        result = mt_report(data, system=system, model=calibrator, method=method,
                           reading=ScoreReading(metric=metric, unit=unit, force=force,
                                                higher_is_better=None if lower_is_better is None else
                                                not lower_is_better),
                           resampling=Resampling(n_resamples=n_resamples, random_state=seed),
                           human_scale=HumanScale(human_scale, human_up, parse_human_range(bounds[0])),
                           caller=Caller(where=input, commands=commands, progress=advance),
                           output_checks=checks, meta=meta, judges=agreement, extra_sections=extra)
    said = scale_notes(bounds, result.leaderboard or (), df, human,
                       (result.summary or {}).get("calibration_used", {}).get("method"),
                       rerun_command(commands, "report", score, by, human, system, method, ("-o", str(output)),
                                     human_scale=human_scale),
                       human_scale=human_scale)
    if said:  # said in the report's warnings, where the values are shown
        import dataclasses

        from ..report import generic_section

        result = dataclasses.replace(result, sections=(*result.sections, generic_section(
            "Calibrated scores and the human scale", warnings=said)))
    result = in_cli_words(result)  # the library's words name its arguments: say them as flags
    write_report(result, output, fmt=fmt)
    inside = f"; {len(result.alerts)} warning(s) inside" if result.alerts else ""
    shown = "standard output" if output == "-" else output
    facts = dict(result.meta)
    rows = (f"{facts['rows']} of {facts['input rows']} rows (the others are in groups with no finite {score})"
            if "input rows" in facts else f"{facts.get('rows', len(df))} rows")
    err_console.print(f"wrote {fmt} report on {rows} to {shown}: recommended calibration "
                      f"{(result.summary or {}).get('recommendation_name', '?')}{inside}")


def _output_checks(df, by, system, score, where):
    """``--output-checks``: :func:`xleval.output_checks.check_outputs` of the report's table, grouped as the
    report groups, with the score as the one metric."""
    from ..exceptions import InputError
    from ..output_checks import check_outputs

    if "hypothesis" not in df.columns:
        raise InputError(f"{where}: --output-checks checks the output texts, and the table has no 'hypothesis' "
                         "column; map one with --col hypothesis=COLUMN, or drop --output-checks")
    try:
        return check_outputs(df, by=list(by), system=system if system in df.columns else None, metrics=(score,))
    except InputError as exc:  # the library cannot name the file: say which table
        raise exc.prefixed(str(where)) from None


def _meta(df, metrics: str, human: str, by, system: str, where, signatures, n_resamples: int, seed: int):
    """``--meta A,B``: :func:`xleval.meta.meta_evaluate` of these metrics against the report's human column
    (the command refused --meta without --human before reading the table), grouped as the report groups,
    directions and computed columns as `xleval meta` has them."""
    import dataclasses
    import warnings

    from ..meta import meta_evaluate
    from ..stats import Resampling
    from ._common import parse_columns
    from .calibrate_common import in_table
    from .meta import metric_columns

    names = parse_columns(metrics, "--meta")
    df, lower_is_better = metric_columns(df, names, signatures)
    by_cols = list(by)  # the report's grouping
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the report's own warnings section speaks for the table
        result = in_table(where, meta_evaluate, df, names, human, by=by_cols[0] if len(by_cols) == 1 else by_cols,
                          system=system, resampling=Resampling(n_resamples=n_resamples, random_state=seed),
                          lower_is_better=lower_is_better)
    return dataclasses.replace(result, notes=tuple(_in_meta_words(n) for n in result.notes))


def _in_meta_words(note: str) -> str:
    """A note of the meta-evaluation that names one of its settings (``system_scores='judged'``), which the report
    does not take, as `xleval meta` types it, and said to be that command's."""
    from ._errors import cli_words
    from .meta import meta

    said = cli_words(note, meta)
    return note if said == note else f"{said} (an option of `xleval meta`, which runs this meta-evaluation alone)"


def _copies_section(note: str):
    """The report's word on the systems that copy the reference: a warning in the warnings list, and where."""
    from ..report import generic_section

    return generic_section("Reference copies", warnings=(note,), paragraphs=(
        "A system whose outputs equal the reference on at least 80% of its rows (after normalising case, "
        "punctuation and white space) scores the metric's best against that reference: it would top the ranking "
        "and move the calibration. docs/output-checks.md gives the rule and its thresholds.",))
