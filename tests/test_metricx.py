"""MetricX adapter on tiny MetricX-shaped checkpoints built here.

The oracle is a forward pass written in this file from MetricX's published formulation
(google-research/metricx, ``models.py`` and ``predict.py``; Juraska et al., WMT 2023/2024): the input text of
the variant, tokenised alone (no padding) by the ``tokenizers`` library, the final end-of-sequence token
dropped, the mT5 encoder, one decoder step from token id 0, the logit of entry 250089 (rescaled by
d_model**-0.5 first when the output projection is tied), clamped to [0, 25]. The output projection is read
from the checkpoint file and the tie flag from its config.json (transformers 5's MT5Config ties the output
projection to the embeddings in memory whatever the file says).
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
importorskip_lazy("transformers", reason="needs the neural extra (transformers)")

from _tiny_models import TINY_CORPUS, build_tiny_encoder, build_tiny_metricx, build_tiny_mt5_tokenizer  # noqa: E402
from xleval.exceptions import InputError  # noqa: E402
from xleval.metrics import get_metric  # noqa: E402
from xleval.metrics._metricx import MetricX  # noqa: E402

SRCS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "猫坐在垫子上。", "x", "Le chat est assis",
        "Кошка сидит на коврике."]
HYPS = ["The cat sat on the mat.", "Weather nice.", "The cat sits on the mat.", "", "The cat is sitting",
        "The cat sits on the rug, the weather is nice today, isn't it?"]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "A cat sat on the mat.", "y", "The cat",
        "A cat sits on the mat."]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("metricx")
    return {
        "tok": build_tiny_mt5_tokenizer(root / "mt5-tok"),
        "23": build_tiny_metricx(root / "metricx-23-tiny-v2p0", seed=1),
        "23-qe": build_tiny_metricx(root / "metricx-23-qe-tiny-v2p0", seed=2, tie=True),
        "24": build_tiny_metricx(root / "metricx-24-hybrid-tiny-v2p6", seed=3),
        "root": root,
    }


def _oracle(model_dir, tok_dir, texts, max_length=1536):
    """MetricX's formulation, one segment at a time."""
    from tokenizers import Tokenizer
    from transformers import MT5ForConditionalGeneration

    tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    tok.enable_truncation(max_length)
    from safetensors.torch import load_file

    net = MT5ForConditionalGeneration.from_pretrained(str(model_dir)).eval()
    tied = json.loads((model_dir / "config.json").read_text())["tie_word_embeddings"]
    weights = load_file(model_dir / "model.safetensors")
    projection = weights["shared.weight"] if tied else weights["lm_head.weight"]
    out = []
    with torch.no_grad():
        for text in texts:
            ids = tok.encode(text).ids
            assert ids[-1] == 1  # the end-of-sequence token ...
            ids = torch.tensor([ids[:-1]])  # ... which MetricX's predict.py removes
            enc = net.encoder(input_ids=ids).last_hidden_state
            dec = net.decoder(input_ids=torch.zeros((1, 1), dtype=torch.long), encoder_hidden_states=enc)
            h = dec.last_hidden_state[0, 0]
            if tied:
                h = h * net.config.d_model ** -0.5
            logit = float(h @ projection[250089])
            out.append(min(max(logit, 0.0), 25.0))
    return np.array(out)


FORMATS = {
    "23-ref": lambda h, r, s: f"candidate: {h} reference: {r}",
    "23-qe": lambda h, r, s: f"candidate: {h} source: {s}",
    "24-hybrid": lambda h, r, s: f"source: {s} candidate: {h} reference: {r}",
    "24-ref": lambda h, r, s: f"source:  candidate: {h} reference: {r}",
    "24-qe": lambda h, r, s: f"source: {s} candidate: {h}",
}
CHECKPOINT = {"23-ref": "23", "23-qe": "23-qe", "24-hybrid": "24", "24-ref": "24", "24-qe": "24"}


@pytest.mark.parametrize("variant", list(FORMATS))
def test_scores_equal_metricx_formulation(models, variant):
    model_dir = models[CHECKPOINT[variant]]
    metric = get_metric(f"metricx:{model_dir}", tokenizer_path=models["tok"], variant=variant, batch_size=4)
    ours = metric.sentence_scores(HYPS, REFS if metric.needs_refs else None, SRCS if metric.needs_srcs else None)
    texts = [FORMATS[variant](h, r, s) for h, r, s in zip(HYPS, REFS, SRCS, strict=True)]
    expected = _oracle(model_dir, models["tok"], texts)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    assert ((expected > 0) & (expected < 25)).sum() >= 2  # the test sees unclamped scores, not only the bounds
    assert len(set(np.round(expected, 4))) >= 3


