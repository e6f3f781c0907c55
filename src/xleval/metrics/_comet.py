"""COMET (reference-based and QE) through unbabel-comet's own code path.

``COMET(path)`` takes a local COMET model directory in COMET's layout
(``PATH/checkpoints/model.ckpt`` + ``PATH/hparams.yaml``, i.e. a downloaded hub snapshot such
as ``Unbabel/wmt22-comet-da``) and scores with ``comet.load_from_checkpoint`` +
``model.predict``. COMET checkpoints name their encoder (``pretrained_model: xlm-roberta-large``)
and COMET loads that encoder's config and tokenizer by name; offline, that name must already be
in the Hugging Face cache, or pass ``encoder_path=DIR`` (a local copy of that encoder) and the
checkpoint is loaded with COMET's model class pointed at it.

Models that tag words (XCOMET, and unified models trained at word level) also give error spans
(``metadata.error_spans`` of COMET's ``predict``): :meth:`COMET.error_spans` returns them with the
scores, as counts per severity per segment and as a table of spans (:class:`ErrorSpans`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.result import Result
from xleval.exceptions import InputError, ModelFileError

from ._model_files import check_state_keys, first_line, load_weights, read_yaml_config
from ._neural import NeuralMetric, check_model_dir, dist_version, quiet, require, restore_special_token_builder

__all__ = ["COMET", "ErrorSpans", "SEVERITIES", "error_span_tables"]

#: XCOMET's error severities (its ``error_labels``), mildest first
SEVERITIES = ("minor", "major", "critical")
_SPAN_COLUMNS = ("segment", "severity", "start", "end", "confidence", "text")


@dataclass(frozen=True, eq=False)
class ErrorSpans(Result):
    """Error spans a COMET model tagged in each translation (XCOMET; Guerreiro et al., 2024).

    ``scores``: the segment scores of the same prediction. ``counts``: one row per segment, the number of
    spans of each severity (columns ``minor``, ``major``, ``critical``). ``spans``: one row per span:
    ``segment`` (the row's position in the input), ``severity``, ``start``/``end`` (character offsets in the
    translation, as COMET gives them), ``confidence``, ``text``. ``signature``: the metric's.
    """

    scores: np.ndarray
    counts: pd.DataFrame
    spans: pd.DataFrame
    signature: str

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

    def _identity_folders(self) -> tuple[Path | None, ...]:
        return (self.model_path, self.encoder_path)

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
        return _load_comet(self.checkpoint, self.hparams, self.encoder_path, self.precision)

    @property
    def tags_spans(self) -> bool:
        """Whether the model tags error spans (XCOMET, or a unified model trained at word level)."""
        return (self.hparams.get("class_identifier") == "xcomet_metric"
                or bool(self.hparams.get("word_level_training")))

    def error_spans(self, hyps, refs=None, srcs=None) -> ErrorSpans:
        """Scores and error spans of each segment (COMET's ``predict`` output and ``metadata.error_spans``).
        The scores equal :meth:`sentence_scores` and go into the cache when there is one (``cache=``), so that
        scoring the same rows afterwards runs no model; the spans themselves are not cached."""
        self._require_spans()
        hyps_, refs_, srcs_ = self._check_inputs(hyps, refs, srcs)
        if not hyps_:
            return ErrorSpans(np.zeros(0), pd.DataFrame(columns=list(SEVERITIES), dtype="int64"),
                              pd.DataFrame(columns=list(_SPAN_COLUMNS)), self.signature)
        model = self._loaded()
        with quiet(self.progress):
            out = self._predict(model, hyps_, refs_, srcs_)
        result = _spans_result(out, len(hyps_), self.signature)
        self._remember(hyps_, refs_, srcs_, result.scores)
        return result

    def _require_spans(self) -> None:
        if not self.tags_spans:
            raise InputError(f"COMET model {self.model_path.name!r} ({self.hparams.get('class_identifier')}) tags no "
                             "error spans; spans come from XCOMET models (e.g. Unbabel/XCOMET-XL) and unified "
                             "models trained at word level", argument="model_path", value=str(self.model_path))

    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        return np.asarray(self._predict(model, hyps, refs, srcs).scores, dtype=np.float64)

    def _predict(self, model, hyps, refs, srcs) -> Any:
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
        return out


_ID_COLUMNS = ("lp", "src_lang", "tgt_lang", "system", "doc_id", "seg_id")


def _spans_result(out: Any, n: int, signature: str) -> ErrorSpans:
    """COMET's prediction as an :class:`ErrorSpans` (spans in COMET's order, segment by segment)."""
    found = out.metadata.get("error_spans") if hasattr(out, "metadata") else None
    per_segment = list(found) if found is not None else [[] for _ in range(n)]
    rows = [{"segment": i, "severity": s.get("severity"), "start": s.get("start"), "end": s.get("end"),
             "confidence": float(s.get("confidence", np.nan)), "text": s.get("text")}
            for i, segment in enumerate(per_segment) for s in segment]
    counts = pd.DataFrame({sev: [sum(s.get("severity") == sev for s in segment) for segment in per_segment]
                           for sev in SEVERITIES}, dtype="int64")
    return ErrorSpans(np.asarray(out.scores, dtype=np.float64), counts, pd.DataFrame(rows, columns=list(_SPAN_COLUMNS)),
                      signature)


def error_span_tables(frame: pd.DataFrame, metric: COMET) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A table's error spans: count columns ``<metric>_minor``, ``_major``, ``_critical`` aligned with
    ``frame``'s rows, and the side table of spans (``row``, the table's id columns, ``metric``, then
    :class:`ErrorSpans`' span columns). ``frame`` has ``hypothesis`` and, as ``metric`` reads them,
    ``source`` and ``reference``."""
    metric._require_spans()
    for column, needed in (("hypothesis", True), ("source", metric.needs_srcs), ("reference", metric.needs_refs)):
        if needed and column not in frame.columns:
            raise InputError(f"error spans of {metric.name!r} need a {column!r} column", argument="columns",
                             value=column)

    def texts(column: str) -> list[str] | None:
        return frame[column].astype(str).tolist() if column in frame.columns else None

    result = metric.error_spans(texts("hypothesis") or [], texts("reference") if metric.use_refs else None,
                                texts("source"))
    counts = result.counts.rename(columns={s: f"{metric.name}_{s}" for s in SEVERITIES}).set_axis(frame.index)
    ids = [c for c in _ID_COLUMNS if c in frame.columns]
    spans = result.spans.rename(columns={"segment": "row"})
    keys = frame[ids].reset_index(drop=True).iloc[spans["row"].to_numpy()].reset_index(drop=True)
    spans = pd.concat([spans[["row"]], keys, spans.drop(columns="row")], axis=1)
    spans.insert(1 + len(ids), "metric", metric.name)
    return counts, spans


