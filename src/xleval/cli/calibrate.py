"""``xleval calibrate fit|apply|show``: fit an LGN or anchored calibrator (or let the decision flow choose,
``--method auto``), apply it, inspect it. ``select`` and ``evaluate`` live in modules of their own
(:mod:`.calibrate_select`, :mod:`.calibrate_evaluate`) on the same group. What is fitted, and how, is
decided by :func:`xleval.decision.fit_calibration`; this module parses, calls and renders."""
from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import click

from ..calibration import (
    FIT_METHODS,
    LGN_STATISTICS,
    ROW_MIN_COUNT,
    UNSEEN_CHOICES,
    apply_calibrator,
    build_lgn,
    calibration_summary,
    default_method,
    load_calibrator,
    output_column,
    output_metadata,
    prepare_frame,
    row_interval_target,
    score_signature,
)
from ..calibration._drift import is_model_signature, make_probe
from ..calibration._persist import check_calibrator_path, save_with_probe
from ..calibration._scales import direction_for
from ..decision import fit_calibration
from ..exceptions import DataQualityWarning, InputError, SignatureMismatchError
from ..io import check_output_path, parse_column_mapping, write_table
from ..table import EvalTable
from ._common import (
    PROBABILITY,
    FiniteFloat,
    by_option,
    check_named_column,
    check_outputs,
    col_option,
    format_option,
    grouping,
    header_columns,
    keep_reference_copies_option,
    parse_pair,
    reference_copy_step,
    say,
)
from .calibrate_advice import announce, decision_commands, human_scale_option
from .calibrate_common import (
    DIRECTION_OPTION,
    HUMAN_RANGE_OPTION,
    OFFSETS_OPTION,
    SIGNATURE_HELP,
    app,
    bounded_note,
    in_table,
    parse_human_range,
    render,
    scale_asked,
    scale_backend,
    scale_options,
    scale_range,
    streaming,
)
from .calibrate_scale import apply_chunked, fit_chunked
from .check_outputs import drop_invalid, exclude_invalid_option

__all__ = ["app"]

_METHODS = (*FIT_METHODS, *LGN_STATISTICS)


@app.command("fit")
@click.argument("input")
@click.option("--score", required=True, help="Score column to calibrate.")
@click.option("-o", "--output", required=True, type=click.Path(),
              help="Where to write the calibrator JSON (a file: '-' is refused).")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--method", type=click.Choice(_METHODS), default=None,
              help="lgn (per-group z-score), anchored (map onto the human scale of --human; labels may be sparse), or "
                   "auto (raw vs LGN vs anchored compared out of system folds at the labels in the table; where "
                   "that cannot be measured, anchored when every group has labels, else LGN with the reason; "
                   "docs/calibration.md). zscore, robust and "
                   "quantile are LGN with that statistic. Default: auto with --human, else lgn.")
@click.option("--human", help="Human score column (NaN = not labelled): anchored calibration and --method auto.")
@click.option("--system", default="system",
              help="System column (anchored: system means give the between-system slope).")
@DIRECTION_OPTION
@HUMAN_RANGE_OPTION
@OFFSETS_OPTION
@click.option("--target", default="0,1", help="LGN: shared MEAN,STD of calibrated scores, e.g. 80,10.")
@click.option("--min-count", type=click.IntRange(1, 10**9), default=None, show_default=False,
              help="LGN: smaller groups are shrunk toward the others and flagged. Default by the table's level: 50 for "
                   "segment rows, no shrinkage for a table of system scores or when no group reaches 50 rows.")
@click.option("--fallback", default="default", show_default=False,
              help="LGN: chain for unseen groups, e.g. tgt_lang,script,family,pooled (or raw/error last); default: the "
                   "language levels coarser than --by, then pooled. Anchored: pooled (the default) or error.")
@click.option("--decay", type=FiniteFloat(0, 1, low_open=True, high_open=True), default=None,
              help="LGN, for online updates (`calibrate update`): each update weighs the statistics so far by this "
                   "factor (e.g. 0.9), so older batches count less. Default: every batch counts alike.")
