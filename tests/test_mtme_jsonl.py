"""``read_mtme`` / ``xleval ingest mtme`` on mt-metrics-eval folders with JSONL sources, references and
system outputs, alone and mixed with text files.

Oracle: mt-metrics-eval's own reader (data.py: ``_ReadSourceFile`` reads ``sources/LP.txt``, else
``sources/LP.jsonl`` field "source"; ``_ReadReferenceFile`` field "target"; ``_ReadSystemOutputFile`` field
"hypothesis"; ``_ReadFieldFromJsonl`` keeps each JSON string as it is, null as None, and fails on a line that is
not JSON; ``_ReadTextFile`` right-strips and reads '[No translation supplied]' as None). The expected tables are
written by hand from those rules; the same folder was read with mt-metrics-eval's data.py for the values
below (source 'Hello world ' and reference 'Gut ' unstripped, sys2.txt stripped). Two deliberate differences,
said in the module docstring: '[No translation supplied]' in JSONL is read as null too (mt-metrics-eval keeps the
string), and a system with both a .txt and a .jsonl file is refused (mt-metrics-eval keeps the last listed).
"""
from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_mtme


def _folder(root):
    """A test set of 3 segments: JSONL source, JSONL refA, text refB, a JSONL and a text system, refA as a system."""
    d = root / "wmt.x"
    for sub in ("documents", "sources", "references", "system-outputs/en-de", "human-scores"):
        (d / sub).mkdir(parents=True)
    (d / "documents" / "en-de.docs").write_text("news d1\nnews d1\nweb d2\n", encoding="utf-8")
    (d / "sources" / "en-de.jsonl").write_text(
        '{"source": "Hello world "}\n{"source": "Good", "id": 2}\n{"source": "Bye"}\n', encoding="utf-8")
    (d / "references" / "en-de.refA.jsonl").write_text(
        '{"target": "Hallo Welt"}\n{"target": "Gut "}\n{"target": "Tsch\\u00fcss"}\n', encoding="utf-8")
    (d / "references" / "en-de.refB.txt").write_text("Hallo, Welt  \nGut\nTschau\n", encoding="utf-8")
    out = d / "system-outputs" / "en-de"
    (out / "refA.jsonl").write_text(
        '{"hypothesis": "Hallo Welt"}\n{"hypothesis": "Gut "}\n{"hypothesis": "Tsch\\u00fcss"}\n', encoding="utf-8")
    (out / "sys1.jsonl").write_text(
        '{"hypothesis": "Hi  world"}\n{"hypothesis": "Good "}\n{"hypothesis": "Bye"}\n', encoding="utf-8")
    (out / "sys2.txt").write_text("Hallo  Welt \nGut\nTschau\n", encoding="utf-8")
    (d / "human-scores" / "en-de.mqm.seg.score").write_text(
        "sys1\t-1\nsys1\t-2\nsys1\tNone\nsys2\t0\nsys2\t-5\nsys2\t-0.5\n", encoding="utf-8")
    return d


#: by hand: rows by system file name (refA.jsonl, sys1.jsonl, sys2.txt); JSONL strings unstripped, text stripped
EXPECTED = pd.DataFrame({
    "dataset": ["wmt.x"] * 9, "lp": ["en-de"] * 9,
    "system": ["refA"] * 3 + ["sys1"] * 3 + ["sys2"] * 3,
    "seg_id": [1, 2, 3] * 3,
    "domain": ["news", "news", "web"] * 3, "doc_id": ["d1", "d1", "d2"] * 3,
    "source": ["Hello world ", "Good", "Bye"] * 3,
    "reference": ["Hallo Welt", "Gut ", "Tschüss"] * 3,
    "hypothesis": ["Hallo Welt", "Gut ", "Tschüss", "Hi  world", "Good ", "Bye", "Hallo  Welt", "Gut", "Tschau"],
    "is_human": [True] * 3 + [False] * 6,
    "mqm": [float("nan")] * 3 + [-1.0, -2.0, float("nan"), 0.0, -5.0, -0.5],
})


def _sys1(d):
    return d / "system-outputs" / "en-de" / "sys1.jsonl"


def test_jsonl_and_text_files_mixed_read_as_mt_metrics_eval(tmp_path):
    d = _folder(tmp_path)
    df = read_mtme(d, "en-de")
    pd.testing.assert_frame_equal(df[list(EXPECTED.columns)], EXPECTED, check_dtype=False)
    # a text reference is right-stripped, as mt-metrics-eval's _ReadTextFile does
    assert read_mtme(d, "en-de", reference="refB")["reference"].tolist()[:3] == ["Hallo, Welt", "Gut", "Tschau"]


def test_jsonl_names_are_seen_by_the_lp_and_system_filters(tmp_path):
    d = _folder(tmp_path)
    df = read_mtme(d, ["en-de"], systems=["sys1"])
    assert df["system"].unique().tolist() == ["sys1"] and df["hypothesis"].tolist() == ["Hi  world", "Good ", "Bye"]
    with pytest.raises(InputError, match=r"systems='nope': .* found: refA, sys1, sys2$"):
        read_mtme(d, "en-de", systems=["nope"])
    with pytest.raises(InputError, match=r"lps='xx-yy': .* found: en-de$"):   # en-de has only sources/en-de.jsonl
        read_mtme(d, ["en-de", "xx-yy"])


