"""xleval.scale, single process: chunked fit equals one-pass fit, chunked apply/score are identical to
the in-memory ones, streamed output keeps every row once in order, errors leave no partial file."""
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import require_data
from xleval.calibration import LGN, calibrate_frame, prepare_frame
from xleval.diagnostics import diagnose_bias
from xleval.exceptions import DataQualityWarning, InputError, UnseenGroupWarning
from xleval.io import read_table, write_table
from xleval.scale import (
    ApplyOptions,
    apply_chunked,
    bias_chunked,
    fit_chunked,
    iter_batches,
    open_writer,
    score_chunked,
)

LPS = ["de-en", "en-de", "zh-en", "en-zh", "ja-en", "en-ha"]


def generated(n=5000, seed=0):
    """Scores with a different location and spread per language pair, a few NaN scores, a row id."""
    rng = np.random.default_rng(seed)
    lp = rng.choice(LPS, n, p=[0.3, 0.25, 0.2, 0.15, 0.07, 0.03])
    shift = pd.Series(lp).map({k: i * 7.0 for i, k in enumerate(LPS)}).to_numpy()
    score = rng.normal(50, 5 + shift / 7, n) + shift
    score[rng.choice(n, 7, replace=False)] = np.nan
    return pd.DataFrame({"row": np.arange(n), "lp": lp, "system": rng.choice(["A", "B", "C"], n), "score": score})


def assert_same_fit(chunked: LGN, full: LGN, rtol=1e-12):
    assert chunked.levels_ == full.levels_
    for level in full.levels_:
        a, b = chunked.stats_[level], full.stats_[level]
        assert a.keys == b.keys
        np.testing.assert_array_equal(a.count, b.count)
        np.testing.assert_array_equal(a.n_nonfinite, b.n_nonfinite)
        np.testing.assert_array_equal(a.min, b.min)
        np.testing.assert_array_equal(a.max, b.max)
        np.testing.assert_allclose(a.mean, b.mean, rtol=rtol, atol=0)
        np.testing.assert_allclose(a.m2, b.m2, rtol=rtol, atol=0)
        np.testing.assert_allclose(chunked.params_[level].center, full.params_[level].center, rtol=rtol)
        np.testing.assert_allclose(chunked.params_[level].scale, full.params_[level].scale, rtol=rtol)
    assert chunked.pooled_ == pytest.approx(full.pooled_, rel=rtol)


def in_memory_fit(df, **params):
    model = LGN(**params)
    by = [model.by] if isinstance(model.by, str) else list(model.by)
    return model.fit(prepare_frame(df, by))


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    df = generated()
    path = tmp_path_factory.mktemp("scale") / "gen.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=1500)
    return df, path


@pytest.mark.parametrize("chunk", [1, 50, 1000, 5000, 5042])
def test_chunked_fit_equals_fit_generated(tmp_path, chunk):
    df = generated(400 if chunk == 1 else 5000)  # pandas costs ~10 ms per batch: 1-row batches on few rows
    path = tmp_path / "g.parquet"
    df.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 400 rows: small groups are shrunk (and warned about) in both paths
        full = in_memory_fit(df, by="lp", score="score")
        chunked = fit_chunked(LGN(by="lp", score="score"), path, chunk_size=chunk)
    assert_same_fit(chunked, full)


@pytest.mark.parametrize("method", ["robust", "quantile"])
def test_chunked_sketch_methods_equal_fit_while_sketches_are_exact(table, method):
    df, path = table
    full = in_memory_fit(df, by="lp", score="score", method=method)
    chunked = fit_chunked(LGN(by="lp", score="score", method=method), path, chunk_size=700)
    assert_same_fit(chunked, full)
    frame = prepare_frame(df, ["lp"])
    np.testing.assert_array_equal(chunked.transform(frame), full.transform(frame))


def test_fit_refuses_online_options(table):
    with pytest.raises(InputError, match="decay/window"):
        fit_chunked(LGN(by="lp", score="score", decay=0.5), table[1], chunk_size=100)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "tsv", "jsonl"])
