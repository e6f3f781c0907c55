"""Text from the data shown in a terminal: what is shown is what the data holds.

Names from the data (systems, languages, groups, columns, file names) reach the terminal through
rich, which reads ``[...]`` in a string as markup (``[link=...]`` makes a clickable link,
``[bold red]B`` shows ``B``, an unbalanced ``[/bold]`` raises) and ``:name:`` as an emoji; and they
may hold control characters (ANSI escapes that recolour or rewrite the screen, carriage returns,
bidirectional overrides that reorder what follows).

So the command line prints through :func:`make_console`, whose every string (printed, or a table
cell or title) is shown as it is: never read as markup or emoji codes, control characters as
escapes (``\\x1b``, ``\\U000e0041``). Styles come from ``Text`` objects: :func:`styled` joins a styled prefix and
data, :func:`data_text` makes one for data. :func:`visible_controls` is the plain-text form, for
the one-line error messages.
"""
from __future__ import annotations

import re
from typing import Any

__all__ = ["visible_controls", "data_text", "styled", "make_console", "CONTROL_CHARACTERS"]

# C0 and C1 controls and DEL, and the invisible format characters that reorder or hide text
# (bidirectional embeddings/overrides/isolates, zero-width characters, the byte-order mark, and the
# tag characters U+E0000-U+E007F, which render as nothing and can smuggle text past a reader)
CONTROL_CHARACTERS = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible_controls(text: str) -> str:
    """``text`` with every control or reordering character written as an escape (``\\x1b``, a newline
    as ``\\x0a``, ``\\u202e``): one line, nothing a terminal would act on."""
    return CONTROL_CHARACTERS.sub(_escape, text)


def data_text(value: Any, style: str = "") -> Any:
    """A rich ``Text`` showing ``value`` exactly (no markup, no emoji), control characters escaped."""
    from rich.text import Text

    return Text(visible_controls(str(value)), style=style)


def styled(prefix: str, style: str, value: Any) -> Any:
    """``prefix`` in ``style`` followed by the data ``value`` shown exactly, e.g. a yellow 'warning: '."""
    from rich.text import Text

    return Text.assemble((prefix, style), data_text(value))


def make_console(**options: Any) -> Any:
    """A rich Console for output that holds data: every string printed (directly, or as a table cell
    or title) is shown as it is, never read as markup or emoji codes, with control characters as
    escapes; styles come from ``Text`` objects (:func:`styled`). Nothing is highlighted."""
    from rich.console import Console

    class DataConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(visible_controls(text), **{**kwargs, "markup": False, "emoji": False})

    return DataConsole(**{"highlight": False, "markup": False, "emoji": False, **options})
