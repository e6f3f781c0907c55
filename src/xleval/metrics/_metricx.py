"""MetricX-23 and MetricX-24 (Juraska et al., WMT 2023 and WMT 2024) from a local checkpoint.

MetricX is an mT5 encoder-decoder fine-tuned as a regressor: the input text is encoded, the
decoder runs one step from token id 0, and the score is the logit of vocabulary entry 250089
(``<extra_id_10>``) clamped to [0, 25]. It predicts an MQM-like error score: **lower is better**
(0 = no errors, 25 = worst). The input text depends on the variant, as google-research/metricx's
``predict.py`` builds it; the tokenizer appends its end-of-sequence token, which MetricX drops:

=============  ============================================================  ========
variant        input text                                                    reads
=============  ============================================================  ========
``23-ref``     ``candidate: HYP reference: REF``                             hyp, ref
``23-qe``      ``candidate: HYP source: SRC``                                hyp, src
``24-hybrid``  ``source: SRC candidate: HYP reference: REF``                 all three
``24-ref``     ``source:  candidate: HYP reference: REF`` (empty source)     hyp, ref
``24-qe``      ``source: SRC candidate: HYP``                                hyp, src
=============  ============================================================  ========

MetricX-23 checkpoints are either reference-based or QE; MetricX-24 checkpoints are hybrid and run
in any of the three MetricX-24 modes. The variant is read from the checkpoint's name
(``metricx-23-qe-...``, ``metricx-23-...``, ``metricx-24-hybrid-...`` in the directory name or
the config's ``_name_or_path``; a MetricX-24 checkpoint defaults to ``24-hybrid``) or given with
``variant=``; a variant the checkpoint was not trained for is refused. A QE variant never reads
references: references passed to it are ignored (the signature says ``refs:no``), so one table with
a reference column can be scored by reference-based and QE metrics at once.
"""
from __future__ import annotations

import json
import os
import pickle
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from xleval.exceptions import InputError, ModelFileError

from ._model_files import check_state_keys, first_line, read_json_config, refused_pickle
from ._neural import NeuralMetric, check_model_dir, dist_version, require

__all__ = ["MetricX", "VARIANTS", "SCORE_TOKEN_ID"]

VARIANTS = ("23-ref", "23-qe", "24-hybrid", "24-ref", "24-qe")
#: the vocabulary entry whose first-step logit is the score (``<extra_id_10>`` of mT5)
SCORE_TOKEN_ID = 250089
#: the maximum input lengths MetricX was trained with (its README: 1024 tokens for -23, 1536 for -24)
_MAX_LENGTH = {"23": 1024, "24": 1536}
_NAME_RE = re.compile(r"metricx[-_]?(23|24)(?:[-_](qe|hybrid))?", re.IGNORECASE)
_TOKENIZER_FILES = ("tokenizer.json", "spiece.model", "tokenizer_config.json")


