"""Review of the human-rating readers (xleval ingest, xleval.ratings) and the WMT / mt-metrics-eval layouts.

Oracles: mt-metrics-eval's own reading rules (data.py: a text line '[No translation supplied]' is
``None``, one score per system in a system-level file, a score for a system without output is refused,
'DOMAIN DOC' per line of documents/LP.docs; converters/score_mqm.py: weights given as
'severity[/category[/subcategory]]:weight' items with a chosen separator, most specific key wins), the
weights of Freitag et al. (2021) applied by hand, and counts made by hand on the tiny files written here.
"""
from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_mtme, read_mtme_system_scores, read_wmt_folder
from xleval.ratings import combine_gold, mqm_weights, score_mqm


def _mtme(root, hyp_s1=("Hallo", "Welt"), seg_scores="S1 -1\nS1 -5\nrefA 0\nrefA 0\n", docs="news d1\nnews d1\n"):
    d = root / "wmt.test"
    for sub in ("documents", "sources", "references", "system-outputs/en-de", "human-scores"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "documents" / "en-de.docs").write_text(docs)
    (d / "sources" / "en-de.txt").write_text("Hello\nWorld\n")
    (d / "references" / "en-de.refA.txt").write_text("Hallo\nWelt\n")
    (d / "system-outputs" / "en-de" / "refA.txt").write_text("Hallo\nWelt\n")
    (d / "system-outputs" / "en-de" / "S1.txt").write_text("\n".join(hyp_s1) + "\n")
    (d / "human-scores" / "en-de.mqm.seg.score").write_text(seg_scores)
    (d / "human-scores" / "en-de.mqm.sys.score").write_text("S1 -3\nrefA 0\n")
    return d


# --- ESA from JSONL: the spans are a JSON array per row, as the docs' example writes them ---------------------

def test_esa_jsonl_with_span_arrays_is_read_as_documented(tmp_path, cli):
    ratings = tmp_path / "esa.jsonl"
    rows = [{"system": "A", "seg_id": 1, "rater": "r1", "score": 80,
             "error_spans": [{"severity": "minor", "start": 0, "end": 3}, {"severity": "major", "start": 4, "end": 6}]},
            {"system": "A", "seg_id": 1, "rater": "r2", "score": 60, "error_spans": [{"severity": "minor"}]},
            {"system": "A", "seg_id": 2, "rater": "r1", "score": 90, "error_spans": []}]
    ratings.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "esa.tsv"
    rc, _, err = cli("ingest", "esa", ratings, "--lp", "en-de", "--spans", "error_spans", "-o", out)
    assert rc == 0, err
    got = pd.read_csv(out, sep="\t").set_index("seg_id")
    # by hand: segment 1 = mean(80, 60) = 70, minor spans (1 + 1) / 2 raters = 1, major (1 + 0) / 2 = 0.5
    assert got.loc[1, "esa"] == 70 and got.loc[1, "esa_minor"] == 1 and got.loc[1, "esa_major"] == 0.5
    assert got.loc[2, "esa"] == 90 and got.loc[2, "esa_minor"] == 0 and got.loc[2, "esa_major"] == 0


def test_esa_jsonl_span_arrays_under_a_mapped_column(tmp_path, cli):
    ratings = tmp_path / "esa.jsonl"
    ratings.write_text(json.dumps({"system": "A", "seg_id": 1, "rater": "r1", "score": 50,
                                   "errs": [{"severity": "major"}, {"severity": "major"}]}) + "\n")
    out = tmp_path / "esa.tsv"
    rc, _, err = cli("ingest", "esa", ratings, "--lp", "en-de", "--col", "spans=errs", "--spans", "spans", "-o", out)
    assert rc == 0, err
    assert pd.read_csv(out, sep="\t")["esa_major"].tolist() == [2.0]


# --- ingest gold --by a column other than lp: the table need not have lp ----------------------------------------

