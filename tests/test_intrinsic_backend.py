"""The transformers scoring backend against a hand computation from the model's logits."""
from __future__ import annotations

import math

import numpy as np
import pytest

from _tiny_models import build_tiny_gpt2
from conftest import importorskip_lazy
from xleval.exceptions import InputError
from xleval.intrinsic import LMScorer, score_texts

importorskip_lazy("torch")
importorskip_lazy("transformers")
pytestmark = pytest.mark.neural
TEXTS = ["The cat sat on the mat.", "猫坐在垫子上。", "Кошка", "a"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny_gpt2(tmp_path_factory.mktemp("gpt2")))


def _hand_nll(path, text, bos):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    lm = AutoModelForCausalLM.from_pretrained(path).eval()
    ids = ([tok.bos_token_id] if bos else []) + tok.encode(text, add_special_tokens=False)
    with torch.no_grad():
        logits = lm(torch.tensor([ids])).logits[0].double()
    total = 0.0
    for t in range(1, len(ids)):  # token t is predicted from the logits at t-1, by a plain softmax
        row = logits[t - 1]
        total -= float(row[ids[t]] - torch.logsumexp(row, dim=0))
    return total, len(ids) - 1


@pytest.mark.parametrize("bos", ["prepend", "none"])
def test_summed_logprobs_equal_hand_computation(tiny, bos):
    df = score_texts(tiny, TEXTS, bos=bos, batch_size=3)  # batches mix lengths: padding must not leak
    for text, (_, row) in zip(TEXTS, df.iterrows(), strict=True):
        nll, tokens = _hand_nll(tiny, text, bos == "prepend")
        assert row["tokens"] == tokens
        assert row["nll"] == pytest.approx(nll, rel=1e-4, abs=1e-4)
    assert f"bos:{bos}" in df.attrs["signature"]


def test_batching_does_not_change_scores(tiny):
    a = score_texts(tiny, TEXTS, batch_size=1)
    b = score_texts(tiny, TEXTS, batch_size=4)
    np.testing.assert_allclose(a["nll"], b["nll"], rtol=1e-5, atol=1e-5)


def test_truncation_is_recorded(tiny):
    long = " ".join(["The cat sat on the mat."] * 30)
    df = score_texts(tiny, [long, "short"], max_length=8, bos="none")
    assert df["truncated"].tolist() == [True, False]
    assert df["tokens"].iloc[0] == 7
    assert df["bytes"].iloc[0] < len(long.encode())  # lengths of the text actually scored
    assert "maxlen:8" in df.attrs["signature"]


def test_one_token_text_without_bos_has_zero_scored_tokens(tiny):
    df = score_texts(tiny, ["a"], bos="none")
    assert df["tokens"].iloc[0] == 0 and df["nll"].iloc[0] == 0.0


def test_bad_options(tiny, tmp_path):
    with pytest.raises(InputError, match="bos"):
        LMScorer(tiny, bos="maybe")
    with pytest.raises(InputError, match="no such directory"):
        score_texts(str(tmp_path / "nope"), ["x"])
    assert math.isfinite(score_texts(tiny, ["Das Wetter"], progress=lambda n: None)["nll"].iloc[0])