@pytest.mark.parametrize("chunk", [1000, 6000])
def test_chunked_apply_is_bit_identical_and_keeps_rows_in_order(tmp_path, table, fmt, chunk):
    df, _parquet = table
    source = tmp_path / f"in.{fmt}"
    write_table(df, source)
    model = in_memory_fit(df, by="lp", score="score")
    out = tmp_path / f"out.{fmt}"
    with pytest.warns(DataQualityWarning) as caught:  # one for the NaN scores, with the total
        result = apply_chunked(model, source, out, ApplyOptions(interval=0.9), chunk_size=chunk)
    assert len(caught) == 1 and str(caught[0].message).startswith("7 row(s) have a missing")
    got = read_table(out)
    with pytest.warns(DataQualityWarning):
        expected = calibrate_frame(model, df, interval=0.9)
    assert result.rows == len(df) and result.batches == -(-len(df) // chunk)
    assert got["row"].astype(int).tolist() == list(range(len(df)))  # every input row exactly once, in order
    for col in ("score_lgn", "score_lgn_low", "score_lgn_high"):
        np.testing.assert_array_equal(got[col].to_numpy(float), expected[col].to_numpy(float))
    assert got["calibration_source"].tolist() == expected["calibration_source"].tolist()


def test_chunk_size_one_apply(tmp_path):
    df = generated(120)  # one-row CSV batches cost ~20 ms each: 120 rows hold all 6 pairs (>= 5 rows) and 7 NaNs
    assert df["lp"].nunique() == 6 and df["score"].isna().sum() == 7
    path = tmp_path / "g.csv"
    write_table(df, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = in_memory_fit(df, by="lp", score="score")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small groups (fit) and NaN scores (apply) are warned about in both paths
        apply_chunked(model, path, tmp_path / "o.parquet", chunk_size=1)
        expected = calibrate_frame(model, df)
    got = pd.read_parquet(tmp_path / "o.parquet")
    np.testing.assert_array_equal(got["score_lgn"].to_numpy(), expected["score_lgn"].to_numpy())


def test_streamed_text_output_equals_write_table(tmp_path):
    df = generated(3000).dropna()
    model = in_memory_fit(df, by="lp", score="score")
    for fmt in ("tsv", "csv", "jsonl"):
        write_table(calibrate_frame(model, df), tmp_path / f"mem.{fmt}")
        src = tmp_path / "in.parquet"
        df.to_parquet(src)
        apply_chunked(model, src, tmp_path / f"stream.{fmt}", chunk_size=777)
        assert (tmp_path / f"stream.{fmt}").read_bytes() == (tmp_path / f"mem.{fmt}").read_bytes(), fmt


def test_unseen_groups_warned_once_with_totals(tmp_path, table):
    df, path = table
    model = in_memory_fit(df[df["lp"] != "en-ha"], by="lp", score="score")
    with pytest.warns((UnseenGroupWarning, DataQualityWarning)) as caught:  # the table has NaN scores too
        result = apply_chunked(model, path, tmp_path / "o.parquet", chunk_size=500)
    unseen = [w for w in caught if issubclass(w.category, UnseenGroupWarning)]
    n_ha = int((df["lp"] == "en-ha").sum())
    assert len(unseen) == 1 and f"{n_ha} row(s)" in str(unseen[0].message)
    assert result.calibration_source["lp"] == len(df) - n_ha
    with pytest.warns((UnseenGroupWarning, DataQualityWarning)):
        raw = apply_chunked(model, path, tmp_path / "raw.parquet", ApplyOptions(on_unseen="raw"), chunk_size=500)
    assert raw.calibration_source == {"lp": len(df) - n_ha, "raw": n_ha}
    out = pd.read_parquet(tmp_path / "raw.parquet")
    ha = out["lp"] == "en-ha"
    np.testing.assert_array_equal(out.loc[ha, "score_lgn"], out.loc[ha, "score"])
    with pytest.raises(InputError, match="cannot calibrate"):
        apply_chunked(model, path, tmp_path / "error.parquet", ApplyOptions(on_unseen="error"),
                      chunk_size=500)


def malformed_csv(tmp_path, n=120_000, bad_row=60_001, line=None):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"lp": rng.choice(["de-en", "en-de"], n), "score": rng.normal(size=n).round(4)})
    path = tmp_path / "big.csv"
    df.to_csv(path, index=False)
    lines = path.read_text().split("\n")
    lines[bad_row] = line if line is not None else lines[bad_row] + ",surplus"
    path.write_text("\n".join(lines))
    return df, path


