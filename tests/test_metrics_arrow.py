"""Scoring a pyarrow Table (the Parquet-in, Parquet-out path of `xleval score`, which never imports
pandas) gives what scoring the same table as a DataFrame gives: the same scores, signatures, errors
and output table."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xleval.cli import main
from xleval.exceptions import InputError
from xleval.io import read_arrow_table, read_table, read_table_metadata
from xleval.metrics import score_frame, score_inputs

ROWS = [("en-de", "A", "Das ist ein Haus .", "Das ist ein kleines Haus ."),
        ("en-de", "B", "Dies ist Haus", "Das ist ein kleines Haus ."),
        ("en-zh", "A", "这是一个房子。", "这是一座小房子。"),
        ("en-zh", "B", "这是房子", "这是一座小房子。"),
        ("de-en", "A", "", "This is a small house ."),
        ("de-en", "B", "This is a house .", "This is a small house .")]


def _frame() -> pd.DataFrame:
    return pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "hypothesis": h, "reference": r}
                         for i, (lp, s, h, r) in enumerate(ROWS)])


def _table(df: pd.DataFrame | None = None) -> pa.Table:
    return pa.Table.from_pandas(_frame() if df is None else df, preserve_index=False)


@pytest.mark.parametrize("metrics", [["bleu", "chrf"], ["chrf++", "ter"], ["bleu"]])
def test_an_arrow_table_scores_as_its_dataframe(metrics):
    df = _frame()
    from_pandas, from_arrow = score_frame(df, metrics), score_frame(_table(df), metrics)
    assert isinstance(from_arrow.frame, pa.Table)
    assert from_arrow.signatures == from_pandas.signatures and from_arrow.metadata() == from_pandas.metadata()
    for column in from_pandas.signatures:
        np.testing.assert_array_equal(from_arrow.frame.column(column).to_numpy(), from_pandas.frame[column].to_numpy())
        np.testing.assert_array_equal(from_arrow.stats[column], from_pandas.stats[column])
    assert from_arrow.frame.column_names == list(from_pandas.frame.columns)


def test_a_score_column_already_in_the_table_is_replaced_where_it_stands():
    df = _frame().assign(bleu=-1.0, note="x")
    arrow = score_frame(_table(df), ["bleu"]).frame
    assert arrow.column_names == list(df.columns) and arrow.column("bleu").to_pylist() == \
        score_frame(df, ["bleu"]).frame["bleu"].tolist()


@pytest.mark.parametrize("change, message", [
    (lambda df: df.assign(hypothesis=df["hypothesis"].where(df.index != 3)), "column 'hypothesis' row 4: missing text"),
    (lambda df: df.drop(columns="hypothesis"), "no 'hypothesis' column"),
    (lambda df: df.assign(lp=df["lp"].where(df.index != 2, "xx-yy")), "row 3"),
    (lambda df: df.assign(reference_2=None, reference=df["reference"].where(df.index != 1)), "row 2: no reference"),
])
def test_an_arrow_table_is_refused_as_its_dataframe(change, message):
    df = change(_frame())
    with pytest.raises(InputError, match=message) as from_pandas:
        score_inputs(df)
    with pytest.raises(InputError) as from_arrow:
        score_inputs(_table(df))
    assert str(from_arrow.value) == str(from_pandas.value)


def test_numbers_and_categories_become_the_same_texts():
    df = _frame().assign(hypothesis=[1, 2, 3, 4, 5, 6], reference=pd.Categorical(["1", "2", "3", "x", "5", "6"]))
    assert score_inputs(_table(df))[:2] == score_inputs(df)[:2]
    assert score_inputs(_table(df))[0] == ["1", "2", "3", "4", "5", "6"]


def _run(args, capsys):
    capsys.readouterr()
    rc = main(list(args))
    return rc, capsys.readouterr()


def test_parquet_to_parquet_equals_the_pandas_path_and_keeps_what_pandas_keeps(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    df = _frame().set_index(pd.Index([f"r{i}" for i in range(len(ROWS))], name="row"))  # stored as a column
    df.to_parquet("in.parquet")
    assert "row" in pq.read_schema("in.parquet").names
    for out in ("out.parquet", "out.jsonl"):  # .jsonl goes through pandas
        rc, captured = _run(["score", "in.parquet", "-m", "bleu", "chrf", "-o", out], capsys)
        assert rc == 0, captured.err
    arrow, via_pandas = read_table("out.parquet"), read_table("out.jsonl")
    assert list(arrow.columns) == list(via_pandas.columns) == [*_frame().columns, "bleu", "chrf"]  # no index column
    for column in ("bleu", "chrf"):
        np.testing.assert_array_equal(arrow[column].to_numpy(), via_pandas[column].to_numpy())
    assert read_table_metadata("out.parquet") == read_table_metadata("out.jsonl")
    assert set(pq.read_schema("out.parquet").metadata) == {b"xleval"}


def test_parquet_to_parquet_imports_no_pandas(tmp_path):
    _frame().to_parquet(tmp_path / "in.parquet")
    script = ("import sys\nfrom xleval.cli import main\n"
              "rc = main(['score', 'in.parquet', '-m', 'bleu,chrf', '-o', 'out.parquet', '-f', 'json'])\n"
              "print(json.dumps({'rc': rc, 'pandas': 'pandas' in sys.modules}))")
    proc = subprocess.run([sys.executable, "-c", "import json\n" + script], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"rc": 0, "pandas": False}
    assert (tmp_path / "out.parquet").exists()


def test_read_arrow_table_checks_as_read_table(tmp_path):
    _frame().to_parquet(tmp_path / "t.parquet")
    (tmp_path / "t.parquet.gz").write_bytes(gzip.compress((tmp_path / "t.parquet").read_bytes()))
    assert read_arrow_table(tmp_path / "t.parquet.gz").equals(read_arrow_table(tmp_path / "t.parquet"))
    renamed = read_arrow_table(tmp_path / "t.parquet", columns={"hypothesis": "mt"}, required=["mt"])
    assert "mt" in renamed.column_names and "hypothesis" not in renamed.column_names
    _frame().iloc[:0].to_parquet(tmp_path / "empty.parquet")
    _frame().to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    for path, kwargs, message in [(tmp_path / "missing.parquet", {}, "no such file"),
                                  (tmp_path / "empty.parquet", {}, "has a header but no rows"),
                                  (tmp_path / "t.parquet", {"required": ["source"]}, r"missing required column\(s\)"),
                                  (tmp_path / "t.tsv", {}, "reads Parquet files")]:
        with pytest.raises(InputError, match=message):
            read_arrow_table(path, **kwargs)
