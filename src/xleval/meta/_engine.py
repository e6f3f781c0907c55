"""The meta-evaluation engine: how well each of several metrics agrees with human scores, per group
(language pair) and across groups, in the statistics of the WMT metrics tasks.

For every group and metric:

* **system level** (system scores: see below): Pearson, Spearman, Kendall tau-b, pairwise accuracy
  (the share of system pairs ordered as humans order them; exact ties, as WMT23's accuracy), and soft
  pairwise accuracy (SPA, Thompson et al. 2024) when :func:`xleval.stats.soft_pairwise_accuracy` is
  installed and the group has a complete systems x segments matrix;
* **segment level** (every row with a human and a metric score): Pearson and Kendall tau-b averaged
  as ``average_by`` says (``none``: pooled over the group's rows; ``item``: per segment over its
  systems, mean over segments; ``system``: per system over its segments, mean over systems;
  mt-metrics-eval's ``average_by``), acc-t (acc23 with tie calibration averaged by item, WMT23/24's
  segment-level statistic), and, given the raw human column ``darr``, WMT20's DARR Kendall-like tau.

Across groups: **global accuracy** (WMT23: pairs of systems of the same group, pooled over groups) and
**cross-group accuracy** (pairs of systems of different groups that share a human scale). The CIs of
the system-level Pearson and of every accuracy resample systems within their groups (one seeded set of
resample counts shared by every metric, so metrics are compared on the same resamples).

**System scores.** SPA needs a complete matrix, so the rule is: the segments judged (a human score
and every metric's score) for every system of the group; ``system_scores="complete"`` (default) makes
every system score the mean over those segments, ``"judged"`` the mean over each system's own judged
segments (the official WMT DA system score); a system-level table (one row per group and system) is
used as it is (``"table"``). The result says which.
"""
from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._base.grouping import canonical_order, group_index, segment_rank
from .._base.seeding import make_rng
from ..exceptions import DataQualityWarning, InputError
from ..stats import correlation, stratified_resample_counts
from ..stats._estimate import estimate_from_distribution
from ..stats._grouped_bootstrap import pairs_correct, resampled_pair_accuracy, resampled_pearson
from ..stats._pairwise import _unit_pairs, pairwise_accuracy
from ..stats._resampling import DEFAULT_RESAMPLING, Resampling
from ..table import check_labels_finite, pair_labels
from ._options import AVERAGE_BY, DEFAULT_STATISTICS, SYSTEM_SCORES, Clustering, MetaStatistics, Spans
from ._results import Cell, MetaEvaluation

__all__ = ["meta_evaluate", "metric_directions", "darr_tau", "AVERAGE_BY", "SYSTEM_SCORES"]

#: spread of the human column across groups that reads as different scales: ratio of group sds
SCALE_SD_RATIO = 4.0


def meta_evaluate(data: Any, metrics: Sequence[str], human: str, *, by: str | Sequence[str] = "lp",
                  system: str = "system", segment: str | None = "seg_id", exclude: Sequence[str] = (),
                  lower_is_better: Sequence[str] | None = None, statistics: MetaStatistics = DEFAULT_STATISTICS,
                  resampling: Resampling = DEFAULT_RESAMPLING, clustering: Clustering | None = None,
                  spans: Spans | None = None) -> MetaEvaluation:
    """Meta-evaluate ``metrics`` (columns) against ``human`` per group of ``by`` and across groups.

    ``exclude``: shell patterns of systems left out (e.g. ``["Human-*"]``: WMT scores MT systems only).
    ``lower_is_better``: the metrics whose lower scores are better (error rates, MetricX); they are negated, so
    that every statistic reads higher as agreeing with the humans, as WMT's tables do. None: each metric's
    direction as the leaderboard finds it (:func:`metric_directions`: the signature's ``dir:``, then the
    registry name, e.g. ``ter``).
    ``statistics`` (:class:`MetaStatistics`): segment averaging, the system-score rule, the human scale(s)
    (without one, groups whose human scores spread very differently are refused: say whether they share a
    scale), SPA, PDP (within-item differences of system scores; CI from items resampled), WMT20's DARR tau
    from a raw human column, the human ceiling (a second human column scored as one more row; every cell
    carries ``relative``, its value over the ceiling's) and chance baselines.
    ``resampling`` (:class:`xleval.stats.Resampling`): the bootstrap of systems behind every interval.
    ``clustering`` (:class:`Clustering`): significance cluster ranks per group and a WMT task's weighted
    ranking (:func:`xleval.stats.read_tasks` reads a task list from a JSON file).
    ``spans`` (:class:`Spans`): error spans (:mod:`xleval.meta._spans`: WMT25's character-level F1 and the
    partial-overlap span F1, micro-averaged) and the error-free / critical detection F1 at each metric's best
    threshold, with precision, recall and the threshold.
    Module docstring: the statistics and the system-score rule."""
    average_by, system_scores, human_scale = statistics.average_by, statistics.system_scores, statistics.human_scale
    darr, ceiling, chance = statistics.darr, statistics.ceiling, statistics.chance
    n_resamples, level, random_state = resampling.n_resamples, resampling.level, resampling.random_state
    clustering = clustering or Clustering()
    spans = spans or Spans()
    frame = getattr(data, "frame", data)
    if not isinstance(frame, pd.DataFrame):
        raise InputError("meta_evaluate needs a table (pandas DataFrame or EvalTable)", argument="data")
    from ..io import with_pair_column

    # an EvalTable names its file in the errors; a frame's `source` would be a column, not a name
    where = "data" if isinstance(data, pd.DataFrame) else str(getattr(data, "source", "data"))
    frame = with_pair_column(frame, by, where)  # the pair from its two codes, as every command
    metrics = _check_columns(frame, metrics, human, by, system, segment, darr)
    if ceiling is not None:
        metrics = _with_ceiling(frame, metrics, human, ceiling)
    by_cols = [by] if isinstance(by, str) else list(by)
    # the keys' one check (a missing cell refused), kept as labels: ('a/b', 'c') and ('a', 'b/c'), or 1 and '1',
    # stay apart (key_labels)
    groups, systems = check_keys(frame, by_cols, system, segment, where)
    notes: list[str] = []
    df = _numeric(frame, [*metrics, human, *([darr] if darr else [])], human=human, darr=darr)
    _negate_lower(df, data, metrics, lower_is_better, ceiling, notes)
    df["_group"], df["_system"] = groups, systems
    whole = frame  # every row, excluded systems too: the segments error spans may name
    if exclude:
        df, frame = _without(df, frame, [exclude] if isinstance(exclude, str) else list(exclude), notes)
    seg_level, by_document = _segment_level(df, frame, segment, notes)
    order = _canonical_order(df, df["_segment"] if seg_level else None)
    df, frame = df.iloc[order], frame.iloc[order]
    labelled = np.isfinite(df[human].to_numpy())
    judged = _judged(df, labelled, human, notes)
    _check_metrics(judged, metrics, human)
    scale_column = f"{human}_scale"
    if human_scale is None and scale_column in frame.columns:  # written with the scores by `xleval ingest`
        human_scale = _scale_column(frame[scale_column].to_numpy()[labelled], judged["_group"].to_numpy(),
                                    scale_column)
        notes.append(f"human scale of each group from column {scale_column!r}")
    scales = _scales(judged, human, human_scale, seg_level)
    lower = _lower_groups(judged, human, scales)
    if lower:  # MQM error points: negated, as mt-metrics-eval stores them, so higher agrees
        turned = [human] + ([ceiling] if ceiling is not None else [])
        flip = np.where(df["_group"].isin(lower).to_numpy(), -1.0, 1.0)
        df = df.assign(**{c: df[c].to_numpy(dtype=float) * flip for c in turned})
        judged = df[labelled]
        notes.append(f"human scale lower is better ({', '.join(sorted({scales[g] for g in lower}))}) in "
                     f"{len(lower)} group(s): {human}{' and ' + ceiling if ceiling else ''} negated there, so that "
                     "every statistic reads higher as agreeing with the humans")
    rng, seed = make_rng(random_state)
    coverage: dict[str, dict[str, Any]] = {}
    matrices: dict[str, dict[str, np.ndarray]] = {}
    systems = _system_table(judged, metrics, human, seg_level, system_scores, coverage, matrices, scales, notes,
                            statistics.spa)
    counts = stratified_resample_counts(systems["_group"].to_numpy(), n_resamples, rng)
    cells = _group_cells(df, judged, systems, metrics, human, seg_level, statistics, counts, resampling, seed,
                         (coverage, matrices), notes)
    glob = {m: _pooled(systems, m, human, counts, level, seed, "within", None) for m in metrics}
    cross = {m: _pooled(systems, m, human, counts, level, seed, "cross", scales) for m in metrics}
    if all(np.isnan(c.value) for c in cross.values()):
        notes.append("no cross-group accuracy: no two groups share a human scale")
    notes += _partial_coverage(systems, metrics)
    ranking: dict[str, dict[str, float]] = {}
    task = clustering.task
    if clustering or chance:
        cells, glob, ranking, task = _ranks(cells, glob, systems, matrices, df, metrics, human, seg_level,
                                            statistics, clustering, seed, notes)
    if chance:
        cross = {m: replace(c, chance=cross_chance(systems, m, human, scales)) for m, c in cross.items()}
    span_sources: tuple[str, ...] = ()
    if spans:
        if not seg_level:
            raise InputError("span and detection statistics are segment-level; give a segment-level table",
                             argument="predicted_spans")
        span_sources = tuple(str(k) for k in spans.predicted or ())
        seg_keys = [*by_cols, system, *(["doc_id"] if by_document else []), str(segment)]
        _check_span_keys(whole, seg_keys, spans)
        cells += _span_statistics(frame, judged, seg_keys, metrics, human, spans,
                                  resampling, seed, notes)
    if ceiling is not None:
        cells, glob, cross = _relative(cells, glob, cross, ceiling)
        notes.append(f"human ceiling: {ceiling} scored against {human} with the same statistics (its own row); "
                     "each cell's relative is its value divided by the ceiling's")
    return MetaEvaluation(tuple(metrics), human, "+".join(by_cols), system, segment if seg_level else None,
                          average_by, system_scores if seg_level else "table", tuple(cells), glob,
                          {m: c for m, c in cross.items() if np.isfinite(c.value)}, coverage, level,
                          n_resamples, seed, tuple(notes), task, ranking, ceiling, span_sources)


