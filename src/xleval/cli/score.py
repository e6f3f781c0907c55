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
    chunk_size: Optional[int] = typer.Option(None, "--chunk-size", help="Stream INPUT in batches of N rows into -o "
                                             "(bounded memory); BLEU then needs an explicit --tokenize."),
    backend: str = typer.Option("local", "--backend", help="local or dask (with --chunk-size)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Dask: start a local cluster of N workers."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask: address of an existing scheduler."),
) -> None:
    """Score every segment; print corpus scores with --corpus (or when no -o is given)."""
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_plain_files, read_table, write_table
    from ..metrics import corpus_table, score_frame

    if (input is None) == (hyp is None):
        raise InputError("give either an INPUT table or plain files with -i HYP.txt -r REF.txt [-l de-en]")
    specs = [m.strip() for m in metric.split(",") if m.strip()]
    neural = {"batch_size": batch_size, "device": device, "precision": precision, "progress": progress or None}
    options = {s: _options(s, tokenize, lowercase, neural) for s in specs}
    if chunk_size is not None or backend != "local":
        return _streamed(input, output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus)
    if input is not None:
        df = read_table(input, columns=parse_column_mapping(col), required=["hypothesis"])
    else:
        df = read_plain_files(hypotheses=hyp, references=ref or [], sources=src, lp=lp)
    scored = score_frame(df, specs, options)
    if output is not None:
        write_table(scored.frame, output, metadata=scored.metadata())
        err_console.print(f"wrote {len(df)} rows with {', '.join(scored.signatures)} to {output}")
    if corpus or output is None:
        _render(corpus_table(scored), scored.metadata(), fmt)
    elif fmt == OutputFormat.json:
        emit_json({"output": output, "rows": len(df), **scored.metadata()})


def _streamed(input, output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus) -> None:
    """Batch-by-batch scoring of a large table (xleval.scale.score_chunked)."""
    from ..exceptions import InputError
    from ..io import check_output_path, parse_column_mapping
    from ..metrics import get_metric
    from ..scale import DEFAULT_CHUNK_SIZE, resolve_backend, score_chunked, should_stream
    from ._common import row_progress

    if input is None or output is None or output == "-":
        raise InputError("--chunk-size streams an INPUT table into an output file: give INPUT and -o OUTPUT")
    if corpus:
        raise InputError("--corpus needs every row in memory; drop --chunk-size (or score, then aggregate the file)")
    for spec in specs:
        if spec.split(":")[0].lower() == "bleu" and "tokenize" not in options[spec]:
            raise InputError("streamed BLEU uses one tokenizer for every row: give --tokenize (e.g. 13a, or zh for "
                             "Chinese targets), or drop --chunk-size to pick it per target language")
    should_stream(input, chunk_size, backend)  # validates --chunk-size
    check_output_path(output)
    metrics = [get_metric(spec, **options[spec]) for spec in specs]
    with row_progress(input, "scoring") as advance:
        result = score_chunked(metrics, input, output, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                               columns=parse_column_mapping(col), progress=advance,
                               backend=resolve_backend(backend, scheduler=scheduler, workers=workers))
    if fmt == OutputFormat.json:
        emit_json(result.to_dict())
    else:
        err_console.print(f"scored {result.rows} rows in {result.batches} batches ({result.backend}) -> {output}")
        for name, sig in result.signatures.items():
            err_console.print(f"{name}: {sig}")


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
