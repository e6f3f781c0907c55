"""Helpers shared by the command modules: rendering results as a table or JSON, and common options."""
from __future__ import annotations

import contextlib
import logging
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from .._base.emit import json_text, plain_text, tsv_text
from .._base.jsonable import to_jsonable
from .._base.terminal import make_console, styled, visible_controls
from ..exceptions import without_category

__all__ = ["console", "err_console", "format_option", "col_option", "report_option", "emit_json", "emit_tsv",
           "emit_text", "print_table", "parse_pair", "parse_columns", "check_outputs", "row_progress", "progress_bar",
           "working", "to_jsonable", "write_analysis_report", "say", "calibration_choice_options", "check_named_column",
           "read_ranked_table", "by_role", "FiniteFloat", "PROBABILITY", "warnings_said", "by_option", "grouping",
           "header_columns", "keep_reference_copies_option", "reference_copy_step",
           "logged_warnings_said", "format_of_output",
           "ANNOTATED_TEXTS"]

#: the texts of rows to annotate, which `calibrate select`/`plan` write to TSV in CSV quotes when they hold a tab or
#: a line break (names are refused: a name is one field of one line everywhere)
ANNOTATED_TEXTS = ("source", "hypothesis", "reference")



def _width(stream: Any) -> int | None:
    """The width of a console: ``COLUMNS`` when set (a terminal's own, or one given for a pipe), else the
    terminal's (None: rich asks it), else 160 for a pipe, a log or CI (rich's 80 is too narrow for tables)."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and 20 <= int(columns) <= 10_000:
        return int(columns)
    return None if _isatty(stream) else 160


# Names from the data reach these consoles: they show every string as it is (no markup, no emoji
# codes, control characters as escapes); styles come from Text objects (say(), styled()).
def _isatty(stream: Any) -> bool:
    """Whether ``stream`` is a terminal; False for a closed or missing stream (``xleval ... >&-``), which must
    not crash the command before it starts: writing to it is refused later with one line."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


console = make_console(width=_width(sys.stdout))
err_console = make_console(stderr=True, width=_width(sys.stderr))


def refresh_widths() -> None:
    """Each command run reads the width again (``COLUMNS``, the terminal): the consoles are made once per
    process, and one process may run several commands (``xleval.cli.main`` called in turn)."""
    console._width = _width(sys.stdout)  # rich's own setter takes an int; None asks the terminal again
    err_console._width = _width(sys.stderr)


def say(kind: str, text: object, style: str = "yellow") -> None:
    """One 'warning: ...' / 'note: ...' line on stderr; ``text`` is shown as it is, except that the
    library's Python spelling of an argument (``human_higher_is_better=True``) is written as the running
    command's flag (:func:`xleval.cli._errors.cli_words`): notes and warnings speak the user's language."""
    from ._errors import cli_words

    if isinstance(text, str):
        ctx = click.get_current_context(silent=True)
        text = cli_words(text, ctx.command if ctx is not None else None)
    err_console.print(styled(f"{kind}: ", style, text))


class FiniteFloat(click.ParamType):
    """A finite number, optionally within bounds (``nan``, ``inf`` and out-of-range values are usage errors)."""

    name = "number"

    def __init__(self, low: float | None = None, high: float | None = None, *, low_open: bool = False,
                 high_open: bool = False):
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        too_low = self.low is not None and (number <= self.low if self.low_open else number < self.low)
        too_high = self.high is not None and (number >= self.high if self.high_open else number > self.high)
        if too_low or too_high:
            hint = ""
            if (self.low, self.high) == (0, 1) and 1 < number < 100:  # a percentage where a fraction is meant
                hint = f": give a fraction, e.g. {number / 100:g} for {number:g}%"
            self.fail(f"{value!r} is not in {self._range()}{hint}", param, ctx)
        return number

    def _range(self) -> str:
        low = "(" if self.low_open else "["
        high = ")" if self.high_open else "]"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        return f"{low}{lo}, {hi}{high}"


#: a probability strictly between 0 and 1 (significance level, confidence level, power)
PROBABILITY = FiniteFloat(0, 1, low_open=True, high_open=True)


