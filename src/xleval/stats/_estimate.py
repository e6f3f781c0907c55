"""A resampled distribution -> an :class:`Estimate` with its confidence interval: the one place that
turns resamples into an interval, a standard error and the notes a reader must see.

Every procedure that resamples (the bootstrap engine, eta squared, the fairness gaps, the agreement
comparisons) ends here, so an interval means the same thing wherever it is reported: the
``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the finite resampled values (numpy's
default, linear interpolation), BCa-adjusted when asked; resamples where the statistic is
undefined are left out and counted in ``notes`` ("unreliable" beyond 10%).
"""
from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from xleval._base.seeding import resolve_seed
from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._results import Estimate

__all__ = ["estimate_from_distribution", "METHODS"]

METHODS = ("percentile", "bca")


def estimate_from_distribution(
    point: float,
    distribution: Any,
    *,
    n: int,
    level: float = 0.95,
    method: str = "percentile",
    label: str = "bootstrap",
    random_state: int | None = None,
    notes: Sequence[str] = (),
    jackknife: Callable[[], Any] | Any = None,
) -> Estimate:
    """The :class:`Estimate` of ``point`` with the ``level`` interval of its resampled ``distribution``.

    ``n``: the sample size behind ``point``; ``method``: ``percentile`` or ``bca`` (bias-corrected and
    accelerated, Efron & Tibshirani 1993, as ``scipy.stats.bootstrap``; needs ``jackknife``, the
    leave-one-unit-out values of the statistic or a function returning them, called only for BCa);
    ``label`` names the procedure (the result's ``method`` is ``"<label>-<method>"``);
    ``random_state``: the seed the resamples were drawn with, recorded as given; ``notes`` come first
    in the result's notes, then what this function finds (undefined resamples, a degenerate
    distribution, an undefined BCa acceleration). NaN/inf resamples are left out of the interval and
    the standard error (NaN bounds when none is finite). The distribution is kept on the result.
    """
    level = v.check_level(level)
    v.check_choice(method, "method", METHODS)
    if method == "bca" and jackknife is None:
        raise InputError("method='bca' needs jackknife= (the leave-one-out values of the statistic)",
                         argument="jackknife")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InputError(f"n must be a non-negative integer (the sample size); got {n!r}", argument="n", value=n)
    if isinstance(random_state, np.random.Generator):
        raise InputError("random_state here records the seed the resamples were drawn with: an integer or None",
                         argument="random_state")
    seed = None if random_state is None else resolve_seed(random_state)  # the one check of a seed
    dist = v.as_float_array(distribution, "distribution", allow_nan=True)
    found = list(notes)
    low, high = _interval(dist, float(point), level, method, jackknife, found)
    finite = dist[np.isfinite(dist)]
    se = float(np.std(finite, ddof=1)) if finite.size > 1 else float("nan")
    return Estimate(
        estimate=float(point), ci_low=low, ci_high=high, level=level, n=int(n), method=f"{label}-{method}",
        standard_error=se, n_resamples=int(dist.size), random_state=seed, notes=tuple(found),
        distribution=dist,
    )


def _interval(dist: np.ndarray, estimate: float, level: float, method: str, jackknife: Any,
              notes: list[str]) -> tuple[float, float]:
    finite = dist[np.isfinite(dist)]
    if finite.size < dist.size:
        notes.append(f"{dist.size - finite.size} of {dist.size} resamples gave an undefined statistic and were left "
                     "out")
        if finite.size < 0.9 * dist.size:
            notes.append("unreliable: more than 10% of resamples undefined")
    if finite.size == 0:
        return float("nan"), float("nan")
    alpha = (1.0 - level) / 2.0
    probs = np.array([alpha, 1.0 - alpha])
    if np.ptp(finite) == 0:
        notes.append("bootstrap distribution is degenerate (every resample gave the same value)")
        return float(finite[0]), float(finite[0])
    if method == "bca":
        jack = np.asarray(jackknife() if callable(jackknife) else jackknife, dtype=float).reshape(-1)
        adjusted = _bca_probs(finite, estimate, probs, jack)
        if adjusted is None:
            notes.append("BCa acceleration undefined (constant jackknife values); used the percentile interval")
        else:
            probs = adjusted
    low, high = np.quantile(finite, probs)
    return float(low), float(high)


def _bca_probs(dist: np.ndarray, estimate: float, probs: np.ndarray, jack: np.ndarray) -> np.ndarray | None:
    # Efron & Tibshirani (1993) 14.3 / 15.4; the same conventions as scipy.stats.bootstrap.
    # Values within ~100 ulp of the estimate count as ties, so that summation order (sums path
    # vs direct mean) cannot flip the bias correction; otherwise identical to scipy.
    gamma = abs(estimate) * np.finfo(float).eps * 100
    below = np.count_nonzero(dist < estimate - gamma)
    percentile = (below + below + np.count_nonzero(np.abs(dist - estimate) <= gamma)) / (2 * dist.size)
    z0 = ndtri(percentile)
    u = (len(jack) - 1) * (jack.mean() - jack)
    den = np.sum(u**2) / len(jack) ** 2
    if not np.isfinite(z0) or den == 0 or not np.isfinite(den):
        return None
    a_hat = (np.sum(u**3) / len(jack) ** 3) / (6.0 * den**1.5)
    z = ndtri(probs)
    return ndtr(z0 + (z0 + z) / (1 - a_hat * (z0 + z)))
