"""``xleval score``: add one column per metric to a table, or score sacrebleu-style plain files
(several systems, paired significance tests, confidence intervals) with sacrebleu's options."""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import click

from ._about import print_version
from ._common import FiniteFloat, col_option, emit_json, err_console, print_table, progress_bar, say, warnings_said

# options that take several values in sacrebleu's style: ``-i A B C``, ``-m bleu chrf``
_GREEDY = ("-i", "--input", "--hyp", "-m", "--metric", "--metrics", "--echo")
_METRIC_OPTIONS = ("-m", "--metric", "--metrics")


def _is_value(option: str, arg: str) -> bool:
    """Whether ``arg`` continues the values of a greedy ``option``: any word not starting with '-'
    ('-' alone is standard input) for -i; only metric names for -m, so ``-m bleu INPUT`` still
    reads INPUT as the table."""
    if arg != "-" and arg.startswith("-"):
        return False
    if option in _METRIC_OPTIONS:
        from ..metrics._registry import METRICS

        return all(part.strip().split(":")[0].lower() in METRICS for part in arg.split(",") if part.strip())
    return True


class _SacrebleuCommand(click.Command):
    """``-i A B C`` (sacrebleu) is read as ``-i A -i B -i C``, ``-m bleu chrf`` as ``-m bleu,chrf``, and a long
    option may be shortened to any prefix that names one option (``--tok``, ``--chrf-word``), as sacrebleu's
    argparse reads it."""

    def _long_prefixes(self, args: list[str]) -> list[str]:
        """``args`` with each unambiguous prefix of a long option written out (before ``--``)."""
        spellings = {o: p for p in self.params if isinstance(p, click.Option)
                     for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
        out: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                return out + args[i:]
            name, eq, value = arg.partition("=")
            found = [o for o in spellings if o.startswith(name)] \
                if name.startswith("--") and len(name) > 2 and name not in spellings else []
            one = found and len({id(spellings[o]) for o in found}) == 1
            out.append(min(found, key=len) + eq + value if one else arg)
        return out

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = self._long_prefixes(args)
        out: list[str] = []
        greedy, got = None, False
        for arg in args:
            if arg == "--":
                greedy = None
            if arg in _GREEDY:
                if greedy is not None and not got:
                    out.append(greedy)  # no value: click reports it
                greedy, got = arg, False
                continue
            if greedy is not None and (not got or _is_value(greedy, arg)) and (arg == "-" or not arg.startswith("-")):
                if got and greedy in _METRIC_OPTIONS:
                    # one -m stays one value ('-m bleu chrf' -> 'bleu,chrf'): on plain files sacrebleu's last -m
                    # wins, so the command must still tell '-m bleu chrf' from '-m bleu -m chrf'
                    out[-1] += f",{arg}"
                else:
                    out += [greedy, arg]
                got = True
                continue
            if greedy is not None and not got:
                out.append(greedy)
            greedy = None
            out.append(arg)
        if greedy is not None and not got:
            out.append(greedy)
        return super().parse_args(ctx, out)


class _Seed(click.ParamType):
    """sacrebleu's seed: a non-negative integer, or 'none' for a fresh one (recorded in the signature)."""

    name = "integer|none"

    def convert(self, value, param, ctx):
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        text = str(value).strip()
        if text.lower() == "none":
            return None
        if text.isdigit():  # digits only: no sign, no spaces, no 1e3
            return int(text)
        self.fail(f"{value!r} is not a non-negative integer or 'none'", param, ctx)


#: resamples and trials of the paired tests and intervals (xleval.stats keeps every resample)
_RESAMPLES = click.IntRange(1, 100_000)
#: n-gram orders: sacrebleu's defaults are 6 and 0-2; a long order only costs time
_ORDER = click.IntRange(0, 32)


@click.command("score", cls=_SacrebleuCommand)
@click.argument("inputs", nargs=-1, metavar="[INPUT | REF...]")
@click.option("-i", "--input", "--hyp", "hyp", multiple=True, metavar="FILE",
              help="Plain-text system output(s), one segment a line ('-' = stdin, .gz read); several as in "
                   "sacrebleu: -i A B C (the first is the baseline of a paired test).")
@click.option("-r", "--ref", multiple=True, metavar="FILE",
              help="Plain-text reference file (repeat for several). sacrebleu's order also works: REF... -i HYP.")
@click.option("-m", "--metric", "--metrics", "metric", multiple=True,
              help="bleu, chrf, chrf++, ter, comet:PATH, bertscore:PATH, embed:PATH, metricx:PATH (MetricX-23/24; "
                   "lower is better), judge:PATH or judge:http://HOST:PORT/v1#MODEL (an LLM judge) (comma- or "
                   "space-separated; "
                   "default bleu,chrf for tables; bleu for plain files, as sacrebleu).")
@click.option("-o", "--output", help="Write the table with score columns here (signatures in its metadata; '-' = "
              "TSV on stdout, without them).")
@click.option("--corpus", is_flag=True, help="Print corpus scores per (lp, system) from summed statistics.")
@click.option("--src", metavar="FILE", help="Plain-text sources (QE metrics).")
@click.option("-l", "--lp", "--language-pair", "lp",
              help="Language pair of the plain files, e.g. de-en (BLEU's tokenizer follows the target).")
@click.option("-nr", "--num-refs", type=click.IntRange(1), default=1,
              help="Plain files: split the one reference file's lines on tabs into this many references (sacrebleu).")
@click.option("-e", "--encoding", default="utf-8", help="Plain files' encoding (xleval reads UTF-8 only).")
@click.option("-sl", "--sentence-level", is_flag=True, help="Plain files: one score per line (one metric, one system).")
@click.option("-tok", "--tokenize", help="BLEU tokenizer for all rows (default: by target language; 13a).")
@click.option("--spm-model", "spm_model", type=click.Path(), default=None,
              help="SentencePiece model for -tok flores101/flores200/spBLEU-1K/spm (a file, or a folder holding it); "
                   "else $XLEVAL_SPM_MODELS, else $SACREBLEU/models. Never downloaded.")
@click.option("-lc", "--lowercase", is_flag=True, help="Case-insensitive BLEU (as sacrebleu; chrF: --chrf-lowercase).")
@click.option("-s", "--smooth-method", type=click.Choice(["exp", "floor", "add-k", "none"]),
              help="BLEU smoothing (exp).")
@click.option("-sv", "--smooth-value", type=FiniteFloat(0), help="BLEU smoothing value (floor 0.1, add-k 1).")
@click.option("--force", is_flag=True, hidden=True, help="Accepted for sacrebleu compatibility (no effect).")
@click.option("-cc", "--chrf-char-order", type=_ORDER, help="chrF character n-gram order (6).")
@click.option("-cw", "--chrf-word-order", type=_ORDER, help="chrF word n-gram order (0; 2 is chrF++).")
@click.option("--chrf-beta", type=click.IntRange(0, 1000), help="chrF beta (2).")
@click.option("--chrf-whitespace", is_flag=True, help="chrF: keep whitespace in character n-grams.")
@click.option("--chrf-lowercase", is_flag=True, help="Case-insensitive chrF.")
@click.option("--chrf-eps-smoothing", is_flag=True, help="chrF: epsilon smoothing instead of effective order.")
@click.option("--ter-case-sensitive", is_flag=True, help="Case-sensitive TER.")
@click.option("--ter-asian-support", is_flag=True, help="TER: Asian character handling.")
@click.option("--ter-no-punct", is_flag=True, help="TER: remove punctuation.")
@click.option("--ter-normalized", is_flag=True, help="TER: normalisation and tokenisation.")
@click.option("-ci", "--confidence", is_flag=True, help="Bootstrap 95% interval of each system's score.")
@click.option("-cin", "--confidence-n", type=click.IntRange(max=100_000), default=1000, show_default=True,
              help="Resamples for --confidence; 1 or less: no interval, the plain score (as sacrebleu).")
@click.option("-pbs", "--paired-bs", is_flag=True, help="Paired bootstrap test of each system against the first.")
@click.option("-par", "--paired-ar", is_flag=True, help="Paired approximate randomization test against the first.")
@click.option("-pbsn", "--paired-bs-n", type=_RESAMPLES, default=1000, show_default=True,
              help="Resamples for --paired-bs.")
@click.option("-parn", "--paired-ar-n", type=_RESAMPLES, default=10000, show_default=True,
              help="Trials for --paired-ar.")
@click.option("-j", "--paired-jobs", type=click.IntRange(0), default=1,
              help="Accepted as in sacrebleu (xleval runs the tests in one process; the numbers are the same).")
@click.option("--seed", type=_Seed(), default="12345", envvar="SACREBLEU_SEED", show_default=True,
              help="Seed of --paired-bs/--paired-ar/--confidence ('none': a fresh one, printed); SACREBLEU_SEED.")
@click.option("--baseline", help="Table input: the baseline system of --paired-bs/--paired-ar (default: first per lp).")
@click.option("-b", "--score-only", is_flag=True, help="Print only the corpus score(s), one per line.")
@click.option("-w", "--width", type=click.IntRange(0, 1000),
              help="Decimals printed (1 for plain files, as sacrebleu; 4 for tables).")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json", "latex"]),
              help="Plain files: sacrebleu's json (default; SACREBLEU_FORMAT overrides), text or latex (several "
                   "systems). Tables: text (default) or json.")
