"""Span-level meta-evaluation: predicted error spans (XCOMET's, a judge's, another rater's) against gold spans,
and the segment-level detections of WMT25/26 (error-free segments, critical segments).

Spans are rows of a table: the segment's key columns, ``severity`` and ``start``/``end`` (character offsets in
the translation, end exclusive, as XCOMET gives them). Severities: ``critical`` counts as ``major`` (WMT25); a
severity other than minor, major or critical (``neutral``, ``no-error``) marks no error.

* **Character-level F1** (WMT25 task 2): each character of a translation gets the severity of the spans
  covering it (the more severe where spans overlap), for the gold and for the prediction. A character that both
  mark as an error earns credit 1 when the severities agree and ``mismatch`` (0.5) when they do not;
  precision = credit / characters the prediction marks, recall = credit / characters the gold marks, pooled
  over the group's segments (micro), F1 their harmonic mean.
* **Partial-overlap, partial-credit span F1, micro-averaged**: within a segment, predicted and gold spans are
  matched one to one, greedily by decreasing overlap (ties: earlier spans first); a matched pair earns
  ``overlap / predicted length`` towards precision and ``overlap / gold length`` towards recall, times the
  severity credit (1 or ``mismatch``); precision = earned / predicted spans, recall = earned / gold spans, each
  summed over the group's segments (micro).
* **Detection F1 at the best threshold** (:func:`detection_f1`): a metric flags the segments on one side of a
  threshold; the threshold with the highest F1 is reported with its precision and recall. Error-free segments
  (WMT26 task 3): gold 1 when the human score is at least ``T`` (85) and the gold has no error span; a segment
  is flagged when the metric's score is at least the threshold. Critical segments (WMT25's criticality
  analysis): gold 1 when the human score is below ``T`` (10); flagged when the metric's score is below the
  threshold. The organisers' caveat holds: the best threshold is chosen on the same data (an optimistic F1).

CIs: segments resampled with replacement within the group (percentile), the statistic recomputed from the
per-segment sums (span F1s) or at the threshold chosen on the full data (detections).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import InputError
from ..stats._grouped_bootstrap import groupwise_counts

__all__ = ["span_f1", "detection_f1", "SEVERITY_RANK", "SPAN_STATISTICS"]

#: severity -> rank (0: no error); critical counts as major (WMT25)
SEVERITY_RANK = {"minor": 1, "major": 2, "critical": 2}
#: the span statistics, in the order tables show them
SPAN_STATISTICS = ("span_char_f1", "span_overlap_f1")


def _spans_by_segment(spans: pd.DataFrame, keys: Sequence[str], what: str) -> dict[tuple, list[tuple[int, int, int]]]:
    missing = [c for c in [*keys, "severity", "start", "end"] if c not in spans.columns]
    if missing:
        raise InputError(f"{what} spans: no column(s) {missing}; give one row per span with the segment's key columns "
                         f"({', '.join(keys)}), severity, start and end (character offsets, end exclusive)",
                         argument="spans")
    start = pd.to_numeric(spans["start"], errors="coerce").to_numpy()
    end = pd.to_numeric(spans["end"], errors="coerce").to_numpy()
    bad = ~(np.isfinite(start) & np.isfinite(end))
    bad |= ~bad & ((end < start) | (start < 0) | (np.floor(start) != start) | (np.floor(end) != end))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what} spans row {i + 1}: start {spans['start'].iloc[i]!r}, end {spans['end'].iloc[i]!r}; a "
                         "span needs whole offsets 0 <= start <= end", argument="spans")
    rank = spans["severity"].astype(str).str.strip().str.lower().map(SEVERITY_RANK).fillna(0).astype(int).to_numpy()
    out: dict[tuple, list[tuple[int, int, int]]] = {}
    key_values = spans[list(keys)].astype(str).itertuples(index=False, name=None)
    for k, s, e, r in zip(key_values, start.astype(int), end.astype(int), rank, strict=True):
        if r > 0 and e > s:
            out.setdefault(k, []).append((s, e, r))
    return out


def _char_sums(gold: list[tuple[int, int, int]], pred: list[tuple[int, int, int]], mismatch: float
               ) -> tuple[float, float, float, float]:
    """(credit, predicted characters, gold characters, credit) of one segment, character level."""
    size = max([e for _, e, _ in gold + pred], default=0)
    g, p = np.zeros(size, dtype=np.int8), np.zeros(size, dtype=np.int8)
    for s, e, r in gold:
        g[s:e] = np.maximum(g[s:e], r)
    for s, e, r in pred:
        p[s:e] = np.maximum(p[s:e], r)
    both = (g > 0) & (p > 0)
    credit = float(np.sum(np.where(g[both] == p[both], 1.0, mismatch)))
    return credit, float(np.sum(p > 0)), float(np.sum(g > 0)), credit


def _overlap_sums(gold: list[tuple[int, int, int]], pred: list[tuple[int, int, int]], mismatch: float
                  ) -> tuple[float, float, float, float]:
    """(precision credit, predicted spans, gold spans, recall credit) of one segment: greedy one-to-one matching
    by decreasing overlap."""
    pairs = []
    for i, (ps, pe, _) in enumerate(pred):
        for j, (gs, ge, _) in enumerate(gold):
            ov = min(pe, ge) - max(ps, gs)
            if ov > 0:
                pairs.append((-ov, i, j))
    used_p, used_g = set(), set()
    prec = rec = 0.0
    for neg, i, j in sorted(pairs):
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        ps, pe, pr = pred[i]
        gs, ge, gr = gold[j]
        factor = 1.0 if pr == gr else mismatch
        prec += factor * -neg / (pe - ps)
        rec += factor * -neg / (ge - gs)
    return prec, float(len(pred)), float(len(gold)), rec


def span_f1(gold: pd.DataFrame, predicted: pd.DataFrame, segments: pd.DataFrame, *, keys: Sequence[str],
            by: str | None = None, mismatch: float = 0.5, n_resamples: int = 1000, level: float = 0.95,
            random_state: int = 0) -> list[dict[str, Any]]:
    """Character-level F1 and partial-overlap span F1 (module docstring) of ``predicted`` against ``gold`` spans,
    over the segments of ``segments`` (one row per segment, the ``keys`` columns: a segment without a span in a
    table is error-free in it), per value of ``by`` (None: all). Returns one dict per (group, statistic):
    ``group, statistic, value, precision, recall, ci_low, ci_high, n`` (segments)."""
    from ..stats._estimate import estimate_from_distribution

    if not 0.0 <= mismatch <= 1.0:
        raise InputError(f"mismatch={mismatch!r}: the credit of a wrong severity is in [0, 1] (WMT25: 0.5)",
                         argument="mismatch")
    gs, ps = _spans_by_segment(gold, keys, "gold"), _spans_by_segment(predicted, keys, "predicted")
    cols = [*keys, *([by] if by and by not in keys else [])]
    seg = segments[cols].astype(str).drop_duplicates(list(keys))
    groups = seg[by].to_numpy() if by else np.full(len(seg), "*", dtype=object)
    seg_keys = list(seg[list(keys)].itertuples(index=False, name=None))
    out = []
    ordered = sorted(set(groups))
    members = [np.flatnonzero(groups == g) for g in ordered]
    drawn = groupwise_counts([len(idx) for idx in members], n_resamples, random_state)
    for g, idx, counts in zip(ordered, members, drawn, strict=True):
        for stat, fn in (("span_char_f1", _char_sums), ("span_overlap_f1", _overlap_sums)):
            sums = np.array([fn(gs.get(seg_keys[i], []), ps.get(seg_keys[i], []), mismatch) for i in idx])
            p, r, f = _prf(sums.sum(axis=0)[None, :])
            dist = _prf(counts @ sums)[2] if len(counts) else np.zeros(0)
            finite = dist[np.isfinite(dist)]
            low = high = float("nan")
            if np.isfinite(f[0]) and finite.size > 1:
                est = estimate_from_distribution(float(f[0]), finite, n=len(idx), level=level,
                                                 random_state=random_state)
                low, high = float(est.ci_low), float(est.ci_high)
            out.append({"group": str(g), "statistic": stat, "value": float(f[0]), "precision": float(p[0]),
                        "recall": float(r[0]), "ci_low": low, "ci_high": high, "n": len(idx)})
    return out


def _prf(s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall and F1 from summed (precision credit, predicted, gold, recall credit) rows. With nothing
    predicted and nothing in the gold, all three are 1 (nothing to find, nothing wrongly found)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(s[:, 1] > 0, s[:, 0] / np.where(s[:, 1] > 0, s[:, 1], 1.0), np.where(s[:, 2] > 0, np.nan, 1.0))
        r = np.where(s[:, 2] > 0, s[:, 3] / np.where(s[:, 2] > 0, s[:, 2], 1.0), np.where(s[:, 1] > 0, np.nan, 1.0))
        p, r = np.where(np.isnan(p) & ~np.isnan(r), 0.0, p), np.where(np.isnan(r) & ~np.isnan(p), 0.0, r)
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)
    return p, r, f


def detection_f1(score: Any, positive: Any, *, flag_high: bool) -> dict[str, float]:
    """F1 of flagging segments by a threshold on ``score`` against the gold ``positive`` (bool), at the best
    threshold: ``flag_high`` flags scores at least the threshold (error-free detection), else scores below it
    (critical segments). Every distinct score is a candidate (and, below, flagging none). Returns ``f1,
    precision, recall, threshold, n, positives``."""
    x = np.asarray(score, dtype=float)
    y = np.asarray(positive, dtype=bool)
    ok = np.isfinite(x)
    x, y = x[ok], y[ok]
    n_pos = int(y.sum())
    if x.size == 0 or n_pos == 0:
        return {"f1": float("nan"), "precision": float("nan"), "recall": float("nan"), "threshold": float("nan"),
                "n": int(x.size), "positives": n_pos}
    order = np.argsort(-x if flag_high else x, kind="stable")
    xs, ys = x[order], y[order]
    tp = np.cumsum(ys)
    flagged = np.arange(1, len(xs) + 1)
    last = np.r_[xs[1:] != xs[:-1], True]  # a threshold flags every segment of equal score at once
    tp, flagged, cut = tp[last], flagged[last], xs[last]
    precision, recall = tp / flagged, tp / n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(tp > 0, 2 * precision * recall / (precision + recall), 0.0)
    best = int(np.argmax(f1))
    if flag_high:
        threshold = float(cut[best])  # flag score >= threshold
    else:
        above = x[x > cut[best]]
        threshold = float(above.min()) if above.size else float(np.nextafter(cut[best], np.inf))  # flag < threshold
    return {"f1": float(f1[best]), "precision": float(precision[best]), "recall": float(recall[best]),
            "threshold": threshold, "n": int(x.size), "positives": n_pos}
