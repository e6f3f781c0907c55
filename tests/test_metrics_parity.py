"""BLEU/chrF/TER are sacrebleu's numbers: hand-made edge cases, option grid, several references,
signatures; real WMT21 data (5,000-row sample by default, all 251,212 rows in the slow test)."""
from __future__ import annotations

import contextlib
import logging

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF
from sacrebleu.metrics import TER as SacreTER

from xleval.metrics import BLEU, CHRF, TER

TOL = 1e-9

EDGE = [
    ("", "The cat sat on the mat."),  # empty hypothesis
    ("The cat sat on the mat.", ""),  # empty reference
    ("", ""),
    ("Der Hund bellt laut.", "Der Hund bellt laut."),  # hypothesis = source = reference
    ("Tom &amp; Jerry &quot;said&quot; &lt;hi&gt;", 'Tom & Jerry "said" <hi>'),  # HTML entities
    ("bad \ufffd byte here", "bad byte here"),  # U+FFFD
    ("a", "a"),
    ("word", "other"),
    ("1.5 million, 2,000 people - 3-4 x...y (hi). ok", "1.5 million , 2,000 people-3-4 x . . . y ( hi ) . ok"),
    ("  leading and trailing spaces  ", "leading and trailing spaces"),
    ("tab\tseparated\u00a0nbsp\u3000ideographic", "tab separated nbsp ideographic"),
    ("<skipped> line-\nbreak", "line break"),
    ("中文句子，没有空格。", "中文的句子，没有空格。"),
    ("日本語の文です。", "日本語の文章です。"),
    ("the the the the", "the cat is on the mat"),
]


def _sacre_bleu(hyps, refs, **kw):
    kw.setdefault("effective_order", True)
    m = SacreBLEU(**kw)
    with _quiet_sacrebleu():
        return np.array([m.sentence_score(h,
                                          list(r)).score for h, r in zip(hyps, zip(*refs, strict=True), strict=True)])


@contextlib.contextmanager
def _quiet_sacrebleu():
    """sacrebleu logs a recommendation for every sentence scored without effective order."""
    logger = logging.getLogger("sacrebleu")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _sacre_chrf(hyps, refs, **kw):
    m = SacreCHRF(**kw)
    return np.array([m.sentence_score(h, list(r)).score for h, r in zip(hyps, zip(*refs, strict=True), strict=True)])


@pytest.mark.parametrize("effective", [False, True])
@pytest.mark.parametrize("tokenize", ["13a", "intl", "char", "zh", "none"])
@pytest.mark.parametrize("smooth", ["exp", "floor", "add-k", "none"])
def test_bleu_edge_cases_equal_sacrebleu_bitwise(tokenize, smooth, effective):
    """Bitwise: the same statistics, the same float operations, C-library exp/log like sacrebleu."""
    hyps, refs = [h for h, _ in EDGE], [[r for _, r in EDGE]]
    ours = BLEU(tokenize=tokenize, smooth_method=smooth, effective_order=effective).sentence_scores(hyps, refs)
    theirs = _sacre_bleu(hyps, refs, tokenize=tokenize, smooth_method=smooth, effective_order=effective)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("kw", [{}, {"word_order": 2}, {"lowercase": True}, {"whitespace": True},
                                {"eps_smoothing": True}, {"beta": 1, "char_order": 4}])
def test_chrf_edge_cases_equal_sacrebleu(kw):
    hyps, refs = [h for h, _ in EDGE], [[r for _, r in EDGE]]
    np.testing.assert_allclose(CHRF(**kw).sentence_scores(hyps, refs), _sacre_chrf(hyps, refs, **kw), atol=TOL, rtol=0)


def test_very_long_line_10k_tokens():
    rng = np.random.default_rng(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "eps", ",", ".", "x-1"])
    hyp = " ".join(rng.choice(words, 10_000))
    ref = " ".join(rng.choice(words, 10_000))
    assert BLEU(effective_order=True).sentence_scores([hyp], [ref])[0] == pytest.approx(_sacre_bleu([hyp], [[ref]])[0],
                                                                                        abs=TOL)
    assert CHRF().sentence_scores([hyp], [ref])[0] == pytest.approx(_sacre_chrf([hyp], [[ref]])[0], abs=TOL)