# options several commands share; each is a decorator, applied like click.option
format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             help="text (tables) or json (for machines).")
_col_flag = click.option("--col", multiple=True, metavar="CANONICAL=COLUMN",
                         help="Map a canonical column to a column of the file, e.g. --col hypothesis=mt (repeatable).")


def _use_quoting(ctx: click.Context, param: click.Parameter, value: str) -> None:
    """Every TSV this command reads is read with ``value`` (the library's ``quoting=``), and the rule
    an ``auto`` reading chose is printed as a note, until the command ends."""
    from ..io._quoting import logger, set_default_quoting

    restore = set_default_quoting(value)
    handler = _NoteLine(ctx.command)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def done() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)
        restore()
    ctx.call_on_close(done)


class _NoteLine(logging.Handler):
    """A log note of the library as one line on stderr, 'xleval: note: ...', in the command's words; once,
    though a streamed reader decides on the file for its header and again for its rows."""

    def __init__(self, command: click.Command | None, level: int = logging.INFO):
        super().__init__(level)
        self.command = command
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        from ._errors import cli_words

        text = cli_words(record.getMessage(), self.command)
        if text not in self.said:
            self.said.add(text)
            self.write(text)

    def write(self, text: str) -> None:
        sys.stderr.write(f"xleval: note: {visible_controls(text)}\n")  # it may quote a file name


class _WarningLine(_NoteLine):
    """A warning the library logs, as :func:`say` writes one ('warning: ...')."""

    def write(self, text: str) -> None:
        say("warning", without_category(text))  # a report logs "Category: message"; the category is code


_quoting_flag = click.option(
    "--quoting", type=click.Choice(["auto", "csv", "none"]), default="auto", show_default=True, expose_value=False,
    callback=_use_quoting,
    help="How double quotes in a TSV are read: csv = CSV quoting is taken off (pandas' to_csv, csv.writer); none = "
         "quotes are text (WMT files); auto = decided from the whole file, said when the readings differ.")


def col_option(command):
    """``--col`` (column mapping) and ``--quoting`` (how a TSV's quotes are read): the options of every
    command that reads a table."""
    return _quoting_flag(_col_flag(command))

def calibration_choice_options(command):
    """--system, --method, --model, --metric and the anchored map's --human-higher-is-better and --human-range
    of the commands that rank systems across groups
    (``report``, ``leaderboard``): one declaration, so their meaning cannot drift apart."""
    from pathlib import Path

    for option in reversed([
        click.option("--system", default="system",
                     help="System column (without one, each group is one system)."),
        click.option("--method", type=click.Choice(["auto", "anchored", "lgn", "none"]), default="auto",
                     help="Calibration fitted on the table's system scores; auto = the recommended one (anchored is "
                          "considered only with --human)."),
        click.option("--model", type=click.Path(path_type=Path), metavar="CALIBRATOR.json",
                     help="A calibrator from `calibrate fit` (LGN or anchored), applied instead of --method."),
        click.option("--metric", help="Registry name of the metric that made --score, when the column is named "
                                      "otherwise."),
        click.option("--human-higher-is-better/--human-lower-is-better", "human_up", default=None,
                     help="Anchored: direction of the human scale (MQM: lower is better). Default: found in the "
                          "labels; where they do not settle it, offsets only, with a warning."),
        click.option("--human-range", help="Anchored: bounds LOW,HIGH of the human scale (e.g. 0,100 for raw DA): "
                                           "calibrated scores stay inside."),
    ]):
        command = option(command)
    return command


keep_reference_copies_option = click.option(
    "--keep-reference-copies", is_flag=True,
    help="Keep systems whose outputs equal the reference on most rows (copies of the reference: at least 80% "
         "of their rows, docs/output-checks.md). By default they are named on stderr and left out.")