@click.option("--window", type=click.IntRange(1, 10_000), default=None,
              help="LGN, for online updates (`calibrate update`): keep only the last N batches (this fit is the "
                   "first). Default: every batch.")
@click.option("--signature", help=SIGNATURE_HELP)
@click.option("--probe", type=click.IntRange(0, 10_000), default=5,
              help="A score whose signature names a model (neural metrics, judges): keep N rows per group with their "
                   "scores in the calibrator, so that `calibrate apply` refuses scores that moved (0: none).")
@human_scale_option
@exclude_invalid_option
@keep_reference_copies_option
@col_option
@format_option
@scale_options
def fit(input, score, output, by, method, human, system, human_up, human_range, offsets, target, min_count, fallback,
        decay, window, signature, probe, human_scale, exclude_invalid, keep_reference_copies, col, fmt, chunk_size,
        backend, scheduler, workers) -> None:
    """Fit a calibrator on a table and save it.

    INPUT is the calibration table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). With
    --method anchored the metric side uses every row and the human side the rows that carry a
    --human score (e.g. 100 judged segments per language pair; `calibrate select` picks them).
    """
    check_outputs({"-o": output}, inputs=[input])  # a calibrator is a file: '-' is refused
    check_calibrator_path(output)  # plain JSON only: refused before fitting
    method = default_method(method, human)
    _check_fit_options(method, human, target, min_count, scale_asked(chunk_size, backend, scheduler, workers))
    _check_online_options(method, decay, window, streaming(input, chunk_size, backend, scheduler, workers))
    bounds = parse_human_range(human_range)
    if offsets is not None and method not in ("anchored", "auto"):
        raise InputError("--offsets chooses how anchored calibration estimates each group's offset; LGN has none: "
                         "use it with --method anchored or auto (and --human)")
    if bounds is not None and method not in ("anchored", "auto"):
        raise InputError("--human-range bounds the human scale of anchored calibration; use it with --method "
                         "anchored or auto (and --human)")
    statistic, kind = (method, "lgn") if method in LGN_STATISTICS else ("zscore", method)
    chain = "default" if fallback == "default" else [level.strip() for level in fallback.split(",")]
    if chain != "default" and not all(chain):
        raise InputError(f"--fallback {fallback!r}: an empty level between commas; give the levels in order, e.g. "
                         "--fallback tgt_lang,pooled")
    pair = parse_pair(target, "--target")
    if kind == "lgn" and streaming(input, chunk_size, backend, scheduler, workers):
        if exclude_invalid:
            raise InputError("--exclude-invalid checks the texts of the whole table in memory; drop "
                             "--chunk-size/--backend/--scheduler/--workers, or run `xleval check-outputs` first")
        by_cols = grouping(by, header_columns(input, col) if by is None else ())  # before the rows are read
        model = build_lgn(by_cols, score, statistic=statistic, target=pair, min_count=min_count or ROW_MIN_COUNT,
                          fallback=chain)
        engine = scale_backend(backend, scheduler, workers)
        sig = signature if signature is not None else score_signature(input, score, parse_column_mapping(col))
        if probe and is_model_signature(sig):  # the probe the in-memory fit keeps, read in batches
            return fit_chunked(model, input, output, chunk_size, sig, col, fmt, engine,
                               _streamed_probe(input, score, by_cols, probe, sig, chunk_size, col))
        return fit_chunked(model, input, output, chunk_size, signature, col, fmt, engine)
    numeric = [score] + ([human] if human else [])
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=numeric, numeric=numeric, score=score,
                           by=None, normalize_languages=False)  # read once: its signatures travel with it
    df = table.frame
    by_cols = grouping(by, df.columns)
    excluded = None
    if exclude_invalid:  # before anything is fitted: the calibrator never sees the flagged rows
        df, excluded = drop_invalid(df, by_cols, input)
    df, copies = reference_copy_step(df, by_cols, system, input, keep_reference_copies, quiet=True)
    if kind != "lgn":
        check_named_column(df, "--system", system, input)
    frame = prepare_frame(df, by_cols, input)
    named = direction_for(frame, human, human_scale, human_up)  # a named scale says its direction
    range_text = source = outside = None
    if bounds is None and kind != "lgn":  # and its bounds, as the leaderboard and the report take them
        range_text, source, outside = scale_range(frame, human, human_scale, None)
        bounds = parse_human_range(range_text)
    # a direction the scale's name fixes is not refused when a few labels point the other way (noise: a warning)
    strict = human_up is not None or named is None
    human_up = named
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sig = _signature_of(table, signature)
        common = {"score": score, "by": by_cols, "system": system, "statistic": statistic, "target": pair,
                  "min_count": min_count, "fallback": chain, "signature": sig}
        if kind == "lgn":  # LGN's messages name the column, as `calibrate fit` always printed them
            fitted = fit_calibration(frame, "lgn", **common, decay=decay, window=window)
        else:
            scale = {"human_scale": human_scale} if kind == "auto" else {}
            fitted = in_table(input, fit_calibration, frame, kind, human=human, human_higher_is_better=human_up,
                              human_range=bounds, strict=strict, commands=decision_commands(input, col), **scale,
                              offsets=offsets, **common)
        calibrated = fitted.model.transform(frame) if fitted.method == "lgn" else None  # the verification's
        if probe and is_model_signature(sig):  # a drift probe (xleval.calibration._drift)
            save_with_probe(fitted.model, output, make_probe(df, score, by=by_cols, per_group=probe, signature=sig))
        else:
            fitted.model.save(output)
    if fitted.decision is not None:
        announce(fitted.decision, fmt)
    kept = bounded_note(range_text, source, fitted.method)  # what was done, a note; labels outside, a warning
    notes = [*([copies] if copies else []), *([excluded] if excluded else []), *([outside] if outside else []),
             *(str(w.message) for w in caught)]
    if fmt == "json" and fitted.decision is not None:  # the decision's warning and notes reach `warnings`
        notes = [*([fitted.decision.warning] if fitted.decision.warning else []), *fitted.decision.notes, *notes]
    if fitted.method == "lgn":
        return _render_lgn(fitted, frame, calibrated, output, sig, by_cols, fmt, notes)
    _render_anchored(fitted, frame, output, sig, by_cols, human, fmt, notes, (kept,) if kept else ())


