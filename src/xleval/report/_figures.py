"""Turn matplotlib figures into deterministic, self-describing inline images.

SVG ids come from a hash salted with ``svg.hashsalt`` (fixed here) and the ``Date`` metadata is
dropped, so the same figure gives the same bytes on every run; text is drawn as paths so the
image does not depend on the fonts of the machine that opens the report. The SVG carries a
``<title>`` (the figure's title, for screen readers and for tools), and its axis labels are
groups with ids ``xlabel-N``/``ylabel-N`` (``-fig`` for a label shared by all panels), so a test
can check in the browser that every plot is titled and labelled. PNG drops the ``Software`` tag.
"""
from __future__ import annotations

import base64
import html
import io
import re
from typing import Any

from ._model import Figure

__all__ = ["figure_from_matplotlib", "RC_DETERMINISTIC", "axis_labels"]

RC_DETERMINISTIC: dict[Any, Any] = {"svg.hashsalt": "xleval-report", "svg.fonttype": "path", "path.simplify": True}


def axis_labels(fig) -> tuple[tuple[str, str], ...]:
    """Per visible axes, its (x label, y label); a panel without its own uses the figure's shared one."""
    sup_x = fig._supxlabel.get_text() if getattr(fig, "_supxlabel", None) is not None else ""
    sup_y = fig._supylabel.get_text() if getattr(fig, "_supylabel", None) is not None else ""
    return tuple((ax.get_xlabel() or sup_x, ax.get_ylabel() or sup_y) for ax in fig.axes if ax.get_visible())


def _tag_labels(fig) -> None:
    for i, ax in enumerate(fig.axes):
        if ax.get_xlabel():
            ax.xaxis.label.set_gid(f"xlabel-{i}")
        if ax.get_ylabel():
            ax.yaxis.label.set_gid(f"ylabel-{i}")
    for name, attr in (("xlabel", "_supxlabel"), ("ylabel", "_supylabel")):
        text = getattr(fig, attr, None)
        if text is not None and text.get_text():
            text.set_gid(f"{name}-fig")


def _with_title(svg: str, title: str) -> str:
    """Insert ``<title>`` as the first child of the root ``<svg>`` element."""
    end = re.search(r"<svg\b[^>]*>", svg)
    if end is None:
        return svg
    return f"{svg[:end.end()]}\n <title>{html.escape(title)}</title>{svg[end.end():]}"


def figure_from_matplotlib(fig, title: str, caption: str = "", fmt: str = "svg", dpi: int = 96) -> Figure:
    """Render ``fig`` (a matplotlib Figure) to a :class:`Figure`; ``fmt`` is ``svg`` or ``png``."""
    import matplotlib

    from .._base.mathtext import literal_texts

    axes = axis_labels(fig)
    _tag_labels(fig)
    buf = io.BytesIO()
    with matplotlib.rc_context(RC_DETERMINISTIC), literal_texts(fig):  # names from the data are never math
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches=None)
            return Figure(title, "image/svg+xml", _with_title(buf.getvalue().decode("utf-8"), title), caption, axes)
        if fmt == "png":
            fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
            return Figure(title, "image/png", base64.b64encode(buf.getvalue()).decode("ascii"), caption, axes)
    raise ValueError(f"figure format {fmt!r}: use svg or png")
