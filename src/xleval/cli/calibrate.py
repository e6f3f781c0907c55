"""``xleval calibrate fit|apply|show|select|evaluate``: fit an LGN or anchored calibrator (or let the
decision flow choose, ``--method auto``), apply it, inspect it, choose rows to annotate, and evaluate
which calibration to trust out of system folds."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from .._base.terminal import data_text
from ..calibration import (
    LGN,
    ROW_MIN_COUNT,
    AnchoredCalibrator,
    apply_calibrator,
    calibrate_frame,
    calibrated_metadata,
    calibration_summary,
    lgn_min_count,
    load_calibrator,
    output_column,
    output_metadata,
    prepare_frame,
    score_signature,
)
from ..exceptions import DataQualityWarning, InputError
from ..io import check_output_path, parse_column_mapping, read_table, write_table
from ._common import (
    PROBABILITY,
    check_named_column,
    col_option,
    console,
    emit_json,
    err_console,
    format_option,
    parse_columns,
    parse_pair,
    print_table,
    progress_bar,
    row_progress,
    say,
)

_DEFAULTS = LGN().get_params()


@click.group("calibrate", no_args_is_help=True,
             help="Fit (LGN, anchored or auto), apply and show calibrators; select rows to annotate; evaluate.")
def app() -> None:
    pass


def _scale_options(command):
    """Out-of-core / distributed execution (xleval.scale); the in-memory path stays the default for small inputs."""
    for option in reversed([
        click.option("--chunk-size", type=click.IntRange(1),
                     help="Stream the input in batches of N rows (bounded memory); large inputs are streamed by "
                          "default."),
        click.option("--backend", default="local", help="local (this process) or dask (a cluster)."),
        click.option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786."),
        click.option("--workers", type=click.IntRange(1, 256),
                     help="Start a local Dask cluster of N worker processes."),
    ]):
        command = option(command)
    return command


def _scale_backend(backend: str, scheduler: str | None, workers: int | None):
    from ..scale import resolve_backend

    return resolve_backend(backend, scheduler=scheduler, workers=workers)


_SIGNATURE_HELP = "Metric signature of the score (default: from the table's metadata)."


_METHODS = ("lgn", "anchored", "auto", "zscore", "robust", "quantile")
_DIRECTION_OPTION = click.option("--human-higher-is-better/--human-lower-is-better", "human_up", default=None,
                                 help="Direction of the human scale (MQM: lower is better). Default: found in the "
                                      "labels and reported.")


@app.command("fit")
@click.argument("input")
@click.option("--score", required=True, help="Score column to calibrate.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Where to write the calibrator JSON.")
@click.option("--by", default=_DEFAULTS["by"], help="Group by tgt_lang, lp, or COL[,COL...].")
@click.option("--method", type=click.Choice(_METHODS), default=None,
              help="lgn (per-group z-score), anchored (map onto the human scale of --human; labels may be sparse), or "
                   "auto (anchored when every group has human labels, else LGN with the reason). zscore, robust and "
                   "quantile are LGN with that statistic. Default: auto with --human, else lgn.")
@click.option("--human", help="Human score column (NaN = not labelled): anchored calibration and --method auto.")
@click.option("--system", default="system",
              help="System column (anchored: system means give the between-system slope).")
@_DIRECTION_OPTION
@click.option("--target", default="0,1", help="LGN: shared MEAN,STD of calibrated scores, e.g. 80,10.")
@click.option("--min-count", type=click.IntRange(1, 10**9), default=None, show_default=False,
              help="LGN: smaller groups are shrunk toward the others and flagged. Default by the table's level: 50 for "
                   "segment rows, no shrinkage for a table of system scores or when no group reaches 50 rows.")
@click.option("--fallback", default="default",
              help="LGN: chain for unseen groups, e.g. tgt_lang,script,family,pooled (or raw/error last). Anchored: "
                   "pooled or error.")
@click.option("--signature", help=_SIGNATURE_HELP)
@col_option
@format_option
@_scale_options
def fit(input, score, output, by, method, human, system, human_up, target, min_count, fallback, signature, col, fmt,
        chunk_size, backend, scheduler, workers) -> None:
    """Fit a calibrator on a table and save it.

    INPUT is the calibration table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). With
    --method anchored the metric side uses every row and the human side the rows that carry a
    --human score (e.g. 100 judged segments per language pair; `calibrate select` picks them).
    """
    from ..scale import should_stream

    check_output_path(output, inputs=[input])
    by_cols = parse_columns(by, "--by")
    if method is None:  # human scores given: the evidence favours anchoring to them where they cover every group
        method = "auto" if human is not None else "lgn"
    if method in ("anchored", "auto"):
        if chunk_size is not None or backend != "local" or scheduler is not None or workers is not None:
            raise InputError(f"--method {method} fits in memory (system means over every row); drop "
                             "--chunk-size/--backend/--scheduler/--workers")
        return _fit_anchored_or_auto(input, score, output, by_cols, method, human, system, human_up, target,
                                     min_count, fallback, signature, col, fmt)
    if human is not None:
        raise InputError(f"--human {human!r} is used by --method anchored or auto; LGN uses no human scores (drop "
                         "--human, or choose --method anchored/auto)")
    if should_stream(input, chunk_size, backend) or scheduler is not None or workers is not None:
        model = _lgn_model(by_cols, method, target, min_count or ROW_MIN_COUNT, fallback, score)
        return _fit_chunked(model, input, output, chunk_size, signature, col, fmt,
                            _scale_backend(backend, scheduler, workers))
    df = read_table(input, columns=parse_column_mapping(col), required=[score], numeric=[score])
    frame = prepare_frame(df, by_cols, input)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sig = _signature_of(input, score, signature)
        chosen, why = _min_count(frame, by_cols, system, min_count)
        model = _lgn_model(by_cols, method, target, chosen, fallback, score)
        _fit_lgn(model, frame, output, sig, by_cols, fmt, caught, title_note="", min_count_note=why)


def _lgn_model(by_cols, method, target, min_count, fallback, score) -> LGN:
    statistic = "zscore" if method in ("lgn", "auto") else method
    return LGN(by=by_cols[0] if len(by_cols) == 1 else by_cols, method=statistic,
               target=parse_pair(target, "--target"), min_count=min_count,
               fallback="default" if fallback == "default" else fallback.split(","), score=score)


def _min_count(frame, by_cols, system, given) -> tuple[int, str]:
    """LGN's min_count and why: given (warned about when it shrinks every group), or by the table's level."""
    if any(c not in frame.columns for c in by_cols):  # LGN's fit names the missing column
        return given or ROW_MIN_COUNT, ""
    if given is None:
        chosen, why = lgn_min_count(frame, by_cols, system)
        return chosen, f"{chosen}: {why}"
    largest = int(frame.groupby(by_cols, observed=True).size().max())
    if largest < given:
        warnings.warn(f"--min-count {given} shrinks every group toward the others (the largest has {largest} rows): "
                      "the result is neither LGN nor the raw scores; leave --min-count out to choose it by the "
                      "table's level", DataQualityWarning, stacklevel=2)
    return given, f"{given} (given)"


def _signature_of(input, score, given):
    """The score's metric signature: given, or from the table's metadata; a lost one is said once."""
    if given is not None:
        return given
    sig = score_signature(input, score)
    if sig is None:
        warnings.warn(f"{input}: no metric signature stored for column {score!r} (written by another tool, or "
                      "filtered without keeping xleval's metadata): the calibrator cannot refuse scores of another "
                      "metric; pass --signature to record one", DataQualityWarning, stacklevel=2)
    return sig


def _fit_lgn(model, frame, output, sig, by_cols, fmt, caught, title_note, min_count_note) -> None:
    model.fit(frame, signature=sig)
    calibrated = model.transform(frame)
    model.save(output)
    summary = calibration_summary(frame[model.score], calibrated,
                                  frame[by_cols] if len(by_cols) > 1 else frame[by_cols[0]])
    _render(fmt, {"model": str(output), "method": "lgn", "signature": sig, "min_count": min_count_note,
                  "groups": model.group_table(), "verification": summary,
                  **({"decision": title_note} if title_note else {})},
            [str(w.message) for w in caught],
            title=f"LGN {model.method} by {'+'.join(by_cols)} fitted on {len(frame)} rows -> {output}")


def _fit_anchored_or_auto(input, score, output, by_cols, method, human, system, human_up, target, min_count, fallback,
                          signature, col, fmt) -> None:
    from ..diagnostics import CommandContext, choose_method

    if method == "anchored" and human is None:
        raise InputError("--method anchored maps scores onto a human scale: give the human score column with --human "
                         "(rows without a human score are fine; `xleval calibrate select` picks rows to annotate)")
    lgn_only = [name for name, given in (("--target", target != "0,1"), ("--min-count", min_count is not None))
                if given]
    if method == "anchored" and lgn_only:
        raise InputError(f"{' and '.join(lgn_only)} {'is an LGN option' if len(lgn_only) == 1 else 'are LGN options'}"
                         f"; anchored calibration puts the scores on the human scale of --human: drop "
                         f"{'/'.join(lgn_only)}, or use --method lgn")
    numeric = [score] + ([human] if human else [])
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    check_named_column(df, "--system", system, input)
    frame = prepare_frame(df, by_cols, input)
    by = by_cols[0] if len(by_cols) == 1 else by_cols
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sig = _signature_of(input, score, signature)
        choice = None
        if method == "auto":
            choice = _in(input, choose_method, frame, score, by, human=human, system=system,
                         commands=CommandContext.from_cli(input, col))
            if choice.method == "lgn":
                chosen, why = _min_count(frame, by_cols, system, min_count)
                model = _lgn_model(by_cols, "lgn", target, chosen, fallback, score)
                _announce(choice, fmt)
                return _fit_lgn(model, frame, output, sig, by_cols, fmt, caught, title_note=choice.summary(),
                                min_count_note=why)
        if fallback not in ("default", "pooled", "error"):
            raise InputError(f"--fallback {fallback!r}: anchored calibration gives unseen groups the common offset "
                             "(pooled) or refuses them (error)")
        anchored = AnchoredCalibrator(by=by, score=score, human=human, system=system, human_higher_is_better=human_up,
                                      fallback="error" if fallback == "error" else "pooled")
        _in(input, anchored.fit, frame, signature=sig)
        anchored.save(output)
    if choice is not None:
        _announce(choice, fmt)
    info = anchored.describe()
    payload = {"model": str(output), "method": "anchored", "signature": sig,
               "fit": {k: v for k, v in info.items() if k != "notes"}, "groups": anchored.group_table(),
               "notes": info["notes"]}
    if choice is not None:
        payload["decision"] = choice.summary()
    _render(fmt, payload, [str(w.message) for w in caught if str(w.message) not in info["notes"]],
            title=f"anchored by {'+'.join(by_cols)} on {human!r}: {len(frame)} rows, {info['n_labels']} labels "
                  f"-> {output}")
    if fmt != "json":
        for note in info["notes"]:
            say("note", note, style="")


def _in(input, function, *args, **kwargs):
    """``function(*args, **kwargs)``; an InputError about the data names the table (the library cannot know it)."""
    try:
        return function(*args, **kwargs)
    except InputError as exc:
        if str(exc).startswith(f"{input}: "):
            raise
        raise exc.prefixed(str(input)) from None


def _announce(choice, fmt) -> None:
    """--method auto says what it chose and why (on stderr; in JSON it is the `decision` field)."""
    if fmt == "json":
        return
    # soft wraps only: the warning names commands, and a hard line break inside one breaks its paste
    err_console.print(data_text(choice.summary(), style="bold"), soft_wrap=True)
    if choice.warning:
        err_console.print(data_text(choice.warning, style="bold red" if choice.warn else ""), soft_wrap=True)


@app.command("apply")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@click.argument("input")
@click.option("-o", "--output", required=True, help="Output table (format by extension, '-' = TSV on stdout).")
@click.option("--column", help="Name of the calibrated column (default: SCORE_lgn or SCORE_anchored).")
@click.option("--overwrite", is_flag=True, help="Replace input columns named like the added ones (--column, "
              "calibration_source) instead of refusing.")
@click.option("--interval", type=PROBABILITY, help="Add lower/upper columns of a confidence interval at this level, "
              "e.g. 0.95 (anchored: the uncertainty that comes from the few human labels).")
@click.option("--on-unseen", type=click.Choice(["pooled", "raw", "error"]),
              help="Groups the calibrator has not seen: pooled, raw or error (instead of the fitted fallback chain; "
                   "anchored: pooled or error).")
@click.option("--force", is_flag=True, help="Apply even if the score's metric signature differs from the calibrator's.")
@click.option("--signature", help=_SIGNATURE_HELP)
@col_option
@format_option
@_scale_options
def apply(model_path, input, output, column, overwrite, interval, on_unseen, force, signature, col, fmt, chunk_size,
          backend, scheduler, workers) -> None:
    """Add the calibrated column and `calibration_source`, keeping every input row and column in order.

    MODEL.json is a calibrator written by `calibrate fit`; INPUT is the table to calibrate.
    """
    from ..scale import should_stream

    model = load_calibrator(model_path)
    if output != "-":
        check_output_path(output, inputs=[input, model_path])
    if isinstance(model, AnchoredCalibrator):
        return _apply_anchored(model, input, output, column, overwrite, interval, on_unseen, force, signature, col,
                               fmt, chunk_size, backend, scheduler, workers)
    model = model.with_on_unseen(on_unseen)
    if should_stream(input, chunk_size, backend) or scheduler is not None or workers is not None:
        return _apply_chunked(model, input, output, chunk_size, column, interval, signature, force, col, fmt,
                              _scale_backend(backend, scheduler, workers), overwrite)
    df = read_table(input, columns=parse_column_mapping(col), required=[model.score], numeric=[model.score])
    sig = signature if signature is not None else score_signature(input, model.score)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = calibrate_frame(model, df, column=column, interval=interval, signature=sig, force=force, where=input,
                              overwrite=overwrite)
    write_table(out, output, metadata=calibrated_metadata(model, input, column))
    _report_applied(out, output, output_column(model, column), caught, fmt)


def _apply_anchored(model, input, output, column, overwrite, interval, on_unseen, force, signature, col, fmt,
                    chunk_size, backend, scheduler, workers) -> None:
    if chunk_size is not None or backend != "local" or scheduler is not None or workers is not None:
        raise InputError("an anchored calibrator is applied in memory (system means over every row); drop "
                         "--chunk-size/--backend/--scheduler/--workers")
    if on_unseen == "raw":
        raise InputError("--on-unseen raw: an anchored calibrator gives unseen groups the common offset (pooled) or "
                         "refuses them (error); raw scores are not on the human scale")
    df = read_table(input, columns=parse_column_mapping(col), required=[model.score], numeric=[model.score])
    sig = signature if signature is not None else score_signature(input, model.score)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = apply_calibrator(model, df, column=column, interval=interval, signature=sig, force=force, where=input,
                               on_unseen=on_unseen, overwrite=overwrite)
    write_table(out, output, metadata=output_metadata(model, input, column))
    _report_applied(out, output, output_column(model, column), caught, fmt)


def _report_applied(out, output, name, caught, fmt) -> None:
    if output == "-":
        return
    counts = out["calibration_source"].value_counts().to_dict()
    _render(fmt, {"output": output, "rows": len(out), "column": name, "calibration_source": counts,
                  "n_nan": int(out[name].isna().sum())}, [str(w.message) for w in caught],
            title=f"calibrated {len(out)} rows -> {output}")


@app.command("show")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@format_option
def show(model_path, fmt) -> None:
    """Print a calibrator's options, signature and per-group statistics."""
    model = load_calibrator(model_path)
    if isinstance(model, AnchoredCalibrator):
        _render(fmt, {"model": str(model_path), "params": model.to_dict()["params"], "signature": model.signature_,
                      "fit": model.describe(), "groups": model.group_table()},
                [], title=f"{model!r} signature={model.signature_}")
        return
    _render(fmt, {"model": str(model_path), "params": model.to_dict()["params"], "signature": model.signature_,
                  "pooled": {"center": model.pooled_[0], "scale": model.pooled_[1]}, "groups": model.group_table()},
            [], title=f"{model!r} signature={model.signature_}")


