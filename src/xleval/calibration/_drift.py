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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval.exceptions import DataQualityWarning, InputError, SignatureMismatchError

__all__ = ["make_probe", "make_probe_frames", "check_drift", "check_drift_frames", "check_probe", "DriftCheck",
           "DRIFT_ACTIONS", "is_model_signature"]

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


def _group_labels(df: Any, groups: list[str]) -> np.ndarray:
    labels = np.full(len(df), "*", dtype=object)
    for i, c in enumerate(groups):
        text = df[c].astype(str).to_numpy(dtype=object)
        labels = text if i == 0 else labels + "\t" + text
    return labels


def make_probe_frames(frames: Callable[[], Iterable[Any]], column: str, *, by: str | list[str] = "lp",
                      per_group: int = 5, random_state: int = 0, signature: str | None = None) -> dict:
    """:func:`make_probe` of a table read in parts (``frames()``: its batches in order, called twice: once to
    count each group's rows, once to take the drawn ones): the same rows, keys and scores as ``make_probe`` of
    the whole table, in bounded memory (a streamed ``calibrate fit``)."""
    if isinstance(per_group, bool) or not isinstance(per_group, int) or per_group < 1:
        raise InputError(f"per_group must be a positive integer, got {per_group!r}", argument="per_group",
                         value=per_group)
    wanted = [by] if isinstance(by, str) else list(by)
    counts: dict[str, int] = {}
    n, mean, m2 = 0, 0.0, 0.0  # the column's moments, merged batch by batch (Chan et al.)
    keys: list[str] | None = None
    for df in frames():
        if keys is None:
            keys = [c for c in _KEYS if c in df.columns]
        scores = np.asarray(df[column], dtype=float)
        finite = np.isfinite(scores)
        for label, k in zip(*np.unique(_group_labels(df, [c for c in wanted if c in df.columns])[finite],
                                       return_counts=True), strict=True):
            counts[label] = counts.get(label, 0) + int(k)
        v = scores[finite]
        if v.size:
            nb, mb = v.size, float(v.mean())
            delta, total = mb - mean, n + nb
            mean, m2 = mean + delta * nb / total, m2 + float(((v - mb) ** 2).sum()) + delta * delta * n * nb / total
            n = total
    if not keys:
        raise InputError(f"a drift probe finds its rows again by their ids or texts, and the table has none of "
                         f"{', '.join(_KEYS)}", argument="frames")
    rng = np.random.default_rng(random_state)  # drawn as make_probe draws: groups sorted, rows by position
    order = sorted(counts)
    picks = {label: set(rng.choice(counts[label], size=min(per_group, counts[label]), replace=False).tolist())
             for label in order}
    seen = dict.fromkeys(order, 0)
    taken: list[tuple[int, int, str, str, float]] = []
    rank = {label: i for i, label in enumerate(order)}
    for df in frames():
        scores = np.asarray(df[column], dtype=float)
        rows = np.flatnonzero(np.isfinite(scores))
        labels = _group_labels(df, [c for c in wanted if c in df.columns])[rows]
        for label in np.unique(labels):
            at = rows[labels == label]
            position = seen.get(label, 0) + np.arange(len(at))
            seen[label] = seen.get(label, 0) + len(at)
            keep = np.isin(position, list(picks.get(label, ())))
            at, position = at[keep], position[keep]
            for r, pos, key in zip(at, position, _row_keys(df.iloc[at], keys), strict=True):
                taken.append((rank[label], int(pos), key, label, float(scores[r])))
    taken.sort()
    return {"version": PROBE_VERSION, "column": column, "signature": signature, "key_columns": keys,
            "scale": float(np.sqrt(m2 / n)) if n else float("nan"), "random_state": random_state,
            "rows": [{"key": k, "group": g, "score": s} for _, _, k, g, s in taken]}


@dataclass(frozen=True)
class DriftCheck:
    """What ``check_drift`` found: probe rows ``matched`` in the table, how many ``moved`` beyond ``threshold``
    (absolute: ``tolerance`` x the column's standard deviation at fit), the largest change ``max_change``."""

    matched: int
    moved: int
    max_change: float
    threshold: float
    probe_rows: int


def check_probe(probe: Any) -> None:
    """A probe read from a calibrator file is what :func:`make_probe` writes (ValueError otherwise, which the
    loader turns into one line): a column name, key columns, a scale and rows of a key and a finite score."""
    if not isinstance(probe, dict):
        raise ValueError("the drift probe is not a JSON object")
    keys, rows, scale = probe.get("key_columns"), probe.get("rows"), probe.get("scale")
    if not isinstance(probe.get("column"), str) or not probe["column"]:
        raise ValueError("the drift probe names no score column")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
        raise ValueError("the drift probe's key_columns is not a non-empty list of column names")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (scale >= 0 or scale != scale):
        raise ValueError("the drift probe's scale is not a number >= 0")
    if not isinstance(rows, list) or not all(
            isinstance(r, dict) and isinstance(r.get("key"), str) and not isinstance(r.get("score"), bool)
            and isinstance(r.get("score"), (int, float)) and np.isfinite(r["score"]) for r in rows):
        raise ValueError("the drift probe's rows are not a list of {key, score} with finite scores")


def check_drift(probe: dict, df: Any, column: str | None = None, *, tolerance: float = 0.01,
                on_drift: str = "error", where: str = "input") -> DriftCheck:
    """Compare the probe's scores with ``df``'s (``column``, default the probe's). ``on_drift``: ``error``
    raises :class:`SignatureMismatchError`, ``warn`` warns (DataQualityWarning), ``ignore`` only returns."""
    return check_drift_frames(probe, [df], column, tolerance=tolerance, on_drift=on_drift, where=where)


def check_drift_frames(probe: dict, frames: Iterable[Any], column: str | None = None, *, tolerance: float = 0.01,
                       on_drift: str = "error", where: str = "input") -> DriftCheck:
    """:func:`check_drift` over a table read in parts (``frames``: its batches in order, e.g. a streamed
    file's): the probe rows are looked up in every part, then compared once."""
    if on_drift not in DRIFT_ACTIONS:
        raise InputError(f"on_drift must be one of {', '.join(DRIFT_ACTIONS)}, got {on_drift!r}",
                         argument="on_drift", value=on_drift)
    column = column or probe["column"]
    keys = list(probe["key_columns"])
    rows = probe["rows"]
    threshold = float(tolerance) * float(probe.get("scale") or 0.0)
    wanted = {r["key"] for r in rows}
    found: dict[str, float] = {}
    for df in frames:
        if column not in df.columns or any(k not in df.columns for k in keys):
            continue
        scores = np.asarray(df[column], dtype=float)
        found.update((k, s) for k, s in zip(_row_keys(df, keys), scores, strict=True) if k in wanted)
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
