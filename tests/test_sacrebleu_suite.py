"""sacrebleu's own test suite, run against xleval's public API with sacrebleu as the oracle.

The inputs and the published expected numbers are those of sacrebleu's test files (repository
mjpost/sacrebleu, folder ``test/``): ``test_bleu.py``, ``test_sentence_bleu.py``, ``test_chrf.py``,
``test/test.py`` (early chrF checks), ``test_ter.py``, ``test_tokenizer_ter.py`` and
``test_metrics_base.py`` (argument checks). Each case calls xleval the way a sacrebleu user would
(``BLEU(...).corpus_score``, ``corpus_bleu``, ``sentence_chrf``, ...) and compares the result with
the installed sacrebleu on the same inputs; where the file states a published value it is asserted
too. Option grids over the same sentences (every tokenizer, smoothing method, chrF/chrF++ option,
TER option, one/two/a varying number of references) add the further cases. ``test_api.py``,
``test_dataset.py`` and ``test_significance.py`` need downloaded test sets and are not applicable
(xleval's paired tests are checked against sacrebleu in tests/test_metrics_systems.py).

Deliberate differences (docs/metrics.md, "sacrebleu's test suite") are marked where they occur:
the signature ends in ``|xleval:<version>``; a segment whose references are all None is an
error rather than sacrebleu's crash while scoring; an empty corpus raises a ``TypeError`` (as newer
sacrebleu versions) instead of sacrebleu 2.6's ``IndexError``.
"""
from __future__ import annotations

import itertools
import json
import math
from contextlib import nullcontext

import pytest
import sacrebleu
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF
from sacrebleu.metrics import TER as SacreTER

import xleval.metrics as xm
from xleval.exceptions import InputError
from xleval.metrics import BLEU, CHRF, TER

# --------------------------------------------------------------------------- data (sacrebleu's tests)
README_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
README_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
# the second reference stream with a missing reference (sacrebleu's None convention)
README_REFS_VAR = [README_REFS[0], [README_REFS[1][0], None, README_REFS[1][2]]]
REF_SETS = {"1ref": README_REFS[:1], "2refs": README_REFS, "var": README_REFS_VAR}

SB_REF = "producţia de zahăr brut se exprimă în zahăr alb;"  # sacrebleu issue #98
SB_SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
ZERO_REF, ZERO_SYS = "okay thanks", "this is a cat"  # sacrebleu issue #141

XLEVAL_SIG = "|xleval:"


def sacre_sig(metric) -> str:
    return str(metric.get_signature())


def ours_sig(signature: str) -> str:
    head, sep, _ = signature.rpartition(XLEVAL_SIG)
    assert sep, signature  # deliberate: xleval appends its own version
    return head


def assert_same_score(ours, theirs, exact: bool = True) -> None:
    """Score, name, the sacrebleu attributes of its class, and format() in every variant."""
    assert isinstance(ours, float)  # an xleval Score is also the number
    if exact:
        assert ours.score == theirs.score
    else:
        assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert float(ours) == ours.score
    assert ours.name == theirs.name
    if isinstance(theirs, sacrebleu.metrics.bleu.BLEUScore):
        assert list(ours.counts) == list(theirs.counts)
        assert list(ours.totals) == list(theirs.totals)
        assert list(ours.precisions) == pytest.approx(list(theirs.precisions), abs=1e-12)
        assert ours.bp == theirs.bp
        assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
        assert ours.ratio == theirs.ratio
        assert ours.prec_str == theirs.prec_str
    elif isinstance(theirs, sacrebleu.metrics.chrf.CHRFScore):
        assert (ours.char_order, ours.word_order, ours.beta) == (theirs.char_order, theirs.word_order, theirs.beta)
    else:
        assert ours.num_edits == theirs.num_edits
        assert ours.ref_length == pytest.approx(theirs.ref_length, abs=1e-12)
    for kwargs in ({}, {"width": 4}, {"score_only": True}, {"width": 1, "score_only": True}):
        assert ours.format(**kwargs) == theirs.format(**kwargs)
    assert str(ours) == repr(ours) == theirs.format()


def assert_same_format_with_signature(ours, theirs, theirs_metric) -> None:
    sig = sacre_sig(theirs_metric)
    assert ours_sig(ours.signature) == sig
    assert ours.format(signature=sig) == theirs.format(signature=sig)
    assert json.loads(ours.format(signature=sig, is_json=True)) == json.loads(theirs.format(signature=sig,
                                                                                        is_json=True))


