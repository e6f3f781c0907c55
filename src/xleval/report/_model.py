"""What a report is made of: sections holding text, tables and figures, all plain data.

A :class:`Report` is built once from result objects (compute) and then rendered (HTML or JSON)
without touching any statistic again, so the same report always renders to the same bytes.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Table", "Figure", "Section", "Report"]


def _plain(value: Any) -> Any:
    """A JSON value: numpy scalars become Python numbers, NaN/inf become None."""
    if hasattr(value, "item") and not isinstance(value, (str, bytes)) and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Table:
    """Rows of a table (dicts with the same keys) with a title and an optional note under it."""

    title: str
    rows: tuple[dict, ...]
    note: str = ""

    @classmethod
    def from_records(cls, title: str, rows: Sequence[Mapping[str, Any]] | Any, note: str = "") -> Table:
        """Accepts a list of dicts or a DataFrame; values become plain JSON values."""
        if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
            rows = rows.to_dict(orient="records")
        return cls(title, tuple(_plain(dict(r)) for r in rows), note)

    @property
    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def to_dict(self) -> dict:
        return {"title": self.title, "note": self.note, "columns": self.columns, "rows": [dict(r) for r in self.rows]}


@dataclass(frozen=True)
class Figure:
    """A rendered image: ``media_type`` ``image/svg+xml`` (``content`` is SVG text) or ``image/png``
    (``content`` is base64)."""

    title: str
    media_type: str
    content: str
    caption: str = ""

    def data_uri(self) -> str:
        import base64

        if self.media_type == "image/png":
            return f"data:image/png;base64,{self.content}"
        return "data:image/svg+xml;base64," + base64.b64encode(self.content.encode("utf-8")).decode("ascii")

    def to_dict(self) -> dict:
        return {"title": self.title, "caption": self.caption, "media_type": self.media_type, "content": self.content}


@dataclass(frozen=True)
class Section:
    """One part of the report: paragraphs, key figures (``facts``), tables, figures and warnings."""

    id: str
    title: str
    paragraphs: tuple[str, ...] = ()
    facts: tuple[tuple[str, Any], ...] = ()
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"id": self.id, "title": self.title, "paragraphs": list(self.paragraphs),
                "facts": {k: _plain(v) for k, v in self.facts},
                "tables": [t.to_dict() for t in self.tables], "figures": [f.to_dict() for f in self.figures],
                "warnings": list(self.warnings)}


@dataclass(frozen=True)
class Report:
    """The whole report: a title, run parameters (``meta``) and the sections in order."""

    title: str
    sections: tuple[Section, ...]
    meta: tuple[tuple[str, Any], ...] = field(default=())

    def section(self, section_id: str) -> Section:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)

    def to_dict(self) -> dict:
        from .. import __version__

        return {"format": "xleval.report", "format_version": 1, "xleval_version": __version__,
                "title": self.title, "meta": {k: _plain(v) for k, v in self.meta},
                "sections": [s.to_dict() for s in self.sections]}