def _read_hparams(model_dir: Path, checkpoint: Path) -> dict[str, Any]:
    hparams_file = model_dir / "hparams.yaml"
    if not checkpoint.is_file() or not hparams_file.is_file():
        raise InputError(
            f"{model_dir} is not a COMET model directory: it needs checkpoints/model.ckpt and hparams.yaml "
            "(the layout of a downloaded COMET model, e.g. Unbabel/wmt22-comet-da)"
        )
    hparams = read_yaml_config(hparams_file) or {}
    if not isinstance(hparams, dict) or "class_identifier" not in hparams:
        raise ModelFileError(f"{hparams_file}: no class_identifier; is this a COMET hparams.yaml?")
    return hparams


# buffers that some transformers versions store and others do not (not weights: their values are fixed)
_BUFFERS = ("position_ids", "token_type_ids")


#: bounds of COMET's size hyper-parameters (XCOMET-XXL: hidden sizes 3072 and 1024, 48 encoder layers)
_SIZE_LIMITS = {"hidden_sizes": 1 << 16, "batch_size": 1 << 20, "word_layer": 1 << 10}


def _check_sizes(options: dict[str, Any], checkpoint: Path) -> None:
    """Sizes a model could not have are refused before the model is built (building it would ask the allocator
    for terabytes and end in its error, or in the kernel's out-of-memory kill)."""
    for key, limit in _SIZE_LIMITS.items():
        if key not in options or options[key] is None:
            continue
        values = options[key] if isinstance(options[key], list | tuple) else [options[key]]
        for value in values:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
                raise ModelFileError(f"{checkpoint}: the hyper-parameter {key}={options[key]!r} is not a size a "
                                     f"COMET model has (integers from 0 to {limit}); download the model again")