# --------------------------------------------------------------------------- test_bleu.py
CORPUS_BLEU_CASES = [  # (hyps, refs, kwargs, published BLEU)
    (README_HYPS, README_REFS, {}, 48.530827),
    (("", "", ""), README_REFS, {}, 0.0),  # empty hypotheses are kept
    (README_HYPS, README_REFS, {"tokenize": "none"}, 49.1919566),
    (README_HYPS, README_REFS, {"tokenize": "13a"}, 48.530827),
    (README_HYPS, README_REFS, {"tokenize": "intl"}, 43.91623493),
    (README_HYPS, README_REFS, {"smooth_method": "none"}, 48.530827),
]


@pytest.mark.parametrize("api", ["corpus_bleu", "BLEU.corpus_score"])
@pytest.mark.parametrize("hyps, refs, kwargs, published", CORPUS_BLEU_CASES)
def test_corpus_bleu(hyps, refs, kwargs, published, api):
    theirs_metric = SacreBLEU(**kwargs)
    theirs = theirs_metric.corpus_score(list(hyps), refs)
    if api == "corpus_bleu":
        ours = xm.corpus_bleu(hyps, refs, **kwargs)
    else:
        ours = BLEU(**kwargs).corpus_score(hyps, refs)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    assert abs(ours.score - published) < 1e-8
    assert abs(sacrebleu.corpus_bleu(list(hyps), refs, **kwargs).score - published) < 1e-8


RAW_BLEU_CASES = [  # raw_corpus_bleu(hyps, refs, .01): (hyps, refs, published BLEU / 100)
    (["this is a test", "another test"], [["ref1", "ref2"]], 0.0),  # 0 since sacrebleu #141
    (["this is a test"], [["this is a test"]], 1.0),
    (["this is a fest"], [["this is a test"]], 0.223606797749979),
    # effective order
    (["test"], [["a test"]], 0.3678794411714425),
    (["a test"], [["a test"]], 1.0),
    (["a little test"], [["a test"]], 0.03218297948685433),
]


@pytest.mark.parametrize("hyps, refs, published", RAW_BLEU_CASES)
def test_raw_corpus_bleu(hyps, refs, published):
    ours = xm.raw_corpus_bleu(hyps, refs, 0.01)
    assert_same_score(ours, sacrebleu.raw_corpus_bleu(hyps, refs, 0.01))
    assert abs(ours.score / 100 - published) < 1e-8


OFFSET_HYP, OFFSET_REF = ["am I am a character sequence"], [["I am a symbol string sequence a a"]]


def test_statistics():
    ours = xm.raw_corpus_bleu(OFFSET_HYP, OFFSET_REF, 0.01)
    assert (list(ours.counts), list(ours.totals)) == ([4, 2, 1, 0], [6, 5, 4, 3])


@pytest.mark.parametrize("args, published", [((0.0,), 0.0), ((None,), 0.1555722182), ((), 0.1555722182)])
def test_offset(args, published):
    ours = xm.raw_corpus_bleu(OFFSET_HYP, OFFSET_REF, *args)
    assert_same_score(ours, sacrebleu.raw_corpus_bleu(OFFSET_HYP, OFFSET_REF, *args))
    assert abs(ours.score / 100 - published) < 1e-8


COMPUTE_CASES = [  # (correct, total, sys_len, ref_len, smooth value for floor or None, published / 100)
    ([9, 7, 5, 3], [10, 8, 6, 4], 11, 11, None, 0.8375922397),
    # degenerate statistics with floor smoothing
    ([0, 0, 0, 0], [4, 4, 2, 1], 0, 1, 0.0, 0.0),
    ([0, 0, 0, 0], [10, 11, 12, 0], 14, 10, 0.0, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.0, 0.0),
    ([6, 5, 4, 0], [6, 5, 4, 3], 6, 6, 0.0, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 0, 0, 0.1, 0.0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 1, 5, 0.01, 0.0),
]


@pytest.mark.parametrize("correct, total, sys_len, ref_len, floor, published", COMPUTE_CASES)
def test_compute_bleu(correct, total, sys_len, ref_len, floor, published):
    kwargs = {} if floor is None else {"smooth_method": "floor", "smooth_value": floor}
    ours = BLEU.compute_bleu(correct, total, sys_len, ref_len, **kwargs)
    theirs = SacreBLEU.compute_bleu(correct, total, sys_len, ref_len, **kwargs)
    assert_same_score(ours, theirs)
    assert ours.score / 100 == pytest.approx(published, abs=1e-8)
    if floor is not None:
        assert ours.score / 100 == published  # sacrebleu asserts these exactly