@click.option("-sh", "--short", is_flag=True, help="Plain files: sacrebleu's short signatures.")
@click.option("-q", "--quiet", is_flag=True, help="No notes on standard error.")
@click.option("-V", "--version", is_flag=True, expose_value=False, is_eager=True, callback=print_version,
              help="Print xleval's version (sacrebleu's -V).")
@click.option("-nc", "--no-color", is_flag=True, help="Accepted as in sacrebleu (xleval prints no colours here).")
@click.option("-t", "--test-set", hidden=True)
@click.option("--echo", multiple=True, hidden=True)
@click.option("--download", hidden=True)
@click.option("--list", "list_", is_flag=True, hidden=True)
@click.option("--citation", "--cite", is_flag=True, hidden=True)
@click.option("-ol", "--origlang", hidden=True)
@click.option("--subset", hidden=True)
@click.option("-d", "--detail", is_flag=True, hidden=True)
@click.option("--batch-size", type=click.IntRange(1, 1_000_000), help="Neural metrics: segments per model call.")
@click.option("--device", help="Neural metrics: cpu, cuda, cuda:N or mps; metricx: several, cuda:0,cuda:1 "
              "(data parallel).")
@click.option("--precision", help="Neural metrics: fp32 or fp16 (GPU); metricx also bf16.")
@click.option("--cache", "score_cache", metavar="PATH",
              help="Neural metrics: keep segment scores in PATH (a directory: one file per metric signature) and "
                   "read rows scored before from it instead of scoring them again.")
