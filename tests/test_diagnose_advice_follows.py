"""diagnose's advice line follows the decision: where the 0.5-sd rule on score means would not advise calibration
but the decision applies LGN (labels in 2 of 3 pairs: anchored calibration cannot fit every pair), the first line
said "calibration not needed" and the last "recommended: method lgn" with a warning."""
import warnings

import numpy as np
import pandas as pd

from xleval.decision import diagnose


def _partial() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    rows = []
    for g in ("de-en", "zh-en", "ru-en"):  # equal score levels: the bias rule does not advise calibration
        for s in range(5):
            q = rng.normal(0, 3)
            for i in range(40):
                score = 60 + q + rng.normal(0, 10)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": i, "chrf": score,
                             "human": score + rng.normal(0, 8) if g != "ru-en" and i < 20 else np.nan})
    return pd.DataFrame(rows)


def test_the_advice_line_says_what_the_decision_applies():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = diagnose(_partial(), "chrf", "lp", human="human")
    assert not result.bias.calibration_advised
    method = result.recommendation.method
    if method == "none":
        assert result.advice.startswith("calibration not needed")
    else:
        assert not result.advice.startswith("calibration not needed"), result.advice
        assert result.advice.startswith({"lgn": "use LGN", "anchored": "use anchored calibration"}[method])
        assert "would not advise calibration" in result.advice  # the rule is still said, as a qualification
    assert method != "none"  # this table: the decision applies a calibration (the case that contradicted itself)
