"""Inputs as users have them: .gz tables and plain files, '-' for plain files, a WMT system-output
folder and the mt-metrics-eval layout (small fixtures built here)."""
from __future__ import annotations

import gzip
import io
import sys

import numpy as np
import pandas as pd
import pytest

from xleval.exceptions import InputError
from xleval.io import (
    read_mtme,
    read_mtme_system_scores,
    read_plain_files,
    read_table,
    read_wmt_folder,
)

FRAME = pd.DataFrame({"lp": ["de-en", "de-en"], "hypothesis": ["NA", ""], "reference": ["a b", "c"],
                      "human": [1.5, 2.0]})


@pytest.mark.parametrize("ext", ["tsv", "csv", "jsonl", "parquet"])
def test_gzipped_tables_read_as_the_plain_ones(tmp_path, ext):
    from xleval.io import write_table

    plain = tmp_path / f"t.{ext}"
    write_table(FRAME, plain)
    packed = tmp_path / f"t.{ext}.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    pd.testing.assert_frame_equal(read_table(packed), read_table(plain))
    assert read_table(packed)["hypothesis"].tolist() == ["NA", ""]  # text stays text


def test_a_broken_gzip_is_one_clear_error(tmp_path):
    bad = tmp_path / "t.tsv.gz"
    bad.write_bytes(b"hypothesis\nx\n")
    with pytest.raises(InputError, match="not a valid gzip"):
        read_table(bad)


def test_plain_files_gz_and_stdin(tmp_path, monkeypatch):
    (tmp_path / "h.txt.gz").write_bytes(gzip.compress(b"the cat  \nhello\n"))
    (tmp_path / "r.txt").write_text("the cat sat\nhello world\n", encoding="utf-8")
    df = read_plain_files(hypotheses=tmp_path / "h.txt.gz", references=[tmp_path / "r.txt"])
    assert df["hypothesis"].tolist() == ["the cat  ", "hello"]
    assert read_plain_files(hypotheses=tmp_path / "h.txt.gz", references=[tmp_path / "r.txt"],
                            rstrip=True)["hypothesis"].tolist() == ["the cat", "hello"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a\nb\n")))
    assert read_plain_files(hypotheses="-", references=[tmp_path / "r.txt"])["hypothesis"].tolist() == ["a", "b"]


def _wmt_folder(root):
    txt = root / "wmt" / "txt"
    for sub in ("sources", "references", "system-outputs"):
        (txt / sub).mkdir(parents=True)
    (txt / "sources" / "newstest2021.de-en.src.de").write_text("Hallo\nWelt\n", encoding="utf-8")
    (txt / "references" / "newstest2021.de-en.ref.A.en").write_text("Hello\nWorld\n", encoding="utf-8")
    (txt / "references" / "newstest2021.de-en.ref.B.en").write_text("Hi\nEarth\n", encoding="utf-8")
    (txt / "system-outputs" / "newstest2021.de-en.hyp.sys.A.en").write_text("Hello\nworld\n", encoding="utf-8")
    (txt / "system-outputs" / "newstest2021.de-en.hyp.Online-B.en").write_text("Hi\nWorld\n", encoding="utf-8")
    (txt / "sources" / "newstest2021.en-zh.src.en").write_text("Hello\n", encoding="utf-8")
    (txt / "references" / "newstest2021.en-zh.ref.A.zh").write_text("你好\n", encoding="utf-8")
    (txt / "system-outputs" / "newstest2021.en-zh.hyp.X.zh").write_text("您好\n", encoding="utf-8")
    return root / "wmt"


def test_wmt_folder(tmp_path):
    root = _wmt_folder(tmp_path)
    df = read_wmt_folder(root)
    assert len(df) == 5 and set(df["lp"]) == {"de-en", "en-zh"}
    de = df[df["lp"] == "de-en"].set_index(["system", "seg_id"])
    assert de.loc[("sys.A", 2), "hypothesis"] == "world" and de.loc[("sys.A", 2), "reference"] == "World"
    assert de.loc[("Online-B", 1), "source"] == "Hallo"
    both = read_wmt_folder(root / "txt", lps=["de-en"], all_references=True)
    assert both["reference_2"].tolist()[:2] == ["Hi", "Earth"] and set(both["lp"]) == {"de-en"}
    with pytest.raises(InputError, match="no reference 'C'"):
        read_wmt_folder(root, reference="C")
    (root / "txt" / "system-outputs" / "newstest2021.de-en.hyp.short.en").write_text("x\n", encoding="utf-8")
    with pytest.raises(InputError, match="has 1 lines but the source has 2"):
        read_wmt_folder(root, lps=["de-en"])
    with pytest.raises(InputError, match="not a WMT system-output folder"):
        read_wmt_folder(tmp_path / "nowhere")


def _mtme_folder(root):
    d = root / "mtme" / "wmt21.news"
    for sub in ("documents", "sources", "references", "system-outputs/en-de", "human-scores"):
        (d / sub).mkdir(parents=True)
    (d / "documents" / "en-de.docs").write_text("news doc1\nnews doc1\nweb doc2\n", encoding="utf-8")
    (d / "sources" / "en-de.txt").write_text("a\nb\nc\n", encoding="utf-8")
    (d / "references" / "en-de.refA.txt").write_text("A1\nA2 \nA3\n", encoding="utf-8")
    (d / "references" / "en-de.refB.txt").write_text("B1\nB2\nB3\n", encoding="utf-8")
    (d / "system-outputs" / "en-de" / "sys1.txt").write_text("s1\ns2\ns3\n", encoding="utf-8")
    (d / "system-outputs" / "en-de" / "refB.txt").write_text("B1\nB2\nB3\n", encoding="utf-8")
    (d / "human-scores" / "en-de.mqm.seg.score").write_text(
        "sys1\t-1.5\nsys1\tNone\nsys1\t0\nrefB\t0\nrefB\t-0.1\nrefB\tNone\n", encoding="utf-8")
    (d / "human-scores" / "en-de.mqm.sys.score").write_text("sys1\t-0.75\nrefB\t-0.05\n", encoding="utf-8")
    return root / "mtme"


def test_mtme_layout(tmp_path):
    root = _mtme_folder(tmp_path)
    df = read_mtme(root, "en-de", test_set="wmt21.news")
    assert len(df) == 6 and set(df["system"]) == {"sys1", "refB"}
    s1 = df[df["system"] == "sys1"]
    assert s1["reference"].tolist() == ["A1", "A2", "A3"]  # refA by default, right-stripped as mt-metrics-eval
    np.testing.assert_array_equal(s1["mqm"].to_numpy(), [-1.5, np.nan, 0.0])
    assert s1["doc_id"].tolist() == ["doc1", "doc1", "doc2"] and s1["domain"].tolist()[2] == "web"
    assert df[df["system"] == "refB"]["is_human"].all() and not s1["is_human"].any()
    assert read_mtme(root / "wmt21.news", ["en-de"], reference="refB")["reference"].iloc[0] == "B1"
    sys_scores = read_mtme_system_scores(root, "en-de", test_set="wmt21.news").set_index("system")
    assert sys_scores.loc["sys1", "mqm"] == -0.75
    (root / "wmt21.news" / "human-scores" / "en-de.bad.seg.score").write_text("sys1 x\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a number or None"):
        read_mtme(root, "en-de", test_set="wmt21.news")