def _with_ceiling(frame: pd.DataFrame, metrics: list[str], human: str, ceiling: str) -> list[str]:
    """``metrics`` and the human ceiling column, scored as one more row; a ceiling that is the human column, a
    metric or no column is refused."""
    if ceiling == human or ceiling in metrics:
        raise InputError(f"ceiling={ceiling!r} is {'the human column' if ceiling == human else 'a metric'}; the "
                         "ceiling is a second human column (another rater)", argument="ceiling", value=ceiling)
    if ceiling not in frame.columns:
        raise InputError(f"ceiling column {ceiling!r} not in the table (columns: {list(frame.columns)[:12]}); "
                         "name the second human column", argument="ceiling", value=ceiling)
    return [*metrics, ceiling]


def _judged(df: pd.DataFrame, labelled: np.ndarray, human: str, notes: list[str]) -> pd.DataFrame:
    """The rows with a human score; none is refused, and groups without any are named (note and warning)."""
    judged = df[labelled]
    if judged.empty:
        raise InputError(f"human column {human!r} has no values; give the column with human scores",
                         argument="human", value=human)
    unjudged = sorted(set(df["_group"]) - set(judged["_group"]))
    if unjudged:
        msg = (f"{len(unjudged)} group(s) without any human score left out: {', '.join(unjudged[:8])}"
               f"{' ...' if len(unjudged) > 8 else ''}")
        notes.append(msg)
        warnings.warn(msg, DataQualityWarning, stacklevel=3)
    return judged


def _span_statistics(frame: pd.DataFrame, judged: pd.DataFrame, keys: list[str], metrics: list[str], human: str,
                     spans: Spans, resampling: Resampling, seed: Any, notes: list[str]) -> list[Cell]:
    """The error-span F1 of each predicted span source against the gold spans, and each metric's error-free /
    critical detection F1 (``keys``: the group, system and segment columns that join spans to rows)."""
    segs = frame.loc[judged.index, keys].astype(str).assign(_group=judged["_group"].to_numpy())
    cells: list[Cell] = []
    if spans.predicted:
        cells += _span_cells(spans.gold, spans.predicted, segs, keys, spans.mismatch, resampling.n_resamples,
                             resampling.level, seed)
    return cells + _detection_cells(judged, segs, keys, metrics, human, spans.gold, spans.error_free, spans.critical,
                                    notes)


def _check_span_keys(frame: pd.DataFrame, keys: list[str], spans: Spans) -> None:
    """Error spans whose key (group, system, segment) is no row of the table: a typo in a key ('A-B' for 'a-b',
    segments numbered from 1 against 0) left them out, silently, and a table of spans that matched nothing scored
    a perfect F1 (nothing to find, nothing found). None matching: refused; some: a warning that counts them."""
    tables = [("gold_spans", "", spans.gold),
              *(("predicted_spans", f" ({name})", t) for name, t in (spans.predicted or {}).items())]
    known: set[tuple] | None = None
    for argument, label, table in tables:
        if table is None or len(table) == 0 or not set(keys) <= set(table.columns):
            continue  # no spans, or no key columns (refused with the columns' names when the spans are read)
        if known is None:
            known = set(frame[keys].astype(str).itertuples(index=False, name=None))
        rows = list(table[keys].astype(str).itertuples(index=False, name=None))
        lost = [k for k in rows if k not in known]
        if not lost:
            continue
        first = "(" + ", ".join(repr(v) for v in lost[0]) + ")"
        if len(lost) == len(rows):
            raise InputError(f"none of the {len(rows)} span(s) of {argument}={label} names a row of the table "
                             f"(first: {first}); check the key columns ({', '.join(keys)}) against the table's values",
                             argument=argument)
        warnings.warn(f"{len(lost)} of the {len(rows)} span(s) of {argument}={label} name no row of the table and are "
                      f"left out (first: {first}); check the key columns ({', '.join(keys)})", DataQualityWarning,
                      stacklevel=4)


def _negate_lower(df: pd.DataFrame, data: Any, metrics: list[str], lower_is_better: Sequence[str] | None,
                  ceiling: str | None, notes: list[str]) -> None:
    """Negate (in ``df``) the metrics whose lower scores are better: given, or as the leaderboard finds them."""
    if lower_is_better is not None:
        if isinstance(lower_is_better, str):
            lower_is_better = [lower_is_better]
        unknown = [c for c in lower_is_better if c not in metrics]
        if unknown:
            raise InputError(f"lower_is_better names {unknown[0]!r}, which is not among the metrics {metrics[:8]}; "
                             "name metric columns only", argument="lower_is_better", value=unknown[0])
    lower = metric_directions(data, metrics) if lower_is_better is None else [m for m in metrics
                                                                                if m in set(lower_is_better)]
    lower = [m for m in lower if m != ceiling]  # a human column reads higher as better, like ``human``
    for m in lower:
        df[m] = -df[m]
    if lower:
        notes.append(f"lower is better for {', '.join(lower)}: negated, so that every statistic reads higher as "
                     "better (as WMT's tables do)")


def excluded_rows(names: pd.Series, exclude: Sequence[str]) -> np.ndarray:
    """The rows whose system name matches a shell pattern of ``exclude``; a pattern that matches nothing, or patterns
    that leave nothing, are refused (the one rule of ``meta --exclude``, for its tables and its calibrated
    variants)."""
    import fnmatch

    names = names.astype(str)
    hits = [names.map(lambda s, p=p: fnmatch.fnmatchcase(s, p)).to_numpy(dtype=bool) for p in exclude]
    idle = [p for p, hit in zip(exclude, hits, strict=True) if not hit.any()]
    if idle:
        shown = sorted(names.unique())
        raise InputError(f"exclude pattern {idle[0]!r} matches no system (systems: {shown[:6]}"
                         f"{' ...' if len(shown) > 6 else ''}); check the pattern (shell style, case-sensitive)",
                         argument="exclude", value=idle[0])
    out = np.logical_or.reduce(hits)
    if out.all():
        raise InputError(f"exclude={list(exclude)} leaves out every system; check the patterns", argument="exclude")
    return out


