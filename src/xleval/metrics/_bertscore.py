"""BERTScore through ``bert_score.BERTScorer`` with a local encoder directory.

The adapter adds nothing to the computation: it builds
``BERTScorer(model_type=PATH, num_layers=L, idf=False, rescale_with_baseline=False)`` and returns
the precision, recall or F1 that ``BERTScorer.score`` returns. With several reference streams
bert_score keeps, per segment, the best-scoring reference (its own multi-reference rule).
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
from typing import Any

import numpy as np

from xleval.exceptions import InputError

from ._model_files import check_encoder_weights, read_json_config
from ._neural import NeuralMetric, position_capacity, require, restore_special_token_builder

__all__ = ["BERTScore"]

logger = logging.getLogger(__name__)

_PARTS = {"precision": 0, "recall": 1, "f1": 2}


class BERTScore(NeuralMetric):
    """BERTScore (Zhang et al., 2020) of hypotheses against references, without idf or rescaling.

    Parameters
    ----------
    model_path : local directory of a Hugging Face encoder (config, weights, tokenizer).
    num_layers : the hidden layer whose token embeddings are matched (1-based, as in
        bert_score); ``None`` = the model's last layer, read from its ``config.json``.
    part : ``"f1"`` (default), ``"precision"`` or ``"recall"``.
    batch_size, device, precision, progress, cache : see :class:`~xleval.metrics._neural.NeuralMetric`.

    Idf weighting is not offered: bert_score's idf weights come from the scored corpus, so a
    segment's score would depend on the other segments in the call.
    """

    name = "bertscore"
    higher_is_better = True
    range = (-1.0, 1.0)
    _library = "bert-score"
    _what = "BERTScore"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        num_layers: int | None = None,
        part: str = "f1",
        batch_size: int = 64,
        device: str = "cpu",
        precision: str = "fp32",
        progress: bool = False,
        cache: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(model_path, batch_size=batch_size, device=device, precision=precision, progress=progress)
        if part not in _PARTS:
            raise InputError(f"part must be one of {sorted(_PARTS)}, got {part!r}")
        n_model_layers = _config_layers(self.model_path)
        if num_layers is None:
            num_layers = n_model_layers
        if isinstance(num_layers, bool) or not isinstance(num_layers, int) or not 0 <= num_layers <= n_model_layers:
            raise InputError(f"num_layers must be an integer in 0..{n_model_layers} for this model, got {num_layers!r}")
        self.num_layers = num_layers
        self.part = part
        self._set_cache(cache)

    def _signature_fields(self) -> dict[str, Any]:
        fields = self._common_fields()
        model = fields.pop("model")
        return {"model": model, "layer": self.num_layers, "part": self.part, "idf": False, "rescale": False, **fields}

    def _load(self) -> Any:
        bert_score = require("bert_score", "bert-score", "the BERTScore metric")
        check_encoder_weights(self.model_path, self._what)  # bert_score would fill missing weights at random
        scorer = bert_score.BERTScorer(
            model_type=str(self.model_path),
            num_layers=self.num_layers,
            batch_size=self.batch_size,
            device=self.device,
            idf=False,
            rescale_with_baseline=False,
        )
        # transformers 5 dropped the method bert_score uses to encode an empty sentence
        restore_special_token_builder(scorer._tokenizer)
        # bert_score truncates to the tokenizer's model_max_length: a tokenizer_config.json without it (e.g.
        # bert-base-multilingual-cased's) leaves transformers' 10**30 (OverflowError), and one longer than the
        # position table indexes past it on a long sentence; cut at what the position embeddings hold
        capacity = position_capacity(scorer._model)
        if capacity is not None and not 0 < scorer._tokenizer.model_max_length <= capacity:
            scorer._tokenizer.model_max_length = capacity
        if self.precision == "fp16":
            scorer._model.half()
        return scorer

    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        # one stream: a flat list; several: per-segment lists (bert_score takes the max)
        ref_arg = refs[0] if len(refs) == 1 else [list(group) for group in zip(*refs, strict=True)]
        captured = io.StringIO()
        # bert_score prints warnings about empty sentences to stderr; the library never prints
        redirect = contextlib.nullcontext() if self.progress else contextlib.redirect_stderr(captured)
        with redirect:
            prf = model.score(hyps, ref_arg, verbose=self.progress, batch_size=self.batch_size)
        for line in captured.getvalue().splitlines():
            logger.info("bert_score: %s", line)
        return prf[_PARTS[self.part]].double().cpu().numpy()


def _config_layers(model_dir) -> int:
    config_file = model_dir / "config.json"
    if not config_file.is_file():
        raise InputError(f"{model_dir} has no config.json; pass the directory of a Hugging Face encoder")
    config = read_json_config(config_file)
    # BERT/XLM-R say num_hidden_layers, T5 encoders (which bert_score scores with their encoder) num_layers
    layers = None
    if isinstance(config, dict):
        layers = next((config[k] for k in ("num_hidden_layers", "num_layers", "n_layer") if k in config), None)
    if isinstance(layers, bool) or not isinstance(layers, int) or not 0 < layers <= 1024:
        raise InputError(f"{config_file}: num_hidden_layers is {layers!r}, not a layer count (1 to 1024); download "
                         "the model again")
    return layers
