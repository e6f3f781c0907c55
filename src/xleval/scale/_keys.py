"""Repeated (pair, system, segment) keys of a streamed table, found as :func:`xleval.table.warn_repeated_keys`
finds them in memory, without collecting the rows.

Each batch gives, for its rows with a finite score and no gap in the key, a 64-bit hash of the key values and the
score (:class:`KeyedScores`, 16 bytes a row; about twice that at the end, while they are sorted). At the end the
pairs are sorted by hash, and a hash with two different scores is a key that repeats with different scores
(:func:`offending_hashes`). The example the warning names, and its scores, come from a second pass over the file,
taken only when a key repeats (:func:`first_repeated_key`): the smallest such key on the real key values, the one
the in-memory check names.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["KeyedScores", "keyed_scores", "concatenated", "offending_hashes", "first_repeated_key"]


@dataclass(frozen=True)
class KeyedScores:
    """A hash of each row's key (uint64) and its score (float64)."""

    hashes: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.hashes)


def _kept(frame: pd.DataFrame, key: Sequence[str], score: str) -> pd.DataFrame:
    """The rows the in-memory check reads: a finite score and every key value present."""
    rows = frame[[*key, score]]
    keep = np.isfinite(rows[score].to_numpy(dtype=float)) & ~rows[list(key)].isna().any(axis=1).to_numpy()
    return rows if keep.all() else rows[keep]  # a key with a gap repeats nothing


def hash_keys(rows: pd.DataFrame, key: Sequence[str]) -> np.ndarray:
    """uint64 hashes of the key values of ``rows``, the same for equal values in any batch: the readers give
    every batch the whole file's column types, and a categorical column hashes as its values."""
    return pd.util.hash_pandas_object(rows[list(key)], index=False).to_numpy(dtype=np.uint64)


def keyed_scores(frame: pd.DataFrame, key: Sequence[str], score: str) -> KeyedScores:
    """The (hash, score) pairs of a batch's rows."""
    rows = _kept(frame, key, score)
    return KeyedScores(hash_keys(rows, key), rows[score].to_numpy(dtype=float))


def concatenated(parts: Sequence[KeyedScores]) -> KeyedScores:
    """The pairs of ``parts`` in one."""
    if not parts:
        return KeyedScores(np.empty(0, np.uint64), np.empty(0, float))
    return KeyedScores(np.concatenate([p.hashes for p in parts]), np.concatenate([p.scores for p in parts]))


def offending_hashes(pairs: KeyedScores) -> np.ndarray:
    """The sorted hashes that carry two or more different scores (-0.0 and 0.0 are one score, as pandas' nunique
    counts them): the pairs of the hashes that repeat sorted by hash, and each run of one hash's lowest and highest
    score. The hashes alone are sorted first (a plain sort of integers is ~4x faster than sorting the pairs), so a
    table whose keys do not repeat costs one such sort."""
    hashes, scores = pairs.hashes, pairs.scores
    ordered = np.sort(hashes)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    del ordered
    if not len(repeated):
        return repeated
    repeated = repeated[np.r_[True, repeated[1:] != repeated[:-1]]]
    at = np.minimum(np.searchsorted(repeated, hashes), len(repeated) - 1)
    keep = repeated[at] == hashes
    hashes, scores = hashes[keep], scores[keep]
    order = np.argsort(hashes)
    hashes, scores = hashes[order], scores[order]
    del order
    starts = np.flatnonzero(np.r_[True, hashes[1:] != hashes[:-1]])
    differ = np.minimum.reduceat(scores, starts) < np.maximum.reduceat(scores, starts)
    return hashes[starts[differ]]


def first_repeated_key(batches: Callable[[], Iterable[pd.DataFrame]], key: Sequence[str], score: str,
                       hashes: np.ndarray) -> tuple[tuple, float, float] | None:
    """The smallest key (in the in-memory check's order: by value, column after column) whose hash is one of
    ``hashes`` and whose rows hold different scores, with its lowest and highest score: a second pass over the
    table (``batches()`` reads its batches again, prepared as the fit prepares them).

    The smallest candidate key of the table is the smallest of some batch, so each batch gives its smallest one
    with its scores' range, and the ranges of the batches that hold it are all its rows'. A hash can be shared by
    two keys (2**-64 for a pair of keys), so the candidate is checked on its real values: a key whose scores agree
    is set aside and the next pass looks beyond it (None when no key is left)."""
    skip: set[tuple] = set()
    while True:
        best: tuple[tuple, float, float] | None = None
        for frame in batches():
            found = _smallest_in_batch(frame, key, score, hashes, skip)
            if found is not None:
                best = found if best is None else _smaller(best, found)
        if best is None:
            return None
        if best[1] < best[2]:
            return best
        skip.add(best[0])


def _smallest_in_batch(frame: pd.DataFrame, key: Sequence[str], score: str, hashes: np.ndarray,
                       skip: set[tuple]) -> tuple[tuple, float, float] | None:
    rows = _kept(frame, key, score)
    h = hash_keys(rows, key)
    at = np.minimum(np.searchsorted(hashes, h), len(hashes) - 1)
    rows = rows[hashes[at] == h]
    if skip and len(rows):
        rows = rows[~pd.MultiIndex.from_frame(rows[list(key)].astype(object)).map(_plain).isin(list(skip))]
    for column in key:  # the smallest value of each column among the rows with the smaller ones before
        if rows.empty:
            return None
        values = rows[column]
        if isinstance(values.dtype, pd.CategoricalDtype):  # by value, as the in-memory table's text columns sort
            values = values.astype(values.cat.categories.dtype)
        rows = rows[(values == _smallest(values)).to_numpy()]
    scores = rows[score].to_numpy(dtype=float)
    return _plain(tuple(rows.iloc[0][list(key)])), float(scores.min()), float(scores.max())


def _smallest(values: pd.Series) -> Any:
    try:
        return values.min()
    except TypeError:  # values of two types in one column (a JSONL id): an order, not the in-memory one
        return min(values.unique(), key=repr)


def _plain(values: tuple) -> tuple:
    return tuple(v.item() if isinstance(v, np.generic) else v for v in values)


def _smaller(a: tuple[tuple, float, float], b: tuple[tuple, float, float]) -> tuple[tuple, float, float]:
    """The smaller key of ``a`` and ``b``; for one key, the range of both."""
    if a[0] == b[0]:
        return a[0], min(a[1], b[1]), max(a[2], b[2])
    return a if _before(a[0], b[0]) else b


def _before(a: tuple, b: tuple) -> bool:
    try:
        return bool(a < b)
    except TypeError:  # as in _smallest
        return repr(a) < repr(b)
