"""Render a :class:`Report` to one self-contained HTML file or to JSON with the same content."""
from __future__ import annotations

import json
import math
import os

from ._model import Report

__all__ = ["render_html", "render_json", "write_report"]


def _cell(value) -> str:
    """How a value reads in the HTML: 4 significant digits for floats, '–' for missing values."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.4e}"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value)
    return str(value)


def _visible(value):
    """Every text the template shows, before HTML escaping: control characters and bidi overrides from
    the data (which reorder what a browser shows) are written as escapes; markup the code made is kept."""
    import markupsafe

    from .._base.terminal import visible_controls

    if not isinstance(value, str) or isinstance(value, markupsafe.Markup):
        return value
    return visible_controls(value.replace("\n", " ").replace("\t", " "))


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("xleval.report", "templates"), finalize=_visible,
                             autoescape=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    env.filters["cell"] = _cell
    return env


def render_html(report: Report) -> str:
    """The report as one HTML document: inline CSS, images as data URIs, no script, no network."""
    from .. import __version__

    return _environment().get_template("report.html.j2").render(report=report, version=__version__)


def render_json(report: Report) -> str:
    """The same content as the HTML (figures included as SVG text / base64 PNG), as JSON."""
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(report: Report, path: str | os.PathLike, fmt: str | None = None) -> None:
    """Write atomically; ``fmt`` is ``html`` or ``json`` (default: from the extension, else html)."""
    from ..exceptions import InputError
    from ..io import write_text

    fmt = fmt or ("json" if str(path).lower().endswith(".json") else "html")
    if fmt not in ("html", "json"):
        raise InputError(f"report format {fmt!r}: use html or json")
    text = render_html(report) if fmt == "html" else render_json(report)
    write_text(path, text)