def _without(df: pd.DataFrame, frame: pd.DataFrame, exclude: list[str],
             notes: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``df`` and ``frame`` without the systems matching a shell pattern of ``exclude`` (:func:`excluded_rows`)."""
    out = excluded_rows(df["_system"], exclude)
    notes.append(f"{df.loc[out, '_system'].nunique()} system name(s) matching {list(exclude)} left out")
    return df[~out], frame[~out]


def _segment_level(df: pd.DataFrame, frame: pd.DataFrame, segment: str | None,
                   notes: list[str]) -> tuple[bool, bool]:
    """Whether the table has several segments per (group, system) (then ``df["_segment"]`` names them), and
    whether a segment is keyed by its ``doc_id`` too (``segment`` repeats across documents but not within one); a
    repeated (group, system, segment), or several rows per (group, system) without a segment column, is refused."""
    by_document = False
    seg_level = segment is not None and segment in frame.columns
    if seg_level:
        df["_segment"] = frame[segment].astype(str)
        key = ["_group", "_system", "_segment"]
        if df.duplicated(key).any() and "doc_id" in frame.columns and segment != "doc_id":
            # segments numbered within documents (WMT25's files, many corpora): a segment is its document and number
            within = frame["doc_id"].astype(str) + "#" + frame[segment].astype(str)
            if not df.assign(_segment=within).duplicated(key).any():
                df["_segment"], by_document = within, True
                notes.append(f"{segment!r} repeats across documents within a (group, system): segments are numbered "
                             f"within documents, so a segment is its (doc_id, {segment})")
        later = df.duplicated(key)
        if later.any():
            dup = df.loc[later, key].iloc[0]
            fix = "average or drop the repeats first, or name the segment column (segment=)"
            pairs = pair_labels(frame)
            repeated = sorted(set(pairs[df.duplicated(key, keep=False).to_numpy()])) if pairs is not None else []
            if len(repeated) > 1:  # by tgt_lang: WMT25's cs-de and en-de share seg_ids
                shown = ", ".join(repeated[:6]) + (" ..." if len(repeated) > 6 else "")
                fix = (f"the group holds several language pairs ({shown}) whose segment ids coincide, different "
                       f"segments of different test sets: group by the pair (by='lp'), or {fix}")
            raise InputError(f"{int(later.sum())} row(s) repeat a (group, system, segment), e.g. ({dup['_group']}, "
                             f"{dup['_system']}, {dup['_segment']}); {fix}", argument="segment", value=segment)
        seg_level = bool(df.groupby(["_group", "_system"]).size().max() > 1)
    if not seg_level:
        if df.duplicated(["_group", "_system"]).any():
            raise InputError(f"several rows per (group, system) but no segment column {segment!r}: name the "
                             "segment column (segment=), or give one row per system", argument="segment",
                             value=segment)
        notes.append("the table is system-level (one row per group and system): its scores are the system scores")
    return seg_level, by_document


def _group_cells(df: pd.DataFrame, judged: pd.DataFrame, systems: pd.DataFrame, metrics: list[str], human: str,
                 seg_level: bool, statistics: MetaStatistics, counts: Any, resampling: Resampling, seed: Any,
                 tables: tuple[dict, dict], notes: list[str]) -> list[Cell]:
    """Every per-group cell: system-level statistics, and at segment level the segment averages, PDP, SPA and
    DARR as ``statistics`` asks. ``tables``: the SPA coverage and matrices per group of ``_system_table``."""
    coverage, matrices = tables
    level, n_resamples = resampling.level, resampling.n_resamples
    pdp_counts: dict[str, Any] = {}  # PDP's bootstrap counts of the current group's size, shared by its metrics
    cells: list[Cell] = []
    for g in sorted(systems["_group"].unique()):
        idx = np.flatnonzero(systems["_group"].to_numpy() == g)
        rows = judged[judged["_group"] == g]
        for m in metrics:
            cells += _system_cells(g, m, systems, idx, human, counts, level, seed)
            if seg_level:
                cells += _segment_cells(g, m, rows, human, statistics.average_by)
                if statistics.pdp:
                    cells += _pdp_cell(g, m, rows, human, n_resamples, level, seed, pdp_counts)
                if statistics.spa:
                    cells += _spa_cell(g, m, human, coverage[g], matrices[g], statistics.spa_permutations, notes)
                if statistics.darr:
                    cells += [_darr_cell(g, m, df[df["_group"] == g], statistics.darr, statistics.darr_threshold)]
    few = sorted({c.group for c in cells if c.statistic == "sys_accuracy" and c.n < 3})
    if few:  # two systems: r and rho are +-1 whatever the metric says; left out, and said
        notes.append(f"system-level Pearson, Spearman and Kendall need 3 or more systems: none for group(s) "
                     f"{', '.join(map(str, few[:6]))}{' ...' if len(few) > 6 else ''} (2 systems; their pairwise "
                     "accuracy is given)")
    constant = sum(c.left_out for c in cells if c.statistic == "seg_pearson")
    if constant:
        unit = "item" if statistics.average_by == "item" else "system"
        notes.append(f"seg_pearson and seg_kendall averaged by {unit}: {constant} {unit}(s) where the metric's or the "
                     "human's scores are constant left out over all cells (no correlation is defined there; "
                     "mt-metrics-eval leaves them out too); each cell's count is its left_out")
    return cells


def _span_cells(gold, predicted, segs, keys, mismatch, n_resamples, level, seed) -> list[Cell]:
    from ._spans import span_f1

    out = []
    for name, pred in predicted.items():
        for row in span_f1(gold, pred, segs, keys=keys, by="_group", mismatch=mismatch, n_resamples=n_resamples,
                           level=level, random_state=int(seed or 0)):
            stat = row["statistic"]
            out.append(Cell(row["group"], str(name), stat, row["value"], row["ci_low"], row["ci_high"], row["n"]))
            out.append(Cell(row["group"], str(name), stat.replace("_f1", "_precision"), row["precision"], n=row["n"]))
            out.append(Cell(row["group"], str(name), stat.replace("_f1", "_recall"), row["recall"], n=row["n"]))
    return out


def _detection_cells(judged, segs, keys, metrics, human, gold_spans, error_free, critical, notes) -> list[Cell]:
    from ._spans import _spans_by_segment, detection_f1

    out: list[Cell] = []
    h = judged[human].to_numpy()
    tasks = []
    if error_free is not None:
        clean = h >= error_free
        if gold_spans is not None:
            spanned = set(_spans_by_segment(gold_spans, keys, "gold"))
            clean &= np.array([k not in spanned for k in segs[keys].itertuples(index=False, name=None)])
        tasks.append(("error_free", clean, True))
        notes.append(f"error_free: gold 1 when {human} >= {error_free:g}"
                     + (" and the gold has no error span" if gold_spans is not None else " (no gold spans given: the "
                        "human score alone)") + "; a metric flags segments scoring at least its threshold")
    if critical is not None:
        tasks.append(("critical", h < critical, False))
        notes.append(f"critical: gold 1 when {human} < {critical:g}; a metric flags segments scoring below its "
                     "threshold")
    if tasks:
        notes.append("detection F1 is reported at each metric's best threshold, chosen on the same data: an "
                     "optimistic figure (the organisers' caveat); compare metrics with it, do not read it as the F1 "
                     "of a deployed threshold")
    groups = judged["_group"].to_numpy()
    for g in sorted(set(groups)):
        rows = groups == g
        for m in metrics:
            x = judged[m].to_numpy()[rows]
            if not np.isfinite(x).any():
                continue
            for name, positive, high in tasks:
                res = detection_f1(x, positive[rows], flag_high=high)
                if not np.isfinite(res["f1"]):
                    continue
                n = int(res["n"])
                out += [Cell(g, m, f"{name}_f1", res["f1"], n=n),
                        Cell(g, m, f"{name}_precision", res["precision"], n=n),
                        Cell(g, m, f"{name}_recall", res["recall"], n=n),
                        Cell(g, m, f"{name}_threshold", res["threshold"], n=n)]
    return out


def _relative(cells, glob, cross, ceiling):
    """Every cell with ``relative``: its value over the human ceiling's value in the same group and statistic."""
    top = {(c.group, c.statistic): c.value for c in cells if c.metric == ceiling}

    def rel(c: Cell, key: tuple[str, str]) -> Cell:
        v = top.get(key, float("nan"))
        return replace(c, relative=c.value / v if np.isfinite(v) and v != 0 and np.isfinite(c.value) else float("nan"))

    cells = [rel(c, (c.group, c.statistic)) for c in cells]
    out = []
    for pooled in (glob, cross):
        v = pooled.get(ceiling)
        if v is not None:
            top[("*", v.statistic)] = v.value
        out.append({m: rel(c, ("*", c.statistic)) for m, c in pooled.items()})
    return cells, out[0], out[1]


#: a task's (level, statistic) -> the cell statistic it ranks
TASK_CELLS = {("sys", "pearson"): "sys_pearson", ("sys", "spearman"): "sys_spearman", ("sys", "kendall"): "sys_kendall",
              ("sys", "pairwise_accuracy"): "sys_accuracy", ("sys", "spa"): "spa", ("seg", "acc_t"): "seg_acc_t",
              ("seg", "pearson"): "seg_pearson"}
TASK_PRESETS = ("wmt23", "wmt24", "wmt25")


def _task_list(task: Any, groups: Sequence[str]) -> tuple[str, list[Any]]:
    """A task preset's tasks over ``groups`` (:func:`xleval.stats.wmt_tasks`), or a task list as given
    (:func:`xleval.stats.read_tasks`); and its label."""
    from ..stats import MetaTask, wmt_tasks

    if isinstance(task, str):
        _check_choice(task, "task", TASK_PRESETS)
        return task, wmt_tasks(task, lps=list(groups))
    tasks = list(task)
    if not tasks or not all(isinstance(t, MetaTask) for t in tasks):
        raise InputError("task= takes a preset (wmt23, wmt24, wmt25) or a list of xleval.stats.MetaTask "
                         "(xleval.stats.read_tasks reads one from a file)", argument="task")
    return f"task list ({len(tasks)} tasks)", tasks


def _ranks(cells, glob, systems, matrices, df, metrics, human, seg_level, statistics, clustering, seed, notes):
    from dataclasses import replace

    from ..stats import chance_baseline, metric_clusters
    from ._ranks import chance_cells, clustered_cells, task_ranking

    system_scores, spa_permutations = statistics.system_scores, statistics.spa_permutations
    chance, n_simulations = statistics.chance, statistics.chance_simulations
    clusters, task, n_resamples = clustering.statistics, clustering.task, clustering.n_resamples
    alpha, ties = clustering.alpha, clustering.ties
    tasks: list[Any] = []
    label = None
    segment_only = [c for c in clusters if c in ("spa", "seg_acc_t", "seg_pearson")]
    if not seg_level and segment_only:  # they had no cell to rank: nothing was said
        raise InputError(f"clusters= names segment-level statistics ({', '.join(segment_only)}); give a "
                         "segment-level table, or cluster system-level statistics (sys_pearson, sys_accuracy, ...)",
                         argument="clusters", value=segment_only[0])
    if task is not None:
        label, tasks = _task_list(task, sorted(systems["_group"].unique()))
        if not seg_level and any(t.level == "seg" or t.statistic == "spa" for t in tasks):
            raise InputError(f"task={label!r} ranks segment-level statistics too; give a segment-level table",
                             argument="task", value=label)
    stats = list(dict.fromkeys([*clusters, *(TASK_CELLS[(t.level, t.statistic)] for t in tasks
                                             if len(t.languages) == 1)]))
    global_task = next((t for t in tasks if len(t.languages) > 1), None)
    means = seg_level and system_scores == "complete"
    per_group = {g: _group_inputs(g, systems, matrices.get(g), df[df["_group"] == g], metrics, human, seg_level,
                                  means) for g in sorted(systems["_group"].unique())}
    cells, results = clustered_cells(cells, per_group, metrics, stats, n_resamples=n_resamples, alpha=alpha,
                                     seed=seed, notes=notes, ties=ties, spa_resamples=spa_permutations)
    everywhere = [m for m in metrics if np.isfinite(systems[m].to_numpy()).all()
                  and np.array_equal(systems[human_of(m)].to_numpy(), systems[human].to_numpy())]
    global_res = None
    if (global_task is not None or "sys_accuracy" in clusters) and everywhere:
        rows = (np.isin(systems["_group"].to_numpy(), list(global_task.languages)) if global_task is not None
                and set(global_task.languages) != set(systems["_group"]) else np.ones(len(systems), dtype=bool))
        global_res = metric_clusters({m: systems[m].to_numpy()[rows] for m in everywhere},
                                     systems[human].to_numpy()[rows], "pairwise_accuracy",
                                     groups=systems["_group"].to_numpy()[rows],
                                     n_resamples=n_resamples, random_state=seed, alpha=alpha, ties=ties)
        glob = {m: replace(c, rank=global_res.ranks.get(m)) for m, c in glob.items()}
    if chance:
        cells = chance_cells(cells, per_group, metrics, n_simulations=n_simulations, seed=seed)
        g = systems["_group"].to_numpy()
        glob = {m: replace(c, chance=chance_baseline("pairwise_accuracy",
                                                     systems[human_of(m)].to_numpy()[np.isfinite(systems[m].to_numpy())],
                                                     systems[m].to_numpy()[np.isfinite(systems[m].to_numpy())],
                                                     groups=g[np.isfinite(systems[m].to_numpy())]).value)
                for m, c in glob.items()}
    if results or global_res is not None:
        notes.append(f"cluster p-values: {n_resamples} resamples; a resampled difference equal to the observed one "
                     + ("counts as at least as large (ties=count)" if ties == "count" else
                        "counts as mt-metrics-eval's floating-point >= decides (ties=mtme)"))
    ranking = task_ranking(label, tasks, results, global_res, notes) if tasks else {}
    return cells, glob, ranking, label


def _group_inputs(g, systems, complete, rows, metrics, human, seg_level, means=False) -> dict[str, Any]:
    """One group's scores for clusters and chance baselines: system scores, the complete matrix, and the
    acc-t matrix (systems x segments that every metric scored for every system; human NaN = not judged).
    Clusters compare metrics on the same rows: with ``means`` (system scores over complete segments) the
    system scores are the row means of the matrix every metric scored."""
    sys_rows = systems[systems["_group"] == g]
    if means and complete is not None and complete[human].shape[1] > 0:
        system = {"human": complete[human].mean(axis=1),
                  **{k: v.mean(axis=1) for k, v in complete.items() if k in metrics}}
    else:
        h = sys_rows[human].to_numpy()
        system = {"human": h, **{m: sys_rows[m].to_numpy() for m in metrics
                                 if np.isfinite(sys_rows[m].to_numpy()).all()
                                 and np.array_equal(sys_rows[human_of(m)].to_numpy(), h)}}
    out: dict[str, Any] = {"system": system, "complete": None, "acc_t": None}
    if not seg_level:
        return out
    if complete is not None:
        out["complete"] = {("human" if k == human else k): v for k, v in complete.items() if not k.startswith("\x00")}
    names = sorted(sys_rows["_system"])
    rows = rows[rows["_system"].isin(names)]
    scoring = [m for m in metrics if m in system]
    ok = np.logical_and.reduce([np.isfinite(rows[m].to_numpy()) for m in scoring]) if scoring else None
    if ok is None:
        return out
    per_seg = rows[ok].groupby("_segment")["_system"].nunique()
    keep = rows[rows["_segment"].isin(per_seg.index[per_seg == len(names)])]
    if keep.empty:
        return out
    order = _segment_order(keep)
    out["acc_t"] = {("human" if c == human else c): keep.pivot(index="_system", columns="_segment", values=c)
                    .reindex(names)[order].to_numpy() for c in [human, *scoring]}
    return out


# ------------------------------------------------------------------------------------------ checks
def _check_choice(value: str, name: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise InputError(f"{name}={value!r}: use one of {', '.join(choices)}", argument=name, value=value)


def _check_columns(frame, metrics, human, by, system, segment, darr) -> list[str]:
    if isinstance(metrics, str):
        metrics = [metrics]
    metrics = list(dict.fromkeys(metrics))
    if not metrics:
        raise InputError("no metric column named: give metrics= (e.g. ['chrf', 'bleu'])", argument="metrics")
    if human in metrics:
        raise InputError(f"human column {human!r} is also among the metrics; a metric is compared with the human "
                         "scores, so name it once, as human=", argument="metrics", value=human)
    by_cols = [by] if isinstance(by, str) else list(by)
    for name, cols in (("metrics", metrics), ("human", [human]), ("by", by_cols), ("system", [system]),
                       ("darr", [darr] if darr else [])):
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise InputError(f"column(s) {missing} not in the table (columns: {list(frame.columns)[:12]}); "
                             f"check {name}=", argument=name, value=missing[0])
    return metrics


def check_keys(frame: pd.DataFrame, by_cols: Sequence[str], system: str, segment: str | None,
               where: str = "data") -> tuple[np.ndarray, np.ndarray]:
    """Refuse a missing (null, NaN or empty) group, system or segment cell (and ``doc_id`` cell, where segments are
    numbered within documents), naming the column, its first row and
    how many (:func:`~xleval._base.grouping.group_index`'s one message, as `leaderboard` and `diagnose` refuse it).
    Read as text, such a cell became a group, a system or a segment ``nan``: a fifth system, or a segment that
    "repeats". Rows are counted in ``frame``'s order, so call it before any row is dropped or reordered. Returns
    each row's group label (key parts joined by '/') and system label."""
    groups = group_index(frame[[*by_cols]], where=where).row_labels("/")
    systems = group_index([frame[system]], names=[system], where=where).row_labels()
    if segment is not None and segment in frame.columns:
        group_index(frame[[segment]], where=where)
        if "doc_id" in frame.columns and segment != "doc_id":
            # segments numbered within documents are keyed by their document too (_segment_level): there a null
            # doc_id would be one more document "nan", merging the segments of every row that lacks it
            key = pd.DataFrame({"g": groups, "s": systems, "seg": frame[segment].astype(str).to_numpy()})
            if key.duplicated().any():
                group_index(frame[["doc_id"]], where=where)
    return groups, systems


def metric_directions(data: Any, metrics: Sequence[str],
                      signatures: Mapping[str, str | None] | None = None) -> list[str]:
    """The metrics whose lower scores are better, by the one rule (:func:`xleval.metrics.higher_is_better`):
    the direction a signature states (``dir:lower`` for MetricX; ``signatures``, else an
    :class:`~xleval.table.EvalTable`'s), then the registry name (``ter``)."""
    from ..metrics._direction import higher_is_better

    if signatures is None:
        signature = getattr(data, "signature", None)
        signatures = {m: signature(m) for m in metrics} if callable(signature) else {}
    frame = getattr(data, "frame", data)
    columns = getattr(frame, "columns", ())
    return [m for m in metrics
            if not higher_is_better(m, signatures.get(m), values=frame[m] if m in columns else None)]


def _numeric(frame: pd.DataFrame, columns: Sequence[str], *, human: str, darr: str | None) -> pd.DataFrame:
    """The score columns as floats through the readers' one number parser (:func:`xleval.table.numeric_column`:
    empty and NA tokens are missing, text is refused naming its row). Every score must be finite: an infinite
    human score (:func:`xleval.table.check_labels_finite`) or metric score is refused naming its row, never
    read as "not judged" (an empty cell is the way to say a row was not scored)."""
    from ..table import numeric_column

    out = pd.DataFrame(index=frame.index)
    for c in dict.fromkeys(columns):
        role = "human" if c == human else "darr" if c == darr else "metrics"
        try:
            values = numeric_column(frame, c, argument=role)
        except InputError as exc:
            if " is not a number" not in str(exc):
                raise
            detail = str(exc)[str(exc).find("row "):]
            raise InputError(f"column {c!r} ({role}=) holds text where numbers are expected: {detail}",
                             argument=role, value=c) from None
        if role != "metrics":  # the one rule for human scores (xleval.table.check_labels_finite)
            check_labels_finite(values, c, argument=role)
        elif np.isinf(values).any():
            first = int(np.flatnonzero(np.isinf(values))[0])
            raise InputError(f"column {c!r} row {first + 1}: metric score {values[first]:g} is infinite "
                             f"({int(np.isinf(values).sum())} such cells); a score is a finite number: fix the cell, "
                             "or leave it empty for a row the metric did not score", argument="metrics", value=c)
        out[c] = values
    return out


def _check_metrics(judged: pd.DataFrame, metrics: list[str], human: str) -> None:
    for m in metrics:
        x = judged[m].to_numpy()
        finite = x[np.isfinite(x)]
        if finite.size == 0:
            raise InputError(f"metric {m!r} has no score on a row with a human score; give its scores or drop it "
                             "from the metrics", argument="metrics", value=m)
        if np.ptp(finite) == 0:
            raise InputError(f"metric {m!r} is constant ({finite[0]:g} on all {finite.size} judged rows): it orders "
                             "nothing; drop it from the metrics or check that the column was filled",
                             argument="metrics", value=m)
        spread = judged[np.isfinite(x)].groupby("_group")[m].agg(lambda v: np.ptp(v.to_numpy()))
        if (spread == 0).all():
            raise InputError(f"metric {m!r} is tied everywhere: one value per group ({len(spread)} group(s)), so it "
                             "orders nothing inside a group; drop it from the metrics or check how it was joined "
                             "to the rows", argument="metrics", value=m)
        scored = judged[np.isfinite(x)].groupby("_group")["_system"].unique()
        for g, rows in judged.groupby("_group"):
            if g not in scored.index:
                continue
            lacking = sorted(set(rows["_system"]) - set(scored[g]))
            if lacking:
                leave_out = f"exclude={lacking[0]!r}" + (" (repeated for each, or a shell pattern such as "
                                                          "'Human-*')" if len(lacking) > 1 else "")
                raise InputError(f"metric {m!r} scores some systems of group {g} but not {lacking[:3]} "
                                 f"({len(lacking)} of {rows['_system'].nunique()}): every system of a group needs "
                                 f"the metric's scores; score them, or leave them out with {leave_out}",
                                 argument="metrics", value=m)
    n_sys = judged.groupby("_group")["_system"].nunique()
    if (n_sys < 2).any():
        lone = list(n_sys.index[n_sys < 2])
        raise InputError(f"group(s) {lone[:5]} have one judged system: agreement orders systems, which needs at "
                         "least 2 per group; drop the group or group by another column (by=)", argument="by",
                         value=lone[0])
    spread = judged.groupby("_group")[human].agg(lambda s: np.ptp(s.to_numpy()))
    if (spread == 0).all():
        raise InputError(f"human column {human!r} is tied everywhere (one value per group): no pair of systems or "
                         "segments is ordered; give the human scores, not a constant", argument="human", value=human)


def _canonical_order(df: pd.DataFrame, segments: pd.Series | None) -> np.ndarray:
    """Row positions sorted by group, system and segment (integer segment ids by value, others as text), so that
    no statistic, resample or permutation depends on the order of the table's rows."""
    if segments is not None:
        df["_seg_order"] = segment_rank(segments)  # kept: SPA's matrices order their segments by it
    return canonical_order(df["_group"].to_numpy(), df["_system"].to_numpy(),
                           df["_seg_order"].to_numpy() if segments is not None else None)


def _scale_column(values: np.ndarray, groups: np.ndarray, name: str) -> dict[str, str]:
    """Group -> its scale, from a scale column beside the human scores (ingest mqm/esa/gold write one), by the
    rule of mixed gold (:func:`xleval.ratings.gold_scales`: one scale per group, or refused)."""
    from ..ratings import gold_scales

    return gold_scales(pd.DataFrame({"group": groups, name: values}), scale=name, by="group")

def _scales(judged: pd.DataFrame, human: str, human_scale, seg_level: bool) -> dict[str, str]:
    """One scale name per group: the given ones, else ``shared`` once the human column looks like one scale:
    segment scores whose sds differ less than :data:`SCALE_SD_RATIO`-fold and whose ranges overlap. System means
    only need ranges that overlap, or lie apart by less than the groups' median range: their spread depends on how
    alike the systems are, and their levels on how good (WMT20's raw DA system scores: ps-en at most 67.3, pl-en at
    least 73.2, one scale; the groups' median range 14.9)."""
    groups = sorted(judged["_group"].unique())
    if isinstance(human_scale, str):
        return dict.fromkeys(groups, human_scale)
    if isinstance(human_scale, Mapping):
        missing = [g for g in groups if g not in human_scale]
        unknown = [g for g in human_scale if g not in groups]
        if missing or unknown:
            raise InputError(f"human_scale= {'no scale for group(s) ' + str(missing[:5]) if missing else ''}"
                             f"{'; ' if missing and unknown else ''}"
                             f"{'group(s) ' + str(unknown[:5]) + ' not in the table' if unknown else ''}; name a "
                             "scale for every group (GROUP=SCALE)", argument="human_scale")
        return {g: str(human_scale[g]) for g in groups}
    if len(groups) > 1:
        sd = judged.groupby("_group")[human].std().fillna(0)
        lo, hi = judged.groupby("_group")[human].min(), judged.groupby("_group")[human].max()
        ratio = sd.max() / sd[sd > 0].min() if (sd > 0).any() else 1.0
        apart = 0.0 if seg_level else float((hi - lo).median())  # system means: a gap within their usual range
        disjoint = lo.max() > hi.min() + apart
        spread_differs = seg_level and ratio > SCALE_SD_RATIO
        if spread_differs or disjoint:
            why = (f"sd from {sd.min():.3g} ({sd.idxmin()}) to {sd.max():.3g} ({sd.idxmax()})" if spread_differs
                   else f"ranges do not overlap ({hi.idxmin()} at most {hi.min():.3g}, {lo.idxmax()} at least "
                        f"{lo.max():.3g}" + (f", further apart than the groups' median range, {apart:.3g}" if apart
                                             else "") + ")")
            raise InputError(f"human column {human!r} looks like different scales across groups ({why}); say which: "
                             "human_scale='NAME' if they share one scale, or GROUP=SCALE per group (cross-group "
                             "pairs then join groups of one scale)", argument="human_scale")
    return dict.fromkeys(groups, "shared")


def _lower_groups(judged: pd.DataFrame, human: str, scales: dict[str, str]) -> list[str]:
    """The groups whose named human scale is lower-is-better (:func:`xleval.calibration.human_scale_direction`:
    HTER; MQM written as error points, by its labels' signs in the group); names the library does not know
    (``shared``, a user's own) read higher as better, as WMT's tables do."""
    from ..calibration._scales import human_scale_direction, one_known_scale

    return [g for g, name in scales.items() if one_known_scale([name]) is not None and human_scale_direction(
        name, judged.loc[judged["_group"] == g, human].to_numpy(dtype=float)) is False]


def _partial_coverage(systems: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """The note where some metrics score only some groups: their accuracies across groups pool those groups only
    (WMT20's systems.csv: BLEURT scores the 9 pairs into English, 0.841 cross-group accuracy, beside COMET's 0.744
    over all 16)."""
    groups = systems["_group"].to_numpy()
    every = sorted(set(groups.tolist()))
    short = []
    for m in metrics:
        has = sorted(set(groups[np.isfinite(systems[m].to_numpy(dtype=float))].tolist()))
        if has and len(has) < len(every):
            gone = [g for g in every if g not in has]
            short.append(f"{m} {len(has)} of {len(every)} (none in {', '.join(gone[:6])}"
                         f"{f' and {len(gone) - 6} more' if len(gone) > 6 else ''})")
    if not short or len(metrics) < 2:
        return []
    return [f"metrics that score only some groups: {'; '.join(short)}: their accuracies across groups pool those "
            "groups only and do not compare with the other metrics' (keep the groups every metric scores to compare "
            "them, as the calibrated variants are compared)"]


# ------------------------------------------------------------------------------------- system table
def human_of(m: str) -> str:
    """The system table's column of human system scores paired with metric ``m`` (the same rows as m's)."""
    return f"\x00human:{m}"


def _system_table(judged, metrics, human, seg_level, system_scores, coverage, matrices, scales, notes,
                  spa) -> pd.DataFrame:
    """One row per (group, system): every metric's system score, the human's (``human``) and, per metric, the
    human's over the metric's own rows (:func:`human_of`). Each metric rests on its own rows: one metric's
    missing scores never shrink another's statistics."""
    cols = [*metrics, human]
    if not seg_level:
        for g, rows in judged.groupby("_group"):
            coverage[g] = {"systems": int(rows["_system"].nunique()), "segments": 0, "scale": scales[g]}
        out = judged.groupby(["_group", "_system"], sort=True)[cols].mean().reset_index()
        return out.assign(**{human_of(m): out[human] for m in metrics})
    parts, dropped, shrunk = [], [], []
    for g, rows in judged.groupby("_group", sort=True):
        scoring = [m for m in metrics if np.isfinite(rows[m].to_numpy()).any()]
        n_sys = rows["_system"].nunique()
        n_all = rows["_segment"].nunique()
        own = {m: _complete_segments(rows[np.isfinite(rows[m].to_numpy())], n_sys) for m in scoring}
        common = _complete_segments(rows[np.logical_and.reduce([np.isfinite(rows[m].to_numpy()) for m in scoring])],
                                    n_sys) if scoring else pd.Index([])
        hm = rows[rows["_segment"].isin(common)]
        coverage[g] = {"systems": int(n_sys), "segments": len(common), "judged_segments": int(n_all),
                       "scale": scales[g]}
        matrices[g] = _matrix(hm, scoring, human)
        for m in scoring:
            if len(own[m]) != len(common):  # SPA of m on its own complete segments
                mine = rows[rows["_segment"].isin(own[m])]
                matrices[g][f"\x00own:{m}"] = _matrix(mine, [m], human)
        if any(len(c) != len(common) for c in own.values()):
            shrunk.append(f"{g} {len(common)} of {n_all}")
        dropped += _segments_kept(g, metrics, own, n_all)
        if system_scores == "complete":
            part = pd.DataFrame(index=pd.MultiIndex.from_tuples([], names=["_group", "_system"]))
            for m in metrics:
                if m not in own:
                    continue
                if len(own[m]) < 2:
                    raise InputError(f"group {g}: {len(own[m])} of {n_all} segments are judged and scored by {m!r} "
                                     f"for all {n_sys} systems; system scores over common segments need at least 2: "
                                     "use system_scores='judged' (each system's judged segments), or drop the group",
                                     argument="system_scores", value=system_scores)
                mine = rows[rows["_segment"].isin(own[m])].groupby(["_group", "_system"])[[m, human]].mean()
                part = part.join(mine.rename(columns={human: human_of(m)}), how="outer")
            part[human] = (hm if len(common) else rows).groupby(["_group", "_system"])[human].mean()
            parts.append(part)
        else:
            part = rows.groupby(["_group", "_system"])[cols].mean()
            parts.append(part.assign(**{human_of(m): part[human] for m in metrics}))
    if dropped and (spa or system_scores == "complete"):
        rule = ("SPA uses" if system_scores != "complete" else "system scores and SPA use" if spa
                else "system scores use")
        msg = (f"{rule} the segments judged for every system of the group; segments kept: {', '.join(dropped[:6])}"
               f"{' ...' if len(dropped) > 6 else ''}")
        if system_scores == "complete":  # the other choice, said where the loss is seen
            msg += ("; system_scores='judged' takes each system's own judged segments instead (as WMT's published "
                    "system scores do)")
        notes.append(msg)
        warnings.warn(msg, DataQualityWarning, stacklevel=3)
    if shrunk:  # each metric's own count is in the note above: these are the counts the metrics share
        notes.append("each metric rests on its own rows (the segments it scored for every system); where metrics "
                     "scored different segments, significance clusters compare them on the segments all of them "
                     f"scored ({', '.join(shrunk[:6])}{' ...' if len(shrunk) > 6 else ''})")
    how = ("means over the segments judged for every system of the group" if system_scores == "complete"
           else "means over each system's judged segments")
    notes.append(f"system scores: {how}")
    out = pd.concat(parts).reset_index()
    for m in metrics:  # a metric scoring no group at all
        if m not in out.columns:
            out[m] = np.nan
        if human_of(m) not in out.columns:
            out[human_of(m)] = out[human]
    return out


def _segments_kept(g: str, metrics: list[str], own: Mapping[str, pd.Index], n_all: int) -> list[str]:
    """Group ``g``'s entries of the "segments kept" note: every metric that lost segments of the ``n_all`` judged
    ones, named with its count (``en-de 28 of 30 (metric)``; metrics that kept as many share an entry; a metric
    with no score in the group kept 0). Per metric, so that listing another metric never hides or renames one's
    loss (the largest count over the metrics did: a complete metric's)."""
    lost: dict[int, list[str]] = {}
    for m in metrics:
        kept = len(own[m]) if m in own else 0
        if kept < n_all:
            lost.setdefault(kept, []).append(m)
    return [f"{g} {kept} of {n_all} ({', '.join(names[:4])}{f' and {len(names) - 4} more' if len(names) > 4 else ''})"
            for kept, names in sorted(lost.items())]


def _complete_segments(rows: pd.DataFrame, n_sys: int) -> pd.Index:
    per_seg = rows.groupby("_segment")["_system"].nunique()
    return per_seg.index[per_seg == n_sys]


def _segment_order(rows: pd.DataFrame) -> np.ndarray:
    """The segments of ``rows`` in their canonical order (:func:`~xleval._base.grouping.segment_rank`),
    whatever the rows' order."""
    seg = rows[["_segment", "_seg_order"]].drop_duplicates("_segment")
    return seg["_segment"].to_numpy()[np.argsort(seg["_seg_order"].to_numpy(), kind="stable")]


def _matrix(rows: pd.DataFrame, metrics: list[str], human: str) -> dict[str, np.ndarray]:
    """Systems x segments matrices (systems by name, segments in the table's order) of the human and each metric."""
    order = _segment_order(rows)  # SPA's sign permutations are drawn per segment: a fixed order of segments
    out = {}
    for c in [human, *metrics]:
        out[c] = rows.pivot(index="_system", columns="_segment", values=c).sort_index()[order].to_numpy()
    return out


# ------------------------------------------------------------------------------------- statistics
def _system_cells(g, m, systems, idx, human, counts, level, seed) -> list[Cell]:
    x, h = systems[m].to_numpy()[idx], systems[human_of(m)].to_numpy()[idx]
    ok = np.isfinite(x)
    if not ok.any():
        return []
    n = int(ok.sum())
    out = []
    if n >= 3:
        r = correlation(x, h, "pearson", ci="none").estimate
        dist = resampled_pearson(x, h, counts[:, idx])
        ci = _ci(r, dist, n, level, seed)
        out.append(Cell(g, m, "sys_pearson", r, *ci, n))
        for method, name in (("spearman", "sys_spearman"), ("kendall_b", "sys_kendall")):
            res = correlation(x, h, method)
            out.append(Cell(g, m, name, res.estimate, res.ci_low, res.ci_high, n))
    iu, ju = np.triu_indices(len(idx), k=1)
    correct = pairs_correct(x, h, iu, ju, 0.0)
    acc = float(correct.mean())
    dist = resampled_pair_accuracy(correct, counts[:, idx], iu, ju)
    out.append(Cell(g, m, "sys_accuracy", acc, *_ci(acc, dist, n, level, seed), n))
    return out


def _ci(point: float, dist: np.ndarray, n: int, level: float, seed) -> tuple[float, float]:
    dist = dist[np.isfinite(dist)]
    if not np.isfinite(point) or dist.size < 2:
        return float("nan"), float("nan")
    est = estimate_from_distribution(point, dist, n=n, level=level, random_state=seed)
    return float(est.ci_low), float(est.ci_high)


def cross_chance(systems: pd.DataFrame, m: str, human: str, scales: Mapping[str, str]) -> float:
    """Expected cross-group accuracy (exact ties) of ``m`` shuffled among the systems of each human scale
    (:func:`xleval.stats.chance_baseline` with ``pairs="cross"`` per scale), pooled by cross pairs."""
    from ..stats import chance_baseline

    x, h = systems[m].to_numpy(), systems[human_of(m)].to_numpy()
    g = systems["_group"].to_numpy()
    scale = np.array([scales[v] for v in g])
    total, n_pairs = 0.0, 0
    for sc in np.unique(scale):
        rows = (scale == sc) & np.isfinite(x)
        n = int(np.sum(rows)) ** 2 - int(np.sum(np.unique(g[rows], return_counts=True)[1] ** 2))
        if n:  # ordered pairs of systems of different groups: twice the cross pairs
            total += n * chance_baseline("pairwise_accuracy", h[rows], x[rows], groups=g[rows], pairs="cross").value
            n_pairs += n
    return total / n_pairs if n_pairs else float("nan")


def _pooled(systems, m, human, counts, level, seed, pairs, scales) -> Cell:
    x, h = systems[m].to_numpy(), systems[human_of(m)].to_numpy()
    g = systems["_group"].to_numpy()
    ok = np.flatnonzero(np.isfinite(x))
    iu, ju = np.triu_indices(len(ok), k=1)
    iu, ju = ok[iu], ok[ju]
    if pairs == "within":
        keep = g[iu] == g[ju]
    else:
        scale = np.array([scales[v] for v in g])
        keep = (g[iu] != g[ju]) & (scale[iu] == scale[ju])
    iu, ju = iu[keep], ju[keep]
    if iu.size == 0:
        return Cell("*", m, f"{pairs}_accuracy", float("nan"))
    correct = pairs_correct(x, h, iu, ju, 0.0)
    acc = float(correct.mean())
    dist = resampled_pair_accuracy(correct, counts, iu, ju)
    return Cell("*", m, "global_accuracy" if pairs == "within" else "cross_accuracy", acc,
                *_ci(acc, dist, len(ok), level, seed), int(iu.size))


def _segment_cells(g, m, rows, human, average_by) -> list[Cell]:
    x, h = rows[m].to_numpy(), rows[human].to_numpy()
    ok = np.isfinite(x)
    x, h = x[ok], h[ok]
    items = rows["_segment"].to_numpy()[ok]
    if x.size < 3:
        return []
    out = []
    if average_by == "none":
        for method, name in (("pearson", "seg_pearson"), ("kendall_b", "seg_kendall")):
            res = correlation(x, h, method)
            out.append(Cell(g, m, name, res.estimate, res.ci_low, res.ci_high, int(x.size)))
    else:
        units = items if average_by == "item" else rows["_system"].to_numpy()[ok]
        uc = unit_correlations(x, h, units)
        out += [Cell(g, m, "seg_pearson", uc.pearson, n=uc.n_pearson, left_out=uc.n_constant),
                Cell(g, m, "seg_kendall", uc.kendall, n=uc.n_kendall, left_out=uc.n_constant)]
    try:
        acc = pairwise_accuracy(x, h, average_by="item", items=items, tie_calibration=True)
        out.append(Cell(g, m, "seg_acc_t", float(acc.estimate), n=int(acc.n_pairs)))
    except InputError:
        pass
    return out


class UnitCorrelations(NamedTuple):
    """Pearson r and Kendall tau-b averaged over units (:func:`unit_correlations`)."""

    pearson: float
    kendall: float
    n_pearson: int
    n_kendall: int
    #: units of two or more rows left out because the metric's or the human's scores are constant there
    n_constant: int


def _pdp_cell(g, m, rows, human, n_resamples, level, seed, cache) -> list[Cell]:
    """PDP of one metric in one group (:func:`xleval.stats.pairwise_difference_pearson`); the bootstrap counts of
    k items depend on the seed and k only, so every metric of a group is resampled alike."""
    from ..stats._pdp import item_counts, pdp_result, pdp_sums

    x, h = rows[m].to_numpy(), rows[human].to_numpy()
    try:
        sums, n_pairs = pdp_sums(x, h, rows["_segment"].to_numpy())
    except InputError:
        return []
    key = (int(seed or 0), len(sums), n_resamples)
    if cache.get("key") != key:  # the metrics of a group share k: draw the counts once
        cache.update(key=key, counts=item_counts([key[0], key[1], 36], key[1], key[2]))
    counts = cache["counts"]
    res = pdp_result(sums, n_pairs, counts, level, seed)
    return [Cell(g, m, "seg_pdp", res.estimate, res.ci_low, res.ci_high, n=n_pairs)]


def unit_correlations(x: np.ndarray, h: np.ndarray, units: np.ndarray) -> UnitCorrelations:
    """Pearson r and Kendall tau-b within each unit (an item, a system), averaged over the units where
    they are defined (mt-metrics-eval's ``average_by``). A unit where the metric or the human scores are
    constant has no correlation and is left out of both averages, as mt-metrics-eval leaves it out (its
    per-unit correlation is NaN); so is a unit of one row. Returns the averages, the units each averages
    and the number of units of two or more rows left out as constant."""
    codes, _ = pd.factorize(units)
    k = int(codes.max()) + 1
    n = np.bincount(codes, minlength=k).astype(float)
    # constant: every score of the unit equal (exactly; a float mean need not be exact, so r is not asked)
    frame = pd.DataFrame({"u": codes, "x": x, "h": h})
    spread = frame.groupby("u").agg(x_lo=("x", "min"), x_hi=("x", "max"), h_lo=("h", "min"), h_hi=("h", "max"))
    spread = spread.reindex(range(k))
    constant = (((spread["x_lo"] == spread["x_hi"]) | (spread["h_lo"] == spread["h_hi"])).to_numpy()) & (n >= 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = np.bincount(codes, x, k) / n, np.bincount(codes, h, k) / n
        xc, hc = x - mx[codes], h - my[codes]
        r = np.bincount(codes, xc * hc, k) / np.sqrt(np.bincount(codes, xc * xc, k) * np.bincount(codes, hc * hc, k))
    tau = _unit_kendall(x, h, codes, k, n)
    defined = (n >= 2) & ~constant
    valid_r = r[defined & np.isfinite(r)]
    valid_t = tau[defined & np.isfinite(tau)]
    return UnitCorrelations(float(valid_r.mean()) if valid_r.size else float("nan"),
                            float(valid_t.mean()) if valid_t.size else float("nan"), int(valid_r.size),
                            int(valid_t.size), int(constant.sum()))


#: units larger than this get Kendall's tau from scipy (n log n) instead of the pairs of rows (n^2)
_PAIRWISE_UNIT = 200


def _unit_kendall(x: np.ndarray, h: np.ndarray, codes: np.ndarray, k: int, n: np.ndarray) -> np.ndarray:
    """Kendall tau-b of each unit: over the pairs of its rows when units are small (items: a few systems), by
    scipy.stats.kendalltau per unit when they are large (systems: thousands of segments; the pairs would be
    millions)."""
    if n.max() > _PAIRWISE_UNIT:
        from scipy.stats import kendalltau

        order = np.argsort(codes, kind="stable")
        bounds = np.r_[0, np.cumsum(n.astype(np.int64))]
        tau = np.full(k, np.nan)
        for u in range(k):
            rows = order[bounds[u]:bounds[u + 1]]
            if rows.size >= 2:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # a constant unit: NaN, left out by the caller
                    tau[u] = kendalltau(x[rows], h[rows]).statistic
        return tau
    layout = _unit_pairs(codes)
    dm, dh = x[layout.iu] - x[layout.ju], h[layout.iu] - h[layout.ju]
    used = np.flatnonzero(n >= 2)  # the layout numbers these units 0, 1, ...

    def count(w: np.ndarray) -> np.ndarray:  # per unit (by code), 0 for units of one row
        out = np.zeros(k)
        out[used] = np.bincount(layout.unit, weights=w, minlength=used.size)
        return out

    pairs = count(np.ones(dm.size))
    with np.errstate(invalid="ignore", divide="ignore"):
        return count(np.sign(dm) * np.sign(dh)) / np.sqrt((pairs - count((dm == 0) * 1.0))
                                                          * (pairs - count((dh == 0) * 1.0)))


def darr_tau(data: Any, metric: str, human_raw: str, *, by: str = "lp", system: str = "system",
             segment: str = "seg_id", threshold: float = 25.0) -> dict[str, tuple[float, int]]:
    """WMT20's segment-level DARR Kendall-like tau per group: over every pair of systems' outputs of one
    segment whose raw human scores differ by at least ``threshold``, ``(C - D) / (C + D)`` where a pair
    is concordant when the metric scores the better output strictly higher (a metric tie is discordant,
    as the organisers' script counts it). Returns group -> (tau, pairs)."""
    frame = getattr(data, "frame", data)
    out = {}
    for g, rows in frame.groupby(by, sort=True):
        out[str(g)] = _darr(rows, metric, human_raw, system, segment, threshold)
    return out


def _darr(rows, metric, human_raw, system, segment, threshold) -> tuple[float, int]:
    h, x = rows[human_raw].to_numpy(dtype=float), rows[metric].to_numpy(dtype=float)
    ok = np.isfinite(h) & np.isfinite(x)
    h, x, items = h[ok], x[ok], rows[segment].to_numpy()[ok]
    if h.size < 2:
        return float("nan"), 0
    codes, _ = pd.factorize(items)
    try:
        layout = _unit_pairs(codes)
    except InputError:
        return float("nan"), 0
    dh, dm = h[layout.iu] - h[layout.ju], x[layout.iu] - x[layout.ju]
    keep = np.abs(dh) >= threshold
    if not keep.any():
        return float("nan"), 0
    agree = (np.sign(dm[keep]) == np.sign(dh[keep])) & (dm[keep] != 0)
    n = int(keep.sum())
    return float((2 * agree.sum() - n) / n), n


def _darr_cell(g, m, rows, darr, threshold) -> Cell:
    tau, n = _darr(rows, m, darr, "_system", "_segment", threshold)
    return Cell(g, m, "darr_tau", tau, n=n)


def _spa_cell(g, m, human, cov, mat, n_permutations, notes) -> list[Cell]:
    stats = importlib.import_module("xleval.stats")
    spa_fn = getattr(stats, "soft_pairwise_accuracy", None)
    if spa_fn is None or m not in mat:  # m has no scores in this group: no cell, as for every statistic
        return []
    own = mat.get(f"\x00own:{m}")
    source, key = (own, f"\x00pvalues:{n_permutations}:{m}") if own is not None else (
        mat, f"\x00pvalues:{n_permutations}")
    n_seg = source[human].shape[1]
    if n_seg < 2:
        note = (f"no SPA for {m} in group {g}: {n_seg} segment(s) judged and scored by it for all "
                f"{cov['systems']} systems (SPA needs at least 2)")
        if note not in notes:
            notes.append(note)
        return []
    if key not in mat:  # the human p-values once per group (and segment set), shared by its metrics
        mat[key] = stats.pairwise_permutation_pvalues(source[human], n_resamples=n_permutations)
    res = spa_fn(source[m], source[human], n_resamples=n_permutations, human_pvalues=mat[key])
    return [Cell(g, m, "spa", float(res.statistic), n=int(cov["systems"]))]
