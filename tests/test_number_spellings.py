"""A text column becomes numbers only if no two of its spellings name one number: system names, document ids
or versions such as '1.1' and '1.10', or '2' and '2.0', stay text, as written (before, they were read as
floats and merged: four systems became two, averaged over 60 segments each, without a word). The decision is
the same read whole or in batches of any size (the column-type policy's promise, docs/scale.md), and a column
of scores, whose distinct numbers are many, still becomes numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xleval.io import read_table
from xleval.io._schema import SPELLINGS_TRACKED, text_evidence, text_types
from xleval.scale import iter_batches

NAMES = ["1.1", "1.10", "2", "2.0"]


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("en-de", "en-fr"):
        for k, name in enumerate(NAMES):
            for i in range(30):
                rows.append({"lp": lp, "version": name, "seg_id": i, "doc_id": NAMES[i % 4],
                             "metric": 40 + 3 * k + rng.normal(), "human": 50 + 3 * k + rng.normal()})
    return pd.DataFrame(rows)


def test_spellings_that_name_one_number_stay_text(tmp_path):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    df = read_table(path)
    assert sorted(df["version"].unique()) == sorted(NAMES) and not pd.api.types.is_numeric_dtype(df["version"])
    assert sorted(df["doc_id"].unique()) == sorted(NAMES)
    assert df["metric"].dtype == np.float64 and df["seg_id"].dtype == np.int64  # numbers stay numbers


def test_the_leaderboard_ranks_four_systems_not_two(cli, tmp_path):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    rc, out, err = cli("leaderboard", str(path), "--score", "metric", "--system", "version", "--method", "none",
                       "--n-resamples", "20", "--format", "tsv")
    assert rc == 0, err
    board = pd.read_csv(pd.io.common.StringIO(out), sep="\t", dtype=str)
    assert sorted(board.loc[board["group"] == "en-de", "system"]) == sorted(NAMES)


@pytest.mark.parametrize("batch", [1, 7, 50, 10_000])
def test_batches_decide_as_the_whole_table_does(tmp_path, batch):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    whole = read_table(path)
    parts = pd.concat([b.frame for b in iter_batches(path, batch)], ignore_index=True)
    assert dict(parts.dtypes) == dict(whole.dtypes)
    pd.testing.assert_frame_equal(parts, whole)


def test_a_column_with_many_numbers_is_not_tracked_and_still_becomes_numbers():
    values = [f"{v:.6f}" for v in np.linspace(0, 1000, 3 * SPELLINGS_TRACKED)]  # many numbers: a score column
    cells = pd.DataFrame({"score": values + ["0.5", "0.50"]})
    types = text_types(text_evidence(cells))
    assert types == {"score": "float64"}
    few = pd.DataFrame({"score": ["0.5", "0.50", "1.0"]})
    assert text_types(text_evidence(few)) == {}  # few numbers, two spellings of one: text
