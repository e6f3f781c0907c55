"""`xleval score` and `xleval diagnose` with --chunk-size equal their in-memory results."""
import json

import numpy as np
import pandas as pd
import pytest

from xleval.cli import main

ROWS = [("de-en", "The cat sat on the mat.", "The cat sits on the mat."),
        ("de-en", "A dog barks loudly today.", "The dog is barking loudly."),
        ("zh-en", "It rains, 3.5 mm.", "It is raining: 3.5 mm."),
        ("zh-en", "", "Nothing to see here."),
        ("ja-en", "Good morning &quot;world&quot;", "Good morning, world")]


@pytest.fixture()
def table(tmp_path):
    df = pd.DataFrame([{"lp": lp, "system": f"s{i % 3}", "hypothesis": h, "reference": r}
                       for i, (lp, h, r) in enumerate(ROWS * 40)])
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    return path


def test_streamed_score_equals_in_memory(tmp_path, table, capsys):
    assert main(["score", str(table), "--metric", "bleu,chrf", "--tokenize", "13a", "-o", str(tmp_path / "a.parquet")]) == 0
    assert main(["score", str(table), "--metric", "bleu,chrf", "--tokenize", "13a", "--chunk-size", "7",
                 "-o", str(tmp_path / "b.parquet"), "--format", "json"]) == 0
    capsys.readouterr()
    a, b = pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet")
    np.testing.assert_array_equal(a["bleu"], b["bleu"])
    np.testing.assert_array_equal(a["chrf"], b["chrf"])
    assert main(["score", str(table), "--metric", "bleu", "--chunk-size", "7", "-o", str(tmp_path / "c.parquet")]) == 2
    assert "--tokenize" in capsys.readouterr().err
    assert not (tmp_path / "c.parquet").exists()


def test_streamed_diagnose_equals_in_memory_moments(tmp_path, table, capsys):
    assert main(["score", str(table), "--metric", "chrf", "-o", str(tmp_path / "s.parquet")]) == 0
    capsys.readouterr()
    assert main(["diagnose", str(tmp_path / "s.parquet"), "--score", "chrf", "--by", "lp", "--format", "json",
                 "--n-resamples", "20"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["diagnose", str(tmp_path / "s.parquet"), "--score", "chrf", "--by", "lp", "--format", "json",
                 "--chunk-size", "11"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    means = {g["group"]: g["mean"] for g in full["bias"]["groups"]}
    assert {g["group"]: g["mean"] for g in streamed["groups"]} == pytest.approx(means, rel=1e-12)
    assert streamed["sd_of_means"] == pytest.approx(full["bias"]["sd_of_means"], rel=1e-12)
    assert main(["diagnose", str(tmp_path / "s.parquet"), "--score", "chrf", "--human", "chrf", "--chunk-size", "11"]) == 2
    assert "in memory" in capsys.readouterr().err


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
def test_streamed_apply_writes_the_one_pass_output(ext, tmp_path, capsys):
    source = tmp_path / "in.tsv"
    _mixed_table().to_csv(source, sep="\t", index=False)
    assert main(["calibrate", "fit", str(source), "--score", "score", "-o", str(tmp_path / "m.json")]) == 0
    whole, streamed = tmp_path / f"whole.{ext}", tmp_path / f"streamed.{ext}"
    assert main(["calibrate", "apply", str(tmp_path / "m.json"), str(source), "-o", str(whole)]) == 0
    assert main(["calibrate", "apply", str(tmp_path / "m.json"), str(source), "-o", str(streamed),
                 "--chunk-size", "7"]) == 0
    capsys.readouterr()
    if ext == "parquet":
        a, b = pd.read_parquet(whole), pd.read_parquet(streamed)
        pd.testing.assert_frame_equal(a, b)
        assert a["seg_id"].dtype == "int64" and a["human"].dtype == "float64"
        assert pd.api.types.is_string_dtype(a["doc"]) and pd.api.types.is_string_dtype(a["note"])
    else:
        assert whole.read_bytes() == streamed.read_bytes()


def test_streamed_jsonl_types_and_late_keys_equal_the_one_pass_reading(tmp_path, capsys):
    records = [{"lp": "en-de", "seg_id": i, "score": float(i % 7), "flag": True} for i in range(20)]
    records[15]["seg_id"] = None  # an int column with a null late: float64 in one pass
    records[17]["extra"] = "late key"  # a key first seen late: a column, empty elsewhere
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    model = tmp_path / "m.json"
    assert main(["calibrate", "fit", str(source), "--score", "score", "-o", str(model), "--min-count", "2"]) == 0
    for ext in ("jsonl", "parquet"):
        whole, streamed = tmp_path / f"w.{ext}", tmp_path / f"s.{ext}"
        assert main(["calibrate", "apply", str(model), str(source), "-o", str(whole)]) == 0
        assert main(["calibrate", "apply", str(model), str(source), "-o", str(streamed), "--chunk-size", "4"]) == 0
        if ext == "jsonl":
            assert whole.read_bytes() == streamed.read_bytes()
        else:
            pd.testing.assert_frame_equal(pd.read_parquet(whole), pd.read_parquet(streamed))
    capsys.readouterr()


@pytest.mark.parametrize("bad", [{"lp": "english-german"}, {"lp": "de-en", "src_lang": "en", "tgt_lang": "fr"}])
def test_streamed_score_checks_languages_like_the_one_pass(bad, tmp_path, capsys):
    rows = [{"lp": "de-en", "src_lang": "de", "tgt_lang": "en", "hypothesis": f"a cat {i}", "reference": "a cat"}
            for i in range(30)]
    rows[25].update(bad)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    errors = []
    for extra in ([], ["--chunk-size", "10"]):
        capsys.readouterr()
        assert main(["score", str(source), "-m", "chrf", "-o", str(tmp_path / "o.tsv"), *extra]) == 2
        errors.append(capsys.readouterr().err)
        assert not (tmp_path / "o.tsv").exists()
    assert all("row" in e and ("english-german" in e or "contradicts" in e) for e in errors), errors


def test_streamed_score_uses_every_reference_like_the_one_pass(tmp_path, capsys):
    df = pd.DataFrame([{"lp": "de-en", "hypothesis": h, "reference": r, "reference_2": "The cat is on the mat."}
                       for _, h, r in ROWS * 10])
    df.to_parquet(tmp_path / "in.parquet")
    assert main(["score", str(tmp_path / "in.parquet"), "-m", "bleu,chrf", "--tokenize", "13a",
                 "-o", str(tmp_path / "a.parquet")]) == 0
    assert main(["score", str(tmp_path / "in.parquet"), "-m", "bleu,chrf", "--tokenize", "13a", "--chunk-size", "9",
                 "-o", str(tmp_path / "b.parquet")]) == 0
    capsys.readouterr()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a.parquet"), pd.read_parquet(tmp_path / "b.parquet"))
    from xleval.io import read_table_metadata

    sigs = read_table_metadata(tmp_path / "b.parquet")["signatures"]
    assert sigs == read_table_metadata(tmp_path / "a.parquet")["signatures"] and "nrefs:2" in sigs["bleu"]


def test_standard_input_is_not_streamed(tmp_path, capsys):
    assert main(["calibrate", "fit", "-", "--score", "score", "-o", str(tmp_path / "m.json"), "--chunk-size", "5"]) == 2
    assert "'-' (standard input) cannot be streamed" in capsys.readouterr().err
