"""An error about a row names the file the user gave, not ``input`` (the library's name for a frame it was handed):
``score`` on a table with an empty language code said ``input: column 'tgt_lang' row 3``, and ``audit`` on one
input ``input: column 'condition' row 2`` (two inputs already named their file)."""
from __future__ import annotations

import pandas as pd

from conftest import run_cli


def test_score_names_the_table(tmp_path):
    path = tmp_path / "codes.tsv"
    pd.DataFrame({"src_lang": ["de", "de", "de"], "tgt_lang": ["en", "en", ""], "hypothesis": ["a b", "c d", "e f"],
                  "reference": ["a b", "c e", "e f"]}).to_csv(path, sep="\t", index=False)
    r = run_cli("score", path, "--metric", "chrf", "-o", tmp_path / "out.tsv")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"xleval: error: {path}: column 'tgt_lang' row 3: language code ''"), r.stderr
    assert not (tmp_path / "out.tsv").exists()


def test_audit_of_one_input_names_it(tmp_path):
    path = tmp_path / "one.tsv"
    pd.DataFrame({"item_id": [1, 1, 2, 2], "model": "m", "condition": ["source", "orig", "source", "translated"],
                  "correct": [1, 0, 1, 1]}).to_csv(path, sep="\t", index=False)
    r = run_cli("audit", path)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"xleval: error: {path}: column 'condition' row 2: 'orig' is not a condition"), r.stderr