def test_variant_is_read_from_the_checkpoint_name(models):
    assert MetricX(models["23"], tokenizer_path=models["tok"]).variant == "23-ref"
    assert MetricX(models["23-qe"], tokenizer_path=models["tok"]).variant == "23-qe"
    m24 = MetricX(models["24"], tokenizer_path=models["tok"])
    assert m24.variant == "24-hybrid" and m24.needs_refs and m24.needs_srcs
    assert MetricX(models["23"], tokenizer_path=models["tok"]).max_length == 1024 and m24.max_length == 1536


def test_signature_direction_and_options(models):
    metric = MetricX(models["23-qe"], tokenizer_path=models["tok"])
    sig = metric.signature
    assert metric.higher_is_better is False and metric.range == (0.0, 25.0)
    for field in ("model:metricx-23-qe-tiny-v2p0", "variant:23-qe", "refs:no", "prec:fp32", "dir:lower", "torch:",
                  "transformers:", "maxlen:1024"):
        assert field in sig
    assert "prec:bf16" in MetricX(models["24"], tokenizer_path=models["tok"], precision="bf16").signature


def test_batching_sorting_and_two_cpu_replicas_do_not_change_scores(models):
    base = dict(tokenizer_path=models["tok"])
    one = MetricX(models["24"], batch_size=1, sort_by_length=False, **base).sentence_scores(HYPS, REFS, SRCS)
    sorted_ = MetricX(models["24"], batch_size=4, **base).sentence_scores(HYPS, REFS, SRCS)
    two = MetricX(models["24"], batch_size=2, device="cpu,cpu", **base).sentence_scores(HYPS, REFS, SRCS)
    # float32 rounding differs with the batch: relative to the score (tests/test_score_cache.py missed an absolute
    # 1e-5 by 1e-7 at 6.35 in CI)
    np.testing.assert_allclose(sorted_, one, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-5)


def test_truncation_keeps_max_length_tokens_then_drops_eos(models):
    metric = MetricX(models["23"], tokenizer_path=models["tok"], max_length=6)
    texts = [FORMATS["23-ref"](h, r, s) for h, r, s in zip(HYPS, REFS, SRCS, strict=True)]
    np.testing.assert_allclose(metric.sentence_scores(HYPS, REFS), _oracle(models["23"], models["tok"], texts, 6),
                               atol=1e-5)


def test_bf16_runs_close_to_fp32(models):
    fp32 = MetricX(models["24"], tokenizer_path=models["tok"]).sentence_scores(HYPS, REFS, SRCS)
    bf16 = MetricX(models["24"], tokenizer_path=models["tok"], precision="bf16").sentence_scores(HYPS, REFS, SRCS)
    np.testing.assert_allclose(bf16, fp32, atol=1.0)


def test_qe_variant_ignores_references(models):
    metric = MetricX(models["23-qe"], tokenizer_path=models["tok"])
    np.testing.assert_array_equal(metric.sentence_scores(HYPS, REFS, SRCS), metric.sentence_scores(HYPS, srcs=SRCS))
    with pytest.raises(InputError, match="needs sources"):
        metric.sentence_scores(HYPS, REFS)


def test_tokenizer_in_the_model_directory_is_found(models, tmp_path):
    model_dir = tmp_path / "metricx-24-hybrid-with-tok"
    shutil.copytree(models["24"], model_dir)
    for f in models["tok"].iterdir():
        shutil.copy(f, model_dir / f.name)
    assert MetricX(model_dir).tokenizer_path == model_dir


# bad inputs ---------------------------------------------------------------------------------------------
def test_not_a_metricx_checkpoint(models, tmp_path):
    enc = build_tiny_encoder(tmp_path / "xlmr")
    with pytest.raises(InputError, match=r"not a MetricX checkpoint.*MT5ForRegression"):
        MetricX(enc, tokenizer_path=models["tok"])
    with pytest.raises(InputError, match=r"no config\.json"):
        MetricX(tmp_path, tokenizer_path=models["tok"])
    small = tmp_path / "metricx-23-small"
    small.mkdir()
    (small / "config.json").write_text(json.dumps({"model_type": "mt5", "architectures": ["MT5ForRegression"],
                                                   "vocab_size": 500}))
    with pytest.raises(InputError, match="no score token 250089"):
        MetricX(small, tokenizer_path=models["tok"])


