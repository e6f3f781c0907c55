"""Section builders: each turns result objects into a :class:`Section` (text, tables, figures).

They only arrange numbers that the analyses computed; the one generic builder,
:func:`result_section`, lays out any result's ``to_dict()`` so that every analysis (diagnostics,
intrinsic, fairness, audit) plugs into the report without a bespoke template.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._model import Figure, Section, Table, _plain

__all__ = ["generic_section", "result_section", "warnings_section", "slug"]


def slug(title: str) -> str:
    """A stable HTML id from a title: lower case, runs of other characters become '-'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "section"


def generic_section(title: str, *, tables: Iterable[Table | tuple[str, Any]] = (), figures: Iterable[Figure] = (),
                    paragraphs: Iterable[str] = (), facts: Mapping[str, Any] | None = None,
                    warnings: Iterable[str] = (), id: str | None = None) -> Section:
    """A section from parts: ``tables`` are :class:`Table` objects or ``(title, rows)`` pairs where
    rows is a list of dicts or a DataFrame; ``figures`` are :class:`Figure` objects (see
    :func:`~xleval.report.figure_from_matplotlib`)."""
    built = tuple(t if isinstance(t, Table) else Table.from_records(*t) for t in tables)
    return Section(id or slug(title), title, tuple(paragraphs), tuple((facts or {}).items()), built,
                   tuple(figures), tuple(warnings))


def result_section(title: str, result: Any, *, figures: Iterable[Figure] = (), paragraphs: Iterable[str] = (),
                   id: str | None = None) -> Section:
    """Lay out a result (anything with ``to_dict()``, or a dict): scalars become facts, lists of
    records and mappings of records become tables, nested mappings are flattened into facts with
    dotted names, and ``notes``/``warnings`` lists become the section's warnings."""
    payload = result.to_dict() if hasattr(result, "to_dict") else dict(result)
    facts: dict[str, Any] = {}
    tables: list[Table] = []
    notes: list[str] = []
    _walk(payload, "", facts, tables, notes)
    return generic_section(title, tables=tables, figures=figures, paragraphs=paragraphs, facts=facts,
                           warnings=notes, id=id)


def _walk(value: Any, name: str, facts: dict, tables: list, notes: list) -> None:
    if isinstance(value, Mapping):
        if name and _is_record_map(value):
            tables.append(Table.from_records(name, [{"key": k, **v} for k, v in value.items()]))
            return
        for key, sub in value.items():
            _walk(sub, f"{name}.{key}" if name else str(key), facts, tables, notes)
    elif _is_records(value):
        tables.append(Table.from_records(name, value))
    elif name.rsplit(".", 1)[-1] in ("notes", "warnings") and isinstance(value, (list, tuple)):
        notes.extend(str(v) for v in value)
    elif isinstance(value, (list, tuple)) and len(value) > 12:
        facts[name] = f"[{len(value)} values]"  # distributions and long vectors are not for reading
    else:
        facts[name] = _plain(value)


def _is_records(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _is_record_map(value: Mapping) -> bool:
    return bool(value) and all(isinstance(v, Mapping) and v and
                               all(not isinstance(x, (Mapping, list, tuple)) for x in v.values())
                               for v in value.values())


def warnings_section(messages: Sequence[str], *, checks: Sequence[str] = (), title: str = "Warnings") -> Section:
    """Every warning raised while the results were computed (deduplicated, in order), plus the
    conclusions of validity checks (``checks``), so a reader sees them in one place."""
    unique = list(dict.fromkeys(messages))
    paragraphs = () if unique or checks else ("No warnings were raised.",)
    return Section(slug(title), title, paragraphs, (), (), (), tuple(list(checks) + unique))
