"""Compiled (numba) TER: sacrebleu's ``lib_ter.translation_edit_rate`` replayed on token ids.

Imported only when numba is installed (``_ter`` falls back to sacrebleu's own pure-Python code).
Every step of sacrebleu 2.x is replayed literally, so the edit counts are the same integers:

* the beam edit distance (``BeamEditDistance._edit_distance``): rows of the matrix are computed
  only on a band around the pseudo-diagonal ``floor(i * len_ref / len_hyp)`` of half-width 25
  (wider for very unequal lengths), the last row in full; a cell keeps the first of no-op/substitution,
  deletion, insertion that is strictly cheaper than the cell's current cost (which starts at
  sacrebleu's "infinity"), so the traceback is sacrebleu's;
* sacrebleu's row cache only skips rows that are the same for every hypothesis sharing a prefix
  (all hypotheses of one segment have the same length, so the band is the same), so each candidate
  shift here restarts from the current hypothesis' row at the first position where the two differ;
* the shift search (``_shift`` and ``_find_shifted_pairs``): the same candidate order (hypothesis
  start, reference start, length 1..10, offset -1..length-1), the same filters (both sides must
  hold an error, no shift inside its own span, distance at most 50), the same ranking
  (edit-distance gain, then longer, then earlier start, then earlier target; ties keep the first)
  and the same budget of 1,000 candidates per segment, counted across iterations (a search that
  reaches it is discarded, as sacrebleu does);
* ``_perform_shift`` with Python's slice clamping.

A pair on which sacrebleu's code would raise (an undefined cell in the traceback, or a shift that
changes the length, which sacrebleu asserts against) is flagged, and ``_ter`` hands it to sacrebleu.
Rows are stored as bands (``(hi - lo)`` cells each), so memory grows with ``len * 50``, not
``len_hyp * len_ref``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_INF = np.int64(10**16)  # sacrebleu's _INT_INFINITY
_MAX_SHIFT_SIZE = 10
_MAX_SHIFT_DIST = 50
_BEAM_WIDTH = 25
_MAX_SHIFT_CANDIDATES = 1000

# operations (sacrebleu's ' ', 's', 'i', 'd', 'x')
_NOP = 0
_SUB = 1
_INS = 2
_DEL = 3
_UNDEF = 4

_OK = 0
_FAILED = 1  # sacrebleu raises on this pair: let it


@njit(cache=True)
def _beam(n_h, n_r):
    """sacrebleu's length ratio and beam width for a hypothesis of ``n_h`` words."""
    ratio = n_r / n_h if n_h > 0 else 1.0
    if ratio / 2 > _BEAM_WIDTH:
        return ratio, int(math.ceil(ratio / 2 + _BEAM_WIDTH))  # noqa: RUF046 - an int64 for numba
    return ratio, _BEAM_WIDTH


@njit(cache=True)
def _bands(n_h, n_r, ratio, width, lo, hi, start):
    """Band ``[lo[i], hi[i])`` of each row and its offset ``start[i]`` in the banded storage; returns the size."""
    lo[0] = 0
    hi[0] = n_r + 1
    start[0] = 0
    size = n_r + 1
    for i in range(1, n_h + 1):
        diag = int(math.floor(i * ratio))  # noqa: RUF046 - an int64 for numba
        lo[i] = max(0, diag - width)
        hi[i] = min(n_r + 1, diag + width)
        if i == n_h:
            hi[i] = n_r + 1
        if hi[i] < lo[i]:
            hi[i] = lo[i]
        start[i] = size
        size += hi[i] - lo[i]
    return size


@njit(cache=True)
def _cell(prev_diag, prev_up, left, same):
    """The cost and operation of one cell from its three neighbours, in sacrebleu's order."""
    cost = _INF
    op = _UNDEF
    c = prev_diag + (0 if same else 1)
    if cost > c:
        cost = c
        op = _NOP if same else _SUB
    c = prev_up + 1
    if cost > c:
        cost = c
        op = _DEL
    c = left + 1
    if cost > c:
        cost = c
        op = _INS
    return cost, op


@njit(cache=True)
def _get(dist, lo, hi, start, i, j):
    if lo[i] <= j < hi[i]:
        return dist[start[i] + j - lo[i]]
    return _INF


@njit(cache=True)
def _full_distance(h, r, lo, hi, start, dist, ops, first_row):
    """Rows ``first_row..n_h`` of the banded matrix of ``h`` against ``r`` (rows before are kept)."""
    n_h = len(h)
    if first_row == 0:
        for j in range(len(r) + 1):
            dist[j] = j
            ops[j] = _INS
        first_row = 1
    for i in range(first_row, n_h + 1):
        word = h[i - 1]
        base = start[i] - lo[i]
        for j in range(lo[i], hi[i]):
            if j == 0:
                dist[base] = _get(dist, lo, hi, start, i - 1, 0) + 1
                ops[base] = _DEL
            else:
                left = dist[base + j - 1] if j > lo[i] else _INF
                cost, op = _cell(_get(dist, lo, hi, start, i - 1, j - 1), _get(dist, lo, hi, start, i - 1, j),
                                 left, word == r[j - 1])
                dist[base + j] = cost
                ops[base + j] = op