@pytest.mark.parametrize("order, published", [(1, "77.65"), (2, "60.50"), (3, "53.93"), (4, "48.53"), (5, "46.14"),
                                              (6, "43.28")])
def test_max_ngram_order(order, published):
    ours = BLEU(max_ngram_order=order).corpus_score(README_HYPS, README_REFS)
    assert_same_score(ours, SacreBLEU(max_ngram_order=order).corpus_score(README_HYPS, README_REFS))
    assert f"{ours.score:.2f}" == published
    assert len(ours.counts) == len(ours.totals) == len(ours.precisions) == order


# --------------------------------------------------------------------------- test_sentence_bleu.py
SENTENCE_BLEU_CASES = [  # (smooth_method, smooth_value, lowercase, tokenize, published)
    ("exp", None, False, "13a", 8.493),
    ("none", None, False, "13a", 0.0),
    ("floor", None, False, "13a", 4.51688),
    ("floor", 0.1, False, "13a", 4.51688),
    ("floor", 0.5, False, "13a", 10.10),
    ("add-k", None, False, "13a", 14.882),
    ("add-k", 1, False, "13a", 14.882),
    ("add-k", 2, False, "13a", 21.389),
    ("exp", None, False, "none", 7.347),
    ("exp", None, False, "intl", 8.493),
    ("exp", None, False, "char", 40.8759),
    ("exp", None, True, "char", 42.0267),
]
ZERO_BLEU_CASES = [("exp", None), ("none", None), ("floor", None), ("floor", 0.1), ("add-k", None), ("add-k", 1)]


def _sentence_bleu_pair(api, hyp, ref, method, value, lowercase, tok):
    kwargs = {"smooth_method": method, "smooth_value": value, "tokenize": tok, "lowercase": lowercase}
    theirs_metric = SacreBLEU(force=False, effective_order=True, **kwargs)
    theirs = theirs_metric.sentence_score(hyp, [ref])
    if api == "sentence_bleu":
        ours = xm.sentence_bleu(hyp, [ref], use_effective_order=True, **kwargs)
        assert_same_score(ours, sacrebleu.sentence_bleu(hyp, [ref], use_effective_order=True, **kwargs))
    else:
        ours = BLEU(force=False, effective_order=True, **kwargs).sentence_score(hyp, [ref])
    return ours, theirs, theirs_metric


@pytest.mark.parametrize("api", ["sentence_bleu", "BLEU.sentence_score"])
@pytest.mark.parametrize("method, value, lowercase, tok, published", SENTENCE_BLEU_CASES)
def test_sentence_bleu(api, method, value, lowercase, tok, published):
    ours, theirs, theirs_metric = _sentence_bleu_pair(api, SB_SYS, SB_REF, method, value, lowercase, tok)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    assert abs(ours.score - published) < 1e-3


@pytest.mark.parametrize("api", ["sentence_bleu", "BLEU.sentence_score"])
@pytest.mark.parametrize("method, value", ZERO_BLEU_CASES)
def test_sentence_bleu_zero(api, method, value):
    ours, theirs, _ = _sentence_bleu_pair(api, ZERO_SYS, ZERO_REF, method, value, False, "13a")
    assert_same_score(ours, theirs)
    assert ours.score == 0.0


def test_sentence_bleu_default_is_effective_order():
    ours = xm.sentence_bleu(SB_SYS, [SB_REF])
    assert ours.score == sacrebleu.sentence_bleu(SB_SYS, [SB_REF]).score
    assert "|eff:yes|" in ours.signature
    assert "|eff:no|" in BLEU().signature  # BLEU() itself: effective order off, as sacrebleu's