def reference_copy_step(df, by: Sequence[str], system: str | None, where: Any, keep: bool = False, *,
                        drop: bool = True, quiet: bool = False):
    """The one step every command that fits, selects, ranks or meta-evaluates takes after reading its
    table (``score`` too, naming only): the systems that copy the reference
    (:func:`xleval.output_checks.reference_copies`, per ``by`` group) are named in a note on stderr and,
    unless ``keep`` (``--keep-reference-copies``) or ``drop=False``, left out. Returns the table and the
    note (None when there is no copy); ``quiet``: the command says it with its own notes (JSON, HTML)."""
    from ..io import with_pair_column
    from ..output_checks import drop_reference_copies

    df = with_pair_column(df, by, str(where))  # lp from the two codes: derived once, a bad code named in the file
    kept, found = drop_reference_copies(df, by=list(by), system=system or "system", keep=keep or not drop)
    if not found.copies:
        return df, None
    done = "named" if not drop else "kept" if keep else "left out"
    note = f"{where}: {found.sentence(done, keep='--keep-reference-copies')}"
    if not quiet:
        say("note", note, "cyan")
    return kept, note


report_option = click.option("--report", "report_path", metavar="PATH",
                             help="Also write a self-contained HTML report (.html) or its JSON (.json) here (a file: "
                                  "stdout carries the results).")


def emit_json(payload: Any, output: Any = None) -> None:
    """``payload`` as JSON (:func:`xleval._base.emit.json_text`) on stdout, or into the file ``output``; its
    sentences name the command's options, as its text output does (:func:`in_cli_words`)."""
    _write(json_text(in_cli_words(payload)), output)


def emit_tsv(frame: Any, output: Any = None, *, float_format: Any = None) -> None:
    """A table as TSV: on stdout (``output`` None or ``-``) for reading, names shown with escapes
    (:func:`xleval._base.emit.tsv_text`); into the file ``output`` as data, through the one TSV writer
    (:func:`xleval.io._write.format_rows`: every name exactly, read back the same by xleval and pandas;
    a tab or line break in a name is refused, naming --format json, which holds any name)."""
    from ..io._write import _terminal_device, format_rows, is_stdout

    if output is None or is_stdout(output):
        _write(tsv_text(frame, float_format=float_format), None)
        return
    if _terminal_device(output):  # -o /dev/tty: read by a person, as standard output on a terminal
        _write(tsv_text(frame, float_format=float_format), output)
        return
    _write(format_rows(frame, "tsv", where=f"{output}: ", instead="use --format json, which holds any name"), output)


def emit_text(text: str, output: Any = None) -> None:
    """Plain text with its control characters escaped (:func:`xleval._base.emit.plain_text`), on stdout
    or into the file ``output``."""
    _write(plain_text(text), output)


def _write(text: str, output: Any) -> None:
    from ..io._write import check_stdout, is_stdout

    if output is None or is_stdout(output):
        check_stdout()  # never into a file the command read (`>> in.tsv`)
        sys.stdout.write(text)
        return
    from ..io import write_text

    write_text(output, text)  # atomically


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    return str(value)


def print_table(rows: Sequence[Mapping[str, Any]], title: str | None = None, digits: int | None = None) -> None:
    """Render a list of dicts (same keys) as a rich table on stdout. Numbers are formatted as the report
    formats them (``report._format``: counts as integers, one precision per column, p-values by name,
    rounding noise as 0); ``digits`` fixes the decimals of every float instead (sacrebleu's corpus table)."""
    if not rows:
        return
    from rich.table import Table

    from .._base.numbers import format_column

    table = Table(title=title, show_lines=False)
    keys = list(rows[0])
    for key in keys:
        table.add_column(str(key), justify="right" if isinstance(rows[0][key], (int, float)) else "left")
    if digits is not None:
        cells = [[_cell(to_jsonable(v) if not isinstance(v, float) else v, digits) for v in row.values()]
                 for row in rows]
    else:
        columns = [format_column([_plain(row[key]) for row in rows], str(key)) for key in keys]
        cells = [list(values) for values in zip(*columns, strict=True)]
    shown = [[visible_controls(c, name=True) if isinstance(c, str) else str(c) for c in row_cells]
             for row_cells in cells]  # a cell is a name on its own: spaces at its ends or in a run shown as \x20
    numeric = [isinstance(rows[0][key], (int, float)) for key in keys]
    headers = [visible_controls(str(key)) for key in keys]
    blocks = fit_columns(headers, shown, numeric, console.width)
    for n, block in enumerate(blocks):
        table = Table(title=title if n == 0 else f"{title or 'table'} (continued, {n + 1} of {len(blocks)})",
                      show_lines=False)
        for i, width in block:
            table.add_column(headers[i], justify="right" if numeric[i] else "left", min_width=width,
                             overflow="fold", no_wrap=numeric[i])
        for row_cells in shown:
            table.add_row(*(row_cells[i] for i, _ in block))
        console.print(table)


