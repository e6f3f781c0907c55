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
