"""The calibration for this table: one function that builds and fits LGN or the anchored calibrator,
or lets the decision flow choose (``method="auto"``), with LGN's ``min_count`` policy.

Every place that fits a calibrator for a table (``xleval calibrate fit``, the leaderboard, the report)
calls :func:`fit_calibration`; every LGN is built by :func:`build_lgn` and every anchored calibrator by
:func:`build_anchored`, so their settings are written once. Two LGN settings exist, both named here:

* the **fit** settings (``calibrate fit``): ``min_count`` by the table's level
  (:func:`lgn_min_count`), the default fallback chain (languages, then pooled);
* the **plain** settings (:data:`PLAIN_LGN`, the leaderboard and ``calibrate evaluate``): a per-group
  z-score with no shrinkage and the pooled parameters for a group without spread, the map whose
  out-of-fold accuracy ``calibrate evaluate`` measures and the leaderboard quotes.

``method="auto"`` runs :func:`xleval.diagnostics.decide_calibration` (the cross-validated comparison of
raw, LGN and anchored at the labels in the table, or the rule-based flow where it cannot be measured)
and fits what it chose.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._base.grouping import group_index
from .._base.result import Result
from ..exceptions import DataQualityWarning, InputError
from ..metrics._direction import higher_is_better
from ..table import EvalTable
from ._anchored import AnchoredCalibrator
from ._levels import ON_UNSEEN
from ._lgn import LGN
from ._protocol import Calibrator
from ._table_level import ROW_MIN_COUNT, lgn_min_count

__all__ = ["fit_calibration", "FittedCalibration", "build_lgn", "build_anchored", "choose_min_count",
           "PLAIN_LGN", "FIT_METHODS", "LGN_STATISTICS", "UNSEEN_CHOICES", "default_method"]

#: what fit_calibration fits: lgn, anchored, or auto (the decision flow chooses one of the two)
FIT_METHODS = ("lgn", "anchored", "auto")
#: LGN's statistics (``LGN(method=...)``); ``calibrate fit --method`` accepts them as LGN with that statistic
LGN_STATISTICS = ("zscore", "robust", "quantile")
#: what a calibrator may do with groups unseen in fit when it is applied (``on_unseen=``; anchored: not raw)
UNSEEN_CHOICES = tuple(str(t.value) for t in ON_UNSEEN)
#: LGN as the leaderboard and ``calibrate evaluate`` fit it: plain per-group z-score, no shrinkage
PLAIN_LGN: Mapping[str, Any] = MappingProxyType({"min_count": 1, "fallback": ("pooled",)})


@dataclass(frozen=True, eq=False)
class FittedCalibration(Result):
    """A fitted calibrator and how it was chosen. ``model``: the calibrator (a :class:`Calibrator`);
    ``method``: ``lgn`` or ``anchored`` (what was fitted); ``requested``: the method asked for
    (``auto`` included); ``decision``: the :class:`~xleval.diagnostics.CalibrationDecision`
    (``auto`` only); ``min_count``/``min_count_reason``: LGN's shrinkage threshold and why (None for
    anchored); ``notes``: the warnings raised while fitting, in order."""

    model: Any
    method: str
    requested: str
    decision: Any = None
    min_count: int | None = None
    min_count_reason: str = ""
    notes: tuple[str, ...] = field(default=())


def default_method(method: str | None, human: str | None) -> str:
    """``method``, or the default: ``auto`` when a human column is named (the evidence favours anchoring
    to human scores where they cover every group), else ``lgn``."""
    return method or ("auto" if human is not None else "lgn")


def build_lgn(by: str | Sequence[str], score: str, *, statistic: str = "zscore",
              target: tuple[float, float] = (0.0, 1.0), min_count: int = ROW_MIN_COUNT,
              fallback: str | Sequence[str] = "default") -> LGN:
    """The one way LGN is built for a table: ``by`` (one column or several), the score column, the
    statistic (``zscore``, ``robust``, ``quantile``), target scale, shrinkage threshold, fallback chain."""
    by_cols = [by] if isinstance(by, str) else list(by)
    chain = fallback if isinstance(fallback, str) else list(fallback)
    return LGN(by=by_cols[0] if len(by_cols) == 1 else by_cols, method=statistic, target=target,
               min_count=min_count, fallback=chain, score=score)


def build_anchored(by: str | Sequence[str], score: str, human: str, *, system: str | None = "system",
                   human_higher_is_better: bool | None = None, score_higher_is_better: bool = True,
                   fallback: str = "pooled", human_range: tuple[float, float] | None = None) -> AnchoredCalibrator:
    """The one way the anchored calibrator is built for a table (defaults: offsets shrunk only as far as
    the number of groups supports, the between-system slope shrunk toward the within-system one, the
    direction of the human scale from the labels, unseen groups get the common offset, no declared
    bounds of the human scale)."""
    by_cols = [by] if isinstance(by, str) else list(by)
    return AnchoredCalibrator(by=by_cols[0] if len(by_cols) == 1 else by_cols, score=score, human=human,
                              system=system, human_higher_is_better=human_higher_is_better,
                              score_higher_is_better=score_higher_is_better, fallback=fallback,
                              human_range=human_range)


def choose_min_count(data: pd.DataFrame, by: str | Sequence[str], system: str | None = "system",
                     given: int | None = None) -> tuple[int, str]:
    """LGN's ``min_count`` and why: ``given`` (with a DataQualityWarning when it shrinks every group,
    which is neither LGN nor the raw scores), else by the table's level (:func:`lgn_min_count`)."""
    by_cols = [by] if isinstance(by, str) else list(by)
    if any(c not in data.columns for c in by_cols):  # LGN's fit names the missing column
        return given or ROW_MIN_COUNT, ""
    if given is None:
        chosen, why = lgn_min_count(data, by_cols, system)
        return chosen, f"{chosen}: {why}"
    largest = int(group_index(data[by_cols], where="table", allow_missing=True).counts().max())
    if largest < given:
        warnings.warn(f"min_count={given} shrinks every group toward the others (the largest has {largest} rows): "
                      "the result is neither LGN nor the raw scores; leave min_count= out to choose it by the "
                      "table's level", DataQualityWarning, stacklevel=2)
    return given, f"{given} (given)"


