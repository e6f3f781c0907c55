"""xleval.scale memory and fast paths: streamed reading holds one batch of pyarrow memory whatever the
file's size; dictionary (categorical) group columns go through the code-level language path and the
streamed output equals the in-memory one; language columns normalised per distinct value equal the
row-wise normalisation."""
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from xleval.calibration import LGN, calibrate_frame, prepare_frame
from xleval.exceptions import LanguageCodeError
from xleval.io import add_language_columns, normalize_code, read_table, write_table
from xleval.scale import apply_chunked, fit_chunked, iter_batches

# the frames here mix spellings of one language on purpose ('cmn-en', 'zh-en'): the note that they become
# one group (tests/test_hardening_data.py) is not what these tests are about
pytestmark = pytest.mark.filterwarnings("ignore:.*become one group:xleval.exceptions.DataQualityWarning")

ROWS = 4_000_000


@pytest.fixture(scope="module")
def big_files(tmp_path_factory):
    """The same 4M rows (32 MB of doubles) as 160 row groups and as one row group."""
    rng = np.random.default_rng(0)
    table = pa.table({"score": rng.standard_normal(ROWS),
                      "tgt_lang": pa.array(rng.choice(["de", "en", "zh"], ROWS)).dictionary_encode()})
    root = tmp_path_factory.mktemp("memory")
    paths = {}
    for name, group in (("many", 25_000), ("one", ROWS)):
        paths[name] = root / f"{name}.parquet"
        pq.write_table(table, paths[name], row_group_size=group, compression="zstd")
    return paths


@pytest.mark.parametrize("layout", ["many", "one"])
def test_streamed_reading_holds_about_one_batch_of_arrow_memory(big_files, layout):
    # pyarrow's default pre_buffer kept every column chunk read until the file closed: a pass over
    # the file ended holding all its compressed pages (~32 MB here, ~1 GB for 100M rows)
    path = big_files[layout]
    base, peak, rows = pa.total_allocated_bytes(), 0, 0
    for batch in iter_batches(path, 20_000):
        peak = max(peak, pa.total_allocated_bytes() - base)
        rows += len(batch.frame)
    assert rows == ROWS
    assert peak < path.stat().st_size / 4, f"{peak / 1e6:.1f} MB of arrow memory held while streaming"


def dictionary_table(n=6000, seed=1):
    """Group columns stored as Parquet dictionaries, with alias spellings (eng, zho, DE) and dictionary
    entries that a row group does not use."""
    rng = np.random.default_rng(seed)
    lps = ["de-en", "eng-zho", "zh-en", "DE-en", "en-de", "ja-en"]
    lp = rng.choice(lps, n, p=[0.3, 0.2, 0.2, 0.1, 0.15, 0.05])
    lp[:1500] = "de-en"  # the first row group uses one entry of the dictionary
    score = rng.normal(50, 8, n) + pd.Series(lp).map({k: 4.0 * i for i, k in enumerate(lps)}).to_numpy()
    score[[5, 2000]] = np.nan
    df = pd.DataFrame({"row": np.arange(n), "lp": pd.Categorical(lp, categories=lps + ["fr-en"]),
                       "system": pd.Categorical(rng.choice(["A", "B"], n)), "score": score})
    return df


