"""How many more human labels per group, and which rows, for the cross-group comparison; and when to stop.

The calibrated mean of a (group, system) cell is ``a_g + B m_s`` (docs/calibration.md). With a
few labels per group the offset ``a_g`` carries nearly all the error of a comparison across groups:
it is a group's mean label residual (the difference estimator of prediction-powered inference),
with variance ``sigma_g^2 / n_g`` (the group's residual variance over its labels), and it enters
every comparison of one of the group's ``S_g`` systems with one of the ``S - S_g`` systems of
the other groups. The plan minimises the summed variance of those comparisons,
``sum_g S_g (S - S_g) sigma_g^2 / n_g``, for a total of labels: Neyman allocation (Neyman 1934;
Cochran 1977, 5.5; stratified prediction-powered inference, Fisch et al. 2024), ``n_g`` proportional
to ``sigma_g * sqrt(S_g (S - S_g))``, never below the labels a group already has, nor below one
label per system when the budget allows (so that every system has labels to estimate its deviation
from the common line). Within a group the rows are a simple random sample after one row for each
system without a label (``rows="random"``, the default), or spread evenly over systems (a stratified
sample), at random within a system (``rows="systems"``) or over documents and segments not yet
labelled (``rows="spread"``). On WMT21 neither the stratified choices nor the allocation beat uniform
random selection measurably (docs/calibration.md, "Label budget"): random is the default, and what
the plan adds is the expected standard errors and the stopping rule.

``sigma_g`` comes from the labels already there (residuals of the anchored map fitted on them,
pooled with the common residual variance as if that were worth 5 labels, as the estimator does);
a group without labels takes the pooled value; without any labels it is ``residual_sd`` if given,
else the same in every group (then the standard errors are not known and no stopping rule can be
given). The stopping rule orders the groups by their calibrated level (the mean over systems of
the calibrated system means, with unshrunk offsets) and compares each gap between adjacent groups
to its standard error: settled when every gap is at least ``z`` standard errors (``confidence``);
otherwise it says how many more labels per group would make each gap that large with probability
``power`` if the gaps are as estimated. The standard errors leave out the slopes' error (small when
labels are spread over systems) and any clustering of labels (annotators); see docs/calibration.md.
"""
from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from .._base.grouping import group_index
from .._base.result import Result
from .._base.seeding import make_rng
from ..exceptions import DataQualityWarning, InputError
from ..metrics._direction import higher_is_better
from ..table import (
    DEFAULT_BY,
    EvalTable,
    as_table,
    numeric_column,
    pooled_pairs_note,
    require_columns,
    scored_group_rows,
)
from ._fit import build_anchored
from ._scales import direction_for
from ._select import annotation_columns, annotation_rows, in_row_order, stratified_rows

__all__ = ["LabelPlan", "plan_labels", "PlanTarget", "LabelDraw", "ROW_CHOICES", "ALLOCATIONS"]

ROW_CHOICES = ("stratified", "random", "systems", "spread")
ALLOCATIONS = ("equal", "neyman")
PRIOR_LABELS = 5  # a group's residual variance is pooled with the common one as if that were worth 5 labels

ROW_WORDS = {
    "stratified": "a random sample stratified by system and document (evenly over the group's systems, counting the "
                  "labels they have; within a system evenly over its documents in a random order)",
    "random": "a simple random sample of the group's rows (after one row for each system without a label)",
    "systems": "evenly over the group's systems, at random within a system",
    "spread": "evenly over the group's systems, within a system spread over documents and segments not yet labelled",
}
ALLOCATION_WORDS = {
    "equal": ("Equal allocation: the same number of labels in every group, counting those already there (on WMT21 "
              "and in simulation no allocation by residual sd beat it: docs/calibration.md), never below the labels "
              "already there nor below one per system when the budget allows."),
    "neyman": ("Neyman allocation for the cross-group comparison: labels per group proportional to the group's "
               "residual sd times sqrt(S_g (S - S_g)) (S_g its systems, S all systems: the cross-group system pairs "
               "its offset enters), never below the labels already there nor below one per system when the budget "
               "allows."),
}
METHOD = ("{allocation} Rows within a group: {rows}. "
          "Expected standard error of a group's offset: residual sd / sqrt(labels) (difference estimator, slope "
          "error and clustering of labels left out). Stopping rule: every gap between adjacent groups' calibrated "
          "levels at least z = {z:.2f} standard errors ({confidence:.7g} confidence); labels to settle a gap planned "
          "for power {power:.7g} at the estimated gap.")


