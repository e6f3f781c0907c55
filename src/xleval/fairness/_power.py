"""Minimum test-set size and minimum detectable effect for per-language comparisons.

Designs (``design``):

* ``one-sample`` - the compared level (e.g. English accuracy) is taken as known without error.
  For proportions this is the textbook formula ``n = (z_{1-a/2} + z_power)^2 / h^2``.
* ``independent`` - two languages with their own test sets of ``n`` items each; twice the
  one-sample ``n`` (the difference of two estimates has twice the variance).
* ``paired`` - the same (parallel) items in both languages: McNemar's test for 0/1 correctness
  (Connor 1987, needs the share of discordant items), the paired t test for a continuous metric
  (``effect`` is then d_z = mean difference / sd of the differences).

Effects (``kind``): ``proportion`` - Cohen's h (``2 asin sqrt(p1) - 2 asin sqrt(p2)``; for
``paired`` the accuracy difference ``p1 - p2``); ``continuous`` - Cohen's d.
Powers are exact for the test used (normal for h, noncentral t for d; both tails when
two-sided), so ``n`` is the smallest integer whose power reaches the target; they agree with
statsmodels' ``NormalIndPower``/``TTestIndPower``/``TTestPower``.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np
import scipy.stats as ss
from scipy.optimize import brentq

from xleval.exceptions import InputError
from xleval.fairness._results import DetectableEffect, SampleSize
from xleval.stats._validate import check_choice, check_probability

__all__ = ["min_test_size", "detectable_effect", "test_power", "cohens_h"]

DESIGNS = ("independent", "one-sample", "paired")
KINDS = ("proportion", "continuous")
ALTERNATIVES = ("two-sided", "one-sided")
_MAX_N = 10**9


# ----------------------------------------------------------------------------- validation
def _check_design(design: str, kind: str, alternative: str) -> tuple[str, str, str]:
    return (check_choice(design, "design", DESIGNS), check_choice(kind, "kind", KINDS),
            check_choice(alternative, "alternative", ALTERNATIVES))


def _check_effect(effect: float, design: str, kind: str, discordant: float | None) -> tuple[float, float | None]:
    if not isinstance(effect, numbers.Real) or not math.isfinite(effect) or effect == 0:
        raise InputError("effect must be a non-zero number (Cohen's h or d, or an accuracy difference); "
                         f"got {effect!r}")
    effect = abs(float(effect))  # power is symmetric in the sign of the effect
    if effect < 1e-6:  # its n would exceed any test set (and effect**2 would underflow)
        raise InputError(f"effect {effect:g} is too small: more than {_MAX_N} items per language would be needed")
    if kind == "continuous" and effect > 100:
        raise InputError(f"effect {effect:g} is not a plausible Cohen's d (a difference of {effect:g} standard "
                         "deviations); give d in standard deviations, e.g. 0.2 (small) to 0.8 (large)")
    if design == "paired" and kind == "proportion":
        psi = _check_discordant(discordant)
        if effect > psi:
            raise InputError(
                f"effect {effect} (accuracy difference) cannot exceed the discordant share {psi}: "
                "a difference needs at least that many items answered differently; raise discordant=",
                argument="discordant", value=psi
            )
        if psi - effect**2 <= 0:
            raise InputError(f"discordant share {psi} with difference {effect} leaves no variance; lower the effect")
        return effect, psi
    if discordant is not None:
        raise InputError("discordant= applies only to design='paired' with kind='proportion' (McNemar)")
    if kind == "proportion" and effect > math.pi:
        raise InputError(f"effect {effect:g} is not a Cohen's h: h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2)) is at most pi "
                         "(accuracies 1 vs 0); for 0.80 vs 0.75 h is 0.12")
    return effect, None


def _check_discordant(discordant: float | None) -> float:
    if discordant is None:
        raise InputError(
            "paired accuracy (McNemar) needs the expected share of discordant items (right in one language, "
            "wrong in the other), e.g. discordant=0.2; under independence it is "
            "p1(1-p2) + p2(1-p1)", argument="discordant"
        )
    value = float(discordant)
    if not 0.0 < value <= 1.0:
        raise InputError(f"discordant must be in (0, 1]; got {discordant!r}")
    return value


# ----------------------------------------------------------------------------- power functions
def _crit(alpha: float, alternative: str) -> float:
    return float(ss.norm.isf(alpha / 2 if alternative == "two-sided" else alpha))


def _power_fn(design: str, kind: str, alpha: float, alternative: str,
              psi: float | None) -> tuple[Callable[[float, float], float], str, int]:
    """(power(effect, n), method, minimum n) for one design and kind."""
    two = alternative == "two-sided"
    if kind == "proportion" and design == "paired":
        assert psi is not None  # _check_effect gives the discordant share for paired proportions
        z = _crit(alpha, alternative)

        def mcnemar(delta: float, n: float) -> float:
            # Connor (1987): normal approximation to McNemar's test with discordant share psi
            sd = math.sqrt(psi - delta**2)
            return float(ss.norm.cdf((delta * math.sqrt(n) - z * math.sqrt(psi)) / sd))

        return mcnemar, "mcnemar-connor1987", 1
    if kind == "proportion":
        z = _crit(alpha, alternative)
        scale = 1.0 if design == "one-sample" else 0.5  # two independent groups: h * sqrt(n / 2)

        def normal(h: float, n: float) -> float:
            shift = h * math.sqrt(n * scale)
            return float(ss.norm.sf(z - shift) + (ss.norm.cdf(-z - shift) if two else 0.0))

        return normal, f"normal-cohens_h-{design}", 1
    if design == "independent":
        df_of, scale, min_n = (lambda n: 2 * n - 2), 0.5, 2
    else:
        df_of, scale, min_n = (lambda n: n - 1), 1.0, 2

    def t_power(d: float, n: float) -> float:
        df = df_of(n)
        nc = d * math.sqrt(n * scale)
        crit = ss.t.isf(alpha / 2 if two else alpha, df)
        return float(ss.nct.sf(crit, df, nc) + (ss.nct.cdf(-crit, df, nc) if two else 0.0))

    return t_power, f"t-{'paired' if design == 'paired' else design}-cohens_d", min_n


def _normal_start(effect: float, design: str, kind: str, alpha: float, power: float, alternative: str,
                  psi: float | None) -> float:
    z_a, z_b = _crit(alpha, alternative), float(ss.norm.ppf(power))
    if kind == "proportion" and design == "paired":
        assert psi is not None  # _check_effect gives the discordant share for paired proportions
        return (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - effect**2)) ** 2 / effect**2
    factor = 2.0 if design == "independent" else 1.0
    return factor * (z_a + z_b) ** 2 / effect**2


def test_power(effect: float, n: int, *, design: str = "independent", kind: str = "proportion",
               alpha: float = 0.05, alternative: str = "two-sided", discordant: float | None = None) -> float:
    """Power of the test at ``n`` items per language for ``effect`` (see the module docstring)."""
    design, kind, alternative = _check_design(design, kind, alternative)
    alpha = check_probability(alpha, "alpha")
    effect, psi = _check_effect(effect, design, kind, discordant)
    fn, _, min_n = _power_fn(design, kind, alpha, alternative, psi)
    if not isinstance(n, numbers.Integral) or n < min_n:
        raise InputError(f"n must be an integer >= {min_n}; got {n!r}")
    return fn(effect, int(n))


test_power.__test__ = False  # type: ignore[attr-defined]  # not a pytest test despite the name


def min_test_size(effect: float, *, power: float = 0.8, alpha: float = 0.05, design: str = "independent",
                  kind: str = "proportion", alternative: str = "two-sided",
                  discordant: float | None = None) -> SampleSize:
    """Smallest number of items per language that detects ``effect`` with ``power`` at ``alpha``.

    ``effect``: Cohen's h for proportions (:func:`cohens_h`), Cohen's d (or d_z when paired)
    for a continuous metric, or the accuracy difference for paired proportions (with
    ``discordant``, the expected share of items right in one language and wrong in the other).
    """
    design, kind, alternative = _check_design(design, kind, alternative)
    alpha, power = check_probability(alpha, "alpha"), check_probability(power, "power")
    if power <= alpha:
        raise InputError(f"power ({power}) must exceed alpha ({alpha}); a test has at least power alpha")
    effect, psi = _check_effect(effect, design, kind, discordant)
    fn, method, min_n = _power_fn(design, kind, alpha, alternative, psi)
    n = _smallest_n(lambda m: fn(effect, m), power, _normal_start(effect, design, kind, alpha, power, alternative, psi),
                    min_n)
    notes: tuple[str, ...] = ()
    if design == "one-sample":
        notes = ("treats the reference level as known without error; comparing two estimated languages "
                 "needs design='independent' (about twice the items)",)
    return SampleSize(
        n=n, n_total=2 * n if design == "independent" else n, effect=effect,
        effect_kind=_effect_kind(design, kind), design=design, power=power, achieved_power=fn(effect, n),
        alpha=alpha, alternative=alternative, method=method, discordant=psi, notes=notes,
    )


def _smallest_n(power_at: Callable[[int], float], target: float, start: float, min_n: int) -> int:
    n = max(min_n, math.ceil(start))
    if n > _MAX_N:
        raise InputError(f"the effect is too small: more than {_MAX_N} items per language would be needed")
    while power_at(n) < target:  # the normal start is a lower bound for t tests
        n += 1
    while n > min_n and power_at(n - 1) >= target:  # the far tail can make fewer items enough
        n -= 1
    return n


def _effect_kind(design: str, kind: str) -> str:
    if kind == "proportion":
        return "accuracy_difference" if design == "paired" else "cohens_h"
    return "cohens_dz" if design == "paired" else "cohens_d"


def detectable_effect(n: int, *, power: float = 0.8, alpha: float = 0.05, design: str = "independent",
                      kind: str = "proportion", alternative: str = "two-sided", discordant: float | None = None,
                      baseline: float | None = None) -> DetectableEffect:
    """The smallest effect a test set of ``n`` items per language detects with ``power``.

    With ``kind='proportion'`` and a ``baseline`` accuracy (e.g. English's), the effect is also
    given as the accuracy of the other language and the accuracy gap.
    """
    design, kind, alternative = _check_design(design, kind, alternative)
    alpha, power = check_probability(alpha, "alpha"), check_probability(power, "power")
    if power <= alpha:
        raise InputError(f"power ({power}) must exceed alpha ({alpha})")
    psi = _check_discordant(discordant) if design == "paired" and kind == "proportion" else None
    if psi is None and discordant is not None:
        raise InputError("discordant= applies only to design='paired' with kind='proportion' (McNemar)")
    fn, method, min_n = _power_fn(design, kind, alpha, alternative, psi)
    if not isinstance(n, numbers.Integral) or n < min_n:
        raise InputError(f"n must be an integer >= {min_n}; got {n!r}")
    unit_n = None if psi is not None else _normal_start(1.0, design, kind, alpha, power, alternative, None)
    upper = _upper_effect(fn, n, power, psi, unit_n)
    notes: list[str] = []
    if upper is None:
        notes.append(f"unreliable: even the largest possible effect does not reach power {power} with n = {n}")
        effect = float("nan")
    else:
        effect = float(brentq(lambda e: fn(e, n) - power, 1e-12, upper, xtol=1e-12))
    result = DetectableEffect(effect=effect, effect_kind=_effect_kind(design, kind), n=int(n), design=design,
                              power=power, alpha=alpha, alternative=alternative, method=method, discordant=psi,
                              notes=tuple(notes))
    if baseline is not None:
        result = _with_baseline(result, baseline, kind, design)
    return result


def _upper_effect(fn: Callable[[float, float], float], n: int, power: float, psi: float | None,
                  n_at_unit_effect: float | None) -> float | None:
    """An effect whose power reaches ``power`` (bracket for the root), or None if none does."""
    if psi is not None:  # McNemar: the difference cannot exceed the discordant share
        top = psi * (1 - 1e-12)
        return top if fn(top, n) >= power else None
    assert n_at_unit_effect is not None  # given whenever psi is None
    upper = 2.0 * math.sqrt(n_at_unit_effect / n)  # twice the normal-approximation answer
    for _ in range(40):
        value = fn(upper, n)
        if math.isfinite(value) and value >= power:
            return upper
        upper *= 1.5
    return None


def _with_baseline(result: DetectableEffect, baseline: float, kind: str, design: str) -> DetectableEffect:
    from dataclasses import replace

    if kind != "proportion":
        raise InputError("baseline= converts an effect to accuracies; it applies to kind='proportion' only")
    p = check_probability(baseline, "baseline")
    if design == "paired":
        low, high = p - result.effect, p + result.effect
    else:
        phi = math.asin(math.sqrt(p))
        low = math.sin(max(phi - result.effect / 2, 0.0)) ** 2 if phi - result.effect / 2 > 0 else 0.0
        high = math.sin(min(phi + result.effect / 2, math.pi / 2)) ** 2
    return replace(result, baseline=p, other_low=max(low, 0.0), other_high=min(high, 1.0), difference=p - max(low, 0.0))


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h between two proportions: ``2 asin sqrt(p1) - 2 asin sqrt(p2)``."""
    for name, p in (("p1", p1), ("p2", p2)):
        if not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
            raise InputError(f"{name} must be a proportion in [0, 1]; got {p!r}")
    return float(2 * np.arcsin(np.sqrt(p1)) - 2 * np.arcsin(np.sqrt(p2)))
