"""Review of the neural adapters (s11): long inputs truncated where the position embeddings end, T5 encoders for
embed, device strings as parsed, unread inputs ignored (and kept out of the cache key). Oracles: bert_score,
sentence-transformers and unbabel-comet run on the same tiny models."""
from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
bert_score = importorskip_lazy("bert_score", reason="needs the neural extra (bert-score)")
st = importorskip_lazy("sentence_transformers", reason="needs the neural extra (sentence-transformers)")
comet = importorskip_lazy("comet", reason="needs unbabel-comet (make install-full installs it)")

from _tiny_models import build_tiny_comet, build_tiny_encoder, build_tiny_mt5_tokenizer  # noqa: E402
from xleval.metrics import get_metric  # noqa: E402
from xleval.metrics._comet import _transformers5_compat  # noqa: E402
from xleval.metrics._neural import NeuralMetric  # noqa: E402

# far longer than the tiny models' 128 positions
LONG_H = " ".join(["The cat sat on the mat.", "Die Katze sitzt auf der Matte."] * 60)
LONG_R = " ".join(["A quick brown fox jumps over the lazy dog.", "Le chat est assis sur le tapis."] * 60)
HYPS = ["The cat sat on the mat.", LONG_H, "Das Wetter ist heute schön."]
REFS = ["The cat sits on the mat.", LONG_R, "Il fait beau aujourd'hui."]
SRCS = ["Die Katze sitzt auf der Matte.", LONG_R, "Сегодня хорошая погода."]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("review")
    out = {kind: build_tiny_encoder(root / kind, kind=kind) for kind in ("bert", "xlm-roberta")}
    for kind in ("bert", "xlm-roberta"):  # the same model, its tokenizer_config.json saying no model_max_length
        copy = shutil.copytree(out[kind], root / f"{kind}-nomax")
        config = json.loads((copy / "tokenizer_config.json").read_text())
        assert config.pop("model_max_length") == 128  # = what the tiny models' positions hold
        (copy / "tokenizer_config.json").write_text(json.dumps(config))
        out[f"{kind}-nomax"] = copy
    return out


def _cosines(model, a, b):
    x, y = model.encode(a, convert_to_numpy=True).astype(np.float64), model.encode(b, convert_to_numpy=True)
    return np.sum(x * y, axis=1) / np.linalg.norm(x, axis=1) / np.linalg.norm(y, axis=1)


@pytest.mark.parametrize("kind", ["bert", "xlm-roberta"])
def test_bertscore_truncates_at_the_position_table_without_model_max_length(models, kind):
    # bert-base-multilingual-cased's tokenizer_config.json has no model_max_length: bert_score then truncates
    # at 10**30 (OverflowError); the oracle is bert_score on the same model whose tokenizer says 128
    ours = get_metric(f"bertscore:{models[f'{kind}-nomax']}").sentence_scores(HYPS, REFS)
    theirs = bert_score.BERTScorer(model_type=str(models[kind]), num_layers=2).score(HYPS, REFS)[2]
    np.testing.assert_allclose(ours, theirs.double().numpy(), rtol=0, atol=1e-6)


def test_embed_xlmr_without_model_max_length_truncates_at_its_512_of_514(models):
    # sentence-transformers takes max_position_embeddings (130) for XLM-R, 2 past its positions: index error
    ours = get_metric(f"embed:{models['xlm-roberta-nomax']}").sentence_scores(HYPS, REFS)
    oracle = st.SentenceTransformer(str(models["xlm-roberta"]), device="cpu")
    assert oracle.max_seq_length == 128
    np.testing.assert_allclose(ours, _cosines(oracle, HYPS, REFS), rtol=0, atol=1e-5)