def _streamed_probe(input, score, by_cols, per_group, signature, chunk_size, col) -> dict:
    """The drift probe of a streamed fit: :func:`make_probe`'s rows, read in two passes over the batches."""
    from ..calibration._drift import make_probe_frames
    from ..scale import DEFAULT_CHUNK_SIZE, iter_batches

    def frames():
        return (batch.frame for batch in iter_batches(input, chunk_size or DEFAULT_CHUNK_SIZE,
                                                      columns=parse_column_mapping(col), required=[score],
                                                      numeric=[score]))
    return make_probe_frames(frames, score, by=by_cols, per_group=per_group, signature=signature)


def _check_fit_options(method, human, target, min_count, scaled) -> None:
    """Flag combinations that cannot go together (said in the command line's words)."""
    if method in ("anchored", "auto") and scaled:
        raise InputError(f"--method {method} fits in memory (system means over every row); drop "
                         "--chunk-size/--backend/--scheduler/--workers")
    if method not in ("anchored", "auto") and human is not None:
        raise InputError(f"--human {human!r} is used by --method anchored or auto; LGN uses no human scores (drop "
                         "--human, or choose --method anchored/auto)")
    if method == "anchored" and human is None:
        raise InputError("--method anchored maps scores onto a human scale: give the human score column with --human "
                         "(rows without a human score are fine; `xleval calibrate select` picks rows to annotate)")
    lgn_only = [name for name, given in (("--target", target != "0,1"), ("--min-count", min_count is not None))
                if given]
    if method == "anchored" and lgn_only:
        raise InputError(f"{' and '.join(lgn_only)} {'is an LGN option' if len(lgn_only) == 1 else 'are LGN options'}"
                         f"; anchored calibration puts the scores on the human scale of --human: drop "
                         f"{'/'.join(lgn_only)}, or use --method lgn")