def test_a_txt_source_is_read_before_a_jsonl_one_and_that_is_said(tmp_path):
    d = _folder(tmp_path)
    (d / "sources" / "en-de.txt").write_text("From text  \nB\nC\n", encoding="utf-8")
    with pytest.warns(DataQualityWarning, match=r"en-de\.jsonl: not read: en-de\.txt is the source of en-de"):
        df = read_mtme(d, "en-de", systems=["sys2"])
    assert df["source"].tolist() == ["From text", "B", "C"]   # mt-metrics-eval: _ReadSourceFile, stripped


def test_a_system_with_both_a_txt_and_a_jsonl_file_is_refused(tmp_path):
    d = _folder(tmp_path)
    (d / "system-outputs" / "en-de" / "sys1.txt").write_text("X\nY\nZ\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_mtme(d, "en-de")
    message = str(info.value)
    assert "\n" not in message and "system 'sys1'" in message
    assert str(_sys1(d).with_suffix(".txt")) in message and str(_sys1(d)) in message
    # a system that is not read cannot be read from the wrong file
    assert read_mtme(d, "en-de", systems=["sys2"])["hypothesis"].tolist() == ["Hallo  Welt", "Gut", "Tschau"]


def test_a_reference_with_both_a_txt_and_a_jsonl_file_is_refused_when_read(tmp_path):
    d = _folder(tmp_path)
    (d / "references" / "en-de.refA.txt").write_text("A\nB\nC\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"en-de\.refA\.txt and .*en-de\.refA\.jsonl: reference 'refA' has both"):
        read_mtme(d, "en-de")
    assert read_mtme(d, "en-de", reference="refB")["reference"].tolist()[:1] == ["Hallo, Welt"]


def test_jsonl_null_and_no_translation_mark_are_missing_text_said(tmp_path):
    d = _folder(tmp_path)
    _sys1(d).write_text('{"hypothesis": "Hi"}\n{"hypothesis": null}\n{"hypothesis": "[No translation supplied]"}\n',
                        encoding="utf-8")
    with pytest.warns(DataQualityWarning, match=r"sys1\.jsonl: 2 line\(s\) \(first: line 2\) are null"):
        df = read_mtme(d, "en-de", systems=["sys1"])
    hyp = df["hypothesis"].tolist()
    assert hyp[0] == "Hi" and pd.isna(hyp[1]) and pd.isna(hyp[2])


@pytest.mark.parametrize("line, said", [
    ('{"hypothesis": "a"', "line 2: not valid JSON"),
    ('["a"]', "line 2: expected a JSON object, got an array"),
    ('"a"', "line 2: expected a JSON object, got a string"),
    ('{"target": "a"}', "line 2: no 'hypothesis' field \\(keys: 'target'\\)"),
    ('{"hypothesis": 3}', "line 2: 'hypothesis' is a number, not a string"),
    ('{"hypothesis": true}', "line 2: 'hypothesis' is true/false, not a string"),
    ('{"hypothesis": ["a"]}', "line 2: 'hypothesis' is an array, not a string"),
    ('{"hypothesis": "a", "hypothesis": "b"}', "line 2: key 'hypothesis' occurs more than once"),
    ("   ", "line 2: blank"),
])
def test_bad_jsonl_lines_are_refused_with_file_and_line(tmp_path, line, said):
    d = _folder(tmp_path)
    _sys1(d).write_text('{"hypothesis": "a"}\n' + line + '\n{"hypothesis": "c"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="sys1\\.jsonl: " + said) as info:
        read_mtme(d, "en-de")
    assert "\n" not in str(info.value)


def test_a_blank_last_line_is_refused_not_dropped(tmp_path):
    d = _folder(tmp_path)
    (d / "references" / "en-de.refA.jsonl").write_text(
        '{"target": "a"}\n{"target": "b"}\n{"target": "c"}\n\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"en-de\.refA\.jsonl: line 4: blank"):
        read_mtme(d, "en-de")


def test_jsonl_line_count_is_checked_against_the_source(tmp_path):
    d = _folder(tmp_path)
    _sys1(d).write_text('{"hypothesis": "a"}\n{"hypothesis": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"sys1\.jsonl: 2 lines but the source has 3"):
        read_mtme(d, "en-de")


def test_cli_ingest_mtme_reads_jsonl_end_to_end(tmp_path):
    d = _folder(tmp_path)
    out = tmp_path / "out.parquet"
    r = run_cli("ingest", "mtme", d, "--lp", "en-de", "-o", out)
    assert r.exit_code == 0, r.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(out)[list(EXPECTED.columns)], EXPECTED, check_dtype=False)


def test_cli_bad_jsonl_line_is_one_line_and_exit_2(tmp_path):
    d = _folder(tmp_path)
    _sys1(d).write_text('{"hypothesis": "a"}\n{"hypothesis": 7}\n{"hypothesis": "c"}\n', encoding="utf-8")
    out = tmp_path / "out.parquet"
    r = run_cli("ingest", "mtme", d, "--lp", "en-de", "-o", out)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "sys1.jsonl: line 2" in lines[0] and not out.exists()