def _t5_encoder(folder, num_layers: int):
    """A tiny T5EncoderModel folder (sentence-T5 / GTR hold one: no decoder, embed_tokens tied to shared)."""
    from transformers import T5Config, T5EncoderModel

    folder = build_tiny_mt5_tokenizer(folder)
    config = T5Config(vocab_size=500, d_model=16, d_kv=4, d_ff=32, num_layers=num_layers, num_heads=2,
                      relative_attention_num_buckets=8, dropout_rate=0.0, pad_token_id=0, eos_token_id=1)
    torch.manual_seed(0)
    T5EncoderModel(config).eval().save_pretrained(folder)
    return folder


def test_embed_reads_a_t5_encoder_folder(tmp_path):
    # sentence-T5 / GTR folders hold a T5EncoderModel: no decoder, embed_tokens tied to shared (stored once)
    from safetensors.torch import load_file, save_file

    from xleval.exceptions import ModelFileError

    folder = _t5_encoder(tmp_path / "t5-encoder", num_layers=1)
    ours = get_metric(f"embed:{folder}").sentence_scores(HYPS, REFS)
    oracle = st.SentenceTransformer(str(folder), device="cpu")
    np.testing.assert_allclose(ours, _cosines(oracle, HYPS, REFS), rtol=0, atol=1e-5)
    # ... while an encoder weight missing from the file is still refused (it would be random)
    weights = load_file(folder / "model.safetensors")
    del weights["encoder.block.0.layer.1.DenseReluDense.wo.weight"]
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ModelFileError, match=r"DenseReluDense\.wo\.weight"):
        get_metric(f"embed:{folder}").sentence_scores(HYPS[:1], REFS[:1])


def test_device_with_spaces_runs_on_that_device(models, tmp_path):
    # parse_devices accepts ' cpu ' (it strips); the raw string then reached torch ("Invalid device string",
    # reported as a damaged model folder) and COMET's Lightning (a GPU accelerator: "No supported gpu backend")
    want = bert_score.BERTScorer(model_type=str(models["bert"]), num_layers=2).score(HYPS, REFS)[2].double().numpy()
    metric = get_metric(f"bertscore:{models['bert']}", device=" cpu ")
    assert metric.device == "cpu"
    np.testing.assert_allclose(metric.sentence_scores(HYPS, REFS), want, rtol=0, atol=1e-6)
    model_dir = build_tiny_comet(tmp_path / "comet", models["xlm-roberta"], kind="qe")
    samples = [{"src": s, "mt": h} for s, h in zip(SRCS, HYPS, strict=True)]
    direct = comet.load_from_checkpoint(str(model_dir / "checkpoints" / "model.ckpt"), local_files_only=True)
    _transformers5_compat(direct)  # COMET 2.2.7 on transformers 5 (tests/test_neural_comet.py checks the shims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lightning/torch deprecation chatter
        theirs = np.asarray(direct.predict(samples, batch_size=8, gpus=0, progress_bar=False).scores)
    ours = get_metric(f"comet:{model_dir}", device="cpu ").sentence_scores(HYPS, None, SRCS)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)


def test_cli_device_with_spaces(models, tmp_path, cli):
    pd.DataFrame({"hypothesis": HYPS, "reference": REFS}).to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    rc, _, err = cli("score", tmp_path / "in.tsv", "-m", f"bertscore:{models['bert']}", "--device", " cpu",
                     "-o", tmp_path / "out.tsv")
    assert rc == 0, err


def test_a_reference_free_metric_ignores_references_with_gaps(models):
    # docs/neural.md: references given to a metric that does not read them are ignored, not refused
    refs = [["a reference", None, "another"]]
    ours = get_metric(f"embed:{models['bert']}", against="src").sentence_scores(HYPS, refs, SRCS)
    oracle = st.SentenceTransformer(str(models["bert"]), device="cpu")
    np.testing.assert_allclose(ours, _cosines(oracle, HYPS, SRCS), rtol=0, atol=1e-5)