def _check_online_options(method, decay, window, streamed) -> None:
    """--decay and --window are LGN's, for `calibrate update`; one of them, in memory."""
    given = [name for name, value in (("--decay", decay), ("--window", window)) if value is not None]
    if not given:
        return
    if method in ("anchored", "auto"):
        raise InputError(f"{' and '.join(given)} set how LGN weighs the batches of `calibrate update`; anchored "
                         "calibration has no online update: drop them, or use --method lgn")
    if len(given) == 2:
        raise InputError("--decay and --window are two ways to forget old batches: give one of them")
    if streamed:
        raise InputError(f"{given[0]} weighs batches of `calibrate update`, and a streamed fit's chunks would count "
                         "as batches: fit in memory (drop --chunk-size/--backend/--scheduler/--workers), then update")


def _signature_of(table, given):
    """The score's metric signature: given, or the one the table was written with; a lost one is said once."""
    if given is not None:
        return given
    sig = table.signature()
    if sig is None:
        warnings.warn(f"{table.source}: no metric signature stored for column {table.score_column!r} (written by "
                      "another tool, or filtered without keeping xleval's metadata): the calibrator cannot refuse "
                      "scores of another metric; pass --signature to record one", DataQualityWarning, stacklevel=2)
    return sig


def _render_lgn(fitted, frame, calibrated, output, sig, by_cols, fmt, notes) -> None:
    model = fitted.model
    summary = calibration_summary(frame[model.score], calibrated,
                                  frame[by_cols] if len(by_cols) > 1 else frame[by_cols[0]])
    decision = {"decision": fitted.decision.summary()} if fitted.decision is not None else {}
    render(fmt, {"model": str(output), "method": "lgn", "signature": sig, "min_count": fitted.min_count_reason,
                 "groups": model.group_table(), "verification": summary, **decision}, notes,
           title=f"LGN {model.method} by {'+'.join(by_cols)} fitted on {len(frame)} rows -> {output}")


def _render_anchored(fitted, frame, output, sig, by_cols, human, fmt, notes, said=()) -> None:
    """The fitted anchored calibrator: its parameters and groups, ``notes`` as warnings (raised while fitting)
    and ``said`` (what the command did, e.g. the bounds a named scale gave) as notes with the model's own."""
    model = fitted.model
    info = model.describe()
    payload = {"model": str(output), "method": "anchored", "signature": sig,
               "fit": {k: v for k, v in info.items() if k != "notes"}, "groups": model.group_table(),
               "notes": info["notes"]}
    if fitted.decision is not None:
        payload["decision"] = fitted.decision.summary()
    # every warning raised while fitting stays in `warnings` (a slope sign not used, an unsettled direction...);
    # the notes keep what the model says besides
    payload["notes"] = [*said, *(n for n in info["notes"] if n not in notes)]
    render(fmt, payload, notes,
           title=f"anchored by {'+'.join(by_cols)} on {human!r}: {len(frame)} rows, {info['n_labels']} labels "
                 f"-> {output}")
    if fmt != "json":
        for note in payload["notes"]:
            say("note", note, style="")


@app.command("apply")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@click.argument("input")
@click.option("-o", "--output", required=True, help="Output table (format by extension, '-' = TSV on stdout).")
@click.option("--column", help="Name of the calibrated column (default: SCORE_lgn or SCORE_anchored).")
@click.option("--overwrite", is_flag=True, help="Replace input columns named like the added ones (--column, "
              "calibration_source) instead of refusing.")
@click.option("--interval", type=PROBABILITY, help="Add lower/upper columns of a confidence interval at this level, "
              "e.g. 0.95. Anchored: for the expected human score of rows like this one (the map's uncertainty from "
              "the labels), not for a system's human mean (use `xleval leaderboard` for those); LGN: for the "
              "calibrated score under resampling of the calibration sample.")
