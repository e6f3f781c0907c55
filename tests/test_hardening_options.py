"""Issue 26, options: ``fairness gaps --by lp`` names ``--reference`` with a pair that exists; a file
column mapped twice by ``--col`` is refused with one line; ``-cc 0`` is accepted where sacrebleu computes
a score (with a word order) and refused with one line where sacrebleu fails (alone)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import CHRF as SacreCHRF

from conftest import run_cli

HYPS = ["the cat sat on the mat", "a dog barks, loudly!", "rain falls on green hills"]
REFS = ["the cat sat on a mat", "the dog barked loudly", "rain fell on the green hills"]


def _one_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("xleval: error: "), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    return lines[0]


# --- 7. fairness gaps --by lp with the default --reference en ---------------------------------------------
def test_fairness_by_lp_names_reference_and_a_pair_that_exists(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"lp": lp, "item": i, "acc": float(rng.random() < 0.6)} for lp in ("en-de", "en-fr") for i in range(30)]
    pd.DataFrame(rows).to_csv(tmp_path / "g.tsv", sep="\t", index=False)
    line = _one_line(run_cli("fairness", "gaps", "g.tsv", "--metric", "acc", "--by", "lp", cwd=tmp_path))
    assert "--reference en" in line and "--reference en-de" in line, line
    r = run_cli("fairness", "gaps", "g.tsv", "--metric", "acc", "--by", "lp", "--reference", "en-de", "--format",
                "json", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr


# --- 8. --col twice for one file column -------------------------------------------------------------------
@pytest.fixture
def scores(tmp_path):
    frame = pd.DataFrame({"lp": ["en-de"] * 4 + ["en-fr"] * 4, "system": list("ABAB") * 2,
                          "bleu": [1.0, 2, 3, 4, 5, 6, 7, 8]})
    frame.to_csv(tmp_path / "s.tsv", sep="\t", index=False)
    return tmp_path


def test_one_file_column_mapped_twice_is_refused(scores):
    line = _one_line(run_cli("diagnose", "s.tsv", "--score", "score", "--human", "human", "--col", "score=bleu",
                             "--col", "human=bleu", cwd=scores))
    assert "'bleu'" in line and "human=bleu" in line and "--col" in line and "missing" not in line, line


def test_one_canonical_column_mapped_twice_is_refused(scores):
    line = _one_line(run_cli("diagnose", "s.tsv", "--score", "score", "--col", "score=bleu", "--col", "score=system",
                             cwd=scores))
    assert "'score'" in line and "score=system" in line and "'bleu'" in line, line


def test_the_same_mapping_twice_is_one_mapping(scores):
    r = run_cli("diagnose", "s.tsv", "--score", "score", "--col", "score=bleu", "--col", "score=bleu", "--format",
                "json", cwd=scores)
    assert r.exit_code == 0, r.stderr


# --- 9. -cc 0 -----------------------------------------------------------------------------------------------
def test_char_order_zero_with_a_word_order_is_sacrebleus_score(tmp_path):
    (tmp_path / "h.txt").write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    r = run_cli("score", "r.txt", "-i", "h.txt", "-m", "chrf", "-cc", "0", "-cw", "2", "-b", "-w", "6", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    expected = SacreCHRF(char_order=0, word_order=2).corpus_score(HYPS, [REFS]).score
    assert float(r.stdout) == pytest.approx(expected, abs=1e-6)
    sentence = SacreCHRF(char_order=0, word_order=2).sentence_score(HYPS[1], [REFS[1]]).score
    table = pd.DataFrame({"system": "A", "seg_id": [1, 2, 3], "hypothesis": HYPS, "reference": REFS})
    table.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    r = run_cli("score", "t.tsv", "-m", "chrf", "-cc", "0", "-cw", "2", "-o", "out.tsv", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert out.filter(like="chrf").iloc[1, 0] == pytest.approx(sentence, abs=1e-9)


@pytest.mark.parametrize("inputs", [["r.txt", "-i", "h.txt"], ["t.tsv"]])
def test_char_order_zero_alone_is_refused(tmp_path, inputs):
    (tmp_path / "h.txt").write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("\n".join(REFS) + "\n", encoding="utf-8")
    pd.DataFrame({"hypothesis": HYPS, "reference": REFS}).to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    with pytest.raises(IndexError):  # sacrebleu itself fails on it (not a score to match)
        SacreCHRF(char_order=0, word_order=0).corpus_score(HYPS, [REFS])
    line = _one_line(run_cli("score", *inputs, "-m", "chrf", "-cc", "0", cwd=tmp_path))
    assert "--chrf-char-order 0" in line and "--chrf-word-order 2" in line, line
    assert not (tmp_path / "out.tsv").exists()