def test_ingest_gold_by_another_column_writes_the_table(tmp_path, cli):
    table = tmp_path / "t.tsv"
    table.write_text("domain\tsystem\tseg_id\tmqm\tmqm_scale\tesa\tesa_scale\n"
                     "news\tA\t1\t-5\tMQM\t\t\n"
                     "chat\tA\t2\t\t\t70\tESA\n")
    out = tmp_path / "gold.tsv"
    rc, _, err = cli("ingest", "gold", table, "--from", "mqm", "--from", "esa", "--by", "domain", "-o", out)
    assert rc == 0, err
    got = pd.read_csv(out, sep="\t")
    assert got["human"].tolist() == [-5.0, 70.0] and got["human_scale"].tolist() == ["MQM", "ESA"]


# --- combine_gold: a gold cell that is not a number is refused, not read as missing ------------------------------

def test_combine_gold_refuses_a_text_gold_cell():
    table = pd.DataFrame({"lp": ["en-de", "en-de"], "mqm": ["-1", "five"], "mqm_scale": ["MQM", "MQM"]})
    with pytest.raises(InputError, match=r"'mqm' row 2 holds 'five', not a number"):
        combine_gold(table, {"mqm": "mqm_scale"})


# --- MQM weights: categories with spaces (WMT's 'Locale convention/Name format', 'Source error') --------------------

def test_mqm_weights_for_categories_with_spaces():
    # mt-metrics-eval: score_mqm --weights 'Major:5,Minor:1,Minor/Locale convention/Name format:0.5' --weights_sep ,
    w = mqm_weights("Major:5, Minor:1, Minor/Locale convention/Name format:0.5, Major/Source error:0")
    assert w.weight("Minor", "Locale convention/Name format") == 0.5
    assert w.weight("Major", "Locale convention/Name format") == 5
    assert w.weight("Major", "Source error") == 0
    assert w.weight("Minor", "Source error") == 1
    assert mqm_weights(w.spec()).weights == w.weights       # the spec it writes reads back
    spans = pd.DataFrame({"system": ["A", "A", "A"], "seg_id": [1, 1, 2], "rater": ["r1"] * 3,
                          "severity": ["Minor", "Major", "Major"],
                          "category": ["Locale convention/Name format", "Source error", "Accuracy/Mistranslation"]})
    got = score_mqm(spans, weights=w).set_index("seg_id")["mqm"]
    assert got.to_dict() == {1: -0.5, 2: -5.0}                 # by hand: -(0.5 + 0), -(5)


def test_mqm_weights_cli_with_a_category_with_spaces(tmp_path, cli):
    spans = tmp_path / "spans.tsv"
    spans.write_text("system\tseg_id\trater\tseverity\tcategory\n"
                     "A\t1\tr1\tMinor\tLocale convention/Name format\n"
                     "A\t1\tr1\tMinor\tStyle/Awkward\n")
    out = tmp_path / "mqm.tsv"
    rc, _, err = cli("ingest", "mqm", spans, "--lp", "zh-en", "--quoting", "none", "--weights",
                     "Major:5, Minor:1, Minor/Locale convention/Name format:0.5", "-o", out)
    assert rc == 0, err
    assert pd.read_csv(out, sep="\t")["mqm"].tolist() == [-1.5]


# --- WMT folder: a file that is not an output of the pair is refused, not read as a system (or read twice) ---------

@pytest.mark.parametrize("name", ["nt.de-en.hyp.S1.de", "nt.de-en.hyp.S1.en.orig"])
def test_wmt_folder_file_not_in_the_target_language_is_refused(tmp_path, name):
    txt = tmp_path / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    (txt / "sources" / "nt.de-en.src.de").write_text("a\nb\n")
    (txt / "references" / "nt.de-en.ref.A.en").write_text("A\nB\n")
    (txt / "system-outputs" / "nt.de-en.hyp.S1.en").write_text("x\ny\n")
    (txt / "system-outputs" / name).write_text("x\ny\n")
    with pytest.raises(InputError, match=f"{name}: the file ends in .* but the target language of de-en is 'en'"):
        read_wmt_folder(tmp_path)


# --- mt-metrics-eval -------------------------------------------------------------------------------------------

