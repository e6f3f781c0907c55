"""`xleval score --metric bertscore:PATH` passes batch size/device through and stores the model's signature."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
importorskip_lazy("torch", reason="needs the neural extra (torch)")
bert_score = importorskip_lazy("bert_score", reason="needs the neural extra (bert-score)")

from _tiny_models import build_tiny_encoder  # noqa: E402
from xleval.io import read_table_metadata  # noqa: E402


def test_score_cli_with_a_local_bertscore_model(tmp_path, cli):
    encoder = build_tiny_encoder(tmp_path / "enc", kind="bert")
    df = pd.DataFrame({"lp": ["en-de", "en-de", "en-zh"], "hypothesis": ["Die Katze sitzt.", "Wetter gut.", "猫坐着。"],
                       "reference": ["Die Katze sitzt auf der Matte.", "Das Wetter ist gut.", "猫坐在垫子上。"]})
    df.to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    out = tmp_path / "out.parquet"
    rc, stdout, err = cli("score", tmp_path / "in.tsv", "--metric", f"bertscore:{encoder}", "--batch-size", "2",
                          "--device", "cpu", "-o", out, "--format", "json")
    assert rc == 0, err
    scored = pd.read_parquet(out)
    theirs = bert_score.BERTScorer(model_type=str(encoder), num_layers=2).score(df["hypothesis"].tolist(),
                                                                                   df["reference"].tolist())[2]
    np.testing.assert_allclose(scored["bertscore"], theirs.double().numpy(), atol=1e-6)
    signature = read_table_metadata(out)["signatures"]["bertscore"]
    assert "enc" in signature and "fp32" in signature
    json.loads(stdout)  # the corpus table is valid JSON
    assert cli("score", tmp_path / "in.tsv", "--metric", f"bertscore:{encoder}", "--batch-size", "0").exit_code == 2
