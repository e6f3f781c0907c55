"""pandas facts the rest of xleval asks about (imported only where pandas is already loaded)."""
from __future__ import annotations

import pandas as pd

__all__ = ["copy_on_write"]


def copy_on_write() -> bool:
    """Whether pandas copies on write (always from pandas 3), so that a shallow copy behaves as a copy."""
    return int(pd.__version__.split(".")[0]) >= 3 or bool(pd.get_option("mode.copy_on_write"))