# --------------------------------------------------------------------------- test_chrf.py, test/test.py
CHRF_EPS_CASES = [  # corpus_chrf(..., char_order=6, word_order=0, beta=3, eps_smoothing=True)
    (["abcdefg"], ["hijklmnop"], 0.0),
    (["a"], ["b"], 0.0),
    ([""], ["b"], 0.0),
    ([""], ["ref"], 0.0),
    ([""], ["reference"], 0.0),
    (["aa"], ["ab"], 8.3333),
    (["a", "b"], ["a", "c"], 8.3333),
    (["a"], ["a"], 16.6667),
    (["a b c"], ["a b c"], 50.0),
    (["a b c"], ["abc"], 50.0),
    ([" risk assessment must be made of those who are qualified and expertise in the sector - these are the "
      "scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
      "scientists ."], 63.361730),
    ([" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 64.1302698),
    (["Niemand hat die Absicht, eine Mauer zu errichten"], ["Niemand hat die Absicht, eine Mauer zu errichten"],
     100.0),
]
CHRF_EFF_CASES = [  # the same with eps_smoothing=False (effective order, sacrebleu < 2.0 mode)
    (["a"], ["a"], 100.0),
    ([""], ["reference"], 0.0),
    (["a b c"], ["a b c"], 100.0),
    (["a b c"], ["abc"], 100.0),
    ([""], ["c"], 0.0),
    (["a", "b"], ["a", "c"], 50.0),
    (["aa"], ["ab"], 25.0),
]
CHRF_SPACE_CASES = [  # remove_whitespace=False
    (["Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."],
     ["Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."], 67.3481606),
    (["risk assessment must be made of those who are qualified and expertise in the sector - these are the "
      "scientists ."],
     ["risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
      "scientists ."], 65.2414427),
]
CHRF_SENTENCE_CASES = [  # sentence_chrf(hyp, refs, eps_smoothing=True)
    ("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
     ["Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."], 39.14078509),
    ("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
     ["A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."], 31.22557079),
    ("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
     ["Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."], 57.15704367),
]
EARLY_CHRF_CASES = [  # test/test.py: corpus_chrf(hyp, ref, order, beta) on the 0-1 scale of sacrebleu 1.x
    ("Consistency is the last refuge of the unimaginative", "Consistency is the last refuge of the unimaginative",
     6, 1.0),
    ("BBBB", "AAAAAA", 3, 0.0),
    ("", "A", 6, 0.0),
    ("A", "", 6, 0.0),
    ("AA", "AB", 6, 0.25),
    ("A", "A", 6, 1.0),
]


@pytest.mark.parametrize("api", ["corpus_chrf", "CHRF.corpus_score"])
@pytest.mark.parametrize("eps, hyps, refs, published", [(True, *c) for c in CHRF_EPS_CASES]
                         + [(False, *c) for c in CHRF_EFF_CASES])
def test_chrf_published(api, eps, hyps, refs, published):
    theirs_metric = SacreCHRF(char_order=6, word_order=0, beta=3, eps_smoothing=eps)
    theirs = theirs_metric.corpus_score(hyps, [refs])
    if api == "corpus_chrf":
        ours = xm.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, eps_smoothing=eps)
    else:
        ours = CHRF(char_order=6, word_order=0, beta=3, eps_smoothing=eps).corpus_score(hyps, [refs])
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    assert abs(ours.score - published) < 1e-4


@pytest.mark.parametrize("api", ["corpus_chrf", "CHRF.corpus_score"])
@pytest.mark.parametrize("hyps, refs, published", CHRF_SPACE_CASES)
def test_chrf_keep_whitespace(api, hyps, refs, published):
    theirs = sacrebleu.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, remove_whitespace=False)
    if api == "corpus_chrf":
        ours = xm.corpus_chrf(hyps, [refs], char_order=6, word_order=0, beta=3, remove_whitespace=False)
    else:
        ours = CHRF(char_order=6, word_order=0, beta=3, whitespace=True).corpus_score(hyps, [refs])
    assert "|space:yes|" in ours.signature
    assert_same_score(ours, theirs)
    assert abs(ours.score - published) < 1e-4


@pytest.mark.parametrize("api", ["sentence_chrf", "CHRF.sentence_score"])
@pytest.mark.parametrize("hyp, refs, published", CHRF_SENTENCE_CASES)
def test_chrf_sentence_level(api, hyp, refs, published):
    theirs = sacrebleu.sentence_chrf(hyp, refs, eps_smoothing=True)
    ours = (xm.sentence_chrf(hyp, refs, eps_smoothing=True) if api == "sentence_chrf"
            else CHRF(eps_smoothing=True).sentence_score(hyp, refs))
    assert_same_score(ours, theirs)
    assert abs(ours.score - published) < 1e-4


@pytest.mark.parametrize("hyp, ref, order, published", EARLY_CHRF_CASES)
def test_chrf_early_checks(hyp, ref, order, published):
    """sacrebleu 1.x's first chrF checks (beta 3, effective order); 2.x reports 0-100."""
    ours = xm.corpus_chrf([hyp], [[ref]], char_order=order, beta=3)
    assert_same_score(ours, sacrebleu.corpus_chrf([hyp], [[ref]], char_order=order, beta=3))
    assert ours.score / 100 == pytest.approx(published, abs=1e-12)


