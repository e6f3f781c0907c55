"""sacrebleu's habits (issue 34, item 10): `xleval REF -i HYP` without `score`, and `cat HYP | xleval score
REF.txt` (the reference is the file, the systems come on standard input), give sacrebleu's own output.
sacrebleu's ``main()`` runs in this process on the same files and is the oracle."""
from __future__ import annotations

import os
import sys

import pytest

from conftest import run_cli
from test_cli_sacrebleu_compat import REF, SYSTEMS, _normalise, _sacrebleu
from xleval.cli import main as xleval_main


@pytest.fixture
def texts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, lines in {"ref": REF, **SYSTEMS}.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "ref.en").write_text("\n".join(REF) + "\n", encoding="utf-8")
    (tmp_path / "abc.tsv").write_text("\n".join(f"{a}\t{b}\t{c}" for a, b, c in
                                                zip(SYSTEMS["a"], SYSTEMS["b"], SYSTEMS["c"], strict=True)) + "\n",
                                      encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("SACREBLEU_FORMAT", raising=False)
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    return tmp_path


def _ours(args: list[str], capfd, stdin: str = os.devnull) -> tuple[int, str, str]:
    capfd.readouterr()
    saved = sys.stdin
    with open(stdin, encoding="utf-8") as piped:
        sys.stdin = piped
        try:
            code = xleval_main(args)
        finally:
            sys.stdin = saved
    sys.stdout.flush()
    out = capfd.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", ["ref.txt -i a.txt", "ref.txt -i a.txt b.txt -m bleu chrf ter -f text",
                                     "ref.en -i c.txt -m chrf -b", "ref.txt -i a.txt -m bleu -sl -w 2",
                                     "ref.txt --input a.txt -m ter -f text"])
def test_reference_first_without_score(texts, capfd, command):
    args = command.split()
    code, theirs = _sacrebleu(args, capfd)
    assert code == 0
    ours_code, ours, err = _ours(args, capfd)
    assert ours_code == 0, err
    assert _normalise(ours) == theirs


@pytest.mark.parametrize("command", ["score ref.txt", "score ref.txt -m bleu chrf -f text", "ref.txt",
                                     "ref.txt -m chrf ter -f latex", "score ref.txt.gz -m bleu -f text"])
def test_systems_on_standard_input_with_a_txt_reference(texts, capfd, command):
    import gzip

    (texts / "ref.txt.gz").write_bytes(gzip.compress((texts / "ref.txt").read_bytes()))
    args = command.split()
    sacrebleu_args = [a if a != "ref.txt.gz" else "ref.txt" for a in args if a != "score"]
    code, theirs = _sacrebleu(sacrebleu_args, capfd, stdin="abc.tsv")
    assert code == 0
    ours_code, ours, err = _ours(args, capfd, stdin="abc.tsv")
    assert ours_code == 0, err
    assert _normalise(ours) == theirs


def test_a_txt_table_is_still_a_table_and_unknown_words_stay_unknown(texts):
    (texts / "table.txt").write_text("system\thypothesis\treference\nA\tThe cat sat.\tThe cat sat.\n",
                                     encoding="utf-8")
    rc, out, err = run_cli("score", "table.txt", "-m", "chrf", "--format", "json")
    assert rc == 0, err
    assert '"chrF2' in out or "chrf" in out.lower()
    rc, _, err = run_cli("nosuch.txt", "-i", "a.txt")
    assert rc == 2 and "No such command 'nosuch.txt'" in err
    rc, _, err = run_cli("table.txt")  # a table, not a reference: a forgotten command is not guessed
    assert rc == 2 and "No such command 'table.txt'" in err