@njit(cache=True)
def _alignment(n_h, n_r, lo, hi, start, ops, align, hyp_err_cum, ref_err_cum):
    """sacrebleu's traceback, flipped, as ``trace_to_alignment``: the hypothesis position aligned to each
    reference position and the cumulative error counts of both sides. False on an undefined cell."""
    trace = np.empty(n_h + n_r, dtype=np.int8)
    k = 0
    i = n_h
    j = n_r
    while i > 0 or j > 0:
        op = ops[start[i] + j - lo[i]] if lo[i] <= j < hi[i] else _UNDEF
        trace[k] = op
        k += 1
        if op == _SUB or op == _NOP:  # noqa: SIM109 - plain comparisons for numba
            i -= 1
            j -= 1
        elif op == _INS:
            j -= 1
        elif op == _DEL:
            i -= 1
        else:
            return False
    pos_h = -1
    pos_r = -1
    hyp_err_cum[0] = 0
    ref_err_cum[0] = 0
    for t in range(k - 1, -1, -1):  # the trace read forwards; insertions and deletions flipped
        op = trace[t]
        if op == _NOP or op == _SUB:  # noqa: SIM109 - plain comparisons for numba
            err = 1 if op == _SUB else 0
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            hyp_err_cum[pos_h + 1] = hyp_err_cum[pos_h] + err
            ref_err_cum[pos_r + 1] = ref_err_cum[pos_r] + err
        elif op == _DEL:  # flipped: an insertion into the hypothesis
            pos_h += 1
            hyp_err_cum[pos_h + 1] = hyp_err_cum[pos_h] + 1
        else:  # _INS flipped: a deletion from the reference side
            pos_r += 1
            align[pos_r] = pos_h
            ref_err_cum[pos_r + 1] = ref_err_cum[pos_r] + 1
    return True


@njit(cache=True)
def _copy_slice(src, a, b, dst, k):
    """``dst[k:] = src[a:b]`` with Python's clamping of ``a`` and ``b``; returns the new length."""
    n = len(src)
    a = min(a, n)
    b = min(b, n)
    for t in range(a, b):
        if k < len(dst):
            dst[k] = src[t]
        k += 1
    return k


@njit(cache=True)
def _perform_shift(h, start, length, target, out):
    """sacrebleu's ``_perform_shift`` into ``out``; returns the length of the result (sacrebleu asserts
    it equals ``len(h)``)."""
    n = len(h)
    if target < start:
        k = _copy_slice(h, 0, target, out, 0)
        k = _copy_slice(h, start, start + length, out, k)
        k = _copy_slice(h, target, start, out, k)
        return _copy_slice(h, start + length, n, out, k)
    if target > start + length:
        k = _copy_slice(h, 0, start, out, 0)
        k = _copy_slice(h, start + length, target, out, k)
        k = _copy_slice(h, start, start + length, out, k)
        return _copy_slice(h, target, n, out, k)
    k = _copy_slice(h, 0, start, out, 0)
    k = _copy_slice(h, start + length, length + target, out, k)
    k = _copy_slice(h, start, start + length, out, k)
    return _copy_slice(h, length + target, n, out, k)


@njit(cache=True)
def _tail_distance(s, h, r, lo, hi, start, dist, prev, cur):
    """Edit distance of ``s`` (a shift of ``h``) against ``r``, restarting from the row of ``h`` at the
    first word where ``s`` and ``h`` differ (the rows before are the same)."""
    n_h = len(s)
    n_r = len(r)
    p = 0
    while p < n_h and s[p] == h[p]:
        p += 1
    if p == n_h:
        return dist[start[n_h] + n_r - lo[n_h]]
    for j in range(n_r + 1):
        prev[j] = _get(dist, lo, hi, start, p, j)
    prev_hi = hi[p]
    for i in range(p + 1, n_h + 1):
        a = lo[i]
        b = hi[i]
        for j in range(prev_hi, b):  # cells right of the previous band are sacrebleu's empty ones
            prev[j] = _INF
        if a > 0:
            cur[a - 1] = _INF
        word = s[i - 1]
        for j in range(a, b):
            if j == 0:
                cur[0] = prev[0] + 1
            else:
                cost, _ = _cell(prev[j - 1], prev[j], cur[j - 1], word == r[j - 1])
                cur[j] = cost
        prev, cur = cur, prev
        prev_hi = b
    return prev[n_r]


