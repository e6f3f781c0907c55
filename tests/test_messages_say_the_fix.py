"""One-line errors whose fix can be typed: a TSV saved with CR-only line endings is said to be one (before: its
cells were blamed as duplicate column names, where the same CSV got the line-ending message), and the `--col`
fix for a column name with a control character is a shell word that types it (before: a Python dict,
`--col {'YOUR_COLUMN': 'met\\x1bric'}`)."""
from __future__ import annotations

import shutil
import subprocess

import pandas as pd
import pytest

CR_LINE = "a carriage return (CR) without a line feed outside quotes; save the file with LF or CRLF line endings"


def _rows() -> list[list[str]]:
    return [["lp", "system", "seg_id", "metric"], *[["en-de", f"s{s}", str(i), str(0.1 * s + 0.01 * i)]
                                                    for s in range(3) for i in range(6)]]


@pytest.mark.parametrize(("suffix", "sep"), [(".tsv", "\t"), (".csv", ",")])
def test_cr_only_line_endings_are_said_alike_in_tsv_and_csv(cli, tmp_path, suffix, sep):
    path = tmp_path / f"cr{suffix}"
    path.write_bytes("\r".join(sep.join(r) for r in _rows()).encode() + b"\r")
    rc, out, err = cli("leaderboard", path, "--score", "metric", "--n-resamples", "20")
    assert rc == 2 and out == ""
    assert err.strip() == f"xleval: error: {path}: line 1: {CR_LINE}"


def test_crlf_and_lf_tsv_still_read(cli, tmp_path):
    for name, end in (("crlf.tsv", "\r\n"), ("lf.tsv", "\n")):
        path = tmp_path / name
        path.write_bytes(end.join("\t".join(r) for r in _rows()).encode() + end.encode())
        rc, _, err = cli("leaderboard", path, "--score", "metric", "--n-resamples", "20", "--format", "tsv",
                         "-o", tmp_path / f"{name}.out.tsv")
        assert rc == 0, err
        assert len(pd.read_csv(tmp_path / f"{name}.out.tsv", sep="\t")) == 3


def test_the_col_fix_for_a_name_with_a_control_character_is_a_shell_word(cli, tmp_path):
    name = "met\x1bric"
    path = tmp_path / "t.tsv"
    path.write_text("\n".join("\t".join(r) for r in _rows()) + "\n")
    rc, _, err = cli("leaderboard", path, "--score", name, "--n-resamples", "20")
    assert rc == 2
    said = " ".join(err.split())
    assert "{'YOUR_COLUMN'" not in said  # was: the library's Python mapping
    assert "rename yours with --col $'met\\x1bric=YOUR_COLUMN'" in said, said
    assert "\x1b" not in err  # the terminal gets the escape, not the control character


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash types $'...' words")
def test_the_shell_word_types_the_name_in_bash():
    from xleval._base.terminal import shell_word

    # NBSP, a soft hyphen and a C1 control are above ASCII: bash's \xHH would type one raw byte, not the character
    for word in ("met\x1bric=YOUR_COLUMN", "tab\there", "it's \\ back", "plain name", "é\u200bnd", "met\u00a0ric",
                 "soft\u00adhy", "c1\u0085x"):
        typed = subprocess.run(["bash", "-c", f"printf %s {shell_word(word)}"], capture_output=True, check=True)
        assert typed.stdout.decode() == word


def test_report_with_meta_names_a_null_system_as_the_leaderboard_does(cli, tmp_path):
    """The library names a frame it was handed "data"; the command line names the file in its place (before:
    `report --meta` said `t.parquet: data: group column ...`)."""
    frame = pd.DataFrame(_rows()[1:], columns=_rows()[0]).assign(metric=lambda d: d["metric"].astype(float))
    frame["human"] = frame["metric"] * 10
    frame.loc[0, "system"] = None
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    said = {}
    for command in (["leaderboard"], ["report", "--meta", "metric", "-o", str(tmp_path / "r.html")]):
        rc, out, err = cli(command[0], path, "--score", "metric", "--human", "human", *command[1:])
        assert rc == 2 and out == ""
        said[command[0]] = err.strip()
    assert said["report"] == said["leaderboard"] == (f"xleval: error: {path}: group column 'system' is empty at row 1 "
                                                     "(1 row(s) in all); fill it in or drop those rows")


def test_a_name_python_quoted_with_double_quotes_is_typed_back(cli):
    """repr() quotes a name holding ' with ": its escapes are read with that quote (before: the text was left
    escaped, and bash typed a backslash and 'x1b')."""
    import click

    from xleval.cli._errors import cli_words

    command = click.Command("x", params=[click.Option(["--score"])])
    for name in ("it's\x1b", "a'b\\c", "it's"):
        said = cli_words(f"no column score={name!r} in the table", command)
        word = said.split("--score ", 1)[1].rsplit(" in the table", 1)[0]
        if shutil.which("bash"):
            typed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True).stdout
            assert typed.decode() == name, (name, word)
