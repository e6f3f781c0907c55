"""The calibration a leaderboard applies: one map per group, fitted on the table's segments (as
:func:`xleval.decision.evaluate_calibration` fits the maps whose out-of-fold accuracy the report
quotes) or loaded from a file (``xleval calibrate fit``).

A map reaches a system in one of two ways (``SystemCalibration.level``):

* ``segment``: every row is calibrated and a system's calibrated score is the mean of its calibrated
  rows (LGN, whose calibrated means move with the segment scores), bootstrapped with the same draws
  as its raw score;
* ``system-mean``: the map of the system's mean segment score (anchored calibration with a system
  column: ``a_g + B * m_s`` with the between-system slope ``B``, which equals the mean of the
  system's calibrated rows), applied to the mean and to every bootstrap resample of it, so an
  interval carries the slope that maps system means.

Either way the map itself is held fixed in the intervals. ``none`` leaves the raw scores.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._base.grouping import key_labels
from ..calibration import PLAIN_LGN, Calibrator
from ..decision import fit_calibration as fit_table_calibration
from ..exceptions import (
    InputError,
    ModelFileError,
    PooledPairsWarning,
    ScaleRangeWarning,
    SignatureMismatchError,
    XlevalWarning,
    repeated_column,
)

__all__ = ["SystemCalibration", "system_calibration", "model_calibration", "check_model_score", "METHODS",
           "LGN_SETTINGS"]

METHODS = ("auto", "anchored", "lgn", "none")
# plain per-group z-score, as evaluate_calibration fits it (the library's one definition)
LGN_SETTINGS: dict[str, Any] = dict(PLAIN_LGN)
_LANGUAGE_COLUMNS = ("tgt_lang", "lp", "src_lang")  # LGN's fallback chain reads them


@dataclass(frozen=True)
class SystemCalibration:
    """A fitted per-group map. ``method``: ``anchored``, ``lgn``, ``none`` or ``model`` (a saved
    calibrator); ``scale``: what the calibrated numbers mean; ``model``: the calibrator (None for
    ``none``); ``level``: ``segment`` or ``system-mean`` (module docstring); ``score_column``: the
    score column the calibrator reads; ``keys``: for ``system-mean``, per group label the values of
    the columns the calibrator groups by."""

    method: str
    description: str
    scale: str
    model: Any = None
    keys: pd.DataFrame | None = None
    score_column: str = "score"
    notes: tuple[str, ...] = field(default=())
    level: str = "segment"

    def apply_rows(self, frame: pd.DataFrame, score: str) -> np.ndarray:
        """Every row's ``score`` mapped by its own group (the signature was checked when the calibration
        was made)."""
        x = pd.to_numeric(frame[score], errors="coerce").to_numpy(dtype=float)
        if self.model is None:
            return x.copy()
        columns = [c for c in self._model_columns() if c in frame.columns]
        return np.asarray(self.model.transform(frame[columns].assign(**{self.score_column: x}), force=True),
                          dtype=float)

    def apply_means(self, means: np.ndarray, group: str) -> np.ndarray:
        """``means`` (any shape) of systems of ``group`` mapped as system means (``system-mean`` level):
        each value is given as a system of its own, so the map is ``a_g + B * mean``."""
        means = np.asarray(means, dtype=float)
        if self.model is None:
            return means.copy()
        if self.keys is None:
            raise ValueError("a system-mean calibration needs the group keys it was fitted with")
        flat = means.reshape(-1)
        row = self.keys.loc[[group]]
        frame = pd.DataFrame({c: np.repeat(row[c].to_numpy(), len(flat)) for c in self.keys.columns})
        frame[self.score_column] = flat
        frame[self.model.system] = [f"_{i}" for i in range(len(flat))]
        return np.asarray(self.model.transform(frame, force=True), dtype=float).reshape(means.shape)

    @property
    def is_anchored(self) -> bool:
        """An anchored map with its fitted uncertainty (offsets, slopes, their variances): the leaderboard
        then gives intervals for the human cell means (a format-1 file has no variances)."""
        return getattr(self.model, "kind", None) == "anchored" and hasattr(self.model, "slopes_")

    def higher_is_better(self, score_higher_is_better: bool) -> bool:
        """Whether a higher calibrated score is better: an anchored map's human scale as fitted (MQM error
        points: lower), else the score's own direction (LGN's z-scores and raw scores keep it; a format-1
        anchored file records no direction)."""
        fitted = getattr(self.model, "higher_is_better_", None) if self.is_anchored else None
        return bool(score_higher_is_better) if fitted is None else bool(fitted)

    def model_group(self, group: str) -> str:
        """The calibrator's group label (a key of its ``groups_``) of leaderboard group ``group``."""
        if self.keys is None or self.model is None:
            return group
        by = list(getattr(self.model, "by_", self.keys.columns))
        row = self.keys.loc[group]
        label = key_labels([tuple(str(row[c]) for c in by if c in row.index)])[0]
        fitted = getattr(self.model, "fitted_labels", None)  # a saved model may spell the languages otherwise
        return fitted([label])[0] if fitted is not None else label

    def _model_columns(self) -> list[str]:
        system = getattr(self.model, "system", None)
        return list(dict.fromkeys(self.model.group_columns() + ([system] if system else []) + list(_LANGUAGE_COLUMNS)))