@app.command("select")
@click.argument("input")
@click.option("--by", default="lp", help="Group by lp, tgt_lang, or COL[,COL...]: the budget is per group.")
@click.option("--budget", type=click.IntRange(1), required=True, help="Rows to annotate per group, e.g. 100.")
@click.option("--score", required=True, help="Score column: the labels are spread over its range.")
@click.option("-o", "--output", required=True, help="Where to write the rows to annotate (format by extension, '-' = "
              "TSV on stdout).")
@click.option("--system", default="system", help="System column: the labels are spread over systems.")
@click.option("--segment", default="seg_id", help="Segment column: no segment is chosen twice in a group while "
              "others are left.")
@click.option("--selection", type=click.Choice(["spread", "random"]), default="spread",
              help="spread (over systems and the score's range) or random.")
@click.option("--skip-labelled", metavar="COL", help="Human column: rows that already have a value are not chosen.")
@click.option("--label-column", default="human", help="Name of the empty column the annotators fill in.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Random state of the selection.")
@col_option
@format_option
def select(input, by, budget, score, output, system, segment, selection, skip_labelled, label_column, seed, col,
           fmt) -> None:
    """Choose BUDGET rows per group to send to annotators for anchored calibration.

    Writes lp (the --by columns), system, seg_id, doc_id, source, hypothesis and reference (those
    present), the input row number and an empty label column; never the score (it would sway the
    judges). Merge the filled-in labels back on the row number (or lp, system, seg_id).
    """
    from ..calibration import select_for_annotation

    if output != "-":
        check_output_path(output, inputs=[input])
    numeric = [score] + ([skip_labelled] if skip_labelled else [])
    df = read_table(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric)
    check_named_column(df, "--system", system, input)
    check_named_column(df, "--segment", segment, input)
    by_cols = parse_columns(by, "--by")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = _in(input, select_for_annotation, df, by_cols if len(by_cols) > 1 else by_cols[0], budget,
                     score=score, system=system, segment=segment, method=selection, label_column=label_column,
                     skip_labelled=skip_labelled, random_state=seed)
    write_table(chosen, output)
    if output == "-":
        return
    per_group = chosen.groupby(by_cols).size()
    counts = {("|".join(map(str, k)) if isinstance(k, tuple) else str(k)): int(v) for k, v in per_group.items()}
    _render(fmt, {"output": output, "rows": len(chosen), "selection": selection, "seed": seed, "per_group": counts},
            [str(w.message) for w in caught],
            title=f"selected {len(chosen)} rows (up to {budget} per group, {selection}) -> {output}")


