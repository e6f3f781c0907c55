"""The leaderboard: one row per (group, system) with raw and calibrated scores, their bootstrap
intervals, ranks within the group and across groups with rank intervals, and the human score.

Two steps, so that the report can decide the calibration in between: :func:`system_scores`
computes every system's raw score and its bootstrap distribution (units resampled within each
group, the same resamples for every system of the group; each group's draws come from its own seed,
drawn from ``random_state``), then :func:`rank_systems` calibrates them with a
:class:`SystemCalibration` (a map of system scores, or of segments whose calibrated means are
bootstrapped with the group's seed, i.e. the very draws of the raw scores) and ranks them. With
anchored calibration each resample also carries one joint draw of the map's label error and of the
systems' deviations from the common line (:mod:`xleval.calibration._cell_interval`), so the calibrated
and rank intervals are for the cells' human means and their ranks; ``Leaderboard.intervals`` says so.
:func:`leaderboard` runs both (and the recommendation when ``method="auto"``).
"""
from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._base.caller import DEFAULT_CALLER, Caller
from .._base.grouping import groups_left_out
from .._base.progress import Steps
from .._base.result import Result, array_field
from .._base.seeding import child_seeds, make_rng, resolve_seed
from ..calibration import CellLabels, CellUncertainty, cell_uncertainty
from ..calibration._anchored import human_range_of
from ..calibration._cell_interval import MIN_OWN_LABELS
from ..calibration._human_scale import HumanScale
from ..exceptions import DataQualityWarning, InputError, first_repeats, repeated_column, warn_again
from ..metrics._direction import higher_is_better as direction
from ..stats import JointEstimate, bootstrap_sums_joint, percentile_bounds, rank_intervals
from ..stats._bootstrap import MIN_STRATUM
from ..stats._resampling import DEFAULT_RESAMPLING, Resampling
from ..table import DEFAULT_BY, EvalTable, as_table, pooled_pairs_note, require_columns, scored_groups
from ._calibration import METHODS, SystemCalibration, model_calibration, system_calibration
from ._reading import DEFAULT_READING, ScoreReading
from ._system import row_statistics, unit_statistics

__all__ = ["SystemScores", "Leaderboard", "system_scores", "rank_systems", "leaderboard", "COLUMNS"]

logger = logging.getLogger(__name__)

ALL_ROWS = "(all rows)"  # the system name when the table has no system column
COLUMNS = ("group", "system", "n_segments", "raw", "raw_ci_low", "raw_ci_high", "calibrated", "calibrated_ci_low",
           "calibrated_ci_high", "rank_in_group", "rank_in_group_low", "rank_in_group_high", "rank_overall",
           "rank_overall_low", "rank_overall_high", "human", "n_human", "interval_target")
# what the calibrated and rank intervals are intervals for (the ``interval_target`` column)
HUMAN_TARGET = ("human cell mean and its rank (label error of the map, system deviation, the cell's own segments, "
                "test-set sampling)")
SAMPLING_TARGET = "score under test-set resampling (calibration map fixed)"
# below this share of the cross-group pairs decided, the pairs say what would decide more, and how to plan
# labels (the caller's advice renderer writes it: the command line's `calibrate plan` command, else the call)
FEW_DECIDED = 0.10


@dataclass(frozen=True, eq=False)
class SystemScores(Result):
    """Raw system scores with their joint bootstrap per group.

    ``table``: one row per (group, system): ``group, system, n_segments, n_units, raw, human,
    n_human`` (``human`` is the mean of the system's finite human scores); ``estimates``: group ->
    JointEstimate of its systems (in ``table`` order); ``aggregation``: how a system score is made;
    ``unit``: what the bootstrap resamples; ``score``, ``by``, ``system``, ``human`` (column names),
    ``level``, ``n_resamples``, ``random_state``, ``n_excluded`` (rows without a finite score),
    ``group_seeds`` (the seed of each group's draws), ``notes``. Kept for calibrating rows (not
    dumped): ``frame`` (the scored rows) and ``layout`` (per group: its rows, system codes, unit codes).
    """

    score: str
    by: str
    system: str | None
    human: str | None
    table: pd.DataFrame
    aggregation: str
    unit: str
    level: float
    n_resamples: int
    random_state: int | None
    n_excluded: int
    group_seeds: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = field(default=())
    # always set by system_scores; array_field keeps them out of comparisons and dumps
    estimates: dict[str, JointEstimate] = array_field()
    frame: pd.DataFrame = array_field()
    layout: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = array_field()

    def systems(self, group: str) -> pd.DataFrame:
        return self.table[self.table["group"] == group]


