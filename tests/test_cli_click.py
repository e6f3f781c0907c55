"""The command line runs on plain click: conventional help text, real flags, one copy of click, a lazy root."""
from __future__ import annotations

import json
import re

import click
import pytest

from import_check import modules_after
from xleval.cli import _GROUPS, _load

# what `xleval score --help` and `calibrate fit|apply --help` printed with typer 0.29 (its vendored click
# and rich panels), and the default click would show for a False flag if show_default were misapplied
_TYPER_NOISE = ("<bool>", "<str>", "<int>", "<float>", "<path>", "<list[str]>", "<text|json>", "{input}",
                "{MODEL.json}", "╭─", "[default: False]")


def _commands() -> list[tuple[list[str], click.Command]]:
    """Every leaf command as (argv prefix, command)."""
    found = []
    for name, target, help_text in _GROUPS:
        command = _load(name, target, help_text)
        if isinstance(command, click.Group):
            found += [([name, sub], command.commands[sub]) for sub in command.commands]
        else:
            found.append(([name], command))
    return found


_LEAVES = _commands()


def test_score_help_is_conventional(cli):
    rc, out, _ = cli("score", "--help")
    assert rc == 0
    for noise in _TYPER_NOISE:
        assert noise not in out
    assert "Usage: xleval score [OPTIONS] [INPUT | REF...]" in out
    assert re.search(r"^\s+-lc, --lowercase\s+Case-insensitive", out, re.M)  # a flag: no value placeholder
    assert re.search(r"^\s+-f, --format \[text\|json\|latex\]", out, re.M)  # sacrebleu's three formats
    assert re.search(r"^\s+-s, --smooth-method", out, re.M)  # -s is sacrebleu's, no longer --src
    assert "default bleu,chrf" in " ".join(out.split())


@pytest.mark.parametrize("argv, command", _LEAVES, ids=[" ".join(a) for a, _ in _LEAVES])
def test_every_help_exits_0_and_lists_each_option_once(cli, argv, command):
    rc, out, _ = cli(*argv, "--help")
    assert rc == 0
    assert out.startswith(f"Usage: xleval {' '.join(argv)} ")
    for noise in _TYPER_NOISE:
        assert noise not in out
    listed = re.findall(r"^  (-[\w-]+(?:, -[\w-]+)*)", out, re.M)
    names = [opt for entry in listed for opt in entry.split(", ")]
    assert len(names) == len(set(names)), names
    expected = {opt for p in command.params if isinstance(p,
                                                          click.Option) and not p.hidden for opt in p.opts} | {"--help"}
    assert set(names) == expected


@pytest.mark.parametrize("group", [name for name, _, _ in _GROUPS])
def test_bare_group_or_command_never_tracebacks(cli, group):
    rc, _, err = cli(group, "--nonsense-option")
    assert rc == 2
    assert err.startswith("xleval: error: ") and len(err.strip().splitlines()) == 1
    assert "see 'xleval " in err and "--help'" in err


def test_lowercase_is_a_flag_not_an_option_taking_true(tmp_path, cli):
    # with a real flag `true` is the INPUT argument, and a missing INPUT says so (not "unknown format")
    rc, _, err = cli("score", "--lowercase", "true", cwd=tmp_path)
    assert rc == 2
    assert err == "xleval: error: true: no such file; check the path\n"
    # and a flag given a value with = is a usage error, not a silently accepted string
    rc, _, err = cli("score", "--lowercase=true", "x.tsv", cwd=tmp_path)
    assert rc == 2
    assert err == "xleval: error: xleval score: Option '--lowercase' does not take a value; see 'xleval score --help'\n"
    rc, _, err = cli("calibrate", "apply", "m.json", "x.tsv", "-o", "o.tsv", "--force=yes", cwd=tmp_path)
    assert rc == 2 and "xleval calibrate apply: Option '--force' does not take a value" in err


def test_lc_short_flag_lowercases_like_sacrebleu(tmp_path, cli):
    import sacrebleu

    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("The Cat sat on the Mat\nA dog\n", encoding="utf-8")
    ref.write_text("the cat sat on the mat\na dog\n", encoding="utf-8")
    hyps, refs = hyp.read_text().splitlines(), ref.read_text().splitlines()
    results = {}
    for flag in ([], ["-lc"], ["--lowercase"]):
        rc, out, err = cli("score", "-i", hyp, "-r", ref, "-l", "en-de", "-m", "bleu", "--format", "json", "-w", "6",
                           *flag)
        assert rc == 0, err
        payload = json.loads(out)  # sacrebleu's JSON on plain files
        results[" ".join(flag)] = payload["score"]
    assert results["-lc"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs], lowercase=True).score, abs=1e-6)
    assert results["--lowercase"] == results["-lc"]
    assert results[""] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-6)
    assert results[""] < results["-lc"]


def test_cli_imports_no_typer_and_help_imports_no_command_module():
    assert not {m for m in modules_after("import xleval.cli") if m.split(".")[0] == "typer"}
    loaded = modules_after("import xleval.cli\ntry:\n    xleval.cli.main(['--help'])\nexcept SystemExit:\n    pass")
    commands = {target.split(":")[0] for _, target, _ in _GROUPS}
    assert not loaded & commands
    assert "typer" not in loaded and "xleval.cli._common" not in loaded