CHRF_INPUTS = ([(h, r) for h, r, _ in CHRF_EPS_CASES + CHRF_EFF_CASES + CHRF_SPACE_CASES]
               + [([h], r) for h, r, _ in CHRF_SENTENCE_CASES] + [(README_HYPS, None)])
CHRF_OPTIONS = [
    {}, {"word_order": 2}, {"word_order": 1}, {"lowercase": True}, {"beta": 1}, {"beta": 0}, {"char_order": 3},
    {"whitespace": True}, {"eps_smoothing": True}, {"word_order": 2, "eps_smoothing": True},
    {"word_order": 2, "lowercase": True, "whitespace": True},
]


@pytest.mark.parametrize("options", CHRF_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "dflt")
@pytest.mark.parametrize("case", range(len(CHRF_INPUTS)))
def test_chrf_options_on_suite_inputs(case, options):
    """Every chrF/chrF++ option on every input sentence of sacrebleu's chrF tests (the README corpus
    with its two reference streams)."""
    hyps, refs = CHRF_INPUTS[case]
    streams = README_REFS if refs is None else [refs]
    theirs_metric = SacreCHRF(**options)
    theirs = theirs_metric.corpus_score(hyps, streams)
    ours = CHRF(**options).corpus_score(hyps, streams)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    for h, *segment_refs in zip(hyps, *streams, strict=True):
        ours_segment = CHRF(**options).sentence_score(h, segment_refs)
        assert_same_score(ours_segment, theirs_metric.sentence_score(h, segment_refs))


# --------------------------------------------------------------------------- test_ter.py, test_tokenizer_ter.py
TER_CASES = [  # (hyps, refs, published TER / 100)
    (["aaaa bbbb cccc dddd"], ["aaaa bbbb cccc dddd"], 0),
    (["dddd eeee ffff"], ["aaaa bbbb cccc"], 1),
    ([""], ["a"], 1),
    (["d e f g h a b c"], ["a b c d e f g h"], 1 / 8),
    ([
        'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , '
        'damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .',
        'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des '
        'Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
        'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie '
        'Werte für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .",
        'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
    ], [
        'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , '
        "damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .",
        'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des '
        'Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',
        'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie '
        'für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .",
        'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',
    ], 0.136),
]
TER_OPTIONS = [dict(zip(("normalized", "no_punct", "asian_support", "case_sensitive"), flags, strict=True))
               for flags in itertools.product((False, True), repeat=4)]


def _ter_id(options: dict) -> str:
    return ",".join(k for k, v in options.items() if v) or "dflt"


@pytest.mark.parametrize("options", TER_OPTIONS, ids=_ter_id)
@pytest.mark.parametrize("case", range(len(TER_CASES)))
def test_ter(case, options):
    hyps, refs, published = TER_CASES[case]
    theirs_metric = SacreTER(**options)
    theirs = theirs_metric.corpus_score(hyps, [refs])
    ours = TER(**options).corpus_score(hyps, [refs])
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    assert_same_score(xm.corpus_ter(hyps, [refs], **options), sacrebleu.corpus_ter(hyps, [refs], **options))
    if not any(options.values()):
        assert abs(ours.score - 100 * published) < 1e-3


TER_TOKENIZER_CASES = [  # (text, its tercom tokenization, options)
    ("a b c d", "a b c d", {}),
    ("", "", {}),
    ("a b c d.", "a b c d.", {}),
    ("A B C D.", "a b c d.", {}),
    ("a b c d.", "a b c d", {"no_punct": True}),
    ("A ; B ) C : D.", "a b c d", {"no_punct": True}),
    ("a b (c) d.", "a b ( c ) d .", {"normalized": True}),
    ("Jim's car.", "jim 's car .", {"normalized": True}),
    ("4.2", "4.2", {"normalized": True}),
    ("美众院公布对特", "美 众 院 公 布 对 特", {"normalized": True, "asian_support": True}),
    ("りの拳銃を持", "りの 拳 銃 を 持", {"normalized": True, "asian_support": True}),
]


@pytest.mark.parametrize("text, tokens, options", TER_TOKENIZER_CASES)
def test_ter_tokenizer(text, tokens, options):
    """xleval's TER tokenizes as sacrebleu's TercomTokenizer: the text scored against its published
    tokenization (and against a one-token change of it) gives sacrebleu's TER."""
    from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

    assert TercomTokenizer(**options)(text) == tokens
    ours = TER(**options).sentence_score(text, [tokens])
    assert_same_score(ours, SacreTER(**options).sentence_score(text, [tokens]))
    assert ours.score == 0.0
    changed = tokens.rsplit(" ", 1)[0] + " zzz" if " " in tokens else "zzz"
    assert_same_score(TER(**options).sentence_score(text, [changed]), SacreTER(**options).sentence_score(text,
                                                                                                         [changed]))


