"""Input checks at the public boundary of xleval.stats (internal helpers trust their callers)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.grouping import group_index
from xleval._base.seeding import make_rng
from xleval.exceptions import InputError

__all__ = ["as_float_array", "check_same_length", "check_min_size", "check_probability", "check_level",
           "check_n_resamples", "check_choice", "group_codes", "make_rng", "MAX_RESAMPLES"]

_MAX_LISTED = 5


def as_float_array(x: Any, name: str, *, ndim: int | tuple[int, ...] = 1, allow_nan: bool = False) -> np.ndarray:
    """``x`` as a float64 array of the given dimensionality, or an InputError naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric; could not convert it to numbers ({exc})") from None
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if arr.ndim not in dims:
        raise InputError(f"{name} must be a {' or '.join(f'{d}-D' for d in dims)} array; got shape {arr.shape}")
    if not allow_nan:
        bad = ~np.isfinite(arr)
        if bad.any():
            rows = np.unique(np.nonzero(bad)[0])
            listed = ", ".join(str(r) for r in rows[:_MAX_LISTED]) + (", ..." if rows.size > _MAX_LISTED else "")
            raise InputError(
                f"{name} has {int(bad.sum())} NaN/inf value(s) (rows {listed}); "
                "drop or impute them before computing statistics"
            )
    return arr


def check_same_length(name_a: str, a: np.ndarray, name_b: str, b: Any) -> None:
    if len(a) != len(b):
        raise InputError(f"{name_a} and {name_b} must have the same length; got {len(a)} and {len(b)}")


def check_min_size(arr: np.ndarray, minimum: int, name: str) -> None:
    if len(arr) < minimum:
        raise InputError(f"{name} needs at least {minimum} values; got {len(arr)}")


def check_probability(value: float, name: str) -> float:
    """A number strictly between 0 and 1 (alpha, power, a baseline accuracy)."""
    if not isinstance(value, numbers.Real) or not 0.0 < float(value) < 1.0:
        raise InputError(f"{name} must be strictly between 0 and 1; got {value!r}")
    return float(value)


def check_level(level: float) -> float:
    if not isinstance(level, numbers.Real) or not 0.0 < float(level) < 1.0:
        raise InputError(f"level must be a confidence level strictly between 0 and 1 (e.g. 0.95); got {level!r}")
    return float(level)


#: every resample's statistic is kept (the distribution is part of the result), once per statistic and
#: group: a bound keeps a mistyped count (1e9) from asking for tens of GiB; 1000-10000 give stable intervals
MAX_RESAMPLES = 100_000


def check_n_resamples(n_resamples: int, *, minimum: int = 1) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or int(n_resamples) < minimum:
        raise InputError(f"n_resamples must be an integer >= {minimum}; got {n_resamples!r}")
    if int(n_resamples) > MAX_RESAMPLES:
        raise InputError(f"n_resamples must be at most {MAX_RESAMPLES} (every resample is kept in memory; 1000-10000 "
                         f"give stable intervals); got {int(n_resamples)}")
    return int(n_resamples)


def check_choice(value: str, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def group_codes(groups: Any, n: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..G-1 for a label array of length ``n``, and the unique labels in sorted order
    (in order of first appearance when the labels do not sort): the one group index
    (:func:`xleval._base.grouping.group_index`) of an array given to a statistic."""
    labels = np.asarray(groups)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise InputError(f"{name} must be a 1-D array with one label per row ({n}); got shape {labels.shape}",
                         argument=name)
    try:
        index = group_index([pd.Series(labels, dtype=object if labels.dtype == object else None)], names=[name],
                            where=name)
    except InputError:
        missing = pd.isna(pd.Series(labels, dtype=object)).to_numpy()
        raise InputError(f"{name} has {int(missing.sum())} missing label(s); give every row a group",
                         argument=name) from None
    keys = [k[0] for k in index.keys]
    try:
        order = sorted(range(len(keys)), key=keys.__getitem__)
    except TypeError:  # labels of kinds that do not compare (1 and "1"): first appearance
        order = list(range(len(keys)))
    rank = np.empty(len(keys), dtype=np.intp)
    rank[order] = np.arange(len(keys))
    uniques = np.empty(len(keys), dtype=labels.dtype if labels.dtype != object else object)
    uniques[:] = [keys[i] for i in order] if labels.dtype == object else np.asarray([keys[i] for i in order])
    return rank[index.codes], uniques