@pytest.mark.parametrize("output", ["out.parquet", "out.tsv"])
def test_malformed_row_mid_file_names_it_and_leaves_no_output(tmp_path, output):
    df, path = malformed_csv(tmp_path)
    model = in_memory_fit(df, by="lp", score="score")
    with pytest.raises(InputError, match=r"row 60001 \(line 60002\) has 3 comma-separated fields, the header has 2"):
        apply_chunked(model, path, tmp_path / output, chunk_size=10_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv"]  # no output, no temporary file


def test_bad_number_mid_file_names_row_and_batch(tmp_path):
    df, path = malformed_csv(tmp_path, line="de-en,oops")
    model = in_memory_fit(df, by="lp", score="score")
    with pytest.raises(InputError, match=r"batch 6 \(rows 60001-70000\): column 'score' row 60001: 'oops'"):
        apply_chunked(model, path, tmp_path / "o.jsonl", chunk_size=10_000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv"]


def test_bad_json_line_and_error_in_late_batch_leave_no_output(tmp_path, table):
    df, _parquet = table
    jsonl = tmp_path / "t.jsonl"
    write_table(df.dropna(), jsonl)
    lines = jsonl.read_text().split("\n")
    lines[3000] = "{broken"
    jsonl.write_text("\n".join(lines))
    model = in_memory_fit(df, by="lp", score="score")
    with pytest.raises(InputError, match="line 3001: not valid JSON"):
        apply_chunked(model, jsonl, tmp_path / "o.parquet", chunk_size=1000)
    # a model that refuses unseen groups fails in a late batch, after earlier batches were written
    strict = in_memory_fit(df[df["lp"] != "en-ha"], by="lp", score="score", fallback=["error"])
    late = df.sort_values("lp", key=lambda s: s == "en-ha", kind="stable")
    late.to_parquet(tmp_path / "late.parquet")
    with pytest.raises(InputError, match=r"batch \d+ \(rows .*cannot calibrate"):
        apply_chunked(strict, tmp_path / "late.parquet", tmp_path / "o.parquet", chunk_size=1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.parquet", "t.jsonl"]


def test_writer_removes_temporary_file_on_error(tmp_path):
    with pytest.raises(RuntimeError), open_writer(tmp_path / "o.parquet") as writer:  # noqa: PT012 - the writer is under test
        writer.write(pd.DataFrame({"a": [1.0, 2.0]}))
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_batches_cover_the_file(tmp_path):
    df = generated(1234)
    for fmt in ("parquet", "csv", "tsv", "jsonl"):
        path = tmp_path / f"t.{fmt}"
        write_table(df, path)
        batches = list(iter_batches(path, 100, numeric=["score"]))
        assert [b.start for b in batches] == list(range(0, 1234, 100))
        got = pd.concat([b.frame for b in batches], ignore_index=True)
        assert got["row"].astype(int).tolist() == df["row"].tolist()
        np.testing.assert_array_equal(got["score"].to_numpy(), df["score"].to_numpy())


def test_bias_chunked_matches_diagnose_bias(table):
    df, path = table
    with pytest.warns(DataQualityWarning):  # NaN scores are excluded with a warning by diagnose_bias
        full = diagnose_bias(prepare_frame(df, ["lp"]), "score", "lp", n_resamples=10)
    streamed = bias_chunked(path, "score", "lp", chunk_size=333)
    assert streamed.groups["group"].tolist() == full.groups["group"].tolist()
    np.testing.assert_array_equal(streamed.groups["n"], full.groups["n"])
    np.testing.assert_allclose(streamed.groups["mean"], full.groups["mean"], rtol=1e-12)
    np.testing.assert_allclose(streamed.groups["std"], full.groups["std"], rtol=1e-12)
    assert streamed.n == full.n and streamed.n_excluded == full.n_excluded
    assert streamed.sd_of_means == pytest.approx(full.sd_of_means, rel=1e-12)
    assert streamed.eta_squared == pytest.approx(full.eta_squared.estimate, rel=1e-10)
    assert streamed.largest_smd == pytest.approx(full.largest_smd.estimate, rel=1e-10)
    assert streamed.largest_smd_pair == full.largest_smd_pair


def test_score_chunked_equals_whole_table_scoring(tmp_path):
    from xleval.metrics import get_metric

    rng = np.random.default_rng(2)
    words = ["the", "cat", "sat", "on", "a", "mat", "with", "dog", "and", "fox"]
    refs = [" ".join(rng.choice(words, 8)) for _ in range(300)]
    hyps = [" ".join(rng.choice(words, 7)) for _ in range(300)]
    df = pd.DataFrame({"lp": "de-en", "hypothesis": hyps, "reference": refs})
    df.to_parquet(tmp_path / "t.parquet")
    metrics = [get_metric("bleu"), get_metric("chrf")]
    result = score_chunked(metrics, tmp_path / "t.parquet", tmp_path / "s.tsv", chunk_size=64)
    got = read_table(tmp_path / "s.tsv")
    for m in metrics:
        expected = m.sentence_scores(hyps, refs)
        np.testing.assert_allclose(got[m.name].to_numpy(float), expected, rtol=1e-15)
        assert result.mean_segment_score[m.name] == pytest.approx(expected.mean(), rel=1e-12)
    meta = json.loads((tmp_path / "s.tsv.signatures.json").read_text())
    assert meta["signatures"] == {m.name: m.signature for m in metrics}


def test_cli_chunked_fit_and_apply_match_in_memory(tmp_path, table, cli):
    _df, path = table
    for args, out in ((["--chunk-size", "800"], "c.json"), ([], "m.json")):
        assert cli("calibrate", "fit", path, "--score", "score", "--by", "lp", "-o", tmp_path / out,
                   "--format", "json", *args).exit_code == 0
    assert_same_fit(LGN.load(tmp_path / "c.json"), LGN.load(tmp_path / "m.json"))
    for args, out in ((["--chunk-size", "800"], "c.parquet"), ([], "m.parquet")):
        assert cli("calibrate", "apply", tmp_path / "m.json", path, "-o", tmp_path / out,
                   "--format", "json", *args).exit_code == 0
    assert pd.read_parquet(tmp_path / "c.parquet").equals(pd.read_parquet(tmp_path / "m.parquet"))


def test_cli_rejects_scheduler_without_dask(tmp_path, table, cli):
    rc, _, err = cli("calibrate", "fit", table[1], "--score", "score", "-o", tmp_path / "m.json", "--workers", "2")
    assert rc == 2 and "--backend dask" in err


# real data: WMT21 (251,212 rows, 16 language pairs) ----------------------------------------------------
@pytest.fixture(scope="module")
def wmt21(tmp_path_factory):
    df = pd.read_parquet(require_data("wmt21", "segments.parquet"),
                         columns=["lp", "system", "seg_id", "hypothesis", "reference"])
    # a real per-segment quantity with language-specific location and spread: log length ratio
    df["score"] = np.log1p(df["hypothesis"].str.len()) - np.log1p(df["reference"].str.len())
    df = df.drop(columns=["hypothesis", "reference"])
    path = tmp_path_factory.mktemp("wmt") / "wmt21.parquet"
    df.to_parquet(path)
    return df, path


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize("chunk", [1000, 300_000])
def test_wmt21_chunked_fit_and_apply_equal_in_memory(tmp_path, wmt21, chunk):
    df, path = wmt21
    full = in_memory_fit(df, by="lp", score="score")
    chunked = fit_chunked(LGN(by="lp", score="score"), path, chunk_size=chunk)
    assert_same_fit(chunked, full)
    apply_chunked(chunked, path, tmp_path / "o.parquet", chunk_size=chunk)
    got = pd.read_parquet(tmp_path / "o.parquet")
    expected = calibrate_frame(chunked, df)
    assert got["seg_id"].tolist() == df["seg_id"].tolist()
    np.testing.assert_array_equal(got["score_lgn"].to_numpy(), expected["score_lgn"].to_numpy())


@pytest.mark.data
@pytest.mark.slow
def test_wmt21_slice_chunk_size_one(tmp_path, wmt21):
    df, _ = wmt21
    # one-row batches cost a few ms each (pandas per batch): 400 rows keep all 16 pairs (11-41 rows each), the
    # property (every batch of one row merged equals one pass) does not depend on the row count
    part = df.sample(400, random_state=0).reset_index(drop=True)
    assert part["lp"].nunique() == 16
    path = tmp_path / "slice.parquet"
    part.to_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 16 pairs in 400 rows: small groups are shrunk (and warned) in both
        full = in_memory_fit(part, by="lp", score="score")
        chunked = fit_chunked(LGN(by="lp", score="score"), path, chunk_size=1)
    assert_same_fit(chunked, full)
    apply_chunked(full, path, tmp_path / "o.parquet", chunk_size=1)
    np.testing.assert_array_equal(pd.read_parquet(tmp_path / "o.parquet")["score_lgn"].to_numpy(),
                                  calibrate_frame(full, part)["score_lgn"].to_numpy())


def test_progress_callbacks_count_every_row(tmp_path, table):
    df, path = table
    fitted, applied = [], []
    model = fit_chunked(LGN(by="lp"), path, chunk_size=700, progress=fitted.append)
    with pytest.warns(DataQualityWarning, match="7 row"):  # the generated table's NaN scores
        apply_chunked(model, path, tmp_path / "o.parquet", chunk_size=700, progress=applied.append)
    assert sum(fitted) == len(df) and sum(applied) == len(df)
    assert len(applied) >= 2  # one call per written batch, not one at the end


@pytest.mark.parametrize("ext", ["tsv", "csv"])
def test_streamed_reader_skips_a_leading_comment_block_like_the_in_memory_one(tmp_path, ext):
    df = generated(n=300)
    path = tmp_path / f"c.{ext}"
    body = df.to_csv(sep="\t" if ext == "tsv" else ",", index=False)
    path.write_text("# provenance: generated\n# second comment line\n" + body)
    whole = read_table(path, numeric=["score"])
    streamed = pd.concat([b.frame for b in iter_batches(path, 64, numeric=["score"])], ignore_index=True)
    assert list(streamed.columns) == list(whole.columns) and len(streamed) == len(whole) == 300
    np.testing.assert_array_equal(streamed["score"].to_numpy(), whole["score"].to_numpy())
