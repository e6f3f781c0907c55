"""``xleval intrinsic metrics|confounds|score|ingest``: length-fair intrinsic LM metrics."""
from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import click

from ..exceptions import InputError
from ..intrinsic import APPLES_EVAL_SETS, CHAR_UNITS, CONFOUND_METRICS, LEVELS, SOURCES, analyze_confounds
from ..io import parse_column_mapping, read_lines, read_table, write_table
from ._common import (
    PROBABILITY,
    FiniteFloat,
    check_outputs,
    col_option,
    emit_json,
    err_console,
    format_option,
    parse_columns,
    print_table,
    progress_bar,
    report_option,
    say,
    write_analysis_report,
)


@click.group("intrinsic", no_args_is_help=True, help="Intrinsic cross-lingual LM metrics and their confounds.")
def app() -> None:
    pass


_INPUTS_HELP = ("INPUT... are files of one kind, told apart by their content: scores tables (.tsv/.csv/.jsonl/.parquet "
                "with lang and nll|loglik|token_logprobs), lm-eval samples_*.jsonl (model and language from the run's "
                "results file), or the Apples results.parquet (with --eval-set).")
_CONFOUNDS = {k: p.default for k, p in inspect.signature(analyze_confounds).parameters.items()}


def input_options(func):
    """The options every command that reads scores shares (they go to xleval.intrinsic.read_scores)."""
    for option in reversed([
        click.option("--source", type=click.Choice(SOURCES), default="auto", help="Input kind (default: detected)."),
        click.option("--eval-set", type=click.Choice(APPLES_EVAL_SETS),
                     help="Apples corpus (wmt19 = the en-de translation sets)."),
        click.option("--lang", help="Language of lm-eval samples whose run does not name it."),
        click.option("--model", "model_name", help="Model name for lm-eval samples (default: the run's)."),
        click.option("--unit", type=click.Choice(["nats", "bits"]), default="nats",
                     help="Log base of a scores table's log-likelihoods."),
        click.option("--char-unit", type=click.Choice(CHAR_UNITS), default="codepoints",
                     help="Characters counted from 'text': Unicode code points, or grapheme clusters."),
        col_option,
    ]):
        func = option(func)
    return func


def _load(inputs, source, eval_set, lang, model_name, unit, char_unit, col):
    from ..intrinsic import read_scores

    return _caught(read_scores, list(inputs), source=source, eval_set=eval_set, lang=lang, model=model_name, unit=unit,
                   columns=parse_column_mapping(col), char_unit=char_unit)