def test_tokenizer_that_does_not_match(models, tmp_path):
    xlmr = build_tiny_encoder(tmp_path / "xlmr")  # XLM-R layout: <pad>=1, </s>=2
    metric = MetricX(models["24"], tokenizer_path=xlmr)
    with pytest.raises(InputError, match="does not match the MetricX model: its pad token id is 1"):
        metric.sentence_scores(HYPS, REFS, SRCS)


def test_variant_the_checkpoint_was_not_trained_for(models, tmp_path):
    with pytest.raises(InputError, match=r"a QE model .* cannot read references"):
        MetricX(models["23-qe"], tokenizer_path=models["tok"], variant="23-ref")
    with pytest.raises(InputError, match="it is a MetricX-23 model"):
        MetricX(models["23"], tokenizer_path=models["tok"], variant="24-qe")
    with pytest.raises(InputError, match="use one of 23-ref"):
        MetricX(models["24"], tokenizer_path=models["tok"], variant="25")
    anon = tmp_path / "my-model"
    shutil.copytree(models["24"], anon)
    with pytest.raises(InputError, match="cannot tell which MetricX model"):
        MetricX(anon, tokenizer_path=models["tok"])
    assert MetricX(anon, tokenizer_path=models["tok"], variant="24-qe").needs_refs is False


def test_no_tokenizer(models):
    with pytest.raises(InputError, match="holds no tokenizer; pass tokenizer_path="):
        MetricX(models["24"])


@pytest.mark.parametrize("device, match", [("gpu", "'gpu' is not a device"), ("cuda:0,cpu", "mixes cpu and cuda"),
                                           ("cuda:0,cuda:0", "name each GPU once"), ("cuda:7", "no CUDA GPU|numbered")])
def test_unknown_device(models, device, match):
    with pytest.raises(InputError, match=match):
        MetricX(models["24"], tokenizer_path=models["tok"], device=device).sentence_scores(HYPS, REFS, SRCS)


def test_registry_and_cli_options(models):
    from xleval.metrics import available_metrics, metric_options

    assert "metricx:PATH" in available_metrics()
    opts = metric_options(f"metricx:{models['24']}", {"neural_batch_size": 3, "metricx_variant": "24-qe",
                                                     "chrf_lowercase": True})
    assert opts == {"batch_size": 3, "variant": "24-qe"}
    assert metric_options(f"comet:{models['24']}", {"metricx_variant": "24-qe"}) == {}


# direction end to end: score -> fit -> leaderboard ----------------------------------------------------------
def test_lower_is_better_travels_with_the_signature(models, tmp_path, cli):
    """Systems whose hypotheses are the references (MetricX ~ 0 on a good model) must rank first. The tiny model
    is random, so the test builds the ranking from its own scores: the system with the lowest mean MetricX
    must rank 1 after `score -o`, `calibrate fit`, `leaderboard --model`, without any direction flag, even
    with the score column renamed."""
    rows = []
    rng = np.random.default_rng(0)
    corpus = sorted(set(TINY_CORPUS))
    for lp in ("en-de", "en-fr"):
        for system in ("A", "B", "C"):
            for i in range(12):
                j = int(rng.integers(len(corpus)))
                rows.append({"lp": lp, "system": system, "seg_id": i, "source": corpus[j],
                             "hypothesis": corpus[(j + 2 * "ABC".index(system)) % len(corpus)],  # none is the reference
                             "reference": corpus[(j + 1) % len(corpus)]})
    pd.DataFrame(rows).to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    spec = f"metricx:{models['24']}"
    rc, _, err = cli("score", tmp_path / "in.tsv", "-m", spec, "--metricx-tokenizer", models["tok"],
                     "-o", tmp_path / "scored.parquet")
    assert rc == 0, err
    scored = pd.read_parquet(tmp_path / "scored.parquet").rename(columns={"metricx": "mx"})
    from xleval.io import read_table_metadata, write_table

    sig = read_table_metadata(tmp_path / "scored.parquet")["signatures"]["metricx"]
    assert "dir:lower" in sig
    write_table(scored, tmp_path / "renamed.parquet", metadata={"signatures": {"mx": sig}})
    means = scored.groupby(["lp", "system"])["mx"].mean()
    rc, _, err = cli("calibrate", "fit", tmp_path / "renamed.parquet", "--score", "mx", "--by", "lp",
                     "--method", "lgn", "-o", tmp_path / "model.json")
    assert rc == 0, err
    rc, _, err = cli("leaderboard", tmp_path / "renamed.parquet", "--score", "mx", "--by", "lp",
                     "--model", tmp_path / "model.json", "--format", "tsv", "-o", tmp_path / "board.tsv")
    assert rc == 0, err
    board = pd.read_csv(tmp_path / "board.tsv", sep="\t", comment="#")
    assert set(board["group"]) == {"en-de", "en-fr"}, board.columns
    for lp, group in board.groupby("group"):
        order = means.loc[lp].sort_values().index.tolist()  # lowest MetricX first
        assert group.sort_values("rank_in_group")["system"].tolist() == order, (lp, group)


