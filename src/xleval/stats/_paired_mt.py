"""sacrebleu's significance tests for MT systems scored on the same segments, over summed statistics.

* :func:`paired_bootstrap_test` (``sacrebleu --paired-bs``; Koehn 2004, as Moses'
  ``bootstrap-hypothesis-difference-significance.pl``): resample segments with replacement
  (the same resamples for baseline and system), score both from the resampled statistics; the
  test statistic is the absolute score difference, centred: ``|d*| - mean(|d*|)`` against the
  observed ``|d|``.
* :func:`approximate_randomization_test` (``sacrebleu --paired-ar``; Riezler & Maxwell 2005, as
  multeval): swap each segment's baseline and system statistics with probability 1/2, score both
  pseudo-systems; the statistic is ``|a* - b*|`` against the observed ``|d|``.
* :func:`bootstrap_score_ci` (``sacrebleu --confidence``): the bootstrap mean and the half-width
  of the 95% interval from the order statistics ``n // 40`` and ``n - n // 40 - 1``.

The draws are sacrebleu's for the same seed (``numpy.random.default_rng(seed)``, then
``choice(n, (B, n))`` / ``integers(2, (B, n), dtype=bool)``), so p-values equal sacrebleu's
(its float32 sums are exact for the integer statistics of any test set below 2**24 tokens).
Both tests are two-sided (|difference|) with the p-value ``(#{T* > T} + 1) / (B + 1)``, as
sacrebleu; ``p_value_convention`` states it on every result. The default seed is sacrebleu's
(12345; ``SACREBLEU_SEED``). Scoring is vectorised: ``score(summed_stats (B, k)) -> (B,)``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from xleval._base.result import Result, array_field
from xleval._base.seeding import make_rng
from xleval.exceptions import InputError
from xleval.stats import _validate as v

__all__ = ["SystemTest", "paired_bootstrap_test", "approximate_randomization_test", "bootstrap_score_ci",
           "SACREBLEU_SEED", "seed_from_environment", "P_VALUE_CONVENTION"]

SACREBLEU_SEED = 12345


def seed_from_environment() -> tuple[int | None, str]:
    """sacrebleu's seed of its bootstraps: the ``SACREBLEU_SEED`` variable (``none``: a fresh seed), else
    :data:`SACREBLEU_SEED`; the seed and its text as the signature's ``seed:`` field shows it."""
    import os

    text = os.environ.get("SACREBLEU_SEED", str(SACREBLEU_SEED)).strip().lower()
    if text == "none":
        return None, text
    if not text.isdigit():
        raise InputError(f"SACREBLEU_SEED={text!r}: give a non-negative integer, or 'none' for a fresh seed",
                         argument="SACREBLEU_SEED", value=text)
    return int(text), text


P_VALUE_CONVENTION = "(#{T* > T} + 1) / (B + 1)"
# resampling indices are drawn in one call (sacrebleu's stream) up to this many entries, then in chunks
_ONE_DRAW = 50_000_000

Score = Callable[[np.ndarray], Any]


@dataclass(frozen=True, eq=False)
class SystemTest(Result):
    """A system's corpus score, optionally tested against a baseline and with a bootstrap interval.

    ``score``: the corpus score from all segments; ``baseline_score``/``difference``
    (``score - baseline_score``) and ``p_value`` when tested (two-sided, ``p_value_convention``);
    ``mean``/``ci``: sacrebleu's bootstrap mean and half-width of the 95% interval
    (``ci_low``/``ci_high`` are the order statistics it comes from). ``method`` names the procedure,
    ``n`` the segments, ``n_resamples`` the resamples or trials, ``random_state`` the seed.
    """

    score: float
    n: int
    method: str
    baseline_score: float | None = None
    difference: float | None = None
    p_value: float | None = None
    alternative: str | None = None
    p_value_convention: str | None = None
    mean: float | None = None
    ci: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    n_resamples: int | None = None
    random_state: int | None = None
    notes: tuple[str, ...] = ()
    distribution: np.ndarray | None = array_field()


def _stats(x: Any, name: str) -> np.ndarray:
    arr = v.as_float_array(x, name, ndim=2)
    if len(arr) == 0:
        raise InputError(f"{name} has no segments; a test needs at least one")
    return arr


def _pair(baseline: Any, system: Any) -> tuple[np.ndarray, np.ndarray]:
    bl, sy = _stats(baseline, "baseline"), _stats(system, "system")
    if bl.shape != sy.shape:
        raise InputError(f"baseline and system statistics must have the same shape (same segments, same metric); "
                         f"got {bl.shape} and {sy.shape}")
    return bl, sy


def _scores(score: Score, summed: np.ndarray) -> np.ndarray:
    out = np.asarray(score(summed)).reshape(-1)
    # float32 scores (sacrebleu's own arithmetic) keep their type: their mean is sacrebleu's, taken in it
    out = out if out.dtype == np.float32 else out.astype(np.float64)
    if out.shape[0] != summed.shape[0]:
        raise InputError("score must map summed statistics of shape (B, k) to B scores (e.g. metric.score_from_stats)")
    return out


def _score1(score: Score, stats: np.ndarray) -> float:
    return float(_scores(score, stats.sum(axis=0)[None, :])[0])


