"""Text from the data in plots: drawn as typed, never parsed as math.

matplotlib parses a text holding two ``$`` as mathtext: a group named ``$\\undefinedmacro$`` made
every report fail, and ``$x_1$`` would be drawn as a formula. Two mechanisms, so that neither a new
plot nor a new caller can forget it:

* :class:`LiteralFigure` (a matplotlib ``Figure``): every draw of it, whoever saves it, shows all its
  texts literally (titles, labels, legends, tick labels made while drawing). xleval's plot
  functions create their figures with it.
* :func:`literal_texts`: the report renderer draws every figure it is given inside it, including
  figures made elsewhere.

Both also keep quiet about glyphs the font lacks (a name in a script it does not cover is drawn
with boxes, which is what the reader should see, not a warning on the terminal).
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

__all__ = ["LiteralFigure", "literal_texts"]


@contextlib.contextmanager
def literal_texts(fig) -> Iterator[None]:
    """Within the block (draw or save ``fig`` in it), every text of ``fig`` is drawn literally."""
    for text in fig.findobj(Text):
        text.set_parse_math(False)
    with matplotlib.rc_context({"text.parse_math": False}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        warnings.filterwarnings("ignore", message=r"Matplotlib currently does not support", category=UserWarning)
        yield


class LiteralFigure(Figure):
    """A ``Figure`` whose texts are never parsed as mathtext, however and by whom it is drawn."""

    def draw(self, renderer):
        with literal_texts(self):
            return super().draw(renderer)
