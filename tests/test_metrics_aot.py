"""The ahead-of-time compiled kernels: built from the numba source, loaded without numba, and equal
to the JIT kernels on edge cases and WMT21 lines."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    import os

    from xleval.metrics import _aot

    cache = tmp_path_factory.mktemp("xleval-cache")
    old = os.environ.get("XLEVAL_CACHE_DIR")
    os.environ["XLEVAL_CACHE_DIR"] = str(cache)
    try:
        try:
            path = _aot.build()
        except Exception as exc:  # noqa: BLE001 - no C compiler here: the JIT kernels are used instead
            pytest.skip(f"cannot build the compiled kernels here: {exc}")
        module = _aot.load()
        yield cache, path, module
    finally:
        if old is None:
            os.environ.pop("XLEVAL_CACHE_DIR", None)
        else:
            os.environ["XLEVAL_CACHE_DIR"] = old


def _lines(wmt21_segments):
    sample = wmt21_segments.sample(2000, random_state=3)
    extra = ["", " ", "a", "&amp; &quot;x&quot; <skipped> a-\nb", "中文，句子。😀", "1.5, 2,000 - x-y", "a" * 300]
    return sample["hypothesis"].tolist() + extra, sample["reference"].tolist() + extra[::-1]


def test_compiled_kernels_equal_the_jit_ones(compiled, wmt21_segments):
    from xleval.metrics import _fast
    from xleval.metrics import _kernels as jit

    _, path, aot = compiled
    assert aot is not None and path.name.startswith("_xleval_kernels_")
    hyps, refs = _lines(wmt21_segments)
    lines, hyp_idx, ref_idx = _fast.dedupe(hyps, [refs])
    units, off = _fast.code_points(lines)
    t = _fast.tables()
    for mode in (0, 1):
        args = (units, off, mode, t["space"], t["punct"], t["chinese"], *_fast.replace_args())
        for a, b in zip(aot.tokenize_re(*args), jit.tokenize_re(*args), strict=True):
            np.testing.assert_array_equal(a, b)
    chars, tok_off, line_tok = jit.tokenize_re(units, off, 0, t["space"], t["punct"], t["chinese"],
                                               *_fast.replace_args())
    ids_a, n_a = aot.intern_tokens(chars, tok_off)
    ids_j, n_j = jit.intern_tokens(chars, tok_off)
    np.testing.assert_array_equal(ids_a, ids_j)
    assert n_a == n_j
    stripped = aot.strip_space(units, off, t["space"])
    for a, b in zip(stripped, jit.strip_space(units, off, t["space"]), strict=True):
        np.testing.assert_array_equal(a, b)
    used = np.array([len(lines) - 1, 0, 3], dtype=np.int64)
    for a, b in zip(aot.gather_lines(units, off, used), jit.gather_lines(units, off, used), strict=True):
        np.testing.assert_array_equal(a, b)
    encoded = [s.encode() for s in lines]
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    bounds = np.cumsum([0] + [len(b) for b in encoded]).astype(np.int64)
    decoded = aot.utf8_units(data, bounds)
    assert decoded[2] and jit.utf8_units(data, bounds)[2]
    np.testing.assert_array_equal(decoded[0], units)
    np.testing.assert_array_equal(decoded[1], off)
    for u, o, order in ((ids_j, line_tok, 4), (*stripped, 6)):
        expected = jit.clipped_matches(u, o, hyp_idx, ref_idx, order)
        np.testing.assert_array_equal(aot.clipped_matches(u, o, hyp_idx, ref_idx, order), expected)
        np.testing.assert_array_equal(aot.clipped_matches_shared(u, o, hyp_idx, ref_idx[0].copy(), order), expected)
        np.testing.assert_array_equal(jit.clipped_matches_shared(u, o, hyp_idx, ref_idx[0].copy(), order), expected)


def test_compiled_kernels_load_without_numba(compiled):
    cache, _, _ = compiled
    code = ("import os, sys; from xleval.metrics import _fast; k = _fast._kernels(); "
            "print(k.__name__.startswith('_xleval_kernels_'), 'numba' in sys.modules)")
    import os

    env = {**os.environ, "XLEVAL_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["True", "False"]


def test_a_stale_build_is_not_loaded(compiled, monkeypatch):
    from xleval.metrics import _aot

    monkeypatch.setattr(_aot, "module_name", lambda: "_xleval_kernels_0000000000000000")
    assert _aot.load() is None


def test_compiled_ter_equals_the_jit_kernel(compiled, wmt21_segments):
    """TER's edit counts from the AOT module are the JIT kernel's (adversarial sequences and WMT21 pairs)."""
    from xleval.metrics import _ter_kernels as jit

    _, _, aot = compiled
    rng = np.random.default_rng(5)
    lines = [rng.integers(0, 4, int(n)) for n in rng.integers(0, 40, 60)]
    lines += [np.array([hash(w) % 1000 for w in s.lower().split()]) for s in
              wmt21_segments["hypothesis"].iloc[:100].tolist() + wmt21_segments["reference"].iloc[:100].tolist()]
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in lines], out=off[1:])
    ids = np.concatenate(lines).astype(np.int64)
    hyp = np.arange(0, len(lines) - 1, dtype=np.int64)
    ref = np.arange(1, len(lines), dtype=np.int64)
    for a, b in zip(aot.edit_rates(ids, off, hyp, ref), jit.edit_rates(ids, off, hyp, ref), strict=True):
        np.testing.assert_array_equal(a, b)