def fit_calibration(data: EvalTable | pd.DataFrame, method: str | None = None, *, score: str | None = None,
                    by: str | Sequence[str] | None = None, human: str | None = None, system: str | None = "system",
                    statistic: str = "zscore", target: tuple[float, float] = (0.0, 1.0),
                    min_count: int | None = None, fallback: str | Sequence[str] = "default",
                    human_higher_is_better: bool | None = None, signature: str | None = None,
                    decision: Any = None, commands: Any = None, human_scale: str | None = None,
                    human_range: tuple[float, float] | None = None, strict: bool = False,
                    score_higher_is_better: bool | None = None) -> FittedCalibration:
    """Fit the calibration for this table.

    ``data``: an EvalTable or a DataFrame; ``score``, ``by``, ``human``, ``system`` name its columns
    (given here, or the table's roles; ``system`` may be absent from the table, None says there is none:
    it sets LGN's ``min_count`` by the table's level and the anchored calibrator's between-system slope).
    ``method``: ``lgn``, ``anchored`` or ``auto``; None is ``auto`` when a human column is named, else
    ``lgn``. ``auto`` fits what the one decision chooses (:func:`xleval.diagnostics.decide_calibration`:
    raw vs LGN vs anchored cross-validated by system folds at the labels in the table; pass ``decision``
    when it was already made, ``commands`` to name the table in its advice, ``human_scale`` ``z`` or
    ``raw`` to say whether the human column is standardised within groups).

    LGN: ``statistic``, ``target``, ``fallback`` and ``min_count`` (None: by the table's level,
    :func:`choose_min_count`). Anchored: ``human_higher_is_better``, ``human_range`` (bounds of the human
    scale; ``auto`` that chooses LGN does not use it), ``strict`` (default False: labels that do not settle
    the direction of the human scale give offsets only, with a warning kept in ``notes``, as the leaderboard
    and the report need, having no direction option; True refuses them, as ``calibrate fit`` does, whose
    error names its direction flags); ``fallback`` ``"default"`` or
    ``"pooled"`` gives unseen groups the common offset, ``"error"`` refuses them. ``signature``: the
    score's metric signature (default: the table's). ``score_higher_is_better``: the metric's direction for
    the anchored map; None reads it from the signature (``dir:lower``: MetricX), else higher is better.
    Warnings raised while fitting are re-raised after it and kept in ``notes``."""
    if isinstance(data, EvalTable):  # its roles, where not given here
        score = score or data.score_column
        by = by or (list(data.by) or None)
        human = human or data.human
        system = data.system_role(system)
        signature = signature if signature is not None else data.signature(score)
    frame = data.frame if isinstance(data, EvalTable) else data
    if score is None:
        raise InputError("no score column: give score=", argument="score")
    score_col = score
    by_cols = ["tgt_lang"] if by is None else ([by] if isinstance(by, str) else list(by))  # the calibrators' default
    method = default_method(method, human)
    if method not in FIT_METHODS:
        raise InputError(f"method={method!r}: use one of {', '.join(FIT_METHODS)}", argument="method", value=method)
    if method == "anchored" and human is None:
        raise InputError("method='anchored' maps the scores onto a human scale: name the human column with human= "
                         "(rows without a human score are fine), or use method='lgn'", argument="human", value=None)
    lgn_only = [name for name, given in (("statistic", statistic != "zscore"), ("target", tuple(target) != (0, 1)),
                                         ("min_count", min_count is not None)) if given]
    if method == "lgn" and human_range is not None:
        raise InputError("human_range= bounds the human scale of anchored calibration; LGN has no human scale: "
                         "leave it out, or use method='anchored'", argument="human_range", value=human_range)
    if method == "anchored" and lgn_only:
        raise InputError(f"{'= and '.join(lgn_only)}= "
                         f"{'is an LGN option' if len(lgn_only) == 1 else 'are LGN options'}; "
                         "anchored calibration puts the scores on the human scale of human=: leave them out, or use "
                         "method='lgn'", argument=lgn_only[0])
    sig = signature
    if score_higher_is_better is None:
        score_higher_is_better = higher_is_better(score_col, sig)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = method
        if method == "auto":
            if decision is None:
                from ..diagnostics import decide_calibration

                decision = decide_calibration(frame, score_col, by_cols[0] if len(by_cols) == 1 else by_cols,
                                              human=human, system=system, commands=commands,
                                              human_scale=human_scale, score_higher_is_better=score_higher_is_better)
            chosen = decision.calibrator
            if decision.method == "none":
                warnings.warn(f"the raw scores order cross-group pairs as well as any calibration here "
                              f"({decision.reason}); fitted {chosen}, as a calibrator was asked for",
                              DataQualityWarning, stacklevel=2)
        else:
            decision = None
        result = _fit(frame, chosen, method, score_col, by_cols, human, system, statistic, target, min_count,
                      fallback, human_higher_is_better, sig, decision, human_range, strict, score_higher_is_better)
    notes = tuple(str(w.message) for w in caught)
    for w in caught:  # the caller's filters decide what to show (the CLI records them)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return FittedCalibration(result.model, result.method, result.requested, result.decision, result.min_count,
                             result.min_count_reason, notes)


def _fit(frame, chosen, requested, score, by_cols, human, system, statistic, target, min_count, fallback,
         human_up, sig, decision, human_range=None, strict=False, score_up=True) -> FittedCalibration:
    if chosen == "lgn":
        count, why = choose_min_count(frame, by_cols, system, min_count)
        model: Calibrator = build_lgn(by_cols, score, statistic=statistic, target=target, min_count=count,
                                      fallback=fallback).fit(frame, signature=sig)
        return FittedCalibration(model, "lgn", requested, decision, count, why)
    chain = [fallback] if isinstance(fallback, str) else list(fallback)
    if chain not in (["default"], ["pooled"], ["error"]):
        raise InputError(f"fallback={fallback!r}: anchored calibration gives unseen groups the common offset "
                         "(pooled) or refuses them (error)", argument="fallback", value=fallback)
    model = build_anchored(by_cols, score, human, system=system, human_higher_is_better=human_up,
                           score_higher_is_better=score_up, fallback="error" if chain == ["error"] else "pooled",
                           human_range=human_range).fit(frame, signature=sig, strict=strict)
    return FittedCalibration(model, "anchored", requested, decision)
