"""The compiled (numba) BLEU/chrF path gives the numpy path's statistics exactly, and its replay of
sacrebleu's 13a / zh tokenizers splits every line as sacrebleu does (fuzz + all WMT21 lines)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xleval.exceptions import InputError, MissingDependencyError
from xleval.metrics import BLEU, CHRF, _fast
from xleval.metrics._tokenize import tokenize_lines

pytest.importorskip("numba")

EDGE = [
    ("", "The cat sat on the mat."),
    ("The cat sat on the mat.", ""),
    ("", ""),
    ("Der Hund bellt laut.", "Der Hund bellt laut."),
    ("Tom &amp; Jerry &quot;said&quot; &lt;hi&gt; &amp;quot;", 'Tom & Jerry "said" <hi> &quot;'),
    ("bad \ufffd byte here \ud800", "bad byte here"),
    ("a", "a"),
    ("1.5 million, 2,000 people - 3-4 x...y (hi). ok", "1.5 million , 2,000 people-3-4 x . . . y ( hi ) . ok"),
    ("  leading and trailing spaces  \u3000", "leading and trailing spaces"),
    ("tab\tseparated\u00a0nbsp\u3000ideographic\u2028x\x85y", "tab separated nbsp ideographic"),
    ("<skipped> line-\nbreak -\n", "line break-\n"),
    ("中文句子，没有空格。", "中文的句子，没有空格。"),
    ("日本語の文です。😀", "日本語の文章です。😀"),
    ("the the the the", "the cat is on the mat"),
    ("ΟΔΟΣ ΣΑΣ", "οδος σας"),
]


def _stats(metric, hyps, refs, backend):
    with _fast.backend(backend):
        return metric.sentence_stats(hyps, refs)


def _same_stats(metric, hyps, refs):
    fast = _stats(metric, hyps, refs, "numba")
    np.testing.assert_array_equal(fast, _stats(metric, hyps, refs, "numpy"))
    return fast


METRICS = [
    BLEU(), BLEU(tokenize="zh"), BLEU(tokenize="intl"), BLEU(tokenize="char"), BLEU(tokenize="none"),
    BLEU(lowercase=True), BLEU(max_ngram_order=6), CHRF(), CHRF(word_order=2), CHRF(lowercase=True, whitespace=True),
    CHRF(char_order=3, word_order=1),
]


@pytest.mark.parametrize("metric", METRICS, ids=repr)
def test_edge_cases_same_stats_both_paths(metric):
    _same_stats(metric, [h for h, _ in EDGE], [r for _, r in EDGE])


@pytest.mark.parametrize("metric", [BLEU(nrefs=3), CHRF(nrefs=3), CHRF(word_order=2, nrefs=3)], ids=repr)
def test_several_references_same_stats(metric):
    hyps = [h for h, _ in EDGE]
    refs = [[r for _, r in EDGE], [h for h, _ in EDGE][::-1], ["the cat"] * len(EDGE)]
    _same_stats(metric, hyps, refs)


def test_long_lines_take_the_hash_table_path():
    # 10k tokens from a 5,000-word vocabulary: order-2 key range (ids x distinct words) exceeds the
    # direct table, so the open-addressing table runs; repeated phrases make long matches
    rng = np.random.default_rng(1)
    vocab = np.array([f"w{i}" for i in range(5000)])
    phrase = " ".join(vocab[:50])
    hyp = " ".join(rng.choice(vocab, 10_000)) + " " + phrase * 3
    ref = " ".join(rng.choice(vocab, 9_000)) + " " + phrase * 2
    hyps, refs = [hyp, "a b", hyp[:5000]], [ref, "a b", ref]
    for metric in (BLEU(), CHRF(word_order=2)):
        stats = _same_stats(metric, hyps, refs)
        assert stats.shape[0] == 3
    from sacrebleu.metrics import BLEU as SacreBLEU

    theirs = SacreBLEU(effective_order=True)
    with _fast.backend("numba"):
        ours = BLEU(effective_order=True).sentence_scores(hyps, refs)
    expected = [theirs.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(ours, expected, atol=1e-9)


@pytest.mark.parametrize("chunk", [1, 2, 7])
def test_chunked_equals_one_batch(monkeypatch, wmt21_segments, chunk):
    df = wmt21_segments.sample(40, random_state=chunk)
    hyps, refs = df["hypothesis"].tolist(), df["reference"].tolist()
    with _fast.backend("numba"):
        whole = [m.sentence_stats(hyps, refs) for m in (BLEU(), CHRF())]
        monkeypatch.setattr(_fast, "CHUNK", chunk)
        parts = [m.sentence_stats(hyps, refs) for m in (BLEU(), CHRF())]
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("metric", [BLEU(), BLEU(tokenize="zh"), CHRF(), CHRF(word_order=2)], ids=repr)
def test_wmt21_sample_same_stats(wmt21_segments, metric):
    df = wmt21_segments.sample(3000, random_state=3)
    _same_stats(metric, df["hypothesis"].tolist(), df["reference"].tolist())


# ------------------------------------------------------------------------------- tokenizer replay

_PIECES = [
    "a", "Z", "é", "ß", "ΣΑΣ", "word", "3", "0", "12", "-", "--", ".", ",", "...", ",,", ".5", "5.", "5,", "'", '"',
    "&", ";", "&quot;", "&amp;", "&lt;", "&gt;", "&amp;quot;", "&#39;", "<skipped>", "<skip", "-\n", "\n", " ", "  ",
    "\t", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u1680", "\u2000", "\u2009", "\u200b", "\u2028", "\u3000",
    "中", "文", "，", "。", "ｆ", "１", "\u2001", "\u2a6d", "\u2a6e", "\u2fa1", "\u3400", "\u9fbb", "\uffef",
    "\U00020000",
    "😀", "\ufffd", "\ud800", "\u0301", "(", ")", "[", "]", "{", "}", "<", ">", "/", "\\", "@", "?", "!", "#", "$",
    "%", "*", "+", "=", "^", "_", "`", "|", "~", ":",
]


def _fuzz_lines(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    pieces = np.array(_PIECES, dtype=object)
    return ["".join(rng.choice(pieces, rng.integers(0, 40))) for _ in range(n)]


@pytest.mark.parametrize("tokenizer", ["13a", "zh"])
def test_compiled_tokenizer_equals_sacrebleu_on_fuzz(tokenizer):
    lines = _fuzz_lines(4000, seed=7 if tokenizer == "13a" else 8) + [p * 3 for p in _PIECES]
    expected = [s.split() for s in tokenize_lines(lines, tokenizer, lowercase=False)]
    got = _fast._compiled_words(_fast._kernels(), lines, tokenizer)
    bad = [(line, e, g) for line, e, g in zip(lines, expected, got, strict=True) if e != g]
    assert not bad, bad[:3]


def test_character_tables_match_python_and_sacrebleu():
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    t = _fast.tables()
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    assert spaces == np.flatnonzero(t["space"]).tolist()
    first = _fast._regexp_patterns()[0][0]
    assert [c for c in range(0x110000) if first.fullmatch(chr(c))] == np.flatnonzero(t["punct"]).tolist()
    is_zh = TokenizerZh._is_chinese_char.__wrapped__
    assert [c for c in range(0x110000) if is_zh(chr(c))] == np.flatnonzero(t["chinese"]).tolist()


@pytest.mark.slow
@pytest.mark.parametrize("tokenizer", ["13a", "zh"])
def test_compiled_tokenizer_equals_sacrebleu_on_all_wmt21_lines(wmt21_segments, tokenizer):
    lines = list(dict.fromkeys(wmt21_segments["hypothesis"].tolist() + wmt21_segments["reference"].tolist()))
    mismatches = 0
    for i in range(0, len(lines), 20_000):  # in blocks: two token lists of every line took over 1 GB
        block = lines[i:i + 20_000]
        expected = [s.split() for s in tokenize_lines(block, tokenizer, lowercase=False)]
        got = _fast._compiled_words(_fast._kernels(), block, tokenizer)
        mismatches += sum(e != g for e, g in zip(expected, got, strict=True))
    assert mismatches == 0


# ------------------------------------------------------------------------------- backend switch


def test_backend_switch_and_errors(monkeypatch):
    with _fast.backend("numpy"):
        assert _fast.get_backend() == "numpy"
    assert _fast.get_backend() == "numba"
    with pytest.raises(InputError, match="backend must be one of"):
        _fast.set_backend("gpu")
    monkeypatch.setattr(_fast, "_kernels", lambda: None)
    assert _fast.get_backend() == "numpy"
    with pytest.raises(MissingDependencyError, match="numba"):
        _fast.set_backend("numba")


# ------------------------------------------------------------------------------- one pool per table


def _utf8_units(encoded: list[bytes]):
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    bounds = np.cumsum([0] + [len(b) for b in encoded]).astype(np.int64)
    return _fast._kernels().utf8_units(data, bounds)


def test_utf8_decoding_equals_pythons():
    rng = np.random.default_rng(5)
    ranges = [(0, 0x7F), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    lines = ["", "\x00", "\u0080\u07ff\u0800\uffff\U00010000\U0010ffff"] + [
        "".join(chr(int(rng.integers(*ranges[int(rng.integers(5))], endpoint=True))) for _ in range(rng.integers(30)))
        for _ in range(2000)]
    units, off, ok = _utf8_units([s.encode() for s in lines])
    assert ok
    np.testing.assert_array_equal(units, np.frombuffer("".join(lines).encode("utf-32-le"), dtype="<i4"))
    assert np.diff(off).tolist() == [len(s) for s in lines]
    # overlong, surrogate, above U+10FFFF, stray continuation, truncated, invalid lead bytes
    for bad in [b"\xc0\x80", b"\xc1\xbf", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80",
                b"\xf5\x80\x80\x80", b"\x80", b"\xc3", b"\xe4\xb8", b"a\xff", b"\xfe"]:
        with pytest.raises(UnicodeDecodeError):
            bad.decode("utf-8")
        assert not _utf8_units([b"ok", bad])[2], bad
    assert not _utf8_units(["é".encode()[:1], "é".encode()[1:]])[2]  # a character split across two lines


def test_arrow_pool_holds_the_texts_of_every_segment():
    import pyarrow as pa

    hyps = ["a b", "中文，句子。", "", "a b", "😀 x", "Ünïcödé"]
    refs = ["a b c", "中文的句子。", "x", "a b c", "😀", "a b c"]
    for kind in (pa.string(), pa.large_string()):
        columns = [pa.chunked_array([texts[:2], texts[2:]], type=kind) for texts in (hyps, refs)]
        pool = _fast.TextPool.from_arrow(columns)
        assert [pool.lines[i] for i in pool.hyp] == hyps and [pool.lines[i] for i in pool.refs[0]] == refs
        assert len(pool.lines) == len(set(hyps + refs))
        sub = pool.subset(np.array([4, 1]))
        assert [sub.lines[i] for i in sub.hyp] == [hyps[4], hyps[1]] and len(sub.lines) == 4
    # bytes that are not UTF-8, or a missing text: no pool (score_frame reads the texts as Python strings)
    invalid = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(np.array([0, 1], np.int32)),
                                                     pa.py_buffer(b"\xff")])
    assert _fast.TextPool.from_arrow([pa.chunked_array([invalid]), pa.chunked_array([pa.array(["a"])])]) is None
    missing = [pa.chunked_array([pa.array(["a", None])]), pa.chunked_array([pa.array(["a", "b"])])]
    assert _fast.TextPool.from_arrow(missing) is None


def test_a_table_scores_as_sacrebleu_per_row_in_every_language(wmt21_segments):
    """score_frame counts the target languages that share a tokenizer in one pass over one pool of the
    table's texts (from Arrow or from Python strings): every row must still be sacrebleu's score."""
    import pyarrow as pa
    from sacrebleu.metrics import BLEU as SacreBLEU
    from sacrebleu.metrics import CHRF as SacreCHRF

    from xleval.metrics import score_frame

    df = wmt21_segments.groupby("lp").sample(12, random_state=2)[["lp", "system", "hypothesis", "reference"]]
    chrf = SacreCHRF()
    bleu = {lp: SacreBLEU(trg_lang=lp.split("-")[1], effective_order=True) for lp in df["lp"].unique()}
    rows = list(zip(df["lp"], df["hypothesis"], df["reference"], strict=True))
    expected_bleu = [bleu[lp].sentence_score(h, [r]).score for lp, h, r in rows]
    expected_chrf = [chrf.sentence_score(h, [r]).score for _, h, r in rows]
    with _fast.backend("numba"):
        for table in (df, pa.Table.from_pandas(df, preserve_index=False)):
            frame = score_frame(table, ["bleu", "chrf"]).frame
            got = frame if isinstance(frame, pd.DataFrame) else frame.to_pandas()
            np.testing.assert_array_equal(got["bleu"].to_numpy(), expected_bleu)
            np.testing.assert_array_equal(got["chrf"].to_numpy(), expected_chrf)


@pytest.mark.parametrize("source", [["s1", None, "s3"], [1.0, float("nan"), 3.0]], ids=["text", "numbers"])
def test_a_missing_source_is_refused_though_bleu_does_not_read_it(source):
    import pyarrow as pa

    from xleval.metrics import score_frame

    df = pd.DataFrame({"hypothesis": ["a b", "c", "d"], "reference": ["a b", "c d", "d"], "source": source})
    for table in (df, pa.Table.from_pandas(df, preserve_index=False)):
        with pytest.raises(InputError, match="column 'source' row 2: missing text"):
            score_frame(table, ["bleu", "chrf"])
