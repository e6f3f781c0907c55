"""Text from the data in plots: drawn as typed, never parsed as math.

matplotlib parses a text holding two ``$`` as mathtext: a group named ``$\\undefinedmacro$`` made
every report fail, and ``$x_1$`` would be drawn as a formula. :func:`literal_texts` turns parsing
off for every text of a figure (titles, labels, legends, tick labels, annotations); the renderer
calls it, so a new plot cannot forget it. Its context keeps texts created while drawing (tick
labels are made then) literal too.
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

__all__ = ["literal_texts", "plot_label"]


@contextlib.contextmanager
def literal_texts(fig) -> Iterator[None]:
    """Within the block (draw or save ``fig`` in it), every text of ``fig`` is drawn literally, and a
    glyph the font lacks (a name in a script it does not cover) is drawn as a box without a warning."""
    import matplotlib
    from matplotlib.text import Text

    for text in fig.findobj(Text):
        text.set_parse_math(False)
    with matplotlib.rc_context({"text.parse_math": False}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"Matplotlib currently does not support", category=UserWarning)
        yield


def plot_label(value: object) -> str:
    """A name from the data as a plot label: ``$`` escaped (for a text that is parsed as math
    elsewhere) and control characters shown as escapes, on one line."""
    from .terminal import visible_controls

    return visible_controls(str(value)).replace("$", r"\$")