# --------------------------------------------------------------------------- option grids (further cases)
BLEU_TOKENIZERS = ["13a", "intl", "char", "zh", "none"]
BLEU_SMOOTHING = [("exp", None), ("floor", None), ("floor", 0.5), ("add-k", None), ("add-k", 2), ("none", None)]


@pytest.mark.parametrize("refs_id", list(REF_SETS))
@pytest.mark.parametrize("effective", [False, True], ids=["eff-no", "eff-yes"])
@pytest.mark.parametrize("method, value", BLEU_SMOOTHING, ids=str)
@pytest.mark.parametrize("lowercase", [False, True], ids=["mixed", "lc"])
@pytest.mark.parametrize("tok", BLEU_TOKENIZERS)
def test_bleu_option_grid(tok, lowercase, method, value, effective, refs_id):
    refs = REF_SETS[refs_id]
    kwargs = {"tokenize": tok, "lowercase": lowercase, "smooth_method": method, "smooth_value": value,
              "effective_order": effective}
    theirs_metric = SacreBLEU(**kwargs)
    theirs = theirs_metric.corpus_score(README_HYPS, refs)
    ours_metric = BLEU(**kwargs)
    ours = ours_metric.corpus_score(README_HYPS, refs)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)
    # after scoring, the object's signature reports the references scored, as sacrebleu's does
    assert ours_sig(ours_metric.signature) == sacre_sig(theirs_metric)
    assert ours_metric.get_signature().format(short=True).rpartition(XLEVAL_SIG)[0] == \
        theirs_metric.get_signature().format(short=True)
    for h, *segment_refs in zip(README_HYPS, *refs, strict=True):
        assert_same_score(ours_metric.sentence_score(h, segment_refs), theirs_metric.sentence_score(h, segment_refs))


@pytest.mark.parametrize("refs_id", list(REF_SETS))
@pytest.mark.parametrize("options", TER_OPTIONS, ids=_ter_id)
def test_ter_option_grid(options, refs_id):
    refs = REF_SETS[refs_id]
    theirs_metric = SacreTER(**options)
    theirs = theirs_metric.corpus_score(README_HYPS, refs)
    ours = TER(**options).corpus_score(README_HYPS, refs)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)


@pytest.mark.parametrize("refs_id", list(REF_SETS))
@pytest.mark.parametrize("options", CHRF_OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "dflt")
def test_chrf_reference_sets(options, refs_id):
    refs = REF_SETS[refs_id]
    theirs_metric = SacreCHRF(**options)
    theirs = theirs_metric.corpus_score(README_HYPS, refs)
    ours = xm.corpus_chrf(README_HYPS, refs, char_order=options.get("char_order", 6),
                          word_order=options.get("word_order", 0), beta=options.get("beta", 2),
                          remove_whitespace=not options.get("whitespace", False),
                          eps_smoothing=options.get("eps_smoothing", False)) if "lowercase" not in options \
        else CHRF(**options).corpus_score(README_HYPS, refs)
    assert_same_score(ours, theirs)
    assert_same_format_with_signature(ours, theirs, theirs_metric)


# --------------------------------------------------------------------------- constructor and API surface
@pytest.mark.parametrize("trg_lang", ["", "de", "zh", "ja", "ko"])
def test_bleu_trg_lang_picks_sacrebleus_tokenizer(trg_lang):
    pytest.importorskip("MeCab") if trg_lang == "ja" else None
    pytest.importorskip("mecab_ko") if trg_lang == "ko" else None
    theirs_metric = SacreBLEU(trg_lang=trg_lang)
    theirs = theirs_metric.corpus_score(README_HYPS, README_REFS)
    ours = BLEU(trg_lang=trg_lang).corpus_score(README_HYPS, README_REFS)
    assert_same_score(ours, theirs)
    assert ours_sig(ours.signature) == sacre_sig(theirs_metric)


@pytest.mark.parametrize("args", [(True,), (False, True), (True, False, "char"), (False, False, "intl", "floor", 0.2),
                                  (False, False, "13a", "exp", None, 3, True)], ids=str)