@dataclass(frozen=True, eq=False)
class Leaderboard(Result):
    """The leaderboard. ``rows``: DataFrame with :data:`COLUMNS` (best overall first); ``calibration``:
    method, description and scale of the calibrated column; ``higher_is_better``: that column's direction
    (the overall ranks and the pairs' verdicts follow it: an anchored map's human scale, else the score's);
    ``recommendation``: the
    :class:`~xleval.decision.CalibrationDecision` when the method was chosen automatically;
    ``intervals``: per interval (``raw``, ``calibrated``, ``rank_in_group``, ``rank_overall``) what it
    is an interval for and what it includes; ``uncertainty``: for anchored calibration, the parts of
    the joint draws (:class:`~xleval.calibration.CellUncertainty` as a dict; ``group_within_var`` by group
    name), else empty."""

    score: str
    by: str
    system: str | None
    human: str | None
    aggregation: str
    unit: str
    calibration: dict
    higher_is_better: bool
    level: float
    n_resamples: int
    random_state: int | None
    rows: pd.DataFrame
    recommendation: Any = None
    notes: tuple[str, ...] = field(default=())
    intervals: dict = field(default_factory=dict)
    uncertainty: dict = field(default_factory=dict)
    # (n_resamples, rows): the draws behind the calibrated and rank intervals, in ``rows`` order
    draws: np.ndarray | None = array_field()

    def to_frame(self) -> pd.DataFrame:
        return self.rows.copy()

    def pairs(self, scope: str = "all", *, advice: Any = None, human_scale: str | None = None) -> Any:
        """Every pair of cells with the difference of their calibrated scores, its interval and a verdict
        (A better, B better, cannot tell), from the same draws as the calibrated and rank intervals
        (:func:`xleval.calibration.cell_pairs`; ``scope``: ``all``, ``across`` or ``within`` groups). Where the
        labels decide few comparisons across groups, a note says how to plan more: ``advice``
        (:class:`xleval.decision.AdviceRenderer`; default the library call) writes it, on the ``human_scale``
        named (its direction; default the one the board was built with, ``calibration["human_scale"]``)."""
        from ..calibration._pairs import cell_pairs

        if self.draws is None:
            raise InputError("this leaderboard keeps no draws (built before pairs existed); build it again")
        target = self.intervals.get("calibrated", "")
        pairs = cell_pairs(self.rows["group"].to_numpy(), self.rows["system"].to_numpy(),
                           self.rows["calibrated"].to_numpy(dtype=float), self.draws, level=self.level,
                           higher_is_better=self.higher_is_better, target=target, scope=scope)
        told, n = pairs.counts()["across"]
        plan = self._plan(advice, human_scale if human_scale is not None else self.calibration.get("human_scale"))
        return replace(pairs, notes=self._few_decided(told, n, plan) + self._in_blocks(told))

    def _plan(self, advice: Any, human_scale: str | None) -> str:
        """The plan of twice the labels there are (those there count toward the budget), as ``advice`` writes it."""
        from ..decision import AdviceAction, PythonAdvice

        labels = int(np.nansum(self.rows["n_human"].to_numpy(dtype=float))) if "n_human" in self.rows else 0
        action = AdviceAction("plan", self.score, (self.by,), system=self.system, human=self.human,
                              budget=max(2 * labels, 1), human_scale=human_scale)
        return (advice if advice is not None else PythonAdvice()).render(action)

    def _few_decided(self, told: int, n: int, plan: str) -> tuple[str, ...]:
        """A note where the labels decide few (``told`` of ``n``) comparisons across groups (under
        :data:`FEW_DECIDED`), naming the labels per system behind them and what would decide more, ``plan``
        (docs/calibration.md, "Which cells differ")."""
        from ..calibration._pairs import share_words

        labelled = self.rows["n_human"].to_numpy(dtype=float) if "n_human" in self.rows else np.array([])
        labelled = labelled[np.isfinite(labelled) & (labelled > 0)]
        if not self.uncertainty or n == 0 or told >= FEW_DECIDED * n or not len(labelled):
            return ()
        return (f"the labels decide {share_words(told, n)} of the comparisons across {self.by}: with about "
                f"{np.mean(labelled):.0f} human labels per system, each system's deviation from the common line and "
                f"each group's offset stay too uncertain; more labels per system decide more (plan them: {plan})",)

    def _in_blocks(self, told: int) -> tuple[str, ...]:
        """Where anchored verdicts across groups exist (``told``): they share their groups' offset errors, so those
        between two groups turn together when an offset errs (docs/calibration.md, "Fewer labels")."""
        if not self.uncertainty or told == 0:
            return ()
        return (f"verdicts across {self.by} come in blocks: the cells of a group share the error of its offset, so "
                "the verdicts between two groups stand or fall together (each 'X vs Y' line is one piece of "
                "evidence)",)


