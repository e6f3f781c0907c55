"""WMT segment-level DA files (``ad-seg-scores-XX-YY.csv``) placed on the txt lines of a WMT folder.

Oracles: a tiny folder whose SID -> line mapping is worked out by hand below, and the shared WMT21 data, whose
curators mapped every judged row's DA SID to its txt line and verified the mapping (``$XLEVAL_DATA/README.md``,
section 1, "How DA rows were matched").
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import attach_wmt_da, da_sid_lines, read_wmt_da, read_wmt_folder, wmt_xml_documents

# Documents in FILE order (not sorted): z-doc lines 1-2, a-doc line 3, m-doc lines 4-5.
DOCS = [("z-doc", 2), ("a-doc", 1), ("m-doc", 2)]
# Sorted by id as text: a-doc, m-doc, z-doc, so SID 1 = a-doc/1 = line 3, SID 2 = m-doc/1 = line 4,
# SID 3 = m-doc/2 = line 5, SID 4 = z-doc/1 = line 1, SID 5 = z-doc/2 = line 2.
SORTED_LINE = {1: 3, 2: 4, 3: 5, 4: 1, 5: 2}

DA = ("SYS SID RAW.SCR Z.SCR N\n"
      "sysA.3 1 80 0.5 2\n"          # sysA, line 3
      "sysA.3 4 20 -1.0 1   \n"      # sysA, line 1 (trailing spaces)
      "sysB.0 5 60 0.1 3\n"          # sysB, line 2
      "HUMAN-B.0 2 90 0.9 1\n"       # a human translation: no output file, left out
      "HUMAN.0 3 95 1.0 2\n")        # likewise


def _xml(docs, system_names=("sysA", "sysB"), suite=None) -> str:
    out = ['<?xml version="1.0" encoding="utf-8"?>\n<dataset id="newstest2021">']
    for doc_id, n in docs:
        segs = "".join(f'<seg id="{i}">{doc_id} s{i}</seg>' for i in range(1, n + 1))
        hyps = "".join(f'<hyp system="{s}"><p>{segs}</p></hyp>' for s in system_names)
        kind = f' testsuite="{suite}"' if doc_id.startswith("ts-") else ""
        out.append(f'<doc id="{doc_id}"{kind}><src lang="de"><p>{segs}</p></src>'
                   f'<ref translator="A"><p>{segs}</p></ref>{hyps}</doc>')
    return "\n".join(out + ["</dataset>\n"])


def _folder(tmp_path, docs=DOCS, da=DA):
    n = sum(k for _, k in docs)
    txt = tmp_path / "wmt" / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    lines = "".join(f"line {i}\n" for i in range(1, n + 1))
    (txt / "sources" / "newstest2021.de-en.src.de").write_text(lines, encoding="utf-8")
    (txt / "references" / "newstest2021.de-en.ref.A.en").write_text(lines, encoding="utf-8")
    for system in ("sysA", "sysB"):
        (txt / "system-outputs" / f"newstest2021.de-en.hyp.{system}.en").write_text(lines, encoding="utf-8")
    (tmp_path / "wmt" / "xml").mkdir()
    (tmp_path / "wmt" / "xml" / "newstest2021.de-en.all.xml").write_text(_xml(docs), encoding="utf-8")
    (tmp_path / "da.csv").write_text(da, encoding="utf-8")
    return tmp_path / "wmt", tmp_path / "da.csv"


def test_xml_documents_in_file_order(tmp_path):
    root, _ = _folder(tmp_path)
    assert wmt_xml_documents(root / "xml" / "newstest2021.de-en.all.xml") == DOCS


def test_test_suite_documents_are_not_counted(tmp_path):
    # WMT21's xml/ holds test-suite documents (<doc testsuite="...">) that txt/ and the SIDs leave out
    root, da = _folder(tmp_path)
    with_suite = [("z-doc", 2), ("ts-b", 3), ("a-doc", 1), ("m-doc", 2)]
    (root / "xml" / "newstest2021.de-en.all.xml").write_text(_xml(with_suite, suite="tsuite-x"), encoding="utf-8")
    assert wmt_xml_documents(root / "xml" / "newstest2021.de-en.all.xml") == DOCS
    assert wmt_xml_documents(root / "xml" / "newstest2021.de-en.all.xml", testsuites=True) == with_suite
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.stderr
    _check_joined(pd.read_csv(tmp_path / "t.tsv", sep="\t"))


def test_sid_counts_documents_sorted_by_id_or_in_file_order():
    sids = [1, 2, 3, 4, 5]
    assert da_sid_lines(sids, DOCS).tolist() == [SORTED_LINE[s] for s in sids]
    assert da_sid_lines([str(s) for s in sids], DOCS).tolist() == [3, 4, 5, 1, 2]  # strings as ints
    assert da_sid_lines(sids, DOCS, order="file").tolist() == [1, 2, 3, 4, 5]


def test_wikipedia_sid_names_document_by_sorted_position_and_segment():
    # 4th dash-field: document among the sorted ids (2 = m-doc, 3 = z-doc); after the dot: segment in it
    sids = ["bn-hi-0-2-1001712.1_1", "bn-hi-0-3-1001712.2_2", "bn-hi-0-1-5.1_1"]
    assert da_sid_lines(sids, DOCS).tolist() == [4, 2, 3]
    # file order: document 2 = a-doc (line 3), document 3 = m-doc (lines 4-5)
    assert da_sid_lines(["bn-hi-0-2-9.1_1", "bn-hi-0-3-9.2_2"], DOCS, order="file").tolist() == [3, 5]


@pytest.mark.parametrize("sids, order, match", [
    ([6], "sorted", r"sids\[0\]: SID 6 is past the test set's 5 segments"),
    ([1, 0], "sorted", r"sids\[1\]: SID 0 is past"),
    (["7a"], "sorted", r"sids\[0\]: SID '7a' is neither"),
    (["bn-hi-0-4-1.1_1"], "sorted", r"document 4, past"),       # only 3 documents
    (["bn-hi-0-1-1.2_1"], "sorted", r"segment 2 of document 1"),  # a-doc has 1 segment
    ([1], "random", r"order='random'"),
])
def test_bad_sids_and_orders_are_refused(sids, order, match):
    with pytest.raises(InputError, match=match):
        da_sid_lines(sids, DOCS, order=order)


def test_read_wmt_da_rows(tmp_path):
    _, da = _folder(tmp_path)
    df = read_wmt_da(da, DOCS, lp="de-en")
    assert list(df.columns) == ["lp", "system", "seg_id", "doc_id", "human_raw", "human_z", "human_n",
                                "da_system", "da_sid"]
    assert df["system"].tolist() == ["sysA", "sysA", "sysB", "HUMAN-B", "HUMAN"]
    assert df["seg_id"].tolist() == [3, 1, 2, 4, 5]
    assert df["doc_id"].tolist() == ["a-doc", "z-doc", "z-doc", "m-doc", "m-doc"]
    assert df["human_raw"].tolist() == [80, 20, 60, 90, 95]
    assert df["human_n"].tolist() == [2, 1, 3, 1, 2]
    assert df["da_sid"].tolist() == ["1", "4", "5", "2", "3"]


def _expected():
    # (system, line) -> (raw, z, n) from the DA rows above; every other row is unjudged
    return {("sysA", 3): (80, 0.5, 2), ("sysA", 1): (20, -1.0, 1), ("sysB", 2): (60, 0.1, 3)}


def _check_joined(df):
    assert len(df) == 10  # 2 systems x 5 lines: a left join adds no row and drops none
    judged = _expected()
    for row in df.itertuples():
        raw, z, n = judged.get((row.system, row.seg_id), (math.nan, math.nan, 0))
        assert (row.human_raw == raw or (math.isnan(raw) and math.isnan(row.human_raw))), row
        assert (row.human_z == z or (math.isnan(z) and math.isnan(row.human_z))), row
        assert row.human_n == n, row


def test_attach_joins_on_lp_system_line_and_names_left_out_rows(tmp_path):
    root, da = _folder(tmp_path)
    table = read_wmt_folder(root)
    with pytest.warns(DataQualityWarning) as caught:
        df = attach_wmt_da(table, {"de-en": da}, root=root)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert "2 DA rows left out" in text and "HUMAN-B.0 (1)" in text and "HUMAN.0 (1)" in text
    _check_joined(df)
    assert df["human_n"].dtype == np.int64


def test_cli_da_option(tmp_path):
    root, da = _folder(tmp_path)
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.stderr
    said = " ".join(r.stderr.split())  # rich wraps lines at the terminal's width
    assert said.count("warning:") == 1 and "2 DA rows left out" in said and "HUMAN-B.0 (1)" in said, said
    _check_joined(pd.read_csv(tmp_path / "t.tsv", sep="\t"))


def test_cli_file_order(tmp_path):
    # order=file: SID 1 is line 1, SID 4 line 4, SID 5 line 5 (no HUMAN rows here)
    root, da = _folder(tmp_path, da="SYS SID RAW.SCR Z.SCR N\nsysA.1 1 10 0 1\nsysA.1 4 40 0 1\nsysB.2 5 50 0 1\n")
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "--da-order", "file", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0 and "warning" not in r.stderr, r.stderr
    df = pd.read_csv(tmp_path / "t.tsv", sep="\t")
    judged = df[df["human_n"] > 0]
    assert sorted(zip(judged["system"], judged["seg_id"], judged["human_raw"], strict=True)) == [
        ("sysA", 1, 10), ("sysA", 4, 40), ("sysB", 5, 50)]


def test_test_set_picks_one_of_two_xml_files(tmp_path):
    root, da = _folder(tmp_path)
    # another test set's file for the pair, with other documents: the one named by --test-set is read
    (root / "xml" / "wmttest2021.de-en.all.xml").write_text(_xml([("b", 5)]), encoding="utf-8")
    r = run_cli("ingest", "wmt", root, "--test-set", "newstest2021", "--da", f"de-en={da}", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.stderr
    _check_joined(pd.read_csv(tmp_path / "t.tsv", sep="\t"))


def _bad_da(row):
    return "SYS SID RAW.SCR Z.SCR N\nsysA.3 1 80 0.5 2\n" + row


@pytest.mark.parametrize("change, words", [
    (lambda root, da: da.write_text(_bad_da("sysB.0 6 1 0 1\n")), ["da.csv, line 3", "SID 6 is past"]),
    (lambda root, da: da.write_text(_bad_da("sysB.0 x-1 1 0 1\n")), ["da.csv, line 3", "'x-1' is neither"]),
    (lambda root, da: da.write_text(_bad_da("sysA.7 1 50 0 1\n")), ["lines 2 and 3", "'sysA' is scored twice"]),
    (lambda root, da: da.write_text("SYS SID RAW.SCR Z.SCR\nsysA.3 1 80 0.5\n"), ["da.csv", "SYS SID RAW.SCR Z.SCR N"]),
    (lambda root, da: da.write_text(_bad_da("sysB.0 2 1 0\n")), ["da.csv, line 3", "4 fields"]),
    (lambda root, da: (root / "xml" / "newstest2021.de-en.all.xml").unlink(), ["no *.de-en.all.xml"]),
    (lambda root, da: (root / "xml" / "wmttest2021.de-en.all.xml").write_text(_xml(DOCS)),
     ["several XML files for de-en", "newstest2021.de-en.all.xml", "wmttest2021.de-en.all.xml", "--test-set"]),
    (lambda root, da: (root / "xml" / "newstest2021.de-en.all.xml").write_text(_xml([("z-doc", 2), ("a-doc", 2)])),
     ["4 source segments in 2 documents", "5 lines"]),
    (lambda root, da: (root / "xml" / "newstest2021.de-en.all.xml").write_text("<dataset><doc>"),
     ["not well-formed XML"]),
    (lambda root, da: (root / "xml" / "newstest2021.de-en.all.xml").write_text('<d><doc><src/></doc></d>'),
     ["document 1 (<doc>) has no id"]),
])
def test_bad_input_is_one_line_exit_2(tmp_path, change, words):
    root, da = _folder(tmp_path)
    change(root, da)
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "-o", tmp_path / "t.tsv")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert not (tmp_path / "t.tsv").exists()


@pytest.mark.parametrize("args, words", [
    (["--da", "fr-en=DA"], ["fr-en is not a language pair read", "read: de-en"]),
    (["-l", "de-en", "--da", "de-en=DA", "--da", "de-en=DA"], ["de-en is given twice"]),
    (["--da", "DA"], ["write it as LP=FILE"]),
    (["--da-system", "SysBee=sysB"], ["no --da file is given"]),
])
def test_bad_da_option_is_one_line_exit_2(tmp_path, args, words):
    root, da = _folder(tmp_path)
    r = run_cli("ingest", "wmt", root, *[a.replace("DA", str(da)) for a in args], "-o", tmp_path / "t.tsv")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert not (tmp_path / "t.tsv").exists()


def test_wmt21_to_english_sids_match_the_curated_lines(shared_data):
    """Every judged row of the 7 to-English pairs: the SID read with documents sorted by id is the line the
    curators verified; read in file order it is not."""
    data = pd.read_parquet(shared_data("wmt21", "segments.parquet"), columns=["lp", "seg_id", "doc_id", "da_sid"])
    judged = data[data["da_sid"].notna()]
    assert sorted(judged["lp"].unique()) == ["cs-en", "de-en", "ha-en", "is-en", "ja-en", "ru-en", "zh-en"]
    for lp, rows in judged.groupby("lp"):
        lines = data[data["lp"] == lp].drop_duplicates("seg_id").sort_values("seg_id")
        assert lines["seg_id"].tolist() == list(range(1, len(lines) + 1))
        runs = lines["doc_id"].ne(lines["doc_id"].shift()).cumsum()  # a document is one run of lines
        documents = [(str(g["doc_id"].iat[0]), len(g)) for _, g in lines.groupby(runs, sort=True)]
        assert len(documents) == lines["doc_id"].nunique(), lp
        sids = rows["da_sid"].tolist()
        assert (da_sid_lines(sids, documents) == rows["seg_id"].to_numpy()).all(), lp
        assert (da_sid_lines(sids, documents, order="file") != rows["seg_id"].to_numpy()).mean() > 0.9, lp


def test_attach_adds_each_rows_document_from_the_xml(tmp_path):
    # file order: z-doc lines 1-2, a-doc line 3, m-doc lines 4-5 (DOCS), for both systems, judged or not
    root, da = _folder(tmp_path)
    with pytest.warns(DataQualityWarning):
        out = attach_wmt_da(read_wmt_folder(root), {"de-en": da}, root=root)
    by_line = dict(zip(out["seg_id"], out["doc_id"], strict=True))
    assert by_line == {1: "z-doc", 2: "z-doc", 3: "a-doc", 4: "m-doc", 5: "m-doc"}
    assert out.groupby("seg_id")["doc_id"].nunique().eq(1).all()
    # a table that has documents already keeps its own
    with pytest.warns(DataQualityWarning):
        kept = attach_wmt_da(read_wmt_folder(root).assign(doc_id="mine"), {"de-en": da}, root=root)
    assert set(kept["doc_id"]) == {"mine"}


RENAMED = ("SYS SID RAW.SCR Z.SCR N\n"
           "sysA.3 1 80 0.5 2\n"           # sysA, line 3
           "SysBee.4 5 60 0.1 3\n")        # sysB's output under another name: line 2


def test_da_systems_maps_a_da_name_onto_its_output(tmp_path):
    root, da = _folder(tmp_path, da=RENAMED)
    out = attach_wmt_da(read_wmt_folder(root), {"de-en": da}, root=root, da_systems={"SysBee": "sysB"})
    judged = out[out["human_n"] > 0].set_index(["system", "seg_id"])["human_raw"].to_dict()
    assert judged == {("sysA", 3): 80.0, ("sysB", 2): 60.0}
    with pytest.warns(DataQualityWarning, match=r"SysBee.4 \(1\)"):  # without the map: left out, named
        attach_wmt_da(read_wmt_folder(root), {"de-en": da}, root=root)


def test_da_systems_on_the_command_line(tmp_path):
    root, da = _folder(tmp_path, da=RENAMED)
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "--da-system", "SysBee=sysB", "-o", tmp_path / "t.tsv")
    assert r.exit_code == 0, r.stderr
    t = pd.read_csv(tmp_path / "t.tsv", sep="\t")
    assert t.loc[(t["system"] == "sysB") & (t["seg_id"] == 2), "human_raw"].tolist() == [60.0]
    # without it, the warning says which flag maps the name
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", "-o", tmp_path / "u.tsv")
    assert r.exit_code == 0 and "map it with --da-system)" in r.stderr and "da_systems=" not in r.stderr, r.stderr


@pytest.mark.parametrize("args, match", [
    (["--da-system", "Nope=sysB"], "--da-system maps 'Nope', a system no DA file names"),
    (["--da-system", "SysBee"], "--da-system SysBee: write it as DA_NAME=SYSTEM"),
    (["--da-system", "SysBee=sysB", "--da-system", "SysBee=sysA"], "SysBee is given twice (sysB and sysA)"),
    (["--da-system", "SysBee=sysA"], "which the de-en DA file scores under another name too"),
])
def test_bad_da_systems_are_one_line(tmp_path, args, match):
    root, da = _folder(tmp_path, da=RENAMED.replace("sysA.3 1", "sysA.3 5"))  # sysA and SysBee both on SID 5
    r = run_cli("ingest", "wmt", root, "--da", f"de-en={da}", *args, "-o", tmp_path / "t.tsv")
    assert r.exit_code == 2, r.stderr
    assert match in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "t.tsv").exists()
