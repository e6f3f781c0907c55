"""sacrebleu's defaults where they matter: tiny corpora (an order without n-grams), single segments,
empty hypotheses, effective order by level, a varying number of references (None), signatures,
the one-call functions, and which options each metric takes. sacrebleu itself is the oracle."""
from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF
from sacrebleu.metrics import TER as SacreTER

import xleval.metrics as xm
from xleval.exceptions import InputError
from xleval.metrics import (
    BLEU,
    CHRF,
    TER,
    corpus_table,
    get_metric,
    metric_options,
    score_frame,
)

logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its advice to enable effective order

TINY = [
    (["the cat sat", "hello"], ["the cat sat on the mat", "hello world"]),  # no 4-gram at all: 0 without eff
    (["the cat"], ["the cat sat on the mat"]),  # one segment, two tokens
    ([""], ["a reference"]),  # empty hypothesis
    (["", "a b c d e"], ["x", "a b c d e"]),  # an empty hypothesis in a corpus
    (["a b c d"], ["a b c d"]),  # exactly four tokens
    (["one two three four five", "six"], ["one two three four five", "seven"]),
    (["x y z"], ["a b c"]),  # nothing matches
]


@pytest.mark.parametrize("hyps, refs", TINY)
def test_corpus_bleu_defaults_equal_sacrebleu_bitwise(hyps, refs):
    assert BLEU().corpus_score(hyps, refs) == SacreBLEU().corpus_score(hyps, [refs]).score
    assert xm.corpus_bleu(hyps, [refs]).score == sacrebleu.corpus_bleu(hyps, [refs]).score
    theirs = SacreBLEU(effective_order=True).corpus_score(hyps, [refs]).score
    assert BLEU(effective_order=True).corpus_score(hyps, refs) == theirs
    assert CHRF().corpus_score(hyps, refs) == SacreCHRF().corpus_score(hyps, [refs]).score
    assert TER().corpus_score(hyps, refs) == SacreTER().corpus_score(hyps, [refs]).score


def test_the_issue_example_is_zero_at_corpus_level_as_sacrebleu():
    hyps, refs = TINY[0]
    assert BLEU().corpus_score(hyps, refs) == 0.0
    assert "eff:no" in BLEU().signature and "eff:yes" in get_metric("bleu", level="sentence").signature


@pytest.mark.parametrize("hyp, ref", [("the cat", "the cat sat on the mat"), ("", "x"), ("a b c", "a b c"),
                                      ("the the the", "the cat"), ("Hello, world!", "Hello world")])
def test_sentence_score_follows_the_object_as_sacrebleu(hyp, ref):
    assert BLEU().sentence_score(hyp, [ref]) == SacreBLEU().sentence_score(hyp, [ref]).score
    theirs = SacreBLEU(effective_order=True).sentence_score(hyp, [ref]).score
    assert BLEU(effective_order=True).sentence_score(hyp, [ref]) == theirs
    ours, theirs = xm.sentence_bleu(hyp, [ref]), sacrebleu.sentence_bleu(hyp, [ref])
    assert ours.score == theirs.score and ours.format() == theirs.format()
    assert xm.sentence_chrf(hyp, [ref]).score == sacrebleu.sentence_chrf(hyp, [ref]).score
    assert xm.sentence_ter(hyp, [ref]).score == sacrebleu.sentence_ter(hyp, [ref]).score


def test_the_issue_sentence_example():
    assert BLEU().sentence_score("the cat", ["the cat sat on the mat"]) == 0.0
    assert xm.sentence_bleu("the cat", ["the cat sat on the mat"]).score == pytest.approx(13.53, abs=0.005)


def test_compat_functions_take_sacrebleus_arguments():
    hyps, refs = ["The cat is here .", "a b"], ["the cat is there.", "A B"]
    for kw in ({"lowercase": True}, {"tokenize": "intl", "smooth_method": "floor", "smooth_value": 0.2},
               {"use_effective_order": True}):
        assert xm.corpus_bleu(hyps, [refs], **kw).score == sacrebleu.corpus_bleu(hyps, [refs], **kw).score
    for kw in ({"word_order": 2}, {"remove_whitespace": False}, {"eps_smoothing": True, "beta": 1}):
        ours, theirs = xm.corpus_chrf(hyps, [refs], **kw), sacrebleu.corpus_chrf(hyps, [refs], **kw)
        assert ours.score == theirs.score and ours.name == theirs.name
    for kw in ({"case_sensitive": True}, {"no_punct": True}, {"normalized": True}):
        assert xm.corpus_ter(hyps, [refs], **kw).score == sacrebleu.corpus_ter(hyps, [refs], **kw).score