@click.option("--on-unseen", type=click.Choice(UNSEEN_CHOICES),
              help="Groups the calibrator has not seen: pooled, raw or error (instead of the fitted fallback chain; "
                   "anchored: pooled or error).")
@click.option("--force", is_flag=True, help="Apply even if the score's metric signature differs from the calibrator's.")
@click.option("--on-drift", type=click.Choice(["error", "warn", "ignore"]), default="error",
              help="A calibrator with a drift probe (fitted on a model's scores): refuse, warn or ignore when the "
                   "probe rows' scores moved since the fit.")
@click.option("--signature", help=SIGNATURE_HELP)
@click.option("--human-range", help="Anchored: keep calibrated scores inside LOW,HIGH (e.g. 0,100 for DA) instead of "
                                    "the range declared at fit (if any).")
@col_option
@format_option
@scale_options
def apply(model_path, input, output, column, overwrite, interval, on_unseen, force, on_drift, signature, human_range,
          col, fmt, chunk_size, backend, scheduler, workers) -> None:
    """Add the calibrated column and `calibration_source`, keeping every input row and column in order.

    MODEL.json is a calibrator written by `calibrate fit`; INPUT is the table to calibrate.
    """
    model = _with_human_range(load_calibrator(model_path), parse_human_range(human_range))
    check_output_path(output, inputs=[input, model_path], stdout=True)
    if model.kind != "lgn":  # only LGN streams (xleval.scale); the anchored map needs every row of a system
        if scale_asked(chunk_size, backend, scheduler, workers):
            raise InputError("an anchored calibrator is applied in memory (system means over every row); drop "
                             "--chunk-size/--backend/--scheduler/--workers")
        if on_unseen == "raw":
            raise InputError("--on-unseen raw: an anchored calibrator gives unseen groups the common offset (pooled) "
                             "or refuses them (error); raw scores are not on the human scale")
    elif streaming(input, chunk_size, backend, scheduler, workers):
        _check_drift_streamed(model, input, chunk_size, col, on_drift)
        return apply_chunked(model.with_on_unseen(on_unseen), input, output, chunk_size, column, interval, signature,
                             force, col, fmt, scale_backend(backend, scheduler, workers), overwrite)
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=[model.score], numeric=[model.score],
                           score=model.score, by=None, normalize_languages=False)
    df = table.frame
    sig = signature if signature is not None else table.signature()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = apply_calibrator(model, df, column=column, interval=interval, signature=sig, force=force, where=input,
                               on_unseen=on_unseen, overwrite=overwrite, on_drift=on_drift)
    write_table(out, output, metadata=output_metadata(model, input, column, interval))
    if output == "-":
        return
    name = output_column(model, column)
    counts = out["calibration_source"].value_counts().to_dict()
    payload = {"output": output, "rows": len(out), "column": name, "calibration_source": counts,
               "n_nan": int(out[name].isna().sum())}
    if interval is not None:
        payload["interval"] = {"columns": f"{name}_low, {name}_high", "level": interval,
                               "for": row_interval_target(model)}
    render(fmt, payload, [str(w.message) for w in caught], title=f"calibrated {len(out)} rows -> {output}")


def _check_drift_streamed(model, input, chunk_size, col, on_drift) -> None:
    """A streamed input checks the calibrator's drift probe as the in-memory one does (one read of the rows
    before they are calibrated), so --on-drift is not ignored when the table is large or --chunk-size given."""
    probe = getattr(model, "_drift_probe", None)
    if probe is None or on_drift == "ignore":
        return
    from ..calibration._drift import check_drift_frames
    from ..scale import DEFAULT_CHUNK_SIZE, iter_batches

    batches = iter_batches(input, chunk_size or DEFAULT_CHUNK_SIZE, columns=parse_column_mapping(col),
                           required=[model.score], numeric=[model.score])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_drift_frames(probe, (batch.frame for batch in batches), model.score, on_drift=on_drift, where=input)
    for caught_warning in caught:
        say("warning", str(caught_warning.message))


