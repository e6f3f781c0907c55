"""Hostile inputs, round 4: inputs of our own invention against the commands new in this round (the label
plan, the sacrebleu flags, the human-rating readers, meta-evaluation, output checks).

Each case must end in one of two ways (issue "Hardening, round 3"): exit 0 with the right result (checked
against an oracle where one exists: sacrebleu itself for its flags, a hand computation otherwise), or exit 2
with one clear line, no traceback, no output file and the inputs unchanged. The list is the catalogue's
section "Hostile inputs, round 4" in docs/errors.md; ``python tests/test_hostile_round4.py`` rewrites it.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
MARKER = "<!-- hostile inputs, round 4 -->"


@dataclass(frozen=True)
class Hostile:
    id: str
    command: str          # the command under attack, as the catalogue groups them
    attack: str           # what the hostile input is
    args: tuple[str, ...]
    expect: str           # "refused" (exit 2, one line holding `says`) or "ok" (exit 0, `check` passes)
    says: str = ""        # a fragment of the one line (refused) or of stdout+stderr (ok)
    check: Callable[[Path, str, str], None] | None = None  # (workdir, stdout, stderr) for an accepted input
    output: str | None = None  # the output path: absent after a refusal


def _h(id, command, attack, args, expect, says="", check=None, output=None):
    return Hostile(id, command, attack, tuple(args.split()) if isinstance(args, str) else tuple(args), expect, says,
                   check, output)


# --- oracles ------------------------------------------------------------------------------------------------

def _sacrebleu(*args: str, cwd: Path) -> str:
    """sacrebleu's own command line on the same files: the oracle of every accepted sacrebleu flag."""
    proc = subprocess.run([sys.executable, "-m", "sacrebleu", *args], capture_output=True, text=True, cwd=cwd,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def same_as_sacrebleu(command: str) -> Callable[[Path, str, str], None]:
    """xleval's -b output equals sacrebleu's for the same command line."""
    def check(root: Path, out: str, err: str) -> None:
        assert out.split() == _sacrebleu(*command.split(), cwd=root).split()
    return check


def same_json_as_sacrebleu(command: str) -> Callable[[Path, str, str], None]:
    """xleval's JSON equals sacrebleu's for the same command line, but for xleval's own version field."""
    def check(root: Path, out: str, err: str) -> None:
        ours = json.loads(out)
        ours.pop("xleval")
        ours["signature"] = ours["signature"].rsplit("|xleval:", 1)[0]
        assert ours == json.loads(_sacrebleu(*command.split(), cwd=root))
    return check


def rows_written(path: str, n: int | None = None, columns: tuple[str, ...] = ()) -> Callable[[Path, str, str], None]:
    def check(root: Path, out: str, err: str) -> None:
        df = pd.read_csv(root / path, sep="\t") if path.endswith(".tsv") else pd.read_parquet(root / path)
        if n is not None:
            assert len(df) == n, (len(df), n)
        for c in columns:
            assert c in df.columns, (c, list(df.columns))
    return check


def mqm_values(path: str, expected: list[float]) -> Callable[[Path, str, str], None]:
    def check(root: Path, out: str, err: str) -> None:
        df = pd.read_csv(root / path, sep="\t")
        np.testing.assert_allclose(df["mqm"].to_numpy(dtype=float), expected)
    return check


def text_shows(*fragments: str) -> Callable[[Path, str, str], None]:
    def check(root: Path, out: str, err: str) -> None:
        for f in fragments:
            assert f in out + err, f
    return check


def no_raw_controls(root: Path, out: str, err: str) -> None:
    """Names from the data reach the terminal with their control and bidi characters escaped."""
    for ch in ("\u202e", "\x1b", "\U000e0041"):
        assert ch not in out + err, repr(ch)


def _flag_share(path: Path, flag: str, share: float) -> None:
    rows = pd.read_csv(path, sep="\t")
    assert rows[flag].astype(bool).mean() == share, rows[flag].value_counts()


def _copy_rates(out: str) -> None:
    """Oracle: the table was built with 8 of B's 40 outputs equal to the source, none of A's."""
    rates = {(r["system"], r["flag"]): r for r in json.loads(out)["rates"]}
    assert (rates[("B", "copy_source")]["count"], rates[("B", "copy_source")]["n"]) == (8, 40)
    assert rates[("A", "copy_source")]["count"] == 0
    assert rates[("A", "identical_reference")]["count"] == 40


def _tab_escaped(out: str) -> None:
    lines = out.splitlines()
    assert all(len(line.split("\t")) == len(lines[0].split("\t")) for line in lines), "a row split by the tab"
    assert "tab\\x09here" in out


def _meta_groups(out: str, n: int) -> None:
    assert len(json.loads(out)["groups"]) == n


def _meta_scales(out: str, scales: dict[str, str]) -> None:
    assert {g: v["scale"] for g, v in json.loads(out)["groups"].items()} == scales


def _meta_value(out: str, statistic: str, value: float) -> None:
    cells = [c for c in json.loads(out)["cells"] if c["statistic"] == statistic]
    assert cells and all(c["value"] == pytest.approx(value) for c in cells), cells


def _latex_escaped(out: str) -> None:
    assert r"a\&b\_\%\{c\}" in out
    assert "\u202e" not in out and "\t" not in out


# --- the cases ----------------------------------------------------------------------------------------------
PLAN = "calibrate plan"
P = f"{PLAN} labels.tsv --score metric --human human"
SEL = "calibrate select labels.tsv --score metric"
SB = "score ref.txt -i hyp.txt"
CASES: list[Hostile] = [
    # calibrate plan
    _h("H4-001", PLAN, "budget below the labels already collected", f"{P} --budget 10", "refused",
       "is not more than the labels already collected"),
    _h("H4-002", PLAN, "budget of a billion labels", f"{P} --budget 1000000000", "refused", "give at most"),
    _h("H4-003", PLAN, "budget 0", f"{P} --budget 0", "refused", "'--budget'"),
    _h("H4-004", PLAN, "budget -5", f"{P} --budget -5", "refused", "'--budget'"),
    _h("H4-005", PLAN, "budget 1e3 (not an integer)", f"{P} --budget 1e3", "refused", "'--budget'"),
    _h("H4-006", PLAN, "human column of text", f"{PLAN} text_human.tsv --score metric --human human --budget 150",
       "refused", "is not a number"),
    _h("H4-007", PLAN, "an infinite label", f"{PLAN} inf_human.tsv --score metric --human human --budget 150",
       "refused", "is infinite"),
    _h("H4-008", PLAN, "score and human the same column", f"{PLAN} labels.tsv --score metric --human metric "
       "--budget 150", "refused", "the human column and the score column are the same"),
    _h("H4-009", PLAN, "label column named as the score column", f"{P} --budget 150 --label-column metric "
       "-o out/H4-009.tsv", "refused", "is the score column", output="out/H4-009.tsv"),
    _h("H4-010", PLAN, "empty label column name", [*f"{P} --budget 150 -o out/H4-010.tsv".split(), "--label-column",
                                                   ""], "refused", "label column '' is empty", output="out/H4-010.tsv"),
    _h("H4-011", PLAN, "label column named 'row'", f"{P} --budget 150 --label-column row -o out/H4-011.tsv",
       "refused", "is a column of the rows to annotate", output="out/H4-011.tsv"),
    _h("H4-012", PLAN, "constant score column with labels", f"{PLAN} const_score.tsv --score metric --human human "
       "--budget 150", "ok", "the anchored map cannot be fitted on the 84 labels there are: score column 'metric' "
       "is constant"),
    _h("H4-013", PLAN, "a table of one group", f"{PLAN} one_group.tsv --score metric --human human --budget 60",
       "ok", "one group: there is no ranking across groups to settle"),
    _h("H4-014", PLAN, "every label missing", f"{PLAN} no_labels.tsv --score metric --human human --budget 100",
       "ok", "no labels to estimate the residual sd from"),
    _h("H4-015", PLAN, "a group of one row and one system", f"{PLAN} tiny_group.tsv --score metric --human human "
       "--budget 150", "ok", "en-ko"),
    _h("H4-016", PLAN, "the output is the input", f"{P} --budget 150 -o labels.tsv", "refused",
       "is an input of this command"),
    _h("H4-017", PLAN, "names with bidi override, escape and tag characters",
       f"{PLAN} evil_names.parquet --score metric --human human --budget 150 -o out/H4-017.parquet", "ok",
       check=no_raw_controls),
    _h("H4-018", PLAN, "a tab in a system name, rows to TSV", f"{PLAN} tab_system.parquet --score metric --human human "
       "--budget 150 -o out/H4-018.tsv", "refused", "which TSV cannot hold", output="out/H4-018.tsv"),
    _h("H4-019", PLAN, "confidence 1", f"{P} --budget 150 --confidence 1", "refused", "'--confidence'"),
    _h("H4-020", PLAN, "power 0.9999999 (shown as given, not rounded to 1)", f"{P} --budget 150 --power 0.9999999",
       "ok", "power 0.9999999"),
    _h("H4-021", PLAN, "residual sd nan", f"{P} --budget 150 --residual-sd nan", "refused", "not a finite number"),
    _h("H4-022", PLAN, "residual sd 0", f"{P} --budget 150 --residual-sd 0", "refused", "'--residual-sd'"),
    _h("H4-023", PLAN, "--by a column that does not exist", f"{P} --budget 150 --by nosuch", "refused",
       "no column 'nosuch'"),
    _h("H4-024", PLAN, "--rows spread without a segment column", f"{PLAN} no_seg.tsv --score metric --human human "
       "--budget 150 --rows spread -o out/H4-024.tsv", "ok", check=rows_written("out/H4-024.tsv", 66)),
    _h("H4-025", PLAN, "--seed -1", f"{P} --budget 150 --seed -1", "refused", "'--seed'"),
    _h("H4-026", PLAN, "rows written to a folder that does not exist", f"{P} --budget 150 -o nodir/rows.tsv",
       "refused", "nodir"),
    _h("H4-027", PLAN, "plan written as JSON on stdout", f"{P} --budget 150 --format json", "ok",
       check=lambda root, out, err: json.loads(out)),
    _h("H4-028", PLAN, "a score column that is all NaN", f"{PLAN} nan_score.tsv --score metric --human human "
       "--budget 150", "refused", "has no finite value"),
    # calibrate select (its label column shares the plan's rule)
    _h("H4-029", "calibrate select", "label column named as the score column",
       f"{SEL} --budget 40 --label-column metric -o out/H4-029.tsv", "refused", "is the score column",
       output="out/H4-029.tsv"),
    _h("H4-030", "calibrate select", "empty label column name",
       [*f"{SEL} --budget 40 -o out/H4-030.tsv".split(), "--label-column", ""], "refused", "is empty",
       output="out/H4-030.tsv"),
    _h("H4-031", "calibrate select", "the table's own human column as label column (the README workflow)",
       f"{SEL} --budget 40 --label-column human -o out/H4-031.tsv", "ok",
       check=rows_written("out/H4-031.tsv", 160, ("row_id", "human"))),
    # the sacrebleu flags, sacrebleu itself the oracle
    _h("H4-032", "score (sacrebleu)", "-w 20 (sacrebleu accepts any width)", f"{SB} -m bleu -w 20 -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -w 20 -b")),
    _h("H4-033", "score (sacrebleu)", "-w 0", f"{SB} -m bleu chrf -w 0 -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu chrf -w 0 -b")),
    _h("H4-034", "score (sacrebleu)", "a reference starting with a byte-order mark",
       "score bom_ref.txt -i hyp.txt -m bleu -b", "ok", "starts with a UTF-8 byte-order mark"),
    _h("H4-035", "score (sacrebleu)", "CRLF reference against LF output", "score crlf_ref.txt -i hyp.txt -m bleu chrf "
       "ter -b", "ok", check=same_as_sacrebleu("crlf_ref.txt -i hyp.txt -m bleu chrf ter -b")),
    _h("H4-036", "score (sacrebleu)", "a lone CR inside a reference line", "score cr_ref.txt -i hyp.txt -m bleu -b",
       "ok", check=same_as_sacrebleu("cr_ref.txt -i hyp.txt -m bleu -b")),
    _h("H4-037", "score (sacrebleu)", "trailing spaces and tabs, chrF with whitespace",
       "score trail_ref.txt -i hyp.txt -m chrf --chrf-whitespace -b", "ok",
       check=same_as_sacrebleu("trail_ref.txt -i hyp.txt -m chrf --chrf-whitespace -b")),
    _h("H4-038", "score (sacrebleu)", "empty lines in both files", f"{SB} -m bleu chrf ter -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu chrf ter -b")),
    _h("H4-039", "score (sacrebleu)", "a system output a line short", "score ref.txt -i short.txt -m bleu", "refused",
       "different line counts"),
    _h("H4-040", "score (sacrebleu)", "a Latin-1 system output", "score ref.txt -i latin1.txt -m bleu", "refused",
       "not valid UTF-8"),
    _h("H4-041", "score (sacrebleu)", "-tok none -lc", f"{SB} -m bleu -tok none -lc -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -tok none -lc -b")),
    _h("H4-042", "score (sacrebleu)", "-tok char", f"{SB} -m bleu -tok char -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -tok char -b")),
    _h("H4-043", "score (sacrebleu)", "-tok intl", f"{SB} -m bleu -tok intl -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -tok intl -b")),
    _h("H4-044", "score (sacrebleu)", "-tok with an unknown name", f"{SB} -m bleu -tok nosuch", "refused", "nosuch"),
    _h("H4-045", "score (sacrebleu)", "-s floor -sv 0", f"{SB} -m bleu -s floor -sv 0 -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -s floor -sv 0 -b")),
    _h("H4-046", "score (sacrebleu)", "-s none on a short segment", f"{SB} -m bleu -s none -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -s none -b")),
    _h("H4-047", "score (sacrebleu)", "two identical references", "score ref.txt ref.txt -i hyp.txt -m bleu -b", "ok",
       check=same_as_sacrebleu("ref.txt ref.txt -i hyp.txt -m bleu -b")),
    _h("H4-048", "score (sacrebleu)", "-nr 2 on a file without tabs", "score ref.txt -i hyp.txt -m bleu -nr 2",
       "refused", "(--num-refs), found 1"),
    _h("H4-049", "score (sacrebleu)", "--chrf-beta 0", f"{SB} -m chrf --chrf-beta 0 -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m chrf --chrf-beta 0 -b")),
    _h("H4-050", "score (sacrebleu)", "-cw 2 (chrF++) with -cc 3", f"{SB} -m chrf -cw 2 -cc 3 -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m chrf -cw 2 -cc 3 -b")),
    _h("H4-051", "score (sacrebleu)", "--chrf-lowercase --chrf-eps-smoothing", f"{SB} -m chrf --chrf-lowercase "
       "--chrf-eps-smoothing -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m chrf --chrf-lowercase --chrf-eps-smoothing -b")),
    _h("H4-052", "score (sacrebleu)", "every TER option at once", f"{SB} -m ter --ter-case-sensitive "
       "--ter-asian-support --ter-no-punct --ter-normalized -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m ter --ter-case-sensitive --ter-asian-support --ter-no-punct "
                                "--ter-normalized -b")),
    _h("H4-053", "score (sacrebleu)", "-sl on two systems", "score ref.txt -i hyp.txt hyp2.txt -m bleu -sl",
       "refused", "one system"),
    _h("H4-054", "score (sacrebleu)", "-sl with text output", f"{SB} -m bleu -sl -f text", "ok",
       check=lambda root, out, err: out.count("BLEU|") == 5),
    _h("H4-055", "score (sacrebleu)", "-m with an unknown metric", f"{SB} -m blue", "refused", "blue"),
    _h("H4-056", "score (sacrebleu)", "-m given an empty list", [*SB.split(), "-m", ""], "refused", "metric"),
    _h("H4-057", "score (sacrebleu)", "the hypothesis file named twice (sacrebleu scores it twice)",
       "score ref.txt -i hyp.txt hyp.txt -m bleu -b", "refused", "'hyp.txt' is given twice"),
    _h("H4-058", "score (sacrebleu)", "-ci with -cin 1 (one resample: sacrebleu drops -ci without a word; xleval "
       "prints the same plain score and says so on stderr)", f"{SB} -m bleu -ci -cin 1", "ok",
       check=same_json_as_sacrebleu("ref.txt -i hyp.txt -m bleu -ci -cin 1")),
    _h("H4-101", "score (sacrebleu)", "-ci with -cin 2", f"{SB} -m bleu -ci -cin 2", "ok",
       check=same_json_as_sacrebleu("ref.txt -i hyp.txt -m bleu -ci -cin 2")),
    _h("H4-059", "score (sacrebleu)", "-pbs on one system", f"{SB} -m bleu -pbs", "refused", "two"),
    _h("H4-060", "score (sacrebleu)", "a reference file that is a directory", "score sub -i hyp.txt -m bleu",
       "refused", "is a directory"),
    _h("H4-061", "score (sacrebleu)", "a gzip-compressed reference", "score ref.txt.gz -i hyp.txt -m bleu chrf -b",
       "ok",
       check=same_as_sacrebleu("ref.txt.gz -i hyp.txt -m bleu chrf -b")),
    _h("H4-062", "score (sacrebleu)", "a damaged gzip reference", "score bad.txt.gz -i hyp.txt -m bleu", "refused",
       "gzip"),
    _h("H4-063", "score (sacrebleu)", "-l with a malformed pair", f"{SB} -m bleu -l english", "refused", "english"),
    _h("H4-064", "score (sacrebleu)", "-l zh-en picks no zh tokenizer (target English)", f"{SB} -m bleu -l zh-en -b",
       "ok", check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -l zh-en -b")),
    _h("H4-065", "score (sacrebleu)", "-l en-zh picks the zh tokenizer", f"{SB} -m bleu -l en-zh -b", "ok",
       check=same_as_sacrebleu("ref.txt -i hyp.txt -m bleu -l en-zh -b")),
    _h("H4-066", "score (sacrebleu)", "-e latin-1 (xleval reads UTF-8 only)", f"{SB} -m bleu -e latin-1", "refused",
       "UTF-8"),
    _h("H4-067", "score (sacrebleu)", "an empty reference file and an empty output", "score empty.txt -i empty.txt "
       "-m bleu", "refused", "empty"),
    # ingest mqm / esa / gold
    _h("H4-068", "ingest mqm", "spans without an lp column and no --lp", "ingest mqm spans.tsv -o out/H4-068.tsv",
       "refused", "--lp", output="out/H4-068.tsv"),
    _h("H4-069", "ingest mqm", "--lp given while the file has an lp column", "ingest mqm spans_lp.tsv --lp en-de "
       "-o out/H4-069.tsv", "refused", "has an lp column already", output="out/H4-069.tsv"),
    _h("H4-070", "ingest mqm", "a weight of inf", "ingest mqm spans.tsv --lp en-de --weights Major:inf "
       "-o out/H4-070.tsv", "refused", "not a finite number", output="out/H4-070.tsv"),
    _h("H4-071", "ingest mqm", "a weight key given twice", "ingest mqm spans.tsv --lp en-de --weights Major:5,major:1 "
       "-o out/H4-071.tsv", "refused", "given twice", output="out/H4-071.tsv"),
    _h("H4-072", "ingest mqm", "an empty weight spec", ["ingest", "mqm", "spans.tsv", "--lp", "en-de", "--weights", "",
                                                       "-o", "out/H4-072.tsv"], "refused", "empty",
       output="out/H4-072.tsv"),
    _h("H4-073", "ingest mqm", "custom weights: the most specific key wins", "ingest mqm spans.tsv --lp en-de "
       "--weights Major:10,Minor:2,Major/Accuracy:7 -o out/H4-073.tsv", "ok",
       check=mqm_values("out/H4-073.tsv", [-7.0, 0.0, -2.0])),
    _h("H4-074", "ingest mqm", "the wmt preset, upper case", "ingest mqm spans.tsv --lp en-de --weights WMT "
       "-o out/H4-074.tsv", "ok", check=mqm_values("out/H4-074.tsv", [-5.0, 0.0, -1.0])),
    _h("H4-075", "ingest mqm", "a span row without severity", "ingest mqm no_severity.tsv --lp en-de "
       "-o out/H4-075.tsv", "refused", "has no 'severity'", output="out/H4-075.tsv"),
    _h("H4-076", "ingest mqm", "no rater column", "ingest mqm no_rater.tsv --lp en-de -o out/H4-076.tsv", "refused",
       "'rater'", output="out/H4-076.tsv"),
    _h("H4-077", "ingest mqm", "--raters z with a rater of one segment", "ingest mqm spans.tsv --lp en-de --raters z "
       "-o out/H4-077.tsv", "refused", "rated only one segment", output="out/H4-077.tsv"),
    _h("H4-078", "ingest mqm", "--into a table that already has an mqm column", "ingest mqm spans.tsv --lp en-de "
       "--into has_mqm.tsv -o out/H4-078.tsv", "refused", "already has a column 'mqm'", output="out/H4-078.tsv"),
    _h("H4-079", "ingest mqm", "--into a table whose systems match none of the ratings", "ingest mqm spans.tsv "
       "--lp en-de --into other_systems.tsv -o out/H4-079.tsv", "ok", "3 of 3 rated segments match no row"),
    _h("H4-080", "ingest mqm", "--into the output file", "ingest mqm spans.tsv --lp en-de --into table.tsv "
       "-o table.tsv", "refused", "is an input of this command"),
    _h("H4-081", "ingest mqm", "the span file is the output", "ingest mqm spans.tsv --lp en-de -o spans.tsv",
       "refused", "is an input of this command"),
    _h("H4-082", "ingest mqm", "system names with control characters", "ingest mqm evil_spans.tsv --lp en-de "
       "-o out/H4-082.parquet", "ok", check=no_raw_controls),
    _h("H4-083", "ingest mqm", "quotes kept as text (WMT files) read with --quoting none",
       "ingest mqm quoted_spans.tsv --lp en-de --quoting none -o out/H4-083.tsv", "ok",
       check=mqm_values("out/H4-083.tsv", [-5.0, -1.0])),
    _h("H4-084", "ingest mqm", "a file that is not a table", "ingest mqm hyp.txt --lp en-de -o out/H4-084.tsv",
       "refused", "hyp.txt: MQM spans: no columns", output="out/H4-084.tsv"),
    _h("H4-085", "ingest esa", "a score of 120", "ingest esa esa_120.jsonl -o out/H4-085.tsv", "refused",
       "is not a number from 0 to 100", output="out/H4-085.tsv"),
    _h("H4-086", "ingest esa", "a score of -0.5", "ingest esa esa_neg.jsonl -o out/H4-086.tsv", "refused",
       "is not a number from 0 to 100", output="out/H4-086.tsv"),
    _h("H4-087", "ingest esa", "a score 'NaN'", "ingest esa esa_nan.jsonl -o out/H4-087.tsv", "refused",
       "has no 'score'", output="out/H4-087.tsv"),
    _h("H4-088", "ingest esa", "a segment rated twice by one rater", "ingest esa esa_twice.jsonl -o out/H4-088.tsv",
       "refused", "a second time by rater", output="out/H4-088.tsv"),
    _h("H4-089", "ingest esa", "spans that are not JSON", "ingest esa esa_badjson.jsonl --spans spans "
       "-o out/H4-089.tsv", "refused", "not JSON", output="out/H4-089.tsv"),
    _h("H4-090", "ingest esa", "a span of severity critical", "ingest esa esa_critical.jsonl --spans spans "
       "-o out/H4-090.tsv", "refused", "severity 'critical'", output="out/H4-090.tsv"),
    _h("H4-091", "ingest esa", "--spans names a missing column", "ingest esa esa_ok.jsonl --spans nosuch "
       "-o out/H4-091.tsv", "refused", "'nosuch'", output="out/H4-091.tsv"),
    _h("H4-092", "ingest esa", "--score names a text column", "ingest esa esa_ok.jsonl --score system "
       "-o out/H4-092.tsv", "refused", "is not a number from 0 to 100", output="out/H4-092.tsv"),
    _h("H4-093", "ingest esa", "spans JSON with a null list", "ingest esa esa_null_spans.jsonl --spans spans "
       "-o out/H4-093.tsv", "ok", check=rows_written("out/H4-093.tsv", 2, ("esa_minor", "esa_major"))),
    _h("H4-094", "ingest gold", "a group with gold in two columns", "ingest gold gold_both.tsv --from mqm --from esa "
       "-o out/H4-094.tsv", "refused", "has gold in both", output="out/H4-094.tsv"),
    _h("H4-095", "ingest gold", "--from a column that does not exist", "ingest gold gold_ok.tsv --from nosuch "
       "-o out/H4-095.tsv", "refused", "'nosuch'", output="out/H4-095.tsv"),
    _h("H4-096", "ingest gold", "--from a column without its scale column", "ingest gold gold_noscale.tsv --from mqm "
       "-o out/H4-096.tsv", "refused", "'mqm_scale'", output="out/H4-096.tsv"),
    _h("H4-097", "ingest gold", "--by a column that does not exist", "ingest gold gold_ok.tsv --from mqm --from esa "
       "--by nosuch -o out/H4-097.tsv", "refused", "'nosuch'", output="out/H4-097.tsv"),
    _h("H4-098", "ingest gold", "--name that replaces a column of the table", "ingest gold gold_ok.tsv --from mqm "
       "--from esa --name mqm -o out/H4-098.tsv", "refused", "'mqm'", output="out/H4-098.tsv"),
    _h("H4-099", "ingest gold", "one group on one scale, the other on another", "ingest gold gold_ok.tsv --from mqm "
       "--from esa -o out/H4-099.tsv", "ok", "2 scale(s) over 2 group(s)"),
    _h("H4-100", "ingest gold", "a scale column with two scales in one group", "ingest gold gold_two_scales.tsv "
       "--from mqm -o out/H4-100.tsv", "refused", "has 2 scales", output="out/H4-100.tsv"),
    # check-outputs (its table: de-en, system A = the references, system B = 8 of 40 outputs copy the source)
    _h("H4-102", "check-outputs", "--flag copy_source without a source column",
       "check-outputs check_nosrc.tsv --flag copy_source", "refused", "needs the source column 'source'"),
    _h("H4-103", "check-outputs", "a language pair that is not SRC-TGT", "check-outputs check_badlp.tsv", "refused",
       "no split gives two language codes"),
    _h("H4-104", "check-outputs", "--score a column of text", "check-outputs check.tsv --score source", "refused",
       "is not a number"),
    _h("H4-105", "check-outputs", "system names with bidi override and escape sequences",
       "check-outputs check_evil.parquet --score chrf", "ok", check=no_raw_controls),
    _h("H4-106", "check-outputs", "every hypothesis empty", "check-outputs check_empty.tsv --rows out/H4-106.tsv", "ok",
       check=lambda root, out, err: _flag_share(root / "out/H4-106.tsv", "empty", 1.0)),
    _h("H4-107", "check-outputs", "every hypothesis missing (NaN)", "check-outputs check_nanhyp.tsv "
       "--rows out/H4-107.tsv", "ok", check=lambda root, out, err: _flag_share(root / "out/H4-107.tsv", "empty", 1.0)),
    _h("H4-108", "check-outputs", "no language column", "check-outputs check_nolp.tsv", "refused",
       "no language column"),
    _h("H4-109", "check-outputs", "--where that leaves no rows", "check-outputs check.tsv --where lp=xx-yy", "refused",
       "leaves no rows"),
    _h("H4-110", "check-outputs", "--where without '='", "check-outputs check.tsv --where lp", "refused",
       "expected COLUMN=VALUE"),
    _h("H4-111", "check-outputs", "--rows onto the input", "check-outputs check.tsv --rows check.tsv", "refused",
       "is an input of this command"),
    _h("H4-112", "check-outputs", "-o and --rows the same file", "check-outputs check.tsv -o out/H4-112.json "
       "--rows out/H4-112.json", "refused", "name the same file", output="out/H4-112.json"),
    _h("H4-113", "check-outputs", "--flag off_target with --langid none", "check-outputs check.tsv --flag off_target "
       "--langid none", "refused", "needs a language identifier"),
    _h("H4-114", "check-outputs", "--near-copy 0", "check-outputs check.tsv --near-copy 0", "refused", "'--near-copy'"),
    _h("H4-115", "check-outputs", "--level 1", "check-outputs check.tsv --level 1", "refused", "'--level'"),
    _h("H4-116", "check-outputs", "--length-z -1", "check-outputs check.tsv --length-z -1", "refused", "'--length-z'"),
    _h("H4-117", "check-outputs", "a table of one row", "check-outputs check_onerow.tsv --score chrf", "ok"),
    _h("H4-118", "check-outputs", "copies planted in 8 of 40 rows of one system are counted",
       "check-outputs check.tsv --format json", "ok", check=lambda root, out, err: _copy_rates(out)),
    _h("H4-119", "check-outputs", "a tab in a system name, rates to a TSV file", "check-outputs check_tab.parquet "
       "--format tsv -o out/H4-119.tsv", "refused", "which TSV cannot hold", output="out/H4-119.tsv"),
    _h("H4-120", "check-outputs", "a tab in a system name, rates as TSV on stdout (escaped, one line per row)",
       "check-outputs check_tab.parquet --format tsv", "ok", check=lambda root, out, err: _tab_escaped(out)),
    _h("H4-125", "check-outputs", "-o with the text format (it printed to the terminal and wrote nothing)",
       "check-outputs check.tsv -o out/H4-125.txt", "refused", "--format tsv or --format json",
       output="out/H4-125.txt"),
    _h("H4-126", "check-outputs", "a tab in a system name with --rows to TSV", "check-outputs check_tab.parquet "
       "--format json -o out/H4-126.json --rows out/H4-126.tsv", "refused", "which TSV cannot hold",
       output="out/H4-126.json"),
    _h("H4-121", "check-outputs", "--score a column missing from the table", "check-outputs check.tsv --score nosuch",
       "refused", "missing required column(s) ['nosuch']"),
    _h("H4-122", "leaderboard", "--exclude-invalid leaves out the flagged rows and says how many",
       "leaderboard check_two.tsv --score chrf --exclude-invalid", "ok", "excluded 16 of 160 rows"),
    _h("H4-123", "leaderboard", "--exclude-invalid on a table without hypotheses",
       "leaderboard check_nohyp.tsv --score chrf --exclude-invalid", "refused", "hypothesis"),
    _h("H4-124", "calibrate fit", "--exclude-invalid with streamed fitting",
       "calibrate fit check_two.tsv --score chrf --exclude-invalid --chunk-size 10 -o out/H4-124.json", "refused",
       "--exclude-invalid checks the texts of the whole table in memory", output="out/H4-124.json"),
    # meta (its table: 3 language pairs x 4 systems x 20 segments; m1 follows the human scores, m2 is noise)
    _h("H4-127", "meta", "two-column groups whose joined names read alike: ('x/y', 'z') and ('x', 'y/z')",
       "meta meta_collide.tsv --metrics m1,m2 --human human --by a,b --no-spa --format json", "ok",
       check=lambda root, out, err: _meta_groups(out, 2)),
    _h("H4-128", "meta", "a constant metric", "meta meta_const.tsv --metrics m1,m2 --human human", "refused",
       "metric 'm2' is constant"),
    _h("H4-129", "meta", "a group with one system", "meta meta_onesys.tsv --metrics m1,m2 --human human", "refused",
       "have one judged system"),
    _h("H4-130", "meta", "a metric missing for one system of a group", "meta meta_nanmetric.tsv --metrics m1,m2 "
       "--human human", "refused", "but not ['s1']"),
    _h("H4-131", "meta", "the human column among the metrics", "meta meta.tsv --metrics m1,human --human human",
       "refused", "is also among the metrics"),
    _h("H4-132", "meta", "a metric named twice", "meta meta.tsv --metrics m1,m1 --human human", "refused",
       "a column is named twice"),
    _h("H4-133", "meta", "an empty metric list", ["meta", "meta.tsv", "--metrics", "", "--human", "human"], "refused",
       "name the metrics with --metrics"),
    _h("H4-134", "meta", "a metric prefix that matches no column", "meta meta.tsv --metrics-prefix zz --human human",
       "refused", "no column of meta.tsv starts with it"),
    _h("H4-135", "meta", "a malformed --human-scale",
       "meta meta.tsv --metrics m1 --human human --human-scale en-de=DA,", "refused",
       "give NAME, or GROUP=SCALE pairs"),
    _h("H4-136", "meta", "--spa-permutations 1", "meta meta.tsv --metrics m1 --human human --spa-permutations 1",
       "refused", "'--spa-permutations'"),
    _h("H4-137", "meta", "the output is the input", "meta meta.tsv --metrics m1 --human human -o meta.tsv", "refused",
       "is an input of this command"),
    _h("H4-138", "meta", "group names with LaTeX specials and control characters, --format latex",
       "meta meta_names.parquet --metrics m1,m2 --human human --by grp --system sys2 --no-spa --format latex", "ok",
       check=lambda root, out, err: _latex_escaped(out)),
    _h("H4-139", "meta", "group names with bidi override and a tab, text output",
       "meta meta_names.parquet --metrics m1,m2 --human human --by grp --system sys2 --no-spa", "ok",
       check=no_raw_controls),
    _h("H4-140", "meta", "--exclude that leaves out every system", "meta meta.tsv --metrics m1 --human human "
       "--exclude s*", "refused", "leaves out every system"),
    _h("H4-141", "meta", "--clusters with an unknown statistic", "meta meta.tsv --metrics m1 --human human "
       "--clusters nosuch", "refused", "cannot be clustered"),
    _h("H4-142", "meta", "--task wmt22", "meta meta.tsv --metrics m1 --human human --task wmt22", "refused",
       "'--task'"),
    _h("H4-143", "meta", "--calibrations anchored@0", "meta meta.tsv --metrics m1 --human human "
       "--calibrations anchored@0", "refused", "is not a calibration"),
    _h("H4-144", "meta", "--darr naming a text column (the message named --metrics)", "meta meta.tsv --metrics m1 "
       "--human human --darr lp", "refused", "column 'lp' (--darr) holds text"),
    _h("H4-145", "meta", "an infinite human score (it was taken as unjudged without a word)",
       "meta meta_infhuman.tsv --metrics m1 --human human --no-spa", "refused", "human score inf is infinite"),
    _h("H4-146", "meta", "a human_scale column naming two scales (MQM, ESA) for different pairs",
       "meta meta_scales.tsv --metrics m1,m2 --human human --no-spa --format json", "ok",
       check=lambda root, out, err: _meta_scales(out, {"de-en": "MQM", "en-de": "MQM", "en-ja": "ESA"})),
    _h("H4-147", "meta", "a human_scale column naming two scales within one pair",
       "meta meta_scales_mixed.tsv --metrics m1,m2 --human human --no-spa", "refused", "group 'en-de' has 2 scales"),
    _h("H4-148", "meta", "a metric that ranks the systems exactly as the humans do",
       "meta meta_perfect.tsv --metrics m1 --human human --no-spa --format json", "ok",
       check=lambda root, out, err: _meta_value(out, "sys_kendall", 1.0)),
    _h("H4-149", "meta", "a metric that reverses the humans' order",
       "meta meta_reversed.tsv --metrics m1 --human human --no-spa --format json", "ok",
       check=lambda root, out, err: _meta_value(out, "sys_kendall", -1.0)),
    _h("H4-150", "meta", "--metrics with a column that does not exist", "meta meta.tsv --metrics m1,nosuch "
       "--human human", "refused", "nosuch"),
    _h("H4-151", "meta", "--human a column that does not exist", "meta meta.tsv --metrics m1 --human nosuch",
       "refused", "nosuch"),
    _h("H4-152", "meta", "--report onto the input", "meta meta.tsv --metrics m1 --human human --report meta.tsv",
       "refused", "is an input of this command"),
]


