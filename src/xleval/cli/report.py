"""``xleval report``: one self-contained HTML report (or JSON with the same content) for a scored table."""
from __future__ import annotations

from pathlib import Path

import click

from ._common import col_option, err_console


@click.command("report")
@click.argument("input")
@click.option("--score", required=True, help="Score column to report on.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Where to write the report.")
@click.option("--by", default="tgt_lang", help="Group by tgt_lang, lp or a column name.")
@click.option("--human", help="Human score column (agreement with humans).")
@click.option("--model", type=click.Path(path_type=Path), metavar="LGN.json",
              help="Calibrator from `calibrate fit` (default: fit LGN on INPUT, in-sample).")
@click.option("--format", "fmt", default="html", metavar="[html|json]", help="html (self-contained page) or json (the same content).")
@click.option("--seed", type=click.IntRange(0), default=0, help="Seed of the bootstrap resampling in the diagnostics.")
@click.option("--force", is_flag=True, help="Use the calibrator even if the score's metric signature differs.")
@col_option
def report(input, score, output, by, human, model, fmt, seed, force, col) -> None:
    """Write one self-contained HTML (or JSON) report for a scored table.

    INPUT is a scored table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). The report holds a data
    summary, per-group distributions before and after calibration, bias, calibration parameters,
    agreement with humans and every warning, in one file.
    """
    from ..calibration import LGN, score_signature
    from ..io import check_output_path, parse_column_mapping, read_table
    from ..report import mt_report, write_report

    check_output_path(output, inputs=[input] + ([model] if model is not None else []))
    numeric = [score] + ([human] if human else [])
    lgn = LGN.load(model) if model is not None else None
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    result = mt_report(df, score, by=by, human=human, model=lgn, signature=score_signature(input, score),
                       force=force, random_state=seed, where=input)
    write_report(result, output, fmt=fmt)
    n_warn = len(result.section("warnings").warnings)
    err_console.print(f"wrote {fmt} report on {len(df)} rows to {output}" + (f" ({n_warn} warning(s) inside)" if n_warn else ""))
