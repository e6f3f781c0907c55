"""Which columns of a table are judges: what their signatures say.

A column is a judge when its signature (the table's ``signatures`` metadata, as ``xleval score`` and ``xleval
ingest judge`` write it) says so:

* a column scored by :class:`xleval.judges.Judge` (``xleval score -m judge:SPEC``): its signature has the
  ``prompt-sha`` field (the hash of the GEMBA prompt texts);
* an ingested judge column (``xleval ingest judge``): its signature has ``judge:yes`` (the WMT25 ``GEMBA-*``
  columns, a WMT26 task file's score column).

A calibrated column (``anchored|...|of:SIG``, ``lgn|...``) is not a judge: only the fields before ``of:`` count,
so a judge calibrated per language is a calibrated score. A table without signatures (a TSV without its sidecar)
has no judge columns: name them (``--judges A,B``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["judge_columns", "is_judge_signature"]


def is_judge_signature(signature: str | None) -> bool:
    """True when ``signature`` is a judge's (see the module docstring); every language's, when per language."""
    if not signature:
        return False
    from xleval._base.signature import parse_signature

    return all(_one(sig) for sig in parse_signature(str(signature)).values())


def _one(signature: str) -> bool:
    fields: dict[str, str] = {}
    for part in signature.split("|"):
        key, _, value = part.partition(":")
        if key == "of":  # a calibrated column: the score it calibrated is not this column
            break
        fields[key] = value
    return "prompt-sha" in fields or fields.get("judge") == "yes"


def judge_columns(signatures: Mapping[str, str] | None, columns: Iterable[str] | None = None) -> list[str]:
    """The columns whose signature says judge, in ``columns``' order (default: the signatures' order); only
    columns of ``columns`` when given (the table's)."""
    signatures = dict(signatures or {})
    names = list(signatures) if columns is None else [c for c in columns if c in signatures]
    return [c for c in names if is_judge_signature(signatures[c])]
