"""The report's number formatting: the one formatting of :mod:`xleval._base.numbers`, shared with the
command line's text tables (kept there so a command that prints a table does not import the report)."""
from .._base.numbers import (
    MISSING,
    SIGNIFICANT,
    format_column,
    format_number,
    format_p,
    format_rows,
    format_text,
    format_value,
    is_number,
    is_p_name,
)

__all__ = ["SIGNIFICANT", "MISSING", "is_p_name", "format_p", "format_number", "format_value", "format_column",
           "format_rows", "is_number", "format_text"]