def _unit_column(frame: pd.DataFrame, unit: str | None, where: str = "table") -> tuple[str | None, str]:
    if unit is not None:
        require_columns(frame, [unit], what=where, argument="unit")  # the input's name: where the column is missing
        return unit, f"{unit} (resampled within each group)"
    for name, text in (("doc_id", "documents (doc_id), resampled within each group"),
                       ("seg_id", "segments (seg_id), resampled within each group")):
        if name in frame.columns:
            return name, text
    return None, "rows (by their position within each system), resampled within each group"


def _units_of_group(frame: pd.DataFrame, sel: np.ndarray, codes: np.ndarray, units: np.ndarray,
                    group: str) -> tuple[np.ndarray, str | None]:
    """The units a group's bootstrap resamples when the unit is the default, documents: a group whose rows carry
    fewer than MIN_STRATUM distinct ``doc_id`` values (WMT20's km-en and ps-en write 'wikipedia' on every row)
    has no documents to resample, and its intervals would leave out the test set's sampling; its segments
    (``seg_id``, else the rows' positions) are resampled instead, and a note says so."""
    n_docs = len(pd.unique(units))
    if n_docs >= MIN_STRATUM:
        return units, None
    if "seg_id" in frame.columns:  # a segment of a document: WMT25 numbers segments within each document
        alt = pd.MultiIndex.from_arrays([units, frame["seg_id"].to_numpy()[sel]]).factorize()[0]
        what = "segments (doc_id, seg_id)"
    else:
        alt, what = _positions(codes), "rows (by their position within each system)"
    if len(pd.unique(alt)) <= n_docs:
        return units, None
    return alt, (f"{group}: {n_docs} distinct doc_id value(s) on its {len(sel)} rows, too few documents to "
                 f"resample: its {what} are resampled instead, which leaves out how a document's segments go "
                 "together; give unit= to choose")


def system_scores(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | None = None, *,
                  system: str | None = "system",
                  human: str | None = None, metric: str | None = None, unit: str | None = None,
                  n_resamples: int = 1000, level: float = 0.95, random_state: Any = 0,
                  where: str = "input") -> SystemScores:
    """Raw system scores per (``by`` group, ``system``): a corpus score from summed statistics for
    BLEU/chrF/TER (see :func:`row_statistics`), else the mean; bootstrap over ``unit`` (default
    ``doc_id``, else ``seg_id``, else rows) with the same resamples for every system of a group.
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    ``lp``, given or derived from ``src_lang`` and ``tgt_lang``, else ``tgt_lang``)."""
    evaluated = _table(data, score, by, human, where)
    score, by, where, human = evaluated.score_column, evaluated.by[0], evaluated.source, evaluated.human
    system = evaluated.system_role(system)
    check_metric_name(metric)
    frame = evaluated.frame
    notes: list[str] = []
    said_of: dict[str, list[str]] = {}  # a bootstrap's note, and the groups it was said of
    if system is not None and system not in frame.columns:
        near = [c for c in frame.columns if isinstance(c, str) and c.strip().casefold() == system.casefold()]
        if near:  # a header cell with a stray space or another case: never a ranking of whole groups instead
            raise InputError(f"{where}: no {system!r} column, but {near[0]!r} differs from it only by spaces or "
                             f"case; rename that column to {system!r}, or name it with system={near[0]!r}",
                             argument="system", value=system)
        notes.append(f"no {system!r} column: each group is scored as one system, {ALL_ROWS!r}")
        system = None
    values = evaluated.scores()
    keep = np.isfinite(values)
    n_excluded = int((~keep).sum())
    if n_excluded:
        msg = (f"{n_excluded} of {len(frame)} row(s) have no finite {score} and are left out of the leaderboard"
               f"{groups_left_out(evaluated.groups, keep)}")
        notes.append(msg)
        warnings.warn(msg, DataQualityWarning, stacklevel=2)
    if not keep.any():
        raise InputError(f"{where}: column {score!r} has no finite value")
    frame = frame.loc[keep].reset_index(drop=True)
    groups = evaluated.row_labels()[keep]
    systems = evaluated.column_labels(system)[keep] if system is not None else np.full(len(frame), ALL_ROWS,
                                                                                       dtype=object)
    unit_col, unit_text = _unit_column(frame, unit, where)
    rows = row_statistics(frame, score, groups, metric)
    notes.extend(rows.notes)
    h = evaluated.human_values()[keep] if human else None
    # one integer seed, recorded: drawn from a Generator too, so the joint draws of an anchored map (seeded from
    # it, _joint_draws) repeat with the Generator's seed and the board says the seed that reproduces it
    rng, seed = make_rng(resolve_seed(random_state))
    labels = sorted(set(groups.tolist()))
    group_seeds = dict(zip(labels, (int(x) for x in rng.integers(0, 2**32 - 1, size=len(labels))), strict=True))
    table, estimates, layout = [], {}, {}
    unit_text_groups: list[str] = []
    for g in labels:
        sel = np.flatnonzero(groups == g)
        names, codes = np.unique(systems[sel].astype(str), return_inverse=True)
        units = frame[unit_col].to_numpy()[sel] if unit_col else _positions(codes)
        if unit is None and unit_col == "doc_id":
            units, instead = _units_of_group(frame, sel, codes, units, g)
            if instead:
                notes.append(instead)
                unit_text_groups.append(g)
        stats = unit_statistics(rows.stats[sel], codes, units, len(names))
        est = bootstrap_sums_joint(stats, rows.score_of_group[g], n_resamples=n_resamples, level=level,
                                   random_state=group_seeds[g])
        estimates[g], layout[g] = est, (sel, codes, units)
        for j, name in enumerate(names):
            mine = sel[codes == j]
            row = {"group": g, "system": str(name), "n_segments": len(mine),
                   "n_units": len(pd.unique(units[codes == j])), "raw": float(est.estimate[j])}
            if h is not None:
                finite = h[mine][np.isfinite(h[mine])]
                row.update(human=float(finite.mean()) if len(finite) else float("nan"), n_human=len(finite))
            table.append(row)
        for n in est.notes:
            said_of.setdefault(n, []).append(str(g))
    # once a note, naming its groups: a table of system scores is "unreliable: only 1 items to resample" in every one
    notes.extend(f"{', '.join(gs[:8]) + (f' and {len(gs) - 8} more' if len(gs) > 8 else '')}: {n}"
                 for n, gs in said_of.items())
    if unit_text_groups:
        unit_text += f" (segments in {', '.join(unit_text_groups)}: too few documents)"
    return SystemScores(score, by, system, human, pd.DataFrame(table), rows.aggregation, unit_text, level,
                        n_resamples, seed, n_excluded, group_seeds, tuple(dict.fromkeys(notes)), estimates, frame,
                        layout)


