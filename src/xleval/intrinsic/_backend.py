"""Scoring backend: per-sentence log-likelihoods from a local transformers causal LM.

Needs the ``lm`` extra (torch, transformers); both are imported only when scoring.

**BOS handling** (``bos``): a causal LM predicts token i from tokens < i, so the first token of
a text has no context. ``"auto"`` prepends the tokenizer's BOS token when it has one (then
every text token is scored) and otherwise leaves the first token unscored; ``"prepend"``
requires a BOS token; ``"none"`` never prepends (the first token is not scored, as in minicons
and the "Apples to Apples" scripts; one-token texts then have zero scored tokens). Tokens are
counted without special tokens. **Truncation**: texts longer than ``max_length`` tokens
(BOS included) are cut; ``chars``/``bytes`` are then those of the decoded kept tokens, the row
is flagged ``truncated``, and ``max_length`` is part of the signature.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from xleval import __version__
from xleval.exceptions import InputError, MissingDependencyError

from ._lengths import count_bytes, count_chars

__all__ = ["LMScorer", "score_texts", "BOS_CHOICES"]

BOS_CHOICES = ("auto", "prepend", "none")


def _import_lm() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError(exc.name or "torch", "lm", "scoring texts with a causal LM") from None
    return torch, transformers


@dataclass(frozen=True)
class LMScorer:
    """A causal LM scorer; every option that changes the numbers is in :attr:`signature`."""

    model: str
    bos: str = "auto"
    max_length: int | None = None
    batch_size: int = 8
    device: str = "cpu"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.bos not in BOS_CHOICES:
            raise InputError(f"bos={self.bos!r}: choose one of {BOS_CHOICES}")
        if self.batch_size < 1:
            raise InputError(f"batch_size={self.batch_size}: must be >= 1")
        if not os.path.isdir(self.model):  # checked before torch is imported
            raise InputError(f"model={self.model!r}: no such directory; give a local transformers model folder "
                             "(config.json, weights and tokenizer files)", argument="model", value=self.model)
        if self.max_length is not None and self.max_length < 2:
            raise InputError(f"max_length={self.max_length}: must be >= 2 (one context token + one scored token)")

    def signature(self, resolved: dict[str, Any] | None = None) -> str:
        r = resolved or {}
        name = os.path.basename(os.path.normpath(self.model))
        return (f"lm-nll|model:{name}|bos:{r.get('bos', self.bos)}|maxlen:{r.get('max_length', self.max_length)}"
                f"|dtype:{self.dtype}|unit:nats|xleval:{__version__}")

    def score(self, texts: Sequence[str], progress: Callable[[int], None] | None = None) -> pd.DataFrame:
        """One row per text: ``nll`` (nats), ``tokens`` (scored), ``chars``, ``bytes``,
        ``truncated``; ``df.attrs["signature"]`` records the resolved options."""
        torch, transformers = _import_lm()
        if not os.path.isdir(self.model):
            raise InputError(f"model={self.model!r}: no such directory; give a local transformers model folder "
                             "(config.json, weights and tokenizer files)", argument="model", value=self.model)
        tok = transformers.AutoTokenizer.from_pretrained(self.model)
        lm = transformers.AutoModelForCausalLM.from_pretrained(self.model, dtype=getattr(torch, self.dtype))
        lm.to(self.device).eval()
        bos_id, max_len = self._resolve(tok, lm)
        ids, truncated = self._encode(tok, texts, bos_id, max_len)
        nll = np.zeros(len(ids))
        for start in range(0, len(ids), self.batch_size):
            batch = ids[start:start + self.batch_size]
            nll[start:start + len(batch)] = _batch_nll(torch, lm, batch, self.device)
            if progress is not None:
                progress(len(batch))
        return self._frame(tok, texts, ids, truncated, nll, bos_id, max_len)

    def _resolve(self, tok: Any, lm: Any) -> tuple[int | None, int]:
        bos_id = tok.bos_token_id if self.bos in ("auto", "prepend") else None
        if self.bos == "prepend" and bos_id is None:
            raise InputError(f"bos='prepend' but the tokenizer of {self.model} has no BOS token; use bos='none'")
        limit = getattr(lm.config, "n_positions", None) or getattr(lm.config, "max_position_embeddings", None) or 1024
        return bos_id, min(self.max_length or limit, limit)

    @staticmethod
    def _encode(tok: Any, texts: Sequence[str], bos_id: int | None, max_len: int) -> tuple[list[list[int]], list[bool]]:
        ids, truncated = [], []
        prefix = [] if bos_id is None else [bos_id]
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"text {i + 1} is {type(text).__name__}, not a string")
            full = prefix + tok.encode(text, add_special_tokens=False)
            truncated.append(len(full) > max_len)
            ids.append(full[:max_len])
        return ids, truncated

    def _frame(self, tok: Any, texts: Sequence[str], ids: list[list[int]], truncated: list[bool], nll: np.ndarray,
               bos_id: int | None, max_len: int) -> pd.DataFrame:
        skip = 0 if bos_id is None else 1
        # The metrics must describe the text that was scored: decode what was kept.
        scored_text = [tok.decode(x[skip:]) if cut else t for x, t, cut in zip(ids, texts, truncated, strict=True)]
        df = pd.DataFrame({"nll": nll, "tokens": [max(len(x) - 1, 0) for x in ids],
                           "chars": count_chars(scored_text), "bytes": count_bytes(scored_text),
                           "truncated": truncated})
        resolved = {"bos": "prepend" if bos_id is not None else "none", "max_length": max_len}
        df.attrs["signature"] = self.signature(resolved)
        return df


def _batch_nll(torch: Any, lm: Any, batch: list[list[int]], device: str) -> np.ndarray:
    width = max(len(x) for x in batch)
    input_ids = torch.zeros((len(batch), width), dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, x in enumerate(batch):
        input_ids[i, :len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, :len(x)] = 1
    if width < 2:
        return np.zeros(len(batch))
    with torch.no_grad():
        logits = lm(input_ids=input_ids.to(device), attention_mask=mask.to(device)).logits.float()
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = input_ids[:, 1:].to(device)
    picked = logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    # Right padding: position t is scored only when the target token t+1 is real.
    picked = picked * mask[:, 1:].to(device)
    return (-picked.sum(dim=1)).cpu().numpy().astype(float) + 0.0  # no "-0.0" for unscored texts


def score_texts(model: str, texts: Sequence[str], *, bos: str = "auto", max_length: int | None = None,
                batch_size: int = 8, device: str = "cpu",
                progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Score ``texts`` with the local causal LM in the folder ``model`` (see :class:`LMScorer`)."""
    return LMScorer(model, bos=bos, max_length=max_length, batch_size=batch_size, device=device).score(texts, progress)
