"""``xleval check-outputs TABLE``: per-row output checks (empty, copied source, off-target, truncated, identical
to the reference, extreme length), their rates per (group, system) and their effect on each metric column."""
from __future__ import annotations

from pathlib import Path

import click

from ..output_checks import FLAGS
from ._common import (
    by_option,
    col_option,
    emit_json,
    emit_tsv,
    err_console,
    format_of_output,
    parse_columns,
    print_table,
    say,
    working,
)
from ._common import check_outputs as check_paths


@click.command("check-outputs")
@click.argument("table")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--system", default="system", help="System column (without one, each group is one system).")
@click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="Keep rows with COLUMN=VALUE (repeatable).")
@click.option("--score", "metrics", multiple=True, help="Metric column whose mean is compared on flagged and "
                                                         "unflagged rows (repeatable, e.g. --score chrf --score bleu).")
@click.option("--flag", "flags", multiple=True, type=click.Choice(FLAGS),
              help="Check only these flags (repeatable; default: every flag the table's columns allow).")
@click.option("--langid", type=click.Choice(["auto", "py3langid", "none"]), default="auto",
              help="Language identifier of the off-target flag (extra 'langid'); auto = py3langid when installed; "
                   "none skips that flag.")
@click.option("--near-copy", type=click.FloatRange(0, 100, min_open=True), default=70.0,
              help="chrF(hypothesis, source) from which a hypothesis counts as a copy of the source.")
@click.option("--length-z", type=click.FloatRange(0, min_open=True), default=3.5,
              help="Robust z of the length ratio beyond which the length is extreme.")
@click.option("--truncated-z", type=click.FloatRange(0, min_open=True), default=2.0,
              help="Robust z of the length ratio below whose negative an output that ends mid-sentence is truncated.")
@click.option("--min-letters", type=click.IntRange(0), default=20,
              help="Letters an output needs for its language to be checked (off_target).")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              help="Confidence level of the intervals.")
@click.option("--format", "fmt", type=click.Choice(["text", "tsv", "json"]), default="text",
              help="text (tables), tsv (the rates, full precision) or json (rates, effects, settings); default: "
                   "as -o's extension says (.tsv, .json), else text.")
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write here instead of stdout ('-' = stdout).")
@click.option("--rows", "rows_path", type=click.Path(path_type=Path),
              help="Also write the per-row flags here (.tsv/.parquet/.jsonl).")
@col_option
def check_outputs(table, by, system, where, metrics, flags, langid, level, fmt, output, rows_path, col,
                  **thresholds) -> None:
    """Flag outputs that fool metrics and compare their rates across groups and systems.

    TABLE has a hypothesis column and, for the flags that need them, source, reference and language
    columns (lp or tgt_lang). Flags are defined in docs/output-checks.md.
    """
    fmt = format_of_output(fmt, output)  # -o rates.tsv writes TSV
    from ..io import parse_column_mapping, read_table, select_rows, write_table, write_text
    from ..io._write import _terminal_device, format_rows, outputs_together
    from ..output_checks import FlagThresholds  # **thresholds: its four options, by their names
    from ..output_checks import check_outputs as run

    check_paths({"-o": output, "--rows": rows_path}, inputs=[table], stdout=["-o"])
    # COL[,COL...] as every other --by reads it (without this, 'lp,system' was looked up as one column)
    by = None if by is None else parse_columns(by, "--by")
    if output is not None and fmt == "text" and str(output) != "-":
        raise click.UsageError(f"-o {output}: the text tables are for the terminal; write the results to a file with "
                               "--format tsv or --format json")
    df = select_rows(read_table(table, columns=parse_column_mapping(col), required=["hypothesis", *metrics],
                                numeric=list(metrics)), where)
    from ..exceptions import InputError

    try:
        with working(f"checking {len(df)} outputs of {table}"):  # the library tells no steps
            result = run(df, by=by, system=system, metrics=metrics, flags=list(flags) if flags else "auto",
                         langid=langid, thresholds=FlagThresholds(**thresholds), level=level)
    except InputError as exc:  # the library cannot name the file: say which table
        raise exc.prefixed(str(table)) from None
    tsv_file = None
    if fmt == "tsv" and output is not None and str(output) != "-" and not _terminal_device(output):
        # formatted first: a name TSV cannot hold is refused before anything is written (the per-row flags included)
        tsv_file = format_rows(result.rates, "tsv", where=f"{output}: ", instead="use --format json, which holds any "
                               "name")
    # the per-row flags and -o land together or neither does (docs/errors.md): the flags stay a temporary file
    # until -o is written too, so a failed -o (a full disk, /dev/full) leaves no --rows file behind
    with outputs_together():
        if rows_path is not None:
            write_table(result.flags, rows_path)
        if fmt == "json":
            emit_json(result.to_dict(), output)
        elif fmt == "tsv":
            if tsv_file is not None:
                write_text(output, tsv_file)  # atomically
            else:
                emit_tsv(result.rates, output, float_format=lambda v: repr(float(v)))
        else:
            _print(result)
    # notes last: a refusal above is then the command's one line
    for note in result.notes:
        say("note", note, "cyan")
    if rows_path is not None:
        err_console.print(f"wrote per-row flags ({len(result.flags)} rows) to {rows_path}")


