"""The calibration for this table: fit LGN or the anchored calibrator, or let the decision choose
(``method="auto"``), as scikit-learn's model selection fits the estimator it chose.

Every place that fits a calibrator for a table (``xleval calibrate fit``, the leaderboard, the report)
calls :func:`fit_calibration`. ``method="auto"`` fits what the one decision chose
(:func:`~xleval.decision.decide_calibration`: the cross-validated comparison of raw, LGN and anchored at
the labels in the table, or the rule-based flow where it cannot be measured) -- exactly that: where the
raw scores win, the better calibration by the same rule is fitted and a warning says so.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .._base.result import Result
from ..calibration import FIT_METHODS, default_method, direction_for, fit_method, offset_estimator
from ..calibration._scales import bounded_by_name
from ..exceptions import DataQualityWarning, InputError, PooledPairsWarning, first_repeats, warn_again
from ..metrics._direction import higher_is_better
from ..table import EvalTable, as_table, pooled_pairs_note, scored_groups
from ._decide import CalibrationDecision, decide_calibration
from ._evidence import gather_evidence

__all__ = ["fit_calibration", "FittedCalibration", "FIT_SETTINGS"]

#: what a fit may be told beyond the table's roles: LGN's settings, then the anchored calibrator's
LGN_SETTINGS = ("statistic", "target", "min_count", "fallback", "decay", "window")
ANCHORED_SETTINGS = ("human_higher_is_better", "score_higher_is_better", "fallback", "human_range", "strict",
                     "offsets")
FIT_SETTINGS = tuple(dict.fromkeys(LGN_SETTINGS + ANCHORED_SETTINGS))


@dataclass(frozen=True, eq=False)
class FittedCalibration(Result):
    """A fitted calibrator and how it was chosen. ``model``: the calibrator (a :class:`Calibrator`);
    ``method``: ``lgn`` or ``anchored`` (what was fitted); ``requested``: the method asked for
    (``auto`` included); ``decision``: the :class:`~xleval.decision.CalibrationDecision`
    (``auto`` only); ``min_count``/``min_count_reason``: LGN's shrinkage threshold and why (None for
    anchored); ``notes``: the warnings raised while fitting, in order."""

    model: Any
    method: str
    requested: str
    decision: Any = None
    min_count: int | None = None
    min_count_reason: str = ""
    notes: tuple[str, ...] = field(default=())


def fit_calibration(data: EvalTable | pd.DataFrame, method: str | None = None, *, score: str | None = None,
                    by: Any = None, human: str | None = None, system: str | None = "system",
                    signature: str | None = None, decision: CalibrationDecision | None = None, commands: Any = None,
                    human_scale: str | None = None, **settings: Any) -> FittedCalibration:
    """Fit the calibration for this table.

    ``data``: an EvalTable or a DataFrame; ``score``, ``by``, ``human``, ``system`` name its columns
    (given here, or the table's roles; ``by`` defaults to :data:`~xleval.table.DEFAULT_BY`, ``lp`` if the
    table has it or its two codes, else ``tgt_lang``; ``system`` may be absent from the table, None says there is none:
    it sets LGN's ``min_count`` by the table's level and the anchored calibrator's between-system slope).
    ``method``: ``lgn``, ``anchored`` or ``auto``; None is ``auto`` when a human column is named, else
    ``lgn``. ``auto`` fits what the one decision chooses (:func:`~xleval.decision.decide_calibration`;
    pass ``decision`` when it was already made, ``commands`` to name the table in its advice).
    ``human_scale``: the name of the human scale (``mqm``, ``esa``, ``da``, ``z``, ``raw``, ...;
    :data:`~xleval.calibration.SCALE_NAMES`; None: the table's ``HUMAN_scale`` column, if any): it fixes the
    direction of the human scale for anchored calibration, as ``calibrate fit --human-scale`` does (labels that
    point the other way are then a warning, not a refusal), and tells ``auto`` whether the column is
    standardised within groups.
    ``signature``: the score's metric signature (default: the table's).

    ``settings`` (keywords): for LGN ``statistic``, ``target``, ``fallback``, ``min_count`` (None: by
    the table's level, :func:`~xleval.calibration.choose_min_count`), and ``decay`` or ``window`` for online
    updates (``LGN.partial_fit``: older batches weighed down by ``decay``, or only the last ``window`` kept);
    for anchored
    ``human_higher_is_better``, ``human_range`` (bounds of the human scale; ``auto`` that chooses LGN does
    not use it), ``strict`` (default False: labels that do not settle the direction of the human scale give
    offsets only, with a warning kept in ``notes``; True refuses them, as ``calibrate fit`` does),
    ``fallback`` ``"default"``/``"pooled"`` (unseen groups get the common offset) or ``"error"``; ``offsets``
    (:data:`~xleval.calibration.OFFSET_ESTIMATORS`: ``mixed``, the default, ``common``, ``common-eb`` or ``own``; with
    ``auto`` it is what the written anchored calibrator uses, the comparison behind the decision uses the default);
    ``score_higher_is_better`` (None: the one rule, :func:`xleval.metrics.higher_is_better`).
    Warnings raised while fitting are re-raised after it and kept in ``notes``."""
    if isinstance(data, EvalTable):
        system = data.system_role(system)
    table = as_table(data, score=score, by=by, human=human, default_by=_default_by())
    if not table.score:
        raise InputError("no score column: give score=", argument="score")
    frame, score_col, human, by_cols = table.frame, table.score_column, table.human, list(table.by)
    sig = signature if signature is not None else table.signature(score_col)
    method = default_method(method, human)
    _check_method_settings(method, human, settings)
    # a group with no score is no group to compare: the decision and an anchored fit leave it out (said once, in the
    # notes); an LGN fit keeps it, with its rows counted as non-finite, as the streamed fit (`--chunk-size`) does
    with warnings.catch_warnings(record=True) as left_out:
        warnings.simplefilter("always")
        scored = scored_groups(table) if method != "lgn" else table
    settings = dict(settings)
    if method != "lgn" and human is not None and settings.get("human_higher_is_better") is None:
        # a named scale says its direction (docs/calibration.md, "A named scale says its direction"), as on the CLI
        settings["human_higher_is_better"] = direction_for(frame, human, human_scale)
    bounded = None
    if method != "lgn" and human is not None and settings.get("human_range") is None:
        named, bounded, _ = bounded_by_name(frame, human, human_scale)  # a named scale's bounds, as on the CLI
        if named is not None:
            settings["human_range"] = named
    settings["score_higher_is_better"] = higher_is_better(
        score_col, sig, given=settings.get("score_higher_is_better"),
        values=frame[score_col] if score_col in frame.columns else None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pooled = pooled_pairs_note(frame, by_cols, system)  # tgt_lang over several pairs: one offset, two test sets
        if pooled is not None:
            warnings.warn(pooled, PooledPairsWarning, stacklevel=2)
        chosen = method
        if method != "auto" or decision is not None:  # the decision reads them once, and says so, where it runs
            table.scores()  # repeated keys whose scores differ: each row is fitted as a segment of its own
        if method == "auto":
            if decision is None:
                roles = scored.with_roles(system=system if system in frame.columns else None) \
                    if system != scored.system else scored
                decision = _auto_decision(roles, human_scale, commands, settings)
            chosen = decision.calibrator
            if decision.method == "none":
                warnings.warn(f"the raw scores order cross-group pairs as well as any calibration here "
                              f"({decision.reason}); fitted {chosen}, as a calibrator was asked for",
                              DataQualityWarning, stacklevel=2)
        else:
            decision = None
        model, count, why = fit_method(frame if chosen == "lgn" else scored.frame, chosen, score_col, by_cols,
                                       human=human, system=system,
                                       signature=sig, settings=settings)
    said = left_out if method == "auto" or chosen != "lgn" else []  # what read the scored groups only
    caught = first_repeats([*said, *caught])  # the decision and the fit read the same columns
    notes = tuple(str(w.message) for w in caught)
    notes += (bounded,) if bounded is not None and getattr(model, "kind", None) == "anchored" else ()
    warn_again(caught)  # the caller's filters decide what to show (the CLI records them)
    return FittedCalibration(model, chosen, method, decision, count, why, notes)


def _check_method_settings(method: str, human: str | None, settings: dict[str, Any]) -> None:
    """One clear error for an unknown setting, or a method that is unknown, lacks what it needs, or is given the
    other method's options."""
    unknown = sorted(set(settings) - set(FIT_SETTINGS))
    if unknown:
        raise InputError(f"fit_calibration got unknown setting(s) {', '.join(unknown)}: use "
                         f"{', '.join(FIT_SETTINGS)}", argument=unknown[0])
    if method not in FIT_METHODS:
        raise InputError(f"method={method!r}: use one of {', '.join(FIT_METHODS)}", argument="method", value=method)
    if method == "anchored" and human is None:
        raise InputError("method='anchored' maps the scores onto a human scale: name the human column with human= "
                         "(rows without a human score are fine), or use method='lgn'", argument="human", value=None)
    statistic, target = settings.get("statistic", "zscore"), settings.get("target", (0.0, 1.0))
    lgn_only = [name for name, given in (("statistic", statistic != "zscore"), ("target", tuple(target) != (0, 1)),
                                         ("min_count", settings.get("min_count") is not None),
                                         ("decay", settings.get("decay") is not None),
                                         ("window", settings.get("window") is not None)) if given]
    offsets = settings.get("offsets")
    if offsets is not None:
        offset_estimator(offsets)  # an unknown name is refused before anything is fitted
    if method == "lgn" and offsets is not None:
        raise InputError("offsets= chooses how anchored calibration estimates each group's offset; LGN has none: "
                         "leave it out, or use method='anchored'", argument="offsets", value=settings.get("offsets"))
    if method == "lgn" and settings.get("human_range") is not None:
        raise InputError("human_range= bounds the human scale of anchored calibration; LGN has no human scale: "
                         "leave it out, or use method='anchored'", argument="human_range",
                         value=settings.get("human_range"))
    if method == "anchored" and lgn_only:
        raise InputError(f"{'= and '.join(lgn_only)}= "
                         f"{'is an LGN option' if len(lgn_only) == 1 else 'are LGN options'}; "
                         "anchored calibration puts the scores on the human scale of human=: leave them out, or use "
                         "method='lgn'", argument=lgn_only[0])


def _auto_decision(roles: EvalTable, human_scale: str | None, commands: Any,
                   settings: dict[str, Any]) -> CalibrationDecision:
    """The one decision for ``method="auto"``, from the table's evidence."""
    evidence = gather_evidence(roles, human_scale=human_scale,
                               human_higher_is_better=settings.get("human_higher_is_better"))
    return decide_calibration(roles, evidence=evidence, commands=commands,
                              score_higher_is_better=settings["score_higher_is_better"])


def _default_by() -> Any:
    from ..table import DEFAULT_BY

    return DEFAULT_BY
