"""Resource elasticity: how performance grows with (log) training-data size across languages.

``performance = a + b ln(size)`` by ordinary least squares (scipy.stats.linregress), or
``ln(performance) = a + b ln(size)`` with ``log_performance=True`` (then b is a true
elasticity: % change of performance per % change of data). The slope's CI is the t interval
``b +- t_{n-2} se(b)``. A LARGER slope means MORE gain per doubling of data (``b ln 2`` points);
the reading "a smaller coefficient means more sensitive", sometimes seen, is backwards.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import scipy.stats as ss

from xleval.exceptions import DataQualityWarning, InputError
from xleval.fairness._results import Elasticity, _multiplier

__all__ = ["resource_elasticity", "data_multiplier"]

MIN_LANGUAGES = 5  # below this a slope across languages is anecdote, not a fit
POOR_R2 = 0.5


def resource_elasticity(performance: Sequence[float], sizes: Sequence[float], languages: Sequence[str] | None = None,
                        *, log_performance: bool = False, target_gain: float | None = None,
                        level: float = 0.95) -> Elasticity:
    """Fit performance on ln(data size) across languages (one value per language).

    ``target_gain``: additive gain in metric units (log model: a factor > 0, e.g. 1.2 for +20 %)
    for which the data multiplier ``exp(gain / b)`` is reported. Warns (DataQualityWarning) with
    fewer than 5 languages and when the fit is poor (R^2 < 0.5 or slope CI containing 0).
    """
    y = np.asarray(performance, dtype=float)
    x_raw = np.asarray(sizes, dtype=float)
    names = tuple(str(n) for n in (languages if languages is not None else range(len(y))))
    _check_inputs(y, x_raw, names, log_performance, target_gain, level)
    x = np.log(x_raw)
    y_fit = np.log(y) if log_performance else y
    fit = ss.linregress(x, y_fit)
    df = len(y) - 2
    half = float(ss.t.ppf(0.5 + level / 2, df) * fit.stderr) if df > 0 else float("nan")
    low, high = fit.slope - half, fit.slope + half
    notes = _quality_notes(len(y), fit.rvalue**2, low, high)
    mult = mult_low = mult_high = None
    if target_gain is not None:
        mult = _multiplier(target_gain, fit.slope, log_performance)
        mult_low, mult_high = _multiplier_ci(target_gain, low, high, log_performance)
    return Elasticity(
        slope=float(fit.slope), slope_ci_low=float(low), slope_ci_high=float(high), intercept=float(fit.intercept),
        r_squared=float(fit.rvalue**2), p_value=float(fit.pvalue), n_languages=len(y), level=level,
        log_performance=log_performance, size_log_base="e",
        gain_per_doubling=float(2**fit.slope if log_performance else fit.slope * math.log(2)),
        languages=names, target_gain=target_gain, multiplier=mult, multiplier_ci_low=mult_low,
        multiplier_ci_high=mult_high, notes=tuple(notes),
    )


def _check_inputs(y: np.ndarray, x: np.ndarray, names: tuple, log_performance: bool, target_gain, level) -> None:
    if y.ndim != 1 or y.shape != x.shape or len(names) != len(y):
        raise InputError(f"performance, sizes and languages need one value per language; got {y.shape}, {x.shape}, "
                         f"{len(names)}")
    if len(y) < 3:
        raise InputError(f"resource elasticity needs at least 3 languages with a data size; got {len(y)}")
    if not np.isfinite(x).all() or (x <= 0).any():
        bad = names[int(np.flatnonzero(~np.isfinite(x) | (x <= 0))[0])]
        raise InputError(f"data size of language {bad!r} is not a positive number; sizes are logged, "
                         "give tokens/bytes > 0")
    if not np.isfinite(y).all():
        raise InputError("performance has NaN/inf values; give one finite value per language")
    if log_performance and (y <= 0).any():
        raise InputError("log_performance=True needs positive performance values; use the linear model")
    if np.ptp(x) == 0:
        raise InputError("every language has the same data size; a slope on data size is undefined")
    if target_gain is not None and log_performance and not target_gain > 0:
        raise InputError("with log_performance the target gain is a factor > 0 (e.g. 1.2 for +20%); "
                         f"got {target_gain!r}")
    if not 0 < level < 1:
        raise InputError(f"level must be strictly between 0 and 1; got {level!r}")


def _quality_notes(n: int, r2: float, low: float, high: float) -> list[str]:
    notes = []
    if n < MIN_LANGUAGES:
        notes.append(f"unreliable: only {n} languages (< {MIN_LANGUAGES}); the slope is anecdotal")
    if not r2 >= POOR_R2:
        notes.append(f"poor fit: R^2 = {r2:.2f} < {POOR_R2}; data size explains little of the gap")
    if low <= 0 <= high:
        notes.append("the slope's CI contains 0: no detectable relation to data size; multipliers are not meaningful")
    if notes:  # one warning per fit, listing every problem
        warnings.warn("resource elasticity: " + "; ".join(notes), DataQualityWarning, stacklevel=3)
    return notes


def _multiplier_ci(gain: float, low: float, high: float, log_performance: bool) -> tuple[float, float]:
    if not (math.isfinite(low) and math.isfinite(high)):
        return float("nan"), float("nan")
    if low <= 0 <= high:
        return _multiplier(gain, high, log_performance) if high > 0 else float("nan"), float("inf")
    a, b = _multiplier(gain, low, log_performance), _multiplier(gain, high, log_performance)
    return min(a, b), max(a, b)


def data_multiplier(gain: float, slope: float, *, log_performance: bool = False) -> float:
    """Factor by which the data must grow to gain ``gain`` under slope ``b``: ``exp(gain / b)``.

    Units must match: a slope in points per ln-unit needs the gain in points. A worked example
    sometimes quoted (amharic 31 -> 60 with b = 2.3) mixes them: ``exp(0.29 / 2.3) = 1.13`` treats the gain as a
    fraction and the slope as points; in points it is ``exp(29 / 2.3)``, about 3 x 10^5.
    """
    if not math.isfinite(slope) or slope == 0:
        raise InputError(f"slope must be a finite non-zero number; got {slope!r}")
    return _multiplier(gain, slope, log_performance)
