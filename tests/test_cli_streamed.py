"""`xleval score` and `xleval diagnose` with --chunk-size equal their in-memory results."""
import json

import numpy as np
import pandas as pd
import pytest

ROWS = [("de-en", "The cat sat on the mat.", "The cat sits on the mat."),
        ("de-en", "A dog barks loudly today.", "The dog is barking loudly."),
        ("zh-en", "It rains, 3.5 mm.", "It is raining: 3.5 mm."),
        ("zh-en", "", "Nothing to see here."),
        ("ja-en", "Good morning &quot;world&quot;", "Good morning, world")]


@pytest.fixture
def table(tmp_path):
    df = pd.DataFrame([{"lp": lp, "system": f"s{i % 3}", "hypothesis": h, "reference": r}
                       for i, (lp, h, r) in enumerate(ROWS * 40)])
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    return path


def test_streamed_score_equals_in_memory(tmp_path, table, cli):
    assert cli("score", table, "--metric", "bleu,chrf", "--tokenize", "13a",
               "-o", tmp_path / "a.parquet").exit_code == 0
    assert cli("score", table, "--metric", "bleu,chrf", "--tokenize", "13a", "--chunk-size", "7",
               "-o", tmp_path / "b.parquet", "--format", "json").exit_code == 0
    a, b = pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet")
    np.testing.assert_array_equal(a["bleu"], b["bleu"])
    np.testing.assert_array_equal(a["chrf"], b["chrf"])
    rc, _, err = cli("score", table, "--metric", "bleu", "--chunk-size", "7", "-o", tmp_path / "c.parquet")
    assert rc == 2 and "--tokenize" in err
    assert not (tmp_path / "c.parquet").exists()


def test_streamed_diagnose_equals_in_memory_moments(tmp_path, table, cli):
    assert cli("score", table, "--metric", "chrf", "-o", tmp_path / "s.parquet").exit_code == 0
    rc, out, err = cli("diagnose", tmp_path / "s.parquet", "--score", "chrf", "--by", "lp", "--format", "json",
                       "--n-resamples", "20")
    assert rc == 0, err
    full = json.loads(out)
    rc, out, err = cli("diagnose", tmp_path / "s.parquet", "--score", "chrf", "--by", "lp", "--format", "json",
                       "--chunk-size", "11")
    assert rc == 0, err
    streamed = json.loads(out)
    means = {g["group"]: g["mean"] for g in full["bias"]["groups"]}
    assert {g["group"]: g["mean"] for g in streamed["groups"]} == pytest.approx(means, rel=1e-12)
    assert streamed["sd_of_means"] == pytest.approx(full["bias"]["sd_of_means"], rel=1e-12)
    rc, _, err = cli("diagnose", tmp_path / "s.parquet", "--score", "chrf", "--human", "chrf", "--chunk-size", "11")
    assert rc == 2 and "in memory" in err


# one validation and one schema for the streamed and the in-memory paths ------------------------------------
def _mixed_table(n: int = 60) -> pd.DataFrame:
    """Columns whose type only the whole file decides: ids that look numeric until a late '007', an int
    column with one missing value late, a text column that looks numeric in the first batches."""
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "lp": np.where(np.arange(n) % 2, "en-de", "en-fr"), "seg_id": np.arange(n),
        "doc": [str(i) if i < n - 3 else "007" for i in range(n)],
        "count": [str(i) if i != n - 5 else "" for i in range(n)],
        "note": [str(i) if i < n - 2 else "see below" for i in range(n)],
        "score": rng.normal(50, 10, n), "human": rng.normal(0, 1, n)})


