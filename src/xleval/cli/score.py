"""``xleval score``: add one column per metric to a table (or score sacrebleu-style plain files)."""
from __future__ import annotations

from typing import Optional

import typer

from ._common import COL_OPTION, FORMAT_OPTION, OutputFormat, emit_json, err_console, print_table


def score(
    input: Optional[str] = typer.Argument(None, help="Table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin); omit with -i/-r."),
    metric: str = typer.Option("bleu,chrf", "--metric", "-m", help="Comma-separated: bleu, chrf, chrf++, ter, comet:PATH, bertscore:PATH, embed:PATH."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the table with score columns here (signatures in its metadata)."),
    corpus: bool = typer.Option(False, "--corpus", help="Print corpus scores per (lp, system) from summed statistics."),
    hyp: Optional[str] = typer.Option(None, "-i", "--hyp", help="Plain-text hypotheses, one segment a line."),
    ref: Optional[list[str]] = typer.Option(None, "-r", "--ref", help="Plain-text reference file (repeat for several)."),
    src: Optional[str] = typer.Option(None, "-s", "--src", help="Plain-text sources (QE metrics)."),
    lp: Optional[str] = typer.Option(None, "-l", "--lp", help="Language pair of the plain files, e.g. de-en."),
    tokenize: Optional[str] = typer.Option(None, "--tokenize", help="BLEU tokenizer for all rows (default: by target language; 13a)."),
    lowercase: bool = typer.Option(False, "--lowercase", "-lc", help="Case-insensitive BLEU/chrF."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Neural metrics: segments per model call."),
    device: Optional[str] = typer.Option(None, "--device", help="Neural metrics: cpu, cuda, cuda:N or mps."),
    precision: Optional[str] = typer.Option(None, "--precision", help="Neural metrics: fp32 or fp16."),
    progress: bool = typer.Option(False, "--progress", help="Neural metrics: show a progress bar."),
    fmt: OutputFormat = FORMAT_OPTION,
    col: Optional[list[str]] = COL_OPTION,
) -> None:
    """Score every segment; print corpus scores with --corpus (or when no -o is given)."""
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_plain_files, read_table, write_table
    from ..metrics import corpus_table, score_frame

    if (input is None) == (hyp is None):
        raise InputError("give either an INPUT table or plain files with -i HYP.txt -r REF.txt [-l de-en]")
    if input is not None:
        df = read_table(input, columns=parse_column_mapping(col), required=["hypothesis"])
    else:
        df = read_plain_files(hypotheses=hyp, references=ref or [], sources=src, lp=lp)
    specs = [m.strip() for m in metric.split(",") if m.strip()]
    neural = {"batch_size": batch_size, "device": device, "precision": precision, "progress": progress or None}
    options = {s: _options(s, tokenize, lowercase, neural) for s in specs}
    scored = score_frame(df, specs, options)
    if output is not None:
        write_table(scored.frame, output, metadata=scored.metadata())
        err_console.print(f"wrote {len(df)} rows with {', '.join(scored.signatures)} to {output}")
    if corpus or output is None:
        _render(corpus_table(scored), scored.metadata(), fmt)
    elif fmt == OutputFormat.json:
        emit_json({"output": output, "rows": len(df), **scored.metadata()})


def _options(spec: str, tokenize: str | None, lowercase: bool, neural: dict) -> dict:
    kind = spec.split(":")[0].lower()
    opts: dict = {}
    if kind in ("comet", "bertscore", "embed"):
        opts.update({k: v for k, v in neural.items() if v is not None})
    if kind == "bleu" and tokenize:
        opts["tokenize"] = tokenize
    if kind in ("bleu", "chrf", "chrf++") and lowercase:
        opts["lowercase"] = True
    return opts


def _render(table, metadata: dict, fmt: OutputFormat) -> None:
    if fmt == OutputFormat.json:
        emit_json({"corpus": table, **metadata})
        return
    print_table(table.to_dict(orient="records"), title="corpus scores", digits=4)
    for column, sig in metadata["signatures"].items():
        err_console.print(f"{column}: {sig}")