@app.command("evaluate")
@click.argument("input")
@click.option("--score", required=True, help="Score column.")
@click.option("--human", required=True, help="Human score column (the reference the calibrations are judged by).")
@click.option("--by", default="lp", help="Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--system", default="system", help="System column (folds split systems).")
@click.option("--budget", default=",".join(map(str, (25, 50, 100, 200))),
              help="Labels per group for the anchored budget curve, comma-separated.")
@click.option("--selection", default="spread,random", help="Selections to compare: spread, random or both.")
@_DIRECTION_OPTION
@click.option("--folds", type=click.IntRange(2), default=5, help="System folds.")
@click.option("--repeats", type=click.IntRange(1), default=10, help="Fold splits and label draws (results are means "
              "over them).")
@click.option("--n-resamples", type=click.IntRange(1), default=1000, help="Bootstrap resamples of systems for the CIs.")
@click.option("--alternative", type=click.Choice(["two-sided", "greater", "less"]),
              help="Also test each calibration against raw (PERM-BOTH permutation test of cross-group accuracy on "
                   "the system scores averaged over repeats, --n-resamples permutations): two-sided, greater (WMT's "
                   "one-sided test: the calibration orders more pairs as humans do) or less. Accuracy here is always "
                   "cross-group, so there is no --average-by: a per-group calibration cannot reorder pairs inside a "
                   "group or a segment (see `diagnose --average-by`).")
