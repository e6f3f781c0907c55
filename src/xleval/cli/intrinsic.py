"""``xleval intrinsic metrics|confounds|score|ingest``: length-fair intrinsic LM metrics."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from ..exceptions import InputError
from ..io import parse_column_mapping, read_lines, read_table, write_table
from ._common import (PROBABILITY, check_outputs, col_option, emit_json, err_console, format_option, parse_columns,
                      print_table, report_option, say, write_analysis_report)


@click.group("intrinsic", no_args_is_help=True, help="Intrinsic cross-lingual LM metrics and their confounds.")
def app() -> None:
    pass


SOURCE_HELP = "Input kind: scores (lang, nll|loglik, tokens, chars/bytes or text, ...), apples (results.parquet), lm-eval (samples_*.jsonl), or auto."
_EVAL_SET_HELP = "Apples corpus: flores, pud, parallel10 or wmt19."
_UNIT_HELP = "Log base of the input log-likelihoods: nats or bits."


def _is_apples(path: str) -> bool:
    if not path.endswith(".parquet"):
        return False
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except Exception:  # not readable as Parquet: the scores reader says why
        return False
    return {"metric", "value", "source_file"} <= set(names)


def _load(path: str, source: str, unit: str, eval_set: str | None, lang: str | None, col: list[str] | None):
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
        say("warning", note)


@app.command("metrics")
@click.argument("input")
@click.option("--by", default="lang,model,variant", help="Group columns, comma-separated.")
@click.option("--unit", default="nats", help=_UNIT_HELP)
@click.option("--reference", help="Also compute information parity against this language (e.g. en).")
@click.option("--ci", is_flag=True, help="Bootstrap CIs for every corpus metric.")
@click.option("--seed", type=click.IntRange(0), default=0, help="random_state of the bootstrap.")
@click.option("--source", default="auto", help=SOURCE_HELP)
@click.option("--eval-set", help=_EVAL_SET_HELP)
@click.option("--lang", help="Language of an lm-eval samples file.")
@click.option("-o", "--output", help="Also write the corpus table here.")
@col_option
@format_option
def metrics(input, by, unit, reference, ci, seed, source, eval_set, lang, output, col, fmt) -> None:
    """Corpus metrics per group (ratio of sums): Sent-NLL, token NLL, PPL, bits per token/char/byte.

    INPUT is a scores table (.tsv/.csv/.jsonl/.parquet), an Apples results.parquet, or an lm-eval
    samples_*.jsonl.
    """
    from ..intrinsic import corpus_metrics, information_parity

    check_outputs({"-o": output}, inputs=[input])
    by_columns = parse_columns(by, "--by")
    (scores, notes) = _caught(_load, input, source, unit, eval_set, lang, col)
    result, more = _caught(corpus_metrics, scores, by_columns, ci=ci, random_state=seed)
    payload = result.to_dict()
    if reference:
        ip, extra = _caught(information_parity, scores, reference)
        more += extra
        payload["information_parity"] = ip.to_dict(orient="records")
    if output:
        write_table(result.table, output, metadata={"aggregation": result.aggregation})
    if fmt == "json":
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
@click.argument("input")
@click.option("--metric", multiple=True, help="Metrics to analyse (repeatable; default all).")
@click.option("--alpha", type=PROBABILITY, default=0.01, help="Significance level of the summary flags.")
@click.option("--unit", default="nats", help=_UNIT_HELP)
@click.option("--source", default="auto", help=SOURCE_HELP)
@click.option("--eval-set", help=_EVAL_SET_HELP)
@col_option
@format_option
@report_option
def confounds(input, metric, alpha, unit, source, eval_set, col, fmt, report_path) -> None:
    """Vocabulary sensitivity, correlation with length, and stability across translations, per metric.

    INPUT is a scores table (.tsv/.csv/.jsonl/.parquet), an Apples results.parquet, or an lm-eval
    samples_*.jsonl.
    """
    from ..intrinsic import analyze_confounds

    check_outputs({"--report": report_path}, inputs=[input])
    scores, notes = _caught(_load, input, source, unit, eval_set, None, col)
    report, more = _caught(analyze_confounds, scores, list(metric) or None, alpha=alpha)
    write_analysis_report(report_path, "Intrinsic LM metrics: confounds", [report], notes + more)
    if fmt == "json":
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
@click.option("--model", required=True, metavar="DIR", help="Local transformers causal-LM folder.")
@click.option("--input", required=True, metavar="PATH",
              help="Texts: a table with a 'text' column, or a .txt file (one text per line).")
@click.option("-o", "--output", required=True, help="Output scores table (format by extension).")
@click.option("--lang", help="Language of the texts (required for .txt input without a lang column).")
@click.option("--bos", default="auto",
              help="auto (prepend BOS if the tokenizer has one), prepend, or none (first token unscored).")
@click.option("--max-length", type=click.IntRange(1), help="Truncate texts to this many tokens (default: the model's context).")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=8, help="Texts per forward pass.")
@click.option("--device", default="cpu", help="torch device, e.g. cpu or cuda:0.")
@col_option
def score(model, input, output, lang, bos, max_length, batch_size, device, col) -> None:
    """Per-sentence log-likelihoods (nats) with a local causal LM; writes nll, tokens, chars, bytes."""
    from rich.progress import Progress

    from ..intrinsic import LMScorer

    check_outputs({"-o": output}, inputs=[input])
    if Path(model).is_dir() and Path(output).resolve().is_relative_to(Path(model).resolve()):
        raise InputError(f"{output}: is inside the --model folder {model}; write the scores elsewhere")
    df = _read_texts(input, lang, col)
    scorer = LMScorer(model, bos=bos, max_length=max_length, batch_size=batch_size, device=device)
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("scoring", total=len(df))
        scored = scorer.score(df["text"].tolist(), progress=lambda n: bar.advance(task, n))
    out = df.reset_index(drop=True).assign(model=Path(model).name, **{c: scored[c] for c in scored.columns})
    write_table(out, output, metadata={"signatures": {"nll": scored.attrs["signature"]}})
    err_console.print(f"scored {len(out)} texts ({int(out['truncated'].sum())} truncated) -> {output}; "
                      f"{scored.attrs['signature']}")


def _read_texts(path: str, lang: str | None, col: list[str] | None):
    import pandas as pd

    if path.endswith(".txt"):
        if not lang:
            raise InputError(f"{path}: a plain text file needs --lang")
        lines = read_lines(path)
        return pd.DataFrame({"lang": lang, "item": range(len(lines)), "text": lines})
    df = read_table(path, columns=parse_column_mapping(col), required=["text"])
    if "lang" not in df.columns:
        if not lang:
            raise InputError(f"{path}: no 'lang' column; add one or give --lang")
        df["lang"] = lang
    return df


@app.command("ingest")
@click.argument("input")
@click.option("-o", "--output", required=True, help="Canonical scores table to write.")
@click.option("--source", default="auto", help="lm-eval, apples or auto.")
@click.option("--lang", help="Language of an lm-eval samples file.")
@click.option("--eval-set", help=_EVAL_SET_HELP)
def ingest(input, output, source, lang, eval_set) -> None:
    """Convert external results into the canonical scores table (lang, model, setting, variant, item, nll,
    tokens, chars, bytes).

    INPUT is an lm-eval samples_*.jsonl or an Apples results.parquet.
    """
    check_outputs({"-o": output}, inputs=[input])
    scores, notes = _caught(_load, input, source, "nats", eval_set, lang, None)
    write_table(scores.table, output, metadata={"excluded": dict(scores.excluded), "unit": "nats"})
    err_console.print(f"{len(scores.table)} rows -> {output}")
    _notes(notes)