# ------------------------------------------------------------------------------ varying references
VAR_HYPS = ["the cat sat on the mat", "there is a dog", "hello", "a b c d e f"]
VAR_REFS = [["the cat is on the mat", None, "hello there", "a b c"],
            [None, "there is a dog here", "hello", None],
            ["a cat sat on a mat", "a dog is there", None, None]]


@pytest.mark.parametrize("ours, theirs", [(BLEU(nrefs="var"), SacreBLEU()), (BLEU(nrefs="var", effective_order=True),
                                          SacreBLEU(effective_order=True)), (CHRF(nrefs="var"), SacreCHRF()),
                                          (CHRF(nrefs="var", word_order=2), SacreCHRF(word_order=2)),
                                          (TER(nrefs="var"), SacreTER())])
def test_none_references_as_sacrebleu(ours, theirs):
    assert ours.corpus_score(VAR_HYPS, VAR_REFS) == theirs.corpus_score(VAR_HYPS, VAR_REFS).score
    head = ours.signature.rpartition("|xleval:")[0]
    assert head == str(theirs.get_signature()) and head.startswith("nrefs:var|")
    seg = [theirs.sentence_score(h, [r[i] for r in VAR_REFS]).score for i, h in enumerate(VAR_HYPS)]
    np.testing.assert_array_equal(ours.sentence_scores(VAR_HYPS, VAR_REFS), seg)


def test_filling_with_empty_strings_would_change_the_numbers():
    """The old advice ('fill missing references with an empty string') is not the same thing."""
    hyps, refs = ["a b", "c d e f"], [["a b c d e", "c d e f"], [None, "x y"]]
    filled = [[r if r is not None else "" for r in s] for s in refs]
    # BLEU: the empty reference is the closest length to "a b" (brevity penalty 1 instead of < 1)
    assert BLEU(nrefs=2).corpus_score(hyps, filled) != BLEU(nrefs="var").corpus_score(hyps, refs)
    assert BLEU(nrefs="var").corpus_score(hyps, refs) == SacreBLEU().corpus_score(hyps, refs).score
    # TER: the empty reference enters the average reference length
    assert TER(nrefs=2).corpus_score(hyps, filled) != TER(nrefs="var").corpus_score(hyps, refs)


def test_reference_count_errors_say_what_to_build():
    with pytest.raises(InputError, match="nrefs='var'"):
        BLEU(nrefs=3).corpus_score(VAR_HYPS, VAR_REFS)
    with pytest.raises(InputError, match="segment 0 has no reference"):
        CHRF(nrefs=1).corpus_score(["a"], [[None], [None]])
    # two streams with one reference per segment is sacrebleu's nrefs:1
    assert "nrefs:1" in BLEU(nrefs=1).signature
    assert BLEU(nrefs=1).corpus_score(["a b", "c"], [["a b", None], [None, "c"]]) == SacreBLEU().corpus_score(
        ["a b", "c"], [["a b", None], [None, "c"]]).score


def test_score_frame_missing_second_references_are_nones():
    df = pd.DataFrame({"hypothesis": VAR_HYPS,
                       "reference": ["the cat is on the mat", "there is a dog here", "hello", "a b c"],
                       "reference_2": ["a cat sat on a mat", None, None, "a b c d e f g"]})
    sf = score_frame(df, ["bleu", "chrf"])
    streams = [df["reference"].tolist(), [None if pd.isna(r) else r for r in df["reference_2"]]]
    theirs = SacreBLEU(effective_order=True)
    np.testing.assert_array_equal(sf.frame["bleu"], [theirs.sentence_score(h, [r for r in refs if r is not None]).score
                                                      for h, refs in zip(VAR_HYPS, zip(*streams, strict=True),
                                                                         strict=True)])
    assert sf.signatures["bleu"].startswith("nrefs:var|") and sf.corpus_signatures["bleu"].startswith("nrefs:var|")
    table = corpus_table(sf)
    assert table["bleu"].iloc[0] == SacreBLEU().corpus_score(VAR_HYPS, streams).score
    df.loc[2, "reference"] = None
    with pytest.raises(InputError, match="row 3: no reference"):
        score_frame(df, ["bleu"])


