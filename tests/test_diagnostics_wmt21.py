"""[data] The WMT21 study runs on the shared data: xleval's corpus scores equal the organisers',
the reference figure reproduces, and the segment-level study's facts hold."""
import importlib.util
import re

import numpy as np
import pytest

from conftest import REPO, require_data
from xleval.stats import pairwise_accuracy

# the study runs on every to-English segment (~30 s of CPU before the first assertion): slow tier
pytestmark = [pytest.mark.data, pytest.mark.slow]

# Within-lp Pearson r of sacrebleu sentence chrF (vs ref A) with DA z, from the data README
# (../shared/data/README.md, "r with re-mapping"): an oracle computed with sacrebleu, not by xleval.
README_CHRF_R = {"cs-en": 0.184, "de-en": 0.235, "ha-en": 0.277, "is-en": 0.285, "ja-en": 0.280, "ru-en": 0.212,
                 "zh-en": 0.279}


def _study():
    spec = importlib.util.spec_from_file_location("wmt21_study", REPO / "examples" / "wmt21_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def study():
    return _study()


@pytest.fixture(scope="module")
def result(study):
    root = require_data("wmt21", "segments.parquet").parents[1]
    require_data("wmt21", "systems.csv")
    return study.run_study(root, n_resamples=100, repeats=1, n_pair_items=1000, n_resamples_kendall=10,
                           pair_samples=2)


def test_corpus_scores_from_segments_equal_the_organisers(result):
    systems = result["systems"]
    assert result["n_systems"] == len(systems) == 100 and len(result["lps"]) == 7
    assert systems[["bleu", "chrf"]].notna().all().all()
    np.testing.assert_allclose(systems["bleu"], systems["bleu_refA"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(systems["chrf"], systems["chrf_refA"], rtol=0, atol=1e-6)
    # every system's corpus score is built from all of its segments
    assert (systems["n"] == systems["lp"].map({"zh-en": 1948, "ja-en": 1005, "ha-en": 997}).fillna(1000)).all()


def test_in_sample_zscore_raises_cross_lp_accuracy_of_system_chrf(result):
    chrf = result["metrics"]["chrF"]["cv"].accuracy
    # the reference: per-lp z-score of system chrF, about 0.64 -> about 0.70
    assert chrf["raw"].estimate == pytest.approx(0.64, abs=0.01)
    assert chrf["lgn_in_sample"].estimate == pytest.approx(0.70, abs=0.01)
    assert chrf["lgn_in_sample"].estimate > chrf["raw"].estimate
    for entry in result["metrics"].values():
        cv = entry["cv"]
        assert set(cv.systems["fold"]) == set(range(5))
        assert cv.systems[["lgn", "anchored"]].notna().all().all()
        for acc in cv.accuracy.values():
            assert acc.ci_low <= acc.estimate <= acc.ci_high


def test_lgn_of_system_chrf_loses_against_raw_da(study, result):
    # raw DA keeps each lp's level, which LGN removes from the metric: the sign flips vs DA z
    raw_da = result["system_raw_da"].comparisons["lgn"].difference
    assert raw_da.estimate < 0
    assert result["metrics"]["chrF"]["cv"].comparisons["lgn"].difference.estimate > 0
    # lp differences of raw DA are small in segment sd (the validity check passes) but large in
    # system sd (more than one pooled within-lp sd of system scores)
    assert result["validity"]["human_raw"].status == "holds"
    d_sys, points = study.raw_da_gap(result["systems"])
    means = result["systems"].groupby("lp")["human_raw"].mean()
    assert points == pytest.approx(means.max() - means.min()) and d_sys > 1


def test_sentence_chrf_agrees_with_da_as_the_data_readme_says(result):
    within = result["segments"]["metrics"]["chrF"]["within_pearson"]
    assert within == pytest.approx(README_CHRF_R, abs=6e-4)


def test_segment_level_signs(result):
    seg = result["segments"]
    assert seg["n_judged"] < seg["n_rows"] == 121_842
    for name, m in seg["metrics"].items():
        pearson, raw_da = m["pearson"], m["pearson_raw_da"]
        assert pearson["r"]["raw"].ci_low > 0, name  # sentence metrics agree (weakly) with DA
        # per-lp z-scoring aligns the metric with DA z's per-annotator standardisation ...
        assert pearson["minus_raw"]["lgn"].estimate > 0, name
        # ... and moves it away from raw DA
        assert raw_da["minus_raw"]["lgn"].estimate < 0, name
        for v in m["kendall"]:
            assert 0 < m["kendall"][v].estimate < pearson["r"][v].estimate, (name, v)
        # system means of out-of-fold LGN segments order cross-lp system pairs better than raw means
        assert m["systems"].n_systems == 100
        assert m["systems"].comparisons[0].difference.estimate > 0, name
        acc = m["accuracy"]
        for v, point in acc["point"].items():
            # the document-weighted formula at weight 1 is the engine's acc23
            assert acc["ci"][v].estimate == pytest.approx(point.estimate, abs=1e-12)
            assert acc["ci"][v].ci_low <= point.estimate <= acc["ci"][v].ci_high
            assert point.pairs == "cross" and point.n_pairs == acc["n_pairs"]


def test_doc_weighted_accuracy_equals_acc23_on_the_expanded_resample(study):
    rng = np.random.default_rng(3)
    n, n_docs = 40, 8
    doc = rng.integers(0, n_docs, n)
    lp = np.where(doc < 4, "a-en", "b-en")
    human, metric = rng.normal(size=n).round(1), rng.normal(size=n).round(1)
    eps = 0.15
    iu, ju = np.triu_indices(n, k=1)
    cross = lp[iu] != lp[ju]
    iu, ju = iu[cross], ju[cross]
    dm, dh = metric[iu] - metric[ju], human[iu] - human[ju]
    hit = ((np.abs(dm) > eps) & (dh != 0) & (np.sign(dm) == np.sign(dh))) | ((np.abs(dm) <= eps) & (dh == 0))
    correct = study._doc_pair_counts(hit.astype(float), doc[iu], doc[ju], n_docs)
    totals = study._doc_pair_counts(np.ones(len(iu)), doc[iu], doc[ju], n_docs)
    drawn = np.array([0, 0, 2, 3, 5, 5, 5, 7])
    rows = np.concatenate([np.flatnonzero(doc == d) for d in drawn])
    expanded = pairwise_accuracy(metric[rows], human[rows], groups=lp[rows], pairs="cross", epsilon=eps)
    assert study.doc_weighted_accuracy(correct, totals, drawn) == pytest.approx(expanded.estimate, abs=1e-12)


def test_render_has_every_section(study, result):
    text = study.render(result, "test")
    for heading in ("## BLEU", "## chrF", "## COMET", "## chrF against raw DA", "# Segment level",
                    "## Sentence chrF", "## Sentence BLEU", "Validity check", "# Reading"):
        assert heading in text
    assert not re.search(r"\bnan\b", text, flags=re.IGNORECASE)