def test_several_references_bleu_chrf_ter():
    hyps = ["the cat is on the mat", "there is a cat", "", "a b c d e"]
    refs = [["the cat sat on the mat", "a cat", "x", "a b c"],
            ["there is a cat on the mat", "there is a cat here", "", "a b c d e f"]]
    np.testing.assert_allclose(BLEU(nrefs=2, effective_order=True).sentence_scores(hyps, refs), _sacre_bleu(hyps, refs),
                               atol=TOL)
    np.testing.assert_allclose(CHRF(nrefs=2).sentence_scores(hyps, refs), _sacre_chrf(hyps, refs), atol=TOL)
    assert BLEU(nrefs=2, effective_order=False).corpus_score(hyps, refs) == pytest.approx(
        SacreBLEU().corpus_score(hyps, refs).score, abs=TOL)
    assert CHRF(nrefs=2).corpus_score(hyps, refs) == pytest.approx(SacreCHRF().corpus_score(hyps, refs).score, abs=TOL)
    assert TER(nrefs=2).corpus_score(hyps, refs) == pytest.approx(SacreTER().corpus_score(hyps, refs).score, abs=TOL)


def test_ties_in_closest_reference_length_take_the_shorter():
    # hyp has 3 tokens; refs of 2 and 4 tokens are equally close: sacrebleu takes 2
    hyps, refs = ["a b c"], [["a b"], ["a b c d"]]
    stats = BLEU(nrefs=2).sentence_stats(hyps, refs)
    assert stats[0, 1] == 2
    np.testing.assert_allclose(BLEU(nrefs=2, effective_order=True).sentence_scores(hyps, refs), _sacre_bleu(hyps, refs),
                               atol=TOL)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (BLEU(), SacreBLEU()),
        (BLEU(effective_order=True), SacreBLEU(effective_order=True)),
        (BLEU(max_ngram_order=2), SacreBLEU(max_ngram_order=2)),
        (BLEU(effective_order=False, smooth_method="floor", lowercase=True, tokenize="intl"),
         SacreBLEU(smooth_method="floor", lowercase=True, tokenize="intl")),
        (BLEU(smooth_method="add-k", smooth_value=2, effective_order=True),
         SacreBLEU(smooth_method="add-k", smooth_value=2, effective_order=True)),
        (CHRF(), SacreCHRF()),
        (CHRF(word_order=2, lowercase=True), SacreCHRF(word_order=2, lowercase=True)),
        (TER(), SacreTER()),
    ],
)
def test_signature_is_sacrebleus_plus_xleval_version(ours, theirs):
    theirs.corpus_score(["a b"], [["a b"]])  # sacrebleu fills nrefs when scoring
    head, _, version = ours.signature.rpartition("|xleval:")
    assert head == str(theirs.get_signature())
    import xleval

    assert version == xleval.__version__


