"""Turn matplotlib figures into deterministic inline images.

SVG ids come from a hash salted with ``svg.hashsalt`` (fixed here) and the ``Date`` metadata is
dropped, so the same figure gives the same bytes on every run; text is drawn as paths so the
image does not depend on the fonts of the machine that opens the report. PNG drops the
``Software`` tag for the same reason.
"""
from __future__ import annotations

import base64
import io

from ._model import Figure

__all__ = ["figure_from_matplotlib", "RC_DETERMINISTIC"]

RC_DETERMINISTIC = {"svg.hashsalt": "xleval-report", "svg.fonttype": "path", "path.simplify": True}


def figure_from_matplotlib(fig, title: str, caption: str = "", fmt: str = "svg", dpi: int = 96) -> Figure:
    """Render ``fig`` (a matplotlib Figure) to a :class:`Figure`; ``fmt`` is ``svg`` or ``png``."""
    import matplotlib

    from .._base.mathtext import literal_texts

    buf = io.BytesIO()
    with matplotlib.rc_context(RC_DETERMINISTIC), literal_texts(fig):  # names from the data are never math
        if fmt == "svg":
            fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches=None)
            return Figure(title, "image/svg+xml", buf.getvalue().decode("utf-8"), caption)
        if fmt == "png":
            fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
            return Figure(title, "image/png", base64.b64encode(buf.getvalue()).decode("ascii"), caption)
    raise ValueError(f"figure format {fmt!r}: use svg or png")
