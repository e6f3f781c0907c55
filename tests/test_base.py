"""The shared primitives (xleval._base): group codes, JSON conversion, seeds."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from xleval._base import grouping
from xleval._base.grouping import group_index
from xleval._base.jsonable import to_jsonable
from xleval._base.seeding import make_rng, resolve_seed
from xleval.exceptions import InputError


def test_group_index_first_appearance_and_first_rows():
    idx = group_index(pd.DataFrame({"lp": ["de-en", "zh-en", "de-en", "zh-en"], "sys": ["A", "A", "B", "A"]}))
    assert idx.keys == [("de-en", "A"), ("zh-en", "A"), ("de-en", "B")]
    assert idx.codes.tolist() == [0, 1, 2, 1]
    assert idx.first.tolist() == [0, 1, 2]
    assert idx.counts().tolist() == [1, 2, 1]
    assert idx.labels() == ["de-en|A", "zh-en|A", "de-en|B"]


def test_overflow_guard_gives_the_same_groups(monkeypatch):
    rng = np.random.default_rng(0)
    cols = [rng.integers(0, 50, 500).astype(str) for _ in range(3)]
    direct = group_index(cols)
    monkeypatch.setattr(grouping, "_LIMIT", 10)  # force the hashing path
    guarded = group_index(cols)
    assert guarded.keys == direct.keys
    np.testing.assert_array_equal(guarded.codes, direct.codes)


def test_unused_categories_are_not_groups_and_missing_is_refused_or_kept():
    cat = pd.Series(pd.Categorical(["b", "b", "c"], categories=["a", "b", "c"]))
    idx = group_index([cat])
    assert idx.keys == [("b",), ("c",)] and idx.codes.tolist() == [0, 0, 1]
    with pytest.raises(InputError, match="row 2"):
        group_index([pd.Series(["x", None, "y"])], names=["lp"])
    kept = group_index([pd.Series(["x", None, "x"])], allow_missing=True)
    assert kept.keys == [("x",), (None,)] and kept.codes.tolist() == [0, 1, 0]


def test_to_jsonable_is_valid_strict_json():
    payload = to_jsonable({"nan": np.float64("nan"), "inf": math.inf, "i": np.int64(3), "b": np.bool_(True),
                           "arr": np.array([1.5, np.nan]), "na": pd.NA, 1: ("x", None),
                           "frame": pd.DataFrame({"a": [1.0, np.nan]})})
    assert payload == {"nan": None, "inf": None, "i": 3, "b": True, "arr": [1.5, None], "na": None, "1": ["x", None],
                       "frame": [{"a": 1.0}, {"a": None}]}
    json.dumps(payload, allow_nan=False)


def test_seeds():
    rng, seed = make_rng(7)
    assert seed == 7 and rng.integers(0, 10**9) == np.random.default_rng(7).integers(0, 10**9)
    assert make_rng(None)[1] is not None
    assert make_rng(np.random.default_rng(1))[1] is None
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(InputError, match="random_state"):
            resolve_seed(bad)


def test_lookup_table_and_hashing_paths_agree_and_late_groups_are_found(monkeypatch):
    """The dense (lookup table) and hashed combinations give the same codes, first rows and keys, also
    for groups that first appear after the prefix that is searched first, and with unused categories."""
    rng = np.random.default_rng(1)
    n = 70_000
    lang = pd.Series(pd.Categorical(rng.choice(["de", "fr"], n), categories=["de", "fr", "unused"]))
    system = rng.choice(["A", "B", "C"], n).astype(object)
    lang[n - 3] = "unused"  # a category used only near the end: found beyond the searched prefixes
    system[66_000] = "late"
    dense = group_index([lang, system])
    monkeypatch.setattr(grouping, "_DENSE", 0)
    hashed = group_index([lang, system])
    assert dense.keys == hashed.keys and "unused" in [k[0] for k in dense.keys]
    np.testing.assert_array_equal(dense.codes, hashed.codes)
    np.testing.assert_array_equal(dense.first, hashed.first)
    assert dense.first[dense.keys.index(("fr", "late") if lang[66_000] == "fr" else ("de", "late"))] == 66_000
    single = group_index([lang])
    assert single.keys == [("de",), ("fr",), ("unused",)] and single.first[2] == n - 3
