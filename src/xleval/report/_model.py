"""What a report is made of: sections holding text, tables and figures, all plain data.

A :class:`Report` is built once from result objects (compute) and then rendered (HTML or JSON)
without touching any statistic again, so the same report always renders to the same bytes. Its JSON
leads with the answer: ``summary`` (with ``recommendation`` and ``reasons``), ``leaderboard`` (rows),
``warnings`` (every check that failed, was violated or inconclusive, each with what to do), then the
sections in detail.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._base.jsonable import to_jsonable
from .._base.result import Result

__all__ = ["Table", "Figure", "Section", "Report", "Alert"]

FORMAT_VERSION = 2


@dataclass(frozen=True, eq=False)
class Table(Result):
    """Rows of a table (dicts with the same keys) with a title and an optional note under it.
    ``sortable`` tables can be sorted by clicking a column header in the HTML."""

    title: str
    rows: tuple[dict, ...]
    note: str = ""
    sortable: bool = False

    @classmethod
    def from_records(cls, title: str, rows: Sequence[Mapping[str, Any]] | Any, note: str = "", *,
                     sortable: bool = False) -> Table:
        """Accepts a list of dicts or a DataFrame; values become plain JSON values."""
        if hasattr(rows, "to_dict") and hasattr(rows, "columns"):
            rows = rows.to_dict(orient="records")
        return cls(title, tuple(to_jsonable(dict(r)) for r in rows), note, sortable)

    @property
    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def to_dict(self, *, include_distribution: bool = False) -> dict:
        # the columns (computed) lead the rows; whether the HTML sorts them is no data
        return {"title": self.title, "note": self.note, "columns": self.columns, "rows": [dict(r) for r in self.rows]}


@dataclass(frozen=True, eq=False)
class Figure(Result):
    """A rendered image: ``media_type`` ``image/svg+xml`` (``content`` is SVG text) or ``image/png``
    (``content`` is base64). ``axes``: per panel its ``(x label, y label)``, as drawn."""

    _dump_order = ("title", "caption", "axes", "media_type", "content")

    title: str
    media_type: str
    content: str
    caption: str = ""
    axes: tuple[tuple[str, str], ...] = ()

    def data_uri(self) -> str:
        """PNG as base64; SVG as percent-encoded UTF-8 text (smaller than base64, and searchable)."""
        from urllib.parse import quote

        if self.media_type == "image/png":
            return f"data:image/png;base64,{self.content}"
        return "data:image/svg+xml;charset=utf-8," + quote(self.content, safe=" /:=;,.-_()!*'~")

    @property
    def alt(self) -> str:
        """The text alternative: the title and what each panel plots."""
        panels = "; ".join(f"{y} against {x}" for x, y in self.axes if x or y)
        return f"{self.title}: {panels}" if panels else self.title



@dataclass(frozen=True, eq=False)
class Alert(Result):
    """One check that failed, was violated or was inconclusive: what was checked, its status, what
    was found and what to do about it."""

    check: str
    status: str
    message: str
    action: str = ""

    def text(self) -> str:
        return f"{self.check} ({self.status}): {self.message}" + (f" What to do: {self.action}" if self.action else "")


@dataclass(frozen=True, eq=False)
class Section(Result):
    """One part of the report: a lead (the key result, shown first), paragraphs, key figures
    (``facts``), tables, figures, notes (``warnings``) and, in the warnings section, ``alerts``."""

    id: str
    title: str
    paragraphs: tuple[str, ...] = ()
    facts: tuple[tuple[str, Any], ...] = ()
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    warnings: tuple[str, ...] = ()
    lead: tuple[str, ...] = ()
    alerts: tuple[Alert, ...] = ()

    def to_dict(self, *, include_distribution: bool = False) -> dict:
        # facts as one mapping, alerts only where there are some (the warnings section)
        out = {"id": self.id, "title": self.title, "lead": list(self.lead), "paragraphs": list(self.paragraphs),
               "facts": {k: to_jsonable(v) for k, v in self.facts},
               "tables": [t.to_dict() for t in self.tables], "figures": [f.to_dict() for f in self.figures],
               "warnings": list(self.warnings)}
        if self.alerts:
            out["alerts"] = [a.to_dict() for a in self.alerts]
        return out


@dataclass(frozen=True, eq=False)
class Report(Result):
    """The whole report: a title, run parameters (``meta``), the sections in order and, for the
    answer-first layout, a ``summary`` mapping and the ``leaderboard`` rows (plain JSON values)."""

    title: str
    sections: tuple[Section, ...]
    meta: tuple[tuple[str, Any], ...] = field(default=())
    summary: Mapping[str, Any] | None = None
    leaderboard: tuple[dict, ...] | None = None

    def section(self, section_id: str) -> Section:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)

    @property
    def alerts(self) -> tuple[Alert, ...]:
        return tuple(a for s in self.sections for a in s.alerts)

    def to_dict(self, *, include_distribution: bool = False) -> dict:
        # the file format header, then the answer first (summary, leaderboard, warnings), then the detail
        from .. import __version__

        out: dict[str, Any] = {"format": "xleval.report", "format_version": FORMAT_VERSION,
                               "xleval_version": __version__, "title": self.title}
        if self.summary is not None:
            out["summary"] = to_jsonable(self.summary)
        if self.leaderboard is not None:
            out["leaderboard"] = to_jsonable(list(self.leaderboard))
        out["warnings"] = [a.to_dict() for a in self.alerts]
        out["meta"] = {k: to_jsonable(v) for k, v in self.meta}
        out["sections"] = [s.to_dict() for s in self.sections]
        return out
