"""Drift probes: a few rows per group with their scores, kept in a calibrator fitted on a model-based column, so
that applying it to new scores of the same signature can tell when the numbers moved.

A signature names everything xleval knows changes a score (model, precision, package versions); some changes it
cannot see: weights replaced in a folder of the same name (COMET's and BERTScore's signatures name the folder),
a GPU kernel or a library version outside the signature, a server that swapped the model behind one name. A
calibrator fitted on the old numbers then maps the new ones wrongly without any error. The probe is the check:
``make_probe`` picks ``per_group`` rows of every group (seeded) and stores a key of each (its id columns and
texts) and its score; ``check_drift`` finds those rows in a new table and compares. A score that moved by more
than ``tolerance`` times the column's standard deviation at fit is drift: refused (``on_drift="error"``) or
warned about (``"warn"``). The rows are found again by key; a table without them cannot be checked and says so.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval.exceptions import DataQualityWarning, InputError, SignatureMismatchError

__all__ = ["make_probe", "check_drift", "DriftCheck", "DRIFT_ACTIONS", "is_model_signature"]

PROBE_VERSION = 1
DRIFT_ACTIONS = ("error", "warn", "ignore")
_KEYS = ("lp", "src_lang", "tgt_lang", "system", "doc_id", "seg_id", "source", "hypothesis", "reference")


def is_model_signature(signature: str | None) -> bool:
    """Whether a column's signature names a model (neural metrics and judges: a ``model:`` field)."""
    return bool(signature) and any(f.startswith("model:") for f in str(signature).split("|"))


def _row_keys(df: Any, columns: list[str]) -> list[str]:
    values = df[columns].astype(str).to_numpy().tolist()
    return [hashlib.blake2b(json.dumps(v, ensure_ascii=False).encode("utf-8"), digest_size=12).hexdigest()
            for v in values]


def make_probe(df: Any, column: str, *, by: str | list[str] = "lp", per_group: int = 5, random_state: int = 0,
               signature: str | None = None) -> dict:
    """A probe of ``column``: up to ``per_group`` rows with a finite score from every ``by`` group, drawn with
    ``random_state``; each row's key (a hash of the id and text columns present) and score."""
    if isinstance(per_group, bool) or not isinstance(per_group, int) or per_group < 1:
        raise InputError(f"per_group must be a positive integer, got {per_group!r}", argument="per_group",
                         value=per_group)
    groups = [by] if isinstance(by, str) else list(by)
    keys = [c for c in _KEYS if c in df.columns]
    if not keys:
        raise InputError(f"a drift probe finds its rows again by their ids or texts, and the table has none of "
                         f"{', '.join(_KEYS)}", argument="df")
    scores = np.asarray(df[column], dtype=float)
    finite = np.isfinite(scores)
    rng = np.random.default_rng(random_state)
    picked: list[int] = []
    groups = [c for c in groups if c in df.columns]  # a derived group column (tgt_lang from lp) may be absent
    labels = np.full(len(df), "*", dtype=object)
    for i, c in enumerate(groups):
        text = df[c].astype(str).to_numpy(dtype=object)
        labels = text if i == 0 else labels + "\t" + text
    for label in sorted(set(labels[finite])):
        rows = np.flatnonzero((labels == label) & finite)
        picked += sorted(rng.choice(rows, size=min(per_group, len(rows)), replace=False).tolist())
    sub = df.iloc[picked]
    return {"version": PROBE_VERSION, "column": column, "signature": signature, "key_columns": keys,
            "scale": float(np.std(scores[finite])) if finite.any() else float("nan"), "random_state": random_state,
            "rows": [{"key": k, "group": g, "score": float(s)}
                     for k, g, s in zip(_row_keys(sub, keys), labels[picked], scores[picked], strict=True)]}


@dataclass(frozen=True)
class DriftCheck:
    """What ``check_drift`` found: probe rows ``matched`` in the table, how many ``moved`` beyond ``threshold``
    (absolute: ``tolerance`` x the column's standard deviation at fit), the largest change ``max_change``."""

    matched: int
    moved: int
    max_change: float
    threshold: float
    probe_rows: int


def check_drift(probe: dict, df: Any, column: str | None = None, *, tolerance: float = 0.01,
                on_drift: str = "error", where: str = "input") -> DriftCheck:
    """Compare the probe's scores with ``df``'s (``column``, default the probe's). ``on_drift``: ``error``
    raises :class:`SignatureMismatchError`, ``warn`` warns (DataQualityWarning), ``ignore`` only returns."""
    if on_drift not in DRIFT_ACTIONS:
        raise InputError(f"on_drift must be one of {', '.join(DRIFT_ACTIONS)}, got {on_drift!r}",
                         argument="on_drift", value=on_drift)
    column = column or probe["column"]
    keys = list(probe["key_columns"])
    rows = probe["rows"]
    threshold = float(tolerance) * float(probe.get("scale") or 0.0)
    if column not in df.columns or any(k not in df.columns for k in keys):
        found: dict[str, float] = {}
    else:
        scores = np.asarray(df[column], dtype=float)
        found = dict(zip(_row_keys(df, keys), scores, strict=True))
    pairs = [(r["score"], found[r["key"]]) for r in rows if r["key"] in found]
    changes = np.array([abs(new - old) if np.isfinite(new) else np.inf for old, new in pairs])
    moved = int((changes > threshold).sum()) if len(changes) else 0
    result = DriftCheck(len(pairs), moved, float(changes.max()) if len(changes) else float("nan"), threshold,
                        len(rows))
    if on_drift == "ignore":
        return result
    if not pairs:
        warnings.warn(f"{where}: none of the calibrator's {len(rows)} drift-probe rows are in this table (found by "
                      f"{', '.join(keys)}); whether the {column} scores moved since the fit is not checked",
                      DataQualityWarning, stacklevel=3)
    elif moved:
        message = (f"{where}: {column} scores moved since the calibrator was fitted: {moved} of {len(pairs)} "
                   f"probe rows differ by more than {threshold:.3g} (largest change {result.max_change:.3g}), under "
                   "the same signature: the model, its precision or a library changed the numbers; refit the "
                   "calibrator on these scores (or apply with on_drift='warn' to proceed)")
        if on_drift == "error":
            raise SignatureMismatchError(message, argument="on_drift", value=on_drift)
        warnings.warn(message, DataQualityWarning, stacklevel=3)
    return result
