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


def test_a_difference_without_spread_is_said_to_three_places():
    """Two systems a constant apart give the same difference in every draw: an interval of float-noise width
    (4e-16) asked for 18 decimals in the pairs summary ("+1.176696810829103823 [1.176696810829103601, ...]")."""
    from types import SimpleNamespace

    from xleval.calibration._pairs import _pair_words

    pair = SimpleNamespace(group_a="de-en", system_a="C", group_b="de-en", system_b="A", verdict="A better",
                           difference=1.1766968108291038, diff_low=1.1766968108291036, diff_high=1.176696810829104)
    assert _pair_words(pair) == "de-en/C above de-en/A (+1.177 [1.177, 1.177])"
    wide = SimpleNamespace(**{**vars(pair), "difference": 2.5, "diff_low": 1.2, "diff_high": 3.7})
    assert _pair_words(wide) == "de-en/C above de-en/A (+2.50 [1.20, 3.70])"  # 3 significant digits of the width
