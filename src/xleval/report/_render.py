"""Render a :class:`Report` to one self-contained HTML file or to JSON with the same content.

Numbers in the HTML go through :mod:`xleval.report._format` (column by column); the JSON keeps
full-precision numbers. The HTML has no external resource: inline CSS, figures as data URIs, and
one small inline script that sorts tables marked sortable when a column header is clicked.
"""
from __future__ import annotations

import os
from typing import Any

from .._base.emit import json_text
from ._format import format_rows, format_text, format_value, is_number
from ._model import Report, Table

__all__ = ["render_html", "render_json", "write_report", "check_format"]

FORMATS = ("html", "json")


def _cells(table: Table) -> list[list[tuple[str, bool, str | None]]]:
    """Per row, per column: (text, is it a number, the raw value used to sort). A cell is a name from the
    data or a number: every code point a reader could not see is an escape, a tab or line break too
    (``A\\x0aB`` is not ``A B``), and spaces at its ends or in a run (``A\\x20``; the page would collapse
    them; :func:`~xleval._base.terminal.visible_controls` with ``name=True``)."""
    from .._base.terminal import visible_controls

    columns = table.columns
    texts = format_rows(columns, table.rows)
    out = []
    for row, text_row in zip(table.rows, texts, strict=True):
        cells = []
        for col, text in zip(columns, text_row, strict=True):
            value: Any = row.get(col)
            numeric = is_number(value)
            cells.append((visible_controls(text, name=True), numeric, repr(float(value)) if numeric else None))
        out.append(cells)
    return out


def _visible(value):
    """Every text the template shows, before HTML escaping: control characters and bidi overrides from
    the data (which reorder what a browser shows) are written as escapes; markup the code made is kept.
    A tab or line break is an escape too (``A\\x0aB``: a page would show it as the space of ``A B``); table
    cells and column names also show spaces at their ends or in a run (:func:`_cells`, the ``name`` filter)."""
    import markupsafe

    from .._base.terminal import visible_controls

    if not isinstance(value, str) or isinstance(value, markupsafe.Markup):
        return value
    return visible_controls(value)


def _name(value: object) -> str:
    """A name from the data (a column name) as the display rule shows it, line breaks and tabs included."""
    from .._base.terminal import visible_controls

    return visible_controls(str(value), name=True)


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("xleval.report", "templates"), finalize=_visible,
                             autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["fact"] = lambda value, key="": format_text(format_value(value, key))
    env.filters["text"] = format_text
    env.filters["name"] = _name
    env.globals["cells"] = _cells
    return env


def render_html(report: Report) -> str:
    """The report as one HTML document: inline CSS and script, images as data URIs, no network."""
    from .. import __version__

    sortable = any(t.sortable for s in report.sections for t in s.tables)  # the sorter script only where needed
    return _environment().get_template("report.html.j2").render(report=report, version=__version__, sortable=sortable)


def render_json(report: Report) -> str:
    """The same content as the HTML (figures included as SVG text / base64 PNG), as JSON: ``summary``,
    ``leaderboard`` and ``warnings`` first, then the sections."""
    return json_text(report.to_dict())


def write_report(report: Report, path: str | os.PathLike, fmt: str | None = None) -> None:
    """Write atomically; ``fmt`` is ``html`` or ``json`` (default: from the extension, else html)."""
    from ..io import write_text

    fmt = check_format(fmt or ("json" if str(path).lower().endswith(".json") else "html"))
    text = render_html(report) if fmt == "html" else render_json(report)
    write_text(path, text)


def check_format(fmt: str) -> str:
    """``html`` or ``json``, else an InputError (checked before any work by the CLI)."""
    if fmt not in FORMATS:
        from ..exceptions import InputError

        raise InputError(f"report format {fmt!r}: use html or json")
    return fmt
