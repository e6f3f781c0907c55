"""BERTScore adapter == bert_score.BERTScorer called directly, with a tiny local encoder."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
bert_score = importorskip_lazy("bert_score", reason="needs the neural extra (bert-score)")

from _tiny_models import build_tiny_encoder  # noqa: E402
from xleval.exceptions import InputError  # noqa: E402
from xleval.metrics import get_metric  # noqa: E402
from xleval.metrics._bertscore import BERTScore  # noqa: E402

HYPS = ["The cat sat on the mat.", "Weather nice.", "猫坐在垫子上。", "Die Katze sitzt.", "The quick fox"]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "今天天气很好。", "Die Katze sitzt auf der Matte.",
        "A quick brown fox"]
REFS2 = ["A cat sat on a mat.", "Nice weather.", "猫坐在垫子上。", "Le chat est assis.", "The lazy dog"]


@pytest.fixture(scope="module", params=["bert", "xlm-roberta"])
def encoder(request, tmp_path_factory):
    return build_tiny_encoder(tmp_path_factory.mktemp(request.param) / "enc", kind=request.param)


@pytest.mark.parametrize("part,index", [("precision", 0), ("recall", 1), ("f1", 2)])
def test_equals_bert_score_directly(encoder, part, index):
    ours = get_metric(f"bertscore:{encoder}", part=part, batch_size=2).sentence_scores(HYPS, REFS)
    theirs = bert_score.BERTScorer(model_type=str(encoder), num_layers=2).score(HYPS, REFS)[index]
    np.testing.assert_allclose(ours, theirs.double().numpy(), rtol=0, atol=1e-6)


def test_lower_layer_and_multiple_references(encoder):
    scorer = bert_score.BERTScorer(model_type=str(encoder), num_layers=1)
    ours = BERTScore(encoder, num_layers=1).sentence_scores(HYPS, [REFS, REFS2])
    theirs = scorer.score(HYPS, [[a, b] for a, b in zip(REFS, REFS2, strict=True)])[2]
    np.testing.assert_allclose(ours, theirs.double().numpy(), rtol=0, atol=1e-6)
    single = BERTScore(encoder, num_layers=1).sentence_scores(HYPS, REFS)
    assert np.all(ours >= single - 1e-9)  # best of two references is at least the first one
    assert "layer:1|part:f1|idf:no|rescale:no" in BERTScore(encoder, num_layers=1).signature


def test_identical_text_scores_one_and_empty_hypothesis_zero(encoder, capfd):
    scores = BERTScore(encoder).sentence_scores(["The cat sat on the mat.", ""], ["The cat sat on the mat.", "x"])
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[1] == 0.0  # bert_score's rule for an empty candidate
    assert capfd.readouterr().err == ""  # bert_score's stderr warning is turned into a log record


def test_batch_size_does_not_change_scores(encoder):
    a = BERTScore(encoder, batch_size=1).sentence_scores(HYPS, REFS)
    b = BERTScore(encoder, batch_size=64).sentence_scores(HYPS, REFS)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_validation_and_stats(encoder):
    with pytest.raises(InputError, match="num_layers"):
        BERTScore(encoder, num_layers=7)
    with pytest.raises(InputError, match="part"):
        BERTScore(encoder, part="f2")
    with pytest.raises(InputError, match="batch_size"):
        BERTScore(encoder, batch_size=0)
    with pytest.raises(InputError, match="device"):
        BERTScore(encoder, device="gpu0")
    with pytest.raises(InputError, match="fp16"):
        BERTScore(encoder, precision="fp16")
    metric = BERTScore(encoder)
    stats = metric.sentence_stats(HYPS, REFS)
    np.testing.assert_array_equal(stats[:, 1], 1.0)
    assert metric.corpus_score(HYPS, REFS) == pytest.approx(stats[:, 0].mean())


def test_missing_library_names_the_extra(encoder, monkeypatch):
    import sys

    from xleval.exceptions import MissingDependencyError

    monkeypatch.setitem(sys.modules, "bert_score", None)
    with pytest.raises(MissingDependencyError, match=r"xleval\[neural\]"):
        BERTScore(encoder).sentence_scores(HYPS, REFS)
