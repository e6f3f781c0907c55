"""Review of xleval.scale: streamed results that must not depend on where the batches fall, messages that name
the file's rows, Dask tasks that fail with one line, and a client that holds one batch of a part at a time."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xleval.exceptions import InputError
from xleval.io import read_table
from xleval.metrics import get_metric
from xleval.scale import DaskBackend, TableBatch, score_chunked
from xleval.scale._backend import ReadSpec
from xleval.scale._chunked import _joined_batches

N = 10


def _nullable_int_table(path, null_at: int, row_group_size: int = 3) -> None:
    x = list(range(1, N + 1))
    x[null_at] = None
    pq.write_table(pa.table({"hypothesis": [f"the cat sat {i}" for i in range(N)],
                             "reference": [f"the cat sat on {i}" for i in range(N)],
                             "x": pa.array(x, pa.int64())}), path, row_group_size=row_group_size)


@pytest.mark.parametrize("null_at", [0, 8])  # in the first batch, in a late one
def test_an_integer_column_with_a_null_has_one_type_whatever_the_batches(tmp_path, cli, null_at):
    src = tmp_path / "in.parquet"
    _nullable_int_table(src, null_at)
    # the oracle: the in-memory path, which reads the whole file (one pandas dtype for the column)
    assert cli("score", src, "--metric", "chrf", "-o", tmp_path / "whole.tsv", "-q").exit_code == 0
    whole_dtype = read_table(src)["x"].dtype
    for chunk in (1, 3, 4):
        for ext in ("tsv", "parquet"):
            out = tmp_path / f"c{chunk}.{ext}"
            score_chunked([get_metric("chrf", level="sentence")], src, out, chunk_size=chunk)
            if ext == "tsv":
                assert out.read_text() == (tmp_path / "whole.tsv").read_text(), chunk
            else:
                assert pd.read_parquet(out)["x"].dtype == whole_dtype, chunk


@pytest.mark.parametrize("dtype", ["Int64", "boolean"])
def test_a_column_pandas_wrote_nullable_keeps_that_type_when_streamed(tmp_path, cli, dtype):
    """A column pandas wrote as ``Int64`` (or ``boolean``) with a null: read_table gives it that dtype (the file's
    pandas metadata says so), so the whole-file run writes ``3`` and an empty cell to TSV and an integer column to
    Parquet; a streamed run wrote ``3.0`` and a double column (it forced float64 on every batch)."""
    values = [3, None, 5, 7, 1, 2] if dtype == "Int64" else [True, None, False, True, True, False]
    frame = pd.DataFrame({"hypothesis": [f"the cat sat {i}" for i in range(6)],
                          "reference": [f"the cat sat on {i}" for i in range(6)],
                          "x": pd.array(values, dtype=dtype)})
    src = tmp_path / "in.parquet"
    frame.to_parquet(src, row_group_size=2)
    assert read_table(src)["x"].dtype == dtype  # what the whole-file run reads
    for ext in ("tsv", "parquet"):
        assert cli("score", src, "--metric", "chrf", "-o", tmp_path / f"whole.{ext}", "-q").exit_code == 0
        for extra in ((), ("--backend", "dask")) if ext == "tsv" and dtype == "Int64" else ((),):
            out = tmp_path / f"chunked.{ext}"
            result = cli("score", src, "--metric", "chrf", "-o", out, "-q", "--chunk-size", "2", *extra)
            assert result.exit_code == 0, result.stderr
            if ext == "tsv":
                text = out.read_text()
                assert text == (tmp_path / "whole.tsv").read_text(), extra
                assert [line.split("\t")[2] for line in text.splitlines()[1:3]] == (
                    ["3", ""] if dtype == "Int64" else ["True", ""])
            else:
                assert pq.read_schema(out).field("x").type == pq.read_schema(tmp_path / "whole.parquet").field(
                    "x").type == (pa.int64() if dtype == "Int64" else pa.bool_()), extra


def _jsonl(path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _rows(n: int) -> list[dict]:
    return [{"seg_id": i, "hypothesis": f"a b c {i}", "reference": f"a b d {i}"} for i in range(n)]


def test_a_batch_error_names_the_row_of_the_file(tmp_path, cli):
    rows = _rows(25)
    del rows[22]["hypothesis"]  # file row 23, in the third batch of 10
    src = tmp_path / "in.jsonl"
    _jsonl(src, rows)
    # the oracle: the in-memory path names the row of the whole file
    rc, _, whole = cli("score", src, "--metric", "chrf", "-o", tmp_path / "m.tsv")
    assert rc == 2 and "row 23" in whole
    rc, _, err = cli("score", src, "--metric", "chrf", "-o", tmp_path / "c.tsv", "--chunk-size", "10")
    assert rc == 2 and not (tmp_path / "c.tsv").exists()
    line = [x for x in err.splitlines() if "error" in x]
    assert len(line) == 1 and "rows 21-25" in line[0]
    assert re.findall(r"\brow (\d+)\b", line[0]) == ["23"], line[0]
    assert "in all" not in line[0]  # the count is the batch's


def test_file_rows_renumbers_the_rows_and_leaves_quoted_names_alone():
    from xleval.scale._readers import file_rows

    message = "column 'row 3' row 2: missing text (1 row(s) in all); \"row 4\" and the table's row 5"
    assert file_rows(message, 100) == ("column 'row 3' row 102: missing text (1 row(s) in this batch); \"row 4\" "
                                       "and the table's row 105")


def test_a_column_whose_type_changes_in_a_late_batch_is_named_with_its_row(tmp_path):
    rows = _rows(8)
    rows[5]["seg_id"] = "abc"  # numbers in the first rows, text in row 6
    src = tmp_path / "in.jsonl"
    _jsonl(src, rows)
    out = tmp_path / "out.parquet"
    with pytest.raises(InputError) as info:
        score_chunked([get_metric("chrf", level="sentence")], src, out, chunk_size=1)
    message = str(info.value)
    assert "'seg_id'" in message and "row 6" in message and str(out) in message
    assert not out.exists()


class _Part:
    """A part of several batches that logs when the client reads each one."""

    def __init__(self, frames, log):
        self.frames, self.log = frames, log

    def batches(self):
        start = 0
        for i, frame in enumerate(self.frames):
            self.log.append(("read", i))
            yield TableBatch(frame, start, i)
            start += len(frame)


class _Backend:
    def __init__(self, part):
        self.part = part

    def parts(self, spec):
        return iter([self.part])

    def map(self, func, parts, *args, small=False):
        return (func(p, *args) for p in parts)


def test_the_client_holds_one_batch_of_a_part_at_a_time():
    log: list = []
    frames = [pd.DataFrame({"hypothesis": ["a"] * 3}) for _ in range(4)]
    part = _Part(frames, log)

    def added(p):  # the task's columns, computed without reading the part here
        return [{"s": np.arange(len(f), dtype=float)} for f in p.frames]

    for i, frame in enumerate(_joined_batches(_Backend(part), ReadSpec("x.parquet", 3), added)):
        assert list(frame["s"]) == [0.0, 1.0, 2.0]
        log.append(("got", i))
    assert log == [(kind, i) for i in range(4) for kind in ("read", "got")]


# Dask: a small local cluster (worker processes: an in-process one cannot listen on loopback) ---------------
@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's start-up chatter is not ours
        backend = DaskBackend(workers=2).__enter__()
    yield backend
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backend.__exit__(None, None, None)


@pytest.mark.dask
def test_dask_parquet_parts_give_the_whole_files_dtypes(tmp_path, cluster):
    src = tmp_path / "in.parquet"
    _nullable_int_table(src, 0)
    local, dask = tmp_path / "local.tsv", tmp_path / "dask.tsv"
    score_chunked([get_metric("chrf", level="sentence")], src, local, chunk_size=N)  # one batch: the whole file
    score_chunked([get_metric("chrf", level="sentence")], src, dask, chunk_size=3, backend=cluster)
    assert dask.read_text() == local.read_text()


@pytest.mark.dask
def test_dask_bad_row_is_one_line_naming_the_file_row_and_a_real_batch(tmp_path, cluster, capfd):
    score = [0.5] * 40
    frame = pd.DataFrame({"hypothesis": [f"a b {i}" for i in range(40)], "reference": ["a b"] * 40,
                          "tgt_lang": ["de"] * 40, "score": score})
    frame.loc[33, "tgt_lang"] = None  # file row 34
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), src, row_group_size=10)
    capfd.readouterr()
    with pytest.raises(InputError) as info:
        score_chunked([get_metric("chrf", level="sentence")], src, tmp_path / "out.tsv", chunk_size=5,
                      backend=cluster)
    cluster.client.run(lambda: None)  # the workers' log lines of this run have been written
    message = str(info.value)
    batch = int(re.search(r"batch (\d+) \(rows (\d+)-(\d+)\)", message).group(1))
    assert batch < 40 // 5 and "row 34" in message, message
    # the worker processes write to this process's standard error
    logged = capfd.readouterr().err
    assert "Compute Failed" not in logged and "Traceback" not in logged, logged


@pytest.mark.parametrize("metric", [["bleu", "--tokenize", "13a"], ["chrf"]])
def test_streamed_scores_keep_the_corpus_signature_the_in_memory_path_keeps(tmp_path, cli, metric):
    """BLEU's corpus score from summed statistics has its own signature (eff:no against the sentence score's
    eff:yes): the in-memory `score` stores it (`corpus_signatures`), the streamed one did not."""
    from xleval.io import read_table_metadata

    src = tmp_path / "t.tsv"
    pd.DataFrame({"lp": "de-en", "system": "s", "seg_id": range(30),
                  "hypothesis": [f"the cat {i} sat on the mat" for i in range(30)],
                  "reference": [f"the cat {i} sat on a mat" for i in range(30)]}).to_csv(src, sep="\t", index=False)
    kept = {}
    for name, extra in (("memory", []), ("streamed", ["--chunk-size", "7"])):
        for suffix in (".tsv", ".parquet"):
            out = tmp_path / f"{name}{suffix}"
            r = cli("score", src, "--metric", *metric, *extra, "-o", out, "-q")
            assert r.exit_code == 0, r.stderr
            kept[name, suffix] = read_table_metadata(out)
    for suffix in (".tsv", ".parquet"):
        assert kept["streamed", suffix] == kept["memory", suffix]
    if metric[0] == "bleu":  # the oracle: the corpus metric's own signature
        corpus = get_metric("bleu", level="corpus", tokenize="13a", nrefs=1).signature
        assert kept["streamed", ".tsv"]["corpus_signatures"] == {"bleu": corpus} and "eff:no" in corpus
