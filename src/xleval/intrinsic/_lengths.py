"""Length statistics of the text itself: characters, UTF-8 bytes, tokens under a tokenizer.

Characters are Unicode code points by default (what ``len(str)`` counts, and what the "Apples
to Apples" scripts divide by); ``unit="graphemes"`` counts extended grapheme clusters (one
user-perceived character: a Devanagari conjunct or an emoji with modifiers counts once).
Bytes are UTF-8 bytes of the text as given, spaces included.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from xleval.exceptions import InputError

__all__ = ["CHAR_UNITS", "count_chars", "count_bytes", "count_tokens", "text_lengths"]

CHAR_UNITS = ("codepoints", "graphemes")


def _texts(texts: Iterable[Any], name: str = "texts") -> list[str]:
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(f"{name}[{i}] is {type(t).__name__} ({t!r}), not text; give strings (use '' for empty)")
    return out


def count_chars(texts: Iterable[str], unit: str = "codepoints") -> np.ndarray:
    """Characters per text: code points, or grapheme clusters with ``unit="graphemes"``."""
    if unit not in CHAR_UNITS:
        raise InputError(f"char unit {unit!r} is not one of {CHAR_UNITS}")
    items = _texts(texts)
    if unit == "codepoints":
        return np.fromiter((len(t) for t in items), dtype=np.int64, count=len(items))
    import regex  # the stdlib re has no \X (extended grapheme cluster)

    pattern = regex.compile(r"\X")
    return np.fromiter((len(pattern.findall(t)) for t in items), dtype=np.int64, count=len(items))


def count_bytes(texts: Iterable[str]) -> np.ndarray:
    """UTF-8 bytes per text (spaces included)."""
    items = _texts(texts)
    return np.fromiter((len(t.encode("utf-8")) for t in items), dtype=np.int64, count=len(items))


def count_tokens(texts: Iterable[str], tokenizer: Any) -> np.ndarray:
    """Tokens per text under ``tokenizer``: a callable ``str -> sequence`` or an object with
    ``encode`` (HF ``tokenizers.Tokenizer`` or a ``transformers`` tokenizer; special tokens
    are not added, so the count is that of the text itself)."""
    encode = _encoder(tokenizer)
    items = _texts(texts)
    return np.fromiter((len(encode(t)) for t in items), dtype=np.int64, count=len(items))


def _encoder(tokenizer: Any) -> Callable[[str], Sequence[Any]]:
    encode = getattr(tokenizer, "encode", None)
    if encode is None:
        if callable(tokenizer):
            return tokenizer
        raise InputError(f"tokenizer {tokenizer!r} has no encode(); give a callable str -> tokens or a tokenizer "
                         "object")
    if type(tokenizer).__module__.startswith("tokenizers"):
        return lambda t: encode(t, add_special_tokens=False).ids
    try:
        encode("a", add_special_tokens=False)
    except TypeError:
        return encode
    return lambda t: encode(t, add_special_tokens=False)


def text_lengths(texts: Iterable[str], *, tokenizer: Any = None,
                 char_unit: str = "codepoints") -> dict[str, np.ndarray]:
    """``{"chars", "bytes"[, "tokens"]}`` arrays for ``texts`` (tokens only with a tokenizer)."""
    items = _texts(texts)
    out = {"chars": count_chars(items, char_unit), "bytes": count_bytes(items)}
    if tokenizer is not None:
        out["tokens"] = count_tokens(items, tokenizer)
    return out
