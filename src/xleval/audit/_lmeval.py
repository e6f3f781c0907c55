"""The audit's long table from lm-evaluation-harness per-sample logs of multiple-choice tasks
(``samples_<task>_<date>.jsonl``, written with ``--log_samples``; read by
:func:`xleval.io.read_lm_eval_samples`, which also finds the run's model).

Two task types are understood: log-likelihood multiple choice (``filtered_resps`` is one
``[loglik, is_greedy]`` per choice, ``target`` the gold index; the prediction is the argmax,
always a valid answer) and generation (``filtered_resps`` holds the response text, ``target``
the gold letter or index; the response is kept for the answer parser). ``doc.subject`` becomes
``subject`` when present.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeGuard

import pandas as pd

from xleval.exceptions import InputError
from xleval.io import LMEvalSamples, read_lm_eval_samples

__all__ = ["lm_eval_answers"]

_LETTERS = "ABCDEFGHIJ"


def lm_eval_answers(samples: str | os.PathLike | LMEvalSamples, *, condition: str, model: str | None = None,
                    filter_name: str | None = None) -> pd.DataFrame:
    """Rows ``item_id, model, condition, response, answer[, subject]`` from one samples file (a
    path, or what :func:`xleval.io.read_lm_eval_samples` returned).

    ``model`` defaults to the run's model (the results file beside the samples, else the folder
    lm-eval wrote them into); ``filter_name`` picks one filter when the task logged several
    (default: the first one in the file)."""
    if not isinstance(samples, LMEvalSamples):
        samples = read_lm_eval_samples(samples, filter_name=filter_name, model=model)
    found = model or samples.model
    if found is None:
        raise InputError(f"{samples.path}: no model name (no results file, no folder); give CONDITION@MODEL=path")
    rows = [_row(rec, samples.path, i) for i, rec in enumerate(samples.records)]
    df = pd.DataFrame(rows)
    df.insert(1, "model", found)
    df.insert(2, "condition", condition)
    return df


def _row(rec: dict, path: Path, index: int) -> dict[str, Any]:
    if "target" not in rec:
        raise InputError(f"{path}: record {index + 1}: no 'target'; not a multiple-choice samples record")
    resps = rec.get("filtered_resps", rec.get("resps"))
    row: dict[str, Any] = {"item_id": str(rec["doc_id"]), "answer": _gold(rec["target"], path, index)}
    if _is_loglik(resps):
        row["response"] = _LETTERS[_argmax(resps, path, index)]
    else:
        row["response"] = _text(resps)
    doc = rec.get("doc")
    if isinstance(doc, dict) and "subject" in doc:
        row["subject"] = str(doc["subject"])
    return row


def _argmax(resps: list, path: Path, index: int) -> int:
    """The choice of highest log-likelihood (the first of tied ones, as lm-eval's argmax)."""
    if len(resps) > len(_LETTERS):  # a letter per choice: more choices than letters cannot be named
        raise InputError(f"{path}: record {index + 1}: {len(resps)} choices; the audit names choices by the letters "
                         f"{_LETTERS[0]}-{_LETTERS[-1]} (at most {len(_LETTERS)} choices)")
    try:
        scores = [float(r[0]) for r in resps]
    except (TypeError, ValueError):
        scores = []
    if len(scores) != len(resps) or not all(s == s for s in scores):
        raise InputError(f"{path}: record {index + 1}: filtered_resps holds a log-likelihood that is not a number "
                         f"({resps!r:.80}); expected one [loglik, is_greedy] per choice")
    return max(range(len(scores)), key=scores.__getitem__)


def _is_loglik(resps: Any) -> TypeGuard[list]:
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
