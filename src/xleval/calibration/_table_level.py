"""What a table's rows are (segments or system scores), and LGN's shrinkage default for it.

LGN shrinks a group with fewer than ``min_count`` rows toward the well-estimated groups. That is
right for a segment table where a few languages have few rows. In a table of system scores (one
row per group and system) every group has 5-30 rows: with the row default of 50 every group was
shrunk toward the others, which is neither LGN nor the raw metric (WMT21 system chrF against DA z:
0.665 instead of 0.698; against raw DA 0.700 instead of 0.573; docs/wmt21-study.md), with only
a one-line warning. So the default depends on the level: 50 for segment rows, no shrinkage (1)
for a table of system scores, or for any table in which no group reaches 50 rows (there is no
well-estimated group to shrink toward).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._base.grouping import group_index

__all__ = ["table_level", "lgn_min_count", "ROW_MIN_COUNT"]

ROW_MIN_COUNT = 50


def table_level(data: pd.DataFrame, by: str | Sequence[str], system: str | None = "system") -> str:
    """``system`` when every (group, system) has exactly one row, ``segment`` when some have more,
    ``rows`` without a system column."""
    by_cols = [by] if isinstance(by, str) else list(by)
    if system is None or system not in data.columns:
        return "rows"
    cells = group_index(data[list(dict.fromkeys([*by_cols, system]))], where="table", allow_missing=True)
    return "system" if cells.counts().max() <= 1 else "segment"


def lgn_min_count(data: pd.DataFrame, by: str | Sequence[str], system: str | None = "system") -> tuple[int, str]:
    """LGN's ``min_count`` for this table and the reason, in one line."""
    by_cols = [by] if isinstance(by, str) else list(by)
    level = table_level(data, by_cols, system)
    sizes = group_index(data[by_cols], where="table").counts()
    if level == "system":
        return 1, (f"a table of system scores (one row per group and system, {int(sizes.min())}-{int(sizes.max())} per "
                   "group): LGN estimates each group from its systems, no shrinkage (min_count 1)")
    if sizes.max() < ROW_MIN_COUNT:
        return 1, (f"no group reaches {ROW_MIN_COUNT} rows (largest {int(np.max(sizes))}): nothing well estimated to "
                   "shrink toward, no shrinkage (min_count 1)")
    return ROW_MIN_COUNT, (f"{level} rows: groups with fewer than {ROW_MIN_COUNT} rows are shrunk toward the "
                           "well-estimated ones")