@click.option("--error-spans", "error_spans", metavar="FILE",
              help="comet:PATH of an XCOMET model (tables only): add the count of error spans per severity of each "
                   "row (comet_minor, comet_major, comet_critical) and write the spans to FILE.")
@click.option("--metricx-variant", type=click.Choice(["23-ref", "23-qe", "24-hybrid", "24-ref", "24-qe"]),
              help="metricx: the model and input mode (default: from the checkpoint's name).")
@click.option("--metricx-tokenizer", metavar="DIR", help="metricx: local mT5 tokenizer (google/mt5-xl), when the "
              "checkpoint holds none.")
@click.option("--progress", is_flag=True, help="Neural metrics: the model's own progress bar.")
@click.option("--judge-prompt", type=click.Choice(["esa", "mqm", "da"]),
              help="judge:SPEC: the GEMBA prompt set (esa: spans then a 0-100 score; mqm: spans, score -25..0; "
                   "da: a 0-100 score). Default esa.")
@click.option("--judge-max-tokens", "judge_max_new_tokens", type=click.IntRange(1, 100_000),
              help="judge:SPEC: answer length bound (default 512 for error lists, 32 for scores).")
@click.option("--judge-concurrency", type=click.IntRange(1, 1024), help="judge:URL: requests in flight (4).")
@click.option("--judge-timeout", type=FiniteFloat(0), help="judge:URL: seconds per request (120).")
@click.option("--judge-retries", type=click.IntRange(0, 100), help="judge:URL: retries after a timeout, 429 or 5xx "
              "(3), with exponential backoff.")
@click.option("--judge-key-env", "judge_api_key_env", metavar="VAR",
              help="judge:URL: environment variable holding the API key (OPENAI_API_KEY); the key is never written.")
@click.option("--dry-run", is_flag=True, help="judge:SPEC: show the rendered prompts and the number of requests; "
              "send nothing.")
@col_option
@click.option("--chunk-size", type=click.IntRange(1),
              help="Stream INPUT in batches of N rows into -o (bounded memory); "
              "BLEU then needs an explicit --tokenize.")
