"""WMT24's Appraise ESA exports (headerless CSV, 12 fields a row) read into the ESA ratings table.

Oracles: the organisers' own rules, applied by hand to tiny files (wmt24-news-systems humeval/merge_to_jsonl.py:
drop item type BAD, document ids ending #bad/#dup/#incomplete, ids containing -tutorial; humeval/tools.py: a
rater's repeated rating of a segment keeps the latest time_end); means over raters and span counts computed by
hand; seg_id = line_id + 1 checked by joining onto a table that `ingest wmt` itself builds from a tiny WMT folder,
where the rated row must be the one whose hypothesis is the system's line at 0-based line_id."""
from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import DataQualityWarning, InputError
from xleval.ratings import read_appraise_esa, score_esa

MINOR = json.dumps([{"start_i": 0, "end_i": 3, "severity": "minor", "error_type": None}])
MINOR_MAJOR = json.dumps([{"start_i": 0, "end_i": 3, "severity": "minor", "error_type": None},
                          {"start_i": "missing", "end_i": "missing", "severity": "major", "error_type": None}])
UNDECIDED_MAJOR = json.dumps([{"start_i": 1, "end_i": 2, "severity": "undecided", "error_type": None},
                              {"start_i": 4, "end_i": 6, "severity": "major", "error_type": None}])


def _row(user, system, line, item, src, tgt, score, doc, spans="[]", end="100.5"):
    return [user, system, str(line), item, src, tgt, str(score), doc, "False", spans, "99.0", end]


ROWS = [
    _row("u1", "ende-tutorial1", 1000001, "TGT", "eng", "ces", 0, "ende-tutorial1"),    # tutorial
    _row("u1", "sysA", 3, "TGT", "eng", "ces", 80, "docX", MINOR),                      # kept
    _row("u2", "sysA", 3, "TGT", "eng", "ces", 60, "docX", MINOR_MAJOR),                # kept
    _row("u1", "sysB", 3, "TGT", "eng", "ces", 90, "docX"),                             # kept
    _row("u1", "sysA", 4, "BAD", "eng", "ces", 10, "docX#bad", MINOR_MAJOR),            # BAD (tested first)
    _row("u1", "sysA", 7, "TGT", "eng", "ces", 50, "docY#dup"),                         # #dup
    _row("u2", "sysB", 8, "TGT", "eng", "ces", 40, "docZ#incomplete"),                  # #incomplete
    _row("u2", "sysB", 9, "TGT", "eng", "ces", 45, "docW#bad"),                         # #bad
    _row("u3", "sysA", 2, "TGT", "eng", "zho", 70, "docQ", UNDECIDED_MAJOR),            # kept
]


def _write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _words(text: str) -> str:
    return " ".join(text.split())


def test_reader_keeps_tgt_rows_of_real_documents_and_says_the_drops(tmp_path):
    path = _write(tmp_path / "wave.csv", ROWS)
    with pytest.warns(DataQualityWarning) as caught:
        table = read_appraise_esa(path)
    said = [_words(str(w.message)) for w in caught]
    assert said[0] == (f"{path}: dropped 1 attention-check rows (BAD), 1 rows of documents marked #bad, 1 rows of "
                       "documents marked #dup, 1 rows of documents marked #incomplete, 1 tutorial rows, as the WMT24 "
                       "organisers do; 4 ratings kept")
    assert "1 error spans have severity 'undecided' (rows 9)" in said[1]
    assert table[["lp", "system", "doc", "seg_id", "rater", "score"]].values.tolist() == [
        ["en-cs", "sysA", "docX", 4, "u1", 80.0],
        ["en-cs", "sysA", "docX", 4, "u2", 60.0],
        ["en-cs", "sysB", "docX", 4, "u1", 90.0],
        ["en-zh", "sysA", "docQ", 3, "u3", 70.0],
    ]


