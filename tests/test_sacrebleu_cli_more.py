"""More of a sacrebleu user's command lines, unchanged (review of `xleval score`, section 7): a later ``-m``
replaces an earlier one, ``-ci -cin 1`` (or 0, or less) prints the score without an interval, and ``-V`` /
``--version`` print the version. sacrebleu's own ``main()`` runs in this process on the same files and is
the oracle; xleval prints its own name and version where sacrebleu prints its own."""
from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest
import sacrebleu
import sacrebleu.sacrebleu as sacrebleu_cli

import xleval
from conftest import run_cli
from test_cli_sacrebleu_compat import _normalise, _sacrebleu, _xleval

REF = ["The cat sat on the mat.", "A dog barked loudly at the postman.", "Prices rose by 3 percent last year.",
       "The talks ended without an agreement.", "She said it would be finished by March."]
HYP_A = ["The cat sat on a mat.", "The dog barked at the postman.", "Prices rose 3 percent last year.",
         "Talks ended with no agreement.", "She said it will be done by March."]
HYP_B = ["A cat sat on the mat.", "A dog barked loudly.", "Prices went up by 3 percent last year.",
         "The talks ended without a deal.", "She said it would be finished in March."]


@pytest.fixture
def texts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative names: the system names printed are the same for both
    for name, lines in {"ref": REF, "a": HYP_A, "b": HYP_B}.items():
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "table.tsv").write_text("system\thypothesis\treference\n" + "".join(
        f"A\t{h}\t{r}\n" for h, r in zip(HYP_A, REF, strict=True)), encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")  # sacrebleu: no colorama wrapping of this process's stdout
    monkeypatch.delenv("SACREBLEU_FORMAT", raising=False)
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    return tmp_path


def _both(command: str, capfd) -> tuple[str, str, str]:
    """sacrebleu's standard output, then xleval's (its ``xleval:`` field removed) and its standard error."""
    args = command.split()
    code, theirs = _sacrebleu(args, capfd)
    assert code == 0, capfd.readouterr().err
    ours_code, ours, err = _xleval(args, capfd)
    assert ours_code == 0, err
    return theirs, _normalise(ours), err


@pytest.mark.parametrize("command", [
    "ref.txt -i a.txt -m bleu -m chrf -f text",
    "ref.txt -i a.txt -m bleu chrf -m ter",
    "ref.txt -i a.txt -m bleu chrf ter -m chrf bleu -f text",
    "ref.txt -i a.txt -m ter -sl -m ter",
    "ref.txt -i a.txt b.txt -m bleu --metrics chrf ter -f text",
    "ref.txt -i a.txt -m chrf --metric bleu -b",
])
def test_the_last_m_wins_on_plain_files(texts, capfd, command):
    theirs, ours, _ = _both(command, capfd)
    assert ours == theirs


def test_a_dropped_m_is_noted_and_tables_keep_every_m(texts, capfd):
    """sacrebleu drops the earlier -m without a word; xleval says so on stderr (not with -q), and a table still
    gets a column for every -m (xleval's own option, where one column per metric is the point)."""
    theirs, ours, err = _both("ref.txt -i a.txt -m bleu -m chrf -f text", capfd)
    assert ours == theirs and theirs.startswith("chrF2")
    assert "-m given 2 times: the last one counts" in err and "(chrf)" in err and err.count("\n") == 1
    assert _xleval(["ref.txt", "-i", "a.txt", "-m", "bleu", "-m", "chrf", "-f", "text", "-q"], capfd)[2] == ""
    rc, out, err = run_cli("score", "table.tsv", "-m", "bleu", "-m", "chrf", "--corpus", "-f", "json")
    assert rc == 0, err
    assert "-m given" not in err
    assert set(json.loads(out)["corpus"][0]) >= {"bleu", "chrf"}


@pytest.mark.parametrize("n", ["1", "0", "-1", "-1000"])
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_confidence_with_fewer_than_two_resamples_prints_the_plain_score(texts, capfd, n, fmt):
    theirs, ours, err = _both(f"ref.txt -i a.txt -m bleu chrf ter -ci -cin {n} -f {fmt}", capfd)
    assert ours == theirs
    assert "bs:" not in ours and "μ" not in ours  # no interval, no bootstrap field in the signature
    plain, _, _ = _both(f"ref.txt -i a.txt -m bleu chrf ter -f {fmt}", capfd)
    assert ours == plain
    assert f"--confidence-n {n}: an interval needs 2 or more resamples" in err


def test_confidence_n_one_long_spelling_score_only(texts, capfd):
    theirs, ours, _ = _both("ref.txt -i b.txt -m chrf --confidence --confidence-n 1 -b", capfd)
    assert ours == theirs


@pytest.mark.parametrize("command, says", [
    ("ref.txt -i a.txt -ci -cin 1 -sl", "-sl"),
    ("ref.txt -i a.txt b.txt -ci -cin 0", "one system"),
])
def test_confidence_refusals_do_not_depend_on_the_count(texts, capfd, command, says):
    """sacrebleu refuses -ci with -sl or several systems whatever -cin is (its exit status 1, no output);
    xleval's refusal is one line and exit status 2."""
    code, theirs = _sacrebleu(command.split(), capfd)
    assert code == 1 and theirs == ""
    ours_code, ours, err = _xleval(command.split(), capfd)
    assert ours_code == 2 and ours == ""
    assert err.startswith("xleval: error: ") and err.count("\n") == 1 and says in err, err
    assert "Traceback" not in err


def _sacrebleu_version(args: list[str], monkeypatch) -> tuple[int, str]:
    """sacrebleu's ``-V``: argparse prints ``PROG VERSION`` and exits before main() reopens stdout."""
    monkeypatch.setattr(sys, "argv", ["sacrebleu", *args])
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        sacrebleu_cli.main()
    return exc.value.code or 0, out.getvalue()


@pytest.mark.parametrize("args", [["-V"], ["score", "-V"], ["score", "--version"],
                                  ["score", "--vers"], ["ref.txt", "-i", "a.txt", "-V"],
                                  ["score", "ref.txt", "-i", "a.txt", "-m", "bleu", "--version"], ["ref.txt", "-V"]])
def test_version_is_sacrebleus_line_with_xlevals_name_and_version(texts, monkeypatch, args):
    """sacrebleu prints ``sacrebleu 2.6.0`` for -V wherever it stands; xleval prints ``xleval VERSION`` (it
    never claims to be sacrebleu) and exits 0 without scoring."""
    sacrebleu_args = [a for a in args if a != "score"] or ["-V"]
    code, theirs = _sacrebleu_version(sacrebleu_args, monkeypatch)
    assert code == 0
    expected = theirs.replace(f"sacrebleu {sacrebleu.__version__}", f"xleval {xleval.__version__}")
    assert expected == f"xleval {xleval.__version__}\n"
    rc, out, err = run_cli(*args)
    assert (rc, out, err) == (0, expected, "")
    assert "sacrebleu" not in out


@pytest.mark.parametrize("command", [
    "ref.txt -i a.txt -m bleu bleu",
    "ref.txt -i a.txt -m bleu chrf bleu -b",
    "ref.txt -i a.txt b.txt -m chrf ter chrf -f text",
])
def test_a_metric_named_twice_in_one_m_is_scored_once_on_plain_files(texts, capfd, command):
    theirs, ours, err = _both(command, capfd)
    assert ours == theirs  # was: refused, 'bleu given twice'
    assert "more than once: scored once, as in sacrebleu" in err


def test_a_metric_named_twice_for_a_table_is_still_refused(texts):
    code, _, err = run_cli("score", "table.tsv", "-m", "chrf", "chrf", "-o", "out.tsv")
    assert code == 2 and "chrf given twice" in err  # a table would get two columns of one name


def test_a_metric_named_in_two_cases_is_one_metric(texts, capfd):
    """'-m bleu BLEU chrf' is BLEU and chrF once each (before: BLEU twice), as sacrebleu scores '-m bleu chrf'."""
    code, theirs = _sacrebleu(["ref.txt", "-i", "a.txt", "-m", "bleu", "chrf", "-b"], capfd)
    assert code == 0
    ours_code, ours, err = _xleval(["ref.txt", "-i", "a.txt", "-m", "bleu", "BLEU", "chrf", "-b"], capfd)
    assert ours_code == 0 and _normalise(ours) == theirs
    assert "scored once, as in sacrebleu" in err