# --- files --------------------------------------------------------------------------------------------------

def _labels() -> pd.DataFrame:
    from xleval.synthetic import simulate_mt_evaluation

    d = simulate_mt_evaluation(languages=("de", "fr", "ja", "zh"), n_systems=4, n_segments=40, seed=1).data
    d = d[d["split"] == "calibration"].drop(columns=["split", "true"]).reset_index(drop=True)
    rng = np.random.default_rng(0)
    d.loc[rng.random(len(d)) > 0.15, "human"] = np.nan
    return d


def _tsv(df: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".jsonl":
        df.to_json(path, orient="records", lines=True)
        return
    df.to_csv(path, sep="\t", index=False, lineterminator="\n")


def _write_files(root: Path) -> None:
    (root / "out").mkdir()
    (root / "sub").mkdir()
    d = _labels()
    _tsv(d, root / "labels.tsv")
    _tsv(d.assign(human=d["human"].astype(object).where(d["human"].isna(), "good")), root / "text_human.tsv")
    inf = d.copy()
    inf.loc[inf["human"].notna().idxmax(), "human"] = np.inf
    _tsv(inf, root / "inf_human.tsv")
    _tsv(d.assign(metric=5.0), root / "const_score.tsv")
    _tsv(d[d["lp"] == "en-de"], root / "one_group.tsv")
    _tsv(d.assign(human=np.nan), root / "no_labels.tsv")
    _tsv(d.assign(metric=np.nan), root / "nan_score.tsv")
    _tsv(d.drop(columns="seg_id"), root / "no_seg.tsv")
    tiny = pd.DataFrame({"lp": ["en-ko"], "src_lang": ["en"], "tgt_lang": ["ko"], "system": ["sys1"], "seg_id": [1],
                         "metric": [40.0], "human": [np.nan]})
    _tsv(pd.concat([d, tiny], ignore_index=True), root / "tiny_group.tsv")
    evil = d.copy()
    evil["system"] = evil["system"].replace({"sys1": "evil\u202eRTL", "sys2": "esc\x1b[31m", "sys3": "A\U000e0041"})
    evil.to_parquet(root / "evil_names.parquet")
    d.assign(system=d["system"].replace({"sys1": "tab\there"})).to_parquet(root / "tab_system.parquet")
    # plain files (sacrebleu)
    (root / "ref.txt").write_text('The cat sat on the mat.\nA dog barked loudly.\n"Yes," he said.\n\nOK\n')
    (root / "hyp.txt").write_text('The cat sat on a mat.\nThe dog barked.\n"Yes" he said.\n\nOK\n')
    (root / "hyp2.txt").write_text("The cat is on the mat.\nA dog barked.\nYes, he said.\n\nfine\n")
    (root / "short.txt").write_text("one line\n")
    (root / "latin1.txt").write_bytes("café\n\n\n\n\n".encode("latin-1"))
    (root / "bom_ref.txt").write_bytes(b"\xef\xbb\xbf" + (root / "ref.txt").read_bytes())
    (root / "crlf_ref.txt").write_bytes((root / "ref.txt").read_bytes().replace(b"\n", b"\r\n"))
    (root / "cr_ref.txt").write_bytes((root / "ref.txt").read_bytes().replace(b"cat sat", b"cat\rsat"))
    (root / "trail_ref.txt").write_text('The cat sat on the mat.  \nA dog barked loudly.\t\n"Yes," he said.\n\nOK \n')
    (root / "empty.txt").write_text("")
    import gzip

    (root / "ref.txt.gz").write_bytes(gzip.compress((root / "ref.txt").read_bytes()))
    (root / "bad.txt.gz").write_bytes(gzip.compress((root / "ref.txt").read_bytes())[:-12])
    # human ratings
    spans = pd.DataFrame({"system": ["A", "A", "B"], "seg_id": [1, 2, 1], "rater": ["r1", "r1", "r2"],
                          "severity": ["Major", "No-error", "Minor"],
                          "category": ["Accuracy/Mistranslation", "No-error", "Fluency/Grammar"]})
    _tsv(spans, root / "spans.tsv")
    _tsv(spans.assign(lp="en-de"), root / "spans_lp.tsv")
    _tsv(spans.assign(severity=["Major", "", "Minor"]), root / "no_severity.tsv")
    _tsv(spans.drop(columns="rater"), root / "no_rater.tsv")
    _tsv(spans.assign(system=["evil\u202eRTL", "esc\x1b[31m", "A\U000e0041"]), root / "evil_spans.tsv")
    (root / "quoted_spans.tsv").write_text('system\tseg_id\trater\tseverity\tcategory\ttarget\n'
                                           'A\t1\tr1\tMajor\tAccuracy\t"Ja," sagte er.\n'
                                           'A\t2\tr1\tMinor\tFluency\t"Nein."\n')
    table = pd.DataFrame({"lp": "en-de", "system": ["A", "A", "B"], "seg_id": [1, 2, 1], "chrf": [50.0, 60.0, 40.0]})
    _tsv(table, root / "table.tsv")
    _tsv(table.assign(mqm=1.0), root / "has_mqm.tsv")
    _tsv(table.assign(system=["X", "Y", "Z"]), root / "other_systems.tsv")
    esa = pd.DataFrame({"lp": "cs-uk", "system": ["A", "B"], "seg_id": [1, 1], "rater": "x", "score": [80.0, 60.0],
                        "spans": ['[{"severity": "minor"}]', "[]"]})
    _tsv(esa, root / "esa_ok.jsonl")
    _tsv(esa.assign(score=[80.0, 120.0]), root / "esa_120.jsonl")
    _tsv(esa.assign(score=[80.0, -0.5]), root / "esa_neg.jsonl")
    _tsv(esa.assign(score=[80.0, np.nan]), root / "esa_nan.jsonl")
    _tsv(esa.assign(system="A"), root / "esa_twice.jsonl")
    _tsv(esa.assign(spans=["[{", "[]"]), root / "esa_badjson.jsonl")
    _tsv(esa.assign(spans=['[{"severity": "critical"}]', "[]"]), root / "esa_critical.jsonl")
    _tsv(esa.assign(spans=["null", "[]"]), root / "esa_null_spans.jsonl")
    gold = pd.DataFrame({"lp": ["en-de", "en-de", "cs-uk"], "system": ["A", "B", "A"], "seg_id": [1, 1, 1],
                         "mqm": [-5.0, 0.0, np.nan], "mqm_scale": ["MQM", "MQM", np.nan],
                         "esa": [np.nan, np.nan, 80.0], "esa_scale": [np.nan, np.nan, "ESA"]})
    _tsv(gold, root / "gold_ok.tsv")
    _tsv(gold.assign(esa=[np.nan, 70.0, 80.0]), root / "gold_both.tsv")
    _tsv(gold.drop(columns="mqm_scale"), root / "gold_noscale.tsv")
    _tsv(gold.assign(mqm_scale=["MQM", "ESA", np.nan]), root / "gold_two_scales.tsv")
    # check-outputs
    check = _check_table()
    _tsv(check, root / "check.tsv")
    _tsv(check.drop(columns="source"), root / "check_nosrc.tsv")
    _tsv(check.assign(lp="xx-yy"), root / "check_badlp.tsv")
    check.assign(system=check["system"].replace({"A": "evil\u202eX", "B": "esc\x1b[2J"})).to_parquet(
        root / "check_evil.parquet")
    _tsv(check.assign(hypothesis=""), root / "check_empty.tsv")
    _tsv(check.assign(hypothesis=np.nan), root / "check_nanhyp.tsv")
    _tsv(check.drop(columns="lp"), root / "check_nolp.tsv")
    _tsv(check.iloc[:1], root / "check_onerow.tsv")
    check.assign(system=check["system"].replace({"A": "tab\there"})).to_parquet(root / "check_tab.parquet")
    two = pd.concat([check, check.assign(lp="fr-en")], ignore_index=True)
    _tsv(two, root / "check_two.tsv")
    _tsv(two.drop(columns="hypothesis"), root / "check_nohyp.tsv")
    # meta
    meta = _meta_table()
    _tsv(meta, root / "meta.tsv")
    _tsv(meta.assign(m2=1.0), root / "meta_const.tsv")
    _tsv(meta[~((meta["lp"] == "en-ja") & (meta["system"] != "s0"))], root / "meta_onesys.tsv")
    _tsv(meta.assign(m1=meta["m1"].where((meta["lp"] != "en-de") | (meta["system"] != "s1"))),
         root / "meta_nanmetric.tsv")
    names = meta.assign(grp=meta["system"].replace({"s0": "a&b_%{c}", "s1": "evil\u202eX", "s2": "tab\tx"}),
                        sys2=meta["lp"])
    names.to_parquet(root / "meta_names.parquet")
    pair = meta[meta["lp"] != "de-en"]
    _tsv(pair.assign(a=np.where(pair["lp"] == "en-de", "x/y", "x"), b=np.where(pair["lp"] == "en-de", "z", "y/z"))
         .drop(columns="lp"), root / "meta_collide.tsv")
    _tsv(meta.assign(human=meta["human"].where(meta.index != 0, np.inf)), root / "meta_infhuman.tsv")
    scaled = meta.assign(human_scale=np.where(meta["lp"] == "en-ja", "ESA", "MQM"))
    _tsv(scaled, root / "meta_scales.tsv")
    _tsv(scaled.assign(human_scale=scaled["human_scale"].where(scaled.index > 2, "ESA")),
         root / "meta_scales_mixed.tsv")
    level = meta.groupby(["lp", "system"])["human"].transform("mean")
    _tsv(meta.assign(m1=level + 0.001 * meta["seg_id"]), root / "meta_perfect.tsv")
    _tsv(meta.assign(m1=-level), root / "meta_reversed.tsv")


def _meta_table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("en-de", "en-ja", "de-en"):
        for s in range(4):
            quality = s + rng.normal(0, 0.2)
            for i in range(20):
                h = quality + rng.normal()
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": i, "human": 10 * h + 50, "m1": h + rng.normal(),
                             "m2": rng.normal()})
    return pd.DataFrame(rows)


