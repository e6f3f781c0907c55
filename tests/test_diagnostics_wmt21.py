"""[data] The WMT21 study runs on the shared data and reproduces the reference figure."""
import importlib.util

import pytest

from conftest import REPO, require_data

pytestmark = pytest.mark.data


def _study():
    spec = importlib.util.spec_from_file_location("wmt21_study", REPO / "examples" / "wmt21_study.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wmt21_study_runs_and_reproduces_in_sample_reference():
    root = require_data("wmt21", "systems.csv").parents[1]
    study = _study()
    result = study.run_study(root, n_resamples=100, repeats=1)
    assert result["n_systems"] == 100 and len(result["lps"]) == 7
    chrf = result["metrics"]["chrF"]["cv"].accuracy
    # the reference: per-lp z-score of system chrF, about 0.64 -> about 0.70
    assert chrf["raw"].estimate == pytest.approx(0.64, abs=0.01)
    assert chrf["lgn_in_sample"].estimate == pytest.approx(0.70, abs=0.01)
    for entry in result["metrics"].values():
        cv = entry["cv"]
        assert set(cv.systems["fold"]) == set(range(5))
        assert cv.systems[["lgn", "anchored"]].notna().all().all()
    text = study.render(result, "test")
    assert "## chrF" in text and "Validity check" in text
