"""COMET adapter through unbabel-comet's real code path, on tiny checkpoints built here."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
comet = importorskip_lazy("comet", reason="needs unbabel-comet (make install-full installs it)")

from _tiny_models import build_tiny_comet, build_tiny_encoder  # noqa: E402
from xleval.exceptions import InputError  # noqa: E402
from xleval.metrics import get_metric  # noqa: E402
from xleval.metrics._comet import COMET, _transformers5_compat  # noqa: E402

SRCS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "猫坐在垫子上。", "x", "Le chat"]
HYPS = ["The cat sat on the mat.", "Weather nice.", "The cat sits on the mat.", "", "The cat is sitting"]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "A cat sat on the mat.", "y", "The cat"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("comet")
    encoder = build_tiny_encoder(root / "encoder", kind="xlm-roberta")
    return {kind: build_tiny_comet(root / kind, encoder, kind=kind) for kind in ("regression", "qe", "unified")} | {
        "encoder": encoder
    }


def _direct(model_dir, samples, batch_size=8):
    """COMET's own API: load_from_checkpoint + predict (with the transformers-5 shims)."""
    model = comet.load_from_checkpoint(str(model_dir / "checkpoints" / "model.ckpt"), local_files_only=True)
    _transformers5_compat(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lightning/torch deprecation chatter
        return np.asarray(model.predict(samples, batch_size=batch_size, gpus=0, progress_bar=False).scores), model


def test_reference_based_equals_comet_predict(models):
    metric = get_metric(f"comet:{models['regression']}", batch_size=2)
    ours = metric.sentence_scores(HYPS, REFS, SRCS)
    samples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(SRCS, HYPS, REFS, strict=True)]
    theirs, _ = _direct(models["regression"], samples)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    assert metric.corpus_score(HYPS, REFS, SRCS) == pytest.approx(float(np.mean(theirs)), abs=1e-6)


def test_reference_based_pairs_src_mt_ref_like_comets_estimator(models):
    """Score one segment at a time from COMET's sentence embeddings + estimator (no batching, no sorting)."""
    metric = COMET(models["regression"], batch_size=3)
    ours = metric.sentence_scores(HYPS, REFS, SRCS)
    _, model = _direct(models["regression"], [{"src": "a", "mt": "b", "ref": "c"}])
    tok = model.encoder.tokenizer

    def emb(text):
        enc = tok([text], return_tensors="pt")
        return model.get_sentence_embedding(enc["input_ids"], enc["attention_mask"])

    with torch.no_grad():
        by_hand = [float(model.estimate(emb(s), emb(h), emb(r)).score)
                   for s, h, r in zip(SRCS, HYPS, REFS, strict=True)]
    np.testing.assert_allclose(ours, by_hand, rtol=0, atol=1e-5)
    # swapping hypothesis and reference changes the number (the features are asymmetric)
    assert not np.allclose(metric.sentence_scores(REFS, HYPS, SRCS), ours, atol=1e-6)


def test_batch_size_and_order_do_not_change_scores(models):
    one = COMET(models["regression"], batch_size=1).sentence_scores(HYPS, REFS, SRCS)
    many = COMET(models["regression"], batch_size=16).sentence_scores(HYPS, REFS, SRCS)
    np.testing.assert_allclose(one, many, rtol=0, atol=1e-5)
    perm = np.array([3, 0, 4, 1, 2])
    permuted = COMET(models["regression"]).sentence_scores(
        [HYPS[i] for i in perm], [REFS[i] for i in perm], [SRCS[i] for i in perm]
    )
    np.testing.assert_allclose(permuted, many[perm], rtol=0, atol=1e-5)


def test_qe_model_needs_no_reference(models):
    metric = COMET(models["qe"])
    assert not metric.needs_refs and "refs:no" in metric.signature
    ours = metric.sentence_scores(HYPS, srcs=SRCS)
    theirs, _ = _direct(models["qe"], [{"src": s, "mt": h} for s, h in zip(SRCS, HYPS, strict=True)])
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    with pytest.raises(InputError, match="reference-free"):
        COMET(models["qe"], use_refs=True)


