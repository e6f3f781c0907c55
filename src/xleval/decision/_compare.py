"""Which calibration should I trust here? Raw vs LGN vs anchored, cross-validated by system folds.

Systems (by name, across groups) are split into ``n_folds`` folds. For each fold, every
calibrator is fitted with what the other folds offer and applied to the fold's systems:

* ``raw``: the score as it is (system score = mean of its rows);
* ``lgn``: per-group z-score (LGN, no shrinkage) fitted on the other folds' rows;
* ``anchored``: AnchoredCalibrator with every human label of the other folds' systems;
* ``anchored@K``: the same with only K labelled rows per group, chosen among the other folds'
  labelled rows by ``spread`` (:func:`xleval.calibration.select_rows`, what ``calibrate select``
  does) or ``random``; a new draw (and a new fold split) in every repeat.

No held-out system's human score reaches a map that scores it. A system's calibrated score is the
mean of its calibrated rows; its human score the mean of its labelled rows. Every variant is run
on ``n_repeats`` fold splits and reported as the mean over them: cross-group pairwise accuracy
(acc23 with tie calibration, pairs of systems from different groups) and pooled system-level
Pearson r, oriented so that higher is better on both sides (MQM-like human scales are negated).
CIs resample systems within groups (the same resamples for every variant, so differences to raw
and to LGN are paired); the spread over repeats (``runs``) shows what one label draw can give.

With ``alternative`` (``two-sided``, ``greater``: WMT's one-sided test that the calibration orders
more cross-group pairs as humans do, or ``less``) every variant is also tested against raw with
mt-metrics-eval's PERM-BOTH permutation test (:func:`xleval.stats.compare_pairwise_accuracy`) on
the system scores averaged over the repeats. Accuracy here is always cross-group: a per-group
calibration cannot reorder pairs inside a group or a segment, so averaging by group or by item
(``average_by`` of :func:`xleval.stats.pairwise_accuracy`) would show no difference between the
variants and is not offered.
"""
from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as ss

from .._base.grouping import group_index
from .._base.progress import Progress, Steps
from .._base.result import Result
from .._base.seeding import make_rng, resolve_seed
from ..calibration import PLAIN_LGN, SELECTIONS, build_anchored, build_lgn, direction_for, select_rows
from ..diagnostics import HumanScale, human_scale_check
from ..exceptions import InputError, ScaleRangeWarning
from ..stats import (
    Estimate,
    TestResult,
    compare_pairwise_accuracy,
    estimate_from_distribution,
    pairwise_accuracy,
    resampled_pearson,
    stratified_resample_counts,
)
from ..stats._grouped_bootstrap import pair_indices, pairs_correct, resampled_pair_sums
from ..stats._resampling import Resampling
from ..table import DEFAULT_BY, EvalTable, as_table, pooled_pairs_note, scored_groups
from ._procedure import DECISION_SELECTION, DEFAULT_BUDGETS, EVALUATION_PROCEDURE, Procedure

ALTERNATIVES = ("two-sided", "greater", "less")

__all__ = ["VariantScore", "CalibrationEvaluation", "compare_calibrations", "DEFAULT_BUDGETS", "ALTERNATIVES",
           "score_direction"]


@dataclass(frozen=True, eq=False)
class VariantScore(Result):
    """One calibration variant out of fold: ``accuracy`` (cross-group pairwise accuracy, mean over
    repeats, CI from systems resampled within groups), ``pearson`` (pooled system-level r),
    ``minus_raw`` and ``minus_lgn`` (paired differences), ``runs`` (accuracy of each repeat);
    ``vs_raw``: the permutation test against raw (its ``alternative`` names the sidedness; None
    unless asked for, and for raw itself)."""

    name: str
    method: str
    budget: int | None
    selection: str | None
    accuracy: Estimate
    pearson: Estimate
    minus_raw: Estimate | None
    minus_lgn: Estimate | None
    runs: tuple[float, ...]
    vs_raw: TestResult | None = None


