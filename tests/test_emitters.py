"""One JSON and one TSV emitter: names from the data (a bidi override, an invisible tag character, an
escape sequence) never reach a terminal stream as characters it would act on, and JSON written to a
file parses back to the exact names."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from xleval._base.emit import json_text, plain_text, tsv_text
from xleval._base.terminal import visible_controls

BIDI = "A\u202eB"  # a right-to-left override: what follows is shown reversed
TAG = "\U000e0041"  # TAG LATIN CAPITAL LETTER A: renders as nothing
ESC = "x\x1b[31my"
NAMES = (BIDI, TAG, ESC)
RAW = ("\u202e", "\U000e0041", "\x1b")


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"lp": lp, "system": name, "seg_id": i, "m": float(rng.normal(k, 1.0))}
            for lp in ("en-de", "en-ja") for k, name in enumerate(NAMES) for i in range(6)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("emit") / "scores.jsonl"  # JSONL holds any name exactly
    _table().to_json(path, orient="records", lines=True)
    return str(path)


def _clean(text: str) -> bool:
    return not any(c in text for c in RAW)


@pytest.mark.parametrize("fmt", ["json", "tsv", "text"])
def test_leaderboard_to_stdout_shows_escapes_never_the_characters(cli, table_path, fmt):
    rc, out, err = cli("leaderboard", table_path, "--score", "m", "--by", "lp", "--n-resamples", "20",
                       "--format", fmt)
    assert rc == 0, err
    assert _clean(out) and _clean(err)
    if fmt == "json":
        assert sorted({r["system"] for r in json.loads(out)["rows"]}) == sorted(NAMES)  # exact after parsing
    else:
        for name in NAMES:
            assert visible_controls(name) in out
    if fmt == "tsv":
        assert out.splitlines()[0].startswith("group\tsystem\t")


@pytest.mark.parametrize("fmt", ["json", "tsv", "text"])
def test_leaderboard_to_a_file_is_clean_and_json_round_trips(cli, table_path, tmp_path, fmt):
    target = tmp_path / f"board.{fmt}"
    rc, out, err = cli("leaderboard", table_path, "--score", "m", "--by", "lp", "--n-resamples", "20",
                       "--format", fmt, "-o", target)
    assert rc == 0, err
    text = target.read_text(encoding="utf-8")
    assert _clean(out) and _clean(err)
    assert _clean(text) or fmt == "tsv"  # TSV in a file is data: names exactly (issue 26; TSV has no escapes)
    if fmt == "json":
        assert sorted({r["system"] for r in json.loads(text)["rows"]}) == sorted(NAMES)
    elif fmt == "tsv":
        shown = pd.read_csv(target, sep="\t", dtype=str, keep_default_na=False)["system"]
        assert sorted(set(shown)) == sorted(NAMES)
        assert len(shown) == 6  # one line per row: nothing in a name broke a row


def test_json_text_is_valid_json_of_the_exact_values_with_escapes_in_the_text():
    payload = {"names": [*NAMES, "tab\there", "c1\x85", "zw\u200b"], BIDI: 1.5, "nan": float("nan")}
    text = json_text(payload)
    assert _clean(text) and "\x85" not in text and "\u200b" not in text
    assert "\\u202e" in text and "\\udb40\\udc41" in text  # JSON's spelling: a surrogate pair for U+E0041
    back = json.loads(text)
    assert back["names"] == payload["names"] and back[BIDI] == 1.5 and back["nan"] is None


def test_tsv_text_escapes_names_and_keeps_one_line_per_row():
    frame = pd.DataFrame({"system": [BIDI, "two\nlines", "tab\tin"], "score": [0.1, 0.2, np.nan]})
    text = tsv_text(frame, float_format=lambda v: repr(float(v)))
    assert _clean(text)
    assert text.splitlines() == ["system\tscore", "A\\u202eB\t0.1", "two\\x0alines\t0.2", "tab\\x09in\t"]


def test_plain_text_keeps_line_breaks_and_escapes_the_rest():
    assert plain_text(f"{BIDI}\n{TAG}|{ESC}") == "A\\u202eB\n\\U000e0041|x\\x1b[31my"


def test_report_json_file_round_trips_names_and_shows_escapes(cli, table_path, tmp_path):
    target = tmp_path / "report.json"
    rc, _, err = cli("report", table_path, "--score", "m", "--by", "lp", "--n-resamples", "20", "-o", target,
                     "--format", "json")
    assert rc == 0, err
    text = target.read_text(encoding="utf-8")
    assert _clean(text)
    assert set(NAMES) <= {r.get("system") for r in json.loads(text)["leaderboard"]}