def test_scores_are_means_over_raters_with_span_counts(tmp_path):
    path = _write(tmp_path / "wave.csv", ROWS)
    with pytest.warns(DataQualityWarning):
        out = score_esa(read_appraise_esa(path), spans="spans").set_index(["lp", "system", "seg_id"])
    a, b, zh = out.loc[("en-cs", "sysA", 4)], out.loc[("en-cs", "sysB", 4)], out.loc[("en-zh", "sysA", 3)]
    # (80 + 60) / 2; minor spans (1 + 1) / 2; major (0 + 1) / 2
    assert (a["esa"], a["esa_raters"], a["esa_minor"], a["esa_major"]) == (70.0, 2, 1.0, 0.5)
    assert (b["esa"], b["esa_raters"], b["esa_minor"], b["esa_major"]) == (90.0, 1, 0.0, 0.0)
    assert (zh["esa"], zh["esa_minor"], zh["esa_major"]) == (70.0, 0.0, 1.0)  # the undecided span counts nowhere
    assert len(out) == 3


def test_a_rater_who_rated_again_keeps_the_latest_by_time_end(tmp_path):
    rows = [_row("u1", "sysA", 3, "TGT", "eng", "ces", 30, "docX", end="50.0"),   # latest, though first in the file
            _row("u1", "sysA", 3, "TGT", "eng", "ces", 80, "docX", end="20.0"),
            _row("u2", "sysA", 3, "TGT", "eng", "ces", 60, "docX", end="20.0"),
            _row("u2", "sysA", 3, "TGT", "eng", "ces", 64, "docX", end="20.0")]   # a tie: the later row
    path = _write(tmp_path / "wave.csv", rows)
    with pytest.warns(DataQualityWarning, match=r"dropped 2 earlier ones\), as their tools.py does; 2 ratings kept"):
        out = score_esa(read_appraise_esa(path))
    assert out["esa"].tolist() == [47.0]   # (30 + 64) / 2
    assert out["esa_raters"].tolist() == [2]


def test_a_file_of_only_dropped_rows_is_refused(tmp_path):
    path = _write(tmp_path / "wave.csv", [ROWS[0], ROWS[4]])
    with pytest.raises(InputError, match=r"no rating is left after dropping 1 attention-check rows \(BAD\), "
                                         r"1 tutorial rows"):
        read_appraise_esa(path)


def test_an_empty_export_says_it_has_no_rows(tmp_path):
    path = tmp_path / "wave.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"wave\.csv: no rows; give an Appraise ESA export"):
        read_appraise_esa(path)


def test_more_language_codes_can_be_mapped(tmp_path):
    path = _write(tmp_path / "wave.csv", [_row("u1", "sysA", 0, "TGT", "eng", "kor", 55, "docK")])
    with pytest.raises(InputError, match="row 1: language code 'kor' is unknown"):
        read_appraise_esa(path)
    assert read_appraise_esa(path, languages={"kor": "ko"})["lp"].tolist() == ["en-ko"]


def _wmt_folder(root):
    """A WMT txt/ folder of one pair: line 1 is the canary, as in WMT24's txt/sources/en-cs.txt."""
    txt = root / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    lines = ["canary"] + [f"s{i}" for i in range(1, 6)]
    (txt / "sources" / "wmt24.en-cs.src.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (txt / "references" / "wmt24.en-cs.ref.A.cs").write_text("\n".join(f"r{i}" for i in range(6)) + "\n",
                                                             encoding="utf-8")
    for system in ("sysA", "sysB"):
        (txt / "system-outputs" / f"wmt24.en-cs.hyp.{system}.cs").write_text(
            "\n".join(f"{system}-line{i}" for i in range(6)) + "\n", encoding="utf-8")
    return root