def _caught(func, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = func(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def _said_once(parity: list[str], premiums: list[str]) -> list[str]:
    """The warnings of information parity and of the length premiums, a warning both give (the same rows left out
    of the same comparison: 'information parity (setting=m, de vs en): ...' and 'length premium (...): ...') said
    once, naming both."""
    def rest(w: str) -> str:
        return w.partition(" (")[2]

    shared = ({rest(w) for w in parity} & {rest(w) for w in premiums}) - {""}
    return ([f"information parity and length premium ({rest(w)}" if rest(w) in shared else w for w in parity]
            + [w for w in premiums if rest(w) not in shared])


def _notes(notes: list[str], label: str = "warning") -> None:
    for note in notes:  # notes quote names from the data: say() shows them as they are
        say(label, note)


@app.command("metrics", epilog=_INPUTS_HELP)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--by", default="lang,model,variant", help="Group columns, comma-separated.")
@click.option("--reference", help="Also compute information parity and length (byte, character, token) premiums "
                                   "against this language (e.g. en).")
@click.option("--ci", is_flag=True, help="Bootstrap CIs for every corpus metric.")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, show_default=True,
              help="Bootstrap resamples of --ci.")
@click.option("--seed", type=click.IntRange(0), default=0, help="random_state of the bootstrap.")
@click.option("-o", "--output", help="Also write the corpus table here.")
@input_options
@format_option
def metrics(inputs, by, reference, ci, n_resamples, seed, output, source, eval_set, lang, model_name, unit, char_unit,
            col, fmt) -> None:
    """Corpus metrics per group (ratio of sums): Sent-NLL, token NLL, PPL, bits per token/char/byte."""
    from ..intrinsic import METRICS, corpus_metrics, information_parity, length_premiums

    check_outputs({"-o": output}, inputs=list(inputs))
    by_columns = parse_columns(by, "--by")
    scores, notes = _load(inputs, source, eval_set, lang, model_name, unit, char_unit, col)
    result, more = _caught(corpus_metrics, scores, by_columns, ci=ci, n_resamples=n_resamples, random_state=seed)
    payload = result.to_dict()
    if reference:
        ip, extra = _caught(information_parity, scores, reference)
        premiums, extra2 = _caught(length_premiums, scores, reference)
        more += _said_once(extra, extra2)
        payload["information_parity"] = ip.to_dict(orient="records")
        payload["length_premiums"] = premiums.to_dict(orient="records")
    if output:
        write_table(result.table, output, metadata={"aggregation": result.aggregation})
    if fmt == "json":
        emit_json({**payload, "warnings": notes + more})
        return
    shown = list(result.by) + ["n_sentences"] + [m for m in METRICS if m != "sent_nll_bits"]
    print_table(result.table[shown].to_dict(orient="records"), title=f"corpus metrics ({result.aggregation})")
    if reference:
        cols = ["setting", "lang", "variant", "n_items", "information_parity"]
        print_table(ip[cols].to_dict(orient="records"),
                    title=f"information parity vs {reference} (sum NLL_ref / sum NLL_l)")
        cols = ["setting", "lang", "variant", "n_items", "byte_premium", "length_premium", "token_premium", "ctc"]
        print_table(premiums[cols].to_dict(orient="records"),
                    title=f"length premiums vs {reference} (sum over common items, language / reference)")
    if not result.anomalies.empty:  # kept in the table above: named here, as the confound analysis names them
        cols = [c for c in ("model", "lang", "variant", "metric", "value", "bound") if c in result.anomalies]
        print_table(result.anomalies[cols].to_dict(orient="records"), digits=2,
                    title="groups no trained model produces (kept in the table above)")
    _notes(notes + more)


@app.command("confounds", epilog=_INPUTS_HELP)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--metric", multiple=True, type=click.Choice(CONFOUND_METRICS),
              help="Metrics to analyse (repeatable; default all).")
@click.option("--level", type=click.Choice(LEVELS), default=_CONFOUNDS["level"], show_default=True,
              help="Unit of the length tests: languages (models of a language averaged), or every model "
                   "(pseudo-replicated: a sensitivity view).")
@click.option("--alpha", type=PROBABILITY, default=_CONFOUNDS["alpha"], show_default=True,
              help="Level of the Holm-corrected length tests.")
@click.option("--power-r", type=FiniteFloat(0, 1, low_open=True, high_open=True), default=_CONFOUNDS["power_r"],
              show_default=True, help="Report each test's power to detect this correlation (strictly between 0 and 1).")
@input_options
@format_option
@report_option
def confounds(inputs, metric, level, alpha, power_r, source, eval_set, lang, model_name, unit, char_unit, col, fmt,
              report_path) -> None:
    """Does a metric follow the encoding of the text (tokens, characters, bytes) rather than the model?

    Length tests with the language as the unit, tokenizer algorithms and model families never
    pooled, anomalous runs left out, Holm correction and power; vocabulary sensitivity and
    stability across translations (docs/intrinsic.md).
    """
    check_outputs({"--report": report_path}, inputs=list(inputs))
    scores, notes = _load(inputs, source, eval_set, lang, model_name, unit, char_unit, col)
    with progress_bar("confound tests") as advance:
        report, more = _caught(analyze_confounds, scores, list(metric) or None, level=level, alpha=alpha,
                               power_r=power_r, progress=advance)
    write_analysis_report(report_path, "Intrinsic LM metrics: confounds", [report], notes + more)
    if fmt == "json":
        emit_json({**report.to_dict(), "warnings": notes + more})
        return
    _render_confounds(report)
    _notes(list(report.notes), "note")
    _notes(notes + more)


