"""XCOMET error spans through the COMET adapter, against COMET's own ``predict`` on a tiny XCOMET checkpoint."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
comet = importorskip_lazy("comet", reason="needs unbabel-comet (make install-full installs it)")

from _tiny_models import build_tiny_comet, build_tiny_encoder  # noqa: E402
from xleval.exceptions import InputError  # noqa: E402
from xleval.metrics._comet import COMET, _transformers5_compat  # noqa: E402

SRCS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "猫坐在垫子上。", "x", "Le chat est assis"]
HYPS = ["The cat sat on the mat.", "Weather nice.", "The cat sits on the mat.", "", "The cat is sitting there"]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "A cat sat on the mat.", "y", "The cat sits"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("xcomet")
    encoder = build_tiny_encoder(root / "encoder", kind="xlm-roberta")
    return {"xcomet": build_tiny_comet(root / "xcomet", encoder, kind="xcomet"),
            "regression": build_tiny_comet(root / "regression", encoder, kind="regression")}


def _theirs(model_dir, samples):
    model = comet.load_from_checkpoint(str(model_dir / "checkpoints" / "model.ckpt"), local_files_only=True)
    _transformers5_compat(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = model.predict(samples, batch_size=2, gpus=0, progress_bar=False)
    return np.asarray(out.scores), out.metadata.error_spans


@pytest.mark.parametrize("with_refs", [True, False])
def test_spans_equal_comets_predict(models, with_refs):
    samples = [{"src": s, "mt": h, **({"ref": r} if with_refs else {})} for s, h, r in zip(SRCS, HYPS, REFS,
                                                                                         strict=True)]
    scores, spans = _theirs(models["xcomet"], samples)
    metric = COMET(models["xcomet"], use_refs=with_refs, batch_size=2)
    got = metric.error_spans(HYPS, REFS if with_refs else None, SRCS)
    np.testing.assert_allclose(got.scores, scores, atol=1e-6)
    np.testing.assert_allclose(metric.sentence_scores(HYPS, REFS if with_refs else None, SRCS), scores, atol=1e-6)
    flat = [(i, s["severity"], s["start"], s["end"], s["text"]) for i, seg in enumerate(spans) for s in seg]
    assert len(flat) >= 2  # the tiny tagger marks spans (the builder spreads its logits)
    assert list(got.spans[["segment", "severity", "start", "end", "text"]].itertuples(index=False, name=None)) == flat
    np.testing.assert_allclose(got.spans["confidence"], [s["confidence"] for seg in spans for s in seg], atol=1e-6)
    for sev in ("minor", "major", "critical"):
        assert got.counts[sev].tolist() == [sum(s["severity"] == sev for s in seg) for seg in spans]
    assert got.signature == metric.signature and len(got.counts) == len(HYPS)


def test_a_model_without_word_tags_is_refused(models):
    with pytest.raises(InputError, match="tags no error spans"):
        COMET(models["regression"]).error_spans(HYPS, REFS, SRCS)


def test_cli_writes_counts_and_the_span_table(models, tmp_path, cli):
    pd.DataFrame({"lp": "de-en", "system": "A", "seg_id": range(len(HYPS)), "source": SRCS, "hypothesis": HYPS,
                  "reference": REFS}).to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    rc, _, err = cli("score", tmp_path / "in.tsv", "-m", f"comet:{models['xcomet']}", "--error-spans",
                     tmp_path / "spans.tsv", "-o", tmp_path / "out.tsv")
    assert rc == 0, err
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    spans = pd.read_csv(tmp_path / "spans.tsv", sep="\t")
    _, theirs = _theirs(models["xcomet"], [{"src": s, "mt": h, "ref": r} for s, h, r in zip(SRCS, HYPS, REFS,
                                                                                          strict=True)])
    assert out["comet_major"].tolist() == [sum(s["severity"] == "major" for s in seg) for seg in theirs]
    assert len(spans) == sum(len(seg) for seg in theirs)
    assert {"lp", "system", "seg_id", "metric", "severity", "start", "end", "text"} <= set(spans.columns)
    rc, _, err = cli("score", tmp_path / "in.tsv", "-m", f"comet:{models['regression']}", "--error-spans",
                     tmp_path / "spans2.tsv", "-o", tmp_path / "out2.tsv")
    assert rc == 2 and "tags no error spans" in err and not (tmp_path / "out2.tsv").exists()


def test_span_pass_fills_the_score_cache(models, tmp_path, monkeypatch):
    metric = COMET(models["xcomet"], cache=tmp_path / "c.sqlite")
    found = metric.error_spans(HYPS, REFS, SRCS)
    monkeypatch.setattr(COMET, "_predict", lambda *a: pytest.fail("the model ran again"))
    np.testing.assert_array_equal(metric.sentence_scores(HYPS, REFS, SRCS), found.scores)
