"""A sacrebleu user's command lines, unchanged, through `sacrebleu` and through `xleval score`: the
same standard output apart from the signature's `xleval:` field (issue 25, item 1). sacrebleu's own
``main()`` runs in this process on the same files: it is the oracle for layout and numbers."""
from __future__ import annotations

import gc
import logging
import os
import re
import sys
import tempfile
import warnings

import pytest
import sacrebleu.sacrebleu as sacrebleu_cli

from xleval.cli import main as xleval_main

REF = [
    "The committee approved the new budget on Tuesday.",
    "Heavy rain is expected across the north this weekend.",
    "She said the project would be finished by March.",
    "The museum reopened after two years of renovation.",
    "Prices rose by 3 percent in the last quarter.",
    "Local farmers are worried about the dry summer.",
    "The team won its third match in a row.",
    "Officials did not comment on the report.",
    "A new bridge will connect the two villages.",
    "The minister resigned late on Friday evening.",
    "Most schools will stay closed until Monday.",
    "The company plans to hire 200 new workers.",
    "Police are still looking for witnesses.",
    "The festival attracts thousands of visitors every year.",
    "He has written more than twenty books.",
    "The talks ended without an agreement.",
    "Train services were disrupted for several hours.",
    "The hospital opened a new children's ward.",
    "Experts say the decline will continue.",
    "The city council voted against the proposal.",
]
REF2 = [s.replace("The ", "A ", 1).replace(" new ", " fresh ") for s in REF]
SYSTEMS = {
    "a": [s.replace("approved", "accepted").replace("worried", "concerned").replace(".", " .") if i % 3 == 0 else
          s.replace("the ", "a ", 1) for i, s in enumerate(REF)],
    "b": [s.replace("new", "recent").replace("expected", "forecast") if i % 2 else s.lower()
          for i, s in enumerate(REF)],
    "c": [" ".join(s.split()[:-2]) + "." if i % 4 == 0 else s.replace("will", "would") for i, s in enumerate(REF)],
}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names: the system names printed are the same for both
    for name, lines in {"ref": REF, "ref2": REF2, **SYSTEMS}.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "refs.tsv").write_text("\n".join(f"{a}\t{b}" for a, b in zip(REF, REF2, strict=True)) + "\n",
                                       encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")  # sacrebleu: no colorama wrapping of this process's stdout
    monkeypatch.delenv("SACREBLEU_FORMAT", raising=False)
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    return tmp_path


class _Fd:
    """A stand-in for sys.stdin/sys.stdout that sacrebleu's main() reopens by its file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd

    def flush(self) -> None:
        pass


def _sacrebleu(args: list[str], capfd, stdin: str = os.devnull) -> tuple[int, str]:
    """sacrebleu's main() in this process. It reopens standard input and output by descriptor and
    leaves its input files open, so it gets descriptors of its own (closed afterwards), its leaked
    files are collected with ResourceWarning off, and the logging handler it adds is removed."""
    saved = sys.argv, sys.stdin, sys.stdout
    handlers = list(logging.getLogger().handlers)
    out_fd, out_path = tempfile.mkstemp()
    in_fd = os.open(stdin, os.O_RDONLY)
    code = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        sys.argv, sys.stdin, sys.stdout = ["sacrebleu", *args], _Fd(in_fd), _Fd(out_fd)
        try:
            sacrebleu_cli.main()
        except SystemExit as exc:
            code = exc.code or 0
        finally:
            for stream, fd in ((sys.stdout, out_fd), (sys.stdin, in_fd)):
                if isinstance(stream, _Fd):
                    os.close(fd)
                else:
                    stream.close()  # sacrebleu's own file object on our descriptor
            sys.argv, sys.stdin, sys.stdout = saved
            logging.getLogger().handlers[:] = handlers
            gc.collect()
    with open(out_path, encoding="utf-8") as fh:
        out = fh.read()
    os.unlink(out_path)
    return code, out


def _xleval(args: list[str], capfd, stdin: str = os.devnull) -> tuple[int, str, str]:
    capfd.readouterr()
    saved = sys.stdin
    with open(stdin, encoding="utf-8") as piped:
        sys.stdin = piped
        try:
            code = xleval_main(["score", *args])
        finally:
            sys.stdin = saved
    sys.stdout.flush()
    out = capfd.readouterr()
    return code, out.out, out.err


def _normalise(text: str) -> str:
    """Only the `xleval:` field of the signatures (and its JSON key) goes."""
    text = re.sub(r',\n\s*"xleval": "[^"]*"', "", text)
    return re.sub(r"\|xleval:[^|\s\"]+", "", text)


COMMANDS = [
    # the table
    "ref.txt -i a.txt -m bleu -sl -b",
    "ref.txt -i a.txt -m bleu -s floor -b",
    "ref.txt -i a.txt b.txt -m bleu -f latex",
    "ref.txt -i a.txt -m bleu -f text",
    "ref.txt -i a.txt -m bleu --confidence -b",
    "ref.txt -i a.txt -m bleu chrf -b",
    "ref.txt -i a.txt -m bleu -nr 1 -j 2 -sh -q -f text",
    "ref.txt -i a.txt -m bleu --short -f text",
    # what already worked, now byte for byte
    "ref.txt -i a.txt -m bleu -b",
    "ref.txt -i a.txt -lc -b -w 2",
    "ref.txt -i a.txt -m chrf --chrf-word-order 2",
    "ref.txt -i a.txt -m ter",
    "ref.txt -i a.txt",
    # single system, every format
    "ref.txt -i a.txt -m bleu chrf ter",
    "ref.txt -i a.txt -m ter chrf bleu -f text",
    "ref.txt -i a.txt -m bleu chrf ter -f latex",
    "ref.txt -i a.txt -m bleu chrf ter -b -w 3",
    "ref.txt -i a.txt -m bleu chrf ter -f text -sh",
    "ref.txt -i a.txt -m bleu -s add-k -sv 2 -f text",
    "ref.txt -i a.txt -m bleu -s none -w 4",
    "ref.txt -i a.txt -m bleu -tok intl -lc -f text",
    "ref.txt -i a.txt -m bleu -tok char -b -w 2",
    "ref.txt -i a.txt -m bleu -l de-zh -f text",
    "ref.txt -i a.txt -m chrf -cc 4 -cw 1 --chrf-beta 1 --chrf-whitespace -f text",
    "ref.txt -i a.txt -m chrf --chrf-lowercase --chrf-eps-smoothing",
    "ref.txt -i a.txt -m ter --ter-case-sensitive --ter-no-punct --ter-normalized -f text",
    # long options shortened to a prefix that names one option, as argparse reads them
    "ref.txt -i a.txt -m bleu --tok char --lower -f text",
    "ref.txt -i a.txt -m chrf --chrf-word 2 --chrf-b 1 -f text",
    "ref.txt -i a.txt -m bleu --smooth-m add-k --smooth-v 2 --form text",
    "ref.txt ref2.txt -i a.txt -m bleu chrf ter -f text",
    "refs.tsv -i a.txt -nr 2 -m bleu chrf ter -f text",
    # sentence level
    "ref.txt -i a.txt -sl",
    "ref.txt -i a.txt -m chrf -sl -w 3 -sh",
    "ref.txt -i a.txt -m ter -sl -b",
    "ref.txt ref2.txt -i b.txt -m bleu -sl -lc",
    # confidence intervals
    "ref.txt -i a.txt -m bleu chrf ter --confidence -cin 50 -f text",
    "ref.txt -i b.txt -m bleu chrf --confidence-n 50 --confidence",
    "ref.txt -i c.txt -m chrf --confidence -cin 50 -b -w 3",
    # several systems
    "ref.txt -i a.txt b.txt c.txt -m bleu chrf ter",
    "ref.txt -i a.txt b.txt c.txt -m bleu chrf ter -f text",
    "ref.txt -i a.txt b.txt c.txt -m bleu chrf ter -f latex -w 2",
    "ref.txt -i a.txt b.txt -m bleu -b",
    "ref.txt ref2.txt -i a.txt b.txt c.txt -m bleu chrf -f text -sh",
    # paired tests (few resamples: seconds)
    "ref.txt -i a.txt b.txt c.txt -m bleu chrf ter --paired-bs --paired-bs-n 50 -f text",
    "ref.txt -i a.txt b.txt c.txt -m bleu chrf --paired-bs -pbsn 50 -f latex",
    "ref.txt -i a.txt b.txt c.txt -m bleu ter --paired-ar --paired-ar-n 50 -f text",
    "ref.txt -i a.txt b.txt -m chrf -par -parn 50 -f latex -w 2",
    "ref.txt -i a.txt b.txt a.txt -m bleu -pbs -pbsn 50 -f text",
    "ref.txt -i a.txt b.txt -m bleu -pbs -pbsn 50 -j 2 -f text",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_same_output_as_sacrebleu(files, capfd, command):
    args = command.split()
    code, theirs = _sacrebleu(args, capfd)
    assert code == 0, capfd.readouterr().err
    ours_code, ours, err = _xleval(args, capfd)
    assert ours_code == 0, err
    assert _normalise(ours) == theirs


@pytest.mark.parametrize("command", ["ref.en", "ref.en -m bleu chrf ter -f text", "ref.en ref2.en -m chrf -sl",
                                     "ref.en -m bleu chrf -f latex", "ref.en -pbs -pbsn 50 -f text",
                                     "ref.en -m ter -par -parn 50 -f latex"])
def test_systems_on_standard_input_as_in_sacrebleu(files, capfd, command):
    # sacrebleu REF < HYP: the systems are the tab-separated columns of standard input; a reference
    # that is no table (.en) tells xleval the same
    for name in ("ref", "ref2"):
        (files / f"{name}.en").write_bytes((files / f"{name}.txt").read_bytes())
    one = "-sl" in command
    (files / "in.tsv").write_text("\n".join(a if one else f"{a}\t{b}\t{c}" for a, b, c in
                                           zip(SYSTEMS["a"], SYSTEMS["b"], SYSTEMS["c"], strict=True)) + "\n",
                                  encoding="utf-8")
    args = command.split()
    code, theirs = _sacrebleu(args, capfd, stdin="in.tsv")
    assert code == 0, capfd.readouterr().err
    ours_code, ours, err = _xleval(args, capfd, stdin="in.tsv")
    assert ours_code == 0, err
    assert _normalise(ours) == theirs


@pytest.mark.parametrize("fmt", ["text", "latex", "json"])
def test_sacrebleu_format_variable_wins_as_in_sacrebleu(files, capfd, monkeypatch, fmt):
    monkeypatch.setenv("SACREBLEU_FORMAT", fmt)
    for command in ("ref.txt -i a.txt -m bleu chrf", "ref.txt -i a.txt b.txt -m bleu -f json"):
        args = command.split()
        code, theirs = _sacrebleu(args, capfd)
        assert code == 0
        assert _normalise(_xleval(args, capfd)[1]) == theirs


def test_sacrebleu_seed_variable_as_in_sacrebleu(files, capfd, monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    for command in ("ref.txt -i a.txt b.txt -m bleu chrf -pbs -pbsn 50 -f text", "ref.txt -i a.txt -ci -cin 50"):
        args = command.split()
        code, theirs = _sacrebleu(args, capfd)
        assert code == 0 and "seed:7" in theirs
        assert _normalise(_xleval(args, capfd)[1]) == theirs


def test_paired_json_is_valid_with_sacrebleus_keys(files, capfd):
    import json

    # sacrebleu's own -f json crashes here (a float32 in json.dumps); xleval prints what it meant to print
    paired = ["ref.txt", "-i", "a.txt", "b.txt", "-m", "bleu", "chrf", "--paired-bs", "-pbsn", "50"]
    code, out, err = _xleval(paired, capfd)
    assert code == 0, err
    rows = json.loads(out)
    assert [r["system"] for r in rows] == ["Baseline: a.txt", "b.txt"]
    assert rows[0]["BLEU"]["p_value"] is None and 0 < rows[1]["chrF2"]["p_value"] <= 1
    text = _sacrebleu([*paired, "-f", "text", "-w", "4"], capfd)[1]
    assert f"{rows[1]['BLEU']['score']:.4f} ({rows[1]['BLEU']['mean']:.4f} ± {rows[1]['BLEU']['ci']:.4f})" in text


@pytest.mark.parametrize("command, words", [
    ("ref.txt -i a.txt -m bleu chrf -sl", "one metric"),
    ("ref.txt -i a.txt b.txt -m bleu -sl", "one system"),
    ("ref.txt -i a.txt -m bleu -sl --confidence", "unavailable with -sl"),
    ("ref.txt -i a.txt b.txt -m bleu --confidence", "paired test"),
    ("ref.txt -i a.txt -m bleu --paired-bs", "two or more systems"),
    ("ref.txt ref2.txt -i a.txt -nr 2", "ONE file"),
    ("ref.txt -i a.txt -nr 2", "expected 2 tab-separated"),
    ("ref.txt -i a.txt a.txt", "given twice"),
])
def test_sacrebleus_refusals_are_one_line(files, capfd, command, words):
    args = command.split()
    assert _sacrebleu(args, capfd)[0] not in (0, None)  # sacrebleu refuses these too
    code, _, err = _xleval(args, capfd)
    assert code == 2 and words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("command", ["-t wmt14 -l en-de -i a.txt", "-t wmt21 -l de-en --echo src ref",
                                     "--list", "--download wmt14", "-t wmt20 --citation", "ref.txt -i a.txt -d"])
def test_test_set_options_say_give_files(files, capfd, command):
    code, _, err = _xleval(command.split(), capfd)
    assert code == 2 and "offline" in err and "give the files" in err and len(err.strip().splitlines()) == 1, err


def test_plain_only_flags_on_a_table_are_refused(files, capfd):
    (files / "t.tsv").write_text("hypothesis\treference\nthe cat\tthe cat sat\n", encoding="utf-8")
    for flag in (["-sl"], ["-f", "latex"], ["--short"], ["-nr", "2"]):
        code, _, err = _xleval(["t.tsv", "-m", "bleu", *flag], capfd)
        assert code == 2 and "plain files" in err, err