@dataclass(frozen=True, eq=False)
class LabelPlan(Result):
    """The plan of :func:`plan_labels`.

    ``groups``: one row per group: ``systems``, ``rows`` (with a finite score), ``labelled`` (already),
    ``to_add``, ``planned`` (= labelled + to_add), ``residual_sd`` and where it comes from
    (``residual_sd_from``: labels, pooled, given, assumed), ``level`` (calibrated mean of the group's
    systems, NaN without labels), ``se_now`` and ``se_after`` (of the group's offset), and
    ``more_to_settle`` (labels to add beyond the plan to settle the group's gaps). ``gaps``: one row
    per pair of adjacent groups in the order of ``level``. ``rows``: the rows to label (as
    :func:`select_for_annotation` writes them). ``status``: ``settled`` (now), ``planned`` (the planned
    labels are expected to settle it), ``more`` (more labels needed), ``unknown`` (no labels to judge).
    """

    groups: pd.DataFrame
    gaps: pd.DataFrame
    rows: pd.DataFrame = field(repr=False, metadata={"dump": False})
    budget: int = 0
    labelled: int = 0
    to_add: int = 0
    status: str = "unknown"
    verdict: str = ""
    more_per_group: dict = field(default_factory=dict)
    confidence: float = 0.95
    power: float = 0.8
    row_choice: str = "stratified"
    method: str = ""
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    allocation: str = "equal"

    _dump_order = ("status", "verdict", "budget", "labelled", "to_add", ...)