def _check_table() -> pd.DataFrame:
    """de-en outputs: system A gives the reference, system B changes it, and copies the source in 8 of 40 rows."""
    src = ["Der Hund bellt laut im Garten.", "Die Katze schläft auf dem Sofa.", "Wir fahren morgen nach Berlin.",
           "Das Wetter ist heute sehr schön."] * 10
    ref = ["The dog barks loudly in the garden.", "The cat sleeps on the sofa.", "We are driving to Berlin tomorrow.",
           "The weather is very nice today."] * 10
    rng = np.random.default_rng(0)
    rows = []
    for system in ("A", "B"):
        for i, (s, r) in enumerate(zip(src, ref, strict=True)):
            hyp = r if system == "A" else (s if i % 5 == 0 else r.replace("The", "A").replace("We are", "We're"))
            rows.append({"lp": "de-en", "system": system, "seg_id": i, "source": s, "reference": r, "hypothesis": hyp,
                         "chrf": float(rng.uniform(20, 80))})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def workdir():
    root = Path(tempfile.mkdtemp(prefix="xleval-hostile4-"))
    _write_files(root)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _inputs(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and "out" not in p.relative_to(root).parts}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case, workdir):
    before = _inputs(workdir)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # as on a console: the command shows its warnings as lines on stderr
        rc, out, err = run_cli(*case.args, cwd=workdir)
    assert "Traceback" not in err
    assert _inputs(workdir) == before, f"{case.id}: an input changed"
    if case.expect == "refused":
        lines = err.splitlines()
        assert rc == 2, (rc, err)
        assert len(lines) == 1 and lines[0].startswith("xleval: error: "), err
        assert case.says in lines[0], (case.says, lines[0])
        if case.output:
            target = workdir / case.output
            assert not target.exists(), f"{case.output} was written"
            assert not list(target.parent.glob(f".{target.name}.*")), "a temporary file was left"
    else:
        assert rc == 0, err
        assert case.says in out + err, (case.says, err[-500:])
        if case.check is not None:
            case.check(workdir, out, err)