def test_output_projection_is_read_from_the_file(models, tmp_path):
    """The separate lm_head of an untied checkpoint is used (transformers 5 would tie it to the embeddings in
    memory), from a PyTorch .bin as from safetensors; a checkpoint that lacks it is refused."""
    from safetensors.torch import load_file

    weights = load_file(models["24"] / "model.safetensors")
    assert not torch.equal(weights["lm_head.weight"][250089], weights["shared.weight"][250089])
    as_bin = tmp_path / "metricx-24-hybrid-bin"
    as_bin.mkdir()
    shutil.copy(models["24"] / "config.json", as_bin / "config.json")
    torch.save(weights, as_bin / "pytorch_model.bin")
    base = MetricX(models["24"], tokenizer_path=models["tok"]).sentence_scores(HYPS, REFS, SRCS)
    np.testing.assert_allclose(MetricX(as_bin, tokenizer_path=models["tok"]).sentence_scores(HYPS, REFS, SRCS), base,
                               atol=1e-6)
    (as_bin / "pytorch_model.bin").unlink()
    torch.save({k: v for k, v in weights.items() if k != "lm_head.weight"}, as_bin / "pytorch_model.bin")
    with pytest.raises(InputError, match=r"no weight file holds lm_head\.weight"):
        MetricX(as_bin, tokenizer_path=models["tok"]).sentence_scores(HYPS, REFS, SRCS)


def test_anchored_calibration_reads_the_direction_from_the_signature():
    """An error score (lower is better) against human quality scores (higher is better): with the MetricX
    signature the anchored calibrator is told the score's direction, and the leaderboard ranks the system with
    the best human scores (lowest errors) first in each group, raw and calibrated."""
    import warnings

    from xleval.decision import fit_calibration
    from xleval.leaderboard import leaderboard
    from xleval.table import EvalTable

    rng = np.random.default_rng(0)
    rows = []
    for lp, offset in (("en-de", 0.0), ("en-fr", 3.0)):
        for system, quality in (("A", 1.0), ("B", 0.0), ("C", -1.0)):
            for i in range(40):
                human = quality + rng.normal(0, 0.5)
                rows.append({"lp": lp, "system": system, "seg_id": i, "human": human,
                             "mx": max(0.0, 8 + offset - 2 * human + rng.normal(0, 0.5))})
    frame = pd.DataFrame(rows)
    signed = EvalTable.from_frame(frame, signatures={"mx": "model:metricx-24-hybrid-xl-v2p6|dir:lower|xleval:0"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = fit_calibration(signed, "anchored", score="mx", by="lp", human="human", system="system")
        unsigned = fit_calibration(EvalTable.from_frame(frame), "anchored", score="mx", by="lp", human="human",
                                   system="system")
        board = leaderboard(signed, score="mx", by="lp", system="system", human="human", method="anchored")
    assert fitted.model.score_higher_is_better is False and unsigned.model.score_higher_is_better is True
    for _, group in board.rows.groupby("group"):
        assert group.sort_values("rank_in_group")["system"].tolist() == ["A", "B", "C"]
        assert group.sort_values("raw")["system"].tolist() == ["A", "B", "C"]  # the lowest error ranks first
