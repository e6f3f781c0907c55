"""Issue 26, paired tests on a table (``score TABLE --paired-bs/--paired-ar``): one shared reference set
(refused with the first differing row otherwise), nothing written when the table is refused, a language
pair with one system said, identical systems said (sacrebleu's p kept)."""
from __future__ import annotations

import pandas as pd
import pytest
import sacrebleu

from conftest import run_cli

HYPS = ["the cat sat on the mat today", "a dog barks loudly at night", "rain falls on the green hills"]
REFS = ["the cat sat on a mat today", "the dog barked loudly at night", "rain fell on green hills"]
OTHER = ["completely other words here", "nothing in common at all", "yet another unrelated line"]
B_HYPS = ["a cat sat on the mat", "a dog barks at night", "rain falls on hills"]


def _rows(lp, system, hyps, refs):
    return [{"lp": lp, "system": system, "seg_id": i + 1, "hypothesis": h, "reference": r}
            for i, (h, r) in enumerate(zip(hyps, refs, strict=True))]


def _write(path, rows):
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _one_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("xleval: error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
def test_systems_with_other_references_are_refused_naming_the_row(tmp_path, test):
    # B's rows carry other references: scoring B against A's (the old behaviour) gave a wrong number
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS, OTHER))
    line = _one_line(run_cli("score", "t.tsv", test, "-o", "out.tsv", cwd=tmp_path))
    assert "row 4" in line and "'B'" in line and "reference" in line and "without a paired test" in line, line
    assert not (tmp_path / "out.tsv").exists()


def test_a_reference_differing_in_one_later_row_is_found(tmp_path):
    refs_b = [REFS[0], REFS[1], REFS[2] + "."]
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS, refs_b))
    line = _one_line(run_cli("score", "t.tsv", "--paired-bs", cwd=tmp_path))
    assert "row 6" in line and "seg_id 3" in line, line


def test_shared_references_score_each_system_as_sacrebleu(tmp_path):
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS, REFS))
    r = run_cli("score", "t.tsv", "--paired-bs", "--metrics", "bleu", "--format", "json", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    import json

    systems = {s["system"]: s["bleu"]["score"] for s in json.loads(r.stdout)["systems"]}
    for name, hyps in (("A", HYPS), ("B", B_HYPS)):
        assert systems[name] == pytest.approx(sacrebleu.corpus_bleu(hyps, [REFS]).score, abs=1e-9)


def test_a_refused_table_writes_no_output(tmp_path):
    # B misses a segment: refused by the paired test; -o OUT used to be written first
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS[:2], REFS[:2]))
    _one_line(run_cli("score", "t.tsv", "--paired-bs", "-o", "out.tsv", cwd=tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.tsv"]


def test_the_output_is_written_when_the_tests_run(tmp_path):
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS, REFS))
    r = run_cli("score", "t.tsv", "--paired-bs", "--metrics", "chrf", "-o", "out.tsv", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert out["chrf"].iloc[0] == pytest.approx(sacrebleu.sentence_chrf(HYPS[0], [REFS[0]]).score)


def test_a_pair_with_one_system_is_said(tmp_path):
    rows = _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", B_HYPS, REFS) + _rows("en-fr", "Solo", HYPS, REFS)
    _write(tmp_path / "t.tsv", rows)
    r = run_cli("score", "t.tsv", "--paired-bs", "--metrics", "bleu", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    warning = [line for line in r.stderr.splitlines() if "en-fr" in line]
    assert len(warning) == 1 and "warning" in warning[0] and "'Solo'" in warning[0] and "left out" in warning[0]


def test_identical_systems_keep_sacrebleus_p_with_a_warning(tmp_path):
    _write(tmp_path / "t.tsv", _rows("en-de", "A", HYPS, REFS) + _rows("en-de", "B", HYPS, REFS))
    r = run_cli("score", "t.tsv", "--paired-bs", "--metrics", "bleu", "--format", "json", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    import json

    b = next(s for s in json.loads(r.stdout)["systems"] if s["system"] == "B")
    assert b["bleu"]["p_value"] == pytest.approx(1 / 1001)  # no resample differs by more than 0: (0+1)/(B+1)
    assert "identical" in r.stderr and "'B'" in r.stderr and "'A'" in r.stderr, r.stderr


def test_identical_systems_warned_from_python():
    from xleval.exceptions import DataQualityWarning
    from xleval.metrics import compare_systems

    with pytest.warns(DataQualityWarning, match="identical"):
        compare_systems({"A": HYPS, "B": list(HYPS)}, REFS, ["bleu"], test="ar", n_resamples=50)
