"""Every table readable at 80 columns (issue 34, item 8): key columns (group, method) are never cut to '…'
(`calibrate plan` showed every group as `en-…`, `calibrate evaluate` showed `anchored… spread` for K=25 and
K=50); a table too wide for the screen continues in further blocks that repeat its key columns; piped
output takes its width from COLUMNS; explanations wrap at words on a terminal, never inside a command."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli, run_cli_process
from xleval._base.terminal import make_console, wrap_points
from xleval.cli._common import fit_columns

GROUPS = {"en-de": "english-german-news", "en-fr": "english-french-news", "en-cs": "english-czech-news"}


def test_fit_columns_by_hand():
    headers = ["group", "alpha", "betas", "gamma"]
    cells = [["english-german-news", "1.00", "22.5", "333"], ["en-fr", "0.50", "1.0", "7"]]
    # natural widths 19, 5, 5, 5: the whole table is 19+5+5+5 + 4 x 3 + 1 = 47 characters
    assert fit_columns(headers, cells, [False, True, True, True], 47) == [[(0, 19), (1, 5), (2, 5), (3, 5)]]
    # at 46 the key column starts every block at its full width; the numbers follow as many as fit:
    # 46 - 1 - 22 = 23 of room, 8 per number column: two, then one
    assert fit_columns(headers, cells, [False, True, True, True], 46) == [[(0, 19), (1, 5), (2, 5)],
                                                                         [(0, 19), (3, 5)]]


def test_wrap_points_keep_commands_whole():
    command = "xleval calibrate select t.tsv --by lp --budget 100 --score chrf -o to_label.tsv"
    text = f"Trust anchored calibration here; label more rows first: {command} and fit again with them all."
    breaks = wrap_points(text, 30)
    lines = "".join("\n" if i in breaks else c for i, c in enumerate(text)).split("\n")
    assert command in lines  # on a line of its own, whole, though longer than 30
    assert all(len(line) <= 30 for line in lines if line != command)
    assert " ".join(lines) == text
    out = io.StringIO()
    console = make_console(file=out, width=30, force_terminal=True, color_system=None)
    console.print(text, soft_wrap=True)
    assert out.getvalue().rstrip("\n").split("\n") == lines
    piped = io.StringIO()
    make_console(file=piped, width=30).print(text, soft_wrap=True)  # a pipe keeps the one line
    assert piped.getvalue() == text + "\n"


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    import test_readme

    folder: Path = tmp_path_factory.mktemp("width")
    test_readme._user_files(folder)
    rc, _, err = run_cli("score", folder / "outputs.tsv", "-m", "chrf", "-o", folder / "scored.parquet")
    assert rc == 0, err
    df = pd.read_parquet(folder / "scored.parquet")
    df["lp"] = df["lp"].map(GROUPS)
    df.loc[np.random.default_rng(0).random(len(df)) > 0.2, "human"] = np.nan
    df.to_parquet(folder / "sparse.parquet")
    return folder


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def test_plan_at_80_columns_shows_every_group_whole(tables, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, err = run_cli_process("calibrate", "plan", tables / "sparse.parquet", "--score", "chrf", "--human",
                                   "human", "--budget", "300")
    assert rc == 0, err
    assert "…" not in out and max(len(line) for line in _lines(out)) <= 80
    for name in GROUPS.values():
        assert sum(f"│ {name} " in line for line in _lines(out)) >= 3  # every block of the groups table
    for column in ("residual_sd", "more_to_settle", "reachable"):  # continued, not left out or cut
        assert column in out


def test_evaluate_at_80_columns_keeps_each_method_whole(tables, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, err = run_cli_process("calibrate", "evaluate", tables / "scored.parquet", "--score", "chrf",
                                   "--human", "human", "--budget", "25,50", "--repeats", "1")
    assert rc == 0, err
    table = [line for line in _lines(out) if line.startswith(("│", "┃", "┏", "└", "┡"))]
    assert "…" not in out and max(len(line) for line in table) <= 80
    for method in ("anchored@25 spread", "anchored@50 spread", "anchored@25 random", "anchored@50 random"):
        assert any(f"│ {method} " in line for line in table), method


def test_piped_width_follows_columns(tables, monkeypatch):
    monkeypatch.setenv("COLUMNS", "130")
    rc, out, err = run_cli_process("calibrate", "plan", tables / "sparse.parquet", "--score", "chrf", "--human",
                                   "human", "--budget", "300")
    assert rc == 0, err
    widths = [len(line) for line in _lines(out) if line.startswith("│")]
    assert 80 < max(widths) <= 130
