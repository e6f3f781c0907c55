"""No result depends on the order of the table's rows (same rows, same seed): the decision's out-of-fold
comparison (folds of systems, label draws, resamples), the bias check's bootstrap interval (eta squared) and
the paired tests of `score` (segments by id). Before, each drew by row position: a shuffled copy of WMT21 moved
the comparison's LGN accuracy from 0.558 to 0.552, the eta squared CI from 35.2-47.5% to 34.7-47.5%, and a
paired bootstrap's p-value from 0.2647 to 0.2947."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from xleval.decision import EVALUATION_PROCEDURE, evaluate_calibration
from xleval.diagnostics import diagnose_bias
from xleval.metrics import compare_systems_frame


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp, level in (("de-en", 0.0), ("ja-en", 8.0), ("ha-en", -6.0)):
        for s in range(6):
            skill = rng.normal(0, 3)
            for i in range(40):
                q = rng.normal()
                human = 60 + skill + 8 * q + rng.normal(0, 10)
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": i + 1, "doc_id": f"d{i // 8}",
                             "chrf": 50 + level + skill + 5 * q + rng.normal(0, 2),
                             "human": human if rng.random() < 0.5 else np.nan})
    return pd.DataFrame(rows)


def _shuffled(df: pd.DataFrame) -> pd.DataFrame:
    return df.sample(frac=1.0, random_state=7).reset_index(drop=True)


def test_the_out_of_fold_comparison_does_not_depend_on_the_row_order():
    df = _table()
    procedure = EVALUATION_PROCEDURE.with_(n_repeats=2, n_resamples=100, budgets=(10,), selections=("random",))
    out = []
    for frame in (df, _shuffled(df)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = evaluate_calibration(frame, "chrf", "human", "lp", procedure=procedure, human_scale="da")
        out.append({v.name: (v.accuracy.estimate, v.accuracy.ci_low, v.accuracy.ci_high) for v in ev.variants})
    assert out[0] == out[1]
    assert "anchored@10 random" in out[0]  # the label draws are among what must not move


def test_the_bias_interval_does_not_depend_on_the_row_order():
    df = _table()
    a, b = (diagnose_bias(frame, "chrf", "lp", n_resamples=200, random_state=0).eta_squared
            for frame in (df, _shuffled(df)))
    assert (a.estimate, a.ci_low, a.ci_high) == (b.estimate, b.ci_low, b.ci_high)


def test_paired_tests_of_a_table_do_not_depend_on_the_row_order():
    rng = np.random.default_rng(1)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away"]
    refs = [" ".join(rng.choice(words, 8)) for _ in range(60)]
    rows = []
    for system, noise in (("base", 0.3), ("other", 0.5)):
        for i, ref in enumerate(refs):
            hyp = " ".join(w if rng.random() > noise else rng.choice(words) for w in ref.split())
            rows.append({"lp": "de-en", "system": system, "seg_id": i + 1, "reference": ref, "hypothesis": hyp})
    df = pd.DataFrame(rows)
    res = [compare_systems_frame(frame, ["bleu"], baseline="base", n_resamples=200)[0]
           for frame in (df, _shuffled(df))]
    a, b = (r.to_dict() for r in res)
    assert a == b