@dataclass(frozen=True, eq=False)
class CalibrationEvaluation(Result):
    """Result of :func:`evaluate_calibration` (module docstring). ``variants`` in the order raw, lgn,
    anchored, then anchored@K per budget and selection; ``selection_gain``: budget -> Estimate of
    accuracy(spread) - accuracy(random) over paired repeats; ``systems``: the evaluated systems
    with their human score and the first repeat's out-of-fold raw/lgn/anchored scores;
    ``verdict``: the answer in one paragraph and ``recommended`` (``raw``, ``lgn`` or ``anchored``), both
    from ``decision`` (:class:`~xleval.decision.CalibrationDecision`, made at ``budget`` labels per
    group when given, else at the labels in the table: ``labels_per_group``); ``scale``: the
    standardisation check of the human column (:func:`~xleval.diagnostics.human_scale_check`);
    ``human_scale``: the scale's name as the caller gave it (``da``, ``mqm``, ``z`` ...; None: not given), which
    the decision's advice passes on (the fit it names takes that scale's direction and bounds)."""

    score: str
    human: str
    by: tuple[str, ...]
    system: str
    variants: tuple[VariantScore, ...]
    selection_gain: dict[int, Estimate]
    systems: pd.DataFrame
    human_direction: int
    direction_source: str
    n_rows: int
    n_labels: int
    n_systems: int
    n_groups: int
    n_folds: int
    n_repeats: int
    budgets: tuple[int, ...]
    level: float
    n_resamples: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())
    alternative: str | None = None
    budget: int | None = None
    scale: HumanScale | None = None
    labels_per_group: dict[str, int] = field(default_factory=dict)
    recommended: str = ""
    verdict: str = ""
    decision: Any = None
    human_scale: str | None = None

    def variant(self, name: str) -> VariantScore:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    def curve(self) -> pd.DataFrame:
        """The budget curve: one row per (budget, selection) with accuracy, CI and differences."""
        rows = [{"budget": v.budget, "selection": v.selection, "accuracy": v.accuracy.estimate,
                 "ci_low": v.accuracy.ci_low, "ci_high": v.accuracy.ci_high, "pearson": v.pearson.estimate,
                 "minus_raw": v.minus_raw.estimate if v.minus_raw else math.nan,
                 "minus_lgn": v.minus_lgn.estimate if v.minus_lgn else math.nan,
                 "worst_run": min(v.runs), "best_run": max(v.runs)}
                for v in self.variants if v.budget is not None]
        return pd.DataFrame(rows)

    def labels_needed(self, selection: str = "spread", target: float | None = None) -> int | None:
        """Smallest budget whose mean accuracy reaches ``target`` (default: the better of raw and LGN),
        or None when no evaluated budget does."""
        goal = max(self.variant("raw").accuracy.estimate, self.variant("lgn").accuracy.estimate) \
            if target is None else target
        fits = [v.budget for v in self.variants
                if v.budget is not None and v.selection == selection and v.accuracy.estimate >= goal]
        return min(fits) if fits else None