def test_score_frame_columns_are_sentence_bleu_and_corpus_table_is_corpus_bleu():
    hyps, refs = TINY[0]
    sf = score_frame(pd.DataFrame({"hypothesis": hyps, "reference": refs}), ["bleu"])
    np.testing.assert_array_equal(sf.frame["bleu"],
                                  [sacrebleu.sentence_bleu(h, [r]).score for h, r in zip(hyps, refs, strict=True)])
    assert corpus_table(sf)["bleu"].iloc[0] == sacrebleu.corpus_bleu(hyps, [refs]).score == 0.0
    assert "eff:yes" in sf.signatures["bleu"] and "eff:no" in sf.corpus_signatures["bleu"]
    assert sf.metadata()["corpus_signatures"]["bleu"] == sf.corpus_signatures["bleu"]


# ------------------------------------------------------------------------------ signatures, options
@pytest.mark.parametrize("order", [1, 2, 6])
def test_signature_has_no_extra_field_for_the_ngram_order(order):
    theirs = SacreBLEU(max_ngram_order=order)
    theirs.corpus_score(["a b"], [["a b"]])
    assert BLEU(max_ngram_order=order).signature.rpartition("|xleval:")[0] == str(theirs.get_signature())
    hyps, refs = TINY[5]
    assert BLEU(max_ngram_order=order).corpus_score(hyps, refs) == theirs.corpus_score(hyps, [refs]).score


def test_metric_options_route_prefixed_settings_like_sacrebleus_cli():
    settings = {"bleu_lowercase": True, "bleu_tokenize": None, "chrf_lowercase": None, "chrf_word_order": 2,
                "ter_case_sensitive": True, "neural_batch_size": 8}
    assert metric_options("bleu", settings) == {"lowercase": True}  # -lc: BLEU only, as sacrebleu
    assert metric_options("chrf", settings) == {"word_order": 2}
    assert metric_options("ter", settings) == {"case_sensitive": True}
    assert metric_options("comet:/x", settings) == {"batch_size": 8}
    with pytest.raises(InputError, match="not an option"):
        metric_options("bleu", {"bleu_beta": 3})


def test_numbers_are_bitwise_sacrebleus_on_a_wmt21_sample(wmt21_segments):
    """np.exp/np.log differ from the C library's on AVX-512 numpy; BLEU uses math.exp/log."""
    df = wmt21_segments[wmt21_segments["lp"].isin(["de-en", "en-de", "cs-en"])].sample(3000, random_state=7)
    hyps, refs = df["hypothesis"].tolist(), df["reference"].tolist()
    for ours, theirs in ((BLEU(effective_order=True), SacreBLEU(effective_order=True)), (BLEU(), SacreBLEU())):
        np.testing.assert_array_equal(ours.sentence_scores(hyps, refs),
                                      [theirs.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)])


def test_plain_language_codes_are_exactly_those_normalize_code_keeps():
    """score_frame skips langcodes for pairs of these codes: they must be normalize_code's fixed points."""
    import itertools
    import string

    from xleval.exceptions import LanguageCodeError
    from xleval.io import normalize_code
    from xleval.metrics._frame import _PLAIN_CODES

    fixed = set()
    for a, b in itertools.product(string.ascii_lowercase, repeat=2):
        try:
            if normalize_code(a + b) == a + b:
                fixed.add(a + b)
        except LanguageCodeError:
            pass
    assert fixed == set(_PLAIN_CODES)


def test_score_frame_reports_progress_per_metric_and_row():
    df = pd.DataFrame({"lp": ["de-en", "en-zh", "en-ZH"], "hypothesis": ["a b", "中文", "中文"],
                       "reference": ["a b c", "中文的", "中文的"]})
    seen = []
    sf = score_frame(df, ["bleu", "chrf"], progress=seen.append)
    assert sum(seen) == 2 * len(df)
    # en-ZH takes the langcodes path and lands in the same zh group as en-zh
    assert sf.frame["bleu"].iloc[1] == sf.frame["bleu"].iloc[2]
    assert set(sf.signatures_by_group["bleu"]) == {"en", "zh"}