@click.option("--seed", type=click.IntRange(0), default=0, help="Random state of folds, draws and resamples.")
@col_option
@format_option
def evaluate(input, score, human, by, system, budget, selection, human_up, folds, repeats, n_resamples, alternative,
             seed, col, fmt) -> None:
    """Which calibration should I trust here? Raw vs LGN vs anchored out of system folds.

    Cross-group pairwise accuracy and system-level Pearson of raw scores, LGN, anchored with every
    label and anchored with K labels per group (repeated draws), with CIs and paired differences.
    """
    from ..diagnostics import evaluate_calibration

    budgets = _int_list(budget, "--budget")
    selections = [s.strip() for s in selection.split(",") if s.strip()]
    bad = [s for s in selections if s not in ("spread", "random")]
    if bad or not selections:
        raise InputError(f"--selection {selection!r}: use spread, random or spread,random")
    if score == human:
        raise InputError(f"--score and --human name the same column ({score}); the evaluation compares one with "
                         "the other")
    df = read_table(input, columns=parse_column_mapping(col), required=[score, human], numeric=[score, human])
    by_cols = parse_columns(by, "--by")
    frame = prepare_frame(df, by_cols, input)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress_bar(f"evaluating on {input}") as advance:
            result = _in(input, evaluate_calibration, frame, score, human,
                         by_cols[0] if len(by_cols) == 1 else by_cols, system=system, budgets=budgets,
                         selections=selections, n_folds=folds, n_repeats=repeats, human_higher_is_better=human_up,
                         level=0.95, n_resamples=n_resamples, random_state=seed, progress=advance,
                         alternative=alternative)
    notes = [str(w.message) for w in caught]
    if fmt == "json":
        emit_json({**result.to_dict(), "warnings": notes})
        return
    _render_evaluation(result, notes)


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} {text!r}: expected whole numbers separated by commas, e.g. 25,50,100,200") from None
    if not values:
        raise InputError(f"{option} {text!r}: give at least one number, e.g. 100")
    if min(values) < 1:
        raise InputError(f"{option} {text!r}: labels per group are whole numbers >= 1, e.g. 25,50,100,200")
    return values


