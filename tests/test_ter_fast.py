"""The compiled TER (``_ter_kernels``) gives sacrebleu's edit counts: sacrebleu's own code is the
oracle on WMT21 segments, WMT21 paragraphs (lines of one document joined), several and missing
references, every option, and adversarial token sequences (small vocabularies: many equal-gain
shifts to break ties between; very unequal lengths: the widened beam; long permutations: the
1,000-candidate budget).

``XLEVAL_TER_PARITY_ROWS`` sets how many WMT21 rows are compared (default 400, a sample over
every language pair); ``all`` compares every row (sacrebleu needs about an hour of CPU for it).
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.metrics.lib_ter import translation_edit_rate

from xleval.metrics import TER, _fast

pytest.importorskip("numba")
from xleval.metrics import _ter_kernels

OPTIONS = [{}, {"case_sensitive": True}, {"normalized": True, "asian_support": True},
           {"no_punct": True, "normalized": True}]


def _sacrebleu_stats(hyps, refs, **options) -> np.ndarray:
    return np.asarray(SacreTER(**options)._extract_corpus_statistics(hyps, refs), dtype=float)


def _paragraphs(segments, lines: int):
    df = segments.sort_values(["lp", "system", "doc_id", "seg_id"])
    block = df.groupby(["lp", "system", "doc_id"], sort=False).cumcount() // lines
    return df.groupby([df["lp"], df["system"], df["doc_id"], block], sort=False).agg(
        lp=("lp", "first"), hypothesis=("hypothesis", " ".join), reference=("reference", " ".join)).reset_index(
        drop=True)


def _sample(df, n: int, seed: int):
    """``n`` rows spread over the language pairs (each pair contributes the same share)."""
    per = max(1, n // df["lp"].nunique())
    return df.groupby("lp", group_keys=False).apply(lambda g: g.sample(min(per, len(g)), random_state=seed))


@pytest.mark.data
def test_wmt21_segments_equal_sacrebleu(wmt21_segments):
    wanted = os.environ.get("XLEVAL_TER_PARITY_ROWS", "400")
    rows = wmt21_segments if wanted == "all" else _sample(wmt21_segments, int(wanted), seed=38)
    hyps, refs = rows["hypothesis"].tolist(), [rows["reference"].tolist()]
    ours = TER().sentence_stats(hyps, refs)
    theirs = _sacrebleu_stats(hyps, refs)
    assert len(ours) == len(rows) >= min(len(wmt21_segments), 390)
    assert np.flatnonzero((ours != theirs).any(axis=1)).tolist() == []
    assert TER().corpus_score(hyps, refs).score == SacreTER().corpus_score(hyps, refs).score


@pytest.mark.data
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_wmt21_paragraphs_equal_sacrebleu(wmt21_segments, options):
    # two paragraphs per language pair with the default options, one with the others
    paras = _sample(_paragraphs(wmt21_segments, 3), 16 if options else 32, seed=len(options))
    hyps, refs = paras["hypothesis"].tolist(), [paras["reference"].tolist()]
    assert np.mean([len(r.split()) for r in refs[0]]) > 45  # paragraph length, not sentences
    ours = TER(**options).sentence_stats(hyps, refs)
    assert np.flatnonzero((ours != _sacrebleu_stats(hyps, refs, **options)).any(axis=1)).tolist() == []
    ours_corpus = TER(**options).corpus_score(hyps, refs)
    theirs_corpus = SacreTER(**options).corpus_score(hyps, refs)
    assert (ours_corpus.score, ours_corpus.num_edits) == (theirs_corpus.score, theirs_corpus.num_edits)


@pytest.mark.data
def test_several_and_missing_references_equal_sacrebleu(wmt21_segments):
    """Edits are the best over the references, the length their mean; a missing (None) reference is
    left out of both, as in sacrebleu."""
    de = wmt21_segments[wmt21_segments["lp"] == "de-en"]
    a = de[de["system"] == "ref-B"].set_index("seg_id")
    hyp = de[de["system"] == de["system"].iloc[0]].set_index("seg_id").loc[a.index[:120]]
    hyps = hyp["hypothesis"].tolist()
    second = [None if i % 3 == 0 else s for i, s in enumerate(a["hypothesis"].loc[hyp.index].tolist())]
    refs = [hyp["reference"].tolist(), second]
    ours = TER(nrefs=None).sentence_stats(hyps, refs)
    np.testing.assert_array_equal(ours, _sacrebleu_stats(hyps, refs))
    assert ours[0, 1] == len(refs[0][0].split())  # one reference there: its own length


def _adversarial_cases(seed: int = 1):
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(60):  # small vocabularies: many shifts of equal gain, ties decided by the ranking
        vocab = int(rng.integers(2, 6))
        n_h, n_r = rng.integers(0, 25, 2)
        cases.append((rng.integers(0, vocab, n_h), rng.integers(0, vocab, n_r)))
    for n_h, n_r in [(1, 80), (2, 150), (120, 2), (0, 5), (5, 0), (0, 0), (1, 1)]:  # the widened beam, empties
        cases.append((rng.integers(0, 4, n_h), rng.integers(0, 4, n_r)))
    for _ in range(12):  # a reference that is the hypothesis with blocks moved around
        hyp = rng.integers(0, 30, int(rng.integers(5, 90)))
        parts = np.split(hyp.copy(), sorted(rng.integers(0, len(hyp), 4)))
        rng.shuffle(parts)
        cases.append((hyp, np.concatenate(parts)))
    return cases


def test_adversarial_token_sequences_equal_sacrebleu():
    for hyp, ref in _adversarial_cases():
        edits, status = _ter_kernels.edit_rate(hyp.astype(np.int64), ref.astype(np.int64))
        expected = translation_edit_rate([str(w) for w in hyp], [str(w) for w in ref])[0]
        assert (int(edits), int(status)) == (expected, 0), (hyp.tolist(), ref.tolist())


def test_hand_checked_shift():
    """'a b c d' against 'c d a b': one shift of 'c d' to the front and no other edit (TER 1/4)."""
    assert TER().sentence_stats(["a b c d"], [["c d a b"]]).tolist() == [[1.0, 4.0]]
    assert TER().sentence_score("a b c d", ["c d a b"]) == 25.0


def test_budget_of_candidates_is_sacrebleus():
    """A long hypothesis repeating a few words reaches the 1,000-candidate budget: the search that
    reaches it is discarded (sacrebleu's rule), so the count is sacrebleu's, not a better one."""
    rng = np.random.default_rng(7)
    hyp = rng.integers(0, 3, 70)
    ref = rng.integers(0, 3, 70)
    edits, _ = _ter_kernels.edit_rate(hyp.astype(np.int64), ref.astype(np.int64))
    assert edits == translation_edit_rate([str(w) for w in hyp], [str(w) for w in ref])[0]


def test_numpy_backend_runs_sacrebleus_code(monkeypatch):
    """Without numba (or with the numpy backend) sacrebleu's own code gives the statistics."""
    hyps, refs = ["the cat sat on the mat", "x"], [["on the mat the cat sat", ""]]
    with _fast.backend("numpy"):
        calls = []
        original = SacreTER._extract_corpus_statistics
        monkeypatch.setattr(SacreTER, "_extract_corpus_statistics",
                            lambda self, *a: calls.append(1) or original(self, *a))
        numpy_stats = TER().sentence_stats(hyps, refs)
    assert calls and numpy_stats.tolist() == TER().sentence_stats(hyps, refs).tolist() == [[1.0, 6.0], [1.0, 0.0]]


def test_a_pair_sacrebleu_raises_on_is_handed_to_it(monkeypatch):
    """A pair flagged by the kernel goes to sacrebleu's code, whose answer (or error) stands."""
    from xleval.metrics import _ter

    real = _ter_kernels.edit_rates

    def flag_all(ids, off, h, r):
        edits, status = real(ids, off, h, r)
        return np.zeros_like(edits), np.ones_like(status)

    monkeypatch.setattr(_ter._compiled(), "edit_rates", flag_all)
    hyps, refs = ["a b c d e", "one two"], [["c d a b e", "two one three"]]
    assert TER().sentence_stats(hyps, refs).tolist() == _sacrebleu_stats(hyps, refs).tolist()


def test_score_frame_reports_ter_progress_in_steps_of_2000_rows():
    """The score command's bar moves during TER, not once per 50,000 rows."""
    import pandas as pd

    from xleval.metrics import score_frame

    df = pd.DataFrame({"hypothesis": ["a b c"] * 4500, "reference": ["c a b"] * 4500})
    steps = []
    stages = []
    scored = score_frame(df, ["ter"], progress=lambda units=1, *, total=None, stage=None: (
        stages.append(stage) if stage is not None else steps.append(units)))
    assert steps == [2000, 2000, 500]
    assert stages == ["ter"]  # one metric: its name, told once before its rows
    assert scored.frame["ter"].to_numpy() == pytest.approx([100 / 3] * 4500)  # one shift of "c", three words


@pytest.mark.parametrize("options", [{"normalized": True}, {"normalized": True, "no_punct": True}], ids=str)
def test_references_are_tokenised_twice_as_in_sacrebleu(options):
    """sacrebleu normalises a reference when caching it and again when splitting it: '&amp;quot;'
    becomes '&quot;' then '"' in a reference, but stays '&quot;' -> '"' once in a hypothesis."""
    hyps = ['say &quot;hi&quot; &amp; go', "a\n-b c"]
    refs = [['say &amp;quot;hi&amp;quot; &amp;amp; go', "a\n-b\nc"]]
    ours = TER(**options).sentence_stats(hyps, refs)
    np.testing.assert_array_equal(ours, _sacrebleu_stats(hyps, refs, **options))
    assert ours[0, 0] > 0 and ours[1, 0] == 0  # the twice-normalised reference differs; the hyphenation joins