def test_streamed_apply_on_dictionary_columns_equals_in_memory(tmp_path):
    df = dictionary_table()
    src = tmp_path / "dict.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), src, row_group_size=1500)
    assert pa.types.is_dictionary(pq.read_schema(src).field("lp").type)
    memory = read_table(src)
    assert isinstance(memory["lp"].dtype, pd.CategoricalDtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NaN scores: warned in both paths
        model = LGN(by="lp", score="score").fit(prepare_frame(memory, ["lp"]))
        expected = calibrate_frame(model, memory)
        write_table(expected, tmp_path / "mem.parquet")
        streamed = fit_chunked(LGN(by="lp", score="score"), src, chunk_size=1000)
        apply_chunked(model, src, tmp_path / "stream.parquet", chunk_size=1000)
        apply_chunked(model, src, tmp_path / "stream.tsv", chunk_size=1000)
    assert streamed.stats_["__by__"].keys == model.stats_["__by__"].keys
    np.testing.assert_array_equal(streamed.stats_["__by__"].count, model.stats_["__by__"].count)
    assert sorted(model.stats_["__by__"].keys) == ["de-en", "en-de", "en-zh", "ja-en", "zh-en"]  # aliases merged
    got = pd.read_parquet(tmp_path / "stream.parquet")
    mem = pd.read_parquet(tmp_path / "mem.parquet")
    assert got["row"].tolist() == list(range(len(df)))
    np.testing.assert_array_equal(got["score_lgn"].to_numpy(), mem["score_lgn"].to_numpy())  # NaN == NaN here
    sources = expected["calibration_source"].tolist()
    assert got["calibration_source"].tolist() == mem["calibration_source"].tolist() == sources
    assert got["calibration_source"].dtype == mem["calibration_source"].dtype
    assert got["lp"].astype(str).tolist() == df["lp"].astype(str).tolist()  # input columns untouched
    write_table(expected, tmp_path / "mem.tsv")
    assert (tmp_path / "stream.tsv").read_bytes() == (tmp_path / "mem.tsv").read_bytes()


@pytest.mark.parametrize("columns", [("lp",), ("tgt_lang",), ("src_lang", "tgt_lang"), ("lp", "src_lang", "tgt_lang"),
                                     ("lp", "tgt_lang")])
@pytest.mark.parametrize("categorical_input", [False, True])
def test_language_columns_per_distinct_value_equal_row_wise(columns, categorical_input):
    rng = np.random.default_rng(len(columns))
    pools = {"lp": ["de-en", "eng-zho", "zh_Hant-en", "EN-DE"], "src_lang": ["en", "eng", "DE", "zh-Hans"],
             "tgt_lang": ["zh", "zho", "ja", "de"]}
    df = pd.DataFrame({c: rng.choice(pools[c], 40) for c in columns})
    if {"lp", "src_lang", "tgt_lang"} <= set(columns):  # an lp beside src/tgt must name the same pair (else refused)
        pairs = {"en": "eng", "eng": "en", "DE": "de", "zh-Hans": "zh_Hans"}
        df["lp"] = [f"{pairs[s]}-{t.upper()}" for s, t in zip(df["src_lang"], df["tgt_lang"], strict=True)]
        pools = {**pools, "lp": sorted(set(df["lp"]))}
    if categorical_input:
        df = df.astype({c: pd.CategoricalDtype(pools[c] + ["xx-unused"]) for c in columns})
    plain = add_language_columns(df)
    coded = add_language_columns(df, categorical=True)
    assert list(coded.columns) == list(plain.columns)
    for col in plain.columns:
        if col in ("lp", "src_lang", "tgt_lang"):
            assert isinstance(coded[col].dtype, pd.CategoricalDtype)
            assert (coded[col].value_counts() > 0).all()  # only keys that occur: no empty groups
            assert coded[col].astype(object).tolist() == plain[col].tolist()
        else:
            pd.testing.assert_series_equal(coded[col], plain[col])
    # the oracle: every row normalised on its own
    for side in ("src_lang", "tgt_lang"):
        if side in df.columns:
            assert plain[side].tolist() == [normalize_code(v) for v in df[side].astype(str)]
    if "lp" in df.columns and "tgt_lang" not in df.columns:  # derived from the pair
        assert plain["tgt_lang"].tolist() == [normalize_code(v.replace("_", "-").split("-")[-1])
                                              for v in df["lp"].astype(str)]


def test_unused_bad_category_is_not_an_error_and_a_used_one_names_its_row():
    ok = pd.DataFrame({"tgt_lang": pd.Categorical(["de", "de"], categories=["klingon", "de"])})
    assert add_language_columns(ok, categorical=True)["tgt_lang"].tolist() == ["de", "de"]
    bad = pd.DataFrame({"tgt_lang": pd.Categorical(["de", "klingon", "klingon"], categories=["klingon", "de"])})
    for categorical in (False, True):
        with pytest.raises(LanguageCodeError, match="column 'tgt_lang' row 2"):
            add_language_columns(bad, categorical=categorical)


def test_categorical_keys_in_order_of_first_row():
    langs = pd.Categorical(["zh", "de", "zho", "en", "de"], categories=["en", "de", "zh", "zho"])
    df = pd.DataFrame({"tgt_lang": langs})
    coded = add_language_columns(df, categorical=True)["tgt_lang"]
    assert list(coded.cat.categories) == ["zh", "de", "en"] and coded.tolist() == ["zh", "de", "zh", "en", "de"]


@pytest.mark.parametrize("by", ["lp", ["lp", "system"], "tgt_lang"])
@pytest.mark.parametrize("categorical_input", [False, True])
def test_calibration_source_per_combination_equals_row_wise_sources(by, categorical_input):
    df = dictionary_table(3000, seed=3)
    if not categorical_input:
        df = df.astype({"lp": str, "system": str})
    cols = [by] if isinstance(by, str) else by
    seen = df[~df["lp"].astype(str).isin(["ja-en", "en-de"])]  # unseen in fit: fallback to tgt_lang / pooled
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LGN(by=by, score="score", fallback=["tgt_lang", "pooled"]).fit(prepare_frame(seen, cols))
        out = calibrate_frame(model, df)
    oracle = model.sources(prepare_frame(df, cols))  # resolved row by row
    assert out["calibration_source"].tolist() == list(oracle)
    assert {"pooled", "tgt_lang"} <= set(oracle) or by == "tgt_lang"