class MetricX(NeuralMetric):
    """MetricX segment scores (0-25, lower is better); the corpus score is their mean.

    Parameters
    ----------
    model_path : local directory of a MetricX checkpoint (``config.json`` + weights, as
        downloaded from google/metricx-23-* or google/metricx-24-hybrid-*).
    variant : ``23-ref``, ``23-qe``, ``24-hybrid``, ``24-ref``, ``24-qe``, or None (read from the
        checkpoint's name; see the module docstring).
    tokenizer_path : local directory of the mT5 tokenizer (MetricX's README uses google/mt5-xl);
        default: ``model_path`` when it holds tokenizer files.
    max_length : input tokens kept (MetricX's truncation); default 1024 for MetricX-23, 1536 for -24.
    sort_by_length : batch inputs of similar length together (less padding; the scores are the same).
    batch_size, device, precision, progress, cache : see :class:`~xleval.metrics._neural.NeuralMetric`;
        ``device`` may list several devices (``cuda:0,cuda:1``): batches are split between
        replicas of the model. ``precision`` ``bf16`` is what the bfloat16 MetricX-24 checkpoints hold.
    """

    name = "metricx"
    higher_is_better = False
    range = (0.0, 25.0)
    needs_srcs = False
    multi_device = True
    precisions = ("fp32", "fp16", "bf16")
    _library = "torch"
    _what = "MetricX"

    def __init__(
        self,
        model_path: str | os.PathLike,
        *,
        variant: str | None = None,
        tokenizer_path: str | os.PathLike | None = None,
        max_length: int | None = None,
        sort_by_length: bool = True,
        batch_size: int = 8,
        device: str = "cpu",
        precision: str = "fp32",
        progress: bool = False,
        cache: str | os.PathLike | None = None,
    ) -> None:
        super().__init__(model_path, batch_size=batch_size, device=device, precision=precision, progress=progress)
        self.config = _read_config(self.model_path)
        self.variant = _choose_variant(variant, _detected_variant(self.model_path, self.config), self.model_path)
        self.tokenizer_path = _tokenizer_dir(tokenizer_path, self.model_path)
        if max_length is None:
            max_length = _MAX_LENGTH[self.variant[:2]]
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
            raise InputError(f"max_length must be an integer >= 2 (input tokens kept), got {max_length!r}",
                             argument="max_length", value=max_length)
        self.max_length = max_length
        self.sort_by_length = bool(sort_by_length)
        self.needs_refs = self.variant in ("23-ref", "24-hybrid", "24-ref")
        self.needs_srcs = self.variant in ("23-qe", "24-hybrid", "24-qe")
        self._set_cache(cache)

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "model": self.model_path.resolve().name,
            "variant": self.variant,
            "refs": self.needs_refs,
            "tok": self.tokenizer_path.resolve().name,
            "maxlen": self.max_length,
            "prec": self.precision,
            "dir": "lower",
            "torch": dist_version("torch"),
            "transformers": dist_version("transformers"),
            "sha256": self.identity[:16],
        }

    def _identity_folders(self) -> tuple[Path | None, ...]:
        return (self.model_path, None if self.tokenizer_path == self.model_path else self.tokenizer_path)

    # ------------------------------------------------------------------ inputs
    def input_texts(self, hyps: list[str], refs: list[str] | None, srcs: list[str] | None) -> list[str]:
        """The texts MetricX encodes, one per segment (before tokenisation)."""
        v = self.variant
        if v == "23-ref":
            return [f"candidate: {h} reference: {r}" for h, r in zip(hyps, refs or [], strict=True)]
        if v == "23-qe":
            return [f"candidate: {h} source: {s}" for h, s in zip(hyps, srcs or [], strict=True)]
        if v == "24-qe":
            return [f"source: {s} candidate: {h}" for h, s in zip(hyps, srcs or [], strict=True)]
        sources = srcs if v == "24-hybrid" else [""] * len(hyps)
        return [f"source: {s} candidate: {h} reference: {r}"
                for h, r, s in zip(hyps, refs or [], sources or [], strict=True)]

    # ------------------------------------------------------------------ model
    def _load(self) -> Any:
        require("torch", "torch", "the MetricX metric")
        transformers = require("transformers", "transformers", "the MetricX metric")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.tokenizer_path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise InputError(f"tokenizer_path {str(self.tokenizer_path)!r}: transformers cannot load a tokenizer "
                             f"there ({_first_line(exc)}); pass the local directory of the mT5 tokenizer "
                             "(google/mt5-xl)", argument="tokenizer_path", value=str(self.tokenizer_path)) from None
        _check_tokenizer(tokenizer, self.config, self.tokenizer_path)
        # transformers 5 notes that config.json's tie flag differs from MT5Config's forced one (it keeps both
        # matrices, and xleval reads the score row from the file): not the user's concern
        _check_weight_shapes(self.model_path, self.config)
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        try:
            model, info = transformers.MT5ForConditionalGeneration.from_pretrained(
                str(self.model_path), local_files_only=True, dtype=self._torch_dtype(), output_loading_info=True)
        except pickle.UnpicklingError as exc:  # a pytorch_model.bin that is not weights only
            raise ModelFileError(refused_pickle(self.model_path, exc, "MetricX checkpoint"), argument="model_path",
                                 value=str(self.model_path)) from None
        except (OSError, ValueError, RuntimeError, KeyError, TypeError, EOFError, MemoryError) as exc:
            raise ModelFileError(f"{self.model_path}: transformers cannot load the MetricX weights "
                                 f"({first_line(exc)[:300]}); the checkpoint is damaged or incomplete: download it "
                                 "again", argument="model_path", value=str(self.model_path)) from None
        finally:
            transformers.logging.set_verbosity(verbosity)
        # the load report, which transformers only logs: a missing block would score with random weights
        mismatched = [str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys", [])]
        check_state_keys(info.get("missing_keys", []), [*info.get("unexpected_keys", []), *mismatched],
                         self.model_path)
        model.eval()
        row, scale = self._score_row(model)
        replicas = [(model.to(self.devices[0]), row.to(self.devices[0]), scale)]
        for device in self.devices[1:]:  # data parallel: one replica per listed device
            import copy

            replicas.append((copy.deepcopy(model).to(device), row.to(device), scale))
        return tokenizer, replicas

    def _score_row(self, model: Any) -> tuple[Any, float]:
        """The output-projection row of the score token, and the factor applied to the decoder state before it.

        MetricX's checkpoints (mT5) keep ``lm_head.weight`` apart from the embeddings
        (``tie_word_embeddings: false`` in config.json). transformers 5's MT5Config ties them in memory
        whatever the file says, so the row is read from the checkpoint file itself; a tied checkpoint (the T5
        layout) uses the embedding row and mT5's d_model**-0.5 rescaling, as MetricX's model class does."""
        if self.config.get("tie_word_embeddings", True):
            return model.shared.weight[SCORE_TOKEN_ID].detach().clone(), float(model.config.d_model) ** -0.5
        row = _checkpoint_row(self.model_path, "lm_head.weight", SCORE_TOKEN_ID)
        if row is None:
            raise InputError(f"{self.model_path} is not a complete MetricX checkpoint: config.json says its output "
                             "projection is separate (tie_word_embeddings: false) but no weight file holds "
                             "lm_head.weight; download the checkpoint again", argument="model_path",
                             value=str(self.model_path))
        return row.to(model.dtype), 1.0

    # ------------------------------------------------------------------ scoring
    def _neural_scores(self, model, hyps, refs, srcs) -> np.ndarray:
        tokenizer, replicas = model
        ref_list = self._single_ref_stream(refs) if self.needs_refs else None
        texts = self.input_texts(hyps, ref_list, srcs)
        encoded = tokenizer(texts, max_length=self.max_length, truncation=True, padding=False)["input_ids"]
        ids = [list(seq[:-1]) for seq in encoded]  # MetricX drops the end-of-sequence token
        plan = length_batches([len(x) for x in ids], self.batch_size, self.sort_by_length)
        scores = np.empty(len(ids), dtype=np.float64)
        shares = [plan[k :: len(replicas)] for k in range(len(replicas))]  # round-robin over the devices

        def run(k: int) -> None:
            net, row, scale = replicas[k]
            for rows in shares[k]:
                scores[rows] = _forward(net, row, scale, [ids[i] for i in rows], tokenizer.pad_token_id)

        if len(replicas) == 1:
            run(0)
        else:
            with ThreadPoolExecutor(max_workers=len(replicas)) as pool:
                list(pool.map(run, range(len(replicas))))
        return scores


def length_batches(lengths: list[int], batch_size: int, sort: bool = True) -> list[np.ndarray]:
    """Row indices of each batch: consecutive rows, or (``sort``) rows of similar length together,
    longest first, so that a batch pads little and an out-of-memory error shows at once."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable") if sort else np.arange(len(lengths))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def _forward(model: Any, row: Any, scale: float, batch: list[list[int]], pad_id: int) -> np.ndarray:
    """MetricX's prediction for a padded batch: encoder, one decoder step from id 0, the score token's logit
    (the decoder state times ``scale``, dotted with the output-projection ``row``), clamped to [0, 25]."""
    import torch

    device = model.device
    width = max(1, *(len(x) for x in batch))
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, seq in enumerate(batch):
        input_ids[i, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[i, : len(seq)] = 1
    input_ids, mask = input_ids.to(device), mask.to(device)
    with torch.inference_mode():
        hidden = model.encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state
        start = torch.zeros((len(batch), 1), dtype=torch.long, device=device)  # one decoder step from id 0
        out = model.decoder(input_ids=start, encoder_hidden_states=hidden, encoder_attention_mask=mask,
                            use_cache=False)
        logit = (out.last_hidden_state[:, 0, :] * scale) @ row
        return logit.float().clamp(0.0, 25.0).cpu().numpy().astype(np.float64)


def _checkpoint_row(model_dir: Path, key: str, index: int) -> Any:
    """Row ``index`` of tensor ``key`` read from the checkpoint's weight files (safetensors or PyTorch,
    single or sharded), or None when no file holds ``key``."""
    import torch

    for index_name, single in (("model.safetensors.index.json", "model.safetensors"),
                               ("pytorch_model.bin.index.json", "pytorch_model.bin")):
        index_file = model_dir / index_name
        if index_file.is_file():
            shard = json.loads(index_file.read_text(encoding="utf-8")).get("weight_map", {}).get(key)
            files = [model_dir / shard] if shard else []
        else:
            files = [model_dir / single] if (model_dir / single).is_file() else []
        for file in files:
            if file.suffix == ".safetensors":
                from safetensors import safe_open

                with safe_open(str(file), framework="pt") as f:
                    if key in set(f.keys()):  # safe_open has no __contains__
                        return f.get_slice(key)[index : index + 1][0].clone()
            else:
                weights = torch.load(file, map_location="cpu", weights_only=True, mmap=True)
                if key in weights:
                    return weights[key][index].clone()
    return None


# ---------------------------------------------------------------------- checkpoint checks
def _read_config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "config.json"
    where = f"{model_dir} is not a MetricX checkpoint"
    if not path.is_file():
        raise InputError(f"{where}: it has no config.json; pass the directory of a downloaded MetricX model "
                         "(google/metricx-23-*, google/metricx-24-hybrid-*)", argument="model_path",
                         value=str(model_dir))
    config = read_json_config(path)
    if not isinstance(config, dict):
        raise InputError(f"{path}: not a model config (a JSON object); download the checkpoint again",
                         argument="model_path", value=str(model_dir))
    arch = config.get("architectures") or []
    if config.get("model_type") not in ("mt5", "t5") or not any(str(a).endswith("ForRegression") for a in arch):
        raise InputError(f"{where}: its config.json describes model_type={config.get('model_type')!r}, "
                         f"architectures={arch!r}, not MetricX's mT5 regression model (MT5ForRegression); "
                         "for COMET use comet:PATH", argument="model_path", value=str(model_dir))
    vocab = config.get("vocab_size")
    if not isinstance(vocab, int) or vocab <= SCORE_TOKEN_ID:
        raise InputError(f"{where}: its vocabulary ({vocab!r} entries) has no score token {SCORE_TOKEN_ID}; "
                         "MetricX models keep mT5's vocabulary of 250112", argument="model_path", value=str(model_dir))
    for key, limit in _SIZE_LIMITS.items():
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit):
            raise ModelFileError(f"{path}: {key}={value!r} is not a size an mT5 model has (a positive integer up to "
                                 f"{limit}); download the checkpoint again", argument="model_path",
                                 value=str(model_dir))
    return config


#: bounds of config.json's sizes (mT5-XXL: d_model 4096, d_ff 10240, 24 layers, 64 heads); beyond them a model
#: would not fit in any memory, and building it would fail with the allocator's error, not a line
_SIZE_LIMITS = {"vocab_size": 1 << 20, "d_model": 1 << 15, "d_ff": 1 << 17, "d_kv": 1 << 12, "num_heads": 1 << 10,
                "num_layers": 1 << 9, "num_decoder_layers": 1 << 9, "relative_attention_num_buckets": 1 << 12}


def _check_weight_shapes(model_dir: Path, config: dict[str, Any]) -> None:
    """The embedding matrix in the weight file has config.json's shape (vocab_size x d_model); read from the
    safetensors header only. A config.json of other sizes would build a model the weights do not fit."""
    index = model_dir / "model.safetensors.index.json"
    files = [model_dir / "model.safetensors"]
    if index.is_file():
        shard = (read_json_config(index, "model.safetensors.index.json") or {}).get("weight_map", {}).get(
            "shared.weight")
        files = [model_dir / str(shard)] if shard else []
    for file in files:
        if not file.is_file():
            continue
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(file), framework="pt") as f:
                if "shared.weight" not in set(f.keys()):
                    return
                shape = list(f.get_slice("shared.weight").get_shape())
        except (SafetensorError, OSError, ValueError) as exc:
            raise ModelFileError(f"{file}: not a readable safetensors file ({first_line(exc)}); download the "
                                 "checkpoint again", argument="model_path", value=str(model_dir)) from None
        want = [config.get("vocab_size"), config.get("d_model")]
        if shape != want:
            raise ModelFileError(f"{file}: the embeddings are {shape[0]} x {shape[-1]} but config.json says "
                                 f"vocab_size x d_model = {want[0]} x {want[1]}; the weights and config.json come "
                                 "from different models: download the checkpoint again", argument="model_path",
                                 value=str(model_dir))


def _detected_variant(model_dir: Path, config: dict[str, Any]) -> str | None:
    for name in (model_dir.resolve().name, str(config.get("_name_or_path", ""))):
        match = _NAME_RE.search(name)
        if match:
            year, kind = match.group(1), (match.group(2) or "").lower()
            return "23-qe" if (year, kind) == ("23", "qe") else "23-ref" if year == "23" else "24-hybrid"
    return None


def _choose_variant(variant: str | None, detected: str | None, model_dir: Path) -> str:
    if variant is None:
        if detected is None:
            raise InputError(f"cannot tell which MetricX model {model_dir.name!r} is (its name does not say "
                             "metricx-23, metricx-23-qe or metricx-24); pass variant= one of "
                             f"{', '.join(VARIANTS)}", argument="variant", value=None)
        return detected
    if variant not in VARIANTS:
        raise InputError(f"variant={variant!r}: use one of {', '.join(VARIANTS)}", argument="variant", value=variant)
    if detected is None or detected == variant or (detected == "24-hybrid" and variant.startswith("24")):
        return variant
    if detected == "23-qe" and variant == "23-ref":
        why = "a QE model (trained on source and candidate) cannot read references"
    elif detected == "23-ref" and variant == "23-qe":
        why = "a reference-based model (trained on candidate and reference) cannot run as QE"
    else:
        why = f"it is a MetricX-{detected[:2]} model"
    raise InputError(f"variant={variant!r} does not fit checkpoint {model_dir.name!r} ({detected}): {why}; "
                     f"use variant={detected!r} or leave variant out", argument="variant", value=variant)


def _tokenizer_dir(tokenizer_path: Any, model_dir: Path) -> Path:
    if tokenizer_path is not None:
        return check_model_dir(tokenizer_path, "MetricX tokenizer")
    if any((model_dir / name).is_file() for name in _TOKENIZER_FILES):
        return model_dir
    raise InputError(f"MetricX checkpoint {model_dir.name!r} holds no tokenizer; pass tokenizer_path= the local "
                     "directory of the mT5 tokenizer MetricX uses (google/mt5-xl)", argument="tokenizer_path",
                     value=None)


def _check_tokenizer(tokenizer: Any, config: dict[str, Any], where: Path) -> None:
    problems = []
    if len(tokenizer) > int(config["vocab_size"]):
        problems.append(f"it has {len(tokenizer)} entries, more than the model's {config['vocab_size']}")
    for role, default in (("pad", 0), ("eos", 1)):
        want, got = config.get(f"{role}_token_id", default), getattr(tokenizer, f"{role}_token_id")
        if got != want:
            problems.append(f"its {role} token id is {got!r}, the model's {want!r}")
    if not problems:
        probe = tokenizer("a")["input_ids"]
        if not probe or probe[-1] != tokenizer.eos_token_id:
            problems.append("it does not end its inputs with the end-of-sequence token MetricX drops")
    if problems:
        raise InputError(f"tokenizer {where.name!r} does not match the MetricX model: {'; '.join(problems)}; "
                         "pass tokenizer_path= the mT5 tokenizer (google/mt5-xl)",
                         argument="tokenizer_path", value=str(where))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__

