"""The verification LGN calls for: per-group mean/std before and after calibration,
and the standard deviation of the group means before and after (it should drop to ~0)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._base.grouping import group_index
from .._base.result import Result

__all__ = ["CalibrationSummary", "calibration_summary"]


@dataclass(frozen=True, eq=False)
class CalibrationSummary(Result):
    """Per-group table (n, n_nonfinite, mean/std before and after) and the spread of group means;
    ``to_dict()`` gives the table as row records."""

    groups: pd.DataFrame
    sd_of_means_before: float
    sd_of_means_after: float
    mean_of_means_before: float
    mean_of_means_after: float
    n_rows: int
    n_nonfinite: int


def calibration_summary(raw, calibrated, groups) -> CalibrationSummary:
    """Compare raw and calibrated scores per group. The sd of group means uses ddof=1 like
    pandas' ``Series.std()``; per-group std is the population std (ddof=0), the
    one LGN's z-score divides by, so a calibrated calibration set shows exactly the target std."""
    raw = np.asarray(raw, dtype=np.float64)
    calibrated = np.asarray(calibrated, dtype=np.float64)
    # one label per group from the one group index: tuples of values, never joined text
    columns = groups if isinstance(groups, pd.DataFrame) else pd.DataFrame({"group": pd.Series(groups)})
    key = group_index(columns.reset_index(drop=True), allow_missing=True).row_labels()
    frame = pd.DataFrame({"group": key, "raw": raw, "cal": calibrated})
    finite = np.isfinite(frame["raw"]) & np.isfinite(frame["cal"])
    g = frame[finite].groupby("group", sort=True)
    table = pd.DataFrame({
        "n": g["raw"].size(),
        "mean_before": g["raw"].mean(), "std_before": g["raw"].std(ddof=0),
        "mean_after": g["cal"].mean(), "std_after": g["cal"].std(ddof=0),
    })
    table.insert(1, "n_nonfinite", frame[~finite].groupby("group").size().reindex(table.index, fill_value=0))
    table = table.reset_index()
    sd = lambda s: float(s.std(ddof=1)) if len(s) > 1 else float("nan")  # noqa: E731
    return CalibrationSummary(table, sd(table["mean_before"]), sd(table["mean_after"]),
                              float(table["mean_before"].mean()), float(table["mean_after"].mean()),
                              len(frame), int((~finite).sum()))