@click.option("--backend", default="local", help="local or dask (with --chunk-size).")
@click.option("--workers", type=click.IntRange(1, 256), help="Dask: start a local cluster of N workers.")
@click.option("--scheduler", help="Dask: address of an existing scheduler.")
def score(inputs, hyp, ref, metric, output, corpus, src, lp, tokenize, spm_model, lowercase, smooth_method,
          smooth_value, force,
          chrf_char_order, chrf_word_order, chrf_beta, chrf_whitespace, chrf_lowercase, chrf_eps_smoothing,
          ter_case_sensitive, ter_asian_support, ter_no_punct, ter_normalized, confidence, confidence_n, paired_bs,
          paired_ar, paired_bs_n, paired_ar_n, seed, baseline, score_only, width, fmt, batch_size, device, precision,
          score_cache, error_spans, metricx_variant, metricx_tokenizer, progress, judge_prompt, judge_max_new_tokens,
          judge_concurrency, judge_timeout, judge_retries, judge_api_key_env, dry_run, col, chunk_size, backend,
          workers, scheduler, num_refs, encoding, sentence_level, paired_jobs,
          short, quiet, no_color, test_set, echo, download, list_, citation, origlang, subset, detail) -> None:
    """Score segments with BLEU, chrF, TER or neural metrics (sacrebleu-exact).

    INPUT is a table (.tsv/.csv/.jsonl/.parquet, optionally .gz; '-' = TSV on stdin): every row is
    scored (sentence-level, as sacrebleu -sl) and corpus scores per (lp, system) are printed with
    --corpus or when no -o is given (sacrebleu's corpus defaults). Or give plain files: -i HYP.txt
    [-i HYP2.txt ...] -r REF.txt [-l de-en], or sacrebleu's order REF.txt -i HYP.txt HYP2.txt: then
    sacrebleu's options mean what they mean in sacrebleu and the output is sacrebleu's (JSON by default).
    """
    from ..exceptions import InputError
    from ..metrics import metric_options
    from ._common import check_outputs

    if test_set or echo or download or list_ or citation or origlang or subset or detail:
        raise InputError("sacrebleu's test sets (-t, --echo, --download, --list, --citation, --origlang, --subset, "
                         "-d) need a download; xleval works offline: give the files, e.g. REF.txt -i HYP.txt")
    if encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
        raise InputError(f"--encoding {encoding!r}: xleval reads UTF-8 only; convert the files (iconv -f {encoding} "
                         "-t utf-8)")
    # sacrebleu's REF... < HYP: no table among the inputs, the systems on standard input
    stdin_systems = not hyp and bool(inputs) and not ref and all(_plain_text(path) for path in inputs)
    # sacrebleu's default metric on plain files is BLEU alone; tables get BLEU and chrF
    plain = bool(hyp) or stdin_systems
    if plain and len(metric) > 1:
        # sacrebleu's -m is one argparse option (nargs='+'): a later -m replaces an earlier one, so
        # '-m bleu -m chrf' scores chrF alone there; tables keep every -m (one column each)
        if not quiet:
            say("note", f"-m given {len(metric)} times: the last one counts on plain files, as in sacrebleu "
                        f"({metric[-1].replace(',', ' ')}); name several metrics in one: -m bleu chrf")
        metric = metric[-1:]
    specs = [m.strip() for item in (metric or ("bleu" if plain else "bleu,chrf",)) for m in item.split(",")
             if m.strip()]
    if not specs:
        raise InputError(f"--metric {','.join(metric)!r}: name at least one metric, e.g. -m bleu,chrf")
    folded = [s.casefold() for s in specs]  # a metric's name in any case is that metric ('BLEU' is bleu)
    if plain and len(set(folded)) < len(folded):  # sacrebleu scores a metric named twice once: BLEU, chrF
        again = sorted({s for s in folded if folded.count(s) > 1})
        if not quiet:
            say("note", f"-m names {', '.join(again)} more than once: scored once, as in sacrebleu")
        specs = [specs[folded.index(f)] for f in dict.fromkeys(folded)]
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:  # a table would get two columns of one name
        raise InputError(f"--metric {','.join(metric)!r}: {', '.join(twice)} given twice; name each metric once")
    check_outputs({"--output": output, **({"--error-spans": error_spans} if error_spans else {})},
                  inputs=[p for p in (*inputs, *hyp, src, *ref) if p and p != "-"], stdout=["--output"])
    _check_cache_path(score_cache, {"--output": output, "--error-spans": error_spans})
    settings = {
        "bleu_tokenize": tokenize, "bleu_spm_model": spm_model, "bleu_lowercase": lowercase or None,
        "bleu_smooth_method": smooth_method,
        "bleu_smooth_value": smooth_value, "chrf_char_order": chrf_char_order, "chrf_word_order": chrf_word_order,
        "chrf_beta": chrf_beta, "chrf_whitespace": chrf_whitespace or None, "chrf_lowercase": chrf_lowercase or None,
        "chrf_eps_smoothing": chrf_eps_smoothing or None, "ter_case_sensitive": ter_case_sensitive or None,
        "ter_asian_support": ter_asian_support or None, "ter_no_punct": ter_no_punct or None,
        "ter_normalized": ter_normalized or None, "neural_batch_size": batch_size, "neural_device": device,
        "neural_precision": precision, "neural_progress": progress or None, "neural_cache": score_cache,
        "metricx_variant": metricx_variant, "metricx_tokenizer_path": metricx_tokenizer,
        "judge_prompt": judge_prompt, "judge_max_new_tokens": judge_max_new_tokens,
        "judge_concurrency": judge_concurrency, "judge_timeout": judge_timeout, "judge_retries": judge_retries,
        "judge_api_key_env": judge_api_key_env,
    }
    options = {s: metric_options(s, settings) for s in specs}
    judges = [s for s in specs if s.split(":")[0].lower() == "judge"]
    if len(judges) > 1:  # one column each: gemba_esa_<model>
        import re

        for spec in judges:
            target = spec.split(":", 1)[1]
            model = target.rsplit("#", 1)[1] if "#" in target else os.path.basename(os.path.normpath(target))
            slug = re.sub(r"[^A-Za-z0-9.+-]+", "-", model).strip("-") or "judge"
            options[spec]["column"] = f"gemba_{judge_prompt or 'esa'}_{slug}"
        names = [options[spec]["column"] for spec in judges]
        if len(set(names)) < len(names):
            raise InputError(f"--metric: the judges {', '.join(judges)} would share a column ({names[0]}); give "
                             "their model folders or served models distinct names")
    neural = [s for s in specs if ":" in s]
    if score_cache is not None and len(neural) > 1 and not os.path.isdir(score_cache):
        raise InputError(f"--cache {score_cache}: a cache file holds the scores of one metric, and {len(neural)} "
                         "neural metrics are named; give a directory (one file per metric signature inside it)")
    if paired_bs and paired_ar:
        raise InputError("--paired-bs and --paired-ar are alternatives; choose one")
    test = "bs" if paired_bs else "ar" if paired_ar else None
    resampling = {"test": test, "n": paired_bs_n if paired_bs else paired_ar_n if paired_ar else confidence_n,
                  "confidence": confidence, "seed": seed}
    if hyp or stdin_systems:
        if ref and inputs:
            raise InputError("give references either with -r or before -i (sacrebleu's order), not both")
        refs = list(ref) or list(inputs)
        if baseline is not None:
            raise InputError("--baseline is for tables; with plain files the first -i is the baseline")
        if not refs:
            raise InputError("plain files need references: -r REF.txt (or REF.txt before -i, as sacrebleu)")
        from .score_sacrebleu import Request, output_format

        req = Request(hyps=list(hyp), refs=refs, specs=specs, options=options, lp=lp, src=src, num_refs=num_refs,
                      sentence_level=sentence_level, confidence=confidence, confidence_n=confidence_n, test=test,
                      test_n=resampling["n"], seed=seed, score_only=score_only, width=1 if width is None else width,
                      fmt=output_format(fmt), short=short)
        return _plain(req, output, quiet)
    plain_only = [flag for flag, given in (("-sl", sentence_level), ("-nr", num_refs != 1), ("--short", short),
                                           ("-f latex", fmt == "latex")) if given]
    if plain_only:
        raise InputError(f"{', '.join(plain_only)}: for plain files (REF.txt -i HYP.txt), as in sacrebleu; a table "
                         "is scored per row already")
    fmt = fmt or "text"
    if len(inputs) != 1:
        raise InputError("give either an INPUT table or plain files with -i HYP.txt -r REF.txt [-l de-en]"
                         if not inputs else f"one INPUT table at a time (got {len(inputs)}); for plain files use -i")
    if error_spans is not None and (chunk_size is not None or backend != "local" or test or output is None):
        raise InputError("--error-spans adds columns to a scored table: give -o OUTPUT, without --chunk-size, "
                         "--backend or a paired test")
    if dry_run:
        return _dry_run(inputs[0], col, specs, options, fmt)
    if quiet:  # -q: no notes on stderr (how a TSV's quotes were read, what was written); warnings stay
        import logging

        from ..io._quoting import logger

        logger.setLevel(logging.WARNING)  # the --quoting callback restores its level when the command ends
    if chunk_size is not None or backend != "local":
        if test or confidence:
            raise InputError("paired tests and intervals need every row in memory; drop --chunk-size")
        return _streamed(inputs[0], output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus,
                         quiet)
    with _named(inputs[0]):
        return _table(inputs[0], col, specs, options, output, corpus, resampling, baseline, score_only,
                      4 if width is None else width, fmt, error_spans, quiet)


