"""Vectorised n-gram matching over a batch of segments (the kernel behind BLEU and chrF).

Lines (token or character sequences) are given as one flat int64 id array plus per-line lengths.
For each order n every valid start position gets a dense n-gram id, built from the (n-1)-gram id
and the next unit (exact: no hashing, so no collisions). Counting is sort-based: a composite key
``line * n_ngrams + ngram`` is sorted once per order, reference counts are looked up with
``searchsorted``, and clipped matches are reduced per segment with ``bincount``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["Ragged", "clipped_matches", "ngram_totals"]


@dataclass(frozen=True)
class Ragged:
    """A list of integer sequences: ``ids`` (flat, values in ``[0, vocab)``) and per-line ``lengths``."""

    ids: np.ndarray
    lengths: np.ndarray
    vocab: int

    @property
    def n_lines(self) -> int:
        return len(self.lengths)


def ngram_totals(lengths: np.ndarray, max_order: int) -> np.ndarray:
    """Number of n-grams of each order per line: ``max(0, len - n + 1)``, shape ``(lines, max_order)``."""
    orders = np.arange(1, max_order + 1)
    return np.maximum(lengths[:, None] - orders[None, :] + 1, 0)


def _dense(keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids (0..k-1) for int64 keys, equal keys <-> equal ids."""
    if len(keys) == 0:
        return keys.astype(np.int64), 0
    uniq, inverse = np.unique(keys, return_inverse=True)
    return inverse.astype(np.int64, copy=False), len(uniq)


def _orders(pool: Ragged, max_order: int) -> Iterator[tuple[int, np.ndarray, np.ndarray, int]]:
    """Yield ``(n, line, ngram_id, n_ngram_ids)`` for every valid n-gram start position, order by order."""
    n_pos = len(pool.ids)
    line_of = np.repeat(np.arange(pool.n_lines, dtype=np.int64), pool.lengths)
    ends = np.cumsum(pool.lengths)
    remaining = ends[line_of] - np.arange(n_pos, dtype=np.int64)  # units from here to line end
    dense = pool.ids.astype(np.int64, copy=False)
    n_ids = max(int(pool.vocab), 1)
    for n in range(1, max_order + 1):
        pos = np.flatnonzero(remaining >= n)
        if n > 1:
            # (n-1)-gram id at i combined with the unit at i+n-1 identifies the n-gram at i
            keys = dense[pos] * np.int64(pool.vocab) + pool.ids[pos + n - 1]
            ids, n_ids = _dense(keys)
            dense = np.empty(n_pos, dtype=np.int64)
            dense[pos] = ids
        yield n, line_of[pos], dense[pos], max(n_ids, 1)


def _count_table(line: np.ndarray, gram: np.ndarray, n_ids: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys ``line * n_ids + gram`` and their counts."""
    keys = np.sort(line * np.int64(n_ids) + gram)
    if len(keys) == 0:
        return keys, keys.copy()
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    counts = np.diff(np.append(starts, len(keys)))
    return keys[starts], counts


def _lookup(table_keys: np.ndarray, table_counts: np.ndarray, queries: np.ndarray) -> np.ndarray:
    if len(table_keys) == 0:
        return np.zeros(len(queries), dtype=np.int64)
    j = np.searchsorted(table_keys, queries)
    j = np.minimum(j, len(table_keys) - 1)
    return np.where(table_keys[j] == queries, table_counts[j], 0)


def clipped_matches(
    pool: Ragged, n_hyps: int, ref_lines: list[np.ndarray], max_order: int, combine: str
) -> np.ndarray:
    """Clipped n-gram matches of hypothesis line ``i`` (pool lines ``0..n_hyps-1``) against references.

    ``ref_lines[k][i]`` is the pool line of reference stream ``k`` for hypothesis ``i`` (pool lines
    ``>= n_hyps``). ``combine="max"`` clips by the maximum count over the references (BLEU) and
    returns shape ``(n_hyps, max_order)``; ``combine="each"`` clips against every stream
    separately and returns ``(k, n_hyps, max_order)`` (chrF).
    """
    k = len(ref_lines)
    out = np.zeros((k if combine == "each" else 1, n_hyps, max_order), dtype=np.int64)
    for n, line, gram, n_ids in _orders(pool, max_order):
        is_hyp = line < n_hyps
        hyp_keys, hyp_counts = _count_table(line[is_hyp], gram[is_hyp], n_ids)
        ref_keys, ref_counts = _count_table(line[~is_hyp], gram[~is_hyp], n_ids)
        seg = hyp_keys // n_ids
        gram_of = hyp_keys - seg * n_ids
        found = [_lookup(ref_keys, ref_counts, ref_lines[s][seg] * np.int64(n_ids) + gram_of) for s in range(k)]
        if combine == "max":
            found = [np.maximum.reduce(found)] if k > 1 else found
        for s, ref_count in enumerate(found):
            clipped = np.minimum(hyp_counts, ref_count)
            out[s, :, n - 1] = np.bincount(seg, weights=clipped, minlength=n_hyps).astype(np.int64)
    return out[0] if combine == "max" else out


def take_lines(ragged: Ragged, rows: np.ndarray) -> Ragged:
    """The lines ``rows`` of ``ragged`` (in that order, repeats allowed) as a new Ragged."""
    starts = np.concatenate(([0], np.cumsum(ragged.lengths)[:-1])).astype(np.int64)
    lengths = ragged.lengths[rows]
    total = int(lengths.sum())
    # position j of output line i reads input starts[rows[i]] + j
    out_starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(out_starts - starts[rows], lengths)
    return Ragged(ragged.ids[offsets], lengths, ragged.vocab)


def build_pool(
    hyps: list[str], refs: list[list[str]], to_ragged: Callable[[list[str]], Ragged]
) -> tuple[Ragged, list[np.ndarray]]:
    """Pool of lines for :func:`clipped_matches`: one line per hypothesis, then each distinct reference.

    Each distinct string is preprocessed once (``to_ragged``). Returns the pool and, per reference
    stream, the pool line of each segment's reference.
    """
    import pandas as pd

    n = len(hyps)
    everything = np.array(hyps + [r for stream in refs for r in stream], dtype=object)
    codes, uniques = pd.factorize(everything)
    units = to_ragged(list(uniques))
    ref_codes = codes[n:]
    distinct_refs, ref_pos = np.unique(ref_codes, return_inverse=True)
    pool = take_lines(units, np.concatenate((codes[:n], distinct_refs)).astype(np.int64))
    ref_lines = [n + ref_pos[k * n : (k + 1) * n].astype(np.int64) for k in range(len(refs))]
    return pool, ref_lines


# Segments per kernel call: small enough that the per-order sorts stay in cache (measured:
# 500-1000 segments run ~1.5-2x faster per segment than 50,000 at once).
CHUNK = 1000


def in_chunks(func: Callable, hyps: list[str], refs: list[list[str]], width: int) -> np.ndarray:
    """Run ``func(hyps, refs) -> (n, width)`` over consecutive chunks of segments and stack the rows."""
    if not hyps:
        return np.zeros((0, width), dtype=np.int64)
    parts = [
        func(hyps[i : i + CHUNK], [stream[i : i + CHUNK] for stream in refs]) for i in range(0, len(hyps), CHUNK)
    ]
    return np.concatenate(parts, axis=0)