def _render_evaluation(result, notes) -> None:
    def ci(est) -> str:
        return f"{est.ci_low:.3f} to {est.ci_high:.3f}"

    def diff(est) -> str:
        return "" if est is None else f"{est.estimate:+.3f} ({est.ci_low:+.3f} to {est.ci_high:+.3f})"

    rows = [{"scores": v.name, "cross-group acc": f"{v.accuracy.estimate:.3f}", "95% CI": ci(v.accuracy),
             "minus raw (CI)": diff(v.minus_raw), "minus LGN (CI)": diff(v.minus_lgn),
             **({f"p vs raw ({result.alternative})": "" if v.vs_raw is None else f"{v.vs_raw.p_value:.3g}"}
                if result.alternative else {}),
             "pearson": f"{v.pearson.estimate:.3f}",
             "runs": f"{min(v.runs):.3f}-{max(v.runs):.3f}" if len(set(v.runs)) > 1 else f"{v.runs[0]:.3f}"}
            for v in result.variants]
    print_table(rows, title=f"{result.score} against {result.human} by {result.by}: {result.n_systems} systems in "
                f"{result.n_groups} groups, {result.n_folds} system folds x {result.n_repeats} repeats")
    for k, gain in result.selection_gain.items():
        console.print(f"spread minus random selection at {k} labels per group: {gain.estimate:+.3f} "
                      f"({gain.ci_low:+.3f} to {gain.ci_high:+.3f} over {gain.n} repeats)")
    console.print(data_text(result.verdict, style="bold"))
    for note in list(result.notes) + notes:
        say("note", note, style="")