@contextlib.contextmanager
def _named(path) -> Iterator[None]:
    """An error about the rows of the table, which the library names ``input`` or ``data`` (it was handed a
    frame), names the file instead; the table is read whole, so its row numbers are the file's."""
    from ..exceptions import InputError

    try:
        yield
    except InputError as exc:
        if not str(exc).startswith(("input: ", "data: ")):
            raise
        raise exc.prefixed(str(path)) from None


def _table(path, col, specs, options, output, corpus, resampling, baseline, score_only, width, fmt,
           error_spans=None, quiet=False) -> None:
    from ..exceptions import InputError
    from ..io import parse_column_mapping, write_table

    if resampling["confidence"]:
        raise InputError("--confidence is for plain files (-i HYP.txt); for a table use --paired-bs, which gives "
                         "each system's interval per language pair")
    judges = [spec for spec in specs if spec.split(":")[0].lower() == "judge"]
    if output is not None and not corpus and not resampling["test"] and _parquet(path) and _parquet(output) \
            and error_spans is None and not judges:
        from ..io import read_arrow_table

        # Parquet in, Parquet out, nothing printed from the rows: scored as an Arrow table, no pandas
        df = read_arrow_table(path, columns=parse_column_mapping(col), required=["hypothesis"])
    else:
        from ..io import read_table

        df = read_table(path, columns=parse_column_mapping(col), required=["hypothesis"])
    _name_reference_copies(df, path)
    if resampling["test"]:
        from ..metrics import compare_systems_frame

        with progress_bar("scoring systems", len(df) * len(specs)) as advance, warnings_said():
            results = compare_systems_frame(df, specs, baseline=baseline, options=options, test=resampling["test"],
                                            n_resamples=resampling["n"], random_state=resampling["seed"],
                                            progress=advance)
        if output is not None:  # once the table passed the tests' checks: a refused table writes nothing
            scored = _score(df, specs, options)
            write_table(scored.frame, output, metadata=scored.metadata())
        return _render_comparisons(results, width, fmt)
    spans = _error_spans(df, specs, options) if error_spans is not None and len(judges) < len(specs) else None
    scored = _score(df, specs, options)
    if judges:
        spans = _judge_details(df, scored, spans, error_spans is not None)
    if output is not None:
        from ..io._write import outputs_together

        frame = scored.frame
        if spans is not None:
            frame = frame.assign(**{c: spans[0][c].to_numpy() for c in spans[0].columns})
        with outputs_together():  # -o and --error-spans land together or neither does (docs/errors.md)
            if spans is not None and error_spans is not None:
                write_table(spans[1], error_spans)
            write_table(frame, output, metadata=scored.metadata())
        if not quiet:
            err_console.print(f"wrote {len(df)} rows with {', '.join(scored.signatures)} to {output}"
                              + (f"; {len(spans[1])} error spans to {error_spans}" if error_spans and spans else ""))
        if str(output) == "-":  # standard output has no metadata or sidecar: the signatures travel on stderr
            from .._base.terminal import data_text

            for name, sig in scored.signatures.items():
                err_console.print(data_text(f"{name}: {sig}"), soft_wrap=True)
    if corpus or output is None:
        from ..metrics import corpus_table

        _render_corpus(corpus_table(scored), scored, width, fmt, score_only)
    elif fmt == "json":
        emit_json({"output": output, "rows": len(df), **scored.metadata()})