def _table(data: EvalTable | pd.DataFrame, score: str | None, by: str | None, human: str | None,
           where: str) -> EvalTable:
    """The table the leaderboard ranks: language codes normalised, one grouping column."""
    table = as_table(data, score=score, by=by, human=human, default_by=DEFAULT_BY, source=where,
                     normalize_languages=True)
    if len(table.by) != 1:
        raise InputError(f"{table.source}: the leaderboard groups by one column; got by={list(table.by)!r}",
                         argument="by", value=list(table.by))
    return table


def _positions(codes: np.ndarray) -> np.ndarray:
    """Each row's position among its system's rows (0, 1, ...): the unit when rows carry no ids."""
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    starts = np.cumsum(counts) - counts
    out = np.empty(len(codes), dtype=np.int64)
    out[order] = np.arange(len(codes)) - np.repeat(starts, counts)
    return out


def _mean_of_sums(sums: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums[:, 0] / sums[:, 1]


def _segment_means(scores: SystemScores, group: str, values: np.ndarray) -> JointEstimate:
    """The mean of ``values`` (one per scored row) of every system of ``group``, bootstrapped with the
    group's seed, so with the very draws of its raw scores."""
    sel, codes, units = scores.layout[group]
    v = values[sel]
    ok = np.isfinite(v)
    stats = np.column_stack([np.where(ok, v, 0.0), ok.astype(float)])
    n_systems = int(codes.max()) + 1
    return bootstrap_sums_joint(unit_statistics(stats, codes, units, n_systems), _mean_of_sums,
                                n_resamples=scores.n_resamples, level=scores.level,
                                random_state=scores.group_seeds[group])


def _calibrated(scores: SystemScores, calibration: SystemCalibration, group: str, est: JointEstimate,
                rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(point, distribution) of the calibrated scores of ``group``'s systems."""
    if calibration.model is None:
        return est.estimate.copy(), est.distribution.copy()
    if calibration.level == "system-mean":
        means = _segment_means(scores, group, pd.to_numeric(scores.frame[scores.score]).to_numpy(dtype=float))
        mapped = calibration.apply_means(np.vstack([means.estimate[None, :], means.distribution]), group)
        return mapped[0], mapped[1:]
    if rows is None:
        raise ValueError("a segment-level calibration maps the rows first")
    cal = _segment_means(scores, group, rows)
    return cal.estimate, cal.distribution


def rank_systems(scores: SystemScores, calibration: SystemCalibration, *, higher_is_better: bool = True,
                 recommendation: Any = None) -> Leaderboard:
    """Map every system score and resample through ``calibration`` and rank: within the group by the
    raw score, but with anchored calibration by the calibrated score (an anchored map of the mean segment
    score can reorder a corpus statistic such as corpus chrF: the rank in the group then follows the calibrated
    score, its interval and the overall rank), across groups by the calibrated score
    in the calibrated scale's direction (``higher_is_better`` is the score's; an anchored map's is the human
    scale's as fitted, :meth:`SystemCalibration.higher_is_better`: MQM error points rank lowest first).

    Intervals: with anchored calibration (fitted or saved) the calibrated intervals and both rank
    intervals are for the human mean of each (group, system) cell and its rank, from joint draws of the
    map's label error, each system's deviation from the common line and the bootstrap of the test set
    (:mod:`xleval.calibration._cell_interval`); otherwise they are bootstrap intervals of the test set
    with the map held fixed. ``Leaderboard.intervals`` says which."""
    table = scores.table.copy()
    parts, cal_dists, points, raw_within = [], [], [], {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = calibration.apply_rows(scores.frame, scores.score) if calibration.model is not None and (
            calibration.level == "segment" or calibration.is_anchored) else None
        for g, est in scores.estimates.items():
            point, dist = _calibrated(scores, calibration, g, est, rows)
            raw_within[g] = rank_intervals(est.estimate, est.distribution, higher_is_better=higher_is_better,
                                           level=scores.level)
            parts.append(pd.DataFrame({"raw_ci_low": est.ci_low, "raw_ci_high": est.ci_high, "calibrated": point,
                                       "rank_in_group": raw_within[g].rank},
                                      index=table.index[table["group"] == g]))
            points.append(point)
            cal_dists.append(dist)
        joint = _joint_draws(scores, calibration, rows, np.hstack(points)) if calibration.is_anchored else None
    notes = list(scores.notes) + list(calibration.notes)
    notes.extend(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
    table = table.join(pd.concat(parts))
    dist = np.hstack(cal_dists)
    if joint is not None:
        # the cells' own labels pull their calibrated means toward the labels' means (empirical Bayes, in the
        # draws and in ``shift``); a test-set resample moves the estimate by the line's share of it
        point = np.hstack(points)
        predicted = point + joint.shift
        dist = point[None, :] + (1.0 - joint.weight)[None, :] * (dist - point[None, :]) + joint.draws
        bounds = human_range_of(getattr(calibration.model, "human_range", None))
        if bounds is not None:  # a bounded scale's cell means stay inside it, as the map's rows do
            predicted, dist = np.clip(predicted, *bounds), np.clip(dist, *bounds)
        table["calibrated"] = predicted
        notes.extend(joint.uncertainty.notes)
    table["calibrated_ci_low"], table["calibrated_ci_high"] = percentile_bounds(dist, scores.level)
    up = calibration.higher_is_better(higher_is_better)
    _within_group_intervals(table, scores, raw_within, dist if joint is not None else None, up)
    overall = rank_intervals(table["calibrated"].to_numpy(dtype=float), dist, higher_is_better=up,
                             level=scores.level)
    table["rank_overall"], table["rank_overall_low"], table["rank_overall_high"] = \
        overall.rank, overall.rank_low, overall.rank_high
    table["interval_target"] = HUMAN_TARGET if joint is not None else SAMPLING_TARGET
    if calibration.method == "none" and table["group"].nunique() > 1:
        notes.append("the overall ranks compare raw scores across groups, which the calibration check may "
                     "advise against")
    columns = [c for c in COLUMNS if c in table.columns]
    ordered = table.sort_values(["rank_overall", "group", "system"], kind="stable")
    rows_out = ordered[columns].reset_index(drop=True)
    order = table.index.get_indexer(ordered.index)  # dist's columns follow table's rows
    info = {"method": calibration.method, "description": calibration.description, "scale": calibration.scale}
    return Leaderboard(scores.score, scores.by, scores.system, scores.human, scores.aggregation, scores.unit, info,
                       up, scores.level, scores.n_resamples, scores.random_state, rows_out,
                       recommendation, tuple(dict.fromkeys(notes)), interval_texts(scores, joint),
                       _uncertainty_dict(scores, joint), dist[:, order])


def _uncertainty_dict(scores: SystemScores, joint: _JointDraws | None) -> dict:
    """What the joint draws are made of, for the outputs: each group's labels' variance within a cell under the
    group's name (the draws' codes are the groups' places in the table)."""
    if joint is None:
        return {}
    out = joint.uncertainty.to_dict()
    names = list(scores.estimates)
    out["group_within_var"] = {str(names[code]): var for code, var in joint.uncertainty.group_within_var}
    return out


@dataclass(frozen=True)
class _JointDraws:
    draws: np.ndarray  # (n_resamples, cells in table order): the map's label error + the cells' deviations
    uncertainty: CellUncertainty
    # per cell: what its own labels add to its calibrated mean, and their weight (empirical Bayes, _cell_interval)
    shift: np.ndarray
    weight: np.ndarray


def _joint_draws(scores: SystemScores, calibration: SystemCalibration, rows: np.ndarray | None,
                 points: np.ndarray) -> _JointDraws:
    """Draws of the calibrated cells' error against their human means, in ``scores.table`` order (groups
    as in ``scores.estimates``, systems by code): one slope error, one offset error per group and one
    deviation per cell in each draw, from the group's own labels (module docstring of _cell_interval)."""
    model = calibration.model
    x = pd.to_numeric(scores.frame[scores.score], errors="coerce").to_numpy(dtype=float)
    human = _human_values(scores, model)
    cell_of_row = np.full(len(x), -1, dtype=np.int64)
    cell_groups, means, sizes, start = [], [], [], 0
    for g in scores.estimates:
        sel, codes, _ = scores.layout[g]
        n_systems = int(codes.max()) + 1
        cell_of_row[sel] = start + codes
        sums = np.bincount(codes, x[sel], minlength=n_systems)
        sizes.append(np.maximum(np.bincount(codes, minlength=n_systems), 1))
        means.append(sums / sizes[-1])
        cell_groups += [calibration.model_group(g)] * n_systems
        start += n_systems
    n_cells, labels = start, None
    cell_means, cell_sizes = np.concatenate(means), np.concatenate(sizes)
    cell_codes = np.repeat(np.arange(len(means)), [len(m) for m in means])  # each cell's group's place in the table
    if all(len(m) == 1 for m in means):
        uncertainty = cell_uncertainty(model, one_cell_per_group=True)
    elif human is not None and rows is not None:
        # every row of the table is in a cell (the groups' layouts cover it)
        labelled = np.isfinite(human) & np.isfinite(rows)
        cell, residual = cell_of_row[labelled], (human - rows)[labelled]
        uncertainty = cell_uncertainty(model, residual, cell_codes[cell], cell, covariate=cell_means[cell])
        count = np.bincount(cell, minlength=n_cells).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_residual = np.bincount(cell, residual, minlength=n_cells) / count
            spread = np.bincount(cell, x[labelled] - cell_means[cell], minlength=n_cells) / count
        labels = CellLabels(count, np.nan_to_num(mean_residual), np.nan_to_num(spread))
    else:
        uncertainty = cell_uncertainty(model)
    rng, _ = make_rng(child_seeds(scores.random_state, 1)[0] if scores.random_state is not None else None)
    # each cell's labels vary within it as its group's do (language pairs have their own raters)
    draws = uncertainty.draws(model, cell_groups, cell_means, scores.n_resamples, rng,
                              sizes=cell_sizes, labels=labels, codes=cell_codes)
    shift, weight = uncertainty.prediction(labels, cell_sizes, cell_codes) if labels is not None \
        else (np.zeros(n_cells),) * 2
    return _JointDraws(draws, uncertainty, shift, weight)


def _human_values(scores: SystemScores, model: Any) -> np.ndarray | None:
    """The table's human labels: the leaderboard's human column, else the calibrator's if the table has it."""
    column = scores.human or getattr(model, "human", None)
    if column is None or column not in scores.frame.columns:
        return None
    return pd.to_numeric(scores.frame[column], errors="coerce").to_numpy(dtype=float)


def _within_group_intervals(table: pd.DataFrame, scores: SystemScores, raw_within: dict,
                            joint: np.ndarray | None, higher_is_better: bool) -> None:
    """Ranks in the group and their intervals: with anchored calibration (``joint``: its draws), by the calibrated
    score, the estimate of the cell's human mean, and of the same draws (``higher_is_better``: the calibrated
    scale's direction), so the rank in the group, its interval and the overall order agree (the map is monotone
    in a system's mean segment score, not in a corpus score such as corpus chrF, which can order two close
    systems the other way); else by the raw score, of its bootstrap."""
    rank = table["rank_in_group"].to_numpy(dtype=int).copy()
    low, high = np.empty(len(table), dtype=int), np.empty(len(table), dtype=int)
    calibrated = table["calibrated"].to_numpy(dtype=float)
    start = 0
    for g in scores.estimates:
        at = np.flatnonzero((table["group"] == g).to_numpy())
        if joint is None:
            ranks = raw_within[g]
        else:
            ranks = rank_intervals(calibrated[at], joint[:, start:start + len(at)], higher_is_better=higher_is_better,
                                   level=scores.level)
            rank[at] = ranks.rank
        low[at], high[at] = ranks.rank_low, ranks.rank_high
        start += len(at)
    table["rank_in_group"], table["rank_in_group_low"], table["rank_in_group_high"] = rank, low, high


def interval_texts(scores: SystemScores, joint: _JointDraws | None) -> dict[str, str]:
    """What each interval of the leaderboard is an interval for, in words (every output shows them)."""
    level = f"{round(scores.level * 100)}%"
    sampling = f"bootstrap over {scores.unit}, {scores.n_resamples} resamples"
    out = {"raw": f"{level} interval of the raw system score under test-set resampling ({sampling})"}
    if joint is None:
        out["calibrated"] = (f"{level} interval of the calibrated score under test-set resampling ({sampling}); the "
                             "calibration map is held fixed, so it is not an interval for the human score")
        out["rank_in_group"] = f"{level} interval of the rank by the raw score within the group ({sampling})"
        out["rank_overall"] = (f"{level} interval of the rank by the calibrated score among all (group, system) "
                               f"cells ({sampling}, map fixed)")
        return out
    u = joint.uncertainty
    if u.n_cells == 0 and u.deviation_var == 0:
        deviation = "no deviation from the common line (one system per group: its offset is the whole of it)"
    elif np.isfinite(u.deviation_var):
        deviation = (f"each system's deviation from the common line (sd {math.sqrt(u.deviation_var):.3g} on the "
                     f"human scale, its variance's posterior mean from {u.n_labels} labels in {u.n_cells} systems), "
                     "the noise of a cell's mean over its own segments")
    else:
        deviation = "no deviation of the systems from the common line (not estimable here)"
    parts = f"the offset and slope errors of the map from the labels, {deviation}, and the {sampling}"
    out["calibrated"] = (f"{level} interval for the mean human score of the (group, system) cell over its judged "
                         f"segments (what judging them all would give); joint draws of {parts}")
    weight = joint.weight[joint.weight > 0]
    if len(weight):  # the point moves too: say by how much (docs/calibration.md, "A cell's own labels")
        shown = f"{weight.min():.2g}" if np.ptp(weight) < 0.005 else f"{weight.min():.2g}-{weight.max():.2g}"
        out["calibrated"] += (f"; the estimate of a system with {MIN_OWN_LABELS} labels or more moves from the line "
                              f"toward their mean by their weight ({shown} here; empirical Bayes), given the rest")
    out["rank_in_group"] = (f"{level} interval for the rank of the cell's human mean within its group, from the "
                            "same joint draws (the rank itself: by the calibrated score)")
    out["rank_overall"] = (f"{level} interval for the rank of the cell's human mean among all (group, system) "
                           "cells, from the same joint draws")
    return out


def check_metric_name(metric: str | None) -> None:
    """An explicit metric name must be one the registry knows (a typo would silently give means)."""
    from ..metrics._registry import METRICS

    if metric is not None and metric.lower().split(":", 1)[0] not in METRICS:
        raise InputError(f"metric={metric!r}: unknown metric; use one of {', '.join(METRICS)}, "
                         "or leave it out when the score column is named after its metric", argument="metric",
                         value=metric)


def _one_group(group: str, by: str, score: str) -> SystemCalibration:
    """The default calibration of a one-group table: none, and the note that says why."""
    note = (f"one group in {by!r} ({group}): no cross-group question exists (calibration maps groups onto one "
            "scale), so the systems are ranked on the raw scores")
    return SystemCalibration("none", "no calibration: one group, nothing to compare across groups", "raw",
                             score_column=score, notes=(note,))


def leaderboard(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | None = None, *,
                system: str | None = "system", human: str | None = None, model: Any = None, method: str = "auto",
                reading: ScoreReading = DEFAULT_READING, resampling: Resampling = DEFAULT_RESAMPLING,
                human_scale: HumanScale | str | None = None, caller: Caller = DEFAULT_CALLER) -> Leaderboard:
    """One row per (group, system): raw and calibrated scores with bootstrap intervals, ranks within the
    group and overall with rank intervals, and the mean human score.

    The calibration is ``model`` (a saved LGN or AnchoredCalibrator) when given, else ``method``:
    ``lgn``, ``anchored`` (needs ``human``), ``none`` or ``auto`` (the recommendation of
    :func:`xleval.decision.recommend_calibration`, kept in ``Leaderboard.recommendation``).
    ``reading`` (:class:`ScoreReading`): the score's metric, resampling unit, direction and signature.
    ``resampling`` (:class:`xleval.stats.Resampling`): the bootstrap of the intervals and the recommendation.
    ``human_scale`` (:class:`xleval.calibration.HumanScale`, or a bare name: ``z``, ``raw``, ``mqm``, ...): the
    name for the recommendation (:func:`xleval.decision.decide_calibration`), the direction (None: found in the
    labels) and the bounds, for an anchored calibration fitted here (:class:`~xleval.calibration.AnchoredCalibrator`).
    ``caller`` (:class:`xleval.decision.Caller`): the input's name in messages, the advice's commands (the CLI
    passes them) and the progress callback, told of each finished step (system scores, recommendation, ranking).
    """
    from ..calibration._scales import bounded_by_name, direction_for, past_the_scale_note
    from ..decision import RECOMMEND_PROCEDURE, recommend_calibration

    metric, signature, scale = reading.metric, reading.signature, HumanScale.of(human_scale)
    n_resamples, random_state = resampling.n_resamples, resampling.random_state
    steps = Steps(caller.progress, 3)
    if method not in METHODS:
        raise InputError(f"method {method!r}: use one of {', '.join(METHODS)}")
    table = _table(data, score, by, human, caller.where)
    score, by, human = table.score_column, table.by[0], table.human
    system = table.system_role(system)
    human_higher_is_better = direction_for(table.frame, human, scale.name, scale.higher_is_better)
    bounded = source = None
    if scale.range is None and model is None:  # a named scale's bounds, as on the command line
        named, bounded, source = bounded_by_name(table.frame, human, scale.name)
        scale = scale.with_(range=named) if named is not None else scale
    with warnings.catch_warnings(record=True) as repeated:  # repeated keys (scores, labels): said in the notes
        warnings.simplefilter("always")
        scores = system_scores(table, system=system, human=human, metric=metric, unit=reading.unit,
                               n_resamples=n_resamples, level=resampling.level, random_state=random_state)
    frame = table.frame
    steps.done()
    rec = None
    signature = signature if signature is not None else table.signature(score)  # given, else the table's
    with warnings.catch_warnings(record=True) as read:  # a negated error scale: said in the board's notes
        warnings.simplefilter("always")
        hib = direction(score, signature, given=reading.higher_is_better, metric=metric, values=frame[score])
    if model is not None:
        calibration = model_calibration(model, scores.frame, by, signature=signature, force=reading.force, score=score,
                                        where=table.source)
    else:
        groups = scores.table["group"].unique().tolist()
        if method == "auto" and len(groups) == 1:  # ranking one group is valid; no calibration question exists
            calibration = _one_group(groups[0], by, score)
        elif method == "auto":
            procedure = RECOMMEND_PROCEDURE.with_(n_resamples=n_resamples, random_state=random_state)
            with warnings.catch_warnings(record=True) as deciding:
                warnings.simplefilter("always")
                # the table, not its frame: a warning names the input as the board's notes do; without the groups
                # that have no score (the board's notes say the rows it leaves out, once)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scored = scored_groups(table)
                rec = recommend_calibration(scored, score, by, human=human, system=scores.system, procedure=procedure,
                                            commands=caller.commands, human_scale=scale.name,
                                            human_higher_is_better=human_higher_is_better,
                                            score_higher_is_better=hib)
            # the decision reads the columns the system scores read: their repeats are in the board's notes, and so
            # are the rows without a score ("N of M row(s) have no finite SCORE and are left out of the leaderboard")
            unscored = f"score {score!r}: {scores.n_excluded} of " if scores.n_excluded else None
            warn_again([w for w in deciding if unscored is None or not str(w.message).startswith(unscored)],
                       said={c for w in repeated if (c := repeated_column(w)) is not None})
            method = rec.method
        if method != "auto" or len(groups) != 1:
            calibration = system_calibration(method, scores.frame, score, by, human=human, system=scores.system,
                                          human_higher_is_better=human_higher_is_better, human_range=scale.range,
                                          score_higher_is_better=hib, human_scale=scale.name)
    steps.done()
    board = rank_systems(scores, calibration, higher_is_better=hib, recommendation=rec)
    steps.done()
    said = tuple(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in first_repeats([*repeated, *read])
                               if str(w.message) not in scores.notes))  # said among the scores' notes already
    said += (bounded,) if bounded is not None and calibration.is_anchored else ()
    if caller.commands is None and calibration.is_anchored:  # the command line says it with the command to run
        past = past_the_scale_note(board.rows, frame, human, scale.range, source=source, human_scale=scale.name)
        said += (past,) if past is not None else ()
    pooled = pooled_pairs_note(frame, [by], scores.system)  # tgt_lang over several pairs: two test sets in a group
    said += (pooled,) if pooled is not None else ()
    if scale.name is not None:  # the scale named travels with the board (its plan advice names it)
        board = dataclasses.replace(board, calibration={**board.calibration, "human_scale": scale.name})
    return dataclasses.replace(board, notes=(*said, *board.notes)) if said else board