def test_seg_id_is_line_id_plus_one_and_joins_a_table_of_ingest_wmt(tmp_path):
    rc, _, err = run_cli("ingest", "wmt", _wmt_folder(tmp_path / "wmt"), "-o", tmp_path / "table.parquet")
    assert rc == 0, err
    ratings = _write(tmp_path / "wave.csv", ROWS[:8])    # the en-cs rows
    rc, _, err = run_cli("ingest", "esa", ratings, "--from-appraise", "--into", tmp_path / "table.parquet",
                         "-o", tmp_path / "joined.parquet")
    assert rc == 0, err
    assert "dropped 1 attention-check rows (BAD)" in _words(err)
    out = pd.read_parquet(tmp_path / "joined.parquet")
    rated = out[out["esa"].notna()].set_index("hypothesis")
    assert sorted(rated.index) == ["sysA-line3", "sysB-line3"]   # the line at 0-based line_id 3
    assert rated.loc["sysA-line3", "esa"] == 70.0
    assert rated.loc["sysA-line3", "source"] == "s3"
    assert rated.loc["sysB-line3", "esa"] == 90.0
    assert out["esa"].isna().sum() == len(out) - 2


def _bad_file(tmp_path, index, value):
    rows = [list(r) for r in ROWS[:4]]
    if value is None:
        del rows[2][index]
    else:
        rows[2][index] = value
    return _write(tmp_path / "wave.csv", rows)


BAD_CELLS = [
    (11, None, "row 3 has 11 fields; a row of an Appraise ESA export has 12"),
    (6, "101", "row 3: score '101' is not a number from 0 to 100"),
    (6, "abc", "row 3: score 'abc' is not a number from 0 to 100"),
    (6, "", "row 3: score '' is not a number"),
    (5, "xyz", "row 3: language code 'xyz' is unknown (known: ces, deu, eng,"),
    (3, "CHK", "row 3: item type 'CHK' is not TGT or BAD"),
    (2, "-1", "row 3: line_id '-1' is not a whole number from 0"),
    (9, "[{", "row 3: the error spans are not JSON"),
    (9, json.dumps([{"severity": "critical"}]), "row 3: a span has severity 'critical'"),
]


@pytest.mark.parametrize(("index", "value", "fragment"), BAD_CELLS)
def test_bad_rows_are_one_line_naming_the_row(tmp_path, index, value, fragment):
    path = _bad_file(tmp_path, index, value)
    with pytest.raises(InputError, match="^" + str(path).replace("\\", "\\\\") + ": ") as raised:
        read_appraise_esa(path)
    assert fragment in str(raised.value)
    rc, _, err = run_cli("ingest", "esa", path, "--from-appraise", "-o", tmp_path / "out.parquet")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("xleval: error: "), err
    assert fragment in lines[0]
    assert not (tmp_path / "out.parquet").exists()


def test_an_export_without_the_option_is_told_to_use_it(tmp_path):
    path = _write(tmp_path / "wave.csv", ROWS)
    rc, _, err = run_cli("ingest", "esa", path, "-o", tmp_path / "out.parquet")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert "Appraise ESA export without a header" in lines[0] and "--from-appraise" in lines[0]


def test_a_csv_with_a_header_is_not_taken_for_an_export(tmp_path):
    path = _write(tmp_path / "esa.csv", [["lp", "system", "seg_id", "rater", "score"],
                                         ["en-cs", "sysA", "1", "u1", "80"], ["en-cs", "sysA", "1", "u2", "60"]])
    rc, _, err = run_cli("ingest", "esa", path, "-o", tmp_path / "out.parquet")
    assert rc == 0, err
    assert pd.read_parquet(tmp_path / "out.parquet")["esa"].tolist() == [70.0]


@pytest.mark.parametrize("extra", [["--lp", "en-cs"], ["--spans", "spans"], ["--score", "esa_score"],
                                   ["--col", "a=score"]])
def test_options_the_export_fixes_are_refused_with_the_option(tmp_path, extra):
    path = _write(tmp_path / "wave.csv", ROWS)
    rc, _, err = run_cli("ingest", "esa", path, "--from-appraise", *extra, "-o", tmp_path / "out.parquet")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert f"{extra[0]}: --from-appraise reads the export's fields by position" in lines[0]