def _print(result) -> None:
    import pandas as pd

    keys = list(dict.fromkeys([*result.by, *([result.system] if result.system else [])]))  # --by system: one key
    wide = result.rates.pivot_table(index=keys, columns="flag", values="rate", sort=False)
    # the rates' order (sorted by key); the pivot orders a key by its values' first appearance in the whole table
    # (de-en's systems that cs-en also has came before the others), and the flags as the checks run
    order = result.rates[keys].drop_duplicates()
    wide = wide.reindex(pd.MultiIndex.from_frame(order) if len(keys) > 1 else pd.Index(order[keys[0]]),
                        columns=list(dict.fromkeys(result.rates["flag"])))
    rows = [{**dict(zip(keys, k if isinstance(k, tuple) else (k,), strict=True)),
             **{f"{f} %": 100 * float(v) for f, v in r.items()}} for k, r in wide.iterrows()]
    print_table(rows, title=f"output checks: % of rows flagged per ({', '.join(keys)}) "
                            f"(intervals: --format json or tsv)")
    g = result.group_rates
    print_table([{**{c: r[c] for c in result.by}, "flag": r["flag"], "n": r["n"], "count": r["count"],
                  "rate %": 100 * r["rate"], "CI low %": 100 * r["ci_low"], "CI high %": 100 * r["ci_high"]}
                 for r in g.to_dict(orient="records") if r["count"]],
                title=f"flagged rows per {', '.join(result.by)}, all systems (Wilson {result.level:g} interval)")
    e = result.effects
    if len(e):
        print_table([{**{c: r[c] for c in result.by}, "flag": r["flag"], "metric": r["metric"],
                      "flagged n": r["n_flagged"], "flagged mean": r["mean_flagged"],
                      "unflagged mean": r["mean_unflagged"], "difference": r["difference"], "CI low": r["ci_low"],
                      "CI high": r["ci_high"]} for r in e.to_dict(orient="records")],
                    title=f"effect of each flag on each metric (mean flagged - unflagged, Welch {result.level:g} "
                          "interval)")


# --exclude-invalid of the commands that fit or rank (calibrate fit, leaderboard) ----------------------------------
exclude_invalid_option = click.option(
    "--exclude-invalid", is_flag=True,
    help="Leave out the rows that the output checks flag as not translations (empty, copy of the source, "
         "off-target, truncated; docs/output-checks.md) first; the output says how many.")


def drop_invalid(df, by, where, system=None):
    """``df`` without the rows flagged invalid, and the sentence that says so (the library's
    :func:`xleval.output_checks.exclude_invalid`); a note for each flag that could not be checked. ``system``:
    the system column; by default the running command's ``--system`` (so a system that loses every row is named
    under ``--system model`` too)."""
    from ..exceptions import InputError
    from ..output_checks import exclude_invalid

    if system is None:
        ctx = click.get_current_context(silent=True)
        system = (ctx.params.get("system") if ctx is not None else None) or "system"

    if "hypothesis" not in df.columns:
        raise InputError(f"{where}: --exclude-invalid checks the output texts, and the table has no 'hypothesis' "
                         "column; map one with --col hypothesis=COLUMN, or drop --exclude-invalid")
    kept, summary = exclude_invalid(df, by=by, system=system)
    for note in summary.notes:
        say("note", note, "cyan")
    return kept, summary.sentence()

