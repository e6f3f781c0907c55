"""How meta keys its rows: a segment numbered within its document (WMT25's files and many corpora) is its
(doc_id, seg_id), and the pair ``lp`` comes from ``src_lang`` and ``tgt_lang`` when the table has no ``lp`` column.
The oracle is the same table with explicit keys (a segment id unique in the pair, an ``lp`` column)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.meta import meta_evaluate
from xleval.stats import Resampling

FEW = Resampling(n_resamples=30, random_state=0)


def _table() -> pd.DataFrame:
    """Two pairs into German (en-de, cs-de) x 4 systems x 3 documents of 8 segments numbered 1..8 in each."""
    rng = np.random.default_rng(1)
    rows = []
    for src in ("en", "cs"):
        for q, system in enumerate("ABCD"):
            for doc in ("d1", "d2", "d3"):
                for i in range(1, 9):
                    human = 60 + 5 * q + rng.normal(scale=8)
                    rows.append({"src_lang": src, "tgt_lang": "de", "system": system, "doc_id": doc, "seg_id": i,
                                 "human": human, "m": human / 10 + rng.normal(scale=1.5)})
    return pd.DataFrame(rows)


def _cells(result) -> pd.DataFrame:
    return pd.DataFrame(result.to_dict()["cells"]).sort_values(["group", "metric", "statistic"]).reset_index(drop=True)


def test_segments_numbered_within_documents_are_keyed_by_document():
    df = _table()
    explicit = df.assign(seg_id=df["doc_id"] + "#" + df["seg_id"].astype(str), lp=df["src_lang"] + "-de")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = meta_evaluate(df, ["m"], "human", by="lp", resampling=FEW)
        want = meta_evaluate(explicit, ["m"], "human", by="lp", resampling=FEW)
    assert set(_cells(got)["group"]) == {"en-de", "cs-de"}  # lp derived from the two codes
    pd.testing.assert_frame_equal(_cells(got), _cells(want))
    assert any("segments are numbered within documents" in n for n in got.notes)
    assert not any("numbered within documents" in n for n in want.notes)
    with pytest.raises(Exception, match="repeat a \\(group, system, segment\\)"):  # without documents: refused
        meta_evaluate(df.drop(columns="doc_id"), ["m"], "human", by="lp", resampling=FEW)


def test_the_command_line_groups_by_the_pair_derived_from_the_two_codes(tmp_path):
    """Without --by the table (src_lang and tgt_lang, no lp) is grouped by its pairs, as with --by lp; grouped by
    tgt_lang when asked, en-de and cs-de share 'de' and each segment of a system twice: refused."""
    path = tmp_path / "two sources.tsv"
    _table().to_csv(path, sep="\t", index=False)
    args = ("meta", str(path), "--human", "human", "--metrics", "m", "--no-spa", "--n-resamples", "20",
            "--format", "json")
    given = run_cli(*args, "--by", "lp")
    assert given.exit_code == 0, given.stderr
    assert {c["group"] for c in json.loads(given.stdout)["cells"]} == {"en-de", "cs-de"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn of
        default = run_cli(*args)
    assert default.exit_code == 0, default.stderr
    assert json.loads(default.stdout)["cells"] == json.loads(given.stdout)["cells"]
    r = run_cli(*args, "--by", "tgt_lang")
    assert r.exit_code == 2 and "repeat a (group, system, segment), e.g. (de, A, " in " ".join(r.stderr.split())
    # and why: they are the segments of two pairs (the advice was to average or drop "the repeats")
    assert "the group holds several language pairs (cs-de, en-de) whose segment ids coincide, different segments of " \
           "different test sets: group by the pair (--by lp)" in " ".join(r.stderr.split())
