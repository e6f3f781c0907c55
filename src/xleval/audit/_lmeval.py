"""Ingestion of lm-evaluation-harness per-sample logs (``samples_<task>_<date>.jsonl``, written
with ``--log_samples``) for multiple-choice tasks into the audit's long table.

Two task types are understood: log-likelihood multiple choice (``filtered_resps`` is one
``[loglik, is_greedy]`` per choice, ``target`` the gold index; the prediction is the argmax,
always a valid answer) and generation (``filtered_resps`` holds the response text, ``target``
the gold letter or index; the response is kept for the answer parser). ``doc.subject`` becomes
``subject`` when present.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from xleval.exceptions import InputError
from xleval.io import iter_json_objects

__all__ = ["read_lm_eval_samples"]

_LETTERS = "ABCDEFGHIJ"


def read_lm_eval_samples(path: str | os.PathLike, *, model: str | None = None, condition: str,
                         filter_name: str | None = None) -> pd.DataFrame:
    """Rows ``item_id, model, condition, response, answer[, subject]`` from one samples file.

    ``model`` defaults to the name of the folder lm-eval wrote the file into (the sanitised
    model name); ``filter_name`` picks one filter when the task logged several (default: the
    first one seen)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file; give an lm-eval samples_*.jsonl file")
    records = _records(p)
    if filter_name is None:
        filter_name = records[0].get("filter")
    rows = [_row(rec, p, i) for i, rec in records_with_filter(records, filter_name, p)]
    df = pd.DataFrame(rows)
    df.insert(1, "model", model or p.parent.name)
    df.insert(2, "condition", condition)
    return df


def records_with_filter(records: list[dict], filter_name: Any, path: Path):
    chosen = [(i, r) for i, r in enumerate(records) if r.get("filter") == filter_name]
    if not chosen:
        raise InputError(f"{path}: no record with filter {filter_name!r}")
    return chosen


def _records(path: Path) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line_no, rec in iter_json_objects(fh, str(path), "is this an lm-eval samples file?"):
            if "doc_id" not in rec or "target" not in rec:
                raise InputError(f"{path}: line {line_no}: record without 'doc_id' or 'target'; not an lm-eval "
                                 "samples record")
            out.append(rec)
    if not out:
        raise InputError(f"{path}: no records")
    return out


def _row(rec: dict, path: Path, index: int) -> dict[str, Any]:
    resps = rec.get("filtered_resps", rec.get("resps"))
    row: dict[str, Any] = {"item_id": str(rec["doc_id"]), "answer": _gold(rec["target"], path, index)}
    if _is_loglik(resps):
        scores = [float(r[0]) for r in resps]
        row["response"] = _LETTERS[max(range(len(scores)), key=scores.__getitem__)]
    else:
        row["response"] = _text(resps)
    doc = rec.get("doc")
    if isinstance(doc, dict) and "subject" in doc:
        row["subject"] = str(doc["subject"])
    return row


def _is_loglik(resps: Any) -> bool:
    return isinstance(resps, list) and len(resps) > 1 and all(isinstance(r, list) and len(r) == 2 for r in resps)


def _text(resps: Any) -> str | None:
    while isinstance(resps, list):  # [[text]] in older versions, [text] in newer ones
        if not resps:
            return None
        resps = resps[0]
    return None if resps is None else str(resps)


def _gold(target: Any, path: Path, index: int) -> str:
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    if isinstance(target, bool):
        raise InputError(f"{path}: record {index + 1}: target {target!r} is not a choice index or letter")
    if isinstance(target, int) or (isinstance(target, str) and target.strip().isdigit()):
        k = int(target)
        if not 0 <= k < len(_LETTERS):
            raise InputError(f"{path}: record {index + 1}: target index {k} out of range")
        return _LETTERS[k]
    text = str(target).strip().strip("()").upper()
    if len(text) == 1 and text in _LETTERS:
        return text
    raise InputError(f"{path}: record {index + 1}: target {target!r} is not a choice index or letter; "
                     "only multiple-choice tasks can be audited")