def fit_columns(headers: Sequence[str], cells: Sequence[Sequence[str]], numeric: Sequence[bool],
                width: int) -> list[list[tuple[int, int]]]:
    """How a table is shown in ``width`` characters without cutting a cell to '…': one or more blocks of
    ``(column, width)``. The key columns (the leading text columns: group, system, method) start every
    block at their full width; the other columns follow in order, as many as fit, the rest in further
    blocks (as R prints a wide data frame). A text column wider than a block's room wraps (folded), and
    headers are never shortened."""
    from rich.cells import cell_len

    natural = [max([cell_len(h), *(cell_len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    n_keys = next((i for i, is_number in enumerate(numeric) if is_number), 1)  # all text: the first column
    n_keys = max(1, min(n_keys, len(headers) - 1)) if len(headers) > 1 else len(headers)
    if sum(w + 3 for w in natural) + 1 <= width:
        return [list(enumerate(natural))]
    keys = [(i, natural[i]) for i in range(n_keys)]
    room = width - 1 - sum(w + 3 for _, w in keys)
    if room < 12:  # the keys alone fill the screen: they wrap (folded), never cut
        keys = [(i, max(cell_len(headers[i]), (width - 1) // (2 * n_keys) - 3)) for i in range(n_keys)]
        room = width - 1 - sum(w + 3 for _, w in keys)
    blocks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    used = 0
    for i in range(n_keys, len(headers)):
        w = natural[i] if numeric[i] else min(natural[i], max(room - 3, cell_len(headers[i])))
        if current and used + w + 3 > room:
            blocks.append(current)
            current, used = [], 0
        current.append((i, w))
        used += w + 3
    blocks.append(current)
    return [keys + block for block in blocks]


def _plain(value: Any) -> Any:
    """A cell as the formatter takes it: numpy numbers as Python numbers, other values JSON-able."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    converted = to_jsonable(value)
    return converted if isinstance(converted, (bool, int, float)) else str(converted)


@contextlib.contextmanager
def warnings_said():
    """The library's warnings inside the block, each distinct one said once as a 'warning:' line on stderr
    when the block ends (a warning repeated per metric or per group is one line)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for text in dict.fromkeys(str(w.message) for w in caught):
        say("warning", text)


def write_analysis_report(path, title: str, results, notes=()) -> None:
    """Render analysis results (fairness, audit, intrinsic) into one report file, atomically."""
    if path is None:
        return
    from ..report import analysis_report, write_report

    write_report(analysis_report(title, results, warnings=list(notes)), path)
    err_console.print(f"wrote report: {path}")


# a bar appears only for work that lasts longer than this (short commands stay quiet)
PROGRESS_DELAY = 2.0


@contextlib.contextmanager
def progress_bar(what: str, total: int | None = None, *, delay: float | None = None):
    """A progress bar on stderr for any long command; yields ``advance(units, *, total=None)``,
    the library's progress callback (:mod:`xleval._base.progress`: a ``total`` given there sets the
    bar's).

    Shown only on a terminal, only once the work has lasted ``delay`` seconds (default
    :data:`PROGRESS_DELAY`), and removed when it ends (``transient``), so pipes, logs and short runs
    see nothing. ``total=None`` counts without a total until the library declares one.
    """
    if not err_console.is_terminal:
        yield lambda units=1, *, total=None, stage=None: None
        return
    delay = PROGRESS_DELAY if delay is None else delay
    import time

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    # elapsed, then the time left at the pace so far (shown once there is a total)
    columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn()]
    bar = Progress(*columns, console=err_console, transient=True)
    # the description is data (a file name): shown as it is, never read as markup or a format string
    task = bar.add_task(visible_controls(what), total=total)
    start, shown = time.monotonic(), False

    def advance(units: int = 1, *, total: int | None = None, stage: str | None = None) -> None:
        nonlocal shown
        if total is not None:
            bar.update(task, total=total)
        if stage is not None:  # the part of the work that runs now (the metric being scored), data: escaped
            bar.update(task, description=visible_controls(f"{what}: {stage}"))
        bar.advance(task, units)
        if not shown and time.monotonic() - start >= delay:
            bar.start()
            shown = True

    try:
        yield advance
    finally:
        if shown:
            bar.stop()


@contextlib.contextmanager
def working(what: str, *, delay: float | None = None):
    """For a long library call that reports no steps (it takes no ``progress`` callback): on a terminal, once
    the work has lasted ``delay`` seconds (default :data:`PROGRESS_DELAY`), a spinner on stderr with what is
    being done and the time elapsed, removed when the work ends. Pipes, logs and short runs see nothing."""
    if not err_console.is_terminal:
        yield
        return
    import threading

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    delay = PROGRESS_DELAY if delay is None else delay
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                   console=err_console, transient=True)
    bar.add_task(visible_controls(what), total=None)
    lock, state = threading.Lock(), {"shown": False, "over": False}

    def show() -> None:
        with lock:
            if not state["over"]:
                bar.start()
                state["shown"] = True

    timer = threading.Timer(delay, show)
    timer.daemon = True
    if delay <= 0:
        show()
    else:
        timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["over"] = True
            if state["shown"]:
                bar.stop()


@contextlib.contextmanager
def row_progress(path: str, what: str):
    """:func:`progress_bar` for streamed commands over a table file; yields ``advance(rows)``.
    The total is known for Parquet (from its metadata), else the bar counts rows without a total."""
    from ..scale import count_rows

    total = count_rows(path)  # None for text inputs, and for a file that cannot be read (the reader says why)
    with progress_bar(f"{what} {path}", total) as advance:
        yield advance


def two_numbers(text: str, option: str, names: str, example: str) -> tuple[float, float]:
    """'80,10' -> (80.0, 10.0), or one line saying what ``option`` expects (``names``, e.g. MEAN,STD)."""
    from ..exceptions import InputError

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise InputError(f"{option} {text!r}: expected two numbers {names}, e.g. {option} {example}") from None


def parse_pair(text: str, option: str) -> tuple[float, float]:
    """'80,10' -> (80.0, 10.0)."""
    from ..exceptions import InputError

    mean, std = two_numbers(text, option, "MEAN,STD", "80,10")
    if not (math.isfinite(mean) and math.isfinite(std) and std > 0 and abs(mean) + 10 * std < 1e300):
        raise InputError(f"{option} {text!r}: MEAN must be finite and STD positive (and both far below 1e300), "
                         f"e.g. {option} 80,10")
    return mean, std


def check_outputs(outputs: Mapping[str, Any], inputs: Sequence[Any] = (), *, stdout: Sequence[str] = ()) -> None:
    """Before any work: each output path (option -> path, None for absent) can be written, is none of
    ``inputs``, and no two options name the same file (the second would replace the first).

    ``-`` is standard output (the one rule, :func:`xleval.io._write.check_stdout_output`): accepted for the
    options in ``stdout`` (the command then writes nothing else there), refused with one line for the others,
    and refused where the shell sends standard output into one of ``inputs`` (``>> in.tsv``)."""
    import os

    from ..exceptions import OutputError
    from ..io import check_output_path
    from ..io._write import check_stdout_output, is_stdout

    given = {option: path for option, path in outputs.items() if path is not None}
    read = [p for p in inputs if p is not None]
    seen: dict[tuple, str] = {}
    for option, path in given.items():
        if is_stdout(path):
            if option not in stdout:
                raise OutputError(f"{option} -: this output is written to a file, and '-' (standard output) carries "
                                  "the command's own results; give a file name")
            check_stdout_output(inputs=read)
            continue
        check_output_path(path, inputs=read)
        key = _file_key(path) or ("path", os.path.abspath(path))
        if key in seen:
            raise OutputError(f"{path}: {seen[key]} and {option} name the same file; give each output its own path")
        seen[key] = option


def _file_key(path: Any) -> tuple | None:
    import os

    try:
        st = os.stat(path)
    except OSError:
        return None
    return ("file", st.st_dev, st.st_ino)


def check_named_column(df, option: str, name: str | None, input) -> None:
    """A column named on the command line must exist (its default may be absent: the command then does
    without it): the one column check, with the way out a default does not need."""
    from ..exceptions import InputError
    from ..table import require_columns

    param = option.lstrip("-").replace("-", "_")
    source = click.get_current_context().get_parameter_source(param)
    if name and source == click.core.ParameterSource.COMMANDLINE:
        try:
            require_columns(df, [name], what=str(input), argument=param)
        except InputError as exc:
            raise InputError(f"{exc}; leave {option} out to do without one",
                             argument=exc.argument, value=exc.value) from None


def read_ranked_table(path, *, score: str, human: str | None, system: str, by: str | None, model, col):
    """What ``report`` and ``leaderboard`` start from: the table read once
    (:meth:`xleval.table.EvalTable.read`: score and human numeric, roles set, the signatures it was
    written with travelling in it; a --system given on the command line must exist), the saved
    calibrator if any, and the context that completes the commands they print."""
    import numpy as np

    from ..calibration import load_calibrator
    from ..exceptions import InputError
    from ..io import parse_column_mapping
    from ..table import EvalTable
    from ._advice import CommandContext

    if human is not None and human == score:  # before the table is read: agreement with itself is no evidence
        raise InputError(f"--score and --human name the same column ({score!r}); the human scores are what the "
                         "score is checked and calibrated against: give the human column with --human, or leave "
                         "--human out")
    numeric = [score] + ([human] if human else [])
    mapping = parse_column_mapping(col)
    # language codes normalised, as the leaderboard and the report rank them (every step sees their groups)
    table = EvalTable.read(path, columns=mapping, required=numeric, numeric=numeric, score=score, human=human,
                           by=by_role(by))
    check_named_column(table.frame, "--system", system, path)
    if system in table.frame.columns:
        table = table.with_roles(system=system)
    for flag, column in (("--score", score), ("--human", human)):  # before any work: nothing to rank or compare
        if column is not None and not np.isfinite(table.frame[column].to_numpy(dtype=float)).any():
            raise InputError(f"{path}: {flag} {column!r} has no value on any of the {len(table.frame)} rows; "
                             f"name a column with scores{', or leave --human out' if flag == '--human' else ''}")
    calibrator = load_calibrator(model) if model is not None else None
    return table, calibrator, CommandContext.from_cli(path, col)


def by_option(help_text: str):
    """``--by``, whose default is one rule everywhere (:func:`xleval.table.default_by`): ``lp`` when the
    table has it or ``src_lang`` and ``tgt_lang`` to derive it, else ``tgt_lang`` (so to-English data, all
    ``tgt_lang`` en, keeps its pairs apart)."""
    from ..table import DEFAULT_BY

    return click.option("--by", default=None, show_default=False, help=f"{help_text} Default: {DEFAULT_BY}.")


def by_role(by: str | None) -> Any:
    """``--by`` as a table's grouping role: the columns given, else the default rule (:data:`DEFAULT_BY`,
    resolved by the table on the columns it reads)."""
    from ..table import DEFAULT_BY

    return DEFAULT_BY if by is None else parse_columns(by, "--by")


def grouping(by: str | None, columns: Any) -> list[str]:
    """The ``--by`` columns: as given, else the default rule applied to the table's ``columns`` (its
    header, or the columns of the frame read)."""
    from ..table import default_by

    return parse_columns(default_by(columns) if by is None else by, "--by")


def header_columns(path: Any, col: Sequence[str] = ()) -> list[str]:
    """The canonical column names of the table at ``path`` from its header only (Parquet schema, the
    first line of a TSV/CSV, the first JSONL record; gzip included), after the ``--col`` mapping: what a
    default decides on before the rows are read."""
    from ..io import parse_column_mapping
    from ..scale import table_columns

    return table_columns(path, parse_column_mapping(col))


def parse_columns(text: str, option: str) -> list[str]:
    """'lp, system' -> ['lp', 'system']; an empty list is refused."""
    from ..exceptions import InputError

    columns = [c.strip() for c in text.split(",") if c.strip()]
    if not columns:
        raise InputError(f"{option} {text!r}: give at least one column name, e.g. {option} tgt_lang")
    if len(set(columns)) < len(columns):
        raise InputError(f"{option} {text!r}: a column is named twice")
    return columns


#: the format an output file's name says, for commands whose -o is the rendered result
_FORMAT_OF_SUFFIX = {".json": "json", ".tsv": "tsv", ".html": "html", ".htm": "html", ".tex": "latex", ".txt": "text"}


def format_of_output(fmt: str, output: Any, choices: Sequence[str] = (), param: str = "fmt") -> str:
    """The format to write: ``fmt`` when ``--format`` was given (or -o is stdout, or its name says no format the
    command writes: ``choices``, else those of the option), else the one -o's extension names (``-o board.json``
    writes JSON, not a text table under a .json name), as ``--report PATH`` does."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or output is None or str(output) == "-":
        return fmt
    if ctx.get_parameter_source(param) is not click.core.ParameterSource.DEFAULT:
        return fmt
    said = _FORMAT_OF_SUFFIX.get(Path(str(output)).suffix.lower())
    choices = choices or next((p.type.choices for p in ctx.command.params if p.name == param
                               and isinstance(p.type, click.Choice)), ())
    return said if said is not None and said in choices else fmt


@contextlib.contextmanager
def logged_warnings_said(name: str) -> Iterator[None]:
    """While the block runs, each warning the library logs on logger ``name`` is one 'warning: ...' line on stderr
    in the command's words, once; without it Python's last-resort handler prints it bare, in the library's
    words."""
    ctx = click.get_current_context(silent=True)
    logger, handler = logging.getLogger(name), _WarningLine(ctx.command if ctx else None, logging.WARNING)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


#: the fields of a result (and of its JSON) that hold sentences, said in the command's words; names from the data
#: never are
SENTENCE_FIELDS = frozenset({"reason", "reasons", "note", "notes", "warning", "warnings", "advice", "verdict",
                             "summary", "paragraph", "paragraphs", "lead", "finding", "message", "action",
                             "facts"})  # a report section's (label, sentence) pairs: "... (model=)"


def in_cli_words(result: Any) -> Any:
    """``result`` (a frozen result: a leaderboard, a report, a diagnosis; or a result's JSON) with every sentence
    (a field of :data:`SENTENCE_FIELDS`, at any depth: notes, a recommendation's reasons, a decision's steps) naming the
    library's arguments as the current command's options are typed (``system_scores='judged'`` ->
    ``--system-scores judged``). Text, TSV notes, JSON and HTML are rendered from the one result, so they say
    it alike."""
    import dataclasses

    from ._errors import cli_words

    ctx = click.get_current_context(silent=True)
    command = ctx.command if ctx else None

    def said(value: Any, sentence: bool) -> Any:
        if isinstance(value, str):
            words = cli_words(value, command) if sentence else value
            return value if words == value else words
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: new for f in dataclasses.fields(value) if f.init
                       for old in [getattr(value, f.name)]
                       for new in [said(old, f.name in SENTENCE_FIELDS)] if new is not old}
            return dataclasses.replace(value, **changes) if changes else value
        if isinstance(value, (tuple, list)):
            items = [said(v, sentence) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)  # a NamedTuple too
        if isinstance(value, dict):
            out = {k: said(v, k in SENTENCE_FIELDS) for k, v in value.items()}  # a mapping's keys decide
            return value if all(out[k] is v for k, v in value.items()) else out
        return value

    return said(result, False)
