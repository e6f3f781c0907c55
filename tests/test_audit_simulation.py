"""Simulation study: planted E1/E4 effects, dose-response and parser failures are recovered;
95% CIs cover the planted values in 93-97% of 500 simulations; no effect -> ~5% positives."""
import pytest

from xleval.audit import AUDIT_RESAMPLING, audit, simulate_audit_data
from xleval.audit._simulate import coverage_study


def test_full_audit_recovers_planted_effects_and_flags_parser_failures():
    df, truth = simulate_audit_data(n_items=400, n_models=6, e1=0.08, e4_high=0.15, e4_low=0.0, e3=0.05,
                                    n_native=400, parser_failure={"model-2": 0.2}, random_state=11)
    res = audit(df, invalid_policy="exclude", residual_threshold=3, resampling=AUDIT_RESAMPLING.with_(n_resamples=500),
                n_permutations=499)
    assert res.flagged_models == ("model-2",)
    def near(est, low, high, true):  # within two CI half-widths (~4 standard errors): a robust single-run check
        return abs(est - true) <= (high - low)

    for key in ("E1", "E3", "E4"):
        c = res.contrast(key)
        assert near(c.estimate, c.ci_low, c.ci_high, truth[key]), key
        if key != "E3":  # unpaired E3 carries the item-difficulty variance of two item pools; not asserted
            assert c.ci_low > 0, key  # paired effects this large on 400 items are detected
    d = res.dose_response
    assert near(d.contrast, d.ci_low, d.ci_high, truth["dose_contrast"]) and d.ci_low > 0
    assert d.high.estimate > d.low.estimate
    # counting invalid parses as wrong attenuates model-2's gap by about (1 - 0.2)
    wrong, excl = res.contrast("E1", "model-2", policy="wrong"), res.contrast("E1", "model-2")
    assert wrong.acc_a < excl.acc_a
    assert res.family_interaction.tested and res.family_interaction.p_value > 0.001  # no planted family effect


@pytest.mark.slow
def test_coverage_and_false_positive_rate_over_500_simulations():
    planted = coverage_study(n_sims=500, n_items=200, n_models=3, random_state=1)
    for key, rate in planted.coverage.items():
        assert 0.93 <= rate <= 0.97, (key, rate)
        assert abs(planted.mean_estimate[key] - planted.truth[key]) < 0.01, key  # unbiased
    null = coverage_study(n_sims=500, n_items=200, n_models=3, e1=0.0, e4_high=0.0, e4_low=0.0, e3=0.0,
                          random_state=2)
    for key, rate in null.rejection_rate.items():
        # exact McNemar is conservative
        assert 0.02 <= rate <= 0.08 or (key == "E1_model0" and rate <= 0.08), (key, rate)
        assert 0.93 <= null.coverage[key] <= 0.97, (key, null.coverage[key])
