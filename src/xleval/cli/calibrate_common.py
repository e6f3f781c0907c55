"""What the ``xleval calibrate`` subcommands share: the click group, the options several of them
declare, the execution backend, and the rendering of a result (text or JSON)."""
from __future__ import annotations

import math
from typing import Any

import click

from .._base.numbers import format_number, format_value
from .._base.terminal import shell_word
from ..calibration import OFFSET_ESTIMATORS
from ..exceptions import InputError
from ._common import emit_json, err_console, print_table, say, two_numbers

__all__ = ["app", "scale_options", "scale_backend", "streaming", "SIGNATURE_HELP", "DIRECTION_OPTION", "in_table",
           "render", "HUMAN_RANGE_OPTION", "parse_human_range", "past_the_scale", "scale_range",
           "bounded_note", "rerun_command", "role_words"]


@click.group("calibrate", no_args_is_help=True,
             help="Fit (LGN, anchored or auto), apply and show calibrators; select rows to annotate; evaluate.")
def app() -> None:
    pass


SIGNATURE_HELP = "Metric signature of the score (default: from the table's metadata)."
DIRECTION_OPTION = click.option("--human-higher-is-better/--human-lower-is-better", "human_up", default=None,
                                help="Direction of the human scale (MQM: lower is better). Default: found in the "
                                     "labels and reported.")


OFFSETS_OPTION = click.option(
    "--offsets", type=click.Choice(list(OFFSET_ESTIMATORS)), default=None,
    help="Anchored: how each group's offset is estimated from its labels. mixed (default): pulled toward a centre "
         "that mixes LGN's equal levels and the raw scale's common offset, as far as the labels support (3 groups "
         "or more; two keep their own); common: toward the common offset, only with 4 groups or more; common-eb: "
         "fully toward the common offset (a bet that the metric orders the groups right); own: each group's own "
         "labels. docs/calibration.md, 'Offsets from all the evidence'.")
HUMAN_RANGE_OPTION = click.option("--human-range", help="Anchored: bounds LOW,HIGH of the human scale (e.g. 0,100 for "
                                  "DA): calibrated scores are kept inside them. Default: none declared.")


def parse_human_range(text: str | None) -> tuple[float, float] | None:
    """'0,100' -> (0.0, 100.0); None stays None."""
    if text is None:
        return None
    low, high = two_numbers(text, "--human-range", "LOW,HIGH", "0,100")
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise InputError(f"--human-range {text!r}: LOW and HIGH must be finite with LOW < HIGH, e.g. "
                         "--human-range 0,100")
    return low, high


def scale_options(command):
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


def scale_backend(backend: str, scheduler: str | None, workers: int | None):
    from ..scale import resolve_backend

    return resolve_backend(backend, scheduler=scheduler, workers=workers)


def scale_asked(chunk_size, backend, scheduler, workers) -> bool:
    """Any of the scale options given (an in-memory-only calibrator refuses them)."""
    return chunk_size is not None or backend != "local" or scheduler is not None or workers is not None


def streaming(input, chunk_size, backend, scheduler, workers) -> bool:
    """Whether the input is streamed in batches (given, or large) rather than read whole."""
    from ..scale import should_stream

    return should_stream(input, chunk_size, backend) or scheduler is not None or workers is not None


def in_table(input, function, *args, **kwargs):
    """``function(*args, **kwargs)``; an InputError about the data names the table (the library cannot know it)."""
    try:
        return function(*args, **kwargs)
    except InputError as exc:
        if str(exc).startswith(f"{input}: "):
            raise
        raise exc.prefixed(str(input)) from None


def render(fmt: str, payload: dict, notes: list[str], title: str) -> None:
    if fmt == "json":
        emit_json({**payload, "warnings": notes})
        return
    err_console.print(title)
    for key, value in payload.items():
        if hasattr(value, "to_dict") and hasattr(value, "columns"):
            print_table(value.to_dict(orient="records"), title=key)
        elif key == "verification":
            print_table(value.groups.to_dict(orient="records"), title="per-group mean/std before and after")
            before, after = value.sd_of_means_before, value.sd_of_means_after
            scale = max(abs(before), abs(after)) if math.isfinite(before) and math.isfinite(after) else None
            err_console.print(f"sd of group means: before {format_number(before, scale=scale)}, "
                              f"after {format_number(after, scale=scale)}")
        elif isinstance(value, dict):
            err_console.print(f"{key}: " + ", ".join(f"{k}={format_value(v, k)}" for k, v in value.items()))
        elif key == "min_count":
            err_console.print(f"min_count {value}")
    for note in notes:
        say("warning", note)


def merge_command(labels: str, table: str, label_column: str, into: str | None, col: tuple[str, ...] = ()) -> str:
    """The ``calibrate merge`` that puts filled-in ``labels`` back into ``table`` (for ``select`` and ``plan``):
    into the column the labels there are (``into``: ``--skip-labelled``, ``--human``; labels merged into a column
    of another name are not the labels the next select, plan or fit counts), reading the table with the ``--col``
    mapping it was chosen from (the rows carry the canonical names: without it the merge falls back to row_id and
    cannot check the hypothesis)."""
    named = f"--label-column {shell_word(label_column)} " if label_column != "human" else ""
    target = f"--into {shell_word(into)} " if into and into != label_column else ""
    cols = "".join(f"--col {shell_word(c)} " for c in col)
    return f"xleval calibrate merge {shell_word(labels)} {shell_word(table)} {named}{target}{cols}-o labelled.parquet"


