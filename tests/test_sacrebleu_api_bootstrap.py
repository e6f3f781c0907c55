"""sacrebleu's own call forms on the metric objects: ``corpus_score(hypotheses=, references=)`` and
``corpus_score(..., n_bootstrap=N)`` (its documented way to a bootstrap estimate), compared with sacrebleu
itself: the printed score with ``(μ = mean ± ci)``, the signature that gains ``bs`` and ``seed`` (and keeps
them, as sacrebleu's metric does), ``_mean`` and ``_ci``. Before, both forms raised TypeError."""
from __future__ import annotations

import json

import pytest
import sacrebleu.metrics as sb

import xleval.metrics as xm

HYPS = ["the cat sat on the mat", "hello there world", "a b c d e", "it is raining today", "we go home now"]
REFS = [["the cat sat on a mat", "hello world", "a b c d", "it rains today", "we are going home"]]
SUFFIX = "|xleval:"


@pytest.mark.parametrize("name", ["BLEU", "CHRF", "TER"])
def test_n_bootstrap_prints_and_signs_as_sacrebleu(name, monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    theirs_metric, ours_metric = getattr(sb, name)(), getattr(xm, name)()
    theirs = theirs_metric.corpus_score(HYPS, REFS, n_bootstrap=200)
    ours = ours_metric.corpus_score(HYPS, REFS, n_bootstrap=200)
    assert str(ours) == str(theirs) and "μ = " in str(ours)
    assert ours._mean == pytest.approx(theirs._mean, rel=1e-6) and ours._ci == pytest.approx(theirs._ci, rel=1e-6)
    for short in (False, True):
        mine = ours_metric.get_signature().format(short=short)
        assert mine[:mine.index(SUFFIX)] == theirs_metric.get_signature().format(short=short)
    assert "|bs:200|seed:12345|" in str(ours_metric.get_signature())
    again = ours_metric.corpus_score(hypotheses=HYPS, references=REFS)  # sacrebleu's keywords; bs stays
    assert str(again) == str(theirs_metric.corpus_score(hypotheses=HYPS, references=REFS))
    assert "|bs:200|" in again.signature
    assert str(ours_metric.corpus_score(HYPS, REFS, 200)) == str(theirs)  # sacrebleu's third argument


def test_a_fresh_seed_is_said_as_sacrebleu_says_it(monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "None")
    metric = xm.BLEU()
    metric.corpus_score(HYPS, REFS, n_bootstrap=50)
    theirs = sb.BLEU()
    theirs.corpus_score(HYPS, REFS, n_bootstrap=50)
    mine = str(metric.get_signature())
    assert mine[:mine.index(SUFFIX)] == str(theirs.get_signature())


def test_without_a_bootstrap_the_score_has_none():
    score = xm.BLEU().corpus_score(HYPS, REFS)
    theirs = sb.BLEU().corpus_score(HYPS, REFS)
    assert score._mean == theirs._mean and score._ci == theirs._ci and "μ" not in str(score)
    with pytest.raises(TypeError, match="n_bootstrap"):
        xm.BLEU().corpus_score(HYPS, REFS, n_bootstrap=0)


def test_scores_written_to_standard_output_carry_their_signatures(cli, tmp_path):
    """`xleval score TABLE -o -` has no metadata nor sidecar to hold the signatures: they are said on stderr, as
    the streamed path says them (before: bare score columns, no signature anywhere)."""
    import pandas as pd

    path = tmp_path / "t.tsv"
    pd.DataFrame({"lp": "de-en", "system": "A", "seg_id": range(5), "hypothesis": HYPS,
                  "reference": REFS[0]}).to_csv(path, sep="\t", index=False)
    rc, out, err = cli("score", str(path), "-m", "bleu,chrf", "-o", "-")
    assert rc == 0, err
    assert {"bleu", "chrf"} <= set(out.splitlines()[0].split("\t"))
    assert "bleu: nrefs:1|case:mixed|eff:yes|tok:13a" in err and "chrf: nrefs:1|case:mixed|eff:yes|nc:6" in err


def test_quiet_keeps_stderr_clean_for_a_table_too(cli, tmp_path):
    """-q ("no notes on standard error") holds for a table as for plain files: neither how the TSV's quotes were
    read nor what was written is said (before, -q was read for plain files only)."""
    import pandas as pd

    path, out = tmp_path / "q.tsv", tmp_path / "o.parquet"
    pd.DataFrame({"lp": "de-en", "system": "A", "seg_id": range(5), "hypothesis": ['he said "hi"'] + HYPS[1:],
                  "reference": REFS[0]}).to_csv(path, sep="\t", index=False)
    rc, _, err = cli("score", str(path), "-m", "chrf", "-o", str(out))
    assert rc == 0 and "note:" in err and "wrote 5 rows" in err, err
    rc, _, err = cli("score", str(path), "-m", "chrf", "-q", "-o", str(out))
    assert rc == 0 and err == "", err
    rc, _, err = cli("score", str(path), "-m", "chrf", "-o", str(out))  # the next command says its notes again
    assert "note:" in err


@pytest.mark.parametrize("cell", ["1e5", "true", "3.10"])
def test_a_text_cell_typed_by_json_is_refused_not_respelt(cli, tmp_path, cell):
    """A JSONL hypothesis written as a JSON number or truth value has lost its spelling (1e5 is 100000.0, 3.10 is
    3.1): scored as Python spells it, it scored another text (chrF 8.33 for a hypothesis equal to its reference as
    written). Refused with the row; an integer keeps its spelling and is read as text."""
    path = tmp_path / "t.jsonl"
    head = '{"lp": "de-en", "system": "A", '
    path.write_text(f'{head}"reference": "{cell}", "hypothesis": "x"}}\n{head}"reference": "{cell}", "hypothesis": '
                    f'{cell}}}\n')
    rc, _, err = cli("score", str(path), "-m", "chrf", "-o", str(tmp_path / "o.jsonl"))
    assert rc == 2 and "column 'hypothesis' row 2: the cell is the number or truth value" in err, err
    path.write_text('{"lp": "de-en", "system": "A", "reference": "2024", "hypothesis": 2024}\n')
    rc, said, err = cli("score", str(path), "-m", "chrf", "--format", "json")
    assert rc == 0 and json.loads(said)["corpus"][0]["chrf"] == pytest.approx(100.0), err