def test_there_are_at_least_100_cases_with_unique_ids():
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)


def _render() -> str:
    lines = [MARKER, "", "## Hostile inputs, round 4", "",
             "Inputs of our own invention against the commands new in this round (tests/test_hostile_round4.py runs "
             "each): *refused* = exit 2 with one line containing the text shown, no output, inputs unchanged; "
             "*accepted* = exit 0 with the right result (sacrebleu's own number for its flags).", "",
             "| id | command | hostile input | outcome |", "|---|---|---|---|"]
    for c in CASES:
        shown = f": `{c.says}`" if c.says else ""
        outcome = f"refused{shown}" if c.expect == "refused" else f"accepted{shown}"
        lines.append(f"| {c.id} | `{c.command}` | {c.attack.replace('|', '/')} | {outcome.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


NEXT = "<!-- hostile inputs, round 5 -->"  # the section after this one (tests/test_hostile_round5.py)


def _section(text: str) -> str:
    section = text[text.index(MARKER):]
    return section[: section.index(NEXT)] if NEXT in section else section


def test_the_catalogue_lists_every_case():
    text = DOC.read_text(encoding="utf-8")
    assert MARKER in text, "run python tests/test_hostile_round4.py"
    assert _section(text).rstrip("\n") + "\n" == _render(), "run python tests/test_hostile_round4.py"


if __name__ == "__main__":  # python tests/test_hostile_round4.py: rewrite the section of docs/errors.md
    text = DOC.read_text(encoding="utf-8")
    head = text[: text.index(MARKER)] if MARKER in text else text.rstrip("\n") + "\n\n"
    tail = text[text.index(NEXT):] if NEXT in text else ""
    DOC.write_text(head + _render() + ("\n" + tail if tail else ""), encoding="utf-8")
    print(f"wrote {len(CASES)} hostile inputs to {DOC}")
