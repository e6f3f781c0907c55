"""``xleval calibrate select``: choose the rows to send to annotators for anchored calibration."""
from __future__ import annotations

import warnings

import click

from .._base.terminal import styled
from ..calibration import SELECTIONS
from ..io import check_output_path, parse_column_mapping, read_table, write_table
from ._common import (
    ANNOTATED_TEXTS,
    by_option,
    check_named_column,
    col_option,
    err_console,
    format_option,
    grouping,
    keep_reference_copies_option,
    reference_copy_step,
)
from .calibrate_common import app, in_table, merge_command, render


@app.command("select")
@click.argument("input")
@by_option("Group by lp, tgt_lang, or COL[,COL...]: the budget is per group.")
@click.option("--budget", type=click.IntRange(1), required=True,
              help="Rows to annotate per group, e.g. 100. A larger budget with the same seed is a new draw, not the "
                   "smaller one's rows and more: to add labels, select again with --skip-labelled COL.")
@click.option("--score", required=True, help="Score column (--selection spread spreads the labels over its range).")
@click.option("-o", "--output", required=True, help="Where to write the rows to annotate (format by extension, '-' = "
              "TSV on stdout).")
@click.option("--system", default="system", help="System column (--selection spread: evenly over systems).")
@click.option("--segment", default="seg_id", help="Segment column (--selection spread: no segment is chosen twice in "
              "a group while others are left).")
@click.option("--document", default="doc_id", help="Document column (--selection stratified: evenly over documents "
              "within a system).")
@click.option("--selection", type=click.Choice(SELECTIONS), default="stratified",
              help="stratified (the default: random, stratified by system and document), random (a simple random "
                   "sample) or spread (over systems and the score's range; on WMT21 no rule beat a random sample "
                   "measurably). `calibrate plan` says how many labels each group needs.")
@click.option("--skip-labelled", metavar="COL", help="Human column: rows that already have a value are not chosen.")
@click.option("--label-column", default="human", help="Name of the empty column the annotators fill in.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Random state of the selection.")
@keep_reference_copies_option
@col_option
@format_option
def select(input, by, budget, score, output, system, segment, document, selection, skip_labelled, label_column, seed,
           keep_reference_copies, col, fmt) -> None:
    """Choose BUDGET rows per group to send to annotators for anchored calibration: a random sample
    stratified by system and document by default (spread over systems and scores was not measurably
    better than random on WMT21).

    Writes row_id (the row's 0-based position in INPUT, pandas' numbering), lp (the --by columns),
    system, seg_id, doc_id, source, hypothesis and reference (those present) and an empty label
    column; never the score (it would sway the judges). Texts with a tab or line break are written in
    CSV quotes. Merge the filled-in labels back with `xleval calibrate merge OUTPUT INPUT -o OUT`
    (on lp, system, seg_id, else row_id).
    """
    from ..calibration import select_for_annotation

    check_output_path(output, inputs=[input], stdout=True)
    numeric = [score] + ([skip_labelled] if skip_labelled else [])
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    check_named_column(df, "--system", system, input)
    check_named_column(df, "--segment", segment, input)
    check_named_column(df, "--document", document, input)
    by_cols = grouping(by, df.columns)
    df, _ = reference_copy_step(df, by_cols, system, input, keep_reference_copies)  # no annotator judges a copy
    positions = df.index.to_numpy()  # the rows' positions in INPUT (read as 0..n-1), also with copies left out
    df = df.reset_index(drop=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = in_table(input, select_for_annotation, df, by_cols if len(by_cols) > 1 else by_cols[0], budget,
                     score=score, system=system, segment=segment, method=selection, label_column=label_column,
                     document=document,
                     skip_labelled=skip_labelled, random_state=seed)
    chosen["row_id"] = positions[chosen["row_id"].to_numpy()]
    write_table(chosen, output, multiline=ANNOTATED_TEXTS)  # a tab or line break in a text: CSV quotes, as pandas
    if output == "-":
        return
    per_group = chosen.groupby(by_cols).size()
    counts = {("|".join(map(str, k)) if isinstance(k, tuple) else str(k)): int(v) for k, v in per_group.items()}

    # into the labels there are (--skip-labelled COL), as `calibrate plan` merges into --human
    merge = merge_command(str(output), str(input), label_column, skip_labelled, col)
    key = [c for c in (*by_cols, system, segment) if c in chosen.columns]
    render(fmt, {"output": output, "rows": len(chosen), "selection": selection, "seed": seed, "by": "+".join(by_cols),
                 "per_group": counts, "key": [*key, "row_id"], "merge": merge}, [str(w.message) for w in caught],
           title=f"selected {len(chosen)} rows (up to {budget} per {'+'.join(by_cols)} group, {selection}) -> {output}")
    if fmt != "json":  # one line: the command in it pastes whole (a terminal wraps it at words, around the command)
        err_console.print(styled("note: ", "", f"each row is keyed by {', '.join(key)} and row_id (its 0-based "
                                 f"position in {input}, as pandas numbers it); once {label_column!r} is filled in: "
                                 f"{merge}"), soft_wrap=True)
