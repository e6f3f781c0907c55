"""Embedding cosine via sentence-transformers, checked against a hand computation from hidden states."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
st = importorskip_lazy("sentence_transformers", reason="needs the neural extra (sentence-transformers)")

from _tiny_models import build_tiny_encoder  # noqa: E402
from xleval.exceptions import InputError  # noqa: E402
from xleval.metrics import get_metric  # noqa: E402
from xleval.metrics._embed import EmbeddingCosine  # noqa: E402

HYPS = ["The cat sat on the mat.", "Weather nice.", "猫坐在垫子上。", "Die Katze sitzt."]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "今天天气很好。", "Die Katze sitzt auf der Matte."]
SRCS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "猫坐在垫子上。", "Кошка сидит."]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return build_tiny_encoder(tmp_path_factory.mktemp("embed") / "enc", kind="bert")


def _mean_pooled(model_dir, texts):
    """Mean of the last hidden states over non-padding tokens, one sentence at a time (no padding)."""
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()
    out = []
    with torch.no_grad():
        for text in texts:
            enc = tok(text, return_tensors="pt")
            out.append(model(**enc).last_hidden_state[0].double().mean(dim=0).numpy())
    return np.vstack(out)


def _cosine(a, b):
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_cosine_equals_hand_computation_from_hidden_states(encoder):
    ours = get_metric(f"embed:{encoder}", batch_size=3).sentence_scores(HYPS, REFS)
    expected = _cosine(_mean_pooled(encoder, HYPS), _mean_pooled(encoder, REFS))
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-5)
    assert ours[np.argmax(ours)] <= 1.0 + 1e-9


def test_against_source_and_best_of_several_references(encoder):
    src_metric = EmbeddingCosine(encoder, against="src")
    assert src_metric.needs_srcs and not src_metric.needs_refs and "against:src" in src_metric.signature
    expected = _cosine(_mean_pooled(encoder, HYPS), _mean_pooled(encoder, SRCS))
    np.testing.assert_allclose(src_metric.sentence_scores(HYPS, srcs=SRCS), expected, rtol=0, atol=1e-5)
    both = EmbeddingCosine(encoder).sentence_scores(HYPS, [REFS, SRCS])
    ref_only = EmbeddingCosine(encoder).sentence_scores(HYPS, REFS)
    np.testing.assert_allclose(both, np.maximum(ref_only, expected), rtol=0, atol=1e-5)


def test_sentence_transformers_directory_keeps_its_pooling(encoder, tmp_path):
    try:  # sentence-transformers >= 6 moved the module classes
        from sentence_transformers.sentence_transformer import modules as st_modules
    except ImportError:
        from sentence_transformers import models as st_modules
    modules = [st_modules.Transformer(str(encoder)), st_modules.Pooling(32, pooling_mode="cls")]
    st.SentenceTransformer(modules=modules, device="cpu").save(str(tmp_path / "st-cls"))
    metric = EmbeddingCosine(tmp_path / "st-cls")
    assert "pool:cls" in metric.signature
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(encoder)
    model = AutoModel.from_pretrained(encoder).eval()
    with torch.no_grad():
        cls = lambda texts: np.vstack(  # noqa: E731
            [model(**tok(t, return_tensors="pt")).last_hidden_state[0, 0].double().numpy() for t in texts]
        )
        expected = _cosine(cls(HYPS), cls(REFS))
    np.testing.assert_allclose(metric.sentence_scores(HYPS, REFS), expected, rtol=0, atol=1e-5)


def test_signature_batch_independence_and_validation(encoder):
    metric = EmbeddingCosine(encoder)
    assert metric.signature.startswith("model:enc|pool:mean|against:ref|prec:fp32|sentence-transformers:")
    a = EmbeddingCosine(encoder, batch_size=1).sentence_scores(HYPS, REFS)
    np.testing.assert_allclose(a, metric.sentence_scores(HYPS, REFS), rtol=0, atol=1e-5)
    with pytest.raises(InputError, match="against"):
        EmbeddingCosine(encoder, against="hyp")
    with pytest.raises(InputError, match="needs references"):
        metric.sentence_scores(HYPS)
    assert metric.corpus_score(HYPS, REFS) == pytest.approx(a.mean(), abs=1e-6)