def _name_reference_copies(df, path) -> None:
    """A system that copies the reference is named (scored like the others: later commands leave it out)."""
    from .._base.default_by import default_by
    from ..io._write import is_arrow_table
    from ._common import reference_copy_step

    names = list(df.column_names if is_arrow_table(df) else df.columns)
    by = default_by(names)
    keys = [by] if by in names else ["src_lang", "tgt_lang"]  # lp: given, or derived from the two codes
    needed = [c for c in (*keys, "system", "hypothesis", "reference") if c in names]
    if len(needed) < len(keys) + 3:  # nothing to compare
        return
    if is_arrow_table(df):  # Parquet in, Parquet out: no pandas unless a copy is there to name
        from ..output_checks._normal import may_hold_a_reference_copy

        groups = zip(*(df.column(k).to_pylist() for k in keys), strict=True)
        cells = list(zip(groups, df.column("system").to_pylist(), strict=True))
        if not may_hold_a_reference_copy(cells, df.column("hypothesis").to_pylist(),
                                         df.column("reference").to_pylist()):
            return
        df = df.select(needed).to_pandas()
    reference_copy_step(df, [by], "system", path, drop=False)


def _check_cache_path(cache, outputs) -> None:
    """The score cache is read and written by the run: an output of the same run must not be that file."""
    if not cache:
        return
    from ..exceptions import InputError

    if not str(cache).strip():
        raise InputError("--cache '': give a file or directory path for the score cache")
    for flag, path in outputs.items():
        if not path or path == "-":
            continue
        same = os.path.realpath(path) == os.path.realpath(cache)
        if not same and os.path.exists(path) and os.path.exists(cache):
            same = os.path.samefile(path, cache)
        if same:
            raise InputError(f"--cache {cache} and {flag} {path} name one file: the output would replace the "
                             "score cache; give each its own path")


def _error_spans(df, specs, options):
    """Count columns and the span table of every comet:PATH metric that tags spans (xleval.metrics._comet)."""
    import pandas as pd

    from ..exceptions import InputError
    from ..metrics import get_metric
    from ..metrics._comet import error_span_tables

    comets = [spec for spec in specs if spec.split(":")[0].lower() == "comet"]
    if not comets:
        if any(spec.split(":")[0].lower() == "judge" for spec in specs):
            return None
        raise InputError("--error-spans needs a comet:PATH metric of an XCOMET model (-m comet:PATH) or a "
                         "judge:SPEC with --judge-prompt esa or mqm")
    tables = [error_span_tables(df, get_metric(spec, level="sentence", **options[spec])) for spec in comets]
    return pd.concat([t[0] for t in tables], axis=1), pd.concat([t[1] for t in tables], ignore_index=True)


def _judge_details(df, scored, spans, with_spans: bool):
    """Each judge column's reasons (COLUMN_failure) and, for error-span prompts, counts per severity and the span
    rows, added to the COMET spans (if any); the count of unread answers is said on stderr."""
    import pandas as pd

    from ..metrics._judge import Judge, judge_tables

    columns, tables = ([spans[0]], [spans[1]]) if spans is not None else ([], [])
    unread: list[str] = []  # the judge columns of which no answer could be read
    for column, metrics in scored.metrics.items():
        if not isinstance(next(iter(metrics.values())), Judge):
            continue
        counts, table = judge_tables(df, scored, column)
        reasons = counts[f"{column}_failure"]
        failed = int((reasons != "").sum())
        if failed and failed == len(df):
            top = reasons.value_counts()
            unread.append(f"{column}: none of the {len(df)} answers could be read (the reasons: "
                          f"{'; '.join(f'{n}x {r}' for r, n in top.head(3).items())})")
        elif failed:
            say("note", f"{column}: {failed} of {len(df)} answers could not be read; their scores are missing and "
                        f"the reason is in column {column}_failure", style="yellow")
        columns.append(counts)
        tables.append(table)
    if unread and len(unread) == len(tables) - (spans is not None):  # a wrong model or server: no score, no result
        from ..exceptions import InputError

        raise InputError(f"{'; '.join(unread)}; check the judge's model name, server and prompt with --dry-run, then "
                         "run again (nothing was written)")
    for line in unread:  # another judge's answers were read: its column is written, and this one said
        say("warning", f"{line}; its column is all missing")
    return pd.concat(columns, axis=1), (pd.concat(tables, ignore_index=True) if with_spans else tables[0].iloc[:0])


