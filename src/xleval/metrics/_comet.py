"""COMET (reference-based and QE) through unbabel-comet's own code path.

``COMET(path)`` takes a local COMET model directory in COMET's layout
(``PATH/checkpoints/model.ckpt`` + ``PATH/hparams.yaml``, i.e. a downloaded hub snapshot such
as ``Unbabel/wmt22-comet-da``) and scores with ``comet.load_from_checkpoint`` +
``model.predict``. COMET checkpoints name their encoder (``pretrained_model: xlm-roberta-large``)
and COMET loads that encoder's config and tokenizer by name; offline, that name must already be
in the Hugging Face cache, or pass ``encoder_path=DIR`` (a local copy of that encoder) and the
checkpoint is loaded with COMET's model class pointed at it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from xleval.exceptions import InputError

from ._neural import NeuralMetric, check_model_dir, dist_version, require, restore_special_token_builder

__all__ = ["COMET"]

# COMET class identifiers (hparams.yaml) whose models never read a reference.
_QE_CLASSES = {"referenceless_regression_metric"}


class COMET(NeuralMetric):
    """COMET segment scores; the corpus score is their mean (COMET's ``system_score``).

    Parameters
    ----------
    model_path : local directory with ``checkpoints/model.ckpt`` and ``hparams.yaml``.
    use_refs : score with references (``True``), as QE without them (``False``), or the
        model's own mode (``None``: references if the model reads them).
    encoder_path : local directory of the encoder named by the checkpoint's
        ``pretrained_model`` (tokenizer + config), for fully offline use.
    batch_size, device, precision, progress, cache : see :class:`~xleval.metrics._neural.NeuralMetric`.
    """

    name = "comet"
    higher_is_better = True
    needs_srcs = True
    _library = "unbabel-comet"
    _what = "COMET"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        use_refs: bool | None = None,
        encoder_path: str | os.PathLike | None = None,
        batch_size: int = 16,
        device: str = "cpu",
        precision: str = "fp32",
        progress: bool = False,
        cache: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(model_path, batch_size=batch_size, device=device, precision=precision, progress=progress)
        self.checkpoint = self.model_path / "checkpoints" / "model.ckpt"
        self.hparams = _read_hparams(self.model_path, self.checkpoint)
        self.encoder_path = check_model_dir(encoder_path, "COMET encoder") if encoder_path is not None else None
        model_reads_refs = self._model_reads_refs()
        if use_refs and not model_reads_refs:
            raise InputError(f"COMET model {self.model_path.name!r} is reference-free (QE); use use_refs=False or None")
        if use_refs is False and self._model_needs_refs():
            raise InputError(f"COMET model {self.model_path.name!r} needs references; it cannot run as QE")
        self.use_refs = model_reads_refs if use_refs is None else bool(use_refs)
        self.needs_refs = self.use_refs  # instance value shadows the class default
        self._set_cache(cache)

    def _model_reads_refs(self) -> bool:
        if self.hparams.get("class_identifier") in _QE_CLASSES:
            return False
        return "ref" in self.hparams.get("input_segments", ["mt", "src", "ref"])

    def _model_needs_refs(self) -> bool:
        # regression/ranking metrics and [mt, ref]-only unified models cannot drop the reference
        cls = self.hparams.get("class_identifier")
        if cls in ("regression_metric", "ranking_metric"):
            return True
        return cls in ("unified_metric", "xcomet_metric") and self.hparams.get("input_segments") == ["mt", "ref"]

    def _signature_fields(self) -> dict[str, Any]:
        fields = self._common_fields()
        model = fields.pop("model")
        return {
            "model": model,
            "class": self.hparams.get("class_identifier", "unknown"),
            "refs": self.use_refs,
            **fields,
        }

    # ------------------------------------------------------------------ model
    def _load(self) -> Any:
        comet = require("comet", "unbabel-comet", "the COMET metric")
        if self.encoder_path is None:
            model = comet.load_from_checkpoint(str(self.checkpoint), local_files_only=True)
        else:
            # what load_from_checkpoint does, with the encoder name replaced by the local copy
            import torch
            from comet.models import str2model

            model = str2model[self.hparams["class_identifier"]].load_from_checkpoint(
                self.checkpoint,
                load_pretrained_weights=False,
                map_location=torch.device("cpu"),
                strict=False,
                local_files_only=True,
                pretrained_model=str(self.encoder_path),
            )
        _transformers5_compat(model)
        if self.precision == "fp16":
            model = model.half()
        return model

    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        ref_list = self._single_ref_stream(refs) if self.use_refs else None
        samples = [
            {"src": s, "mt": h, **({"ref": ref_list[i]} if ref_list is not None else {})}
            for i, (s, h) in enumerate(zip(srcs, hyps, strict=True))
        ]
        gpus, devices = _lightning_devices(self.device)
        out = model.predict(
            samples,
            batch_size=self.batch_size,
            gpus=gpus,
            devices=devices,
            progress_bar=self.progress,
            accelerator="cpu" if gpus == 0 else "gpu",
        )
        return np.asarray(out.scores, dtype=np.float64)


def _read_hparams(model_dir: Path, checkpoint: Path) -> dict[str, Any]:
    hparams_file = model_dir / "hparams.yaml"
    if not checkpoint.is_file() or not hparams_file.is_file():
        raise InputError(
            f"{model_dir} is not a COMET model directory: it needs checkpoints/model.ckpt and hparams.yaml "
            "(the layout of a downloaded COMET model, e.g. Unbabel/wmt22-comet-da)"
        )
    yaml = require("yaml", "pyyaml", "reading COMET's hparams.yaml")
    with open(hparams_file, encoding="utf-8") as fh:
        hparams = yaml.safe_load(fh) or {}
    if not isinstance(hparams, dict) or "class_identifier" not in hparams:
        raise InputError(f"{hparams_file}: no class_identifier; is this a COMET hparams.yaml?")
    return hparams


def _lightning_devices(device: str) -> tuple[int, list[int] | None]:
    if device == "cpu":
        return 0, None
    if device.startswith("cuda:"):
        return 1, [int(device.split(":")[1])]
    return 1, None


def _transformers5_compat(model: Any) -> None:
    """Keep unbabel-comet 2.2.x (written for transformers 4) working with transformers >= 5.

    Two transformers-5 changes break COMET's inference path; both shims restore the exact
    transformers-4 behaviour and change no computation:

    1. COMET's encoders call the Hugging Face model with ``return_dict=False`` and unpack
       ``(last_hidden_state, pooler_output, hidden_states)``. transformers 4 kept ``None`` for
       the missing pooler in that tuple; transformers 5 drops ``None`` entries ("not enough
       values to unpack").
    2. Unified models (CometKiwi, XCOMET) join src/mt/ref with the tokenizer's
       ``build_inputs_with_special_tokens``, which transformers 5 removed from fast tokenizers.
    """
    if int(dist_version("transformers").split(".")[0]) < 5:
        return
    encoder = model.encoder
    _restore_v4_tuple(encoder.model)
    if not hasattr(encoder.tokenizer, "build_inputs_with_special_tokens"):
        restore_special_token_builder(encoder.tokenizer, encoder.size_separator)


def _restore_v4_tuple(hf_model: Any) -> None:
    forward = hf_model.forward

    def forward_v4_tuple(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("return_dict", True) is not False:
            return forward(*args, **kwargs)
        out = forward(*args, **{**kwargs, "return_dict": True})
        return (out.last_hidden_state, getattr(out, "pooler_output", None), out.hidden_states)

    hf_model.forward = forward_v4_tuple
