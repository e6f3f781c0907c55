"""``xleval score``: add one column per metric to a table (or score sacrebleu-style plain files)."""
from __future__ import annotations

import click

from ._common import col_option, emit_json, err_console, format_option, print_table


@click.command("score")
@click.argument("input", required=False)
@click.option("-m", "--metric", default="bleu,chrf",
              help="Comma-separated: bleu, chrf, chrf++, ter, comet:PATH, bertscore:PATH, embed:PATH.")
@click.option("-o", "--output", help="Write the table with score columns here (signatures in its metadata).")
@click.option("--corpus", is_flag=True, help="Print corpus scores per (lp, system) from summed statistics.")
@click.option("-i", "--hyp", metavar="FILE", help="Plain-text hypotheses, one segment a line.")
@click.option("-r", "--ref", multiple=True, metavar="FILE", help="Plain-text reference file (repeat for several).")
@click.option("-s", "--src", metavar="FILE", help="Plain-text sources (QE metrics).")
@click.option("-l", "--lp", help="Language pair of the plain files, e.g. de-en.")
@click.option("--tokenize", help="BLEU tokenizer for all rows (default: by target language; 13a).")
@click.option("-lc", "--lowercase", is_flag=True, help="Case-insensitive BLEU/chrF.")
@click.option("--batch-size", type=click.IntRange(1, 1_000_000), help="Neural metrics: segments per model call.")
@click.option("--device", help="Neural metrics: cpu, cuda, cuda:N or mps.")
@click.option("--precision", help="Neural metrics: fp32 or fp16.")
@click.option("--progress", is_flag=True, help="Neural metrics: show a progress bar.")
@format_option
@col_option
@click.option("--chunk-size", type=click.IntRange(1), help="Stream INPUT in batches of N rows into -o (bounded memory); "
              "BLEU then needs an explicit --tokenize.")
@click.option("--backend", default="local", help="local or dask (with --chunk-size).")
@click.option("--workers", type=click.IntRange(1, 256), help="Dask: start a local cluster of N workers.")
@click.option("--scheduler", help="Dask: address of an existing scheduler.")
def score(input, metric, output, corpus, hyp, ref, src, lp, tokenize, lowercase, batch_size, device, precision,
          progress, fmt, col, chunk_size, backend, workers, scheduler) -> None:
    """Score segments with BLEU, chrF, TER or neural metrics (sacrebleu-exact).

    INPUT is a table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin); omit it and give plain files
    with -i HYP.txt -r REF.txt [-l de-en] instead. Every segment is scored; corpus scores per
    (lp, system) are printed with --corpus, or when no -o is given.
    """
    from ..exceptions import InputError
    from ..io import check_output_path, parse_column_mapping, read_plain_files, read_table, write_table
    from ..metrics import corpus_table, score_frame

    if (input is None) == (hyp is None):
        raise InputError("give either an INPUT table or plain files with -i HYP.txt -r REF.txt [-l de-en]")
    specs = [m.strip() for m in metric.split(",") if m.strip()]
    if not specs:
        raise InputError(f"--metric {metric!r}: name at least one metric, e.g. -m bleu,chrf")
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise InputError(f"--metric {metric!r}: {', '.join(twice)} given twice; name each metric once")
    if output is not None and output != "-":
        check_output_path(output, inputs=[p for p in (input, hyp, src, *ref) if p])
    neural = {"batch_size": batch_size, "device": device, "precision": precision, "progress": progress or None}
    options = {s: _options(s, tokenize, lowercase, neural) for s in specs}
    if chunk_size is not None or backend != "local":
        return _streamed(input, output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus)
    if input is not None:
        df = read_table(input, columns=parse_column_mapping(col), required=["hypothesis"])
    else:
        if lp is not None:
            from ..io import split_lp

            try:
                split_lp(lp)
            except InputError as exc:
                raise InputError(f"-l/--lp: {exc}") from None
        df = read_plain_files(hypotheses=hyp, references=list(ref), sources=src, lp=lp)
    scored = score_frame(df, specs, options)
    if output is not None:
        write_table(scored.frame, output, metadata=scored.metadata())
        err_console.print(f"wrote {len(df)} rows with {', '.join(scored.signatures)} to {output}")
    if corpus or output is None:
        _render(corpus_table(scored), scored.metadata(), fmt)
    elif fmt == "json":
        emit_json({"output": output, "rows": len(df), **scored.metadata()})


def _streamed(input, output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus) -> None:
    """Batch-by-batch scoring of a large table (xleval.scale.score_chunked)."""
    from ..exceptions import InputError
    from ..io import check_output_path, parse_column_mapping
    import pandas as pd

    from ..metrics import get_metric
    from ..metrics._frame import reference_columns
    from ..scale import DEFAULT_CHUNK_SIZE, resolve_backend, score_chunked, should_stream, table_columns
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
    check_output_path(output, inputs=[input])
    columns = parse_column_mapping(col)
    nrefs = len(reference_columns(pd.DataFrame(columns=table_columns(input, columns)))) or 1
    metrics = [get_metric(spec, **_with_nrefs(spec, options[spec], nrefs)) for spec in specs]
    with row_progress(input, "scoring") as advance:
        result = score_chunked(metrics, input, output, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                               columns=columns, progress=advance,
                               backend=resolve_backend(backend, scheduler=scheduler, workers=workers))
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        err_console.print(f"scored {result.rows} rows in {result.batches} batches ({result.backend}) -> {output}")
        for name, sig in result.signatures.items():
            err_console.print(f"{name}: {sig}")


def _with_nrefs(spec: str, options: dict, nrefs: int) -> dict:
    """As score_frame does: BLEU/chrF/TER are built for the table's number of reference columns."""
    kind = spec.split(":")[0].lower()
    return {"nrefs": nrefs, **options} if kind in ("bleu", "chrf", "chrf++", "ter") else options


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


def _render(table, metadata: dict, fmt: str) -> None:
    if fmt == "json":
        emit_json({"corpus": table, **metadata})
        return
    print_table(table.to_dict(orient="records"), title="corpus scores", digits=4)
    for column, sig in metadata["signatures"].items():
        err_console.print(f"{column}: {sig}")
