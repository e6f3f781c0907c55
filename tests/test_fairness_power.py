"""Minimum test-set size: parity with statsmodels' power solvers, the seed's Cohen's h formula,
Connor's (1987) McNemar formula, round trips, and a simulation of McNemar's test."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as ss
from statsmodels.stats.power import NormalIndPower, TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize

from xleval.exceptions import InputError
from xleval.fairness import cohens_h, detectable_effect, min_test_size, test_power

GRID = [(e, a, p) for e in (0.05, 0.1, 0.2, 0.5, 0.8, 1.2) for a, p in ((0.05, 0.8), (0.01, 0.9), (0.1, 0.5))]


def _solve(solver, **kw) -> float:
    return float(solver.solve_power(**kw))


@pytest.mark.parametrize("effect,alpha,power", GRID)
def test_independent_proportions_equal_statsmodels_normalindpower(effect, alpha, power):
    res = min_test_size(effect, power=power, alpha=alpha, design="independent")
    expected = _solve(NormalIndPower(), effect_size=effect, alpha=alpha, power=power, ratio=1.0)
    assert res.n == math.ceil(expected - 1e-6)
    assert res.n_total == 2 * res.n
    # round trip with statsmodels' own power function
    assert NormalIndPower().power(effect, res.n, alpha, ratio=1.0) >= power
    assert NormalIndPower().power(effect, res.n - 1, alpha, ratio=1.0) < power


@pytest.mark.parametrize("effect,alpha,power", GRID)
def test_one_sample_is_the_seed_formula(effect, alpha, power):
    res = min_test_size(effect, power=power, alpha=alpha, design="one-sample")
    seed = math.ceil((ss.norm.ppf(1 - alpha / 2) + ss.norm.ppf(power)) ** 2 / effect**2)
    # the seed ignores the far rejection tail, which can only add power: its n is conservative,
    # and the tail matters only at low power (a few items at power 0.5)
    assert res.n <= seed
    assert seed - res.n <= (1 if power >= 0.8 else 3)
    assert res.achieved_power >= power
    if res.n > 2:  # statsmodels' one-sample solver (ratio=0) fails to converge for n ~ 2
        expected = _solve(NormalIndPower(), effect_size=effect, alpha=alpha, power=power, ratio=0.0)
        assert res.n == math.ceil(expected - 1e-6)


@pytest.mark.parametrize("effect,alpha,power", GRID)
def test_continuous_metric_equals_statsmodels_t_tests(effect, alpha, power):
    ind = min_test_size(effect, power=power, alpha=alpha, kind="continuous")
    assert ind.n == math.ceil(_solve(TTestIndPower(), effect_size=effect, alpha=alpha, power=power) - 1e-6)
    assert TTestIndPower().power(effect, ind.n, alpha) >= power > TTestIndPower().power(effect, ind.n - 1, alpha)
    paired = min_test_size(effect, power=power, alpha=alpha, kind="continuous", design="paired")
    assert paired.n == math.ceil(_solve(TTestPower(), effect_size=effect, alpha=alpha, power=power) - 1e-6)
    assert TTestPower().power(effect, paired.n, alpha) >= power


def test_cohen_1988_table_value_d_half():
    # Cohen (1988), Table 2.4.1: d = 0.5, two-sided alpha = .05, power .80 -> 64 per group.
    assert min_test_size(0.5, kind="continuous").n == 64


def test_one_sided_matches_statsmodels():
    res = min_test_size(0.3, alternative="one-sided")
    expected = _solve(NormalIndPower(), effect_size=0.3, alpha=0.05, power=0.8, ratio=1.0, alternative="larger")
    assert res.n == math.ceil(expected - 1e-6)


def test_cohens_h_equals_statsmodels_proportion_effectsize():
    for p1, p2 in ((0.9, 0.8), (0.5, 0.31), (0.2, 0.6)):
        assert cohens_h(p1, p2) == pytest.approx(proportion_effectsize(p1, p2), abs=1e-12)


def test_mcnemar_connor_formula_by_hand():
    psi, delta, alpha, power = 0.2, 0.05, 0.05, 0.8
    z_a, z_b = ss.norm.ppf(1 - alpha / 2), ss.norm.ppf(power)
    by_hand = (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2
    res = min_test_size(delta, design="paired", discordant=psi)
    assert res.n == math.ceil(by_hand)
    assert res.achieved_power >= power
    assert test_power(delta, res.n - 1, design="paired", discordant=psi) < power


def test_paired_needs_fewer_items_than_independent_when_discordance_is_low():
    # accuracies 0.80 vs 0.75 on parallel items where only 10% of items differ
    h = cohens_h(0.80, 0.75)
    assert min_test_size(0.05, design="paired", discordant=0.10).n < min_test_size(h).n


@pytest.mark.parametrize("design,kind,disc", [("independent", "proportion", None), ("one-sample", "proportion", None),
                                              ("paired", "proportion", 0.3), ("independent", "continuous", None),
                                              ("paired", "continuous", None)])
def test_detectable_effect_round_trips_min_test_size(design, kind, disc):
    mde = detectable_effect(400, power=0.8, design=design, kind=kind, discordant=disc)
    assert test_power(mde.effect, 400, design=design, kind=kind, discordant=disc) == pytest.approx(0.8, abs=1e-8)
    assert min_test_size(mde.effect * 1.0001, design=design, kind=kind, discordant=disc).n <= 400


def test_detectable_effect_as_accuracies():
    mde = detectable_effect(500, baseline=0.8)
    assert cohens_h(0.8, mde.other_low) == pytest.approx(mde.effect, abs=1e-9)
    assert cohens_h(mde.other_high, 0.8) == pytest.approx(mde.effect, abs=1e-9)
    assert mde.difference == pytest.approx(0.8 - mde.other_low)


def test_smaller_effects_need_more_items():
    sizes = [min_test_size(h).n for h in (0.8, 0.5, 0.2, 0.1)]
    assert sizes == sorted(sizes)


@pytest.mark.parametrize("kwargs,match", [
    ({"effect": 0.0}, "non-zero"),
    ({"effect": 0.2, "power": 1.2}, "power"),
    ({"effect": 0.2, "alpha": 0}, "alpha"),
    ({"effect": 0.2, "design": "paired"}, "discordant"),
    ({"effect": 0.3, "design": "paired", "discordant": 0.2}, "cannot exceed"),
    ({"effect": 0.2, "discordant": 0.2}, "only to design='paired'"),
    ({"effect": 0.2, "design": "both"}, "design"),
    ({"effect": 0.2, "power": 0.04, "alpha": 0.05}, "must exceed alpha"),
])
def test_bad_input_is_one_clear_error(kwargs, match):
    with pytest.raises(InputError, match=match):
        min_test_size(**kwargs)


@pytest.mark.slow
def test_mcnemar_power_by_simulation_with_statsmodels_test():
    from statsmodels.stats.contingency_tables import mcnemar

    psi, delta = 0.25, 0.08
    res = min_test_size(delta, design="paired", discordant=psi)
    rng = np.random.default_rng(7)
    p10, p01 = (psi + delta) / 2, (psi - delta) / 2
    sims = 4000
    counts = rng.multinomial(res.n, [p10, p01, 1 - psi], size=sims)
    rejected = 0
    for b, c, _ in counts:
        table = np.array([[0, b], [c, 0]])
        rejected += mcnemar(table, exact=False, correction=False).pvalue < 0.05
    # Monte Carlo SE at 0.8 with 4000 draws is 0.0063; the normal approximation is close at this n
    assert abs(rejected / sims - 0.8) < 0.03
