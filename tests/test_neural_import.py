"""Importing xleval and listing/building neural metrics loads no heavy library."""
from __future__ import annotations

import json

import pytest

from import_check import loaded_by
from xleval.exceptions import InputError
from xleval.metrics import get_metric


def test_import_xleval_and_metrics_loads_no_torch():
    assert loaded_by("import xleval, xleval.metrics; xleval.metrics.available_metrics()") == []


def test_building_a_neural_metric_loads_no_torch(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 2}))
    code = (
        "from xleval.metrics import get_metric\n"
        f"m = get_metric('bertscore:{tmp_path}'); m.signature\n"
        f"e = get_metric('embed:{tmp_path}'); e.signature\n"
    )
    assert loaded_by(code) == []


@pytest.mark.parametrize("kind", ["comet", "bertscore", "embed"])
def test_missing_model_path_says_download_once(kind, tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(InputError, match=r"does not exist.*download it once and pass the directory"):
        get_metric(f"{kind}:{missing}")