def test_mtme_no_translation_line_is_missing_not_a_translation(tmp_path):
    d = _mtme(tmp_path, hyp_s1=("Hallo", "[No translation supplied]"))
    with pytest.warns(DataQualityWarning, match=r"1 line\(s\) \(first: line 2\)"):
        df = read_mtme(d, "en-de")
    s1 = df[df["system"] == "S1"].set_index("seg_id")["hypothesis"]
    assert s1[1] == "Hallo" and pd.isna(s1[2])                 # mt-metrics-eval: data._ReadTextFile -> None


def test_mtme_pair_named_twice_is_read_once(tmp_path):
    d = _mtme(tmp_path)
    df = read_mtme(d, ["en-de", "en-de"])
    assert len(df) == 4 and not df.duplicated(["lp", "system", "seg_id"]).any()


def test_mtme_system_score_file_with_two_scores_for_a_system_is_refused(tmp_path):
    d = _mtme(tmp_path)
    (d / "human-scores" / "en-de.mqm.sys.score").write_text("S1 -3\nS1 -4\nrefA 0\n")
    with pytest.raises(InputError, match="2 scores for 'S1'"):
        read_mtme_system_scores(d, "en-de")


def test_mtme_human_scores_of_a_system_without_output_are_said(tmp_path):
    d = _mtme(tmp_path, seg_scores="S1 -1\nS1 -5\nref-A 0\nref-A 0\n")
    with pytest.warns(DataQualityWarning, match="no output .* 'ref-A'"):
        df = read_mtme(d, "en-de")
    assert df.loc[df["system"] == "S1", "mqm"].tolist() == [-1.0, -5.0]


