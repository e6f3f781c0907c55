"""Honest evaluation of calibrators: k-fold by system, cross-group pairwise accuracy out of fold.

Systems (by name, across all groups) are split into ``n_folds`` folds; for each fold LGN
(z-score per group) and the AnchoredCalibrator are fitted on the system-level scores of the other
folds and applied to the fold's systems, so no system is scored by a map fitted on itself. The
out-of-fold scores of every system are then compared with the human system scores (cross-group
pairwise accuracy with stratified-bootstrap CIs, paired differences against raw and the
PERM-BOTH test). In-sample figures (maps fitted on all systems) are reported alongside for
reference: they are optimistic.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..calibration import LGN, AnchoredCalibrator
from ..exceptions import InputError
from ..stats import PairwiseAccuracy
from ..stats._validate import make_rng
from ._agreement import Comparison, human_agreement, system_table
from ._common import jsonable

__all__ = ["CalibrationCV", "cross_validate_calibration"]


@dataclass(frozen=True)
class CalibrationCV:
    """Result of :func:`cross_validate_calibration`.

    ``systems``: DataFrame ``group, system, fold, raw, lgn, anchored, lgn_in_sample,
    anchored_in_sample, human``; ``accuracy``: name -> cross-group PairwiseAccuracy with CI for
    ``raw``, ``lgn``, ``anchored`` (out of fold) and ``lgn_in_sample``, ``anchored_in_sample``;
    ``comparisons``: name -> Comparison against ``raw``; ``n_folds``, ``anchored_method``,
    ``min_count``, ``random_state``, ``notes`` (incl. warnings raised while fitting folds).
    """

    score: str
    human: str
    by: str
    systems: pd.DataFrame
    accuracy: dict[str, PairwiseAccuracy]
    comparisons: dict[str, Comparison]
    n_folds: int
    anchored_method: str
    min_count: int
    random_state: int | None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {k: jsonable(getattr(self, k)) for k in self.__dataclass_fields__}


def cross_validate_calibration(data: pd.DataFrame, score: str, human: str, by: str = "lp", *, system: str = "system",
                               n_folds: int = 5, anchored_method: str = "linear", min_count: int = 10,
                               n_resamples: int = 1000, level: float = 0.95, random_state: Any = 0) -> CalibrationCV:
    """Out-of-fold raw vs LGN vs anchored cross-group pairwise accuracy (see the module docstring).

    ``data`` is a long table (segments) or already one row per system; system scores are means.
    ``min_count`` is the AnchoredCalibrator's (systems per group for full credibility); LGN uses
    ``min_count=1`` (no shrinkage) so that it is the plain per-group z-score of system scores.
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InputError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    table = system_table(data, [score, human], by, system)
    table = table[np.isfinite(table[score]) & np.isfinite(table[human])].reset_index(drop=True)
    names = np.array(sorted(table["system"].unique()))
    if len(names) < n_folds:
        raise InputError(f"{len(names)} systems cannot be split into {n_folds} folds; use fewer folds")
    rng, seed = make_rng(random_state)
    fold_of = dict(zip(rng.permutation(names), np.arange(len(names)) % n_folds))
    table["fold"] = table["system"].map(fold_of).astype(int)
    notes: list[str] = []
    frame = table.rename(columns={"group": "_group"})
    lgn, anchored = np.full(len(table), np.nan), np.full(len(table), np.nan)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(n_folds):
            train, test = frame[frame["fold"] != k], frame[frame["fold"] == k]
            lgn[test.index], anchored[test.index] = _fit_apply(train, test, score, human, anchored_method, min_count)
        table["lgn_in_sample"], table["anchored_in_sample"] = _fit_apply(frame, frame, score, human, anchored_method,
                                                                         min_count)
    notes.extend(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
    table["raw"], table["lgn"], table["anchored"] = table[score], lgn, anchored
    columns = ["raw", "lgn", "anchored", "lgn_in_sample", "anchored_in_sample"]
    long = table.rename(columns={human: "human"}) if human != "human" else table
    agreement = human_agreement(long, columns, "human", "group", system="system",
                                compare=[("raw", c) for c in columns[1:]], level=level, n_resamples=n_resamples,
                                random_state=seed)
    accuracy = {c: agreement.scores[c].cross_group_accuracy for c in columns}
    comparisons = {c.b: c for c in agreement.comparisons}
    out = table[["group", "system", "fold", *columns]].assign(human=table[human].to_numpy())
    return CalibrationCV(score, human, by, out, accuracy, comparisons, int(n_folds), anchored_method, min_count, seed,
                         tuple(notes) + agreement.notes)


def _fit_apply(train: pd.DataFrame, test: pd.DataFrame, score: str, human: str, method: str, min_count: int):
    lgn = LGN(by="_group", score=score, min_count=1, fallback=["pooled"]).fit(train)
    anchored = AnchoredCalibrator(by="_group", score=score, human=human, system=None).fit(train)
    return lgn.transform(test), anchored.transform(test)