def compare_calibrations(data: EvalTable | pd.DataFrame, score: str | None = None, human: str | None = None,
                         by: str | Sequence[str] | None = None, *, system: str | None = None,
                         procedure: Procedure = EVALUATION_PROCEDURE, human_higher_is_better: bool | None = None,
                         score_higher_is_better: bool | None = None, progress: Progress | None = None,
                         alternative: str | None = None, budget: int | None = None,
                         human_scale: str | None = None) -> CalibrationEvaluation:
    """Raw vs LGN vs anchored (all labels, and K labels per group) out of fold; see the module docstring.
    The comparison only: it never calls the decision (:func:`xleval.decision.evaluate_calibration` is this
    comparison and the decision read from it).

    ``procedure``: folds, repeats, resamples, level, seed and the budget curve (``budgets`` by
    ``selections``; default :data:`~xleval.decision.EVALUATION_PROCEDURE`, the decision's procedure with
    the curve 25, 50, 100, 200 by both selections). ``progress``: told of each fold fitted (repeats x folds)
    and of the scoring at the end. ``alternative``: also test every variant against raw, with this
    sidedness (module docstring). ``budget``: the labels per group the user has or will have; the anchored
    variant the decision reads is drawn there (``budget`` random labels per group). ``human_scale``: ``z``,
    ``raw`` or None (the standardisation check looks at the data).
    ``data``: an :class:`~xleval.table.EvalTable` (its roles are the defaults) or a frame (``by``:
    :data:`~xleval.table.DEFAULT_BY`, ``system="system"``)."""
    budgets, selections = procedure.budgets, procedure.selections
    n_folds, n_repeats, level = procedure.n_folds, procedure.n_repeats, procedure.level
    n_resamples, random_state = procedure.n_resamples, procedure.random_state
    if alternative is not None and alternative not in ALTERNATIVES:
        raise InputError(f"alternative {alternative!r}: use one of {', '.join(ALTERNATIVES)} (or None: no test)")
    score_higher_is_better = score_direction(data, score, score_higher_is_better)
    if system is None and not (isinstance(data, EvalTable) and data.system is not None):
        system = "system"  # a frame's default; a table's own role otherwise
    table = as_table(data, score=score, human=human, by=by, system=system, default_by=DEFAULT_BY)
    # folds, label draws and resamples never depend on the rows' order; a group with no score is no group to compare
    table = scored_groups(table).in_canonical_order()
    if table.human is None:
        raise InputError("the evaluation needs the human column; give human=", argument="human")
    score, human, by_cols, system = table.score_column, table.human, list(table.by), table.system or "system"
    budgets, selections = _checked_procedure(budgets, budget, selections, n_folds, n_repeats)
    rng, seed = make_rng(random_state)
    seed, t = (seed if seed is not None else resolve_seed(rng)), _Table(table)
    scale = human_scale_check(t.h, t.g_label, human, human_scale)
    _check_systems(t.sys_names, system, n_folds)
    named = direction_for(table.frame, human, human_scale)  # a named scale says its direction (MQM: by its signs)
    if human_higher_is_better is not None and named != human_higher_is_better:
        _refuse_contradicted(t, human, human_higher_is_better, score_higher_is_better)
    human_higher_is_better = named if human_higher_is_better is None else human_higher_is_better
    direction, source, notes = _direction(t, human_higher_is_better, score_higher_is_better, human)
    budgets, budget, capped = cap_budgets(budgets, budget, pd.Series(t.labelled).groupby(t.g_label).sum())
    notes += capped
    pooled = pooled_pairs_note(table.frame, by_cols, table.system)  # one offset and one z-score over two test sets
    notes += [pooled] if pooled is not None else []
    # the fold fits take the direction of the human scale found on every label (one bit, as the user's own
    # fit is told it with human_higher_is_better=): a small draw that cannot settle it alone would otherwise
    # fall back to offsets only, and the budget curve would measure that fallback, not the calibration
    fold_direction = human_higher_is_better if human_higher_is_better is not None else bool(direction > 0)
    draws, names = _variants(budgets, selections, budget)
    steps = Steps(progress, int(n_repeats) * int(n_folds) + 1)
    runs, caught_all = _fold_runs(t, names, draws, (int(n_folds), int(n_repeats)), fold_direction,
                                  score_higher_is_better, seed, steps)
    notes += _count_messages(caught_all)
    systems = t.item_frame(runs)
    scores = _score(t, runs, names, direction, score_higher_is_better, level, n_resamples, rng, seed, alternative)
    gain = _selection_gain(scores, budgets, selections, level)
    steps.done()
    labels = pd.Series(t.labelled).groupby(t.g_label).sum()
    return CalibrationEvaluation(score, human, tuple(by_cols), system, tuple(scores.values()), gain, systems,
                                 direction, source, t.n_rows, int(t.labelled.sum()), t.n_items, len(t.group_names),
                                 int(n_folds), int(n_repeats), budgets, level, n_resamples, seed, tuple(notes),
                                 alternative, budget=budget, scale=scale,
                                 labels_per_group={str(g): int(n) for g, n in labels.items()},
                                 human_scale=human_scale)


