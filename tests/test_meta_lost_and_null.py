"""meta's account of the segments a metric lost, and its refusal of null keys (review of the readers, items 7 and
10(e)). The "segments kept" note named the largest count over the metrics: listed beside a complete metric, the
metric that lost segments vanished from it, and the note on clusters named the complete one instead. A null
segment read as a segment ``nan`` that "repeats", a null system as one more system: refused now, with the readers'
one message (the column, its first row, how many), as `leaderboard` refuses it."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import DataQualityWarning, InputError
from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling

FEW = Resampling(n_resamples=20, random_state=0)
QUICK = MetaStatistics(spa_permutations=20)


def _table() -> pd.DataFrame:
    """Two pairs x 4 systems x 10 segments; metric ``a`` lacks en-de s1's segments 0 and 5 and de-en s2's segment 3,
    ``b`` scores every row."""
    rng = np.random.default_rng(7)
    rows = []
    for lp in ("en-de", "de-en"):
        for q in range(4):
            for i in range(10):
                human = q + rng.normal()
                rows.append({"lp": lp, "system": f"s{q}", "seg_id": i, "human": human,
                             "a": human + rng.normal(), "b": human + rng.normal()})
    df = pd.DataFrame(rows)
    lost = (((df["lp"] == "en-de") & (df["system"] == "s1") & df["seg_id"].isin([0, 5]))
            | ((df["lp"] == "de-en") & (df["system"] == "s2") & (df["seg_id"] == 3)))
    df.loc[lost, "a"] = np.nan
    return df


def _kept(notes) -> list[str]:
    return [n for n in notes if "segments kept" in n]


@pytest.mark.parametrize("metrics", [["a"], ["a", "b"], ["b", "a"]])
def test_a_metrics_lost_segments_are_said_alike_whatever_else_is_listed(metrics):
    df = _table()
    with pytest.warns(DataQualityWarning, match=r"segments kept: de-en 9 of 10 \(a\), en-de 8 of 10 \(a\);"):
        res = meta_evaluate(df, metrics, "human", statistics=QUICK, resampling=FEW)
    (kept,) = _kept(res.notes)
    assert "(b)" not in kept  # b lost nothing: not named
    if len(metrics) > 1:  # the clusters' note gives the segments all metrics share, naming no metric as the loser
        (shared,) = [n for n in res.notes if "significance clusters compare them" in n]
        assert "(de-en 9 of 10, en-de 8 of 10)" in shared and "b 10" not in shared


def test_every_metric_that_lost_segments_is_named_with_its_own_count():
    df = _table()
    df.loc[(df["lp"] == "en-de") & (df["system"] == "s3") & (df["seg_id"] == 9), "b"] = np.nan
    with pytest.warns(DataQualityWarning, match="segments kept"):
        res = meta_evaluate(df, ["a", "b"], "human", statistics=QUICK, resampling=FEW)
    (kept,) = _kept(res.notes)
    assert "segments kept: de-en 9 of 10 (a), en-de 8 of 10 (a), en-de 9 of 10 (b);" in kept
    df.loc[(df["lp"] == "en-de") & (df["system"] == "s1") & df["seg_id"].isin([0, 5]), "b"] = np.nan
    with pytest.warns(DataQualityWarning, match="segments kept"):  # b now keeps as few as a: one entry for both
        res = meta_evaluate(df, ["a", "b"], "human", statistics=QUICK, resampling=FEW)
    assert "segments kept: de-en 9 of 10 (a), en-de 7 of 10 (b), en-de 8 of 10 (a);" in _kept(res.notes)[0]
    df = _table()
    df.loc[df["seg_id"] == 4, "human"] = np.nan  # a segment nobody judged is no loss; one judged for some systems is
    df.loc[(df["seg_id"] == 6) & (df["system"] == "s0"), "human"] = np.nan
    with pytest.warns(DataQualityWarning, match="segments kept"):
        res = meta_evaluate(df, ["a", "b"], "human", statistics=QUICK, resampling=FEW)
    assert "segments kept: de-en 7 of 9 (a), de-en 8 of 9 (b), en-de 6 of 9 (a), en-de 8 of 9 (b);" in \
        _kept(res.notes)[0]


def test_the_command_line_warns_of_the_loss_with_or_without_a_complete_metric(tmp_path):
    path = tmp_path / "nan score.tsv"
    _table().to_csv(path, sep="\t", index=False)
    said = {}
    for metrics in ("a", "a,b"):
        r = run_cli("meta", path, "--metrics", metrics, "--human", "human", "--n-resamples", "20",
                    "--spa-permutations", "20", "--format", "json")
        assert r.exit_code == 0, r.stderr
        got = json.loads(r.stdout)
        (said[metrics],) = _kept(got["notes"])
        assert said[metrics] in got["warnings"]  # said as a warning too, not only as a note
        assert "--system-scores judged takes each system's own" in said[metrics]
    assert said["a"] == said["a,b"] and "de-en 9 of 10 (a), en-de 8 of 10 (a)" in said["a"]


@pytest.mark.parametrize("column", ["seg_id", "system", "lp"])
def test_a_null_key_is_refused_as_leaderboard_refuses_it(tmp_path, column):
    df = _table().drop(columns="b")
    df[column] = df[column].astype(object)
    df.loc[[3, 17], column] = None  # rows 4 and 18
    path = tmp_path / f"null {column}.parquet"
    df.to_parquet(path, index=False)
    r = run_cli("meta", path, "--metrics", "a", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and not r.stdout
    want = f"{path}: group column {column!r} is empty at row 4 (2 row(s) in all); fill it in or drop those rows"
    assert r.stderr.strip() == f"xleval: error: {want}"
    if column == "system":  # the same words as leaderboard's, where the two commands read the same column
        board = run_cli("leaderboard", path, "--score", "a", "--n-resamples", "20")
        assert board.exit_code == 2 and board.stderr.strip() == r.stderr.strip()
    with pytest.raises(InputError, match=rf"^data: group column {column!r} is empty at row 4 \(2 row"):
        meta_evaluate(df, ["a"], "human", statistics=QUICK, resampling=FEW)


def test_an_empty_tsv_cell_of_a_key_is_refused_too(tmp_path):
    df = _table().drop(columns="b")
    df["seg_id"] = df["seg_id"].astype(object)
    df.loc[0, "seg_id"] = ""
    path = tmp_path / "empty seg.tsv"
    df.to_csv(path, sep="\t", index=False)
    r = run_cli("meta", path, "--metrics", "a", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "group column 'seg_id' is empty at row 1 (1 row(s) in all)" in r.stderr


@pytest.mark.parametrize("where", ["one document", "both documents"])
def test_a_null_doc_id_is_refused_where_segments_are_numbered_within_documents(tmp_path, where):
    """seg_id 0-4 in each of two documents: the segment is its (doc_id, seg_id). A row without its document was
    keyed ``nan#3``: merged into a document "nan" (one document), or refused as a repeated segment that is not one
    (both documents)."""
    df = _table().drop(columns="b")
    df["doc_id"] = np.where(df["seg_id"] < 5, "d1", "d2").astype(object)
    df["seg_id"] = df["seg_id"] % 5
    rows = [3, 17] if where == "one document" else [3, 8]  # row 4 (d1, seg 3); row 18 (d2) or 9 (d2, seg 3)
    df.loc[rows, "doc_id"] = None
    path = tmp_path / "null doc.parquet"
    df.to_parquet(path, index=False)
    r = run_cli("meta", path, "--metrics", "a", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and not r.stdout
    assert r.stderr.strip() == (f"xleval: error: {path}: group column 'doc_id' is empty at row 4 (2 row(s) in all); "
                                "fill it in or drop those rows")
    with pytest.raises(InputError, match=r"^data: group column 'doc_id' is empty at row 4 \(2 row"):
        meta_evaluate(df, ["a"], "human", statistics=QUICK, resampling=FEW)
    df.loc[rows, "doc_id"] = ["d1", "d2"]  # filled in: read
    with pytest.warns(DataQualityWarning):
        res = meta_evaluate(df, ["a"], "human", statistics=QUICK, resampling=FEW)
    assert any("numbered within documents" in n for n in res.notes)
