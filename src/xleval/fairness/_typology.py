"""Typological bias: does performance follow a language's structure once data size is held fixed?

For each feature (numeric, or categorical turned into one 0/1 indicator per level), the
partial correlation between per-language performance and the feature controlling for
ln(data size) (residualise both on [1, ln size] by OLS, then Pearson; Fisher-z CI and the
t-test with n - 3 df), from :func:`xleval.stats.partial_correlation`. Without a data size the
plain correlation (:func:`xleval.stats.correlation`) is reported.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from xleval.fairness._results import TypologyBias
from xleval.stats import CorrelationResult, correlation, partial_correlation

__all__ = ["typology_bias"]


def typology_bias(performance: Sequence[float], features: Mapping[str, Sequence | np.ndarray],
                  sizes: Sequence[float] | None = None,
                  *, method: str = "pearson", level: float = 0.95) -> tuple[TypologyBias, ...]:
    """One :class:`TypologyBias` per numeric feature or per level of a categorical feature.

    ``performance`` has one value per language; ``features`` maps a feature name to one value
    per language; ``sizes`` (data sizes, logged here) is the control when given.
    """
    y = np.asarray(performance, dtype=float)
    control = None if sizes is None else np.log(np.asarray(sizes, dtype=float))
    out: list[TypologyBias] = []
    for name, values in features.items():
        for label, x in _indicators(name, values):
            out.append(_one(label, x, y, control, method, level))
    return tuple(out)


def _indicators(name: str, values: Sequence | np.ndarray) -> list[tuple[str, np.ndarray]]:
    series = pd.Series(list(values))
    numeric = pd.to_numeric(series, errors="coerce")
    if numeric.notna().all():
        return [(name, numeric.to_numpy(dtype=float))]
    levels = sorted(series.astype(str).unique())
    if len(levels) == 2:  # one indicator says it all; report the less frequent level
        counts = series.astype(str).value_counts()
        levels = [min(levels, key=lambda lv: (counts[lv], lv))]
    return [(f"{name}={lv}", (series.astype(str) == lv).to_numpy(dtype=float)) for lv in levels]


def _one(label: str, x: np.ndarray, y: np.ndarray, control: np.ndarray | None, method: str,
         level: float) -> TypologyBias:
    n = len(y)
    controls = () if control is None else ("ln(size)",)
    need = 4 + len(controls)  # partial_correlation needs n - 3 - k >= 1; a plain r needs > 3 for a CI
    if n < need or np.ptp(x) == 0:
        why = f"only {n} languages (needs >= {need})" if n < need else "the feature is constant across languages"
        nan = float("nan")
        res = CorrelationResult(estimate=nan, ci_low=nan, ci_high=nan, level=level, p_value=nan, n=n,
                                method=("partial_" if controls else "") + method, ci_method="none",
                                notes=(f"unreliable: {why}",))
        return TypologyBias(feature=label, correlation=res, controls=controls, n_languages=n, notes=res.notes)
    if control is None:
        res = correlation(x, y, method, level=level, ci="fisher")
    else:
        res = partial_correlation(y, x, control, method, level=level)
    notes = res.notes
    if n < 10:
        notes = notes + (f"few languages ({n}): the CI is wide and one language can drive the estimate",)
    return TypologyBias(feature=label, correlation=res, controls=controls, n_languages=n, notes=notes)