def rerun_command(commands: Any, command: str, score: str, by: str | None, human: str | None, system: str,
                  method: str | None, extra: tuple[str, ...] = (), *, human_scale: str | None = None) -> Any:
    """``rerun(range)``: the ``leaderboard``/``report`` command line with ``--human-range RANGE`` added (the
    table and its ``--col`` options from ``commands``, a :class:`CommandContext`; the options that decide the
    calibrated scores, ``--human-scale`` among them since it sets MQM's direction, and ``extra``, e.g. the
    report's -o; others are left to the user)."""
    from ._advice import _TABLE

    def rerun(text: str) -> str:
        words = [*command.split(), _TABLE, *role_words(score, by, human, system),
                 *(["--method", method] if method not in (None, "auto") else []),
                 *(["--human-scale", human_scale] if human_scale else []), "--human-range", text, *extra]
        return commands.command(*words)
    return rerun


def role_words(score: str, by: str | None, human: str | None, system: str) -> list[str]:
    """The options that name the table's roles in a command xleval prints for the user to run: ``--score``,
    and ``--by``, ``--human``, ``--system`` where given (a default is left out)."""
    return ["--score", score, *(["--by", by] if by else []), *(["--human", human] if human else []),
            *(["--system", system] if system != "system" else [])]


def scale_range(df: Any, human: str | None, human_scale: str | None, human_range: str | None
                ) -> tuple[str | None, str | None, str | None]:
    """The ``--human-range`` that ``leaderboard``, ``report`` and ``calibrate fit`` apply, where it came from,
    and a note: the one given (source None); else the bounds of the human scale the table names (``--human-scale
    esa|da|sqm``, or the ``HUMAN_scale`` column `xleval ingest` writes), whose source names it; else (None, None,
    None). Labels outside the named scale's bounds are not bounded by it: the note says so (the name may be
    wrong). The library's rule and words (:func:`xleval.calibration._scales.bounded_by_name`), said as typed."""
    if human_range is not None or human is None or human not in df.columns:
        return human_range, None, None
    from ..calibration._scales import bounded_by_name
    from ._errors import cli_words

    ctx = click.get_current_context(silent=True)
    bounds, note, source = bounded_by_name(df, human, human_scale)
    if bounds is None:
        return None, None, (cli_words(note, ctx.command if ctx else None) if note else None)
    return f"{bounds[0]:g},{bounds[1]:g}", cli_words(source or "", ctx.command if ctx else None), None


def bounded_note(human_range: str | None, source: str | None, method: str) -> str | None:
    """The note that says calibrated scores were bounded by a named scale's range without a flag."""
    if source is None or human_range is None or method != "anchored":
        return None
    low, high = human_range.split(",")
    return (f"calibrated system scores are kept inside {low} to {high}, {source}; give --human-range LOW,HIGH "
            "to bound them otherwise")


def scale_notes(bounds: tuple, rows: Any, df: Any, human: str | None, method: str | None,
                rerun: Any = None, *, human_scale: str | None = None) -> tuple[str, ...]:
    """Every note of ``leaderboard`` and ``report`` on the human scale's bounds: ``bounds`` as
    :func:`scale_range` gave them (the range applied, where it came from; labels outside a named scale are
    said by the library's call, given no range then), then the bounding (:func:`bounded_note`) and the values
    past the scale (:func:`past_the_scale`) of the calibrated ``rows`` (``method``: the calibration used;
    ``human_scale``: ``--human-scale``, else the table's ``HUMAN_scale`` column names the scale)."""
    from ..calibration._scales import declared_scale

    human_range, source, _ = bounds  # labels outside a named scale: the library's own note says so
    # only anchored scores are on the human scale (LGN's are z-scores, raw the metric's own)
    past = past_the_scale(rows, df, human, human_range, source=source, rerun=rerun,
                          scale_name=declared_scale(df, human, human_scale)) if method == "anchored" else None
    return tuple(n for n in (bounded_note(human_range, source, method or ""), past) if n)


def past_the_scale(rows: Any, df: Any, human: str | None, human_range: str | None, *, source: str | None = None,
                   rerun: Any = None, scale_name: str | None = None) -> str | None:
    """The note of ``leaderboard`` and ``report`` when calibrated values or their interval bounds (``rows``:
    the board's rows, records or a frame) lie outside the human scale (:func:`xleval.calibration._scales.
    past_the_scale`, the library's one check): the ``--human-range`` given (``source``: where a range not given as
    a flag came from, :func:`scale_range`), else the scale the labels are on. ``rerun(flag)``: the command line
    that adds the flag, shown with the advice. None when nothing is past the scale, or the scale cannot be told."""
    import pandas as pd

    from ..calibration._scales import past_the_scale as check

    if human is None or human not in df.columns:
        return None
    labels = pd.to_numeric(df[human], errors="coerce").to_numpy(dtype=float)
    past = check(rows, labels, parse_human_range(human_range), scale_name=scale_name)
    if past is None:
        return None
    fix = f"; give --human-range {past.bound} to keep calibrated scores inside it"
    if rerun is not None and past.bound is not None:
        fix += f": {rerun(past.bound)}"
    return past.sentence(source or f"--human-range {human_range}", fix)
