"""A persistent cache of neural segment scores, so that re-scoring an unchanged row costs nothing.

A cache is an SQLite file holding the scores of **one** metric signature (model, variant,
precision, package versions, xleval version): the signature is stored in the file when it is
created, and a file made under another signature is refused (:class:`SignatureMismatchError`),
so scores of two models, or of two versions, can never be mixed up. Rows are keyed by a hash of
what the metric reads (hypothesis, references when the metric reads them, source).

``cache=`` given a **directory** keeps one file per signature in it
(``DIR/<metric>-<hash of the signature>.sqlite``): one directory serves every metric and every
model, and a changed option simply starts a new file.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xleval.exceptions import InputError, SignatureMismatchError

__all__ = ["ScoreCache", "cache_file", "row_keys"]

_SCHEMA = ("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
           "CREATE TABLE IF NOT EXISTS scores (row BLOB PRIMARY KEY, score REAL NOT NULL);")
_TABLES = {"meta": ["key", "value"], "scores": ["row", "score"]}
#: a table a scorer may keep beside the scores: an LLM judge's answers per request (xleval.metrics._judge)
_OPTIONAL_TABLES = {"answers": ["request", "answer"]}
_CHUNK = 500  # SQLite's limit on bound parameters is 999 in old builds


def cache_file(cache: str | os.PathLike, metric: str, signature: str,
               bounds: tuple[float, float] = (-math.inf, math.inf)) -> Path:
    """The cache file for ``signature``: ``cache`` itself, or a file per signature inside a directory. The file
    is opened (created when new) now, before any scoring: a file of another signature, a file that is not a
    cache, or one SQLite cannot open or write is refused before the model runs."""
    if not isinstance(cache, str | os.PathLike) or not str(cache).strip():
        raise InputError(f"cache must be a file or directory path, got {cache!r}", argument="cache", value=cache)
    path = Path(cache).expanduser()
    if path.is_dir() or str(cache).endswith(("/", os.sep)):
        digest = hashlib.sha256(signature.encode("utf-8")).hexdigest()[:16]
        path = path / f"{metric}-{digest}.sqlite"
    if not path.parent.is_dir():
        raise InputError(f"cache {str(path)!r}: the folder {str(path.parent)!r} does not exist; create it first",
                         argument="cache", value=str(cache))
    ScoreCache(path, signature, bounds).check()
    return path


def row_keys(hyps: Sequence[str], refs: Sequence[Sequence[str | None]] | None,
             srcs: Sequence[str] | None) -> list[bytes]:
    """One 16-byte key per row, from every input the metric reads."""
    keys = []
    for i, hyp in enumerate(hyps):
        row = [hyp, None if refs is None else [s[i] for s in refs], None if srcs is None else srcs[i]]
        keys.append(hashlib.blake2b(json.dumps(row, ensure_ascii=False).encode("utf-8"), digest_size=16).digest())
    return keys


class ScoreCache:
    """The scores of one metric signature in an SQLite file (created on first write)."""

    def __init__(self, path: str | os.PathLike, signature: str,
                 bounds: tuple[float, float] = (-math.inf, math.inf)) -> None:
        self.path = Path(path)
        self.signature = signature
        self.bounds = bounds

    def _sqlite_error(self, exc: sqlite3.Error, doing: str) -> InputError:
        """One line for an SQLite failure (a locked, read-only, damaged or vanished cache file)."""
        return InputError(f"cache {str(self.path)!r}: SQLite cannot {doing} it ({exc}); check that the file and "
                          "its folder are writable and that no other process holds it, or give another path for "
                          "cache=", argument="cache", value=str(self.path))

    def _connect(self) -> sqlite3.Connection:
        try:
            new = not self.path.exists() or self.path.stat().st_size == 0
        except OSError as exc:
            raise InputError(f"cache {str(self.path)!r}: cannot be read ({exc.strerror or exc}); give another path "
                             "for cache=", argument="cache", value=str(self.path)) from None
        try:
            con = sqlite3.connect(self.path, timeout=60)
        except sqlite3.Error as exc:
            raise self._sqlite_error(exc, "open") from None
        try:
            if new:
                con.executescript(_SCHEMA)
            # read before anything is written: another program's SQLite file is refused untouched
            tables = {name: [c[1] for c in con.execute(f"PRAGMA table_info('{name}')")]
                      for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            extra = {name: columns for name, columns in tables.items() if name not in _TABLES}
            if {n: c for n, c in tables.items() if n in _TABLES} != _TABLES or any(
                    _OPTIONAL_TABLES.get(name) != columns for name, columns in extra.items()):
                raise sqlite3.DatabaseError(f"its tables are {sorted(tables)}, not an xleval cache's meta and scores")
            row = con.execute("SELECT value FROM meta WHERE key = 'signature'").fetchone()
        except sqlite3.DatabaseError as exc:
            con.close()
            raise InputError(f"cache {str(self.path)!r} is not an xleval score cache ({exc}); give another path "
                             "(or a directory) for cache=", argument="cache", value=str(self.path)) from None
        except sqlite3.Error as exc:
            con.close()
            raise self._sqlite_error(exc, "open") from None
        if row is None:
            try:
                with con:
                    con.execute("INSERT INTO meta VALUES ('signature', ?)", (self.signature,))
            except sqlite3.Error as exc:
                con.close()
                raise self._sqlite_error(exc, "write") from None
        elif row[0] != self.signature:
            con.close()
            raise SignatureMismatchError(
                f"cache {str(self.path)!r} holds scores of another metric signature ({row[0]!r}); give each "
                "metric signature its own cache file, or a directory (one file per signature)",
                argument="cache", value=str(self.path))
        return con

    def check(self) -> None:
        """Refuse a file of another signature (or not a cache) without reading its scores."""
        self._connect().close()

    def get(self, keys: Sequence[bytes]) -> np.ndarray:
        """The cached score of each key; NaN where the row is not in the cache."""
        out = np.full(len(keys), np.nan)
        if not self.path.exists():
            return out
        where = {k: i for i, k in enumerate(keys)}
        con = self._connect()
        try:
            for start in range(0, len(keys), _CHUNK):
                part = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(part))
                for key, score in con.execute(f"SELECT row, score FROM scores WHERE row IN ({marks})", part):
                    out[where[bytes(key)]] = self._checked(score)
        except sqlite3.Error as exc:
            raise self._sqlite_error(exc, "read") from None
        finally:
            con.close()
        # a key repeated in ``keys`` (the same row twice) shares the first one's score
        if len(where) < len(keys):
            for i, k in enumerate(keys):
                out[i] = out[where[k]]
        return out

    def put(self, keys: Sequence[bytes], scores: Sequence[float] | np.ndarray) -> None:
        rows = [(k, float(s)) for k, s in zip(keys, scores, strict=True) if np.isfinite(s)]
        con = self._connect()
        try:
            with con:
                con.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?)", rows)
        except sqlite3.Error as exc:
            raise self._sqlite_error(exc, "write") from None
        finally:
            con.close()

    def _checked(self, score: object) -> float:
        """A cached value as a score of the metric: a finite number within its range (a value edited into the
        file, or another program's row, is refused rather than written out as a score)."""
        low, high = self.bounds
        slack = 1e-6 * max(1.0, abs(low) if math.isfinite(low) else 1.0, abs(high) if math.isfinite(high) else 1.0)
        if (isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
                or not low - slack <= score <= high + slack):
            raise InputError(f"cache {str(self.path)!r} holds a score {score!r} that the metric cannot give (its "
                             f"range is [{low}, {high}]): the file was edited or damaged; delete it (the rows are "
                             "scored again)", argument="cache", value=str(self.path))
        return float(score)
