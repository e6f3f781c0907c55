"""Sentence-embedding cosine similarity through sentence-transformers, with a local model.

``EmbeddingCosine(path)`` embeds hypotheses and references (or sources, ``against="src"``, for
cross-lingual similarity without references) with ``SentenceTransformer(path).encode`` and
returns the cosine of each pair. A sentence-transformers directory (``modules.json``) is used as
saved; a plain Hugging Face encoder directory gets sentence-transformers' default module stack
(the transformer + mean pooling over non-padding tokens).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from xleval.exceptions import InputError

from ._model_files import check_encoder_weights, read_json_config
from ._neural import NeuralMetric, position_capacity, require

__all__ = ["EmbeddingCosine"]


class EmbeddingCosine(NeuralMetric):
    """Cosine similarity of sentence embeddings of the hypothesis and the reference (or source).

    Parameters
    ----------
    model_path : local sentence-transformers or Hugging Face encoder directory.
    against : ``"ref"`` (default) or ``"src"``.
    batch_size, device, precision, progress, cache : see :class:`~xleval.metrics._neural.NeuralMetric`.

    With several reference streams, the score is the best cosine over the references.
    """

    name = "embed"
    higher_is_better = True
    range = (-1.0, 1.0)
    _library = "sentence-transformers"
    _what = "embedding"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        against: str = "ref",
        batch_size: int = 32,
        device: str = "cpu",
        precision: str = "fp32",
        progress: bool = False,
        cache: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(model_path, batch_size=batch_size, device=device, precision=precision, progress=progress)
        if against not in ("ref", "src"):
            raise InputError(f"against must be 'ref' or 'src', got {against!r}")
        self.against = against
        self.needs_refs = against == "ref"
        self.needs_srcs = against == "src"
        self.pooling = _pooling_mode(self.model_path)
        self._set_cache(cache)

    def _signature_fields(self) -> dict[str, Any]:
        fields = self._common_fields()
        model = fields.pop("model")
        return {"model": model, "pool": self.pooling, "against": self.against, **fields}

    def _load(self) -> Any:
        st = require("sentence_transformers", "sentence-transformers", "the embedding cosine metric")
        check_encoder_weights(_transformer_dir(self.model_path), self._what,  # missing weights: random
                              reads_decoder=True)
        model = st.SentenceTransformer(str(self.model_path), device=self.device, local_files_only=True)
        # sentence-transformers truncates to min(max_position_embeddings, tokenizer's model_max_length): for
        # XLM-R/RoBERTa without a model_max_length that is 2 past what the positions hold (an index error on a long
        # sentence); cut at what the position embeddings hold
        for module in model:
            capacity = position_capacity(getattr(module, "auto_model", None))
            limit = getattr(module, "max_seq_length", None)
            if capacity is not None and isinstance(limit, int) and not 0 < limit <= capacity:
                module.max_seq_length = capacity
        if self.precision == "fp16":
            model.half()
        return model

    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        others = [srcs] if self.against == "src" else refs
        hyp_emb = self._embed(model, hyps)
        cosines = [np.sum(hyp_emb * self._embed(model, other), axis=1) for other in others]
        return np.max(np.vstack(cosines), axis=0)

    def _embed(self, model, texts: list[str]) -> np.ndarray:
        emb = model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=self.progress,
            convert_to_numpy=True,
            normalize_embeddings=False,
        ).astype(np.float64)
        # normalise ourselves in float64; an all-zero embedding gives cosine NaN, not a crash
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return emb / norms


def _transformer_dir(model_dir):
    """The folder of the Hugging Face encoder inside a sentence-transformers directory (its Transformer
    module's path; the directory itself for a plain encoder)."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return model_dir
    modules = read_json_config(modules_file, "modules.json")
    for module in modules if isinstance(modules, list) else []:
        if isinstance(module, dict) and str(module.get("type", "")).endswith("Transformer"):
            return model_dir / str(module.get("path", ""))
    return model_dir


def _pooling_mode(model_dir) -> str:
    """Pooling named in a sentence-transformers directory; ``mean`` for a plain encoder."""
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return "mean"
    modules = read_json_config(modules_file, "modules.json")
    if not isinstance(modules, list):
        raise InputError(f"{modules_file}: not a list of sentence-transformers modules; download the model again")
    for module in modules:
        if isinstance(module, dict) and str(module.get("type", "")).endswith("Pooling"):
            config_file = model_dir / module.get("path", "") / "config.json"
            if config_file.is_file():
                config = read_json_config(config_file)
                if not isinstance(config, dict):
                    return "unknown"
                # newer sentence-transformers write "pooling_mode": "mean"; older ones booleans
                if isinstance(config.get("pooling_mode"), str):
                    return config["pooling_mode"]
                modes = [k.removeprefix("pooling_mode_").removesuffix("_tokens")
                         for k, v in config.items() if k.startswith("pooling_mode_") and v is True]
                return "+".join(modes) or "unknown"
    return "none"