def test_bleu_positional_arguments_are_sacrebleus(args):
    theirs_metric = SacreBLEU(*args)
    theirs = theirs_metric.corpus_score(README_HYPS, README_REFS)
    ours = BLEU(*args).corpus_score(README_HYPS, README_REFS)
    assert_same_score(ours, theirs)
    assert ours_sig(ours.signature) == sacre_sig(theirs_metric)


@pytest.mark.parametrize("args", [(6, 2), (6, 0, 3), (4, 1, 2, True), (6, 2, 2, False, True), (6, 0, 2, False, False,
                                                                                                  True)], ids=str)
def test_chrf_positional_arguments_are_sacrebleus(args):
    theirs = SacreCHRF(*args).corpus_score(README_HYPS, README_REFS)
    assert_same_score(CHRF(*args).corpus_score(README_HYPS, README_REFS), theirs)


@pytest.mark.parametrize("args", [(True,), (False, True), (True, True, True), (False, False, False, True)], ids=str)
def test_ter_positional_arguments_are_sacrebleus(args):
    theirs = SacreTER(*args).corpus_score(README_HYPS, README_REFS)
    assert_same_score(TER(*args).corpus_score(README_HYPS, README_REFS), theirs)


@pytest.mark.parametrize("ours_cls, theirs_cls", [(BLEU, SacreBLEU), (CHRF, SacreCHRF), (TER, SacreTER)])
def test_cached_references(ours_cls, theirs_cls):
    """``references=`` in the constructor and ``corpus_score(hyps, None)``, as sacrebleu's cache."""
    theirs = theirs_cls(references=README_REFS).corpus_score(README_HYPS, None)
    ours = ours_cls(references=README_REFS).corpus_score(README_HYPS, None)
    assert_same_score(ours, theirs)
    assert ours.signature.startswith("nrefs:2|")
    with pytest.raises(InputError, match="needs references"):
        ours_cls().corpus_score(README_HYPS, None)


def test_one_call_functions_match_sacrebleus_names():
    for name in ("corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf", "corpus_ter",
                 "sentence_ter"):
        assert callable(getattr(xm, name)) and callable(getattr(sacrebleu, name))


@pytest.mark.parametrize("hyp, refs", [(SB_SYS, [SB_REF]), (README_HYPS[1], [README_REFS[0][1], README_REFS[1][1]]),
                                       ("", ["a"]), ("a", [""])])
def test_sentence_ter_and_chrf_functions(hyp, refs):
    assert_same_score(xm.sentence_ter(hyp, refs), sacrebleu.sentence_ter(hyp, refs))
    assert_same_score(xm.sentence_chrf(hyp, refs), sacrebleu.sentence_chrf(hyp, refs))
    assert_same_score(xm.sentence_chrf(hyp, refs, word_order=2), sacrebleu.sentence_chrf(hyp, refs, word_order=2))
    assert_same_score(xm.sentence_bleu(hyp, refs), sacrebleu.sentence_bleu(hyp, refs))


def test_score_is_the_number_and_pickles():
    import pickle

    ours = xm.corpus_bleu(README_HYPS, README_REFS)
    assert ours == pytest.approx(48.530827) and ours + 1 == ours.score + 1 and math.isfinite(ours)
    again = pickle.loads(pickle.dumps(ours))
    assert again == ours and again.counts == ours.counts and again.signature == ours.signature


@pytest.mark.parametrize("hyps, refs", [([""], [[""]]), (["", "a"], [["", "a"]]), (["a"], [[""]]), ([""], [["a"]])])
@pytest.mark.parametrize("fn", ["corpus_bleu", "corpus_chrf", "corpus_ter"])
def test_empty_strings(fn, hyps, refs):
    assert_same_score(getattr(xm, fn)(hyps, refs), getattr(sacrebleu, fn)(hyps, refs))


# --------------------------------------------------------------------------- test_metrics_base.py (argument checks)
_OK = nullcontext()
_TYPE = "type"
SENTENCE_ARG_CASES = [  # (hyp, refs, outcome): _OK scores; _TYPE raises TypeError (sacrebleu's tests)
    ("h1", ["r1"], _OK),
    ("h1", ["r1", "r2"], _OK),
    ("h1", ("r1",), _OK),
    ("", ["r1"], _OK),
    ("h1", ["r1", None], _OK),
    pytest.param("h1", [None], "noref", id="none-only-reference"),
    (123, ["r1"], _TYPE),
    (None, ["r1"], _TYPE),
    (["h1"], ["r1"], _TYPE),
    ("h1", "r1", _TYPE),
    ("h1", b"r1", _TYPE),
    ("h1", 123, _TYPE),
    ("h1", [], _TYPE),
    ("h1", [123], _TYPE),
    ("h1", ["r1", 5], _TYPE),
    (123, "r1", _TYPE),
]