def _dry_run(path, col, specs, options, fmt) -> None:
    """Render the judges' prompts for the table and count the requests; nothing is sent."""
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_table
    from ..metrics._frame import _build, _groups, _lang_pairs, _Table
    from ..metrics._judge import Judge

    judges = [spec for spec in specs if spec.split(":")[0].lower() == "judge"]
    if not judges:
        raise InputError("--dry-run shows what a judge:SPEC metric would send; name one with -m judge:SPEC")
    df = read_table(path, columns=parse_column_mapping(col), required=["hypothesis", "source"])
    table = _Table(df)
    pairs = _lang_pairs(table)
    out = []
    for spec in judges:
        groups, inverse = _groups(spec, options[spec], None, len(df), pairs)
        total = cached = 0
        examples: list = []
        for g, label in enumerate(groups):
            rows = df[inverse == g]
            metric = _build(spec, options[spec], str(label), None, "sentence")
            assert isinstance(metric, Judge)
            refs = [rows["reference"].astype(str).tolist()] if metric.use_refs else None
            plan = metric.plan(rows["hypothesis"].astype(str).tolist(), refs, rows["source"].astype(str).tolist())
            total, cached = total + plan.requests, cached + plan.cached
            examples.extend(plan.prompts[:1])
        out.append({"metric": spec, "rows": len(df), "requests": total, "cached": cached, "prompts": examples})
    if fmt == "json":
        emit_json(out)
        return
    for item in out:
        for k, messages in enumerate(item["prompts"]):
            click.echo(f"--- {item['metric']}: prompt {k + 1} of {len(item['prompts'])} (first row of each language "
                       "pair)")
            for m in messages:
                click.echo(f"[{m['role']}]\n{m['content']}")
        click.echo(f"{item['metric']}: {item['rows']} rows, {item['requests']} request(s) to send, {item['cached']} "
                   "answer(s) already cached")


def _plain_text(path) -> bool:
    """A file that is no table (``ref.de``, ``newstest2021.en-de.ref``): sacrebleu's reference. A ``.txt``
    file is one too unless its first line holds a tab or is the header ``hypothesis`` (a table): sacrebleu's
    ``cat HYP | sacrebleu ref.txt`` reads the reference from it and the systems from standard input."""
    from ..exceptions import InputError
    from ..io import table_format

    if str(path) == "-":
        return False
    try:
        table_format(path)
    except InputError:
        return True
    name = str(path).lower()
    return (name.endswith(".txt") or name.endswith(".txt.gz")) and not _table_header(path)


def _table_header(path) -> bool:
    """Whether the first line of a text file reads as a table's header (unreadable: left to the reader)."""
    import gzip

    try:
        opener = gzip.open if str(path).lower().endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except (OSError, EOFError):
        return True
    return "\t" in first or first.strip() == "hypothesis"


def _parquet(path) -> bool:
    from ..exceptions import InputError
    from ..io import table_format

    try:
        return str(path) != "-" and table_format(path) == "parquet"
    except InputError:  # not a table format: the reader (or the writer) says so
        return False


def _score(df, specs, options):
    from ..metrics import score_frame

    with progress_bar("scoring", len(df) * len(specs)) as advance:
        return score_frame(df, specs, options, progress=advance)


def _plain(req, output, quiet) -> None:
    """sacrebleu's command on plain files (score_sacrebleu); ``-o`` also writes the scored rows."""
    from ..exceptions import InputError
    from .score_sacrebleu import references, run

    if [*req.hyps, *req.refs, req.src].count("-") > 1:
        raise InputError("standard input ('-') can be read once; give the other files by name")
    named = run(req)
    if req.confidence and req.confidence_n < 2 and not quiet:  # sacrebleu drops -ci here without a word
        say("note", f"--confidence-n {req.confidence_n}: an interval needs 2 or more resamples; the score is printed "
                    "without one, as sacrebleu does (give -cin 1000 for an interval)")
    if output is not None:
        import pandas as pd

        from ..io import write_table

        streams = references(req)
        frames = []
        for name, lines in named:
            frame = pd.DataFrame({"system": name, "seg_id": range(1, len(lines) + 1), "hypothesis": lines})
            if req.lp is not None:
                frame.insert(1, "lp", req.lp)
            for i, stream in enumerate(streams):
                frame["reference" if i == 0 else f"reference_{i + 1}"] = stream
            frames.append(frame)
        scored = _score(pd.concat(frames, ignore_index=True), list(req.specs), req.options)
        write_table(scored.frame, output, metadata=scored.metadata())
        if not quiet:
            err_console.print(f"wrote {len(scored.frame)} rows with {', '.join(scored.signatures)} to {output}")


