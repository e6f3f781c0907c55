"""The one JSON, TSV and plain-text form of what xleval writes for a reader (stdout or a file): names
from the data never reach a terminal as characters it would act on.

* :func:`json_text`: valid JSON that parses back to the exact values; every code point of the display
  rule (:data:`~xleval._base.terminal.CONTROL_CHARACTERS`: controls, bidi, zero-width, tag characters,
  variation selectors, non-ASCII spaces) inside strings is written as a JSON escape (``\\u202e``, a
  surrogate pair for a tag character), so the text shows them and ``json.loads`` restores them: JSON is
  both display-safe and lossless (the data rule).
* :func:`tsv_text`: a table as TSV *shown as text* (stdout), every text cell and column name with those
  characters shown as escapes (:func:`~xleval._base.terminal.visible_controls`); TSV has no escape
  syntax, so this is for reading, and a tab or newline in a name can no longer split a row. A TSV
  *file* is data: ``xleval.io._write.format_rows`` (lossless, the TSV quoting rule).
* :func:`plain_text`: lines of text with the same escapes (the line breaks kept).
"""
from __future__ import annotations

import json
from typing import Any

from .jsonable import to_jsonable
from .terminal import CONTROL_CHARACTERS, visible_controls

__all__ = ["json_text", "tsv_text", "plain_text"]


def json_text(payload: Any, *, indent: int | None = 2) -> str:
    """``payload`` (converted by :func:`to_jsonable`) as JSON text ending in a newline."""
    text = json.dumps(to_jsonable(payload), indent=indent, ensure_ascii=False, allow_nan=False)
    # json.dumps escapes C0 controls inside strings, so a C0 character left is layout (a newline of
    # the indentation); the other characters are escaped as JSON, which reads back the same value
    return CONTROL_CHARACTERS.sub(_json_escape, text) + "\n"


def _json_escape(match: Any) -> str:
    char = match.group()
    if char < " ":
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # astral (the tag characters): a UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def tsv_text(frame: Any, *, float_format: Any = None) -> str:
    """``frame`` (a DataFrame) as TSV with a header, one line per row; floats through ``float_format``."""
    import pandas as pd

    def show(value: Any) -> Any:  # a cell is a name on its own: spaces at its ends shown too
        return visible_controls(value, name=True) if isinstance(value, str) else value

    shown = frame.rename(columns=lambda c: visible_controls(str(c)))
    for col in shown.columns:
        if shown[col].dtype == object or pd.api.types.is_string_dtype(shown[col]):
            shown[col] = shown[col].map(show)
    return shown.to_csv(sep="\t", index=False, float_format=float_format, lineterminator="\n")


def plain_text(text: str) -> str:
    """``text`` with every control or reordering character escaped, its line breaks kept."""
    return "\n".join(visible_controls(line) for line in text.split("\n"))
