"""``xleval audit``: translation-tax audit of item-level benchmark results (thin shell over
:func:`xleval.audit.audit`)."""
from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import click
import pandas as pd

from xleval.audit import (
    AUDIT_RESAMPLING,
    AnswerParser,
    lm_eval_answers,
    prepare_audit_table,
    rating_scale,
    render_checklist,
)
from xleval.audit import audit as run_audit
from xleval.audit._agreement import check_ratings
from xleval.cli._common import (
    FiniteFloat,
    check_outputs,
    col_option,
    console,
    emit_json,
    format_option,
    print_table,
    progress_bar,
    report_option,
    say,
    write_analysis_report,
)
from xleval.exceptions import InputError
from xleval.io import parse_column_mapping, read_table, write_table, write_text

_DEFAULTS = {k: p.default for k, p in inspect.signature(run_audit).parameters.items()}
_DEFAULTS.update(n_resamples=AUDIT_RESAMPLING.n_resamples, random_state=AUDIT_RESAMPLING.random_state)


@click.command("audit")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@format_option
@click.option("--checklist", type=click.Path(), help="Write the markdown reporting checklist here.")
@click.option("--ratings", type=click.Path(path_type=Path),
              help="Likert ratings (item_id, rater, rating[, dimension]) for E2.")
@click.option("--scale", metavar="LOW-HIGH",
              help="Rating scale of --ratings, e.g. 1-5 (or the levels 1,2,3,4,5); default: lowest to highest "
                   "rating given, with a warning when a level in between is unused.")
@col_option
@click.option("--invalid", type=click.Choice(["wrong", "exclude"]), default=_DEFAULTS["invalid_policy"],
              help="Invalid parses: 'wrong' or 'exclude' (the other is the sensitivity analysis).")
@click.option("--validity-threshold", type=FiniteFloat(0, 1), default=_DEFAULTS["validity_threshold"],
              help="Flag model x condition parser validity below this.")
@click.option("--cluster-by-subject", is_flag=True, default=_DEFAULTS["cluster_by_subject"],
              help="Resample whole subjects in the bootstrap.")
@click.option("--residual-threshold", type=FiniteFloat(),
              help="Pre-declared high-residual cut (default: median split).")
@click.option("--pattern", help="Answer regex (first group = letter); default: first standalone A-D.")
@click.option("--letters", default="ABCD", help="Answer letters.")
@click.option("--n-resamples", type=click.IntRange(2), default=_DEFAULTS["n_resamples"], help="Bootstrap resamples.")
@click.option("--seed", type=click.IntRange(0), default=_DEFAULTS["random_state"],
              help="Random seed (bootstrap, permutations).")
@click.option("--save-table", type=click.Path(), help="Also write the combined long table here.")
@report_option
def audit(inputs, fmt, checklist, ratings, scale, col, invalid, validity_threshold, cluster_by_subject,
          residual_threshold, pattern, letters, n_resamples, seed, save_table, report_path) -> None:
    """Audit a translated benchmark for a translation tax (estimators E1-E4, parser validity, dose-response).

    Each INPUT is a long table (TSV/CSV/JSONL/Parquet; '-' = TSV on stdin) with item_id, model,
    condition and correct or response+answer; or lm-eval samples given as
    CONDITION[@MODEL]=samples_TASK.jsonl.
    """
    if scale is not None and ratings is None:
        raise InputError("--scale is the scale of the --ratings; give --ratings too")
    levels = rating_scale(scale) if scale is not None else None  # a malformed scale is refused before any reading
    check_outputs({"--save-table": save_table, "--checklist": checklist, "--report": report_path},
                  inputs=[spec.partition("=")[2] if "=" in spec and not Path(spec).exists() else spec
                          for spec in inputs] + [ratings])
    parser = AnswerParser(letters=letters, pattern=pattern)  # a bad --pattern is refused before any reading
    data = pd.concat([_read(spec, parse_column_mapping(col), parser) for spec in inputs], ignore_index=True)
    if save_table is not None:
        write_table(data, save_table)
    rating_table = read_table(ratings, required=("item_id", "rater", "rating"),
                              numeric=("rating",)) if ratings else None
    if rating_table is not None:
        check_ratings(rating_table, where=str(ratings))  # an empty cell is refused naming the file
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress_bar("auditing") as advance:
            result = run_audit(data, parser=parser,
                               validity_threshold=validity_threshold, invalid_policy=invalid,
                               cluster_by_subject=cluster_by_subject, residual_threshold=residual_threshold,
                               ratings=rating_table, rating_scale=levels,
                               resampling=AUDIT_RESAMPLING.with_(n_resamples=n_resamples, random_state=seed),
                               progress=advance)
    for w in caught:  # on stderr, so that --format json stays one document
        say("warning", str(w.message))
    if checklist is not None:
        write_text(checklist, render_checklist(result))
    write_analysis_report(report_path, "Translation-tax audit", [result])
    if fmt == "json":
        emit_json(result)
    else:
        _render(result)


def _read(spec: str, columns: dict[str, str], parser: AnswerParser) -> pd.DataFrame:
    head, sep, path = spec.partition("=")
    if sep and path.endswith(".jsonl") and not Path(spec).exists():
        condition, _, model = head.partition("@")
        if not condition:
            raise InputError(f"{spec!r}: expected CONDITION[@MODEL]=samples_TASK.jsonl")
        table, where = lm_eval_answers(path, model=model or None, condition=condition), path
    else:
        table, where = read_table(spec, columns=columns or None), spec
    # each input is checked on its own first, so that a bad cell is named by its file and its row there (the audit
    # checks the inputs together, where a row number counts the rows of all inputs and names no file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # said once, by the audit of all inputs
        prepare_audit_table(table, parser, where=where)
    return table


def _render(result) -> None:
    rows = [{"estimator": c.estimator, "model": c.model, "acc_a": c.acc_a, "acc_b": c.acc_b, "delta": c.estimate,
             "ci": f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}]", "p": c.p_value,
             "n": c.n_a if c.paired else f"{c.n_a}/{c.n_b}"}
            for c in result.contrasts]
    print_table(rows, title=f"Translation-tax estimators (invalid parses {result.invalid_policy})", digits=3)
    flagged = [v.to_dict() for v in result.validity if v.flagged]
    if flagged:
        print_table(flagged, title="Parser validity below threshold", digits=3)
    d = result.dose_response
    if d is not None:
        console.print(f"dose-response {d.estimator} ({d.split} {d.threshold:g}): high {d.high.estimate:+.3f}, "
                      f"low {d.low.estimate:+.3f}, high-low {d.contrast:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}], "
                      f"p={d.p_value:.4f}")
    f = result.family_interaction
    if f is not None and f.tested:
        console.print(f"{f.grouping} interaction {f.estimator}: chi2={f.statistic:.2f}, df={f.df}, p={f.p_value:.4f}")
    for note in result.notes:  # notes quote model and item names: the console shows them as they are
        console.print(f"note: {note}")