def _render_confounds(report) -> None:
    tests = report.tests
    strata = [c for c in ("tokenizer_algo", "model_family") if c in tests and tests[c].nunique() > 1]
    cols = [*strata, "metric", "length", "n", "r", "p", "p_holm", "power", "finding"]
    # the finding in a word under the header 'confounded' (a False read as "not confounded" at power 0.13)
    print_table(tests[cols].rename(columns={"finding": "confounded"}).to_dict(orient="records"), digits=3,
                title=f"length tests ({report.level} level, n = {report.level}s; Holm over the table, alpha "
                      f"{report.alpha:g}; power to detect |r| = {report.power_r:g})")
    weak = tests.loc[tests["finding"] == "no evidence", "power"]
    weak = weak[weak < 0.8]
    if len(weak):
        low, high = f"{weak.min():.2f}", f"{weak.max():.2f}"
        say("note", f"'no evidence' is not evidence of no confound: {len(weak)} such test(s) detect |r| = "
                    f"{report.power_r:g} with probability {low if low == high else f'{low}-{high}'} at alpha "
                    f"{report.alpha:g} (the power column); more {report.level}s would tell")
    if not report.anomalies.empty:
        cols = [c for c in ("model", "lang", "variant", "metric", "value", "bound") if c in report.anomalies]
        print_table(report.anomalies[cols].to_dict(orient="records"), digits=2, title="anomalous runs (left out)")
    if not report.translation_summary.empty:
        print_table(report.translation_summary.to_dict(orient="records"), digits=3,
                    title="stability across translations (settings whose language order flips)")


@app.command("score")
@click.option("--model", required=True, metavar="DIR", help="Local transformers causal-LM folder.")
@click.option("--input", required=True, metavar="PATH",
              help="Texts: a table with a 'text' column, or a .txt file (one text per line).")
@click.option("-o", "--output", required=True, help="Output scores table (format by extension).")
@click.option("--lang", help="Language of the texts (required for .txt input without a lang column).")
@click.option("--bos", default="auto",
              help="auto (prepend BOS if the tokenizer has one), prepend, or none (first token unscored).")
@click.option("--max-length", type=click.IntRange(1),
              help="Truncate texts to this many tokens (default: the model's context).")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=8, help="Texts per forward pass.")
@click.option("--device", default="cpu", help="torch device, e.g. cpu or cuda:0.")
@col_option
def score(model, input, output, lang, bos, max_length, batch_size, device, col) -> None:
    """Per-sentence log-likelihoods (nats) with a local causal LM; writes nll, tokens, chars, bytes."""
    from rich.progress import Progress

    from ..intrinsic import LMScorer

    check_outputs({"-o": output}, inputs=[input], stdout=["-o"])
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


@app.command("ingest", epilog=_INPUTS_HELP)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", required=True, help="Canonical scores table to write.")
@input_options
def ingest(inputs, output, source, eval_set, lang, model_name, unit, char_unit, col) -> None:
    """Convert external results (lm-eval samples, Apples results) into the canonical scores table
    (lang, model, setting, variant, item, nll, tokens, chars, bytes)."""
    check_outputs({"-o": output}, inputs=list(inputs), stdout=["-o"])
    scores, notes = _load(inputs, source, eval_set, lang, model_name, unit, char_unit, col)
    write_table(scores.table, output, metadata={"excluded": dict(scores.excluded), "unit": "nats"})
    err_console.print(f"{len(scores.table)} rows -> {output}")
    _notes(notes)