@pytest.mark.parametrize("ext", ["tsv", "csv", "jsonl", "parquet"])
def test_streamed_apply_writes_the_one_pass_output(ext, tmp_path, cli):
    source = tmp_path / "in.tsv"
    _mixed_table().to_csv(source, sep="\t", index=False)
    assert cli("calibrate", "fit", str(source), "--score", "score", "-o", str(tmp_path / "m.json")).exit_code == 0
    whole, streamed = tmp_path / f"whole.{ext}", tmp_path / f"streamed.{ext}"
    assert cli("calibrate", "apply", str(tmp_path / "m.json"), str(source), "-o", str(whole)).exit_code == 0
    assert cli("calibrate", "apply", str(tmp_path / "m.json"), str(source), "-o", str(streamed),
                 "--chunk-size", "7").exit_code == 0
    if ext == "parquet":
        a, b = pd.read_parquet(whole), pd.read_parquet(streamed)
        pd.testing.assert_frame_equal(a, b)
        assert a["seg_id"].dtype == "int64" and a["human"].dtype == "float64"
        assert pd.api.types.is_string_dtype(a["doc"]) and pd.api.types.is_string_dtype(a["note"])
    else:
        assert whole.read_bytes() == streamed.read_bytes()


def test_streamed_jsonl_types_and_late_keys_equal_the_one_pass_reading(tmp_path, cli):
    records = [{"lp": "en-de", "seg_id": i, "score": float(i % 7), "flag": True} for i in range(20)]
    records[15]["seg_id"] = None  # an int column with a null late: float64 in one pass
    records[17]["extra"] = "late key"  # a key first seen late: a column, empty elsewhere
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    model = tmp_path / "m.json"
    assert cli("calibrate", "fit", str(source), "--score", "score", "-o", str(model), "--min-count", "2").exit_code == 0
    for ext in ("jsonl", "parquet"):
        whole, streamed = tmp_path / f"w.{ext}", tmp_path / f"s.{ext}"
        assert cli("calibrate", "apply", str(model), str(source), "-o", str(whole)).exit_code == 0
        assert cli("calibrate", "apply", str(model), str(source), "-o", str(streamed), "--chunk-size",
                   "4").exit_code == 0
        if ext == "jsonl":
            assert whole.read_bytes() == streamed.read_bytes()
        else:
            pd.testing.assert_frame_equal(pd.read_parquet(whole), pd.read_parquet(streamed))


@pytest.mark.parametrize("bad", [{"lp": "english-german"}, {"lp": "de-en", "src_lang": "en", "tgt_lang": "fr"}])
def test_streamed_score_checks_languages_like_the_one_pass(bad, tmp_path, cli):
    rows = [{"lp": "de-en", "src_lang": "de", "tgt_lang": "en", "hypothesis": f"a cat {i}", "reference": "a cat"}
            for i in range(30)]
    rows[25].update(bad)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    errors = []
    for extra in ([], ["--chunk-size", "10"]):
        rc, _, err = cli("score", str(source), "-m", "chrf", "-o", str(tmp_path / "o.tsv"), *extra)
        assert rc == 2
        errors.append(err)
        assert not (tmp_path / "o.tsv").exists()
    assert all("row" in e and ("english-german" in e or "contradicts" in e) for e in errors), errors


def test_streamed_score_uses_every_reference_like_the_one_pass(tmp_path, cli):
    df = pd.DataFrame([{"lp": "de-en", "hypothesis": h, "reference": r, "reference_2": "The cat is on the mat."}
                       for _, h, r in ROWS * 10])
    df.to_parquet(tmp_path / "in.parquet")
    assert cli("score", str(tmp_path / "in.parquet"), "-m", "bleu,chrf", "--tokenize", "13a",
                 "-o", str(tmp_path / "a.parquet")).exit_code == 0
    assert cli("score", str(tmp_path / "in.parquet"), "-m", "bleu,chrf", "--tokenize", "13a", "--chunk-size", "9",
                 "-o", str(tmp_path / "b.parquet")).exit_code == 0
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet"))
    from xleval.io import read_table_metadata

    sigs = read_table_metadata(tmp_path / "b.parquet")["signatures"]
    assert sigs == read_table_metadata(tmp_path / "a.parquet")["signatures"] and "nrefs:2" in sigs["bleu"]


def test_standard_input_is_not_streamed(tmp_path, cli):
    rc, _, err = cli("calibrate", "fit", "-", "--score", "score", "-o", str(tmp_path / "m.json"), "--chunk-size", "5")
    assert rc == 2 and "'-' (standard input) cannot be streamed" in err
