"""Permutation tests: paired (sign-flip / swap within item) and two-sample (label shuffling).

Vectorised over resamples; exact (complete enumeration) when the number of distinct
rearrangements is at most ``n_resamples``; randomised p-values use the +1 correction
``(1 + #{T* as extreme as T}) / (1 + B)`` so they are never 0 (Phipson & Smyth 2010).
Conventions (two-sided p = 2 * min(one-sided p), floating tolerance) follow
``scipy.stats.permutation_test``, which the tests use as the oracle.
"""
from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from xleval.exceptions import InputError
from xleval.stats import _validate as v
from xleval.stats._results import TestResult

__all__ = ["permutation_test_paired", "permutation_test_2samp"]

ALTERNATIVES = ("two-sided", "greater", "less")
_CHUNK_ELEMENTS = 10_000_000


def permutation_test_paired(
    a: Any,
    b: Any,
    statistic: str | Callable[..., Any] = "mean",
    *,
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    random_state: Any = None,
) -> TestResult:
    """Paired permutation test of H0: within each item, the labels of ``a`` and ``b`` are exchangeable.

    ``statistic="mean"`` tests the mean difference ``mean(a - b)`` by sign flips. A callable
    ``statistic(a, b) -> float`` (e.g. the pairwise accuracy of metric ``a`` minus that of metric
    ``b`` against the same human scores) is recomputed with ``a[i]`` and ``b[i]`` swapped for a
    random subset of items; give it an ``axis`` parameter to receive (B, n) arrays at once.
    Exact when ``2**n <= n_resamples``.
    """
    a_arr, b_arr = v.as_float_array(a, "a"), v.as_float_array(b, "b")
    v.check_same_length("a", a_arr, "b", b_arr)
    v.check_min_size(a_arr, 1, "a")
    alternative, n_resamples = _check(alternative, n_resamples)
    n = len(a_arr)
    func, vectorized = _statistic(statistic, lambda x, y, axis: np.mean(x - y, axis=axis))
    observed = _scalar(func(a_arr, b_arr, axis=0) if vectorized else func(a_arr, b_arr))
    exact = 2**n <= n_resamples if n < 63 else False
    rng, seed = (None, None) if exact else v.make_rng(random_state)

    def swaps() -> Iterator[np.ndarray]:
        if exact:
            codes = np.arange(2**n)[:, None]
            yield ((codes >> np.arange(n)) & 1).astype(bool)
            return
        assert rng is not None  # made whenever the test is not exact
        step = max(1, _CHUNK_ELEMENTS // n)
        for start in range(0, n_resamples, step):
            yield rng.random((min(step, n_resamples - start), n)) < 0.5

    null = np.concatenate([_apply(func, vectorized, np.where(m, b_arr, a_arr), np.where(m, a_arr, b_arr))
                           for m in swaps()])
    method = "permutation-paired-" + ("sign-flip" if statistic == "mean" else "swap")
    return _result(observed, null, exact, alternative, n, method, seed)


def permutation_test_2samp(
    x: Any,
    y: Any,
    statistic: str | Callable[..., Any] = "mean",
    *,
    alternative: str = "two-sided",
    n_resamples: int = 9999,
    random_state: Any = None,
) -> TestResult:
    """Two-sample permutation test of H0: ``x`` and ``y`` come from the same distribution.

    ``statistic="mean"`` is ``mean(x) - mean(y)``; a callable ``statistic(x, y)`` may take an
    ``axis`` parameter to be vectorised. Exact when ``comb(n_x + n_y, n_x) <= n_resamples``.
    """
    x_arr, y_arr = v.as_float_array(x, "x"), v.as_float_array(y, "y")
    v.check_min_size(x_arr, 1, "x")
    v.check_min_size(y_arr, 1, "y")
    alternative, n_resamples = _check(alternative, n_resamples)
    nx, n = len(x_arr), len(x_arr) + len(y_arr)
    pooled = np.concatenate([x_arr, y_arr])
    func, vectorized = _statistic(statistic, lambda p, q, axis: np.mean(p, axis=axis) - np.mean(q, axis=axis))
    observed = _scalar(func(x_arr, y_arr, axis=0) if vectorized else func(x_arr, y_arr))
    exact = math.comb(n, nx) <= n_resamples
    rng, seed = (None, None) if exact else v.make_rng(random_state)

    def orders() -> Iterator[np.ndarray]:
        if exact:
            for chunk in _batched(itertools.combinations(range(n), nx), max(1, _CHUNK_ELEMENTS // n)):
                first = np.array(chunk, dtype=np.intp)
                rest = np.ones((len(first), n), dtype=bool)
                np.put_along_axis(rest, first, False, axis=1)
                yield np.hstack([first, np.nonzero(rest)[1].reshape(len(first), n - nx)])
            return
        assert rng is not None  # made whenever the test is not exact
        step = max(1, _CHUNK_ELEMENTS // n)
        for start in range(0, n_resamples, step):
            yield rng.permuted(np.tile(np.arange(n), (min(step, n_resamples - start), 1)), axis=1)

    null = np.concatenate([_apply(func, vectorized, pooled[o[:, :nx]], pooled[o[:, nx:]]) for o in orders()])
    return _result(observed, null, exact, alternative, n, "permutation-two-sample", seed)


# ----------------------------------------------------------------------------- helpers
def _check(alternative: str, n_resamples: int) -> tuple[str, int]:
    return v.check_choice(alternative, "alternative", ALTERNATIVES), v.check_n_resamples(n_resamples)


def _statistic(statistic: Any, mean_version: Callable[..., Any]) -> tuple[Callable[..., Any], bool]:
    if isinstance(statistic, str):
        v.check_choice(statistic, "statistic", ("mean",))
        return mean_version, True
    if not callable(statistic):
        raise InputError(f"statistic must be 'mean' or a callable of two arrays; got {statistic!r}")
    try:
        vectorized = "axis" in inspect.signature(statistic).parameters
    except (TypeError, ValueError):
        vectorized = False
    return statistic, vectorized


def _scalar(value: Any) -> float:
    return float(np.asarray(value, dtype=float))


def _apply(func: Callable[..., Any], vectorized: bool, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    if vectorized:
        return np.asarray(func(first, second, axis=1), dtype=float).reshape(-1)
    return np.array([func(p, q) for p, q in zip(first, second, strict=True)], dtype=float)


def _batched(iterable: Any, size: int) -> Iterator[list[Any]]:
    it = iter(iterable)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def _result(observed: float, null: np.ndarray, exact: bool, alternative: str, n: int, method: str,
            seed: int | None) -> TestResult:
    # Same tolerance as scipy: values within ~100 ulp of the observed one count as "as extreme".
    gamma = abs(np.finfo(float).eps * 100 * observed)
    adjust = 0 if exact else 1
    p_greater = (np.count_nonzero(null >= observed - gamma) + adjust) / (null.size + adjust)
    p_less = (np.count_nonzero(null <= observed + gamma) + adjust) / (null.size + adjust)
    p = {"greater": p_greater, "less": p_less, "two-sided": min(1.0, 2 * min(p_greater, p_less))}[alternative]
    notes = () if exact else (f"randomised: {null.size} rearrangements, p-value with the +1 correction",)
    return TestResult(
        statistic=observed, p_value=float(p), n=n, method=method, alternative=alternative, exact=exact,
        n_resamples=int(null.size), random_state=seed, notes=notes, null_distribution=null,
    )