def test_unified_model_with_and_without_references(models):
    with_refs = COMET(models["unified"])
    qe = COMET(models["unified"], use_refs=False)
    assert with_refs.needs_refs and not qe.needs_refs
    assert "refs:yes" in with_refs.signature and "refs:no" in qe.signature
    triples = [{"src": s, "mt": h, "ref": r} for s, h, r in zip(SRCS, HYPS, REFS, strict=True)]
    theirs_ref, _ = _direct(models["unified"], triples)
    theirs_qe, _ = _direct(models["unified"], [{"src": s, "mt": h} for s, h in zip(SRCS, HYPS, strict=True)])
    np.testing.assert_allclose(with_refs.sentence_scores(HYPS, REFS, SRCS), theirs_ref, rtol=0, atol=1e-6)
    np.testing.assert_allclose(qe.sentence_scores(HYPS, srcs=SRCS), theirs_qe, rtol=0, atol=1e-6)


def test_transformers5_shims_restore_the_v4_tuple(models):
    _, model = _direct(models["regression"], [{"src": "a", "mt": "b", "ref": "c"}])
    hf = model.encoder.model
    enc = model.encoder.tokenizer(["The cat sat."], return_tensors="pt")
    with torch.no_grad():
        full = hf(**enc, output_hidden_states=True, return_dict=True)
        last, pooler, layers = hf(**enc, output_hidden_states=True, return_dict=False)
    assert pooler is None  # COMET's XLM-R has no pooler
    torch.testing.assert_close(last, full.last_hidden_state)
    assert len(layers) == len(full.hidden_states) == 3
    tok = model.encoder.tokenizer
    assert tok.build_inputs_with_special_tokens([7, 8], [9]) == [tok.cls_token_id, 7, 8, tok.sep_token_id,
                                                                 tok.sep_token_id, 9, tok.sep_token_id]


def test_signature_stats_and_validation(models):
    metric = COMET(models["regression"])
    sig = metric.signature
    assert sig.startswith("model:regression|class:regression_metric|refs:yes|prec:fp32|unbabel-comet:")
    assert "transformers:" in sig and "|xleval:" in sig
    stats = metric.sentence_stats(HYPS, REFS, SRCS)
    assert stats.shape == (len(HYPS), 2) and np.all(stats[:, 1] == 1)
    assert metric.score_from_stats(stats.sum(axis=0)) == pytest.approx(stats[:, 0].mean())
    with pytest.raises(InputError, match="needs sources"):
        metric.sentence_scores(HYPS, REFS)
    with pytest.raises(InputError, match="needs references"):
        metric.sentence_scores(HYPS, srcs=SRCS)
    with pytest.raises(InputError, match="one reference"):
        metric.sentence_scores(HYPS, [REFS, REFS], SRCS)
    with pytest.raises(InputError, match="not a COMET model directory"):
        COMET(models["encoder"])
    with pytest.raises(InputError, match="needs references"):
        COMET(models["regression"], use_refs=False)
    assert metric.sentence_scores([], [], []).shape == (0,)


def test_encoder_path_override_loads_the_local_encoder(models, tmp_path):
    # the checkpoint names an encoder that does not exist here; encoder_path supplies it
    import shutil

    import yaml

    moved = tmp_path / "moved"
    shutil.copytree(models["regression"], moved)
    ckpt = torch.load(moved / "checkpoints" / "model.ckpt", weights_only=False)
    ckpt["hyper_parameters"]["pretrained_model"] = "no-such-org/xlm-roberta-large"
    torch.save(ckpt, moved / "checkpoints" / "model.ckpt")
    hp = yaml.safe_load((moved / "hparams.yaml").read_text())
    hp["pretrained_model"] = "no-such-org/xlm-roberta-large"
    (moved / "hparams.yaml").write_text(yaml.safe_dump(hp))
    ours = COMET(moved, encoder_path=models["encoder"]).sentence_scores(HYPS, REFS, SRCS)
    np.testing.assert_allclose(ours, COMET(models["regression"]).sentence_scores(HYPS, REFS, SRCS), atol=1e-6)
