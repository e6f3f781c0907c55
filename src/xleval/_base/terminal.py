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

__all__ = ["visible_controls", "data_text", "styled", "make_console", "wrap_points", "CONTROL_CHARACTERS",
           "shell_word"]

# What a reader cannot see, or sees as something else, written as escapes wherever a name from the data is
# shown (the display rule: terminal tables, messages, the HTML report, figures, JSON/TSV/text on a stream):
# C0 and C1 controls and DEL; every format character (general category Cf: bidirectional marks,
# embeddings, overrides and isolates, zero-width space/joiner/non-joiner, word joiner, invisible
# operators, the byte-order mark, Arabic/Syriac/Kaithi/Egyptian format marks, the tag characters
# U+E0000-U+E007F that render as nothing and can smuggle text past a reader); the rest of Unicode's
# default-ignorable code points (soft hyphen, combining grapheme joiner, Hangul fillers, Khmer inherent
# vowels, Mongolian selectors, variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF, shorthand and
# musical format controls, U+E0000-U+E0FFF); line and paragraph separators; every space other than
# U+0020 (no-break, en/em/thin/hair, ideographic: 'A\u00a0B' is not 'A B'); lone surrogates; and the
# specials U+FFF0-U+FFFB. Two names that differ by any of these look different. A test checks the class
# against ``unicodedata`` (Cc, Cf, Zl, Zp, Zs, Cs) of the running Python.
CONTROL_CHARACTERS = re.compile(
    "[\x00-\x1f\x7f-\xa0\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160"
    "\u1680\u17b4-\u17b5\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164"
    "\ud800-\udfff\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# a backslash a reader would take for the start of one of _escape's escapes, or of a doubled backslash: before
# another backslash, the text of an escape, or a character that becomes one (a control, a space _LOOSE_SPACES writes)
_ESCAPE_LIKE = re.compile(r"\\(?=\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}| +$| {2}|"
                          + CONTROL_CHARACTERS.pattern + ")")

# spaces a reader cannot count in a name standing alone (a table cell): at either end, or two or more in a row
# (an HTML page collapses them)
_LOOSE_SPACES = re.compile(r"^ +| +$| {2,}")


def visible_controls(text: str, *, name: bool = False) -> str:
    """``text`` with every control or reordering character written as an escape (``\\x1b``, a newline
    as ``\\x0a``, ``\\u202e``): one line, nothing a terminal would act on. ``name=True`` for a name
    shown on its own (a table cell): spaces at its ends or in a run are written ``\\x20`` too, so ``A``,
    ``A `` and ``A  B``/``A B`` never look alike, and a backslash that would read as the start of an escape (or
    of a doubled backslash) is written ``\\\\``, so a name spelt with the text of an escape (``a\\x09b``)
    never looks like one holding the character (a tab), while ``$\\alpha$`` or ``C:\\data`` show as written."""
    if not name:
        return CONTROL_CHARACTERS.sub(_escape, text)
    shown = CONTROL_CHARACTERS.sub(_escape, _ESCAPE_LIKE.sub(r"\\\\", text))
    return _LOOSE_SPACES.sub(lambda m: "\\x20" * len(m.group()), shown)


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
    escapes; styles come from ``Text`` objects (:func:`styled`). Nothing is highlighted.

    An explanation printed with ``soft_wrap=True`` (one line, so that a command inside it is never cut)
    is wrapped at word boundaries on a terminal, at its width, and still never inside a command
    (:func:`wrap_points`); a pipe or a file gets it as one line."""
    from rich.console import Console
    from rich.text import Text

    class DataConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(visible_controls(text), **{**kwargs, "markup": False, "emoji": False})

        def print(self, *objects: Any, **kwargs: Any) -> None:
            if kwargs.get("soft_wrap") and self.is_terminal:
                objects = tuple(_wrapped(o, self.width) for o in objects)
            super().print(*objects, **kwargs)

    def _wrapped(obj: Any, width: int) -> Any:
        if isinstance(obj, str):
            obj = Text(visible_controls(obj))
        if not isinstance(obj, Text) or len(obj.plain) <= width:
            return obj
        plain = obj.plain
        breaks = wrap_points(plain, width)
        if not breaks:
            return obj
        out = obj.copy()
        chars = list(plain)
        for i in breaks:
            chars[i] = "\n"
        out.plain = "".join(chars)  # same length: the styles' spans stay where they were
        return out

    return DataConsole(**{"highlight": False, "markup": False, "emoji": False, **options})


# a command the advice names (`xleval calibrate select TABLE ... -o to_label.tsv`) or a `quoted span`:
# a line never breaks inside one, so it pastes whole
_UNBROKEN = re.compile(r"xleval\s(?:(?!xleval\s).)*?\s-o\s\S+|`[^`\n]*`")


def wrap_points(text: str, width: int) -> list[int]:
    """Positions of the spaces at which ``text`` (one line) is broken into lines of at most ``width``
    characters (word wrapping, as :func:`textwrap.wrap` without breaking words), never inside a command
    or a backquoted span; a word or command longer than ``width`` gets a line of its own."""
    if width < 10 or "\n" in text:
        return []
    protected = [False] * len(text)
    for m in _UNBROKEN.finditer(text):
        for i in range(m.start(), m.end()):
            protected[i] = True
    spaces = [i for i, c in enumerate(text) if c == " " and not protected[i]]
    points: list[int] = []
    start = 0
    last = None
    for i in spaces:
        if i - start > width and last is not None:
            points.append(last)
            start = last + 1
        last = i
        if i - start > width:  # one word longer than the line: it stands alone
            points.append(i)
            start, last = i + 1, None
    if len(text) - start > width and last is not None and last >= start:
        points.append(last)
    return points


def shell_word(word: str) -> str:
    """``word`` as a shell word that types it (every command xleval prints for the user to paste):
    ``shlex.quote``, or bash's ``$'...'`` with escapes where it holds a control character (which no plain quoting
    can show, and a terminal must not receive raw)."""
    if word.isprintable():
        import shlex

        return shlex.quote(word)
    return "$'" + "".join(_escaped_char(c) for c in word) + "'"


_SHELL_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped_char(c: str) -> str:
    """One character inside bash's ``$'...'``: as it is where printable, else its escape."""
    if c in _SHELL_ESCAPES:
        return _SHELL_ESCAPES[c]
    if c.isprintable():
        return c
    code = ord(c)  # bash's \xHH is one byte, not a code point: above ASCII only \u and \U type the character
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