def _variants(budgets: tuple[int, ...], selections: tuple[str, ...],
              budget: int | None) -> tuple[list[tuple[int, str]], list[str]]:
    """The label draws of the budget curve (each budget by each selection, and the decision's own budget drawn
    as the decision draws it) and the names of every variant compared."""
    draws = [(k, s) for k in budgets for s in selections]
    if budget is not None and (int(budget), DECISION_SELECTION) not in draws:
        draws.append((int(budget), DECISION_SELECTION))
    return draws, ["raw", "lgn", "anchored"] + [f"anchored@{k} {s}" for k, s in draws]


def _refuse_contradicted(t: _Table, human: str, human_higher_is_better: bool, score_higher_is_better: bool) -> None:
    """A direction the user gave that the labels contradict is refused, as `calibrate fit` refuses it (the fit on
    every label raises); one that the human scale's name fixes (MQM, ESA, DA, ...) is not checked here: a few
    labels pointing the other way are noise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the folds' fits report what matters
        build_anchored("g", "score", human, human_higher_is_better=human_higher_is_better,
                       score_higher_is_better=score_higher_is_better).fit(t.x, groups=t.g_label, human=t.h,
                                                                          systems=t.s)


def _checked_procedure(budgets: Sequence[int], budget: int | None, selections: Sequence[str], n_folds: Any,
                       n_repeats: Any) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The budget curve and selections, checked with the budget, folds and repeats; a bad one is refused."""
    budgets = _check_budgets(budgets)
    if budget is not None:
        _check_budgets([budget])
    selections = tuple(selections)
    if not selections or any(s not in SELECTIONS for s in selections):
        raise InputError(f"selections={selections!r}: use one or both of {', '.join(SELECTIONS)}")
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InputError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    if not isinstance(n_repeats, (int, np.integer)) or n_repeats < 1:
        raise InputError(f"n_repeats must be an integer >= 1; got {n_repeats!r}")
    return budgets, selections


def _check_systems(names: Any, system: str, n_folds: int) -> None:
    """Refuse a table of one system, or of fewer systems than folds: the evaluation holds systems out."""
    if len(names) < 2:
        raise InputError(f"system column {system!r} holds one system ({names[0]!r}); the evaluation holds out "
                         "systems and compares them: give a table of several systems (or name the system column with "
                         "system=)", argument="system", value=system)
    if len(names) < n_folds:
        raise InputError(f"{len(names)} systems cannot be split into {n_folds} folds; use at most "
                         f"{len(names)} folds (n_folds={len(names)})", argument="n_folds", value=n_folds)


