"""Issue 26, names shown as they are: two rules, one function each, used by every writer.

* Display rule (:func:`xleval._base.terminal.visible_controls`): terminal tables, messages, the HTML
  report, figures and JSON/TSV/text shown on a stream write every code point a reader cannot see, or
  would see as something else, as an escape (``\\u202e``, ``\\U000e0041``): C0/C1 controls, bidi
  controls, zero-width characters, tag characters, variation selectors, the other default-ignorable
  code points, line separators and the non-ASCII spaces. So ``A`` and ``A`` + U+E0041 look different.
* Data rule: JSON (stdout or a file) parses back to the exact names (the escapes are JSON's); a TSV file
  (``leaderboard --format tsv -o FILE``) holds the exact names under the TSV quoting rule, and a name
  with a tab or line break, which TSV cannot hold, is refused (E129).

One test per writer, each over one name per class of code point.
"""
from __future__ import annotations

import json
import unicodedata

import numpy as np
import pandas as pd
import pytest

from xleval._base.terminal import CONTROL_CHARACTERS, visible_controls

#: one system name per class of invisible code point, and the plain name they must not look like
CLASSES = {
    "tag": "\U000e0041", "tag-cancel": "\U000e007f", "variation-selector": "\ufe0f",
    "variation-selector-supplement": "\U000e0100", "zero-width-space": "\u200b", "zero-width-joiner": "\u200d",
    "zero-width-non-joiner": "\u200c", "word-joiner": "\u2060", "byte-order-mark": "\ufeff",
    "bidi-override": "\u202e", "bidi-isolate": "\u2066", "bidi-mark": "\u200f", "c0": "\x1b", "c1": "\x85",
    "soft-hyphen": "\u00ad", "grapheme-joiner": "\u034f", "hangul-filler": "\u3164", "mongolian-separator": "\u180e",
    "no-break-space": "\u00a0", "ideographic-space": "\u3000", "line-separator": "\u2028",
    "tab": "\t", "newline": "\n",  # in a name: 'A\\x0a', never 'A ' (the HTML once showed both as a space)
}
PLAIN = "A"
NAMES = {kind: f"{PLAIN}{char}" for kind, char in CLASSES.items()}
KINDS = list(CLASSES)


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"lp": lp, "system": name, "seg_id": i, "score": float(rng.normal(50, 10)),
                          "human": float(rng.normal())}
                         for lp in ("en-de", "en-fr") for name in [PLAIN, *NAMES.values()] for i in range(6)])


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("escape") / "names.jsonl"  # JSONL keeps every name exactly
    _table().to_json(path, orient="records", lines=True)
    return str(path)


def _board(cli, table: str, *args) -> tuple[str, str]:
    rc, out, err = cli("leaderboard", table, "--score", "score", "--by", "lp", "--n-resamples", "20", *args)
    assert rc == 0, err
    return out, err


def _shows_every_class(text: str, kind: str) -> None:
    """``text`` holds the escape of ``kind``'s code point, never the code point itself."""
    if CLASSES[kind] not in "\t\n":  # (a tab or line break in the output is its layout)
        assert CLASSES[kind] not in text, f"{kind}: raw {CLASSES[kind]!r} shown"
    assert visible_controls(NAMES[kind]) in text, f"{kind}: {visible_controls(NAMES[kind])} not shown"
    assert visible_controls(NAMES[kind]) != PLAIN


# the rule itself ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_visible_controls_escapes_every_class(kind):
    shown = visible_controls(NAMES[kind])
    assert shown != PLAIN and CLASSES[kind] not in shown and shown.isascii()


def test_the_class_covers_every_control_format_separator_and_non_ascii_space_of_unicodedata():
    missing = [f"U+{c:04X}" for c in range(0x110000)
               if (unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
                   or (unicodedata.category(chr(c)) == "Zs" and c != 0x20))
               and not CONTROL_CHARACTERS.match(chr(c))]
    assert not missing


