"""Validation of the audit's long table: one row per item x model x condition.

Columns: ``item_id``, ``model``, ``condition`` (see :data:`CONDITIONS`), and either ``correct``
(0/1; empty = no valid answer) or ``response`` + ``answer`` (parsed with an
:class:`AnswerParser`); optional ``model_family``, ``subject``, ``residual``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from xleval.audit._parse import AnswerParser
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import to_numeric_column

__all__ = ["CONDITIONS", "CONDITION_ALIASES", "POOLED_MODEL", "prepare_audit_table"]

#: the model name of the contrasts averaged over models
POOLED_MODEL = "pooled"

CONDITIONS = ("source", "translated", "back_translated", "native", "naturalized")
CONDITION_ALIASES = {
    "original": "source", "english": "source", "en": "source",
    "translation": "translated", "mt": "translated",
    "back-translated": "back_translated", "backtranslated": "back_translated", "back_translation": "back_translated",
    "bt": "back_translated", "natural": "naturalized", "naturalised": "naturalized", "native_control": "native",
}


def prepare_audit_table(df: pd.DataFrame, parser: AnswerParser | None = None, where: str = "input") -> pd.DataFrame:
    """A checked copy with canonical columns: item_id, model, model_family, condition, subject,
    residual, parsed (letter or None), valid (bool), correct (0/1, NaN when not valid)."""
    missing = [c for c in ("item_id", "model", "condition") if c not in df.columns]
    if missing:
        raise InputError(f"{where}: missing column(s) {missing}; the audit needs item_id, model, condition and "
                         f"correct (or response + answer); its columns are {list(df.columns)}")
    for column in ("item_id", "model", "condition", "model_family"):
        if column in df.columns:
            check_filled(df[column], column, where)
    out = pd.DataFrame({
        "item_id": df["item_id"].astype(str),
        "model": df["model"].astype(str),
        "condition": _conditions(df["condition"], where),
    }, index=df.index)
    _check_model_names(out["model"], where)
    out["model_family"] = df["model_family"].astype(str) if "model_family" in df else out["model"]
    out["subject"] = df["subject"].astype(str).where(df["subject"].notna()) if "subject" in df else "all"
    out["residual"] = to_numeric_column(df["residual"], "residual", where) if "residual" in df else np.nan
    _check_residuals(out["residual"], where)
    _check_duplicates(out, where)
    # one value per model (family) and per item (subject, residual): otherwise the first row would win and the
    # family test, the subject clusters and the residual strata would depend on the order of the rows
    _check_constant(out, "model", "model_family", where)
    _check_constant(out, "item_id", "subject", where)
    _check_constant(out, "item_id", "residual", where)
    if out["subject"].isna().any():
        # a row without a subject (an lm-eval log whose docs have none, beside one whose docs have it) takes its
        # item's subject from the other rows; an item with none at all is one cluster of its own
        known = out["subject"].groupby(out["item_id"]).transform("first")
        out["subject"] = known.fillna("(no subject) " + out["item_id"])
    if "response" in df.columns and "answer" in df.columns:
        _parse_responses(out, df, parser or AnswerParser(), where)
    elif "correct" in df.columns:
        _given_correct(out, df, where)
    else:
        raise InputError(f"{where}: give a 'correct' column (0/1) or both 'response' and 'answer' columns")
    return out.reset_index(drop=True)


def check_filled(col: pd.Series, column: str, where: str, why: str = "") -> None:
    """Refuse an empty (missing or blank) cell, naming its column, first row and count; ``why`` says what the rows
    are, before the fix. An empty cell would become the name "nan" (or "") and silently form a model, item, rater
    or group of its own (or drop a rating out of kappa and alpha)."""
    empty = col.isna().to_numpy() | (col.astype(str).str.strip() == "").to_numpy()
    if empty.any():
        first = int(np.flatnonzero(empty)[0])
        raise InputError(f"{where}: column {column!r} row {first + 1} is empty ({int(empty.sum())} empty cell(s) in "
                         f"all); {why}fill it in or drop those rows")


def _check_model_names(models: pd.Series, where: str) -> None:
    # the models-averaged contrast is reported under the model name "pooled": a model of that name would give two
    # rows of one name, and AuditResult.contrast(key, "pooled") would return either
    hit = (models == POOLED_MODEL).to_numpy()
    if hit.any():
        first = int(np.flatnonzero(hit)[0])
        raise InputError(f"{where}: column 'model' row {first + 1}: a model is named {POOLED_MODEL!r}, the name of "
                         "the contrasts averaged over models; rename that model in the table")


def _check_residuals(residual: pd.Series, where: str) -> None:
    bad = np.isinf(residual.to_numpy(dtype=float))
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where}: column 'residual' row {first + 1}: {residual.iloc[first]} is not a finite "
                         "rating; give the item's translation-residual rating (or leave it empty)")


def _check_constant(out: pd.DataFrame, key: str, column: str, where: str) -> None:
    values = out[[key, column]].dropna()
    counts = values.drop_duplicates().groupby(key, sort=False)[column].count()
    if (counts > 1).any():
        name = counts.index[np.flatnonzero((counts > 1).to_numpy())[0]]
        rows = np.flatnonzero((out[key] == name).to_numpy())
        seen = list(dict.fromkeys(out[column].iloc[rows].dropna().tolist()))[:2]
        firsts = [int(rows[np.flatnonzero((out[column].iloc[rows] == v).to_numpy())[0]]) + 1 for v in seen]
        raise InputError(f"{where}: column {column!r}: {key} {name!r} has {seen[0]!r} (row {firsts[0]}) and "
                         f"{seen[1]!r} (row {firsts[1]}); give each {key} one {column}")


def _conditions(col: pd.Series, where: str) -> pd.Series:
    norm = col.astype(str).str.strip().str.lower().str.replace(" ", "_")
    norm = norm.map(lambda c: CONDITION_ALIASES.get(c, c))
    bad = ~norm.isin(CONDITIONS)
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        unknown = sorted(set(col[bad.to_numpy()].astype(str)))
        raise InputError(f"{where}: column 'condition' row {first + 1}: {col.iloc[first]!r} is not a condition "
                         f"(unknown: {', '.join(map(repr, unknown))}); use one of {', '.join(CONDITIONS)} "
                         f"(also accepted: {', '.join(sorted(CONDITION_ALIASES))})")
    return norm


def _check_duplicates(out: pd.DataFrame, where: str) -> None:
    dup = out.duplicated(["item_id", "model", "condition"], keep=False)
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())[:2] + 1
        first = out[dup].iloc[0]
        raise InputError(f"{where}: rows {rows.tolist()} repeat item {first['item_id']!r} for model {first['model']!r} "
                         f"in condition {first['condition']!r}; keep one row per item x model x condition")


def _parse_responses(out: pd.DataFrame, df: pd.DataFrame, parser: AnswerParser, where: str) -> None:
    if "correct" in df.columns:
        warnings.warn(f"{where}: both 'correct' and 'response'/'answer' given; correctness is recomputed from the "
                      f"parsed responses ({parser.description}) and 'correct' is ignored", DataQualityWarning,
                      stacklevel=3)
    answers = df["answer"].astype(str).str.strip().str.upper()
    bad = ~answers.isin(list(parser.letters.upper()))
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        extra = sorted({a for a in answers[bad] if len(a) == 1 and a.isalpha()})
        wider = f", or the letters the items use (letters={parser.letters + ''.join(extra)!r})" if extra else ""
        raise InputError(f"{where}: column 'answer' row {first + 1}: {df['answer'].iloc[first]!r} is not one of the "
                         f"answer letters {parser.letters!r}; give the gold letter{wider}")
    out["parsed"] = parser.parse_many(df["response"])
    out["valid"] = out["parsed"].notna()
    out["correct"] = np.where(out["valid"], (out["parsed"] == answers).astype(float), np.nan)


def _given_correct(out: pd.DataFrame, df: pd.DataFrame, where: str) -> None:
    values = to_numeric_column(df["correct"], "correct", where)
    bad = values.notna() & ~values.isin([0.0, 1.0])
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{where}: column 'correct' row {first + 1}: {df['correct'].iloc[first]!r} is not 0 or 1 "
                         "(leave it empty when no answer could be parsed)")
    out["parsed"] = None
    out["valid"] = values.notna().to_numpy()
    out["correct"] = values.to_numpy()
