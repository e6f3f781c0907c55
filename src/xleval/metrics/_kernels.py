"""Compiled (numba) kernels behind the fast path of BLEU and chrF; imported only when numba is installed.

Lines are int32 code point (or token id) arrays in CSR layout: ``units[off[i]:off[i+1]]`` is line
``i``. Three kernels:

* :func:`tokenize_re` reproduces sacrebleu's ``13a`` / ``zh`` tokenizer plus BLEU's ``rstrip`` and
  whitespace split on code points: every ``str.replace`` and every ``re.sub`` of
  ``TokenizerRegexp`` is replayed literally as a left-to-right scan (the patterns have a fixed width
  of one or two characters, so the leftmost non-overlapping matches of ``re.sub`` are exactly those
  of the scan). Output: the tokens' code points and token boundaries per line.
* :func:`intern_tokens` gives equal tokens equal ids (hash table over code point spans, collisions
  resolved by comparing the spans: exact).
* :func:`clipped_matches` counts clipped n-gram matches per segment with a small open-addressing
  hash table holding only the hypothesis n-grams. The n-gram id of order n at position i is the
  table id of the pair (id of the (n-1)-gram at i, unit at i+n-1), so keys are exact int64 pairs.
  An n-gram whose (n-1)-gram prefix is not shared by hypothesis and reference cannot match and is
  skipped, which makes the higher orders cheap.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_SP = 32  # ' '


# the 13a replacement table (patterns and replacements) is built by _fast.replace_args()


@njit(cache=True)
def _is(table, c):
    return c < len(table) and table[c]


@njit(cache=True)
def _digit(c):
    return 48 <= c <= 57


@njit(cache=True)
def _replace(src, n, pat, rep, dst):
    """``str.replace(pat, rep)`` of ``src[:n]`` into ``dst``; returns the new length."""
    m = len(pat)
    i = 0
    k = 0
    while i < n:
        if src[i] == pat[0] and i + m <= n:
            same = True
            for j in range(1, m):
                if src[i + j] != pat[j]:
                    same = False
                    break
            if same:
                for j in range(len(rep)):
                    dst[k] = rep[j]
                    k += 1
                i += m
                continue
        dst[k] = src[i]
        k += 1
        i += 1
    return k


@njit(cache=True)
def _p1(src, start, n, dst, k, punct):
    """``([\\{-\\~\\[-\\` -\\&\\(-\\+\\:-\\@\\/]) -> ' \\1 '`` of ``src[start:start+n]`` appended at
    ``dst[k]``; returns the new length and whether a '.' or ',' occurs (else the next two passes are
    no-ops)."""
    dot_comma = False
    for i in range(start, start + n):
        c = src[i]
        if _is(punct, c):
            dst[k] = _SP
            dst[k + 1] = c
            dst[k + 2] = _SP
            k += 3
        else:
            dst[k] = c
            k += 1
            if c == 46 or c == 44:
                dot_comma = True
    return k, dot_comma


@njit(cache=True)
def _p2(src, n, dst):
    """``([^0-9])([\\.,]) -> '\\1 \\2 '``: leftmost non-overlapping pairs, like ``re.sub``."""
    k = 0
    i = 0
    while i < n:
        c = src[i]
        if i + 1 < n and not _digit(c) and (src[i + 1] == 46 or src[i + 1] == 44):
            dst[k] = c
            dst[k + 1] = _SP
            dst[k + 2] = src[i + 1]
            dst[k + 3] = _SP
            k += 4
            i += 2
        else:
            dst[k] = c
            k += 1
            i += 1
    return k


@njit(cache=True)
def _p3(src, n, dst):
    """``([\\.,])([^0-9]) -> ' \\1 \\2'``."""
    k = 0
    i = 0
    while i < n:
        c = src[i]
        if i + 1 < n and (c == 46 or c == 44) and not _digit(src[i + 1]):
            dst[k] = _SP
            dst[k + 1] = c
            dst[k + 2] = _SP
            dst[k + 3] = src[i + 1]
            k += 4
            i += 2
        else:
            dst[k] = c
            k += 1
            i += 1
    return k


@njit(cache=True)
def _p4_split(src, n, space, chars, n_chars, tok_off, n_tok):
    """``([0-9])(-) -> '\\1 \\2 '`` then the whitespace split, appending tokens to ``chars`` /
    ``tok_off``; returns the new ``(n_chars, n_tok)``."""
    inside = False
    i = 0
    while i < n:
        c = src[i]
        if i + 1 < n and _digit(c) and src[i + 1] == 45:
            # c closes the current token; '-' is a token of its own
            chars[n_chars] = c
            chars[n_chars + 1] = 45
            n_chars += 2
            tok_off[n_tok + 1] = n_chars - 1
            tok_off[n_tok + 2] = n_chars
            n_tok += 2
            inside = False
            i += 2
            continue
        if _is(space, c):
            if inside:
                n_tok += 1
                tok_off[n_tok] = n_chars
                inside = False
        else:
            chars[n_chars] = c
            n_chars += 1
            inside = True
        i += 1
    if inside:
        n_tok += 1
        tok_off[n_tok] = n_chars
    return n_chars, n_tok


@njit(cache=True)
def _prep_13a(a, n, b, pats, pat_off, reps, rep_off):
    """Tokenizer13a's ``str.replace`` steps on ``a[:n]``, result in ``a``; returns the length."""
    n_rep = len(pat_off) - 1
    for r in range(n_rep):
        n = _replace(a, n, pats[pat_off[r] : pat_off[r + 1]], reps[rep_off[r] : rep_off[r + 1]], b)
        a, b = b, a
    if n_rep % 2 == 1:  # the result is in the other buffer: copy it back
        for i in range(n):
            b[i] = a[i]
    return n


@njit(cache=True)
def _spaced_zh(src, start, n, dst, chinese):
    """TokenizerZh's spaces around each Chinese character of ``src[start:start+n]``, into ``dst``."""
    k = 0
    for i in range(start, start + n):
        c = src[i]
        if _is(chinese, c):
            dst[k] = _SP
            dst[k + 1] = c
            dst[k + 2] = _SP
            k += 3
        else:
            dst[k] = c
            k += 1
    return k


@njit(cache=True)
def tokenize_re(units, off, mode, space, punct, chinese, pats, pat_off, reps, rep_off):
    """Tokens of every line: ``mode`` 0 = 13a, 1 = zh (each after BLEU's ``rstrip``).

    Returns ``(chars, tok_off, line_tok)``: token t is ``chars[tok_off[t]:tok_off[t+1]]`` and line i
    has tokens ``line_tok[i]:line_tok[i+1]``.
    """
    n_lines = len(off) - 1
    longest = 0
    for i in range(n_lines):
        longest = max(longest, off[i + 1] - off[i])
    # growth bound: 13a's replacements shrink, the wrap adds 2, the first substitution x3, the '.'/','
    # ones x2 each (the last one writes tokens directly); zh's spacing x3 comes first
    cap = (36 if mode == 1 else 12) * (longest + 2) + 16
    a = np.empty(cap, np.int32)
    b = np.empty(cap, np.int32)
    sp = np.full(1, _SP, np.int32)
    chars = np.empty(len(units), np.int32)  # tokens only lose characters (replacements shrink)
    tok_off = np.empty(len(units) + 1, np.int64)
    line_tok = np.empty(n_lines + 1, np.int64)
    n_tok = 0
    n_chars = 0
    tok_off[0] = 0
    line_tok[0] = 0
    for line in range(n_lines):
        start = off[line]
        n = off[line + 1] - start
        while n > 0 and _is(space, units[start + n - 1]):  # BLEU's rstrip
            n -= 1
        if mode == 0:
            needs = False
            for i in range(start, start + n):
                c = units[i]
                if c == 60 or c == 10 or c == 38:  # '<', '\n', '&': otherwise no replacement applies
                    needs = True
                    break
            # f" {line} " then the first substitution (which turns each wrapping space into three)
            k, _ = _p1(sp, 0, 1, b, 0, punct)
            if needs:
                for i in range(n):
                    a[i] = units[start + i]
                m = _prep_13a(a, n, b[k:], pats, pat_off, reps, rep_off)
                k, dot_comma = _p1(a, 0, m, b, k, punct)
            else:
                k, dot_comma = _p1(units, start, n, b, k, punct)
            k, _ = _p1(sp, 0, 1, b, k, punct)
        else:
            while n > 0 and _is(space, units[start]):  # TokenizerZh's strip
                start += 1
                n -= 1
            m = _spaced_zh(units, start, n, a, chinese)
            k, dot_comma = _p1(a, 0, m, b, 0, punct)
        if dot_comma:
            k = _p2(b, k, a)
            k = _p3(a, k, b)
        n_chars, n_tok = _p4_split(b, k, space, chars, n_chars, tok_off, n_tok)
        line_tok[line + 1] = n_tok
    return chars[:n_chars], tok_off[: n_tok + 1], line_tok


@njit(cache=True)
def strip_space(units, off, space):
    """Each line with its whitespace characters removed (chrF's ``''.join(line.split())``)."""
    out = np.empty(len(units), np.int32)
    new_off = np.empty(len(off), np.int64)
    new_off[0] = 0
    k = 0
    for line in range(len(off) - 1):
        for i in range(off[line], off[line + 1]):
            c = units[i]
            if not _is(space, c):
                out[k] = c
                k += 1
        new_off[line + 1] = k
    return out[:k], new_off


@njit(cache=True)
def _continuation(data, i, end, low, high):
    """Whether ``data[i]`` exists before ``end`` and lies in ``[low, high]`` (a valid continuation byte)."""
    return i < end and low <= data[i] <= high


@njit(cache=True)
def utf8_units(data, bounds):
    """Code points of the UTF-8 byte strings ``data[bounds[i]:bounds[i+1]]``: ``(units, off, ok)``.

    Strict (as Python's ``bytes.decode("utf-8")``): overlong forms, surrogates, code points above
    U+10FFFF and truncated sequences make ``ok`` False (the caller then decodes another way).
    """
    n = len(bounds) - 1
    out = np.empty(max(bounds[n] - bounds[0], 0), np.int32)
    off = np.empty(n + 1, np.int64)
    off[0] = 0
    k = 0
    for line in range(n):
        i = bounds[line]
        end = bounds[line + 1]
        while i < end:
            b = np.int64(data[i])
            if b < 0x80:
                out[k] = b
                i += 1
            elif 0xC2 <= b <= 0xDF:
                if not _continuation(data, i + 1, end, 0x80, 0xBF):
                    return out[:0], off, False
                out[k] = ((b & 0x1F) << 6) | (np.int64(data[i + 1]) & 0x3F)
                i += 2
            elif 0xE0 <= b <= 0xEF:
                low = 0xA0 if b == 0xE0 else 0x80
                high = 0x9F if b == 0xED else 0xBF
                if not (_continuation(data, i + 1, end, low, high) and _continuation(data, i + 2, end, 0x80, 0xBF)):
                    return out[:0], off, False
                out[k] = ((b & 0x0F) << 12) | ((np.int64(data[i + 1]) & 0x3F) << 6) | (np.int64(data[i + 2]) & 0x3F)
                i += 3
            elif 0xF0 <= b <= 0xF4:
                low = 0x90 if b == 0xF0 else 0x80
                high = 0x8F if b == 0xF4 else 0xBF
                if not (_continuation(data, i + 1, end, low, high) and _continuation(data, i + 2, end, 0x80, 0xBF)
                        and _continuation(data, i + 3, end, 0x80, 0xBF)):
                    return out[:0], off, False
                out[k] = (((b & 0x07) << 18) | ((np.int64(data[i + 1]) & 0x3F) << 12)
                          | ((np.int64(data[i + 2]) & 0x3F) << 6) | (np.int64(data[i + 3]) & 0x3F))
                i += 4
            else:
                return out[:0], off, False
            k += 1
        off[line + 1] = k
    return out[:k], off, True


@njit(cache=True)
def gather_lines(units, off, lines):
    """Lines ``lines`` of a CSR pool as a pool of their own ``(units, off)`` (one copy, no index arrays)."""
    new_off = np.empty(len(lines) + 1, np.int64)
    new_off[0] = 0
    for i in range(len(lines)):
        new_off[i + 1] = new_off[i] + off[lines[i] + 1] - off[lines[i]]
    out = np.empty(new_off[-1], np.int32)
    for i in range(len(lines)):
        start = off[lines[i]]
        k = new_off[i]
        for j in range(new_off[i + 1] - k):
            out[k + j] = units[start + j]
    return out, new_off


@njit(cache=True)
def _pow2_at_least(n):
    size = 16
    bits = 4
    while size < n:
        size *= 2
        bits += 1
    return size, bits


@njit(cache=True)
def _grow(slot_id, slot_hash, bits):
    """The table with twice the slots (re-inserted by their stored hashes)."""
    bits += 1
    size = 1 << bits
    new_id = np.full(size, -1, np.int32)
    new_hash = np.empty(size, np.uint64)
    shift = np.uint64(64 - bits)
    for old in range(len(slot_id)):
        if slot_id[old] >= 0:
            slot = np.int64(slot_hash[old] >> shift)
            while new_id[slot] >= 0:
                slot = (slot + 1) & (size - 1)
            new_id[slot] = slot_id[old]
            new_hash[slot] = slot_hash[old]
    return new_id, new_hash, bits


@njit(cache=True)
def intern_tokens(chars, tok_off):
    """Dense ids of the tokens (equal code point spans <-> equal ids) and the number of ids.

    Open addressing keyed by a hash of the span; equal hashes are confirmed by comparing the spans,
    so collisions cannot merge tokens. The table grows with the distinct tokens (load <= 1/2), not
    with all tokens, so it stays cache-sized.
    """
    n_tok = len(tok_off) - 1
    bits = 12
    slot_id = np.full(1 << bits, -1, np.int32)
    slot_hash = np.empty(1 << bits, np.uint64)
    first = np.empty(max(n_tok, 1), np.int64)  # id -> a token carrying it
    ids = np.empty(n_tok, np.int32)
    n_ids = 0
    for t in range(n_tok):
        s = tok_off[t]
        e = tok_off[t + 1]
        h = np.uint64(0xCBF29CE484222325)
        for i in range(s, e):
            h = (h ^ np.uint64(chars[i])) * np.uint64(0x100000001B3)
        h = h * _GOLDEN
        mask = (1 << bits) - 1
        slot = np.int64(h >> np.uint64(64 - bits))
        while True:
            v = slot_id[slot]
            if v < 0:
                slot_id[slot] = n_ids
                slot_hash[slot] = h
                first[n_ids] = t
                ids[t] = n_ids
                n_ids += 1
                if 2 * n_ids > mask:
                    slot_id, slot_hash, bits = _grow(slot_id, slot_hash, bits)
                break
            if slot_hash[slot] == h:
                f = first[v]
                fs = tok_off[f]
                same = tok_off[f + 1] - fs == e - s
                if same:
                    for i in range(e - s):
                        if chars[fs + i] != chars[s + i]:
                            same = False
                            break
                if same:
                    ids[t] = v
                    break
            slot = (slot + 1) & mask
    return ids, n_ids


# slots of the direct-addressed table of clipped_matches (its stamps are zeroed once per call)
DIRECT = 1 << 16


@njit(cache=True)
def _slot(key, insert, keys, vals, stamp, gen, mask, shift, n_ids):
    """Id of ``key`` in the current generation's hash table, ``(id, n_ids)``; a new id if ``insert``,
    else -1 when absent (open addressing, linear probing)."""
    slot = np.int64((np.uint64(key) * _GOLDEN) >> shift)
    while stamp[slot] == gen:
        if keys[slot] == key:
            return vals[slot], n_ids
        slot = (slot + 1) & mask
    if not insert:
        return -1, n_ids
    stamp[slot] = gen
    keys[slot] = key
    vals[slot] = n_ids
    return n_ids, n_ids + 1


@njit(cache=True)
def clipped_matches(units, off, hyp_line, ref_lines, max_order):
    """Clipped n-gram matches, shape ``(n, max_order)``, of hypothesis line ``hyp_line[s]`` against
    reference lines ``ref_lines[:, s]``; a hypothesis n-gram count is clipped by its maximum count in
    any one reference (BLEU; pass one reference stream at a time for chrF).

    Ids are local to a segment and an order: order 1 ids number the distinct hypothesis units
    (``d`` of them); the order-n key of position i is ``id_{n-1}(i) * d + id_1(i + n - 1)``, an exact
    integer below ``n_ids_{n-1} * d``. Keys below the direct table's size (:data:`DIRECT`; all keys of
    typical segments) are their own slot; larger ones (astral code points, huge vocabularies, very
    long segments) go to an open-addressing hash table sized for the segment. The choice depends on
    the key only, so a key is always found where it was inserted. Units are non-negative.
    """
    n_seg = len(hyp_line)
    n_ref = ref_lines.shape[0]
    out = np.zeros((n_seg, max_order), np.int64)
    max_h = 1
    max_r = 1
    for s in range(n_seg):
        max_h = max(max_h, off[hyp_line[s] + 1] - off[hyp_line[s]])
        tot = 0
        for r in range(n_ref):
            tot += off[ref_lines[r, s] + 1] - off[ref_lines[r, s]]
        max_r = max(max_r, tot)
    size = DIRECT
    vals = np.empty(size, np.int64)
    stamp = np.zeros(size, np.int64)  # a slot is occupied iff its stamp is the current generation
    hash_size, _ = _pow2_at_least(2 * max_h)
    h_keys = np.empty(hash_size, np.int64)
    h_vals = np.empty(hash_size, np.int64)
    h_stamp = np.zeros(hash_size, np.int64)
    gen = 0
    h_cnt = np.empty(max_h, np.int64)
    r_max = np.empty(max_h, np.int64)
    r_cnt = np.empty(max_h, np.int64)
    alive = np.zeros(max_h, np.bool_)  # previous order's id occurs in some reference
    id1_h = np.empty(max_h, np.int64)  # order-1 id at each position
    cur_h = np.empty(max_h, np.int64)  # id of the current order's n-gram at each position (-1: pruned)
    id1_r = np.empty(max_r, np.int64)
    cur_r = np.empty(max_r, np.int64)
    for s in range(n_seg):
        hs = off[hyp_line[s]]
        hl = off[hyp_line[s] + 1] - hs
        hsize, bits = _pow2_at_least(2 * hl)
        mask = hsize - 1
        shift = np.uint64(64 - bits)
        d = 1
        for order in range(1, max_order + 1):
            n_pos = hl - order + 1
            if n_pos <= 0:
                break
            gen += 1
            n_ids = 0
            for i in range(n_pos):  # intern and count the hypothesis n-grams
                if order == 1:
                    key = np.int64(units[hs + i])
                else:
                    p = cur_h[i]
                    if p < 0 or not alive[p]:  # prefix absent from the references: cannot match
                        cur_h[i] = -1
                        continue
                    key = p * d + id1_h[i + order - 1]
                # the direct case is written out: numba does not inline _slot and the call costs ~5x
                if key >= size:
                    v, n_new = _slot(key, True, h_keys, h_vals, h_stamp, gen, mask, shift, n_ids)
                    if n_new != n_ids:
                        h_cnt[v] = 0
                        n_ids = n_new
                elif stamp[key] == gen:
                    v = vals[key]
                else:
                    stamp[key] = gen
                    vals[key] = n_ids
                    h_cnt[n_ids] = 0
                    v = n_ids
                    n_ids += 1
                h_cnt[v] += 1
                cur_h[i] = v
                if order == 1:
                    id1_h[i] = v
            for v in range(n_ids):
                r_max[v] = 0
            base = 0
            for r in range(n_ref):  # count them in each reference, keep the maximum
                rs = off[ref_lines[r, s]]
                rl = off[ref_lines[r, s] + 1] - rs
                cnt = r_max if n_ref == 1 else r_cnt
                if n_ref > 1:
                    for v in range(n_ids):
                        r_cnt[v] = 0
                for j in range(max(rl - order + 1, 0)):
                    if order == 1:
                        key = np.int64(units[rs + j])
                    else:
                        p = cur_r[base + j]
                        q = id1_r[base + j + order - 1]
                        if p < 0 or q < 0:
                            cur_r[base + j] = -1
                            continue
                        key = p * d + q
                    if key >= size:
                        v, _ = _slot(key, False, h_keys, h_vals, h_stamp, gen, mask, shift, n_ids)
                    elif stamp[key] == gen:
                        v = vals[key]
                    else:
                        v = -1
                    cur_r[base + j] = v
                    if order == 1:
                        id1_r[base + j] = v
                    if v >= 0:
                        cnt[v] += 1
                if n_ref > 1:
                    for v in range(n_ids):
                        r_max[v] = max(r_max[v], r_cnt[v])
                base += rl
            matched = 0
            for v in range(n_ids):
                matched += min(h_cnt[v], r_max[v])
                alive[v] = r_max[v] > 0
            out[s, order - 1] = matched
            if matched == 0:  # no shared n-gram of this order: none of any higher order
                break
            if order == 1:
                d = n_ids
    return out


@njit(cache=True)
def _find(key, keys, vals, stamp, gen, mask, shift):
    """Id of ``key`` in the current generation's hash table, -1 when absent (see :func:`_slot`)."""
    slot = np.int64((np.uint64(key) * _GOLDEN) >> shift)
    while stamp[slot] == gen:
        if keys[slot] == key:
            return vals[slot]
        slot = (slot + 1) & mask
    return -1


_LOW32 = 0xFFFFFFFF


@njit(cache=True)
def clipped_matches_shared(units, off, hyp_line, ref_line, max_order):
    """:func:`clipped_matches` for one reference per segment, reference-centric: the segments are
    grouped by reference line, each distinct reference's n-grams get ids once (order-1 ids number
    its distinct units, the order-n key is ``id_{n-1} * d + id_1`` as in ``clipped_matches``), and
    each hypothesis only looks its n-grams up in them. References shared by many systems are thus
    counted once, not once per system, and a hypothesis that repeats under the same reference is
    counted once. A hypothesis n-gram absent from the reference has no id and cannot extend to one;
    matches are ``sum over ids of min(hypothesis count, reference count)``.

    Each hypothesis is walked position by position: from a start position the n-gram grows one unit
    at a time until it leaves the reference (no longer n-gram from there can match), so every lookup
    is of an n-gram whose prefix matched. A table entry holds ``generation << 32 | id`` (one load
    tells whether it belongs to the current reference and its id).
    """
    n_seg = len(hyp_line)
    out = np.zeros((n_seg, max_order), np.int64)
    if n_seg == 0:
        return out
    top = 0
    for i in range(len(units)):
        top = max(top, units[i])
    unit_tag = np.zeros(top + 1, np.int64)  # generation << 32 | order-1 id of a unit in the current reference
    max_r = 1
    max_h = 1
    for s in range(n_seg):
        max_r = max(max_r, off[ref_line[s] + 1] - off[ref_line[s]])
        max_h = max(max_h, off[hyp_line[s] + 1] - off[hyp_line[s]])
    size = DIRECT
    tag = np.zeros((max_order, size), np.int64)  # direct keys: generation << 32 | id
    hash_size, _ = _pow2_at_least(2 * max_r)
    h_keys = np.empty((max_order, hash_size), np.int64)
    h_vals = np.empty((max_order, hash_size), np.int64)
    h_stamp = np.zeros((max_order, hash_size), np.int64)
    rid = np.empty((max_order, max_r), np.int64)
    rcnt = np.zeros((max_order, max_r), np.int64)
    hcnt = np.zeros((max_order, max_r), np.int64)
    touched = np.empty((max_order, max_h), np.int64)
    n_touched = np.zeros(max_order, np.int64)
    hid1 = np.empty(max_h, np.int64)
    # by reference, then by hypothesis: a repeated (hypothesis, reference) pair is adjacent
    order_of = np.argsort(ref_line * np.int64(len(off)) + hyp_line, kind="mergesort")
    gen = 0
    k = 0
    while k < n_seg:
        ref = ref_line[order_of[k]]
        rs = off[ref]
        rl = off[ref + 1] - rs
        gen += 1
        g32 = np.int64(gen) << 32
        d = 0  # the reference's ids, order by order
        for j in range(rl):
            c = units[rs + j]
            t = unit_tag[c]
            if (t >> 32) != gen:
                t = g32 | d
                unit_tag[c] = t
                rcnt[0, d] = 0
                d += 1
            v = t & _LOW32
            rid[0, j] = v
            rcnt[0, v] += 1
        hsize, bits = _pow2_at_least(2 * rl)
        mask = hsize - 1
        shift = np.uint64(64 - bits)
        for o in range(1, max_order):
            n_ids = 0
            for j in range(max(rl - o, 0)):
                key = rid[o - 1, j] * d + rid[0, j + o]
                if key >= size:
                    v, n_new = _slot(key, True, h_keys[o], h_vals[o], h_stamp[o], gen, mask, shift, n_ids)
                    if n_new != n_ids:
                        rcnt[o, v] = 0
                        n_ids = n_new
                else:
                    t = tag[o, key]
                    if (t >> 32) == gen:
                        v = t & _LOW32
                    else:
                        tag[o, key] = g32 | n_ids
                        rcnt[o, n_ids] = 0
                        v = n_ids
                        n_ids += 1
                rid[o, j] = v
                rcnt[o, v] += 1
        previous = -1
        while k < n_seg and ref_line[order_of[k]] == ref:  # every hypothesis of this reference
            s = order_of[k]
            k += 1
            if hyp_line[s] == previous:  # the same pair again: the same counts
                out[s] = out[order_of[k - 2]]
                continue
            previous = hyp_line[s]
            hs = off[hyp_line[s]]
            hl = off[hyp_line[s] + 1] - hs
            for i in range(hl):
                t = unit_tag[units[hs + i]]
                hid1[i] = (t & _LOW32) if (t >> 32) == gen else -1
            for o in range(max_order):
                n_touched[o] = 0
            for i in range(hl):
                v = hid1[i]
                if v < 0:
                    continue
                if hcnt[0, v] == 0:
                    touched[0, n_touched[0]] = v
                    n_touched[0] += 1
                hcnt[0, v] += 1
                for o in range(1, min(max_order, hl - i)):
                    q = hid1[i + o]
                    if q < 0:
                        break
                    key = v * d + q
                    if key >= size:
                        v = _find(key, h_keys[o], h_vals[o], h_stamp[o], gen, mask, shift)
                        if v < 0:
                            break
                    else:
                        t = tag[o, key]
                        if (t >> 32) != gen:
                            break
                        v = t & _LOW32
                    if hcnt[o, v] == 0:
                        touched[o, n_touched[o]] = v
                        n_touched[o] += 1
                    hcnt[o, v] += 1
            for o in range(max_order):
                matched = 0
                for x in range(n_touched[o]):
                    v = touched[o, x]
                    matched += min(hcnt[o, v], rcnt[o, v])
                    hcnt[o, v] = 0
                out[s, o] = matched
    return out
