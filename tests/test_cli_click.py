"""The command line runs on plain click: conventional help text, real flags, one copy of click, a lazy root."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import click
import pytest

from xleval.cli import _GROUPS, _load, main

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


def test_score_help_is_conventional(capsys):
    assert main(["score", "--help"]) == 0
    out = capsys.readouterr().out
    for noise in _TYPER_NOISE:
        assert noise not in out
    assert "Usage: xleval score [OPTIONS] [INPUT]" in out
    assert re.search(r"^\s+-lc, --lowercase\s+Case-insensitive", out, re.M)  # a flag: no value placeholder
    assert re.search(r"^\s+--format \[text\|json\]", out, re.M)
    assert "[default: bleu,chrf]" in " ".join(out.split())


@pytest.mark.parametrize("argv, command", _LEAVES, ids=[" ".join(a) for a, _ in _LEAVES])
def test_every_help_exits_0_and_lists_each_option_once(capsys, argv, command):
    assert main([*argv, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Usage: xleval {' '.join(argv)} ")
    for noise in _TYPER_NOISE:
        assert noise not in out
    listed = re.findall(r"^  (-[\w-]+(?:, -[\w-]+)*)", out, re.M)
    names = [opt for entry in listed for opt in entry.split(", ")]
    assert len(names) == len(set(names)), names
    expected = {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts} | {"--help"}
    assert set(names) == expected


@pytest.mark.parametrize("group", [name for name, _, _ in _GROUPS])
def test_bare_group_or_command_never_tracebacks(capsys, group):
    rc = main([group, "--nonsense-option"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("xleval: error: ") and len(err.strip().splitlines()) == 1
    assert "see 'xleval " in err and "--help'" in err


def test_lowercase_is_a_flag_not_an_option_taking_true(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # with a real flag `true` is the INPUT argument, and a missing INPUT says so (not "unknown format")
    assert main(["score", "--lowercase", "true"]) == 2
    err = capsys.readouterr().err
    assert err == "xleval: error: true: no such file; check the path\n"
    # and a flag given a value with = is a usage error, not a silently accepted string
    assert main(["score", "--lowercase=true", "x.tsv"]) == 2
    err = capsys.readouterr().err
    assert err == "xleval: error: xleval score: Option '--lowercase' does not take a value; see 'xleval score --help'\n"
    assert main(["calibrate", "apply", "m.json", "x.tsv", "-o", "o.tsv", "--force=yes"]) == 2
    assert "xleval calibrate apply: Option '--force' does not take a value" in capsys.readouterr().err


def test_lc_short_flag_lowercases_like_sacrebleu(tmp_path, capsys):
    import sacrebleu

    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("The Cat sat on the Mat\nA dog\n", encoding="utf-8")
    ref.write_text("the cat sat on the mat\na dog\n", encoding="utf-8")
    hyps, refs = hyp.read_text().splitlines(), ref.read_text().splitlines()
    results = {}
    for flag in ([], ["-lc"], ["--lowercase"]):
        assert main(["score", "-i", str(hyp), "-r", str(ref), "-l", "en-de", "-m", "bleu", "--format", "json", *flag]) == 0
        payload = json.loads(capsys.readouterr().out)
        results[" ".join(flag)] = payload["corpus"][0]["bleu"]
    assert results["-lc"] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs], lowercase=True).score)
    assert results["--lowercase"] == results["-lc"]
    assert results[""] == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)
    assert results[""] < results["-lc"]


def _modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


def test_cli_imports_no_typer_and_help_imports_no_command_module():
    assert not {m for m in _modules_after("import xleval.cli") if m.split(".")[0] == "typer"}
    loaded = _modules_after("import xleval.cli\ntry:\n    xleval.cli.main(['--help'])\nexcept SystemExit:\n    pass")
    commands = {target.split(":")[0] for _, target, _ in _GROUPS}
    assert not loaded & commands
    assert "typer" not in loaded and "xleval.cli._common" not in loaded