def test_visible_text_is_left_as_it_is():
    text = "en-de Ünïcödé 中文 العربية हिन्दी e\u0301 \U0001f600 [b] $x$ a b\\x"
    assert visible_controls(text) == text


# display outputs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_leaderboard_terminal_table(cli, table, kind):
    out, err = _board(cli, table)
    _shows_every_class(out, kind)
    assert CLASSES[kind] not in err


@pytest.mark.parametrize("kind", KINDS)
def test_print_table(capsys, kind):
    from xleval.cli._common import print_table

    print_table([{"system": PLAIN, "score": 1.0}, {"system": NAMES[kind], "score": 2.0}], title=f"t {NAMES[kind]}")
    out = capsys.readouterr().out
    _shows_every_class(out, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_say(capsys, kind):
    from xleval.cli._common import say

    say("warning", f"system {NAMES[kind]} has few rows")
    err = capsys.readouterr().err
    _shows_every_class(err, kind)


@pytest.mark.parametrize("kind", KINDS)
def test_html_leaderboard_page(cli, table, tmp_path, kind):
    page = tmp_path / "board.html"
    _board(cli, table, "--format", "html", "-o", page)
    _shows_every_class(page.read_text(encoding="utf-8"), kind)


@pytest.mark.parametrize("kind", KINDS)
def test_plot_label(kind):
    from xleval.report._plots import label

    assert label(NAMES[kind]) == visible_controls(NAMES[kind]) != PLAIN


def test_figure_texts_show_group_names_visibly():
    import matplotlib

    matplotlib.use("Agg")
    from xleval.report._plots import system_scores_figure

    groups = [PLAIN, PLAIN, NAMES["tag"], NAMES["tag"], NAMES["variation-selector"], NAMES["variation-selector"]]
    fig = system_scores_figure(groups, [1.0, 2, 3, 4, 5, 6], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [1.0, 2, 3, 4, 5, 6],
                               score=f"s{CLASSES['bidi-override']}", human_label="h", calibrated_label="c",
                               group_label=f"lp{CLASSES['zero-width-space']}")
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    shown = "\n".join(texts)
    for kind in ("tag", "variation-selector"):
        _shows_every_class(shown, kind)
    assert not any(CONTROL_CHARACTERS.search(t) for t in texts)


# text and TSV shown as text ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_leaderboard_tsv_on_stdout(cli, table, kind):
    out, _ = _board(cli, table, "--format", "tsv")
    _shows_every_class(out, kind)
    assert len(out.splitlines()) == 1 + 2 * (1 + len(NAMES))  # a header and one line per row


@pytest.mark.parametrize("kind", KINDS)
def test_leaderboard_text_file(cli, table, tmp_path, kind):
    target = tmp_path / "board.txt"
    _board(cli, table, "--format", "text", "-o", target)
    _shows_every_class(target.read_text(encoding="utf-8"), kind)


@pytest.mark.parametrize("where", ["stdout", "file"])
def test_leaderboard_text_stays_aligned_with_escapes(cli, table, tmp_path, where):
    target = tmp_path / "board.txt"
    out, _ = _board(cli, table, "--format", "text", *(["-o", target] if where == "file" else []))
    text = target.read_text(encoding="utf-8") if where == "file" else out
    table_lines = text.split("\n\n")[0].splitlines()
    if where == "stdout":  # the terminal table: its rows between the box lines
        table_lines = [line for line in text.splitlines() if line.startswith(("\u2502", "\u2503"))]
    assert len({len(line) for line in table_lines}) == 1  # every row as wide as the header: columns line up


# JSON: escaped as JSON, lossless ----------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["stdout", "file"])
def test_leaderboard_json_escapes_every_class_and_parses_back_exactly(cli, table, tmp_path, where):
    target = tmp_path / "board.json"
    out, _ = _board(cli, table, "--format", "json", *(["-o", target] if where == "file" else []))
    text = target.read_text(encoding="utf-8") if where == "file" else out
    assert not any(char in text for char in CLASSES.values() if char not in "\t\n")  # written as JSON escapes
    assert {r["system"] for r in json.loads(text)["rows"]} == {PLAIN, *NAMES.values()}


# TSV to a file: data, lossless ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tsv_safe_table(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("escape") / "tsv_safe.jsonl"
    df = _table()
    df[~df["system"].str.contains("[\t\n]")].to_json(path, orient="records", lines=True)
    return str(path)


def test_leaderboard_tsv_file_is_lossless(cli, tsv_safe_table, tmp_path):
    from xleval.io import read_table

    target = tmp_path / "board.tsv"
    _board(cli, tsv_safe_table, "--format", "tsv", "-o", target)
    expected = {PLAIN, *(n for n in NAMES.values() if "\t" not in n and "\n" not in n)}
    assert set(read_table(target)["system"]) == expected
    assert set(pd.read_csv(target, sep="\t", dtype=str, keep_default_na=False)["system"]) == expected


@pytest.mark.parametrize("kind", ["tab", "newline"])
def test_leaderboard_tsv_file_refuses_a_name_tsv_cannot_hold(cli, tmp_path, kind):
    source = tmp_path / "in.jsonl"
    _table().query("system in @keep", local_dict={"keep": [PLAIN, NAMES[kind]]}).to_json(
        source, orient="records", lines=True)
    target = tmp_path / "board.tsv"
    rc, _, err = cli("leaderboard", source, "--score", "score", "--n-resamples", "20", "--format", "tsv", "-o", target)
    assert rc == 2 and len(err.splitlines()) == 1 and "--format json" in err and "Traceback" not in err
    assert not target.exists() and not list(tmp_path.glob(".board.tsv*"))


# spaces a reader cannot count: at a name's ends, or in a run (a page collapses them) -------------------------

SPACED = ["A", "A ", " A", "A B", "A  B"]


@pytest.fixture(scope="module")
def spaced_table(tmp_path_factory) -> str:
    rng = np.random.default_rng(2)
    path = tmp_path_factory.mktemp("escape") / "spaced.jsonl"
    pd.DataFrame([{"lp": lp, "system": name, "seg_id": i, "score": float(rng.normal(50, 10))}
                  for lp in ("en-de", "en-fr") for name in SPACED for i in range(6)]
                 ).to_json(path, orient="records", lines=True)
    return str(path)


def test_name_rule_shows_edge_and_repeated_spaces():
    shown = [visible_controls(n, name=True) for n in SPACED]
    assert len(set(shown)) == len(SPACED) and shown[1] == "A\\x20" and shown[4] == "A\\x20\\x20B"
    assert visible_controls("A  B") == "A  B"  # prose keeps its spaces


@pytest.mark.parametrize("fmt", ["terminal", "tsv", "text-file", "html"])
def test_names_differing_by_spaces_look_different(cli, spaced_table, tmp_path, fmt):
    target = tmp_path / ("board.html" if fmt == "html" else "board.txt")
    args = {"terminal": [], "tsv": ["--format", "tsv"], "text-file": ["--format", "text", "-o", target],
            "html": ["--format", "html", "-o", target]}[fmt]
    out, _ = _board(cli, spaced_table, *args)
    text = target.read_text(encoding="utf-8") if fmt in ("text-file", "html") else out
    for edged in ("A\\x20", "\\x20A", "A\\x20\\x20B"):
        assert edged in text


def test_print_table_shows_edge_spaces(capsys):
    from xleval.cli._common import print_table

    print_table([{"system": n, "score": float(i)} for i, n in enumerate(SPACED)])
    out = capsys.readouterr().out
    assert "A\\x20" in out and "\\x20A" in out and "A\\x20\\x20B" in out


@pytest.mark.parametrize("kind", ["bidi-override", "tag", "variation-selector"])
def test_library_notes_quote_file_names_visibly(cli, tmp_path, kind):
    # the TSV quoting note ('xleval: note: FILE: read with CSV quoting ...') names the file
    rng = np.random.default_rng(0)
    source = tmp_path / f"q{CLASSES[kind]}x.tsv"
    pd.DataFrame([{"lp": lp, "system": 'say "hi"', "seg_id": i, "score": float(rng.normal(50, 10))}
                  for lp in ("en-de", "en-fr") for i in range(8)]).to_csv(source, sep="\t", index=False)
    rc, _, err = cli("calibrate", "fit", source, "--score", "score", "-o", tmp_path / "m.json")
    assert rc == 0, err
    note = next(line for line in err.splitlines() if line.startswith("xleval: note:"))
    assert CLASSES[kind] not in note and f"q{visible_controls(CLASSES[kind])}x.tsv" in note


def test_json_text_escapes_a_lone_surrogate_and_parses_back():
    from xleval._base.emit import json_text

    name = "run\udcff.jsonl"  # a file name with a byte that is not UTF-8 (sys.argv's surrogateescape)
    text = json_text({"where": name})
    assert "\udcff" not in text and "\\udcff" in text
    text.encode("utf-8")  # writable: no lone surrogate left
    assert json.loads(text)["where"] == name


def test_json_on_stdout_with_an_undecodable_file_name(cli_process, table, tmp_path):
    import os
    import shutil

    source = os.fsdecode(os.fsencode(str(tmp_path)) + b"/run\xff.jsonl")  # '...run\udcff.jsonl'
    shutil.copy(table, source)
    rc, out, err = cli_process("leaderboard", source, "--score", "score", "--n-resamples", "20", "--format", "json")
    assert rc == 0 and "Traceback" not in err, err
    assert {r["system"] for r in json.loads(out)["rows"]} == {PLAIN, *NAMES.values()}


def test_html_prose_shows_a_line_break_in_a_name():
    from xleval.report._model import Report, Section
    from xleval.report._render import render_html

    section = Section(id="s", title=f"about {NAMES['tag']}", paragraphs=("system A\nB is not system A B",),
                      warnings=(f"system {NAMES['zero-width-space']} has few rows",))
    html = render_html(Report(title=f"t{NAMES['bidi-override']}", sections=(section,)))
    assert "system A\\x0aB is not system A B" in html
    for kind in ("tag", "zero-width-space", "bidi-override"):
        _shows_every_class(html, kind)


def test_a_name_spelt_like_an_escape_never_looks_like_the_character(cli, tmp_path):
    """A backslash that would start an escape in a shown name is written twice, so the name 'a\\x09b' (a backslash,
    x09) and the name 'a<TAB>b' look different in every shown table: before, both printed as a\\x09b in the
    terminal, the HTML and TSV on standard output."""
    tab, spelt = "a\tb", "a\\x09b"
    assert visible_controls(tab, name=True) != visible_controls(spelt, name=True)
    assert visible_controls(spelt, name=True) == "a\\\\x09b" and visible_controls(tab, name=True) == "a\\x09b"
    # a backslash that starts no escape is shown as written (LaTeX, paths)
    assert visible_controls("$\\alpha$ C:\\data", name=True) == "$\\alpha$ C:\\data"
    # no two names of a small alphabet (backslashes, escape text, tabs, loose spaces) are shown alike
    import itertools

    shown: dict[str, str] = {}
    for n in range(1, 6):
        for letters in itertools.product(["\\", "x", "0", "9", " ", "\t", "u"], repeat=n):
            name = "".join(letters)
            assert shown.setdefault(visible_controls(name, name=True), name) == name
    rows = [{"lp": "en-de", "system": s, "seg_id": i, "score": float(k * 10 + i)}
            for k, s in enumerate((tab, spelt)) for i in range(6)]
    path = tmp_path / "t.jsonl"
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    for fmt in ("tsv", "text"):
        rc, out, err = cli("leaderboard", str(path), "--score", "score", "--method", "none", "--n-resamples", "20",
                           "--format", fmt)
        assert rc == 0, err
        assert "a\\x09b" in out and "a\\\\x09b" in out, out
