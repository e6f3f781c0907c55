"""``xleval intrinsic metrics|confounds|score|ingest``: length-fair intrinsic LM metrics."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional

import typer

from ..exceptions import InputError
from ..io import parse_column_mapping, read_table, write_table
from ._common import (COL_OPTION, FORMAT_OPTION, REPORT_OPTION, OutputFormat, emit_json, err_console, print_table,
                      write_analysis_report)

app = typer.Typer(no_args_is_help=True, help="Intrinsic cross-lingual LM metrics and their confounds.")

SOURCE_HELP = "Input kind: scores (lang, nll|loglik, tokens, chars/bytes or text, ...), apples (results.parquet), lm-eval (samples_*.jsonl), or auto."
_INPUT_HELP = "Scores table (.tsv/.csv/.jsonl/.parquet), an Apples results.parquet, or an lm-eval samples_*.jsonl."


def _is_apples(path: str) -> bool:
    if not path.endswith(".parquet"):
        return False
    import pyarrow.parquet as pq

    return {"metric", "value", "source_file"} <= set(pq.read_schema(path).names)


def _load(path: str, source: str, unit: str, eval_set: Optional[str], lang: Optional[str], col: Optional[list[str]]):
    from ..intrinsic import LMScores, apples_scores, read_apples_results, read_lm_eval_samples

    if source == "auto":
        source = "apples" if _is_apples(path) else "lm-eval" if Path(path).name.startswith("samples_") else "scores"
    if source == "apples":
        if not eval_set:
            raise InputError("an Apples results file holds several corpora; choose one with --eval-set (flores, pud, parallel10, wmt19)")
        sets = ["en", "de", "de-ar", "de-arp", "de-p"] if eval_set == "wmt19" else [eval_set]
        return apples_scores(read_apples_results(path, experiments=["main"], eval_sets=sets), where=path)
    if source == "lm-eval":
        if not lang:
            raise InputError("lm-eval samples do not name their language; give --lang")
        return LMScores.from_frame(read_lm_eval_samples(path, lang=lang), unit=unit, where=path)
    if source != "scores":
        raise InputError(f"--source {source!r}: use auto, scores, apples or lm-eval")
    df = read_table(path, columns=parse_column_mapping(col), required=["lang"])
    return LMScores.from_frame(df, unit=unit, where=path)


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def _notes(notes: list[str]) -> None:
    for note in notes:
        err_console.print(f"[yellow]warning:[/yellow] {note}")


@app.command("metrics")
def metrics(
    input: str = typer.Argument(..., help=_INPUT_HELP),
    by: str = typer.Option("lang,model,variant", "--by", help="Group columns, comma-separated."),
    unit: str = typer.Option("nats", "--unit", help="Log base of the input log-likelihoods: nats or bits."),
    reference: Optional[str] = typer.Option(None, "--reference", help="Also compute information parity against this language (e.g. en)."),
    ci: bool = typer.Option(False, "--ci", help="Bootstrap CIs for every corpus metric."),
    seed: int = typer.Option(0, "--seed", help="random_state of the bootstrap."),
    source: str = typer.Option("auto", "--source", help=SOURCE_HELP),
    eval_set: Optional[str] = typer.Option(None, "--eval-set", help="Apples corpus: flores, pud, parallel10 or wmt19."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language of an lm-eval samples file."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Also write the corpus table here."),
    col: Optional[list[str]] = COL_OPTION,
    fmt: OutputFormat = FORMAT_OPTION,
) -> None:
    """Corpus metrics per group (ratio of sums): Sent-NLL, token NLL, PPL, bits per token/char/byte."""
    from ..intrinsic import corpus_metrics, information_parity

    (scores, notes) = _caught(_load, input, source, unit, eval_set, lang, col)
    result, more = _caught(corpus_metrics, scores, [c.strip() for c in by.split(",") if c.strip()],
                           ci=ci, random_state=seed)
    payload = result.to_dict()
    if reference:
        ip, extra = _caught(information_parity, scores, reference)
        more += extra
        payload["information_parity"] = ip.to_dict(orient="records")
    if output:
        write_table(result.table, output, metadata={"aggregation": result.aggregation})
    if fmt == OutputFormat.json:
        emit_json({**payload, "warnings": notes + more})
        return
    from ..intrinsic import METRICS

    shown = list(result.by) + ["n_sentences"] + [m for m in METRICS if m != "sent_nll_bits"]
    print_table(result.table[shown].to_dict(orient="records"), title=f"corpus metrics ({result.aggregation})")
    if reference:
        cols = ["setting", "lang", "variant", "n_items", "information_parity"]
        print_table(ip[cols].to_dict(orient="records"), title=f"information parity vs {reference} (sum NLL_ref / sum NLL_l)")
    _notes(notes + more)


@app.command("confounds")
def confounds(
    input: str = typer.Argument(..., help=_INPUT_HELP),
    metric: Optional[list[str]] = typer.Option(None, "--metric", help="Metrics to analyse (repeatable; default all)."),
    alpha: float = typer.Option(0.01, "--alpha", help="Significance level of the summary flags."),
    unit: str = typer.Option("nats", "--unit", help="Log base of the input log-likelihoods: nats or bits."),
    source: str = typer.Option("auto", "--source", help=SOURCE_HELP),
    eval_set: Optional[str] = typer.Option(None, "--eval-set", help="Apples corpus: flores, pud, parallel10 or wmt19."),
    col: Optional[list[str]] = COL_OPTION,
    fmt: OutputFormat = FORMAT_OPTION,
    report_path: Optional[str] = REPORT_OPTION,
) -> None:
    """Vocabulary sensitivity, correlation with length, and stability across translations, per metric."""
    from ..intrinsic import analyze_confounds

    scores, notes = _caught(_load, input, source, unit, eval_set, None, col)
    report, more = _caught(analyze_confounds, scores, metric or None, alpha=alpha)
    write_analysis_report(report_path, "Intrinsic LM metrics: confounds", [report], notes + more)
    if fmt == OutputFormat.json:
        emit_json({**report.to_dict(), "warnings": notes + more})
        return
    short = {"length_max_abs_r": "r_len", "length_measure": "len", "length_p": "p_len", "length_n": "n",
             "vocab_rel_range": "voc_range", "vocab_spearman": "voc_rho", "vocab_p": "voc_p",
             "vocab_ranking_tau": "voc_tau", "translation_spread_ratio": "tr_spread", "translation_flip_rate": "tr_flip"}
    table = report.summary().rename(columns=short).drop(columns=[c for c in report.summary() if c.startswith("length_sig")])
    table["len"] = table["len"].str.replace("_per_sentence", "") if "len" in table else None
    print_table(table.to_dict(orient="records"), title=f"confounds per metric (alpha {alpha:g}; {report.aggregation})", digits=3)
    _notes(notes + more)


@app.command("score")
def score(
    model: str = typer.Option(..., "--model", help="Local transformers causal-LM folder."),
    input: str = typer.Option(..., "--input", help="Texts: a table with a 'text' column, or a .txt file (one text per line)."),
    output: str = typer.Option(..., "-o", "--output", help="Output scores table (format by extension)."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language of the texts (required for .txt input without a lang column)."),
    bos: str = typer.Option("auto", "--bos", help="auto (prepend BOS if the tokenizer has one), prepend, or none (first token unscored)."),
    max_length: Optional[int] = typer.Option(None, "--max-length", help="Truncate texts to this many tokens (default: the model's context)."),
    batch_size: int = typer.Option(8, "--batch-size", help="Texts per forward pass."),
    device: str = typer.Option("cpu", "--device", help="torch device, e.g. cpu or cuda:0."),
    col: Optional[list[str]] = COL_OPTION,
) -> None:
    """Per-sentence log-likelihoods (nats) with a local causal LM; writes nll, tokens, chars, bytes."""
    from rich.progress import Progress

    from ..intrinsic import LMScorer

    df = _read_texts(input, lang, col)
    scorer = LMScorer(model, bos=bos, max_length=max_length, batch_size=batch_size, device=device)
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("scoring", total=len(df))
        scored = scorer.score(df["text"].tolist(), progress=lambda n: bar.advance(task, n))
    out = df.reset_index(drop=True).assign(model=Path(model).name, **{c: scored[c] for c in scored.columns})
    write_table(out, output, metadata={"signatures": {"nll": scored.attrs["signature"]}})
    err_console.print(f"scored {len(out)} texts ({int(out['truncated'].sum())} truncated) -> {output}; "
                      f"{scored.attrs['signature']}")


def _read_texts(path: str, lang: Optional[str], col: Optional[list[str]]):
    import pandas as pd

    if path.endswith(".txt"):
        if not lang:
            raise InputError(f"{path}: a plain text file needs --lang")
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        lines = lines[:-1] if lines and lines[-1] == "" else lines
        return pd.DataFrame({"lang": lang, "item": range(len(lines)), "text": lines})
    df = read_table(path, columns=parse_column_mapping(col), required=["text"])
    if "lang" not in df.columns:
        if not lang:
            raise InputError(f"{path}: no 'lang' column; add one or give --lang")
        df["lang"] = lang
    return df


@app.command("ingest")
def ingest(
    input: str = typer.Argument(..., help="An lm-eval samples_*.jsonl or an Apples results.parquet."),
    output: str = typer.Option(..., "-o", "--output", help="Canonical scores table to write."),
    source: str = typer.Option("auto", "--source", help="lm-eval, apples or auto."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Language of an lm-eval samples file."),
    eval_set: Optional[str] = typer.Option(None, "--eval-set", help="Apples corpus: flores, pud, parallel10 or wmt19."),
) -> None:
    """Convert external results into the canonical scores table (lang, model, setting, variant, item, nll, tokens, chars, bytes)."""
    scores, notes = _caught(_load, input, source, "nats", eval_set, lang, None)
    write_table(scores.table, output, metadata={"excluded": dict(scores.excluded), "unit": "nats"})
    err_console.print(f"{len(scores.table)} rows -> {output}")
    _notes(notes)
