"""The README's examples run as written: every ```bash and ```python block, in order, in one folder
that holds a generated stand-in for the user's own table (``outputs.tsv``).

Lines of a bash block that start with ``make`` are skipped (set-up); ``xleval ...`` lines run through
the CLI entry point in process, any other line through bash. Python blocks run in one namespace per
block. Blocks fenced as ```sh or ```text are documentation only. A block that needs another input
file: add the file to :func:`_user_files`.
"""
from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import REPO, run_cli

FENCE = re.compile(r"^```(bash|python)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def readme_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, code, first line number) of every ```bash / ```python block."""
    return [(m.group(1), m.group(2), text[:m.start()].count("\n") + 2) for m in FENCE.finditer(text)]


def bash_commands(code: str) -> list[str]:
    """The commands of a bash block: comments and blank lines dropped, continuation lines joined,
    ``make`` lines skipped."""
    joined = re.sub(r"\\\n", " ", code)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] != "make":
            out.append(line)
    return out


def _user_files(folder: Path) -> None:
    """What the README assumes the user has: a table of system outputs (three target languages, five
    systems of different quality, as many as the system folds of `calibrate evaluate` and `meta
    --calibrations`; 40 segments each) with human scores that follow the edits."""
    rng = np.random.default_rng(0)
    vocab = {"de": "der die das Haus Katze sitzt auf dem Tisch heute Wetter gut nicht sehr".split(),  # noqa: SIM905
             "fr": "le la les maison chat est sur table aujourd'hui temps bon pas très".split(),  # noqa: SIM905
             "cs": "dům kočka sedí na stole dnes počasí dobré není velmi ten ta to".split()}  # noqa: SIM905
    rows = []
    for tgt, words in vocab.items():
        for system, quality in (("sysA", 0.9), ("sysB", 0.8), ("sysC", 0.7), ("sysD", 0.6), ("sysE", 0.5)):
            for seg in range(1, 41):
                ref = list(rng.choice(words, size=int(rng.integers(5, 12))))
                hyp = [w if rng.random() < quality else str(rng.choice(words)) for w in ref]
                rows.append({"lp": f"en-{tgt}", "system": system, "seg_id": seg, "source": f"source sentence {seg}",
                             "hypothesis": " ".join(hyp), "reference": " ".join(ref),
                             "human": 100 * float(np.mean([h == r for h, r in zip(hyp, ref, strict=True)]))
                             + float(rng.normal(0, 5))})
    pd.DataFrame(rows).to_csv(folder / "outputs.tsv", sep="\t", index=False)


def _outputs(words: list[str]) -> list[str]:
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--output")]


def test_readme_has_runnable_blocks():
    blocks = readme_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    kinds = {kind for kind, _, _ in blocks}
    assert kinds == {"bash", "python"}
    assert any(cmd.startswith("xleval ") for kind, code, _ in blocks if kind == "bash" for cmd in bash_commands(code))


def test_readme_blocks_run_as_written(tmp_path, monkeypatch):
    _user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    for kind, code, line in readme_blocks((REPO / "README.md").read_text(encoding="utf-8")):
        where = f"README.md block at line {line}"
        if kind == "python":
            exec(compile(code, where, "exec"), {"__name__": "__readme__"})
            continue
        for command in bash_commands(code):
            words = shlex.split(command, comments=True)
            if Path(words[0]).name == "xleval":
                rc, _, err = run_cli(*words[1:])
                assert rc == 0, f"{where}: `{command}` exited {rc}: {err}"
            else:
                proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300,
                                      check=False)
                assert proc.returncode == 0, f"{where}: `{command}` exited {proc.returncode}: {proc.stderr}"
            for output in _outputs(words):
                assert (tmp_path / output).exists(), f"{where}: `{command}` did not write {output}"


@pytest.mark.parametrize("code, expected", [
    ("make demo   # set up\nxleval --version  # x\n\n# only a comment\n", ["xleval --version  # x"]),
    ("xleval score a.tsv \\\n  -o b.parquet\n", ["xleval score a.tsv    -o b.parquet"]),
])
def test_bash_commands_skip_make_and_comments(code, expected):
    assert bash_commands(code) == expected


def test_inline_commands_with_table_and_column_run(tmp_path, monkeypatch):
    """The README's inline `xleval ... TABLE ...` commands run as printed once TABLE and COL name the
    user's table and human column (the "No labels yet?" command lacked its -o, and exited 2)."""
    _user_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    table = pd.read_csv("outputs.tsv", sep="\t")  # six systems: `calibrate evaluate` holds systems out in 5 folds
    pd.concat([table, table.assign(system=table["system"] + "-v2")]).to_csv("outputs.tsv", sep="\t", index=False)
    assert run_cli("score", "outputs.tsv", "--metric", "chrf", "-o", "scored.parquet").exit_code == 0
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    commands = [c for c in re.findall(r"`(xleval [^`]*)`", text) if " TABLE " in c]
    assert len(commands) >= 2
    for command in commands:
        words = shlex.split(command.replace("TABLE", "scored.parquet").replace("COL", "human"))
        rc, _, err = run_cli(*words[1:])
        assert rc == 0, f"`{command}` exited {rc}: {err}"
        for output in _outputs(words):
            assert (tmp_path / output).exists(), f"`{command}` did not write {output}"
