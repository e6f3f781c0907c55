"""``xleval judges agree TABLE --judges A,B[,C]``: per-language agreement between judges (or a judge and a metric)."""
from __future__ import annotations

import click

from ._common import (
    check_outputs,
    col_option,
    emit_json,
    emit_tsv,
    format_of_output,
    format_option,
    print_table,
    say,
)


@click.group("judges")
def judges() -> None:
    """LLM judges in the analyses: agreement between judges per language (docs/judges.md)."""


@judges.command("agree")
@click.argument("table")
@click.option("--judges", "columns", required=True, help="Score columns to compare, comma-separated (two or more: "
              "judges, or a judge and a metric), e.g. GEMBA-ESA-CMDA,GEMBA-ESA-GPT4.1.")
@click.option("--by", default="lp", show_default=True, help="Group column: one row of statistics per group.")
@click.option("--bins", default="5", show_default=True,
              help="Kappa classes: N quantile classes per column within each group, or fixed edges for judges on "
                   "one scale, e.g. 0,33,66,100.01.")
@click.option("--sort", "sort", type=click.Choice(["group", "kendall", "pearson", "kappa", "pairwise"]),
              default="kendall", show_default=True, help="Order of the rows (lowest agreement first).")
@click.option("-o", "--output", help="Write the statistics here ('-' = stdout) instead of a table: TSV, or JSON "
              "with --format json or a .json name.")
@col_option
@format_option
def agree(table, columns, by, bins, sort, output, col, fmt) -> None:
    """Kendall tau-b, Pearson r, quadratically weighted kappa on binned scores and pairwise system-order agreement
    of every pair of --judges columns, per --by group and pooled (group *)."""
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_table
    from ..judges import judge_agreement

    check_outputs({"--output": output}, [table], stdout=["--output"])
    names = [c.strip() for c in columns.split(",") if c.strip()]
    try:
        parsed = [float(b) for b in bins.split(",")]
    except ValueError:
        raise InputError(f"--bins {bins!r}: give a number of classes (5) or increasing edges (0,33,66,100.01)") \
            from None
    bin_spec = int(parsed[0]) if len(parsed) == 1 and parsed[0].is_integer() else parsed
    df = read_table(table, columns=parse_column_mapping(col), required=[*names, "system"])
    from ..judges._agree import POOLED

    try:
        result = judge_agreement(df, names, by=by, bins=bin_spec)
    except InputError as exc:  # the library cannot name the file
        raise exc.prefixed(str(table)) from None
    out = result.table
    pooled, groups = out[out["group"] == POOLED], out[out["group"] != POOLED]
    out = groups.sort_values([sort, "group"]) if sort != "group" else groups.sort_values("group")
    import pandas as pd

    out = pd.concat([out, pooled], ignore_index=True)
    fmt = format_of_output(fmt, output)  # -o agreement.json writes JSON
    if fmt == "json":  # to -o when given (--format json -o FILE wrote TSV)
        emit_json(result.to_dict(), output)
    elif output is not None:
        emit_tsv(out, output)
    else:
        print_table(out.to_dict(orient="records"), title=f"judge agreement per {by} (lowest {sort} first; * = pooled)")
        say("note", "kendall: tau-b of segment scores; kappa: quadratic weights on "
                    + (f"{bin_spec} quantile classes per column and group" if isinstance(bin_spec, int)
                       else f"fixed classes {bins}")
                    + "; pairwise: share of system pairs ordered alike by the two columns' means (pooled: "
                      "(group, system) pairs across groups)", style="dim")
