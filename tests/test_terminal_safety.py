"""Names from the data are shown as they are, on every command that prints or plots them: rich markup
in a name is neither rendered nor an error, control characters (ANSI escapes, newlines, bidi
overrides) reach no terminal raw, and ``$...$`` in a name never breaks a plot (matplotlib mathtext)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from xleval._base.terminal import visible_controls
from xleval.cli import main

LINK = "[link=https://evil.example/x]totally-safe[/link]"
HOSTILE = [LINK, "[bold red]B", "x[/bold]y", "\x1b[31mred\x1b[0m", "$\\undefinedmacro$", "r\u202etl", ":warning:",
           "two\nlines", "t\U000e0041ag", "v\ufe0fs\u00ad", "sp\u00a0ace"]  # tag, variation selector, soft hyphen
RAW = ("\x1b", "\u202e", "two\nlines", "\U000e0041", "\ufe0f", "\u00ad", "\u00a0")  # never reach the terminal as such
SHOWN = ("[bold red]B", "x[/bold]y", "totally-safe[/link]", "\\x1b[31mred", "r\\u202etl", ":warning:", "two\\x0alines",
         "t\\U000e0041ag", "v\\ufe0fs\\xad", "sp\\xa0ace")


def _mt(systems, n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "hypothesis": f"the cat {i}", "reference": f"a cat {i}",
                          "score": float(rng.normal(50, 10)), "human": float(rng.normal())}
                         for lp in ("en-de", "en-fr") for s in systems for i in range(n)])


@pytest.fixture
def files(tmp_path, monkeypatch):
    _mt(HOSTILE).to_json(tmp_path / "mt.jsonl", orient="records", lines=True)
    rng = np.random.default_rng(1)
    pd.DataFrame({"lang": ["en", "de", "fr"] * 40, "correct": rng.integers(0, 2, 120),
                  "model": np.repeat(HOSTILE[:4], 30)}).to_json(tmp_path / "fair.jsonl", orient="records", lines=True)
    pd.DataFrame([{"item_id": i, "model": m, "condition": c, "correct": int(rng.random() < 0.6)}
                  for m in HOSTILE[:3] for c in ("source", "back_translated") for i in range(25)]
                 ).to_json(tmp_path / "audit.jsonl", orient="records", lines=True)
    pd.DataFrame({"lang": ["en", "de"] * 20, "model": np.repeat(HOSTILE[:2], 20), "variant": "v",
                  "item": np.tile(np.repeat(np.arange(10), 2), 2), "nll": rng.uniform(10, 50, 40),
                  "tokens": rng.integers(5, 20, 40), "chars": rng.integers(20, 80, 40),
                  "bytes": rng.integers(20, 90, 40)}
                 ).to_json(tmp_path / "intr.jsonl", orient="records", lines=True)
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", "fit", "mt.jsonl", "--score", "score", "--by", "system", "-o", "by_system.json",
                 "--format", "json"]) == 0
    return tmp_path


#: commands whose text output lists the hostile names (the others must only keep control characters out)
SHOWS_NAMES = {"calibrate fit", "calibrate fit (small groups warn by name)", "calibrate show", "diagnose",
               "calibrate fit streamed",
               "diagnose --human", "diagnose streamed", "score --corpus", "fairness gaps --model", "intrinsic metrics"}
COMMANDS = {
    "calibrate fit": "calibrate fit mt.jsonl --score score --by system -o m.json",
    "calibrate fit (small groups warn by name)":
        "calibrate fit mt.jsonl --score score --by system --min-count 100 -o m.json",
    "calibrate show": "calibrate show by_system.json",
    "calibrate fit streamed": "calibrate fit mt.jsonl --score score --by system -o m.json --chunk-size 100",
    "calibrate apply": "calibrate apply by_system.json mt.jsonl -o out.jsonl",
    "diagnose": "diagnose mt.jsonl --score score --by system --n-resamples 20",
    "diagnose --human": "diagnose mt.jsonl --score score --by system --human human --n-resamples 20",
    "diagnose streamed": "diagnose mt.jsonl --score score --by system --chunk-size 50",
    "score --corpus": "score mt.jsonl -m chrf --corpus",
    "fairness gaps --model": "fairness gaps fair.jsonl --metric correct --model model --n-resamples 20",
    "audit": "audit audit.jsonl --n-resamples 20",
    "intrinsic metrics": "intrinsic metrics intr.jsonl",
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_names_are_shown_as_they_are(name, files, capsys):
    capsys.readouterr()
    rc = main(COMMANDS[name].split())
    out = capsys.readouterr()
    text = out.out + out.err
    assert rc == 0, out.err
    assert not [raw for raw in RAW if raw in text], text[-2000:]
    if name in SHOWS_NAMES:  # the markup is shown literally: neither rendered nor (an unbalanced tag) an error
        assert "[bold red]" in text, text[-2000:]


def test_every_hostile_name_of_a_table_is_shown_exactly(files, capsys):
    capsys.readouterr()
    assert main(["calibrate", "show", "by_system.json"]) == 0
    shown = capsys.readouterr().out
    for name in SHOWN:
        assert name in shown, name


def test_json_output_escapes_terminal_controls_but_keeps_the_names(files, capsys):
    capsys.readouterr()
    assert main(["calibrate", "show", "by_system.json", "--format", "json"]) == 0
    text = capsys.readouterr().out
    assert "\u202e" not in text and "\x1b" not in text
    assert sorted(g["group"] for g in json.loads(text)["groups"]) == sorted(HOSTILE)


def test_a_name_in_an_error_message_stays_on_one_line(files, capsys):
    capsys.readouterr()
    rc = main(["calibrate", "apply", "by_system.json", "mt.jsonl", "-o", "o.jsonl", "--where-not-an-option"])
    assert rc == 2
    _mt(["A\nB\x1b[2J"]).to_json(files / "unseen.jsonl", orient="records", lines=True)
    capsys.readouterr()
    rc = main(["calibrate", "apply", "by_system.json", "unseen.jsonl", "-o", "o.jsonl", "--on-unseen", "error"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "\x1b" not in err and "A\\x0aB\\x1b[2J" in err, err


@pytest.mark.parametrize("args", [
    "report mt.jsonl --score score --by system -o r.html",
    "report mt.jsonl --score score --by system --human human -o r.html",
    "fairness gaps fair.jsonl --metric correct --model model --n-resamples 20 --report r.html",
    "audit audit.jsonl --n-resamples 20 --report r.html",
])
def test_plots_draw_names_literally(args, files, capsys):
    capsys.readouterr()
    assert main(args.split()) == 0, capsys.readouterr().err
    html = (files / "r.html").read_text()
    assert 'src="data:image/svg+xml;' in html
    assert "[bold red]B" in html and not [raw for raw in RAW if raw in html]


def test_fairness_report_names_each_model(files, capsys):
    assert main(["fairness", "gaps", "fair.jsonl", "--metric", "correct", "--model", "model", "--n-resamples", "20",
                 "--report", "r.json"]) == 0
    titles = [s["title"] for s in json.loads((files / "r.json").read_text())["sections"]]
    for model in HOSTILE[:4]:
        assert any(t.startswith(f"{model}: Fairness gaps") for t in titles), titles
    ids = [s["id"] for s in json.loads((files / "r.json").read_text())["sections"]]
    assert len(ids) == len(set(ids))


def test_a_real_terminal_stream_gets_no_escape_sequence(files):
    proc = subprocess.run([sys.executable, "-m", "xleval", "calibrate", "show", "by_system.json"], capture_output=True,
                          cwd=files)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout + proc.stderr
    assert b"[link=https://evil.example/x]totally-safe[/link]" in proc.stdout


def test_visible_controls_shows_every_reordering_or_control_character():
    assert visible_controls("a\x1b[31m\r\n\t\x7f\x85\u200e\u202e\u2066\ufeffz") == \
        "a\\x1b[31m\\x0d\\x0a\\x09\\x7f\\x85\\u200e\\u202e\\u2066\\ufeffz"
    assert visible_controls("日本語 ok") == "日本語 ok"


def test_plot_functions_return_figures_that_draw_names_literally_wherever_they_are_saved(tmp_path):
    """A Python user saving a plot directly (no report renderer) gets the names as typed, too."""
    import warnings

    from matplotlib.text import Text

    from xleval.report._plots import group_means_figure, score_distributions_figure

    names = ["$\\undefinedmacro$", "a$b$c", "日本語", "x"]
    rng = np.random.default_rng(0)
    figures = [group_means_figure(names, [1.0, 2.0, 3.0, 4.0], [0.0] * 4, score="$s$", group_label="$g$",
                                  after_span=1.0),
               score_distributions_figure(names, [rng.normal(size=20) for _ in names],
                                          [rng.normal(size=20) for _ in names], score="$s$", group_label="$g$",
                                          target_mean=0.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no glyph warning reaches the caller either
        for i, fig in enumerate(figures):
            fig.savefig(tmp_path / f"f{i}.png")
            fig.savefig(tmp_path / f"f{i}.svg", bbox_inches="tight")
            assert not any(t.get_parse_math() for t in fig.findobj(Text))


@pytest.mark.parametrize("name", ["in{x}.tsv", "in{}.tsv", "[bold]in\x1b[2J.tsv", "{task.description}.tsv"])
def test_a_progress_bar_shows_a_file_name_as_it_is(name, monkeypatch):
    """The bar's description is data: never a format string (rich's TextColumn formats its text with
    the task: '{x}' was a KeyError), never markup, no raw control characters."""
    import io

    from xleval._base.terminal import make_console
    from xleval.cli import _common

    screen = io.StringIO()
    monkeypatch.setattr(_common, "err_console", make_console(file=screen, force_terminal=True, width=200))
    with _common.progress_bar(f"scoring {name}", total=3, delay=0) as advance:
        advance(3)
    shown = screen.getvalue()
    assert visible_controls(f"scoring {name}") in shown and "\x1b[2J" not in shown