def system_calibration(method: str, frame: pd.DataFrame, score: str, by: str, *, human: str | None = None,
                    system: str | None = None, human_higher_is_better: bool | None = None,
                    human_range: tuple[float, float] | None = None,
                    score_higher_is_better: bool = True, human_scale: str | None = None) -> SystemCalibration:
    """Fit ``method`` (``lgn``, ``anchored``, ``none``) on the segments of ``frame`` grouped by ``by``
    (``score_higher_is_better``: the metric's direction, for the anchored map). ``human_scale``: the name of the
    human scale; a named scale (other than ``raw``) is not guessed from its labels, so the map's own guess of a
    range from the labels (a :class:`~xleval.exceptions.ScaleRangeWarning`: MQM error points in 0-25 read as raw
    DA's 0-100) is not said; the board's one check against the named scale
    (:func:`xleval.calibration._scales.past_the_scale`) says what runs past it."""
    if method == "none":
        return SystemCalibration("none", "no calibration: the raw system scores", "raw", score_column=score)
    has_system = system is not None and system in frame.columns
    rows = frame.loc[np.isfinite(pd.to_numeric(frame[score], errors="coerce").to_numpy(dtype=float))]
    if method == "lgn" and (not has_system or rows.groupby(by, observed=True)[system].nunique().max() < 2):
        return SystemCalibration("none", "no calibration: LGN needs at least two systems in a group (each group here "
                                 "has one)", "raw", score_column=score,
                                 notes=("LGN was not applied: every group has a single system, and LGN would give "
                                        "them all the same score",))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "lgn":
            model = fit_table_calibration(rows, "lgn", score=score, by=by, system=system if has_system else None,
                                          **PLAIN_LGN).model
            result = SystemCalibration("lgn", "LGN: per-group z-score of the segment scores; a system's calibrated "
                                       "score is the mean of its calibrated segments", "sd of the group's segments",
                                       model, score_column=score)
        elif method == "anchored":
            if human is None or not np.isfinite(pd.to_numeric(rows[human], errors="coerce")).any():
                raise InputError("anchored calibration needs human scores: give human= (a column with human scores) "
                                 "or use method='lgn'", argument="human", value=human)
            model = fit_table_calibration(rows, "anchored", score=score, by=by, human=human,
                                          system=system if has_system else None,
                                          human_higher_is_better=human_higher_is_better,
                                          score_higher_is_better=score_higher_is_better,
                                          human_range=human_range).model
            result = SystemCalibration("anchored", "anchored calibration: per-group offset and common slopes from the "
                                       "metric to the human scale, fitted on the labelled segments"
                                       + ("; a system's score maps with the between-system slope"
                                          if has_system else ""),
                                       "human scale", model, _keys(rows, [by]) if has_system else None, score,
                                       level="system-mean" if has_system else "segment")
        else:
            raise InputError(f"calibration method {method!r}: use one of {', '.join(METHODS)}")
    # repeated keys are the board's to say: its system scores read the same score and human columns first, naming
    # the input; so are groups that hold several pairs (the board says it for every method, raw scores too)
    named = human_scale is not None and human_scale != "raw"
    notes = tuple(sorted({f"{w.category.__name__}: {w.message}" for w in caught if repeated_column(w) is None
                          and not issubclass(w.category, PooledPairsWarning)
                          and not (named and issubclass(w.category, ScaleRangeWarning))}))
    return SystemCalibration(result.method, result.description, result.scale, result.model, result.keys,
                             result.score_column, notes, result.level)