def _resample_counts(rng: np.random.Generator, n: int, n_resamples: int) -> np.ndarray:
    """(B, n) multiplicities of sacrebleu's ``rng.choice(n, size=(B, n), replace=True)``."""
    rows = []
    step = n_resamples if n_resamples * n <= _ONE_DRAW else max(1, _ONE_DRAW // n)
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        idx = rng.choice(n, size=(b, n), replace=True)
        flat = (np.arange(b)[:, None] * n + idx).ravel()
        rows.append(np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64))
    return np.concatenate(rows)


def _ci(scores: np.ndarray) -> tuple[float, float, float, float]:
    """sacrebleu's ``estimate_ci``: mean, half-width, and the order statistics n//40 and n-n//40-1."""
    ordered = np.sort(scores)
    k = len(ordered) // 40
    low, high = ordered[k], ordered[len(ordered) - k - 1]  # in the scores' type, as sacrebleu's arithmetic
    return float(ordered.mean()), float(0.5 * (high - low)), float(low), float(high)


def null_p_value(null: np.ndarray, observed: float) -> float:
    """sacrebleu's p-value of an observed statistic against its null draws: (draws above it + 1) / (draws + 1)."""
    return (int(np.count_nonzero(null > observed)) + 1) / (len(null) + 1)


def bootstrap_score_ci(stats: Any, score: Score, *, n_resamples: int = 1000,
                       random_state: Any = SACREBLEU_SEED) -> SystemTest:
    """sacrebleu's ``--confidence``: corpus score, bootstrap mean and 95% half-width (``μ ± ci``).

    ``stats``: per-segment sufficient statistics (n, k); ``score``: summed statistics (B, k) -> (B,).
    """
    arr = _stats(stats, "stats")
    n_resamples = v.check_n_resamples(n_resamples)
    rng, seed = make_rng(random_state)
    counts = _resample_counts(rng, len(arr), n_resamples)
    boot = _scores(score, counts @ arr)
    mean, half, low, high = _ci(boot)
    return SystemTest(score=_score1(score, arr), n=len(arr), method="bootstrap (sacrebleu --confidence)",
                      mean=mean, ci=half, ci_low=low, ci_high=high, level=0.95, n_resamples=n_resamples,
                      random_state=seed, distribution=boot)


def paired_bootstrap_test(baseline: Any, system: Any, score: Score, *, n_resamples: int = 1000,
                          random_state: Any = SACREBLEU_SEED) -> SystemTest:
    """sacrebleu's ``--paired-bs``: is ``system`` different from ``baseline`` (same segments)?

    Returns the system's score, its bootstrap mean and 95% half-width, and the two-sided p-value of
    the centred absolute difference. ``baseline``/``system``: per-segment statistics (n, k).
    """
    bl, sy = _pair(baseline, system)
    n_resamples = v.check_n_resamples(n_resamples)
    rng, seed = make_rng(random_state)
    counts = _resample_counts(rng, len(bl), n_resamples)
    boot_bl, boot_sy = _scores(score, counts @ bl), _scores(score, counts @ sy)
    bl_score, sy_score = _score1(score, bl), _score1(score, sy)
    mean, half, low, high = _ci(boot_sy)
    diffs = np.abs(boot_sy - boot_bl)
    null = diffs - diffs.mean()
    return SystemTest(score=sy_score, n=len(bl), method="paired bootstrap resampling (sacrebleu --paired-bs)",
                      baseline_score=bl_score, difference=sy_score - bl_score,
                      p_value=null_p_value(null, abs(bl_score - sy_score)), alternative="two-sided",
                      p_value_convention=P_VALUE_CONVENTION, mean=mean, ci=half, ci_low=low, ci_high=high,
                      level=0.95, n_resamples=n_resamples, random_state=seed, distribution=null)


def approximate_randomization_test(baseline: Any, system: Any, score: Score, *, n_trials: int = 10000,
                                   random_state: Any = SACREBLEU_SEED) -> SystemTest:
    """sacrebleu's ``--paired-ar``: two-sided approximate randomization test of ``system`` against
    ``baseline`` (per-segment statistics (n, k) on the same segments)."""
    bl, sy = _pair(baseline, system)
    n_trials = v.check_n_resamples(n_trials)
    rng, seed = make_rng(random_state)
    n = len(bl)
    step = n_trials if n_trials * n <= _ONE_DRAW else max(1, _ONE_DRAW // n)
    delta, sys_total = bl - sy, sy.sum(axis=0)
    null = []
    for start in range(0, n_trials, step):
        swap = rng.integers(2, size=(min(step, n_trials - start), n), dtype=bool).astype(np.float64)
        # pseudo-system a takes the baseline's statistics where swap is set, b the others: exact integer sums
        a = swap @ delta + sys_total
        b = (bl.sum(axis=0) + sys_total) - a
        null.append(np.abs(_scores(score, a) - _scores(score, b)))
    null_arr = np.concatenate(null)
    bl_score, sy_score = _score1(score, bl), _score1(score, sy)
    return SystemTest(score=sy_score, n=n, method="approximate randomization (sacrebleu --paired-ar)",
                      baseline_score=bl_score, difference=sy_score - bl_score,
                      p_value=null_p_value(null_arr, abs(bl_score - sy_score)), alternative="two-sided",
                      p_value_convention=P_VALUE_CONVENTION, n_resamples=n_trials, random_state=seed,
                      distribution=null_arr)