def _fit_chunked(model, input, output, chunk_size, signature, col, fmt, backend) -> None:
    from ..scale import DEFAULT_CHUNK_SIZE, fit_chunked

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with row_progress(input, "fitting") as advance:
            fit_chunked(model, input, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE, columns=parse_column_mapping(col),
                        signature=signature, backend=backend, progress=advance)
    model.save(output)
    groups = model.group_table()
    _render(fmt, {"model": str(output), "signature": model.signature_, "groups": groups},
            [str(w.message) for w in caught],
            title=f"LGN {model.method} by {model.by} fitted on {int(groups['n'].sum())} rows in {model.n_batches_} "
                  f"batches ({backend.name}) -> {output}")


def _apply_chunked(model, input, output, chunk_size, column, interval, signature, force, col, fmt, backend,
                   overwrite) -> None:
    from ..scale import DEFAULT_CHUNK_SIZE, apply_chunked

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with row_progress(input, "calibrating") as advance:
            result = apply_chunked(model, input, output, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE, column=column,
                                   interval=interval, signature=signature, force=force,
                                   columns=parse_column_mapping(col), backend=backend, progress=advance,
                                   overwrite=overwrite)
    if output != "-":
        _render(fmt, result.to_dict(), [str(w.message) for w in caught],
                title=f"calibrated {result.rows} rows in {result.batches} batches ({result.backend}) -> {output}")


def _render(fmt: str, payload: dict, notes: list[str], title: str) -> None:
    if fmt == "json":
        emit_json({**payload, "warnings": notes})
        return
    err_console.print(title)
    for key, value in payload.items():
        if hasattr(value, "to_dict") and hasattr(value, "columns"):
            print_table(value.to_dict(orient="records"), title=key)
        elif key == "verification":
            print_table(value.groups.to_dict(orient="records"), title="per-group mean/std before and after")
            err_console.print(f"sd of group means: before {value.sd_of_means_before:.6g}, "
                              f"after {value.sd_of_means_after:.3g}")
        elif isinstance(value, dict):
            err_console.print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif key == "min_count":
            err_console.print(f"min_count {value}")
    for note in notes:
        say("warning", note)