def _fold_runs(t: _Table, names: list[str], draws: list[tuple[int, str]], folds: tuple[int, int],
               fold_direction: bool, score_higher_is_better: bool, seed: int,
               steps: Steps) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every variant's out-of-fold item scores, ``(n_repeats, items)`` each (``raw``: the items' raw scores),
    and the warnings the fold fits gave (``folds``: folds, repeats)."""
    n_folds, n_repeats = folds
    runs = {n: np.full((n_repeats, t.n_items), np.nan) for n in names}
    caught_all: list[str] = []
    for r in range(n_repeats):
        # every fold split and every label draw on a stream of its own: the variants the decision reads
        # are the same whichever budget curve is evaluated beside them
        fold = _folds(t, n_folds, np.random.default_rng([seed, r]))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for k in range(n_folds):
                _run_fold(t, fold, k, runs, r, draws, fold_direction, score_higher_is_better, seed)
                steps.done()
        # a fold fit's means past the labels' range are not said: its advice (declare human_range=) is for the
        # user's own fit, which says it; the comparison applies no range and reads the orders of the means
        caught_all += [f"{w.category.__name__}: {w.message}" for w in caught
                       if not issubclass(w.category, ScaleRangeWarning)]
    runs["raw"][:] = t.raw_items
    return runs, caught_all


def cap_budgets(budgets: tuple[int, ...], budget: int | None,
                labels_per_group: pd.Series) -> tuple[tuple[int, ...], int | None, list[str]]:
    """Budgets (labels per group) above the labels any group has are capped at that number: a draw of K
    labels from a group of fewer takes all of them, so K was never measured. Returns the capped budget
    curve, the capped decision ``budget`` and the notes that say so (the result's and the text's)."""
    most = int(labels_per_group.max()) if len(labels_per_group) else 0
    if most < 1:
        return budgets, budget, []
    over = sorted({int(k) for k in (*budgets, *([budget] if budget is not None else ())) if k > most})
    notes = []
    if over:
        listed = ", ".join(str(k) for k in over)
        notes.append(f"budget {listed} labels per group capped at {most}, the most labels a group has in the table: "
                     f"a draw of more labels than a group has takes all of them, so {listed} was not measured")
    fewest, largest = int(labels_per_group.min()), min(most, max(budgets, default=0))
    if fewest < largest:
        short = sorted(str(g) for g, n in labels_per_group.items() if n < largest)
        notes.append(f"group(s) {', '.join(short[:5])}{' ...' if len(short) > 5 else ''} have fewer labels than "
                     f"the larger budgets (as few as {fewest}): at those budgets they use all of theirs")
    capped = tuple(sorted({min(int(k), most) for k in budgets}))
    return capped, (None if budget is None else min(int(budget), most)), notes


def _count_messages(messages: list[str]) -> list[str]:
    """One note per kind of warning raised while fitting folds (numbers aside), with how often."""
    kinds: dict[str, list[str]] = {}
    for msg in messages:
        kinds.setdefault(re.sub(r"[-+]?\d[\d.e+-]*", "#", msg), []).append(msg)
    return [f"{found[0]} ({len(found)} of the fits raised this kind of warning)" if len(found) > 1 else found[0]
            for found in kinds.values()]


def _check_budgets(budgets) -> tuple[int, ...]:
    out = []
    for b in budgets:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise InputError(f"budget {b!r}: expected whole numbers of labels per group >= 1, e.g. 25,50,100,200")
        out.append(int(b))
    return tuple(sorted(set(out)))


class _Table:
    """The table as integer codes: groups, systems, (group, system) items, segments, and the items
    that can be evaluated (at least one label and one finite score)."""

    def __init__(self, table: EvalTable):
        data, human = table.frame, table.human
        self.x = table.scores()
        self.h = table.human_values()
        self.n_rows = len(data)
        if not np.isfinite(self.h).any():
            raise InputError(f"human column {human!r} has no values: the evaluation needs human scores")
        groups = table.groups
        self.g, self.group_names = groups.codes, groups.labels()
        # the fits see group names, so their warnings name the groups as the user does (not by code)
        self.g_label = np.asarray(self.group_names, dtype=object)[self.g]
        systems = table.systems
        self.s, self.sys_names = systems.codes, np.array(systems.labels(), dtype=object)
        # the same, as categoricals in code order for the fold fits (LGN's and the anchored ones): grouped by their
        # codes, not by hashing (and converting) every row's name in each fit; the codes are the ones hashing gives
        self.g_fit = pd.Categorical.from_codes(self.g, categories=pd.Index(self.group_names, dtype=object))
        self.s_fit = pd.Series(pd.Categorical.from_codes(self.s, categories=np.arange(len(self.sys_names))))
        cells = group_index([self.g, self.s], names=["group", "system"])
        self.cell = cells.codes
        self.seg = group_index([data["seg_id"]], names=["seg_id"], allow_missing=True).codes \
            if "seg_id" in data.columns else None
        self.labelled = np.isfinite(self.h) & np.isfinite(self.x)
        finite = np.isfinite(self.x)
        n_cells = cells.n_groups
        n_x = np.bincount(self.cell[finite], minlength=n_cells)
        n_h = np.bincount(self.cell[np.isfinite(self.h)], minlength=n_cells)
        usable = (n_x > 0) & (n_h > 0)
        self.item_of_cell = np.where(usable, np.cumsum(usable) - 1, -1)
        self.items = np.flatnonzero(usable)
        self.n_items = len(self.items)
        self.item_group = np.array([k[0] for k in cells.keys], dtype=np.intp)[self.items]
        self.item_system = np.array([k[1] for k in cells.keys], dtype=np.intp)[self.items]
        hsum = np.bincount(self.cell[np.isfinite(self.h)], self.h[np.isfinite(self.h)], minlength=n_cells)
        self.truth = (hsum / np.maximum(n_h, 1))[self.items]
        self.raw_items = self.item_means(np.where(finite, self.x, np.nan))
        self.n_x, self.n_h = n_x[self.items], n_h[self.items]
        if len(np.unique(self.item_group)) < 2:
            raise InputError("the evaluation compares systems across groups; fewer than two groups have systems with "
                             "human scores")

    def item_means(self, values: np.ndarray) -> np.ndarray:
        """Per evaluated item, the mean of the finite ``values`` of its rows."""
        ok = np.isfinite(values) & (self.item_of_cell[self.cell] >= 0)
        item = self.item_of_cell[self.cell[ok]]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.bincount(item, values[ok], minlength=self.n_items) / np.bincount(item, minlength=self.n_items)

    def item_frame(self, runs) -> pd.DataFrame:
        return pd.DataFrame({"group": np.asarray(self.group_names, dtype=object)[self.item_group],
                             "system": self.sys_names[self.item_system], "n_rows": self.n_x, "n_labels": self.n_h,
                             "human": self.truth, "raw": runs["raw"][0], "lgn": runs["lgn"][0],
                             "anchored": runs["anchored"][0]})


def score_direction(data: Any, score: str | None, given: bool | None) -> bool:
    """The metric's direction by the one rule (:func:`xleval.metrics.higher_is_better`): ``given``, else
    what the table's signature of ``score`` states (``dir:lower`` for MetricX), else the registry name
    (``ter``), else higher is better."""
    from ..metrics._direction import higher_is_better

    column = score or (data.score_column if isinstance(data, EvalTable) else None)
    signature = data.signature(column) if isinstance(data, EvalTable) and column else None
    frame = data.frame if isinstance(data, EvalTable) else data
    values = frame[column] if isinstance(frame, pd.DataFrame) and column in frame.columns else None
    return higher_is_better(column, signature, given=given, values=values)


def _direction(t: _Table, given: bool | None, score_up: bool, human: str) -> tuple[int, str, list[str]]:
    """+1 when higher human scores are better, -1 otherwise: given (or fixed by the scale's name), else found
    in the labels by the rule `calibrate fit` uses (the sign of the better determined slope of an anchored fit
    on every label, where |z| reaches t(0.975, clusters - 1)), else the human column's own name where it is a
    scale's (``mqm``, ``esa``, ``da``, ...; source ``name``). Labels that do not settle it, under another name, are
    refused (E122), as the fit refuses them: every accuracy of the comparison reads the human scale's direction, and
    the sign of a correlation of a few labels per system turned it in a quarter of the draws of issue 33."""
    if given is not None:
        return (1 if given else -1), "given", [f"human scale: {'higher' if given else 'lower'} is better (given)"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the folds' fits report what matters
            model = build_anchored("g", "score", human, score_higher_is_better=score_up).fit(
                t.x, groups=t.g_label, human=t.h, systems=t.s)
    except InputError as exc:
        if exc.argument == "human_higher_is_better":
            raise
        # no slope at all (the score does not vary within any group's labels): the fits fall back to offsets,
        # and no order within a group depends on the direction
        return 1, "none", [f"human scale: its direction is not read from the labels ({exc}); higher is taken as "
                           "better; say it with human_higher_is_better=True or human_higher_is_better=False"]
    zs = [abs(float(v)) for v in model.slopes_["z"]]  # type: ignore[attr-defined]
    up, z = model.higher_is_better_, max((v for v in zs if np.isfinite(v)), default=float("nan"))
    source = model.direction_source_
    found = {"name": f"taken by the name of the human column {human!r}, as the labels do not settle it",
             "shape": "taken from the labels' lean, which their shape (the end of the range they pile up at) "
                      "agrees with, as their slopes do not settle it"}.get(source, "found in the labels")
    note = (f"human scale: {'higher' if up else 'lower'} is better, {found} (the better determined slope of the "
            f"score, |z| = {z:.2f}); say it with human_higher_is_better=True or human_higher_is_better=False")
    return (1 if up else -1), source, [note]


def _folds(t: _Table, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold of every row: systems split by name across groups."""
    order = rng.permutation(len(t.sys_names))
    fold_of_system = np.empty(len(t.sys_names), dtype=np.intp)
    fold_of_system[order] = np.arange(len(order)) % n_folds
    return fold_of_system[t.s]


def _run_fold(t, fold, k, runs, r, draws, human_up, score_up, seed) -> None:
    train, test = fold != k, fold == k
    test_items = np.unique(t.item_of_cell[t.cell[test]])
    test_items = test_items[test_items >= 0]
    if not len(test_items):
        return
    finite_train = train & np.isfinite(t.x)
    lgn = build_lgn("g", "x", **PLAIN_LGN)
    lgn.fit(pd.DataFrame({"g": t.g_fit[finite_train], "x": t.x[finite_train]}))
    lgn_out = np.asarray(lgn.transform(pd.DataFrame({"g": t.g_fit[test], "x": t.x[test]}))).reshape(-1)
    _store(t, runs["lgn"], r, test, lgn_out, test_items)

    def anchored(h_train: np.ndarray) -> np.ndarray:
        model = build_anchored("g", "score", "human", human_higher_is_better=human_up, score_higher_is_better=score_up)
        model.fit(t.x, groups=t.g_fit, human=h_train, systems=t.s_fit, strict=False)  # a small draw may give no slope
        return np.asarray(model.transform(t.x[test], groups=t.g_fit[test], systems=t.s_fit[test])).reshape(-1)

    pool = t.labelled & train
    _store(t, runs["anchored"], r, test, anchored(np.where(pool, t.h, np.nan)), test_items)
    for budget, selection in draws:
        stream = np.random.default_rng([seed, r, k, budget, SELECTIONS.index(selection) + 1])
        rows = select_rows(t.x, t.g, budget, systems=t.s, segments=t.seg, eligible=pool, method=selection,
                           random_state=stream)
        h_k = np.full(len(t.h), np.nan)
        h_k[rows] = t.h[rows]
        _store(t, runs[f"anchored@{budget} {selection}"], r, test, anchored(h_k), test_items)


def _store(t, target, r, test_mask, values, test_items) -> None:
    full = np.full(len(t.x), np.nan)
    full[test_mask] = values
    target[r, test_items] = t.item_means(full)[test_items]


def _score(t, runs, names, direction, score_up, level, n_resamples, rng, seed, alternative) -> dict[str, VariantScore]:
    human = direction * t.truth
    metric_sign = 1 if score_up else -1
    counts = stratified_resample_counts(t.item_group, n_resamples, rng)
    iu, ju = pair_indices(t.item_group, "cross")
    denom = resampled_pair_sums(np.ones(len(iu)), counts, iu, ju)[:, 0]
    points, dists, pearson, pdists, per_run = {}, {}, {}, {}, {}
    for name in names:
        sign = metric_sign if name in ("raw", "lgn") else direction
        values = sign * runs[name]
        accs, corr_rows, rs, r_d = [], [], [], []
        for row in values:
            ok = np.isfinite(row)
            if ok.sum() < t.n_items:
                raise InputError(f"{name}: {t.n_items - int(ok.sum())} system(s) got no calibrated score; check for "
                                 "systems whose rows all lack a finite score")
            point = pairwise_accuracy(row, human, groups=t.item_group, pairs="cross")
            accs.append(point.estimate)
            corr_rows.append(pairs_correct(row, human, iu, ju, point.epsilon))
            rs.append(float(np.corrcoef(row, human)[0, 1]))
            r_d.append(resampled_pearson(row, human, counts))
        with np.errstate(invalid="ignore", divide="ignore"):
            dists[name] = (resampled_pair_sums(np.array(corr_rows), counts, iu, ju) / denom[:, None]).mean(axis=1)
        points[name], pearson[name], pdists[name] = float(np.mean(accs)), float(np.mean(rs)), np.mean(r_d, axis=0)
        per_run[name] = accs
    out = {}
    for name in names:
        budget, selection = _parse(name)
        acc = _estimate(points[name], dists[name], level, t.n_items, "mean over repeats; CI: systems "
                        "resampled within groups (percentile), epsilon fixed per repeat", n_resamples, seed)
        r = _estimate(pearson[name], pdists[name], level, t.n_items, "pooled system-level Pearson, mean over "
                      "repeats; CI: systems resampled within groups", n_resamples, seed)
        def versus(other: str, this: str = name) -> Estimate:
            return _estimate(points[this] - points[other], dists[this] - dists[other], level, t.n_items,
                             "paired difference", n_resamples, seed)

        minus_raw = None if name == "raw" else versus("raw")
        minus_lgn = None if name in ("raw", "lgn") else versus("lgn")
        method = "raw" if name == "raw" else ("lgn" if name == "lgn" else "anchored")
        test = None
        if alternative is not None and name != "raw":
            test = _test_vs_raw(t, runs, name, human, metric_sign, direction, alternative, n_resamples, seed)
        out[name] = VariantScore(name, method, budget, selection, acc, r, minus_raw, minus_lgn,
                                 tuple(float(a) for a in per_run[name]), test)
    return out


def _test_vs_raw(t, runs, name, human, metric_sign, direction, alternative, n_resamples, seed) -> TestResult:
    """PERM-BOTH of cross-group accuracy, ``name`` against raw, on system scores averaged over repeats."""
    sign = metric_sign if name == "lgn" else direction
    result = compare_pairwise_accuracy(metric_sign * runs["raw"].mean(axis=0), sign * runs[name].mean(axis=0), human,
                                       groups=t.item_group, pairs="cross", alternative=alternative,
                                       resampling=Resampling(n_resamples=n_resamples, random_state=seed))
    return replace(result, notes=result.notes + ("system scores: out-of-fold, averaged over the repeats",))


def _parse(name: str) -> tuple[int | None, str | None]:
    if "@" not in name:
        return None, None
    k, selection = name.split("@", 1)[1].split(" ", 1)
    return int(k), selection


def _estimate(point, dist, level, n, method, n_resamples, seed) -> Estimate:
    """The one "distribution -> estimate with CI" (percentile, at ``level``), with the evaluation's
    description of the procedure as the method."""
    est = estimate_from_distribution(point, dist, n=int(n), level=level, random_state=seed)
    return replace(est, method=method, n_resamples=int(n_resamples))


def _selection_gain(scores, budgets, selections, level) -> dict[int, Estimate]:
    if not {"spread", "random"} <= set(selections):
        return {}
    out = {}
    for k in budgets:
        diff = np.array(scores[f"anchored@{k} spread"].runs) - np.array(scores[f"anchored@{k} random"].runs)
        n = len(diff)
        mean = float(diff.mean())
        if n > 1:
            half = ss.t.ppf(0.5 + level / 2, n - 1) * diff.std(ddof=1) / math.sqrt(n)
            low, high = mean - half, mean + half
        else:
            low = high = math.nan
        out[k] = Estimate(mean, float(low), float(high), level, n, "spread minus random over paired repeats (same "
                          "fold split); t interval over repeats", distribution=diff)
    return out