def test_mtme_documents_line_without_a_document_is_refused(tmp_path):
    d = _mtme(tmp_path, docs="news d1\nnews\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        with pytest.raises(InputError, match=r"en-de.docs: line 2: expected 'DOMAIN DOC'"):
            read_mtme(d, "en-de")


# --- ingest --into: a segment id read as 1.0 (JSON, or a float column) is the id 1 --------------------------------

def test_ratings_with_float_segment_ids_attach_to_integer_ids(tmp_path, cli):
    ratings = tmp_path / "esa.jsonl"
    ratings.write_text('{"system": "A", "seg_id": 1.0, "rater": "r1", "score": 80}\n'
                       '{"system": "A", "seg_id": 2.0, "rater": "r1", "score": 70}\n')
    table = tmp_path / "t.tsv"
    table.write_text("lp\tsystem\tseg_id\thypothesis\nen-de\tA\t1\tx\nen-de\tA\t2\ty\nen-de\tA\t3\tz\n")
    out = tmp_path / "out.tsv"
    rc, _, err = cli("ingest", "esa", ratings, "--lp", "en-de", "--into", table, "-o", out)
    assert rc == 0, err
    got = pd.read_csv(out, sep="\t")
    assert got["esa"].tolist()[:2] == [80.0, 70.0] and pd.isna(got["esa"].iloc[2])   # segment 3 is not rated


# --- score_esa: spans of a frame read from Parquet (pandas gives each list cell as a numpy array) --------------------

def test_score_esa_reads_spans_of_a_parquet_list_column(tmp_path):
    from xleval.ratings import score_esa

    path = tmp_path / "esa.parquet"
    pd.DataFrame({"lp": ["en-de"] * 2, "system": ["A", "A"], "seg_id": [1, 2], "rater": ["r1", "r1"],
                  "score": [80, 70], "spans": [[{"severity": "minor", "start": 0, "end": 2},
                                                {"severity": "major", "start": 3, "end": 5}], []]}).to_parquet(path)
    got = score_esa(pd.read_parquet(path), spans="spans").set_index("seg_id")
    assert got.loc[1, ["esa_minor", "esa_major"]].tolist() == [1.0, 1.0]       # by hand: one of each
    assert got.loc[2, ["esa_minor", "esa_major"]].tolist() == [0.0, 0.0]


# --- messages: the library names its arguments (test_set=), the command line its flags (--test-set) -------------------

def test_mtme_folder_message_names_the_test_set_flag_on_the_command_line(tmp_path, cli):
    _mtme(tmp_path)
    rc, _, err = cli("ingest", "mtme", tmp_path, "-l", "en-de", "-o", tmp_path / "out.tsv")
    assert rc == 2 and "--test-set" in err and "test_set" not in err
    with pytest.raises(InputError, match="test_set="):
        read_mtme(tmp_path, "en-de")


def test_wmt_folder_unknown_test_set_lists_the_ones_found(tmp_path):
    txt = tmp_path / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    (txt / "sources" / "nt.de-en.src.de").write_text("a\n")
    (txt / "references" / "nt.de-en.ref.A.en").write_text("A\n")
    (txt / "system-outputs" / "nt.de-en.hyp.S1.en").write_text("x\n")
    with pytest.raises(InputError, match=r"test_set='newstest2021'.* no test set of that name; found: nt"):
        read_wmt_folder(tmp_path, test_set="newstest2021", lps=["de-en"])


# --- MQM weights that could never weigh an error are refused (not every error silently 0) ---------------------------

@pytest.mark.parametrize(("weights", "fragment"), [
    ({}, "no weight is given"),
    ("Major/:5 Minor:1", "'Major/' has an empty severity or category"),
    ({"/Accuracy": 3, "Major": 5}, "'/Accuracy' has an empty severity or category"),
])
def test_mqm_weights_that_match_no_error_are_refused(weights, fragment):
    with pytest.raises(InputError, match=fragment):
        mqm_weights(weights)


def test_combine_gold_refuses_a_rated_row_without_a_scale():
    # the combined column's promise (docs/human-ratings.md): human_scale names each row's scale
    table = pd.DataFrame({"lp": ["en-de", "en-de", "de-en"], "mqm": [-1.0, -2.0, None],
                          "mqm_scale": ["MQM", None, None], "esa": [None, None, 70.0],
                          "esa_scale": [None, None, "ESA"]})
    with pytest.raises(InputError, match="row 2 has gold in 'mqm' but no scale in 'mqm_scale'"):
        combine_gold(table, {"mqm": "mqm_scale", "esa": "esa_scale"})


# --- ingest --into: document-local segment ids cannot be matched on a table without documents ------------------------

def test_into_a_table_without_doc_names_the_missing_doc_column(tmp_path, cli):
    spans = tmp_path / "spans.tsv"
    spans.write_text("system\tdoc\tseg_id\trater\tseverity\tcategory\n"
                     "A\td1\t1\tr1\tMajor\tAccuracy\nA\td2\t1\tr1\tMinor\tStyle\n")
    table = tmp_path / "t.tsv"
    table.write_text("lp\tsystem\tseg_id\thypothesis\nen-de\tA\t1\tx\n")
    rc, _, err = cli("ingest", "mqm", spans, "--lp", "en-de", "--into", table, "-o", tmp_path / "out.tsv")
    # the raters are pooled already: the repeat comes from seg_id counting within each document
    assert rc == 2 and "no doc column" in err and "pool raters" not in err


# --- ESA from Parquet: a list column of spans reads as the JSONL arrays do ------------------------------------------

def test_esa_parquet_with_a_list_column_of_spans_reads_as_jsonl_does(tmp_path, cli):
    rows = [{"system": "A", "seg_id": 1, "rater": "r1", "score": 80,
             "error_spans": [{"severity": "minor", "start": 0, "end": 3}, {"severity": "major", "start": 4, "end": 6}]},
            {"system": "A", "seg_id": 1, "rater": "r2", "score": 60, "error_spans": [{"severity": "minor"}]},
            {"system": "A", "seg_id": 2, "rater": "r1", "score": 90, "error_spans": []}]
    (tmp_path / "esa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame(rows).to_parquet(tmp_path / "esa.parquet")  # a list<struct> column, as pandas and Arrow write it
    outs = []
    for ext in ("jsonl", "parquet"):
        outs.append(tmp_path / f"{ext}.tsv")
        rc, _, err = cli("ingest", "esa", tmp_path / f"esa.{ext}", "--lp", "en-de", "--spans", "error_spans", "-o",
                         outs[-1])
        assert rc == 0, err  # Parquet: refused before ("hold lists or structs ... flatten them")
    got = pd.read_csv(outs[1], sep="\t").set_index("seg_id")
    assert got.loc[1, "esa_minor"] == 1 and got.loc[1, "esa_major"] == 0.5  # by hand, as the JSONL test above
    assert outs[0].read_text() == outs[1].read_text()
