"""`calibrate fit` streamed in batches (--chunk-size, the Dask backend) says the repeated (pair, system, segment)
keys whose scores differ, in the in-memory fit's words, with its count and example (before: silent, and a table
concatenated twice counted twice in LGN's moments without a word). Oracles: the in-memory fit's warning on the same
file, and counts, examples and score ranges worked out by hand from tables built here."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xleval.calibration import LGN
from xleval.exceptions import RepeatedKeysWarning
from xleval.scale import fit_chunked

FIX = ("each row counts as a segment of its own (a table concatenated twice, or two runs of one system): remove the "
       "duplicates")


def _base() -> pd.DataFrame:
    """2 pairs x 2 systems x 10 segments; chrf = seg_id + 0.25 (sysB) + 20 (en-fr): every key once."""
    rows = [{"lp": lp, "system": sys, "seg_id": seg, "chrf": seg + 0.25 * s + 20.0 * p}
            for p, lp in enumerate(("en-de", "en-fr")) for s, sys in enumerate(("sysA", "sysB")) for seg in range(10)]
    return pd.DataFrame(rows)


def _repeated() -> pd.DataFrame:
    """The base table and five more rows (so they fall in other batches than their first rows at 7 a batch):
    ('en-fr', 'sysB', 4) again at 99 (first 24.25) and ('en-de', 'sysB', 7) again at 0.5 and 3 (first 7.25): two
    keys whose scores differ, the smaller ('en-de' < 'en-fr') from 0.5 to 7.25. ('en-de', 'sysA', 2) again with
    its own score (2) and ('en-de', 'sysA', 9) again without a score: silent, as in memory."""
    extra = pd.DataFrame([("en-fr", "sysB", 4, 99.0), ("en-de", "sysB", 7, 0.5), ("en-de", "sysA", 2, 2.0),
                          ("en-de", "sysA", 9, np.nan), ("en-de", "sysB", 7, 3.0)], columns=_base().columns)
    return pd.concat([_base(), extra], ignore_index=True)


EXPECTED = (f"2 (lp, system, seg_id) key(s) repeat with different scores in 'chrf' (e.g. ('en-de', 'sysB', 7): 0.5 "
            f"to 7.25); {FIX}")


def _write(df: pd.DataFrame, path) -> str:
    if str(path).endswith(".parquet"):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=7)
    else:
        df.to_csv(path, sep="\t", index=False, na_rep="")
    return str(path)


def _repeats(cli, path, *options: str) -> list[str]:
    """The repeated-key warnings `calibrate fit` gives for ``path`` (JSON output)."""
    rc, out, err = cli("calibrate", "fit", path, "--score", "chrf", "--method", "lgn", "--probe", "0",
                       "-o", f"{path}.json", "--format", "json", *options)
    assert rc == 0, err
    return [w for w in json.loads(out)["warnings"] if "key(s) repeat" in w]


@pytest.mark.parametrize("name", ["t.tsv", "t.parquet"])
def test_streamed_fit_says_the_in_memory_warning(cli, tmp_path, name):
    path = _write(_repeated(), tmp_path / name)
    in_memory = _repeats(cli, path)
    assert in_memory == [EXPECTED]  # the oracle agrees with the hand count
    for size in ("7", "1", "2", "1000"):
        assert _repeats(cli, path, "--chunk-size", size) == in_memory, size


def test_equal_repeats_and_nan_scores_say_nothing(cli, tmp_path):
    df = _base()
    twice = pd.concat([df, df, df.assign(chrf=np.nan), df.assign(chrf=np.inf)], ignore_index=True)
    path = _write(twice, tmp_path / "twice.tsv")
    assert _repeats(cli, path) == []
    assert _repeats(cli, path, "--chunk-size", "7") == []


def test_a_table_without_seg_id_is_not_checked(cli, tmp_path):
    df = _repeated().drop(columns="seg_id")  # every (lp, system) repeats with different scores: no segment key
    path = _write(df, tmp_path / "noseg.parquet")
    assert _repeats(cli, path) == []
    assert _repeats(cli, path, "--chunk-size", "7") == []


def test_doc_id_is_part_of_the_key_and_the_pair_comes_from_the_codes(cli, tmp_path):
    """seg_id 1 of two documents is two segments; (doc d2, seg 1) of en-de sysA twice, at 5 and 6, is one key.
    The table has src_lang and tgt_lang only: the pair is the lp derived from them, as in memory."""
    df = pd.DataFrame({"src_lang": ["en"] * 6, "tgt_lang": ["de"] * 6, "system": ["sysA"] * 6,
                       "doc_id": ["d1", "d2", "d1", "d2", "d3", "d2"], "seg_id": [1, 1, 2, 2, 1, 1],
                       "chrf": [1.0, 5.0, 3.0, 4.0, 9.0, 6.0]})
    path = _write(df, tmp_path / "docs.tsv")
    expected = [f"1 (lp, system, doc_id, seg_id) key(s) repeat with different scores in 'chrf' (e.g. "
                f"('en-de', 'sysA', 'd2', 1): 5 to 6); {FIX}"]
    assert _repeats(cli, path) == expected
    assert _repeats(cli, path, "--chunk-size", "2") == expected


def test_every_key_of_a_second_run_counts_once(tmp_path):
    """Two runs of one system: the 10 keys of en-de sysA again, each with a new score; the library warns once."""
    df = _base()
    again = df[(df["lp"] == "en-de") & (df["system"] == "sysA")].assign(chrf=lambda d: d["chrf"] + 100)
    path = _write(pd.concat([df, again], ignore_index=True), tmp_path / "runs.parquet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_chunked(LGN(by="lp", score="chrf", min_count=1), path, chunk_size=3)
    said = [str(w.message) for w in caught if issubclass(w.category, RepeatedKeysWarning)]
    assert said == [f"10 (lp, system, seg_id) key(s) repeat with different scores in 'chrf' (e.g. "
                    f"('en-de', 'sysA', 0): 0 to 100); {FIX}"]


def test_a_hash_shared_by_two_keys_names_a_real_repeat_or_nothing(tmp_path, monkeypatch):
    """Every key given one hash (what a collision does to two keys): the candidates are checked on their values.
    ('en-de', 'sysA', 0) .. are single rows; only ('en-fr', 'sysB', 4) repeats, at 24.25 and 99."""
    from xleval.scale import _keys

    monkeypatch.setattr(_keys, "hash_keys", lambda rows, key: np.zeros(len(rows), dtype=np.uint64))
    one = _base()
    path = _write(pd.concat([one, pd.DataFrame([("en-fr", "sysB", 4, 99.0)], columns=one.columns)]), tmp_path / "c.tsv")
    with pytest.warns(RepeatedKeysWarning) as caught:
        fit_chunked(LGN(by="lp", score="chrf", min_count=1), path, chunk_size=7)
    # the count is the hashes' (one): a shared hash cannot make it smaller than the real keys' here
    assert [str(w.message) for w in caught] == [f"1 (lp, system, seg_id) key(s) repeat with different scores in "
                                                f"'chrf' (e.g. ('en-fr', 'sysB', 4): 24.25 to 99); {FIX}"]
    path = _write(one, tmp_path / "none.tsv")  # no key repeats: the shared hash's scores differ, no real key's do
    with warnings.catch_warnings():
        warnings.simplefilter("error", RepeatedKeysWarning)
        fit_chunked(LGN(by="lp", score="chrf", min_count=1), path, chunk_size=7)


@pytest.mark.dask
def test_the_dask_backend_says_the_same(cli, tmp_path):
    pytest.importorskip("distributed")
    parquet = _write(_repeated(), tmp_path / "t.parquet")  # 7-row row groups: the workers read their parts
    tsv = _write(_repeated(), tmp_path / "t.tsv")  # the client reads the batches and ships them
    assert _repeats(cli, parquet, "--backend", "dask", "--workers", "2", "--chunk-size", "7") == [EXPECTED]
    from xleval.scale import DaskBackend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # distributed's start-up chatter is not ours
        backend = DaskBackend(workers=2).__enter__()
    try:
        with pytest.warns(RepeatedKeysWarning) as caught:
            fit_chunked(LGN(by="lp", score="chrf", min_count=1), tsv, chunk_size=7, backend=backend)
        assert [str(w.message) for w in caught] == [EXPECTED]
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            backend.__exit__(None, None, None)
