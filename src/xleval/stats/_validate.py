"""Input checks at the public boundary of xleval.stats (internal helpers trust their callers)."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from xleval.exceptions import InputError

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
    """Integer codes 0..G-1 for a label array of length ``n``, and the sorted unique labels."""
    labels = np.asarray(groups)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise InputError(f"{name} must be a 1-D array with one label per row ({n}); got shape {labels.shape}")
    try:
        missing = np.asarray([v is None or (isinstance(v, float) and v != v) for v in labels.tolist()])
    except TypeError:  # pragma: no cover - exotic label types
        missing = np.zeros(n, dtype=bool)
    if missing.any():
        raise InputError(f"{name} has {int(missing.sum())} missing label(s); give every row a group")
    uniques, codes = np.unique(labels, return_inverse=True)
    return codes.astype(np.intp), uniques


def make_rng(random_state: Any) -> tuple[np.random.Generator, int | None]:
    """A Generator and the integer seed to record (drawn fresh when ``random_state`` is None,
    so every result can be reproduced from its own record; None when a Generator is passed)."""
    if isinstance(random_state, np.random.Generator):
        return random_state, None
    if random_state is None:
        random_state = int(np.random.SeedSequence().generate_state(1)[0])
    if not isinstance(random_state, numbers.Integral) or int(random_state) < 0:
        raise InputError("random_state must be a non-negative integer, None or a numpy Generator; "
                         f"got {random_state!r}")
    return np.random.default_rng(int(random_state)), int(random_state)