def test_the_cache_key_holds_only_what_the_metric_reads(models, tmp_path, monkeypatch):
    # BERTScore reads no source: rows cached with a source column are the same rows without one
    cache = tmp_path / "bertscore.sqlite"
    first = get_metric(f"bertscore:{models['bert']}", cache=cache).sentence_scores(HYPS, REFS, SRCS)

    def no_model(*args, **kwargs):
        raise AssertionError("the model ran on rows that are in the cache")

    monkeypatch.setattr(NeuralMetric, "_score_now", no_model)
    again = get_metric(f"bertscore:{models['bert']}", cache=cache).sentence_scores(HYPS, REFS)
    np.testing.assert_array_equal(again, first)


def test_identity_sees_a_file_rewritten_in_place_with_its_old_mtime(tmp_path, monkeypatch):
    # `cp -p` of another same-size checkpoint onto the file: same inode, size and modification time, new bytes;
    # in one process (a notebook) the old identity was kept, so the score cache served the old model's scores
    import hashlib
    import os

    from xleval.metrics._model_files import model_identity

    monkeypatch.setenv("XLEVAL_CACHE_DIR", "none")
    weights = tmp_path / "model" / "model.safetensors"
    weights.parent.mkdir()
    weights.write_bytes(b"A" * 64)
    before = weights.stat()
    first = model_identity(weights.parent)
    with open(weights, "r+b") as fh:
        fh.write(b"B" * 64)
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert weights.stat().st_ino == before.st_ino and weights.stat().st_mtime_ns == before.st_mtime_ns
    # oracle: the documented identity, sha256 over each file's relative name, size and bytes
    inner = hashlib.sha256(b"model.safetensors\x0064\x00" + b"B" * 64).hexdigest()
    assert model_identity(weights.parent) == hashlib.sha256(inner.encode()).hexdigest() != first


def test_bertscore_reads_a_t5_encoder_folder(tmp_path):
    # T5's config.json counts its layers as num_layers; bert_score scores T5 encoders (its own model list has
    # t5-base); the folder was refused as "num_hidden_layers is None ... download the model again"

    folder = _t5_encoder(tmp_path / "t5-encoder", num_layers=2)
    metric = get_metric(f"bertscore:{folder}", num_layers=1)
    theirs = bert_score.BERTScorer(model_type=str(folder), num_layers=1).score(HYPS, REFS)[2]
    np.testing.assert_allclose(metric.sentence_scores(HYPS, REFS), theirs.double().numpy(), rtol=0, atol=1e-6)
    assert "layer:1|" in metric.signature and get_metric(f"bertscore:{folder}").num_layers == 2


def test_a_lone_surrogate_is_one_line_naming_the_row(models, tmp_path):
    # text decoded with errors="surrogateescape": the tokenizers raised a TypeError, the cache a UnicodeEncodeError
    from xleval.exceptions import InputError

    refs = ["a b", "a \udc80 b"]
    for cache in (None, tmp_path / "c.sqlite"):
        with pytest.raises(InputError, match=r"refs\[0\]\[1\] holds a lone surrogate"):
            get_metric(f"bertscore:{models['bert']}", cache=cache).sentence_scores(["a b", "x"], refs)


def test_a_cache_kept_in_the_model_folder_is_hit_on_the_next_run(models, tmp_path, monkeypatch):
    # the cache file counted as a model file: the identity (sha256 in the signature) changed once it was written,
    # so the next run had another signature, another cache file, and scored every row again
    monkeypatch.setenv("XLEVAL_CACHE_DIR", "none")
    folder = shutil.copytree(models["bert"], tmp_path / "bert")
    first = get_metric(f"bertscore:{folder}", cache=folder)
    scores = first.sentence_scores(HYPS, REFS)
    monkeypatch.setattr(NeuralMetric, "_score_now", lambda *a, **k: pytest.fail("the model ran on cached rows"))
    again = get_metric(f"bertscore:{folder}", cache=folder)
    assert again.signature == first.signature
    np.testing.assert_array_equal(again.sentence_scores(HYPS, REFS), scores)
