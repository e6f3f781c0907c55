"""Sections of the fairness, audit and intrinsic results: their tables come from the result
objects, their figures from the analyses' own plot builders, and the report is deterministic."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xleval.audit import AUDIT_RESAMPLING
from xleval.report import analysis_report, render_html, render_json, result_section, section_for
from xleval.stats import Resampling


@pytest.fixture(scope="module")
def fairness():
    from xleval.fairness import fairness_gaps

    acc = {"en": 0.9, "de": 0.86, "fr": 0.84, "sw": 0.7, "am": 0.56}  # 5 languages: no few-languages warning
    size = {"en": 300.0, "de": 66.0, "fr": 56.0, "sw": 1.6, "am": 0.8}
    rows = [{"lang": k, "correct": float(i < round(v * 50)), "size": size[k]}
            for k, v in acc.items() for i in range(50)]
    return fairness_gaps(pd.DataFrame(rows), "correct", "lang", resource="size",
                         resampling=Resampling(n_resamples=50, random_state=0))


@pytest.fixture(scope="module")
def audit_result():
    from xleval.audit import audit, simulate_audit_data

    data, _ = simulate_audit_data(n_items=60, n_models=2, random_state=0)
    return audit(data, resampling=AUDIT_RESAMPLING.with_(n_resamples=100))


@pytest.fixture(scope="module")
def confounds():
    from xleval.intrinsic import LMScores, analyze_confounds

    rng = np.random.default_rng(0)
    rows = []
    for lang, bpc in {"en": 1.0, "de": 1.3, "zh": 3.0, "ru": 2.0}.items():
        for vocab in (8000, 32000):
            for i in range(8):
                chars = float(60 + 5 * i)
                rows.append({"lang": lang, "model": f"{lang}_{vocab}", "setting": f"bpe_{vocab}", "item": i,
                             "nll": 60.0 * rng.normal(1, 0.01), "tokens": round(chars / (2 + vocab / 32000)),
                             "chars": chars, "bytes": round(chars * bpc), "vocab_size": vocab})
    return analyze_confounds(LMScores.from_frame(pd.DataFrame(rows)))


def test_fairness_section_has_the_language_rows_and_figures(fairness):
    sec = section_for(fairness)
    assert sec.id == "fairness" and len(sec.figures) == 3  # levels, ratios to en, elasticity
    assert list(sec.tables[0].rows) == [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                                        for r in fairness.language_rows()]


def test_audit_section_lays_out_the_contrasts(audit_result):
    sec = section_for(audit_result)
    titles = [t.title for t in sec.tables]
    assert sec.id == "audit" and "contrasts" in titles and len(sec.figures) >= 2
    contrasts = sec.tables[titles.index("contrasts")].rows
    assert len(contrasts) == len(audit_result.contrasts)


def test_intrinsic_section_lays_out_the_summary(confounds):
    sec = section_for(confounds)
    assert sec.id == "intrinsic" and sec.tables[0].title == "summary"
    assert len(sec.tables[0].rows) == len(confounds.summary()) and len(sec.figures) >= 1


def test_analysis_report_is_deterministic(fairness, audit_result, confounds):
    a = analysis_report("analyses", [fairness, audit_result, confounds])
    b = analysis_report("analyses", [fairness, audit_result, confounds])
    assert render_html(a) == render_html(b) and render_json(a) == render_json(b)
    assert [s.id for s in a.sections] == ["fairness", "audit", "intrinsic", "warnings"]


def test_unknown_results_get_the_generic_layout():
    class Thing:
        def to_dict(self):
            return {"n": 3, "rows": [{"a": 1}]}

    assert section_for(Thing()) == result_section("Thing", Thing())