def _outcome(outcome):
    if outcome == _TYPE:
        return pytest.raises(TypeError)
    if outcome == "noref":
        # deliberate: sacrebleu's check accepts it and its scoring then fails (TypeError, ValueError or
        # ZeroDivisionError by metric); xleval says the segment has no reference
        return pytest.raises(InputError, match="no reference")
    return outcome


@pytest.mark.parametrize("cls", [BLEU, CHRF, TER])
@pytest.mark.parametrize("hyp, refs, outcome", SENTENCE_ARG_CASES)
def test_sentence_score_arguments(cls, hyp, refs, outcome):
    with _outcome(outcome) as caught:
        ours = cls().sentence_score(hyp, refs)
    if outcome is _OK:
        theirs_cls = {BLEU: SacreBLEU, CHRF: SacreCHRF, TER: SacreTER}[cls]
        assert_same_score(ours, theirs_cls().sentence_score(hyp, list(refs)))
    elif outcome == _TYPE:
        assert isinstance(caught.value, InputError)  # xleval's one exception tree, also a TypeError


CORPUS_ARG_CASES = [  # (hyps, refs, outcome)
    (["h1"], [["r1a"]], _OK),
    (("h1",), (("r1a",),), _OK),
    (["h1"], [["r1a"], ["r2"]], _OK),
    (["h1", "h2"], [["r1a", "r2a"], ["r1b", "r2b"]], _OK),
    (["h1", "h2"], [["r1a", "r2a"], ["r1b", None]], _OK),
    pytest.param(["h1"], [[None]], "noref", id="none-reference-element"),
    ("h1", None, _TYPE),
    (b"h1", None, _TYPE),
    (123, None, _TYPE),
    (None, None, _TYPE),
    ([], None, _TYPE),
    ([123], None, _TYPE),
    (["hyp1", 123], None, _TYPE),
    ([None], None, _TYPE),
    (["h1", None], None, _TYPE),
    (["h1"], "r1a", _TYPE),
    (["h1"], b"r1", _TYPE),
    (["h1"], 123, _TYPE),
    (["h1"], [], _TYPE),
    (["h1"], [123], _TYPE),
    (["h1"], [[123]], _TYPE),
    (["h1", "h2", "h3"], [["r1a", "r2a"]], _TYPE),
    (["h1", "h2"], [["r1a", "r2a", "r3a"]], _TYPE),
    (["h1", "h2"], [["r1a", "r2a"], ["r1b"]], _TYPE),
    (["h1"], [[]], _TYPE),
    (["h1", "h2"], [["r1a", "r2a"], "bad"], _TYPE),
    (["h1"], [["r1a"], 5], _TYPE),
    (["h1", "h2"], [["r1a", "r2a"], ["r1b", 99]], _TYPE),
    ("h1", "r1a", _TYPE),
]


@pytest.mark.parametrize("cls", [BLEU, CHRF, TER])
@pytest.mark.parametrize("hyps, refs, outcome", CORPUS_ARG_CASES)
def test_corpus_score_arguments(cls, hyps, refs, outcome):
    # refs=None means "the cached references" in sacrebleu; the hypotheses' checks come first there
    # too, so a metric with a cache of one segment is what these cases need
    metric = cls(references=[["r1a"]]) if refs is None else cls()
    with _outcome(outcome) as caught:
        ours = metric.corpus_score(hyps, refs)
    if outcome is _OK:
        theirs_cls = {BLEU: SacreBLEU, CHRF: SacreCHRF, TER: SacreTER}[cls]
        assert_same_score(ours, theirs_cls().corpus_score(list(hyps), [list(r) for r in refs]))
    elif outcome == _TYPE:
        assert isinstance(caught.value, InputError)


@pytest.mark.parametrize("fn", ["corpus_bleu", "corpus_chrf", "corpus_ter"])
def test_empty_corpus_is_a_type_error(fn):
    """Deliberate: sacrebleu 2.6 fails with IndexError on an empty corpus; newer sacrebleu raises
    TypeError ("`hyps` should not be empty"), as xleval does."""
    with pytest.raises(IndexError):
        getattr(sacrebleu, fn)([], [[]])
    with pytest.raises(TypeError, match="empty"):
        getattr(xm, fn)([], [[]])