def _check_target(confidence, power, residual_sd) -> None:
    for name, value in (("confidence", confidence), ("power", power)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise InputError(f"{name}={value!r}: expected a number between 0 and 1, e.g. "
                             f"{0.95 if name == 'confidence' else 0.8}", argument=name, value=value)
    if residual_sd is not None and (isinstance(residual_sd, bool) or not isinstance(residual_sd, (int, float))
                                    or not math.isfinite(residual_sd) or residual_sd <= 0):
        raise InputError(f"residual_sd={residual_sd!r}: expected a positive number on the human scale",
                         argument="residual_sd", value=residual_sd)


@dataclass(frozen=True)
class PlanTarget:
    """What a label plan aims to settle: a gap between two groups found at ``confidence`` with ``power``,
    under the residual sd of the human scale ``residual_sd`` where no labels tell it (None: the planner's
    assumption; raw DA on WMT21: 26-34 points per pair, docs/calibration.md). Checked when built."""

    confidence: float = 0.95
    power: float = 0.8
    residual_sd: float | None = None

    def __post_init__(self) -> None:
        _check_target(self.confidence, self.power, self.residual_sd)

    def with_(self, **changes: Any) -> PlanTarget:
        """This target with some settings changed."""
        return replace(self, **changes)


@dataclass(frozen=True)
class LabelDraw:
    """How a label plan places its labels: ``allocation`` across groups (``equal``: the same number per group;
    ``neyman``: by residual sd and system counts), ``rows`` within a group (``stratified``: random, stratified
    by system and document; ``random``: a simple random sample after one row per system without a label;
    ``systems``: evenly over systems; ``spread``: evenly over systems, over documents and segments within a
    system) and the ``random_state`` of the draw. Checked when built."""

    allocation: str = "equal"
    rows: str = "stratified"
    random_state: Any = 0

    def __post_init__(self) -> None:
        if self.allocation not in ALLOCATIONS:
            raise InputError(f"allocation={self.allocation!r}: use one of {', '.join(ALLOCATIONS)}",
                             argument="allocation", value=self.allocation)
        if self.rows not in ROW_CHOICES:
            raise InputError(f"rows={self.rows!r}: use one of {', '.join(ROW_CHOICES)}", argument="rows",
                             value=self.rows)

    def with_(self, **changes: Any) -> LabelDraw:
        """This draw with some settings changed."""
        return replace(self, **changes)


DEFAULT_TARGET = PlanTarget()
DEFAULT_DRAW = LabelDraw()


def plan_labels(data: EvalTable | pd.DataFrame, by: str | Sequence[str] | None, budget: int, *,
                score: str | None = None, human: str | None = None, system: str | None = "system",
                segment: str | None = "seg_id", document: str | None = "doc_id",
                target: PlanTarget = DEFAULT_TARGET, draw: LabelDraw = DEFAULT_DRAW,
                label_column: str | None = "human", human_scale: str | None = None) -> LabelPlan:
    """Plan ``budget`` labels in all (the labels already in ``human`` count toward it) over the groups of
    ``by`` for the cross-group comparison of anchored calibration, choose the rows, and say whether the
    ranking of the groups is settled (module docstring). ``human``: the human column (NaN = not yet
    labelled); without it nothing is labelled yet. ``target`` (:class:`PlanTarget`): the confidence and power
    of the comparison, and the residual sd to assume where no labels tell it. ``draw`` (:class:`LabelDraw`):
    the allocation across groups, the choice of rows within a group, and the seed. ``human_scale``: the human
    scale's name (``mqm``, ``esa``, ...; else the table's ``HUMAN_scale`` column), whose direction the map of
    the labels there are takes, as ``calibrate fit`` does; the score's direction is the one rule's."""
    confidence, power, residual_sd = target.confidence, target.power, target.residual_sd
    allocation, rows, random_state = draw.allocation, draw.rows, draw.random_state
    table = as_table(data, by=by, score=score, default_by=DEFAULT_BY)
    _check_arguments(budget, rows, confidence, power, residual_sd)
    if allocation not in ALLOCATIONS:
        raise InputError(f"allocation={allocation!r}: use one of {', '.join(ALLOCATIONS)}", argument="allocation",
                         value=allocation)
    rng, seed = make_rng(random_state)
    given = table.frame
    scored = scored_group_rows(table)  # a group with no score is no group to plan for (said once)
    at = np.arange(len(given)) if scored is None else np.flatnonzero(scored)  # each planned row's place in given
    table = table.with_positions(at) if scored is not None else table
    table, order = in_row_order(table, system, segment, document)
    frame, by_cols = table.frame, list(table.by)
    x, h = _score_and_labels(table, human)
    cols = {role: name if name and name in frame.columns else None
            for role, name in (("system", system), ("segment", segment), ("document", document))}
    keep = annotation_columns(frame, by_cols, cols["system"], cols["segment"], label_column,
                              score=table.score_column)
    codes, names = table.groups.codes, table.groups.labels()
    labelled, eligible = np.isfinite(x) & np.isfinite(h), np.isfinite(x) & ~np.isfinite(h)
    cells = _Cells(codes, _codes(frame, cols["system"]), labelled, eligible, np.isfinite(x), len(names))
    pooled = pooled_pairs_note(frame, by_cols, cols["system"])  # a group of two test sets: one level planned for both
    notes: list[str] = [pooled] if pooled is not None else []
    directions = {"human_higher_is_better": direction_for(frame, human, human_scale),
                  "score_higher_is_better": higher_is_better(table.score_column, table.signature(table.score_column),
                                                             values=x)}
    calibrated = _calibrated(frame, table.score_column, by_cols, human, cols["system"], labelled, notes, directions)
    resid = None if calibrated is None else np.where(labelled, h - calibrated, np.nan)
    sigma, sigma_from = _residual_sd(resid, codes, labelled, cells, residual_sd, notes)
    share = sigma if allocation == "neyman" else None
    planned = _allocate(budget, cells, share, _floors(cells, budget, notes))
    bare = [str(names[i]) for i in np.flatnonzero(planned == 0)] if len(names) > 1 else []
    if bare:  # said beside the budget's note: without a label in every group there is no anchored fit at all
        notes.append(f"budget={budget} leaves group(s) {', '.join(bare)} without a label: anchored calibration needs "
                     f"labels in every group; give at least {len(names)} (one per group), better 25 per group")
    chosen = _choose_rows(cells, planned - cells.n_labels, rows, _codes(frame, cols["segment"]),
                          _codes(frame, cols["document"]), rng)
    known = bool((sigma_from != "assumed").all())
    z, zp = float(special.ndtri(0.5 + confidence / 2)), float(special.ndtri(power))
    levels = _levels(calibrated, resid, codes, cells, labelled)
    gaps = _gaps(levels, sigma, cells.n_labels, planned, cells.available + cells.n_labels, names, z, zp)
    status, verdict, more = _verdict(gaps, len(names), confidence, power, known)
    unplaced = [str(names[i]) for i in np.flatnonzero(~np.isfinite(levels))] if len(names) > 1 else []
    if unplaced and known and status in ("settled", "planned"):  # the gaps are among the labelled groups only
        among = ("settled among the labelled groups" if status == "settled" else
                 "expected to be settled among the labelled groups by the planned labels")
        status, more = "more", {}
        verdict = (f"the ranking across groups is not settled: group(s) {', '.join(unplaced)} have no labels yet, so "
                   f"their place in it is unknown (it is {among}); label the planned rows and plan again")
    for note in notes:
        if note.startswith("budget="):  # a plan that leaves systems without labels; planning blind is no fault
            warnings.warn(note, DataQualityWarning, stacklevel=2)
    chosen = np.sort(at[order[chosen]])  # positions in the table as given (row_id), not in the canonical order
    return LabelPlan(groups=_group_table(names, cells, planned, sigma, sigma_from, known, levels, more),
                     gaps=gaps, rows=annotation_rows(given, chosen, keep, label_column), budget=int(budget),
                     labelled=int(cells.n_labels.sum()), to_add=len(chosen), status=status, verdict=verdict,
                     more_per_group=more, confidence=float(confidence), power=float(power), row_choice=rows,
                     method=METHOD.format(allocation=ALLOCATION_WORDS[allocation], rows=ROW_WORDS[rows], z=z,
                                          confidence=confidence, power=power),
                     random_state=seed, notes=tuple(notes), allocation=allocation)


def _score_and_labels(table: EvalTable, human: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The score (with a finite value somewhere) and the human column (all NaN without one)."""
    x = table.scores()
    if not np.isfinite(x).any():
        raise InputError(f"score column {table.score_column!r} has no finite value; check score=", argument="score",
                         value=table.score_column)
    if human is None:
        return x, np.full(len(x), np.nan)
    if human == table.score_column:
        raise InputError(f"the human column and the score column are the same ({human!r}); the plan maps the score "
                         "onto human labels: name the human column with human=", argument="human", value=human)
    require_columns(table.frame, [human], what="table", argument="human")
    return x, numeric_column(table.frame, human, what="table", argument="human")


def _group_table(names, cells, planned, sigma, sigma_from, known, levels, more) -> pd.DataFrame:
    """One row per group: counts, the residual sd and its source, the level, and the offset's standard
    error with the labels there and with the planned ones (NaN where no sd is known)."""
    sd = sigma if known else np.full(len(names), np.nan)
    return pd.DataFrame({"group": names, "systems": cells.n_systems, "rows": cells.n_rows,
                         "labelled": cells.n_labels, "to_add": planned - cells.n_labels, "planned": planned,
                         "residual_sd": sd, "residual_sd_from": sigma_from, "level": levels,
                         "se_now": np.where(cells.n_labels > 0, sd / np.sqrt(np.maximum(cells.n_labels, 1)), np.nan),
                         "se_after": sd / np.sqrt(np.maximum(planned, 1)),
                         "more_to_settle": [more.get(n, 0) for n in names]})


# ------------------------------------------------------------------------------------ checks
def _check_arguments(budget, rows, confidence, power, residual_sd) -> None:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InputError(f"budget={budget!r}: expected the total number of labels (those already collected "
                         "included), a whole number >= 1", argument="budget", value=budget)
    if rows not in ROW_CHOICES:
        raise InputError(f"rows={rows!r}: use one of {', '.join(ROW_CHOICES)}", argument="rows", value=rows)
    _check_target(confidence, power, residual_sd)


def _codes(frame: pd.DataFrame, column: str | None) -> np.ndarray | None:
    if column is None:
        return None
    return group_index([frame[column]], names=[column], allow_missing=True).codes


# ------------------------------------------------------------------------------------ the table's cells
class _Cells:
    """Counts per group and per (group, system) cell: rows, labels, rows that can still be labelled."""

    def __init__(self, codes, systems, labelled, eligible, finite, n_groups: int):
        self.codes = codes
        self.systems = np.zeros(len(codes), dtype=np.intp) if systems is None else systems
        self.labelled, self.eligible = labelled, eligible
        self.n_rows = np.bincount(codes[finite], minlength=n_groups)
        self.n_labels = np.bincount(codes[labelled], minlength=n_groups)
        self.available = np.bincount(codes[eligible], minlength=n_groups)
        cell = pd.factorize(pd.Series(codes) * (int(self.systems.max()) + 2 if len(codes) else 1)
                            + self.systems)[0]
        self.cell = cell
        n_cells = int(cell.max()) + 1 if len(cell) else 0
        self.cell_group = np.zeros(n_cells, dtype=np.intp)
        self.cell_group[cell] = codes
        self.cell_rows = np.bincount(cell[finite], minlength=n_cells)
        self.cell_labels = np.bincount(cell[labelled], minlength=n_cells)
        self.cell_free = np.bincount(cell[eligible], minlength=n_cells)
        self.n_systems = np.bincount(self.cell_group[self.cell_rows > 0], minlength=n_groups)


def _floors(cells: _Cells, budget: int, notes: list[str]) -> np.ndarray:
    """Labels each group has at least: those it has, plus one for every system without a label when
    the budget allows; refuses a budget that adds nothing or more than the table can take."""
    have, most = int(cells.n_labels.sum()), int((cells.n_labels + cells.available).sum())
    if have == most:  # no budget is both above the labels and within the rows: say so, not "give more than N"
        raise InputError(f"every row with a score already has a label ({have}): there is nothing left to plan; fit the "
                         "anchored calibration on them", argument="budget", value=budget)
    if budget <= have:
        raise InputError(f"budget={budget} is not more than the labels already collected ({have}): nothing to add; "
                         f"the budget is the total, those labels included: give more than {have}", argument="budget",
                         value=budget)
    if budget > most:
        raise InputError(f"budget={budget} is more than the rows that can carry a label ({most}: rows with a score, "
                         f"labelled or not): give at most {most}", argument="budget", value=budget)
    bare = (cells.cell_labels == 0) & (cells.cell_free > 0)
    floor = cells.n_labels + np.bincount(cells.cell_group[bare], minlength=len(cells.n_labels))
    if budget >= floor.sum():
        return floor
    notes.append(f"budget={budget} does not reach one label for every system ({int(floor.sum())} would): some "
                 "systems get none, and their deviation from the common line cannot be estimated")
    return cells.n_labels.copy()


# ------------------------------------------------------------------------------------ residual sd
def _calibrated(frame, score, by_cols, human, system, labelled, notes, directions) -> np.ndarray | None:
    """Every row calibrated by the anchored calibrator fitted on the labels there are (the library's
    estimator, as `calibrate fit` builds it, with the ``directions`` of the human scale and the score); None
    where they cannot be fitted (too few, constant), with the reason in ``notes`` when there were labels to fit."""
    if human is None or labelled.sum() < 2:
        return None
    model = build_anchored(by_cols, score, human, system=system, **directions)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # few labels per group: the plan is the answer to that
            return np.asarray(model.fit(frame, strict=False).transform(frame), dtype=float)
    except InputError as exc:
        # the labels are there, the map is not: say why, or the note below reads as "no labels"
        notes.append(f"the anchored map cannot be fitted on the {int(labelled.sum())} labels there are: {exc}")
        return None


def _residual_sd(resid, codes, labelled, cells, given, notes):
    """Each group's residual sd around the anchored map fitted on the labels there are, and its source."""
    n_groups = len(cells.n_labels)
    if resid is None:
        value = 1.0 if given is None else float(given)
        source = "assumed" if given is None else "given"
        if given is None:
            fitted = not any(note.startswith("the anchored map cannot be fitted") for note in notes)
            notes.append(("no labels to estimate the residual sd from" if fitted else "no residual sd without the map")
                         + ": every group is assumed alike (labels by systems only) and no standard error can be "
                         "given; label the planned rows, or give residual_sd=, and plan again")
        return np.full(n_groups, value), np.array([source] * n_groups, dtype=object)
    lab = codes[labelled]
    r = resid[labelled]
    n = np.bincount(lab, minlength=n_groups)
    mean = np.bincount(lab, r, minlength=n_groups) / np.maximum(n, 1)
    dev2 = np.bincount(lab, (r - mean[lab]) ** 2, minlength=n_groups)
    dof = np.maximum(n - 1, 0)
    pooled = dev2.sum() / dof.sum() if dof.sum() > 0 else float(np.var(r, ddof=1))
    s2 = (dev2 + PRIOR_LABELS * pooled) / (dof + PRIOR_LABELS)
    source = np.where(dof > 0, "labels", "pooled").astype(object)
    return np.sqrt(np.maximum(s2, 1e-300)), source


def _levels(calibrated, resid, codes, cells, labelled) -> np.ndarray:
    """Each group's calibrated level: the mean over its systems of the calibrated system means, with the
    group's own (unshrunk) mean residual as offset; NaN for a group without labels."""
    n_groups = len(cells.n_labels)
    if calibrated is None:
        return np.full(n_groups, np.nan)
    ok = np.isfinite(calibrated)
    n_cells = len(cells.cell_rows)
    counts = np.bincount(cells.cell[ok], minlength=n_cells)
    cell_mean = np.bincount(cells.cell[ok], calibrated[ok], minlength=n_cells) / np.maximum(counts, 1)
    has = counts > 0
    level = np.bincount(cells.cell_group[has], cell_mean[has], minlength=n_groups) \
        / np.maximum(np.bincount(cells.cell_group[has], minlength=n_groups), 1)
    lab = codes[labelled]
    n = np.bincount(lab, minlength=n_groups)
    # calibrated = shrunk offset + map: the mean of (human - calibrated) over a group's labels undoes the shrinkage
    correction = np.bincount(lab, resid[labelled], minlength=n_groups) / np.maximum(n, 1)
    return np.where(n > 0, level + correction, np.nan)


# ------------------------------------------------------------------------------------ allocation
def _allocate(budget: int, cells: _Cells, sigma: np.ndarray | None, floor: np.ndarray) -> np.ndarray:
    """Labels per group in all: Neyman shares (``sigma`` given) or equal shares (None) within
    [floor, labelled + available], summing to ``budget``."""
    n_sys = cells.n_systems.astype(float)
    weight = n_sys * (n_sys.sum() - n_sys) if len(n_sys) > 1 else np.ones(1)
    share = np.ones(len(n_sys)) if sigma is None else sigma * np.sqrt(np.maximum(weight, 0))
    if not (share > 0).any():
        share = np.ones_like(share)
    low, high = floor.astype(float), (cells.n_labels + cells.available).astype(float)

    def total(c: float) -> float:
        return float(np.clip(c * share, low, high).sum())

    lo, hi = 0.0, 1.0
    while total(hi) < budget and hi < 1e300:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if total(mid) < budget else (lo, mid)
    target = np.clip(hi * share, low, high)
    planned = np.floor(target + 1e-9).astype(int)
    planned = np.clip(planned, floor, high.astype(int))
    left = int(budget - planned.sum())
    order = np.argsort(-(target - planned), kind="stable")
    while left > 0:  # largest remainders first, never past a group's rows
        for g in order:
            if left == 0:
                break
            if planned[g] < high[g]:
                planned[g] += 1
                left -= 1
    while left < 0:  # rounding up to the floors overshot: take back from the largest shares above their floor
        g = int(np.argmax(np.where(planned > floor, planned - target, -np.inf)))
        planned[g] -= 1
        left += 1
    return planned


def _choose_rows(cells: _Cells, add: np.ndarray, rows: str, segments, documents, rng) -> np.ndarray:
    """Row positions of the labels to add: per group, evenly over systems (fewest labels first), and
    within a system at random or spread over documents and segments not yet labelled."""
    chosen: list[int] = []
    for g in np.flatnonzero(add > 0):
        if rows == "random":
            chosen.extend(_random_rows(cells, int(g), int(add[g]), rng))
            continue
        if rows == "stratified":
            mine = cells.codes == g
            have = np.bincount(cells.systems[cells.labelled & mine], minlength=int(cells.systems.max()) + 1)
            chosen.extend(stratified_rows(np.flatnonzero(cells.eligible & mine), int(add[g]), cells.systems,
                                          documents, rng, have=have).tolist())
            continue
        group_cells = np.flatnonzero(cells.cell_group == g)
        count = cells.cell_labels[group_cells].copy()
        room = cells.cell_free[group_cells].copy()
        quota = np.zeros(len(group_cells), dtype=int)
        jitter = rng.random(len(group_cells))
        for _ in range(int(add[g])):  # water-filling: the next label to the system with the fewest so far
            open_ = np.flatnonzero(room > quota)
            j = open_[np.lexsort((jitter[open_], (count + quota)[open_]))[0]]
            quota[j] += 1
        free = {int(c): np.flatnonzero(cells.eligible & (cells.cell == c)) for c in group_cells[quota > 0]}
        if rows == "systems":
            for c, k in zip(group_cells, quota, strict=True):
                if k:
                    chosen.extend(rng.choice(free[int(c)], size=int(k), replace=False).tolist())
        else:
            chosen.extend(_spread_rows(cells, g, group_cells, quota, free, segments, documents, rng))
    return np.sort(np.asarray(chosen, dtype=np.intp))


def _random_rows(cells: _Cells, g: int, k: int, rng) -> list[int]:
    """A simple random sample of ``k`` of the group's free rows, after one row for each system without a
    label when ``k`` covers them all."""
    group_cells = np.flatnonzero(cells.cell_group == g)
    bare = group_cells[(cells.cell_labels[group_cells] == 0) & (cells.cell_free[group_cells] > 0)]
    free = np.flatnonzero(cells.eligible & (cells.codes == g))
    first: list[int] = []
    if 0 < len(bare) <= k:
        first = [int(rng.choice(np.flatnonzero(cells.eligible & (cells.cell == c)))) for c in bare]
        free = np.setdiff1d(free, first)
    return first + rng.choice(free, size=k - len(first), replace=False).tolist()


def _spread_rows(cells, g, group_cells, quota, free, segments, documents, rng) -> list[int]:
    """Round-robin over the group's systems: each takes the row whose (document, system) cell, segment and
    document have the fewest labels in the group so far (ties at random). Labels of one document of one
    system share its judge in document-level campaigns; distinct segments and documents share less."""
    in_group = cells.codes == g
    seg = segments if segments is not None else np.arange(len(cells.codes))
    doc = documents if documents is not None else np.arange(len(cells.codes))
    used = cells.labelled & in_group
    seg_count: dict = pd.Series(seg[used]).value_counts().to_dict()
    doc_count: dict = pd.Series(doc[used]).value_counts().to_dict()
    pair_count: dict = pd.Series(list(zip(doc[used], cells.systems[used], strict=True))).value_counts().to_dict() \
        if used.any() else {}
    left = {int(c): int(k) for c, k in zip(group_cells, quota, strict=True) if k}
    pool = {c: rng.permutation(free[c]) for c in left}
    picked: list[int] = []
    while left:
        for c in rng.permutation(list(left)).tolist():
            cand = pool[c]
            s = cells.systems[cand[0]]
            keys = np.array([(pair_count.get((doc[i], s), 0), seg_count.get(seg[i], 0), doc_count.get(doc[i], 0))
                             for i in cand])
            best = np.lexsort((np.arange(len(cand)), keys[:, 2], keys[:, 1], keys[:, 0]))[0]
            i = int(cand[best])
            picked.append(i)
            pool[c] = np.delete(cand, best)
            seg_count[seg[i]] = seg_count.get(seg[i], 0) + 1
            doc_count[doc[i]] = doc_count.get(doc[i], 0) + 1
            pair_count[(doc[i], s)] = pair_count.get((doc[i], s), 0) + 1
            left[c] -= 1
            if not left[c]:
                del left[c]
    return picked


# ------------------------------------------------------------------------------------ stopping rule
def _more_labels(s_hi: float, s_lo: float, n_hi: int, n_lo: int, target_var: float, cap: int) -> int:
    """Labels to add to each of two groups so that the variance of their gap falls to ``target_var``
    (``cap + 1`` when even ``cap`` more would not)."""
    def var(m: int) -> float:
        return s_hi**2 / max(n_hi + m, 1) + s_lo**2 / max(n_lo + m, 1)

    if var(0) <= target_var:
        return 0
    if var(cap) > target_var:
        return cap + 1
    lo, hi = 0, cap
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if var(mid) > target_var else (lo, mid)
    return hi


def _gaps(levels, sigma, n_now, planned, most, names, z, zp) -> pd.DataFrame:
    columns = ["higher", "lower", "gap", "se_now", "z_now", "se_after", "z_after", "settled_now", "more_per_group",
               "reachable"]
    known = np.flatnonzero(np.isfinite(levels))
    if len(known) < 2:
        return pd.DataFrame(columns=columns)
    order = known[np.argsort(-levels[known], kind="stable")]
    out = []
    for hi, lo in itertools.pairwise(order):
        gap = float(levels[hi] - levels[lo])
        se_now = math.sqrt(sigma[hi] ** 2 / max(n_now[hi], 1) + sigma[lo] ** 2 / max(n_now[lo], 1))
        se_after = math.sqrt(sigma[hi] ** 2 / planned[hi] + sigma[lo] ** 2 / planned[lo])
        cap = int(max(min(most[hi] - planned[hi], most[lo] - planned[lo]), 0))
        more = _more_labels(sigma[hi], sigma[lo], int(planned[hi]), int(planned[lo]), (gap / (z + zp)) ** 2, cap) \
            if gap > 0 else cap + 1
        out.append({"higher": names[hi], "lower": names[lo], "gap": gap, "se_now": se_now,
                    "z_now": gap / se_now, "se_after": se_after, "z_after": gap / se_after,
                    "settled_now": bool(gap / se_now >= z), "more_per_group": int(more),
                    "reachable": bool(more <= cap)})
    return pd.DataFrame(out, columns=columns)


def _verdict(gaps, n_groups, confidence, power, known) -> tuple[str, str, dict]:
    """Status, verdict in words, and the labels per group to add beyond the plan to settle the open gaps."""
    if not known or len(gaps) == 0:
        return "unknown", ("no labels to judge the ranking of the groups by: label the planned rows and plan again"
                           if n_groups > 1 else "one group: there is no ranking across groups to settle"), {}
    if gaps["settled_now"].all():
        return "settled", (f"the ranking across groups is settled at {confidence:.7g} confidence with the labels "
                           f"already collected (every gap between adjacent groups is at least "
                           f"{gaps['z_now'].min():.2f} standard errors): more labels are not needed for it"), {}
    open_gaps = gaps[~gaps["settled_now"]]
    more: dict[str, int] = {}
    for row in open_gaps[open_gaps["reachable"]].itertuples():
        for name in (row.higher, row.lower):
            more[name] = max(more.get(name, 0), int(row.more_per_group))
    blocked = open_gaps[~open_gaps["reachable"]]
    if all(v == 0 for v in more.values()) and not len(blocked):
        return "planned", (f"the ranking across groups is not settled yet; the planned labels are expected to settle "
                           f"it (each open gap at {confidence:.7g} confidence with probability {power:.7g} if the gaps "
                           "are as estimated)"), {}
    words = ", ".join(f"{k}: {v}" for k, v in more.items() if v > 0)
    text = f"the ranking across groups is not settled at {confidence:.7g} confidence"
    if words:
        text += (f"; beyond this plan, these more labels per group would settle it (power {power:.7g} if the gaps are "
                 f"as estimated): {words}")
    if len(blocked):
        pairs = "; ".join(f"{r.higher} vs {r.lower} (gap {r.gap:.3g})" for r in blocked.itertuples())
        text += (f"; not within the rows of this table: {pairs}: these groups are too close for labels to tell "
                 "apart, treat them as tied")
    return "more", text, {k: v for k, v in more.items() if v > 0}
