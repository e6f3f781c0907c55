"""[data] The WMT21 study (examples/wmt21_study.py, a thin user of `calibrate evaluate`) on the shared
data: xleval's corpus scores equal the organisers', the DA mapping checks out against the data
README, and the study's findings hold (with few repeats, so with margins)."""
import importlib.util
import re

import numpy as np
import pytest

from conftest import REPO, require_data

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
def result(study, tmp_path_factory):
    root = require_data("wmt21", "segments.parquet").parents[1]
    require_data("wmt21", "mqm_newstest2021.parquet")
    return study.run_study(root, repeats=2, n_resamples=100, budgets=(100,), protocol_draws=4,
                           tables_dir=tmp_path_factory.mktemp("wmt21"))


def test_corpus_scores_from_segments_equal_the_organisers(result):
    systems = result["tables"]["systems"]
    assert len(systems) == 100 and systems["lp"].nunique() == 7
    np.testing.assert_allclose(systems["bleu"], systems["bleu_refA"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(systems["chrf"], systems["chrf_refA"], rtol=0, atol=1e-6)
    assert (systems["n"] == systems["lp"].map({"zh-en": 1948, "ja-en": 1005, "ha-en": 997}).fillna(1000)).all()
    assert result["within_r"] == pytest.approx(README_CHRF_R, abs=6e-4)
    assert len(result["tables"]["mqm"]) == 9416  # every MQM row joins a scored segment (data README, section 3)


def test_reference_claim_and_lgn_shrinkage_of_a_system_table(result):
    chrf_z = result["lgn_system_table"][("chrf", "human_z")]
    # in-sample per-lp z-score of system chrF against DA z: about 0.64 -> about 0.70
    assert chrf_z["raw"] == pytest.approx(0.64, abs=0.01) and chrf_z["min_count=1"] == pytest.approx(0.70, abs=0.01)
    # LGN's row default (50) shrinks every lp of a system table: the result moves away from plain LGN
    for human in ("human_z", "human_raw"):
        row = result["lgn_system_table"][("chrf", human)]
        assert abs(row["min_count=50"] - row["min_count=1"]) > 0.03


def test_against_raw_da_anchored_beats_lgn_and_keeps_up_with_raw(result):
    ev = next(iter(result["evaluations"].values()))  # sentence chrF against raw DA
    acc = {v.name: v.accuracy.estimate for v in ev.variants}
    assert acc["lgn"] < acc["raw"] - 0.1 < acc["anchored"] - 0.1
    k100 = (acc["anchored@100 spread"] + acc["anchored@100 random"]) / 2
    assert k100 > acc["lgn"] + 0.12 and k100 > acc["raw"] - 0.03
    assert ev.recommended == "anchored" and ev.human_direction == 1


def test_against_mqm_anchored_orders_the_pairs(result):
    ev = list(result["evaluations"].values())[3]
    assert ev.human_direction == -1 and ev.direction_source == "data"  # MQM: higher is worse, found in the data
    assert ev.variant("raw").accuracy.estimate < 0.3
    assert min(ev.variant("anchored@100 spread").runs + ev.variant("anchored@100 random").runs) >= 0.85


def test_default_fit_apply_path(result):
    raw_da, mqm = result["protocol"]["raw DA"], result["protocol"]["MQM"]
    assert raw_da["anchored"].mean() >= raw_da["raw"] - 0.02 and raw_da["anchored"].mean() > raw_da["lgn"] + 0.1
    assert mqm["anchored"].min() >= 0.85


def test_validity_verdicts(result):
    validity = result["validity"]
    assert validity["raw_standardised"].status == "uninformative"
    assert validity["human_raw"].status == "violated" and validity["human_raw"].reason.startswith(
        "violated at system level (the worse of the two; segment level: holds)")


def test_render_has_every_section(study, result):
    text = study.render(result, "test")
    for heading in ("## Sentence chrF against raw DA", "## Sentence chrF against expert MQM", "## System tables",
                    "## The fit-and-apply path", "## LGN of a system table", "## Validity check", "# Reading",
                    "xleval calibrate evaluate"):
        assert heading in text
    assert not re.search(r"\bnan\b", text, flags=re.IGNORECASE)