def _streamed(input, output, specs, options, chunk_size, col, fmt, backend, workers, scheduler, corpus,
              quiet=False) -> None:
    """Batch-by-batch scoring of a large table (xleval.scale.score_chunked)."""
    import pandas as pd

    from ..exceptions import InputError
    from ..io import parse_column_mapping
    from ..metrics import get_metric
    from ..metrics._base import CORPUS_METRICS
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
    columns = parse_column_mapping(col)
    nrefs = len(reference_columns(pd.DataFrame(columns=table_columns(input, columns)))) or 1
    metrics = [get_metric(spec, level="sentence", **_with_nrefs(spec, options[spec], nrefs)) for spec in specs]
    # the corpus score's signature (BLEU's eff:no), stored as the in-memory path stores it; string metrics only (a
    # neural metric's corpus score is the mean of its segments, and building one again would load its model)
    corpus_signatures = {m.name: get_metric(spec, level="corpus", **_with_nrefs(spec, options[spec], nrefs)).signature
                         for spec, m in zip(specs, metrics, strict=True)
                         if spec.split(":")[0].lower() in CORPUS_METRICS}
    with row_progress(input, "scoring") as advance:
        result = score_chunked(metrics, input, output, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                               columns=columns, progress=advance, corpus_signatures=corpus_signatures,
                               backend=resolve_backend(backend, scheduler=scheduler, workers=workers))
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        if not quiet:
            err_console.print(f"scored {result.rows} rows in {result.batches} batches ({result.backend}) -> {output}")
        for name, sig in result.signatures.items():
            err_console.print(f"{name}: {sig}")


def _with_nrefs(spec: str, options: dict, nrefs: int) -> dict:
    """As score_frame does: BLEU/chrF/TER are built for the table's number of reference columns."""
    kind = spec.split(":")[0].lower()
    from ..metrics._base import CORPUS_METRICS

    return {"nrefs": nrefs, **options} if kind in CORPUS_METRICS else options


def _render_corpus(table, scored, width: int, fmt: str, score_only: bool) -> None:
    meta = scored.metadata()
    corpus_sigs = scored.corpus_signatures
    if fmt == "json":
        emit_json({"corpus": table, "corpus_signatures": corpus_sigs, **meta})
        return
    if score_only:
        for _, row in table.iterrows():
            for column in scored.stats:
                click.echo(f"{row[column]:.{width}f}")
        return
    print_table(table.to_dict(orient="records"), title="corpus scores", digits=width)
    for column, sig in corpus_sigs.items():
        err_console.print(f"{column}: {sig}")


def _render_comparisons(results, width: int, fmt: str) -> None:
    if fmt == "json":
        emit_json([_comparison_json(r) for r in results] if len(results) > 1 else _comparison_json(results[0]))
        return
    for res in results:
        rows = []
        for name in res.systems:
            row: dict = {"system": ("Baseline: " if res.test and name == res.baseline else "") + name}
            for m in res.metrics:
                r = res.results[m][name]
                row[m] = f"{r.score:.{width}f}" + (f" (μ = {r.mean:.{width}f} ± "
                                                   f"{r.ci:.{width}f})" if r.mean is not None else "")
                if res.test:
                    row[f"{m} p"] = "" if r.p_value is None else f"{r.p_value:.4f}" + ("*" if r.p_value < 0.05 else "")
            rows.append(row)
        title = "corpus scores" + (f" ({res.group})" if res.group else "")
        print_table(rows, title=title)
        for m, sig in res.signatures.items():
            err_console.print(f"{m}: {sig}")
        if res.test:
            kind = ("Paired bootstrap resampling test with %d resampling trials" if res.test == "bs"
                    else "Paired approximate randomization test with %d trials") % res.n_resamples
            say("note", f"{kind}; each system against the baseline {res.baseline!r}. p: two-sided, "
                        "(#{|Δ*| > |Δ|} + 1) / (B + 1); * p < 0.05. Null hypothesis: the system and the "
                        "baseline translations come from the same process.", style="dim")


def _comparison_json(res) -> dict:
    return {"group": res.group, "test": res.test, "baseline": res.baseline if res.test else None,
            "n_segments": res.n_segments, "n_resamples": res.n_resamples, "seed": res.random_state,
            "signatures": res.signatures,
            "systems": [{"system": name, **{m: res.results[m][name].to_dict() for m in res.metrics}}
                        for name in res.systems]}

