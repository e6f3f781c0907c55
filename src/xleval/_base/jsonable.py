"""The one conversion of xleval objects to plain JSON values (used by results, reports and the CLI)."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """Plain JSON values: ``None``, ``bool``, ``int``, ``float`` (finite), ``str``, lists and dicts.

    NaN/inf and pandas' missing markers become ``None``; numpy scalars and arrays become Python
    numbers and lists; objects with ``to_dict()`` (result objects, DataFrames as row records,
    Series as ``{index: value}``) are converted through it; enums give their value, paths and
    dates their text; anything else its ``str``. Mapping keys become strings.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, (os.PathLike, _dt.date, _dt.datetime)):
        return os.fspath(value) if isinstance(value, os.PathLike) else value.isoformat()
    if _is_missing(value):
        return None
    if hasattr(value, "columns") and hasattr(value, "to_dict"):  # a DataFrame: its rows as records
        return to_jsonable(value.to_dict(orient="records"))
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return to_jsonable(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "tolist"):  # pandas/pyarrow arrays and scalars
        return to_jsonable(value.tolist())
    return str(value)


def _is_missing(value: Any) -> bool:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a core dependency
        return False
    return value is pd.NA or value is pd.NaT
