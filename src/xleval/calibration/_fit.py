"""How xleval builds its calibrators for a table: one builder each, so their settings are written once.

Every LGN is built by :func:`build_lgn` and every anchored calibrator by :func:`build_anchored`;
:func:`fit_method` fits the one asked for. Two LGN settings exist, both named here:

* the **fit** settings (``calibrate fit``): ``min_count`` by the table's level
  (:func:`lgn_min_count`), the default fallback chain (languages, then pooled);
* the **plain** settings (:data:`PLAIN_LGN`, the leaderboard and ``calibrate evaluate``): a per-group
  z-score with no shrinkage and the pooled parameters for a group without spread, the map whose
  out-of-fold accuracy ``calibrate evaluate`` measures and the leaderboard quotes.

Choosing between them (``method="auto"``) is model selection, one floor up:
:func:`xleval.decision.fit_calibration`.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._base.grouping import group_index
from ..exceptions import DataQualityWarning, InputError
from ._anchored import AnchoredCalibrator
from ._levels import ON_UNSEEN
from ._lgn import LGN
from ._protocol import Calibrator
from ._table_level import ROW_MIN_COUNT, lgn_min_count

__all__ = ["build_lgn", "build_anchored", "choose_min_count", "fit_method", "PLAIN_LGN", "FIT_METHODS",
           "LGN_STATISTICS", "UNSEEN_CHOICES", "default_method", "OFFSET_ESTIMATORS", "offset_estimator"]

#: what fit_calibration fits: lgn, anchored, or auto (the decision flow chooses one of the two)
FIT_METHODS = ("lgn", "anchored", "auto")
#: LGN's statistics (``LGN(method=...)``); ``calibrate fit --method`` accepts them as LGN with that statistic
LGN_STATISTICS = ("zscore", "robust", "quantile")
#: what a calibrator may do with groups unseen in fit when it is applied (``on_unseen=``; anchored: not raw)
UNSEEN_CHOICES = tuple(str(t.value) for t in ON_UNSEEN)
#: the anchored calibrator's offset estimators by name (``calibrate fit --offsets``, ``fit_calibration(offsets=)``):
#: ``(prior, shrinkage)`` of :class:`AnchoredCalibrator`. ``mixed``: the default, pulled toward a centre mixing
#: LGN's equal levels and the common offset as far as the labels support (3 groups or more); ``common``: toward the
#: common offset only, Morris's share (none with 3 groups or fewer; format 3); ``common-eb``: full empirical Bayes
#: toward the common offset (the bet that the metric orders the groups right; format 2); ``own``: each group's own
#: labels' mean residual (docs/calibration.md, "Offsets from all the evidence")
OFFSET_ESTIMATORS = {"mixed": ("mixed", "auto"), "common": ("common", "auto"), "common-eb": ("common", "eb"),
                     "own": ("mixed", "none")}


def offset_estimator(name: str) -> tuple[str, str]:
    """``(prior, shrinkage)`` of the offset estimator called ``name`` (:data:`OFFSET_ESTIMATORS`); refused when
    unknown."""
    if name not in OFFSET_ESTIMATORS:
        raise InputError(f"offsets={name!r}: use one of {', '.join(OFFSET_ESTIMATORS)}", argument="offsets",
                         value=name)
    return OFFSET_ESTIMATORS[name]
#: LGN as the leaderboard and ``calibrate evaluate`` fit it: plain per-group z-score, no shrinkage
PLAIN_LGN: Mapping[str, Any] = MappingProxyType({"min_count": 1, "fallback": ("pooled",)})


def default_method(method: str | None, human: str | None) -> str:
    """``method``, or the default: ``auto`` when a human column is named (the evidence favours anchoring
    to human scores where they cover every group), else ``lgn``."""
    return method or ("auto" if human is not None else "lgn")


def build_lgn(by: str | Sequence[str], score: str, *, statistic: str = "zscore",
              target: tuple[float, float] = (0.0, 1.0), min_count: int = ROW_MIN_COUNT,
              fallback: str | Sequence[str] = "default", decay: float | None = None,
              window: int | None = None) -> LGN:
    """The one way LGN is built for a table: ``by`` (one column or several), the score column, the
    statistic (``zscore``, ``robust``, ``quantile``), target scale, shrinkage threshold, fallback chain, and for
    online updates (``LGN.partial_fit``, ``xleval calibrate update``) the ``decay`` of older batches or the
    ``window`` of batches kept."""
    by_cols = [by] if isinstance(by, str) else list(by)
    chain = fallback if isinstance(fallback, str) else list(fallback)
    return LGN(by=by_cols[0] if len(by_cols) == 1 else by_cols, method=statistic, target=target,
               min_count=min_count, fallback=chain, score=score, decay=decay, window=window)


def build_anchored(by: str | Sequence[str], score: str, human: str, *, system: str | None = "system",
                   human_higher_is_better: bool | None = None, score_higher_is_better: bool = True,
                   fallback: str = "pooled", human_range: tuple[float, float] | None = None,
                   offsets: str = "mixed") -> AnchoredCalibrator:
    """The one way the anchored calibrator is built for a table (defaults: offsets by the mixed prior, the
    between-system slope shrunk toward the within-system one, the direction of the human scale from the labels,
    unseen groups get the common offset, no declared bounds of the human scale). ``offsets``: a name of
    :data:`OFFSET_ESTIMATORS`."""
    prior, shrinkage = offset_estimator(offsets)
    by_cols = [by] if isinstance(by, str) else list(by)
    return AnchoredCalibrator(by=by_cols[0] if len(by_cols) == 1 else by_cols, score=score, human=human,
                              system=system, human_higher_is_better=human_higher_is_better,
                              score_higher_is_better=score_higher_is_better, fallback=fallback,
                              human_range=human_range, prior=prior, shrinkage=shrinkage)


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


def fit_method(frame: pd.DataFrame, method: str, score: str, by_cols: list[str], *, human: str | None = None,
               system: str | None = "system", signature: str | None = None,
               settings: Mapping[str, Any] = MappingProxyType({})) -> tuple[Calibrator, int | None, str]:
    """Fit ``method`` (``lgn`` or ``anchored``) on ``frame``: the calibrator, LGN's ``min_count`` and why
    (None and "" for anchored). ``settings``: LGN's ``statistic``, ``target``, ``min_count``, ``fallback``,
    ``decay``, ``window``;
    the anchored calibrator's ``human_higher_is_better``, ``score_higher_is_better``, ``fallback``,
    ``human_range``, ``strict``, ``offsets`` (as :func:`xleval.decision.fit_calibration` documents them)."""
    chosen, sig = method, signature
    statistic, target = settings.get("statistic", "zscore"), settings.get("target", (0.0, 1.0))
    min_count, fallback = settings.get("min_count"), settings.get("fallback", "default")
    if chosen == "lgn":
        count, why = choose_min_count(frame, by_cols, system, min_count)
        model: Calibrator = build_lgn(by_cols, score, statistic=statistic, target=target, min_count=count,
                                      fallback=fallback, decay=settings.get("decay"),
                                      window=settings.get("window")).fit(frame, signature=sig)
        return model, count, why
    chain = [fallback] if isinstance(fallback, str) else list(fallback)
    if chain not in (["default"], ["pooled"], ["error"]):
        raise InputError(f"fallback={fallback!r}: anchored calibration gives unseen groups the common offset "
                         "(pooled) or refuses them (error)", argument="fallback", value=fallback)
    if human is None:
        raise InputError("anchored calibration needs the human column: give human=", argument="human")
    model = build_anchored(by_cols, score, human, system=system,
                           human_higher_is_better=settings.get("human_higher_is_better"),
                           score_higher_is_better=bool(settings.get("score_higher_is_better", True)),
                           fallback="error" if chain == ["error"] else "pooled",
                           human_range=settings.get("human_range"),
                           offsets=settings.get("offsets") or "mixed").fit(frame, signature=sig,
                                                                           strict=bool(settings.get("strict", False)))
    return model, None, ""