def _load_comet(checkpoint: Path, hparams: dict[str, Any], encoder_path: Path | None, precision: str) -> Any:
    """What ``comet.load_from_checkpoint`` does, through the one safe boundary (:mod:`._model_files`): the
    checkpoint is read with weights only (nothing in it runs), the model class comes from ``hparams.yaml``'s
    ``class_identifier`` (read with YAML's safe loader), built from the checkpoint's hyper-parameters with the
    encoder taken locally, and every weight must match (missing or surplus weights are refused)."""
    import inspect

    require("comet", "unbabel-comet", "the COMET metric")
    from comet.models import str2model

    state = load_weights(checkpoint, "COMET checkpoint")
    if not isinstance(state, dict) or not isinstance(state.get("state_dict"), dict):
        raise ModelFileError(f"{checkpoint}: not a COMET checkpoint (no state_dict of weights); download the model "
                             "again")
    if not isinstance(hparams["class_identifier"], str) or hparams["class_identifier"] not in str2model:
        raise ModelFileError(f"{checkpoint.parents[1] / 'hparams.yaml'}: class_identifier "
                             f"{hparams['class_identifier']!r} is not a COMET model class (unbabel-comet "
                             f"{dist_version('unbabel-comet')} knows {', '.join(sorted(str2model))}); download the "
                             "model again, or upgrade unbabel-comet")
    model_class = str2model[hparams["class_identifier"]]
    stored = state.get("hyper_parameters")
    options = dict(stored) if isinstance(stored, dict) else dict(hparams)
    options.update(load_pretrained_weights=False, local_files_only=True)
    if encoder_path is not None:
        options["pretrained_model"] = str(encoder_path)
    if hparams.get("layer_transformation") == "sparsemax_patch":  # COMET >= 2.2.4's own workaround (its issue 244)
        options["layer_transformation"] = "softmax"
    _check_sizes(options, checkpoint)
    accepted = inspect.signature(model_class.__init__).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        options = {k: v for k, v in options.items() if k in accepted}
    try:
        model = model_class(**options)
    except (OSError, ValueError) as exc:
        where = encoder_path if encoder_path is not None else options.get("pretrained_model")
        raise ModelFileError(f"{checkpoint.parents[1]}: COMET cannot build its encoder {where!r} offline "
                             f"({first_line(exc)[:200]}); put that encoder in the local Hugging Face cache once "
                             "(`hf download NAME`), or in Python pass encoder_path= a local copy of it (tokenizer + "
                             "config.json)", argument="encoder_path", value=str(where)) from None
    except (TypeError, KeyError, RuntimeError) as exc:
        raise ModelFileError(f"{checkpoint.parents[1] / 'hparams.yaml'}: COMET cannot build a "
                             f"{hparams['class_identifier']} model from these hyper-parameters ({first_line(exc)}); "
                             "download the model again") from None
    weights = dict(state["state_dict"])
    try:
        result = model.load_state_dict(weights, strict=False)
    except RuntimeError as exc:  # a weight of another shape
        raise ModelFileError(f"{checkpoint}: the checkpoint does not match the model its hparams.yaml describes "
                             f"({first_line(exc)[:300]}); download the model again") from None
    check_state_keys([k for k in result.missing_keys if not k.endswith(_BUFFERS)],
                     [k for k in result.unexpected_keys if not k.endswith(_BUFFERS)], checkpoint)
    model.eval()
    _transformers5_compat(model)
    if precision == "fp16":
        model = model.half()
    return model


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
