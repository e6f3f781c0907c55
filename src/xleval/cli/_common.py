"""Helpers shared by the command modules: rendering results as a table or JSON, and common options."""
from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from .._base.jsonable import to_jsonable

__all__ = ["console", "err_console", "format_option", "col_option", "report_option", "emit_json", "print_table",
           "parse_pair", "row_progress", "to_jsonable", "write_analysis_report"]

# rich wraps at 80 columns when output is not a terminal (logs, CI, pipes): tables need more
_WIDTH = None if sys.stdout.isatty() else 160
console = Console(highlight=False, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 160)


# options several commands share; each is a decorator, applied like click.option
format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             help="text (tables) or json (for machines).")
col_option = click.option("--col", multiple=True, metavar="CANONICAL=COLUMN",
                          help="Map a canonical column to a column of the file, e.g. --col hypothesis=mt (repeatable).")
report_option = click.option("--report", "report_path", metavar="PATH",
                             help="Also write a self-contained HTML report (.html) or its JSON (.json) here.")


def emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(payload), indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def _cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.{digits}f}"
    return str(value)


def print_table(rows: Sequence[Mapping[str, Any]], title: str | None = None, digits: int = 4) -> None:
    """Render a list of dicts (same keys) as a rich table on stdout."""
    if not rows:
        return
    table = Table(title=title, show_lines=False)
    for key in rows[0]:
        table.add_column(str(key), justify="right" if isinstance(rows[0][key], (int, float)) else "left")
    for row in rows:
        table.add_row(*(_cell(to_jsonable(v) if not isinstance(v, float) else v, digits) for v in row.values()))
    console.print(table)


def write_analysis_report(path, title: str, results, notes=()) -> None:
    """Render analysis results (fairness, audit, intrinsic) into one report file, atomically."""
    if path is None:
        return
    from ..report import analysis_report, write_report

    write_report(analysis_report(title, results, warnings=list(notes)), path)
    err_console.print(f"wrote report: {path}")


@contextlib.contextmanager
def row_progress(path: str, what: str):
    """A progress bar on stderr (only on a terminal) for streamed commands; yields ``advance(rows)``.
    The total is known for Parquet (from its metadata), else the bar counts rows without a total."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    total = None
    if str(path).lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq

        total = pq.ParquetFile(path).metadata.num_rows
    columns = [TextColumn(f"{what} {path}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=err_console, transient=True, disable=not err_console.is_terminal) as bar:
        task = bar.add_task(what, total=total)
        yield lambda rows: bar.advance(task, rows)


def parse_pair(text: str, option: str) -> tuple[float, float]:
    """'80,10' -> (80.0, 10.0)."""
    from ..exceptions import InputError

    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        return float(parts[0]), float(parts[1])
    except ValueError:
        raise InputError(f"{option} {text!r}: expected two numbers MEAN,STD, e.g. {option} 80,10") from None
