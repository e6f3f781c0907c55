"""Numbers as people read them: the one formatting used by the HTML report, the CLI's text tables and
the leaderboard's text output (JSON keeps full-precision numbers).

* counts are integers (``9600``, never ``9600.0``);
* p-values below 0.001 read ``< 0.001`` (never ``0``), others two significant digits;
* rounding noise reads ``0``: a value below ``1e-9`` times the largest magnitude of its column (or
  below ``1e-12`` on its own), e.g. an in-sample calibrated mean's ``1.86e-15``;
* the numbers of a column share one precision: as many decimals as give its largest magnitude
  ``SIGNIFICANT`` significant digits (``0.748``, ``0.080``, ``-0.014``; ``45.2``, ``7.0``), except a
  value that would round to 0 at that precision (a small statistic in a column of large ones), which
  gets ``SIGNIFICANT`` significant digits of its own; no exponent between ``1e-4`` and ``1e7``.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["SIGNIFICANT", "MISSING", "is_p_name", "format_p", "format_number", "format_value",
           "format_column",
           "format_rows", "is_number", "format_text"]

SIGNIFICANT = 3
MISSING = "–"
_NOISE_RELATIVE = 1e-9
_NOISE_ABSOLUTE = 1e-12
_MIXED_COLUMNS = ("value",)  # columns whose rows hold different statistics (result_section's field/value tables)
_P_IN_TEXT = re.compile(r"\bp = (\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?![\d.])")
_P_NAME = re.compile(r"(^|[\s_.-])(p|p_value|p-value|pvalue)$", re.IGNORECASE)


def is_p_name(name: str) -> bool:
    """Whether a column or fact named ``name`` holds p-values (``p``, ``p_value``, ``raw p``, ``permutation p``)."""
    return bool(_P_NAME.search(str(name)))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_p(p: Any) -> str:
    """``< 0.001`` below 0.001, else two significant digits (``0.034``, ``0.41``, ``1``)."""
    if _missing(p):
        return MISSING
    p = float(p)
    if p < 0.001:
        return "< 0.001"
    return _fixed(p, 2)


def _fixed(value: float, significant: int) -> str:
    """``value`` with ``significant`` significant digits, trailing zeros kept (``0.500``, ``45.2``, ``2799``)."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 7 or magnitude < -4:
        return f"{value:.{significant - 1}e}"
    decimals = significant - 1 - magnitude
    if decimals <= 0:
        return f"{round(value):d}"
    text = f"{value:.{decimals}f}"
    if abs(float(text)) >= 10 ** (magnitude + 1):  # rounding carried into the next digit: 9.996 -> 10.00 -> 10.0
        text = f"{value:.{max(decimals - 1, 0)}f}"
    return "0" if float(text) == 0 else text


def _decimals(scale: float, significant: int) -> int | None:
    """Decimals that give ``scale`` ``significant`` significant digits (None outside the fixed-point range)."""
    if not scale or not math.isfinite(scale):
        return None
    magnitude = math.floor(math.log10(scale))
    if magnitude >= 7 or magnitude < -4:
        return None
    return max(significant - 1 - magnitude, 0)


def format_number(value: Any, *, scale: float | None = None, significant: int = SIGNIFICANT) -> str:
    """One number: an int as an integer, a float with the precision of its column (``scale``: the
    column's largest magnitude; alone: ``significant`` digits); noise below ``1e-9 * scale`` or below
    ``1e-12`` reads ``0``."""
    if _missing(value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:d}"
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    limit = max(_NOISE_ABSOLUTE, _NOISE_RELATIVE * (scale or 0.0))
    if abs(value) < limit:
        return "0"
    decimals = _decimals(scale, significant) if scale else None
    if decimals is not None and abs(value) <= scale:
        text = f"{value:.{decimals}f}"
        if float(text) != 0:
            return text
    return _fixed(value, significant)


def format_value(value: Any, name: str = "") -> str:
    """A single value (a fact): p-values by name, lists joined, text as it is."""
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) if value else MISSING
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {format_value(v)}" for k, v in value.items())
    if is_p_name(name) and is_number(value):
        return format_p(value)
    if _missing(value):
        return MISSING
    if is_number(value) or isinstance(value, bool):
        return format_number(value)
    return str(value)


def format_column(values: Sequence[Any], name: str = "") -> list[str]:
    """Every value of one column, formatted alike (see the module docstring)."""
    if is_p_name(name):
        return [format_p(v) if is_number(v) else format_value(v) for v in values]
    if str(name) in _MIXED_COLUMNS:  # a field/value table: each row its own statistic and scale
        return [format_value(v) for v in values]
    floats = [abs(float(v)) for v in values if is_number(v) and not _missing(v) and math.isfinite(float(v))]
    scale = max(floats) if floats else None
    return [format_number(v, scale=scale) if is_number(v) else format_value(v) for v in values]


def format_rows(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> list[list[str]]:
    """A table's rows as text, column by column (so a column shares its noise scale and digits)."""
    rows = list(rows)
    formatted = [format_column([r.get(c) for r in rows], c) for c in columns]
    return [list(cells) for cells in zip(*formatted, strict=True)] if formatted else [[] for _ in rows]


def format_text(text: str) -> str:
    """Sentences written by the analyses, with their p-values as people read them: ``p = 1.6e-08``
    and ``p = 0`` become ``p < 0.001``; other numbers are left as the analysis wrote them."""
    def fix(match: re.Match) -> str:
        return "p < 0.001" if float(match.group(1)) < 0.001 else match.group(0)

    return _P_IN_TEXT.sub(fix, str(text))
