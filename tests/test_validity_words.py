"""One status per level, as users read it: where the system level is violated and the segment level only at risk
(significant, with its d below the threshold), the combined verdict said "violated at both levels" while the
segment-level warning beside it said "at risk" (docs/report.md: "at risk, never violated, wherever it is said")."""
import numpy as np
import pandas as pd

from xleval.diagnostics import check_lgn_validity
from xleval.diagnostics._validity import status_said, validity_verdict


def test_the_verdict_says_each_level_as_its_own_check_does():
    rng = np.random.default_rng(3)
    rows = []
    for lang, shift in (("de", 0.0), ("zh", 0.4)):
        for s in range(12):
            quality = shift + rng.normal(0, 0.1)
            rows += [{"tgt_lang": lang, "system": f"s{s}", "human": quality + e} for e in rng.normal(0, 1, 25)]
    df = pd.DataFrame(rows)
    segment = check_lgn_validity(df, "tgt_lang", "human")
    system = check_lgn_validity(df, "tgt_lang", "human", system="system")
    assert segment.status == system.status == "violated"  # both significant ...
    assert status_said(segment) == "at risk" and status_said(system) == "violated"  # ... one below its threshold
    verdict = validity_verdict(segment, system)
    assert "at both levels" not in verdict.reason
    assert "violated at system level (the worse of the two; segment level: at risk)" in verdict.reason
