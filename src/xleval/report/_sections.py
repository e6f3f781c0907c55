"""Section builders: each turns result objects into a :class:`Section` (text, tables, figures).

They only arrange numbers that the analyses computed; the one generic builder,
:func:`result_section`, lays out any result's ``to_dict()`` so that every analysis (diagnostics,
intrinsic, fairness, audit) plugs into the report without a bespoke template.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._base.jsonable import to_jsonable
from ..exceptions import without_category
from ._model import Alert, Figure, Section, Table

__all__ = ["generic_section", "result_section", "warnings_section", "alert_from_warning", "slug"]


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
        if name and _is_record_map(value):  # e.g. {"mean": Estimate.to_dict(), "worst": ...}: one row per key
            tables.append(_table(name, [{"key": k, **_strip_notes(v, f"{name}.{k}", notes)} for k, v in value.items()]))
        elif name and _is_flat(value):  # one result object: a field/value table
            rows = _strip_notes(value, name, notes)
            tables.append(_table(name, [{"field": k, "value": v} for k, v in rows.items()]))
        else:
            for key, sub in value.items():
                _walk(sub, f"{name}.{key}" if name else str(key), facts, tables, notes)
    elif _is_records(value):
        tables.append(_table(name, [_strip_notes(v, name, notes) for v in value]))
    elif name.rsplit(".", 1)[-1] in ("notes", "warnings", "reasons") and isinstance(value, (list, tuple)):
        notes.extend(str(v) for v in value)
    elif isinstance(value, (list, tuple)) and len(value) > 12:
        facts[name] = f"[{len(value)} values]"  # distributions and long vectors are not for reading
    else:
        facts[name] = to_jsonable(value)


def _scalar(v: Any) -> bool:
    return not isinstance(v, (Mapping, list, tuple)) or (
        isinstance(v, (list, tuple)) and len(v) <= 12 and all(not isinstance(x, (Mapping, list, tuple)) for x in v))


def _is_flat(value: Mapping) -> bool:
    return bool(value) and all(_scalar(v) for v in value.values())


def _is_records(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, Mapping) for v in value)


def _is_record_map(value: Mapping) -> bool:
    return bool(value) and all(isinstance(v, Mapping) and _is_flat(v) for v in value.values())


def _strip_notes(record: Mapping, where: str, notes: list) -> dict:
    """The record without its ``notes`` list; the notes go to the section's warnings, prefixed by where.
    A field that is itself a result (an estimate with its interval) becomes dotted columns
    (``accuracy.estimate``, ``accuracy.ci_low``, ...): a cell holds a value, never an object's dump."""
    out: dict = {}
    for key, value in record.items():
        if key == "notes":
            notes.extend(f"{where}: {note}" for note in value or ())
        elif isinstance(value, Mapping):
            out.update({f"{key}.{k}": v for k, v in _strip_notes(value, f"{where}.{key}", notes).items()})
        else:
            out[key] = value
    return out


def _table(title: str, rows: list[dict]) -> Table:
    """A table without the columns that are empty in every row (e.g. p_value of a bootstrap CI)."""
    table = Table.from_records(title, rows)
    empty = [c for c in table.columns if all(r.get(c) in (None, [], "") for r in table.rows)]
    return Table(title, tuple({k: v for k, v in r.items() if k not in empty} for r in table.rows), table.note)


# What to do about each warning class the library raises (the class name starts a captured warning's text).
_ACTIONS = {
    "SmallGroupWarning": ("small groups", "Add rows (or human scores) to these groups; until then their calibration "
                          "leans on the pooled statistics."),
    "UnseenGroupWarning": ("groups the calibrator has not seen",
                           "Fit the calibrator on data that covers these groups."),
    "DegenerateGroupWarning": ("groups without spread", "Check these groups' scores: they are (nearly) constant."),
    "DataQualityWarning": ("data quality", "Fix or fill the rows named here, or drop them deliberately."),
    "PooledPairsWarning": ("groups of several language pairs",
                           "Rank the systems within each language pair (by='lp'): a group that mixes its pairs' test "
                           "sets scores each system on the pairs it translated."),
}


def alert_from_warning(text: str) -> Alert:
    """An :class:`Alert` from a captured warning ``"Category: message"`` (or any note)."""
    category, sep, message = text.partition(": ")
    if sep and category in _ACTIONS:
        check, action = _ACTIONS[category]
        return Alert(check, "warning", message, action)
    # a warning class the report has no words for: its message only
    return Alert("analysis note", "warning", without_category(text), "")


def _merged(alerts: list[Alert]) -> list[Alert]:
    """Warnings of one kind (e.g. one unseen-group warning per group) as one alert, messages joined."""
    kinds: dict[tuple[str, str, str], list[str]] = {}
    for a in alerts:
        kinds.setdefault((a.check, a.status, a.action), []).append(a.message)
    return [Alert(check, status, "; ".join(messages), action) for (check, status, action), messages in kinds.items()]


def warnings_section(messages: Sequence[str], *, checks: Sequence[str | Alert] = (),
                     title: str = "Warnings") -> Section:
    """Every check that failed, was violated or was inconclusive (``checks``, first) and every warning
    raised while the results were computed (``messages``, deduplicated, in order), each as an
    :class:`Alert` with what to do; nothing that passed."""
    alerts = [c if isinstance(c, Alert) else alert_from_warning(c) for c in checks]
    alerts += _merged([alert_from_warning(m) for m in dict.fromkeys(messages)])
    unique = tuple(dict.fromkeys(alerts))
    paragraphs = () if unique else ("Every check passed and no warning was raised.",)
    return Section(slug(title), title, paragraphs, alerts=unique)
