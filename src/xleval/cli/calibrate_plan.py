"""``xleval calibrate plan``: how many more labels per group, which rows, and whether to stop."""
from __future__ import annotations

import warnings

import click

from .._base.terminal import shell_word, styled
from ..calibration import ROW_CHOICES
from ..calibration._plan import ALLOCATIONS
from ..io import check_output_path, parse_column_mapping, read_table, write_table
from ._common import (
    ANNOTATED_TEXTS,
    PROBABILITY,
    FiniteFloat,
    by_option,
    check_named_column,
    col_option,
    err_console,
    format_option,
    grouping,
    keep_reference_copies_option,
    reference_copy_step,
    say,
    working,
)
from .calibrate_advice import human_scale_option
from .calibrate_common import app, in_table, merge_command, render


@app.command("plan")
@click.argument("input")
@click.option("--budget", type=click.IntRange(1), required=True,
              help="Labels in all, those already in --human included (e.g. 700 for 100 per pair over 7 pairs).")
@click.option("--score", required=True, help="Score column of the anchored calibration.")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--human", help="Human column: its values are the labels already collected (NaN = not labelled).")
@click.option("--system", default="system",
              help="System column: every system gets a label when the budget allows (--rows systems|spread: evenly "
                   "over systems).")
@click.option("--segment", default="seg_id", help="Segment column (--rows spread: distinct segments first).")
@click.option("--document", default="doc_id", help="Document column (--rows spread: distinct documents first).")
@click.option("--rows", "rows", type=click.Choice(ROW_CHOICES), default="stratified",
              help="Rows within a group: stratified (the default: a random sample stratified by system and document), "
                   "random (a simple random sample; one row for each system without a label first), systems (evenly "
                   "over systems) or spread (evenly over systems, over documents and segments within a system).")
@click.option("--allocation", type=click.Choice(ALLOCATIONS), default="equal",
              help="Labels per group: equal (the default: the same number in every group, counting those there; no "
                   "allocation by residual sd beat it on WMT21 or in simulation) or neyman (by each group's residual "
                   "sd and the cross-group system pairs it enters).")
@click.option("--confidence", type=PROBABILITY, default=0.95, help="Confidence of the stopping rule.")
@click.option("--power", type=PROBABILITY, default=0.8,
              help="Chance that the labels asked for settle a gap, if the gap is as estimated.")
@click.option("--residual-sd", type=FiniteFloat(0, None, low_open=True),
              help="Residual sd of the human scale to assume where no labels tell it (raw DA on WMT21: 26-34 "
                   "points per pair).")
@click.option("-o", "--output", help="Where to write the rows to label (format by extension, '-' = TSV on stdout).")
@click.option("--label-column", default="human", help="Name of the empty column the annotators fill in.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Random state of the row choice.")
@human_scale_option
@keep_reference_copies_option
@col_option
@format_option
def plan(input, budget, score, by, human, system, segment, document, rows, allocation, confidence, power,
         residual_sd, output, label_column, seed, human_scale, keep_reference_copies, col, fmt) -> None:
    """Plan BUDGET labels in all for anchored calibration: how many more per group, which rows, and
    whether the ranking across groups is settled.

    Labels go to groups equally (or, with --allocation neyman, by each group's residual sd and the
    cross-group system pairs its offset enters), at least one per system, and within a group at
    random stratified by system and document; the output states the method, the expected standard
    error of each group's offset after the planned labels, and the stopping rule. -o writes the
    rows as `calibrate select` does.
    """
    from ..calibration import LabelDraw, PlanTarget, plan_labels

    if output is not None:
        check_output_path(output, inputs=[input], stdout=True)
    numeric = [score] + ([human] if human else [])
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    for flag, name in (("--system", system), ("--segment", segment), ("--document", document)):
        check_named_column(df, flag, name, input)
    by_cols = grouping(by, df.columns)
    df, _ = reference_copy_step(df, by_cols, system, input, keep_reference_copies)  # no annotator judges a copy
    positions = df.index.to_numpy()  # the rows' positions in INPUT (read as 0..n-1), also with copies left out
    df = df.reset_index(drop=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        target = in_table(input, PlanTarget, confidence=confidence, power=power, residual_sd=residual_sd)
        draw = in_table(input, LabelDraw, allocation=allocation, rows=rows, random_state=seed)
        with working(f"planning labels for {input}"):  # plan_labels tells no steps
            result = in_table(input, plan_labels, df, by_cols if len(by_cols) > 1 else by_cols[0], budget, score=score,
                              human=human, system=system, segment=segment, document=document, target=target,
                              draw=draw, label_column=label_column, human_scale=human_scale)
    if output is not None:
        chosen = result.rows
        chosen["row_id"] = positions[chosen["row_id"].to_numpy()]
        write_table(chosen, output, multiline=ANNOTATED_TEXTS)  # a text with a tab or line break in CSV quotes
        if output == "-":
            return
    grouped = "+".join(by_cols)
    merge = None if output is None else merge_command(str(output), str(input), label_column, human, col)
    payload = {**result.to_dict(), "by": grouped, "output": output, "merge": merge} if fmt == "json" else \
        {"groups": result.groups, "gaps between adjacent groups": result.gaps}
    payload_warnings = [str(w.message) for w in caught]
    render(fmt, payload, payload_warnings,
           title=f"plan by {grouped}: {result.to_add} more labels ({result.labelled} already, {result.budget} in all)"
                 + (f" -> {output}" if output else " (give -o to write the rows)"))
    if fmt != "json":
        for note in result.notes:
            if note not in payload_warnings:
                say("note", note, style="")
        say("verdict", result.verdict, style="")
        say("method", result.method, style="")
        if merge:  # one line, as calibrate select's: the command in it pastes whole (soft wrap, not broken)
            err_console.print(styled("note: ", "", f"once {label_column!r} is filled in: {merge}; then plan again on "
                                     f"labelled.parquet with --human {shell_word(human or label_column)}"),
                              soft_wrap=True)
