"""``xleval calibrate merge LABELS TABLE -o OUT``: the filled-in labels of ``calibrate select`` back into the
scored table, keeping its signatures (the label round trip without a pandas step)."""
from __future__ import annotations

import click

from ._common import check_outputs, col_option, emit_json, err_console, format_option, parse_columns, say
from .calibrate_common import app


@app.command("merge")
@click.argument("labels")
@click.argument("table")
@click.option("-o", "--output", required=True, help="The table with the labels (format by extension; the metric "
              "signatures of TABLE go with it).")
@click.option("--label-column", default="human", help="The column the annotators filled in (an empty cell = not "
              "labelled).")
@click.option("--into", help="Column of the table the labels go into (default: the --label-column name).")
@click.option("--on", metavar="COL[,COL...]",
              help="Key columns (default: lp/tgt_lang/..., system and seg_id when both files have them and they name "
                   "one row of TABLE each; else row_id, the row's 0-based position in TABLE).")
@click.option("--overwrite", is_flag=True, help="Replace values the table already has where a label differs "
              "(default: refused).")
@col_option
@format_option
def merge(labels, table, output, label_column, into, on, overwrite, col, fmt) -> None:
    """Merge filled-in labels (LABELS, from `calibrate select`) into the scored TABLE they were chosen from.

    Every label must match one row of TABLE (a label that matches none is refused, never dropped);
    where both files have the hypothesis, it must be the text the label judged. Then fit the
    anchored calibration on OUT with the label column as the human column (README: "Labels").
    --col maps TABLE's columns as `calibrate select --col` read them (the rows carry the canonical names), so
    that the labels are joined on the identity columns and checked against the hypothesis; OUT keeps TABLE's
    own column names.
    """
    from ..calibration import merge_labels
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_table, read_table_metadata, write_table

    check_outputs({"-o": output}, inputs=[labels, table], stdout=["-o"])
    mapping = parse_column_mapping(col)  # TABLE's column -> the canonical name the rows carry
    filled = read_table(labels)
    df = read_table(table, columns=mapping)
    metadata = read_table_metadata(table)
    try:
        merged, summary = merge_labels(df, filled, label_column=label_column, into=into, overwrite=overwrite,
                                       on=parse_columns(on, "--on") if on else None)
    except InputError as exc:  # most refusals are about a label; a few about the table (merge_labels says which)
        raise exc.prefixed(str(table if exc.about == "table" else labels)) from None
    # OUT is TABLE with the labels: its columns keep the names TABLE gave them
    merged = merged.rename(columns={canonical: in_file for in_file, canonical in mapping.items()})
    write_table(merged, output, metadata=metadata or None)
    if fmt == "json":
        emit_json({"output": str(output), **summary.to_dict(), "signatures": metadata.get("signatures", {})})
        return
    kept = f"; signatures kept ({', '.join(metadata['signatures'])})" if metadata.get("signatures") else ""
    for note in summary.notes:
        say("note", note)
    err_console.print(f"{summary.sentence()}{kept} -> {output}")

