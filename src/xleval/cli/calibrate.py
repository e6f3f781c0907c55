"""``xleval calibrate fit|apply|show``: fit an LGN calibrator on a table, apply it, inspect it."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from ..calibration import LGN, calibration_summary
from ..calibration import calibrate_frame, calibrated_metadata, prepare_frame, score_signature
from ..io import check_output_path, parse_column_mapping, read_table, write_table
from ._common import (PROBABILITY, col_option, emit_json, err_console, format_option, parse_columns, parse_pair,
                      print_table, row_progress, say)

_DEFAULTS = LGN().get_params()


@click.group("calibrate", no_args_is_help=True, help="Fit, apply and show LGN calibrators.")
def app() -> None:
    pass


def _scale_options(command):
    """Out-of-core / distributed execution (xleval.scale); the in-memory path stays the default for small inputs."""
    for option in reversed([
        click.option("--chunk-size", type=click.IntRange(1), help="Stream the input in batches of N rows (bounded memory); "
                     "large inputs are streamed by default."),
        click.option("--backend", default="local", help="local (this process) or dask (a cluster)."),
        click.option("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786."),
        click.option("--workers", type=click.IntRange(1, 256), help="Start a local Dask cluster of N worker processes."),
    ]):
        command = option(command)
    return command


def _scale_backend(backend: str, scheduler: str | None, workers: int | None):
    from ..scale import resolve_backend

    return resolve_backend(backend, scheduler=scheduler, workers=workers)


_SIGNATURE_HELP = "Metric signature of the score (default: from the table's metadata)."


@app.command("fit")
@click.argument("input")
@click.option("--score", required=True, help="Score column to calibrate.")
@click.option("-o", "--output", required=True, type=click.Path(), help="Where to write the calibrator JSON.")
@click.option("--by", default=_DEFAULTS["by"], help="Group by tgt_lang, lp, or COL[,COL...].")
@click.option("--method", default=_DEFAULTS["method"], help="zscore, robust or quantile.")
@click.option("--target", default="0,1", help="Shared MEAN,STD of calibrated scores, e.g. 80,10.")
@click.option("--min-count", type=click.IntRange(1, 10**9), default=_DEFAULTS["min_count"],
              help="Smaller groups are shrunk and flagged.")
@click.option("--fallback", default="default",
              help="Chain for unseen groups, e.g. tgt_lang,script,family,pooled (or raw/error last).")
@click.option("--signature", help=_SIGNATURE_HELP)
@col_option
@format_option
@_scale_options
def fit(input, score, output, by, method, target, min_count, fallback, signature, col, fmt, chunk_size, backend,
        scheduler, workers) -> None:
    """Fit per-group statistics on a calibration set and save them.

    INPUT is the calibration table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin).
    """
    from ..scale import should_stream

    check_output_path(output, inputs=[input])
    by_cols = parse_columns(by, "--by")
    model = LGN(by=by_cols[0] if len(by_cols) == 1 else by_cols, method=method, target=parse_pair(target, "--target"),
                min_count=min_count, fallback="default" if fallback == "default" else fallback.split(","), score=score)
    if should_stream(input, chunk_size, backend) or scheduler is not None or workers is not None:
        return _fit_chunked(model, input, output, chunk_size, signature, col, fmt,
                            _scale_backend(backend, scheduler, workers))
    df = read_table(input, columns=parse_column_mapping(col), required=[score], numeric=[score])
    frame = prepare_frame(df, by_cols, input)
    sig = signature if signature is not None else score_signature(input, score)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(frame, signature=sig)
        calibrated = model.transform(frame)
    model.save(output)
    summary = calibration_summary(frame[score], calibrated, frame[by_cols] if len(by_cols) > 1 else frame[by_cols[0]])
    _render(fmt, {"model": str(output), "signature": sig, "groups": model.group_table(), "verification": summary},
            [str(w.message) for w in caught], title=f"LGN {method} by {by} fitted on {len(frame)} rows -> {output}")


@app.command("apply")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@click.argument("input")
@click.option("-o", "--output", required=True, help="Output table (format by extension, '-' = TSV on stdout).")
@click.option("--column", help="Name of the calibrated column (default: SCORE_lgn).")
@click.option("--overwrite", is_flag=True, help="Replace input columns named like the added ones (--column, "
              "calibration_source) instead of refusing.")
@click.option("--interval", type=PROBABILITY, help="Add lower/upper columns of a confidence interval at this level, "
              "e.g. 0.95.")
@click.option("--on-unseen", type=click.Choice(["pooled", "raw", "error"]),
              help="Groups the calibrator has not seen: pooled, raw or error (instead of the fitted fallback chain).")
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

    model = LGN.load(model_path).with_on_unseen(on_unseen)
    if output != "-":
        check_output_path(output, inputs=[input, model_path])
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
    if output != "-":
        name = column or f"{model.score}_lgn"
        counts = out["calibration_source"].value_counts().to_dict()
        _render(fmt, {"output": output, "rows": len(out), "column": name, "calibration_source": counts,
                      "n_nan": int(out[name].isna().sum())}, [str(w.message) for w in caught],
                title=f"calibrated {len(out)} rows -> {output}")


@app.command("show")
@click.argument("model_path", metavar="MODEL.json", type=click.Path(path_type=Path))
@format_option
def show(model_path, fmt) -> None:
    """Print a calibrator's options, signature and per-group statistics."""
    model = LGN.load(model_path)
    _render(fmt, {"model": str(model_path), "params": model.to_dict()["params"], "signature": model.signature_,
                  "pooled": {"center": model.pooled_[0], "scale": model.pooled_[1]}, "groups": model.group_table()},
            [], title=f"{model!r} signature={model.signature_}")


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
            err_console.print(f"sd of group means: before {value.sd_of_means_before:.6g}, after {value.sd_of_means_after:.3g}")
        elif isinstance(value, dict):
            err_console.print(f"{key}: " + ", ".join(f"{k}={v}" for k, v in value.items()))
    for note in notes:
        say("warning", note)
