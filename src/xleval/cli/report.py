"""``xleval report``: one self-contained HTML report (or JSON with the same content) for a scored table."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ._common import COL_OPTION, err_console


def report(
    input: str = typer.Argument(..., help="Scored table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin)."),
    score: str = typer.Option(..., "--score", help="Score column to report on."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the report."),
    by: str = typer.Option("tgt_lang", "--by", help="Group by tgt_lang, lp or a column name."),
    human: Optional[str] = typer.Option(None, "--human", help="Human score column (agreement with humans)."),
    model: Optional[Path] = typer.Option(None, "--model", metavar="LGN.json", help="Calibrator from `calibrate fit` (default: fit LGN on INPUT, in-sample)."),
    fmt: str = typer.Option("html", "--format", help="html (self-contained page) or json (the same content)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap resampling in the diagnostics."),
    force: bool = typer.Option(False, "--force", help="Use the calibrator even if the score's metric signature differs."),
    col: Optional[list[str]] = COL_OPTION,
) -> None:
    """Data summary, per-group distributions before and after calibration, bias, calibration
    parameters, agreement with humans and every warning, in one file."""
    from ..calibration import LGN, score_signature
    from ..io import parse_column_mapping, read_table
    from ..report import mt_report, write_report

    numeric = [score] + ([human] if human else [])
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    lgn = LGN.load(model) if model is not None else None
    result = mt_report(df, score, by=by, human=human, model=lgn, signature=score_signature(input, score),
                       force=force, random_state=seed, where=input)
    write_report(result, output, fmt=fmt)
    n_warn = len(result.section("warnings").warnings)
    err_console.print(f"wrote {fmt} report on {len(df)} rows to {output}" + (f" ({n_warn} warning(s) inside)" if n_warn else ""))