def _keys(frame: pd.DataFrame, by: list[str], label: str | None = None) -> pd.DataFrame | None:
    """Per leaderboard group (the ``label`` column, default the single ``by``), the values of the
    calibrator's group columns (and language columns); None when they vary within a group."""
    label = label or by[0]
    labels = frame[label].astype(str).to_numpy()
    keys = frame[by].astype(str).assign(_label=labels).drop_duplicates()
    if keys["_label"].duplicated().any():
        return None
    keys = keys.set_index("_label")[by]
    # language columns ride along where each group has one value (LGN's fallback chain reads them);
    # a group spanning several (e.g. grouped by the system column) does without them
    for c in _LANGUAGE_COLUMNS:
        if c in frame.columns and c not in by:
            values = frame[c].astype(str).groupby(labels).agg(["nunique", "first"])
            if (values["nunique"] == 1).all():
                keys[c] = values["first"].reindex(keys.index).to_numpy()
    return keys


def check_model_score(model: Any, score: str | None) -> None:
    """The one rule for a saved calibrator and the score column it is asked to calibrate (the leaderboard's
    and the report's): a calibrator fitted on another column is refused, whatever the signatures say
    (its "after" would be that other column calibrated, or another metric's map applied to this one)."""
    fitted = getattr(model, "score", None)
    if score is not None and fitted is not None and fitted != score:
        raise InputError(f"the calibrator was fitted on column {fitted!r}, not on {score!r}: its \"after\" "
                         f"would be {fitted!r} calibrated; pass score={fitted!r}, or fit a calibrator "
                         f"on {score!r}", argument="score", value=score)


def model_calibration(model: Any, frame: pd.DataFrame, by: str, *, signature: str | None = None,
                      force: bool = False, score: str | None = None, where: str | None = None) -> SystemCalibration:
    """A saved calibrator (any :class:`~xleval.calibration.Calibrator`) applied to the table (grouped by
    ``by`` for the leaderboard) whose score column is ``score`` (:func:`check_model_score`; None: the
    calibrator's own). The metric signature is checked here, once per combination of the columns the
    calibrator groups by; a mismatch names the table ``where``."""
    if not isinstance(model, Calibrator):
        raise ModelFileError(f"not a calibrator ({type(model).__name__})")
    check_model_score(model, score)
    model_by = model.group_columns()
    missing = [c for c in model_by if c not in frame.columns]
    if missing:
        raise InputError(f"the calibrator groups by {', '.join(missing)}, which the table lacks; "
                         "use a calibrator fitted on columns of this table")
    kind = "anchored calibrator" if model.kind == "anchored" else "LGN"  # named in the description, never a class
    system = getattr(model, "system", None)
    keys = _keys(frame, model_by, by) if system and system in frame.columns else None
    level = "system-mean" if keys is not None else "segment"
    how = ("a system's score maps with the between-system slope" if level == "system-mean" else
           "a system's calibrated score is the mean of its calibrated segments")
    calibration = SystemCalibration("model", f"saved {kind} (by {'+'.join(model_by)}); {how}", _model_scale(model),
                                    model, keys, model.score, (), level)
    probe = frame.drop_duplicates(model_by)
    columns = [c for c in calibration._model_columns() if c in probe.columns]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XlevalWarning)  # unseen groups are reported when the rows are calibrated
        try:
            model.transform(probe[columns].assign(**{model.score: 0.0}), signature=signature, force=force)
        except SignatureMismatchError as exc:
            if where is None:
                raise
            raise SignatureMismatchError(f"{where}: {exc}") from None
    return calibration


def _model_scale(model: Any) -> str:
    if model.kind == "anchored":
        return "human scale"
    mean, sd = (float(v) for v in model.target)  # LGN's target scale
    return f"target mean {mean:g}, sd {sd:g}"
