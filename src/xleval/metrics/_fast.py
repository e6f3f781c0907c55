"""The compiled fast path of BLEU and chrF (optional: ``pip install xleval[fast]`` installs numba).

Both paths produce the same integer sufficient statistics; the numpy path (``_ngrams``,
``_tokenize``) runs when numba is absent or when :func:`set_backend` selects it.

Every distinct string of a batch (hypotheses and references together) is converted once:
references repeat across systems, so each is tokenised once per batch. ``13a`` and ``zh`` are
tokenised by the compiled replay of sacrebleu's tokenizer (``_kernels.tokenize_re``; used only
while sacrebleu's patterns are the ones it replays); the other tokenizers run sacrebleu's own
code and only the counting is compiled.

The kernels come from the ahead-of-time build (``_aot``: a plain extension module, loaded without
numba) when it exists for the current source, else from numba's JIT; the first JIT use builds the
AOT module in the cache folder for the next processes (``XLEVAL_AOT=0`` turns that off).
"""
from __future__ import annotations

import functools
import importlib
import itertools
import logging
import os
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np

from xleval.exceptions import InputError, MissingDependencyError

__all__ = ["backend", "enabled", "get_backend", "set_backend"]

logger = logging.getLogger(__name__)

_BACKENDS = ("auto", "numba", "numpy")
_state = {"backend": "auto"}

# Segments per compiled call: large enough that references repeat inside a batch, small enough
# that the code point buffers stay at tens of MB.
CHUNK = 50_000


def set_backend(name: str) -> str:
    """Select the BLEU/chrF kernels: ``auto`` (numba when installed), ``numba`` or ``numpy``.

    Both give identical numbers. Returns the previous setting.
    """
    if name not in _BACKENDS:
        raise InputError(f"backend must be one of {', '.join(_BACKENDS)}, got {name!r}")
    if name == "numba":
        _require_kernels()
    previous, _state["backend"] = _state["backend"], name
    return previous


def get_backend() -> str:
    """The kernels that BLEU/chrF use now: ``numba`` or ``numpy``."""
    return "numba" if enabled() else "numpy"


@contextmanager
def backend(name: str):
    """``with backend("numpy"): ...`` runs the block with the given kernels."""
    previous = set_backend(name)
    try:
        yield
    finally:
        _state["backend"] = previous


def enabled() -> bool:
    """Whether the compiled kernels run (numba installed and not switched off)."""
    return _state["backend"] != "numpy" and _kernels() is not None


@functools.lru_cache(maxsize=1)
def _kernels():
    aot = os.environ.get("XLEVAL_AOT", "1") != "0"
    if aot:
        from . import _aot

        compiled = _aot.load()
        if compiled is not None:
            return compiled
    return jit_kernels("xleval.metrics._kernels", "BLEU/chrF use the numpy path", aot)


def jit_kernels(module: str, instead: str, aot: bool) -> Any:
    """numba's JIT module of kernels, or None: numba absent (``ImportError``), or present but unusable here
    (e.g. no writable cache location: a warning that says what runs ``instead``). The first JIT use builds
    the ahead-of-time module for the next processes when ``aot``."""
    try:
        jit = importlib.import_module(module)
    except ImportError:
        return None
    except RuntimeError as err:
        logger.warning("numba kernels unavailable (%s); %s", err, instead)
        return None
    if aot:
        _build_for_next_time()
    return jit


def _build_for_next_time() -> None:
    """Build the ahead-of-time kernels once (about a minute of CPU), so that later processes skip
    loading numba; a failure (no C compiler, read-only cache) is remembered and never retried."""
    from . import _aot

    marker = _aot.cache_dir() / (_aot.module_name() + ".failed")
    if marker.exists():
        return
    try:
        logger.info("building the compiled BLEU/chrF kernels once into %s", _aot.cache_dir())
        _aot.build()
    except Exception as err:  # noqa: BLE001 - any build failure leaves the JIT kernels in use
        logger.warning("could not build the compiled kernels (%s); numba's JIT kernels are used", err)
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(str(err), encoding="utf-8")
        except OSError:
            pass


# str.replace steps of Tokenizer13a, in sacrebleu's order (after BLEU's rstrip)
REPLACE_13A = [("<skipped>", ""), ("-\n", ""), ("\n", " "), ("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"),
               ("&gt;", ">")]