@njit(cache=True)
def _better(delta, length, start_h, idx, best_delta, best_length, best_start, best_idx):
    """``(delta, length, -start_h, -idx) > best`` as tuples compare."""
    if delta != best_delta:
        return delta > best_delta
    if length != best_length:
        return length > best_length
    if start_h != best_start:
        return start_h < best_start
    return idx < best_idx


@njit(cache=True)
def edit_rate(h0, r):
    """sacrebleu's ``translation_edit_rate(h0, r)[0]`` (the number of edits) on token ids, and a status
    (``_FAILED`` where sacrebleu's code raises)."""
    n_h = len(h0)
    n_r = len(r)
    if n_r == 0:
        return n_h, _OK
    ratio, width = _beam(n_h, n_r)
    lo = np.empty(n_h + 1, dtype=np.int64)
    hi = np.empty(n_h + 1, dtype=np.int64)
    start = np.empty(n_h + 1, dtype=np.int64)
    size = _bands(n_h, n_r, ratio, width, lo, hi, start)
    dist = np.empty(size, dtype=np.int64)
    ops = np.empty(size, dtype=np.int8)
    align = np.empty(n_r, dtype=np.int64)
    hyp_err_cum = np.empty(n_h + 1, dtype=np.int64)
    ref_err_cum = np.empty(n_r + 1, dtype=np.int64)
    prev = np.empty(n_r + 1, dtype=np.int64)
    cur = np.empty(n_r + 1, dtype=np.int64)
    h = h0.copy()
    shifted = np.empty_like(h0)
    checked = 0
    shifts = 0
    first_row = 0
    while True:
        _full_distance(h, r, lo, hi, start, dist, ops, first_row)
        pre = dist[start[n_h] + n_r - lo[n_h]]
        if not _alignment(n_h, n_r, lo, hi, start, ops, align, hyp_err_cum, ref_err_cum):
            return 0, _FAILED
        # _shift: the best candidate over _find_shifted_pairs
        found = False
        best_delta = 0
        best_length = 0
        best_start = 0
        best_idx = 0
        stop = False
        for start_h in range(n_h):
            for start_r in range(max(0, start_h - _MAX_SHIFT_DIST), min(n_r, start_h + _MAX_SHIFT_DIST + 1)):
                length = 0
                while h[start_h + length] == r[start_r + length] and length < _MAX_SHIFT_SIZE:
                    length += 1
                    # one yielded (start_h, start_r, length)
                    skip = (hyp_err_cum[start_h + length] == hyp_err_cum[start_h]
                            or ref_err_cum[start_r + length] == ref_err_cum[start_r]
                            or start_h <= align[start_r] < start_h + length)
                    if not skip:
                        prev_idx = -1
                        for offset in range(-1, length):
                            if start_r + offset == -1:
                                idx = 0
                            else:
                                idx = align[start_r + offset] + 1
                            if idx == prev_idx:
                                continue
                            prev_idx = idx
                            if _perform_shift(h, start_h, length, idx, shifted) != n_h:
                                return 0, _FAILED
                            delta = pre - _tail_distance(shifted, h, r, lo, hi, start, dist, prev, cur)
                            checked += 1
                            if not found or _better(delta, length, start_h, idx, best_delta, best_length,
                                                    best_start, best_idx):
                                found = True
                                best_delta = delta
                                best_length = length
                                best_start = start_h
                                best_idx = idx
                        if checked >= _MAX_SHIFT_CANDIDATES:
                            stop = True
                            break
                    if n_h == start_h + length or n_r == start_r + length:
                        break
                if stop:
                    break
            if stop:
                break
        if checked >= _MAX_SHIFT_CANDIDATES or not found or best_delta <= 0:
            return shifts + pre, _OK
        shifts += 1
        _perform_shift(h, best_start, best_length, best_idx, shifted)
        first_row = 0
        while first_row < n_h and shifted[first_row] == h[first_row]:
            first_row += 1
        first_row += 1  # row k depends on words[:k]: rows up to the common prefix are kept
        h[:] = shifted


@njit(cache=True)
def edit_rates(ids, off, hyp_line, ref_line):
    """:func:`edit_rate` of each pair ``(hyp_line[k], ref_line[k])`` of token-id lines in CSR layout
    (``ids[off[i]:off[i+1]]`` is line ``i``): edits and statuses."""
    n = len(hyp_line)
    edits = np.zeros(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.int8)
    for k in range(n):
        a = hyp_line[k]
        b = ref_line[k]
        e, s = edit_rate(ids[off[a]:off[a + 1]], ids[off[b]:off[b + 1]])
        edits[k] = e
        status[k] = s
    return edits, status