def _with_human_range(model, bounds):
    """``model`` with its calibrated scores kept inside ``bounds`` (anchored calibrators only); None: as fitted."""
    if bounds is None:
        return model
    if model.kind != "anchored" or "human_range" not in model.get_params():
        raise InputError("--human-range bounds the human scale of an anchored calibrator (format 2 or later); this "
                         f"calibrator is {type(model).__name__}: drop --human-range")
    return copy.copy(model).set_params(human_range=bounds)


@app.command("show")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@format_option
def show(model_path, fmt) -> None:
    """Print a calibrator's options, signature and per-group statistics."""
    model: Any = load_calibrator(model_path)  # what it shows beyond the protocol depends on its kind
    head = {"model": str(model_path), "params": model.to_dict()["params"], "signature": model.signature_}
    if model.kind == "lgn":
        body = {"pooled": {"center": model.pooled_[0], "scale": model.pooled_[1]}}
    else:
        body = {"fit": model.describe()}
    render(fmt, {**head, **body, "groups": model.group_table()}, [], title=f"{model!r} signature={model.signature_}")


@app.command("update")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@click.argument("input")
@click.option("-o", "--output", required=True, type=click.Path(),
              help="Where to write the updated calibrator (a new file: MODEL.json is an input, never overwritten).")
@click.option("--signature", help=SIGNATURE_HELP)
@col_option
@format_option
def update(model_path, input, output, signature, col, fmt) -> None:
    """Add the rows of INPUT to an LGN calibrator (an online update) and write it as a new calibrator.

    Each group's statistics take INPUT's rows of its score column: over any number of updates the result equals
    one `calibrate fit` on all the rows, unless the fit was told to forget old batches (its decay: older batches
    weigh less; its window: only the last N batches count). Groups new in INPUT are added. The scores must be of
    the metric the calibrator was fitted on (its signature). An anchored calibrator has no online update: refit
    it.
    """
    check_outputs({"-o": output}, inputs=[input, str(model_path)])  # a calibrator is a file: '-' is refused
    check_calibrator_path(output)
    model: Any = load_calibrator(model_path)
    if model.kind != "lgn":
        raise InputError(f"{model_path}: an anchored calibrator has no online update (its map is fitted on the "
                         "labels and on every row of a system): refit it with `xleval calibrate fit` on all the rows")
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=[model.score], numeric=[model.score],
                           score=model.score, by=None, normalize_languages=False)
    sig = signature if signature is not None else table.signature()
    before = model.group_table()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = prepare_frame(table.frame, list(model.by_), input)
        try:
            in_table(input, model.partial_fit, frame, signature=sig)
        except SignatureMismatchError:  # said in this command's terms (the library's names force=, for apply)
            raise InputError(f"{input}: its scores have metric signature {sig!r} but the calibrator was fitted on "
                             f"{model.signature_!r}; update it with scores of that metric, or fit a new calibrator"
                             ) from None
    probe = getattr(model, "_drift_probe", None)  # its rows still check the metric: kept
    if probe is not None:
        save_with_probe(model, output, probe)
    else:
        model.save(output)
    groups = model.group_table()
    added = sorted(set(map(str, groups[groups.columns[0]])) - set(map(str, before[before.columns[0]])))
    notes = [str(w.message) for w in caught]
    if added:
        notes.append(f"group(s) new in {input}: {', '.join(added)}")
    render(fmt, {"model": str(output), "updated_from": str(model_path), "signature": model.signature_,
                 "rows": len(frame), "batches": model.n_batches_, "groups": groups}, notes,
           title=f"LGN {model.method} by {'+'.join(model.by_)} updated with {len(frame)} rows of {input} "
                 f"(batch {model.n_batches_}) -> {output}")


from . import calibrate_evaluate, calibrate_merge, calibrate_plan, calibrate_select  # noqa: E402,F401  (register their subcommands)