def _flat(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one int32 code point array plus int64 offsets."""
    off = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    return np.array([ord(c) for c in "".join(texts)], dtype=np.int32), off


@functools.lru_cache(maxsize=1)
def replace_args() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The 13a replacements as kernel arguments: patterns and replacements, each flat + offsets."""
    return (*_flat([p for p, _ in REPLACE_13A]), *_flat([r for _, r in REPLACE_13A]))


def _require_kernels():
    kernels = _kernels()
    if kernels is None:
        raise MissingDependencyError("numba", "fast", "the compiled BLEU/chrF kernels")
    return kernels


# ---------------------------------------------------------------------------------- character tables


@functools.lru_cache(maxsize=1)
def tables() -> dict[str, np.ndarray]:
    """Lookup tables by code point: whitespace (``str.isspace``: what ``str.split()`` splits on),
    13a's first punctuation class, and TokenizerZh's Chinese characters."""
    from sacrebleu.tokenizers.tokenizer_zh import _UCODE_RANGES

    # every str.isspace() character lies below U+3001 (the tests check all code points)
    space = np.array([chr(c).isspace() for c in range(0x3001)], dtype=np.bool_)
    first_pattern = _regexp_patterns()[0][0]
    punct = np.array([bool(first_pattern.fullmatch(chr(c))) for c in range(0x80)], dtype=np.bool_)
    chinese = np.zeros(0x10000, dtype=np.bool_)
    for start, end in _UCODE_RANGES:
        # sacrebleu compares one character with these strings; some are two characters long
        # ('\u20000' is U+2000 then '0'), so c >= start means c > start[0] for those
        low = ord(start[0]) + (len(start) > 1)
        chinese[low : ord(end[0]) + 1] = True
    return {"space": space, "punct": punct, "chinese": chinese}


# the TokenizerRegexp substitutions that _kernels.tokenize_re replays
_EXPECTED_RE = [
    (r"([\{-\~\[-\` -\&\(-\+\:-\@\/])", r" \1 "),
    (r"([^0-9])([\.,])", r"\1 \2 "),
    (r"([\.,])([^0-9])", r" \1 \2"),
    (r"([0-9])(-)", r"\1 \2 "),
]


@functools.lru_cache(maxsize=1)
def _regexp_patterns() -> list:
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    return TokenizerRegexp()._re


# Lines exercising every replacement and substitution of 13a/zh; the compiled replay is used for a
# tokenizer only if it splits these exactly as sacrebleu's code (installed version) does.
_PROBES = [
    "", " ", "a", "Hello, world. 3.5 and 3,000 - 4-5 x-y 1-", "&quot;q&quot; &amp;amp; &lt;b&gt; & ;",
    "<skipped> a-\nb\nc-\n", "...,,.. 1.2.3 a.b ,a a, .5 5. ", "(x){y}[z]|~`^_\\/@?>=<;:+*)'\"!#$%",
    "tab\tnbsp\u00a0ideo\u3000end\u2028\u0085 ", "中文，句子。ｆｕｌｌ　ｗｉｄｔｈ 𠀀\u2001\u2a6d\u2fa1 x",
    " \ufffd\ud800 ", "don't stop-believing 1990-2000 -3 e.g. U.S.A. $1,000.00",
]


@functools.lru_cache(maxsize=1)
def compiled_tokenizers() -> frozenset[str]:
    """Tokenizers that the compiled kernel replays (13a, zh) and that agree with sacrebleu on the probes."""
    from ._tokenize import tokenize_lines

    kernels = _kernels()
    if kernels is None:
        return frozenset()
    if [(p.pattern, r) for p, r in _regexp_patterns()] != _EXPECTED_RE:
        return frozenset()
    ok = set()
    for name in ("13a", "zh"):
        expected = [s.split() for s in tokenize_lines(_PROBES, name, lowercase=False)]
        if _compiled_words(kernels, _PROBES, name) == expected:
            ok.add(name)
    return frozenset(ok)


def _compiled_words(kernels, lines: list[str], tokenizer: str) -> list[list[str]]:
    """Token strings of the compiled tokenizer (for the probes and the tests)."""
    t = tables()
    units, off = code_points(lines)
    chars, tok_off, line_tok = kernels.tokenize_re(
        units, off, 0 if tokenizer == "13a" else 1, t["space"], t["punct"], t["chinese"], *replace_args()
    )
    text = chars.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
    toks = [text[tok_off[i] : tok_off[i + 1]] for i in range(len(tok_off) - 1)]
    return [toks[line_tok[i] : line_tok[i + 1]] for i in range(len(lines))]


# ---------------------------------------------------------------------------------- batch preparation


def _arrow_compute():
    """Arrow's compute registry: importing ``pyarrow.compute`` itself builds a wrapper for each of its
    ~300 functions (tens of ms a process), so the registry is called directly where it exists."""
    try:
        from pyarrow import _compute
    except ImportError:  # a pyarrow without the private module: the public one
        import pyarrow.compute as _compute
    return _compute


def dictionary_encode(values):
    """Arrow's ``dictionary_encode``: codes in first-seen order."""
    return _arrow_compute().call_function("dictionary_encode", [values])


def _large_strings(column):
    import pyarrow as pa

    if pa.types.is_large_string(column.type):
        return column
    compute = _arrow_compute()
    return compute.call_function("cast", [column], compute.CastOptions(target_type=pa.large_string()))


def arrow_ints(array) -> np.ndarray:
    """The values of an Arrow integer array without nulls, read from its buffer (``to_numpy`` imports pandas)."""
    dtype = np.dtype(f"<i{array.type.bit_width // 8}")  # the signed integers Arrow's indices and lengths are
    return np.frombuffer(array.buffers()[1], dtype=dtype)[array.offset : array.offset + len(array)]


class TextPool:
    """The distinct texts of a batch, each converted to code points once: ``units[off[i]:off[i+1]]``
    is line ``i``; ``hyp`` (n,) and ``refs`` (k, n) are the line of each segment's hypothesis and
    references. References repeat across systems and BLEU and chrF read the same lines, so a table
    is deduplicated and converted once for all its metrics. ``lines`` (the Python strings, for the
    tokenizers that are not compiled) are made only when read."""

    def __init__(self, units: np.ndarray, off: np.ndarray, hyp: np.ndarray, refs: np.ndarray,
                 lines: list[str] | None = None):
        self.units, self.off, self.hyp, self.refs = units, off, hyp, refs
        self._lines = lines

    @classmethod
    def of(cls, hyps: list[str], refs: list[list[str]]) -> TextPool:
        lines, hyp, ref = dedupe(hyps, refs)
        return cls(*code_points(lines), hyp, ref, lines)

    @classmethod
    def from_arrow(cls, columns: list) -> TextPool | None:
        """The pool of Arrow text columns without nulls (hypotheses, then each reference column),
        deduplicated and decoded by Arrow and Python's codecs, not string by string; None when a column
        is not plain text or the bytes are not valid UTF-8 (the caller reads the texts as Python strings)."""
        import pyarrow as pa

        if any(c.null_count or not (pa.types.is_string(c.type) or pa.types.is_large_string(c.type)) for c in columns):
            return None
        n = len(columns[0])
        chunks = [chunk for c in columns for chunk in _large_strings(c).chunks]
        encoded = dictionary_encode(pa.chunked_array(chunks, type=pa.large_string()))
        if not encoded.num_chunks:
            return None
        dictionary = encoded.chunks[-1].dictionary  # the one dictionary of every chunk
        if any(len(c.dictionary) != len(dictionary) for c in encoded.chunks):
            return None
        codes = np.concatenate([arrow_ints(c.indices) for c in encoded.chunks]).astype(np.int64)
        bounds = np.frombuffer(dictionary.buffers()[1], dtype=np.int64)[dictionary.offset :][: len(dictionary) + 1]
        data = np.frombuffer(dictionary.buffers()[2], dtype=np.uint8)
        units, off, ok = _require_kernels().utf8_units(data, np.ascontiguousarray(bounds))
        if not ok:  # not valid UTF-8: Python's decoding and its errors decide
            return None
        return cls(units, off, codes[:n], codes[n:].reshape(len(columns) - 1, n))

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            text = self.units.astype("<u4", copy=False).tobytes().decode("utf-32-le", "surrogatepass")
            bounds = self.off.tolist()
            self._lines = [text[a:b] for a, b in itertools.pairwise(bounds)]
        return self._lines

    def __len__(self) -> int:
        return len(self.hyp)

    def subset(self, rows: np.ndarray) -> TextPool:
        """The segments ``rows``, with only the lines they use (all lines when ``rows`` covers every segment)."""
        hyp, refs = self.hyp[rows], self.refs[:, rows]
        if len(rows) == len(self.hyp):
            return TextPool(self.units, self.off, hyp, refs, self._lines)
        used, inverse = np.unique(np.concatenate([hyp, refs.ravel()]), return_inverse=True)
        units, off = _require_kernels().gather_lines(self.units, self.off, used.astype(np.int64))
        lines = None if self._lines is None else [self._lines[i] for i in used.tolist()]
        return TextPool(units, off, inverse[: len(hyp)], inverse[len(hyp) :].reshape(refs.shape), lines)

    def mapped(self, func: Callable[[str], str]) -> TextPool:
        """The same segments with ``func`` applied to every line (e.g. ``str.lower``)."""
        lines = [func(s) for s in self.lines]
        return TextPool(*code_points(lines), self.hyp, self.refs, lines)


def dedupe(hyps: list[str], refs: list[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Distinct strings of the batch, the string index of each hypothesis and of each reference ``(k, n)``."""
    n = len(hyps)
    # a dict keeps first-seen order and is about twice as fast as pandas.factorize on Python strings
    index: dict[str, int] = {}
    put = index.setdefault
    codes = np.fromiter((put(s, len(index)) for stream in (hyps, *refs) for s in stream), dtype=np.int64,
                        count=n * (1 + len(refs)))
    return list(index), codes[:n], codes[n:].reshape(len(refs), n)


def code_points(lines: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of all lines (int32, CSR) and the line offsets."""
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    data = "".join(lines).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(data, dtype="<i4"), off


def words(pool: TextPool, tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """BLEU tokens of each (already lowercased) line of the pool as ids: ``(ids, line offsets)``.
    ``tokenizer``: a name of ``_tokenize.TOKENIZERS`` or a SentencePiece tokenizer object (spBLEU)."""
    kernels = _require_kernels()
    if isinstance(tokenizer, str) and tokenizer in compiled_tokenizers():
        t = tables()
        chars, tok_off, line_tok = kernels.tokenize_re(
            pool.units, pool.off, 0 if tokenizer == "13a" else 1, t["space"], t["punct"], t["chinese"], *replace_args()
        )
        ids, _ = kernels.intern_tokens(chars, tok_off)
        return ids, line_tok
    from ._tokenize import tokenize_lines, words_to_ragged

    return ragged_csr(words_to_ragged([s.split() for s in tokenize_lines(pool.lines, tokenizer, lowercase=False)]))


def chars(pool: TextPool, whitespace: bool) -> tuple[np.ndarray, np.ndarray]:
    """chrF's character units: code points with whitespace removed unless ``whitespace``."""
    if whitespace:
        return pool.units, pool.off
    return _require_kernels().strip_space(pool.units, pool.off, tables()["space"])


def ragged_csr(ragged) -> tuple[np.ndarray, np.ndarray]:
    """A :class:`~._ngrams.Ragged` as ``(int32 ids, line offsets)``."""
    off = np.zeros(ragged.n_lines + 1, dtype=np.int64)
    np.cumsum(ragged.lengths, out=off[1:])
    return ragged.ids.astype(np.int32, copy=False), off


def matches(units, off, hyp_idx, ref_idx, order: int) -> np.ndarray:
    """Clipped matches ``(n, order)`` of each hypothesis against its references (max over them).
    With one reference per segment the reference-centric kernel counts each distinct reference once."""
    kernels = _require_kernels()
    if ref_idx.shape[0] == 1:
        return kernels.clipped_matches_shared(units, off, hyp_idx, np.ascontiguousarray(ref_idx[0]), order)
    return kernels.clipped_matches(units, off, hyp_idx, ref_idx, order)


def in_chunks(func: Callable, hyps: list[str], refs: list[list[str]], width: int) -> np.ndarray:
    """``func(hyps, refs) -> (n, width)`` over chunks of :data:`CHUNK` segments, stacked."""
    if not hyps:
        return np.zeros((0, width), dtype=np.int64)
    parts = [func(hyps[i : i + CHUNK], [s[i : i + CHUNK] for s in refs]) for i in range(0, len(hyps), CHUNK)]
    return np.concatenate(parts, axis=0)