def test_ter_segments_equal_sacrebleu():
    hyps, refs = [h for h, _ in EDGE], [r for _, r in EDGE]
    theirs = [SacreTER().sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(TER().sentence_scores(hyps, refs), theirs, atol=TOL)


# ---------------------------------------------------------------------------------------- real data


def _tok_for(lp: str) -> str:
    return "zh" if lp.endswith("-zh") else "13a"


def _check_rows(df: pd.DataFrame, systems: pd.DataFrame | None = None) -> None:
    """Per-row statistics equal sacrebleu's exactly (integers), so do sentence scores (sacrebleu's
    sentence_score is its score of that row's statistics) and corpus scores per (lp, system)."""
    df = df.reset_index(drop=True)
    tok = df["lp"].map(_tok_for).to_numpy()
    for t in np.unique(tok):
        rows = np.flatnonzero(tok == t)
        sub = df.iloc[rows]
        h, r = sub["hypothesis"].tolist(), sub["reference"].tolist()
        pairs = [(BLEU(tokenize=t, effective_order=True), SacreBLEU(tokenize=t, effective_order=True)),
                 (CHRF(), SacreCHRF())]
        for ours, theirs in pairs:
            stats = _in_blocks(ours.sentence_stats, h, r)
            their_stats = _in_blocks(lambda hb, rb, m=theirs: m._extract_corpus_statistics(hb, [rb]), h, r)
            their_stats = their_stats.astype(np.int64)
            np.testing.assert_array_equal(stats, their_stats)
            their_scores = np.array([theirs._compute_score_from_stats(list(row)).score for row in their_stats])
            # bitwise: exp/log are the C library's, as in sacrebleu (numpy's AVX-512 ones differ)
            np.testing.assert_array_equal(ours.score_from_stats(stats), their_scores)
            for key, idx in sub.groupby(["lp", "system"]).indices.items():
                total = their_stats[idx].sum(axis=0)
                expected = theirs._compute_score_from_stats(list(total)).score
                assert ours.score_from_stats(stats[idx].sum(axis=0)) == expected, key
        if systems is not None:
            _check_systems_csv(sub, systems, t)


def _in_blocks(stats_of, hyps: list[str], refs: list[str], block: int = 5_000) -> np.ndarray:
    """Per-segment statistics block by block (they are per row, so the blocks concatenate to the
    whole): sacrebleu builds the n-gram tables of every reference of a call before scoring (over
    13 GB for all 251k WMT21 rows), and one call of ours holds every row's tokens at once.
    Chunked equals one batch is tested in test_metrics_fast.py."""
    return np.concatenate([np.asarray(stats_of(hyps[i:i + block], refs[i:i + block]))
                           for i in range(0, len(hyps), block)])


def _check_systems_csv(df: pd.DataFrame, systems: pd.DataFrame, tok: str) -> None:
    """systems.csv (WMT organisers, sacrebleu corpus scores): 13a, zh for en-zh, char for en-ja."""
    for (lp, system), g in df.groupby(["lp", "system"]):
        row = systems[(systems["lp"] == lp) & (systems["system"] == system)]
        if not len(row):
            continue
        hyps, refs = g["hypothesis"].tolist(), g["reference"].tolist()
        if not np.isnan(row["bleu_refA"].iloc[0]):
            bleu = BLEU(tokenize="char" if lp.endswith("-ja") else tok, effective_order=False)
            assert bleu.corpus_score(hyps, refs) == pytest.approx(row["bleu_refA"].iloc[0], abs=1e-6), (lp, system)
        if not np.isnan(row["chrf_refA"].iloc[0]):
            assert CHRF().corpus_score(hyps, refs) == pytest.approx(row["chrf_refA"].iloc[0], abs=1e-6), (lp, system)


def test_wmt21_sample_of_5000_rows(wmt21_segments):
    _check_rows(wmt21_segments.sample(5000, random_state=20211110))


def test_wmt21_sample_numpy_kernels(wmt21_segments):
    """The numpy path (no numba) against sacrebleu directly; the default run uses numba when installed."""
    from xleval.metrics import _fast

    with _fast.backend("numpy"):
        _check_rows(wmt21_segments.sample(1000, random_state=1))


@pytest.mark.slow
def test_wmt21_all_rows(wmt21_segments, wmt21_systems):
    assert len(wmt21_segments) == 251_212
    _check_rows(wmt21_segments, wmt21_systems)


@pytest.mark.parametrize("lp", ["cs-en", "en-ja", "en-zh"])
def test_wmt21_systems_csv_three_systems(wmt21_segments, wmt21_systems, lp):
    df = wmt21_segments[wmt21_segments["lp"] == lp]
    df = df[df["system"].isin(sorted(df["system"].unique())[:3])]
    _check_rows(df, wmt21_systems)
