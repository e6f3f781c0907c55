"""Issue 26, leftovers: a table written to standard output follows the display rule on a terminal and
the data rule in a pipe; an output path that is not UTF-8 is written; wide (CJK) names keep the
leaderboard's text table aligned."""
from __future__ import annotations

import io
import os
import sys
import unicodedata

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.io import read_table, write_table

NAME = "evil\x1b[31m\u202e"


class _Stdout(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_a_table_on_standard_output(monkeypatch, tty):
    out = _Stdout(tty)
    monkeypatch.setattr(sys, "stdout", out)
    write_table(pd.DataFrame({"system": [NAME], "score": [1.5]}), "-")
    text = out.getvalue()
    if tty:  # read by a person: nothing the terminal would act on, the name still recognisable
        assert "\x1b" not in text and "\u202e" not in text
        assert "evil\\x1b[31m\\u202e" in text
    else:  # data for the next program: exactly the name
        assert text == f"system\tscore\n{NAME}\t1.5\n"


@pytest.mark.parametrize("stem", [b"out\xff", b"x" * 130 + b"\xfe"])
def test_an_output_path_that_is_not_utf8(tmp_path, stem):
    path = os.path.join(os.fsdecode(bytes(tmp_path)), os.fsdecode(stem + b".tsv"))
    frame = pd.DataFrame({"lp": ["en-de"], "score": [1.5]})
    write_table(frame, path, metadata={"signatures": {"score": "bleu|x"}})
    assert os.fsencode(path) in [os.path.join(bytes(tmp_path), n) for n in os.listdir(bytes(tmp_path))]
    assert read_table(path)["score"].tolist() == [1.5]
    assert not [n for n in os.listdir(bytes(tmp_path)) if n.endswith(b".tmp")]


def _width(text: str) -> int:
    """Terminal cells, computed independently: East Asian wide/fullwidth characters take two."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def test_wide_names_keep_the_text_leaderboard_aligned(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"lp": lp, "system": system, "seg_id": i, "score": float(rng.normal(50 + k, 5))}
            for lp in ("en-de", "en-zh") for k, system in enumerate(["系统甲乙丙", "B", "ＦＵＬＬ"]) for i in range(20)]
    pd.DataFrame(rows).to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    r = run_cli("leaderboard", "t.tsv", "--score", "score", "--method", "lgn", "--n-resamples", "20", "--format",
                "text", "-o", "board.txt", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    table = (tmp_path / "board.txt").read_text(encoding="utf-8").split("\n\n")[0].splitlines()
    assert len(table) == 7 and any("系统甲乙丙" in line for line in table)
    widths = {_width(line) for line in table}
    assert len(widths) == 1, [(_width(line), line) for line in table]  # every row as wide as the header
