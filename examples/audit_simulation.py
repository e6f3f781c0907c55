"""Simulation study of the translation-tax audit (xleval.audit), the output of which is in docs/audit.md.

1. Coverage: 500 simulated benchmarks (200 items, 3 models) with planted effects E1 = 0.05,
   E4 = 0.10 on high-residual items and 0 on low ones (pooled E4 = 0.05, dose contrast 0.10),
   E3 = 0.03; how often do the 95% CIs cover the planted values?
2. False positives: the same with every effect 0; how often do the tests reject at 0.05?
3. One full audit (6 models, parser failures in one model) showing recovery and the
   invalid-answer sensitivity analysis.

Run: .venv/bin/python examples/audit_simulation.py [--sims 500]
"""
from __future__ import annotations

import argparse

from xleval.audit import AUDIT_RESAMPLING, audit, simulate_audit_data
from xleval.audit._simulate import coverage_study


def _table(title: str, result) -> None:
    print(f"\n{title} ({result.n_sims} simulations, {result.n_items} items, {result.n_models} models)")
    print(f"{'estimator':<16}{'truth':>8}{'mean est':>10}{'coverage':>10}{'p<0.05':>9}{'CI excl. 0':>12}")
    for key, truth in result.truth.items():
        print(f"{key:<16}{truth:>8.3f}{result.mean_estimate[key]:>10.4f}{result.coverage[key]:>10.3f}"
              f"{result.rejection_rate[key]:>9.3f}{result.ci_excludes_zero_rate[key]:>12.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=500)
    args = parser.parse_args()
    _table("Planted effects", coverage_study(n_sims=args.sims, random_state=1))
    _table("No effect", coverage_study(n_sims=args.sims, e1=0.0, e4_high=0.0, e4_low=0.0, e3=0.0, random_state=2))

    df, truth = simulate_audit_data(n_items=400, n_models=6, e1=0.08, e4_high=0.15, e4_low=0.0, e3=0.05,
                                    n_native=400, parser_failure={"model-2": 0.2}, random_state=11)
    res = audit(df, invalid_policy="exclude", residual_threshold=3, resampling=AUDIT_RESAMPLING.with_(n_resamples=1000),
                n_permutations=999)
    print("\nOne full audit: 400 items, 6 models, model-2 fails to give a letter in 20% of responses")
    print(f"flagged models (validity < 0.95): {', '.join(res.flagged_models)}")
    for key in ("E1", "E3", "E4"):
        c, w = res.contrast(key), res.contrast(key, policy="wrong")
        print(f"{key} pooled: truth {truth[key]:+.3f}  estimate {c.estimate:+.4f} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] "
              f"p={c.p_value:.4f}  (invalid counted wrong: {w.estimate:+.4f})")
    m2e, m2w = res.contrast("E1", "model-2"), res.contrast("E1", "model-2", policy="wrong")
    print(f"E1 model-2: excluded {m2e.estimate:+.4f} (n={m2e.n_a}), counted wrong {m2w.estimate:+.4f} (n={m2w.n_a})")
    d = res.dose_response
    print(f"dose-response E4 (residual >= 3): high {d.high.estimate:+.4f} (truth {truth['E4_high']:+.3f}), "
          f"low {d.low.estimate:+.4f} (truth {truth['E4_low']:+.3f}), high-low {d.contrast:+.4f} "
          f"[{d.ci_low:+.4f}, {d.ci_high:+.4f}] p={d.p_value:.4f}")
    f = res.family_interaction
    print(f"family interaction (none planted): chi2={f.statistic:.2f} df={f.df} p={f.p_value:.4f}")


if __name__ == "__main__":
    main()
