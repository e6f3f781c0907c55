"""The persistent score cache of the neural metrics, and the device list parsing (on CPU)."""
from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from conftest import importorskip_lazy
from xleval.exceptions import InputError, SignatureMismatchError
from xleval.metrics._neural import parse_devices
from xleval.metrics._score_cache import ScoreCache, row_keys


# device lists --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("given, devices", [("cpu", ("cpu",)), ("cuda", ("cuda",)), ("cuda:1", ("cuda:1",)),
                                            ("cuda:0,cuda:1", ("cuda:0", "cuda:1")), ("cpu, cpu", ("cpu", "cpu")),
                                            ("mps", ("mps",))])
def test_device_lists(given, devices):
    assert parse_devices(given) == devices


@pytest.mark.parametrize("given, match", [("gpu", "'gpu' is not a device"), ("", "device must be"),
                                          ("cuda:0,cpu", "mixes cpu and cuda"), ("cuda,cuda:1", "name each GPU once"),
                                          ("cuda:0,cuda:0", "name each GPU once"), ("cuda:0,", "'' is not a device"),
                                          (0, "device must be")])
def test_bad_device_lists(given, match):
    with pytest.raises(InputError, match=match):
        parse_devices(given)


# the cache file ------------------------------------------------------------------------------------------
def test_cache_round_trip_and_missing_rows(tmp_path):
    keys = row_keys(["a", "b", "c"], [["x", "y", "z"]], None)
    assert len(set(keys)) == 3 and row_keys(["a"], [["x"]], None)[0] == keys[0]
    assert row_keys(["a"], None, ["x"])[0] != keys[0]  # a source is not a reference
    cache = ScoreCache(tmp_path / "c.sqlite", "sig-1")
    assert np.isnan(cache.get(keys)).all()
    cache.put(keys[:2], [1.5, -2.0])
    got = cache.get([keys[1], keys[2], keys[0], keys[1]])
    np.testing.assert_array_equal(got[[0, 2, 3]], [-2.0, 1.5, -2.0])
    assert np.isnan(got[1])


def test_cache_of_another_signature_is_refused(tmp_path):
    path = tmp_path / "c.sqlite"
    ScoreCache(path, "sig-1").put(row_keys(["a"], None, None), [1.0])
    with pytest.raises(SignatureMismatchError, match=r"holds scores of another metric signature \(.sig-1.\)"):
        ScoreCache(path, "sig-2").get(row_keys(["a"], None, None))


def test_a_file_that_is_not_a_cache_is_refused(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("hello, this is not SQLite\n" * 10)
    with pytest.raises(InputError, match="is not an xleval score cache"):
        ScoreCache(path, "sig").check()
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE meta (x INTEGER)").connection.close()
    with pytest.raises(InputError, match="is not an xleval score cache"):
        ScoreCache(other, "sig").check()


# through a metric ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    importorskip_lazy("torch", reason="needs the neural extra (torch)")
    from _tiny_models import build_tiny_metricx, build_tiny_mt5_tokenizer

    root = tmp_path_factory.mktemp("cache")
    return build_tiny_metricx(root / "metricx-24-hybrid-tiny"), build_tiny_mt5_tokenizer(root / "tok")


HYPS = ["The cat sat on the mat.", "Weather nice.", "猫坐在垫子上。", "", "The cat is sitting"]
REFS = ["The cat sits on the mat.", "The weather is nice today.", "猫坐在垫子上。", "y", "The cat"]
SRCS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist heute schön.", "猫", "x", "Le chat"]


@pytest.mark.neural
def test_rescoring_unchanged_rows_runs_no_model(tiny, tmp_path, monkeypatch):
    from xleval.metrics import _metricx
    from xleval.metrics._metricx import MetricX

    model, tok = tiny
    plain = MetricX(model, tokenizer_path=tok).sentence_scores(HYPS, REFS, SRCS)
    calls = []
    forward = _metricx._forward
    monkeypatch.setattr(_metricx, "_forward", lambda *a: calls.append(len(a[3])) or forward(*a))
    path = tmp_path / "scores.sqlite"
    first = MetricX(model, tokenizer_path=tok, cache=path, batch_size=2).sentence_scores(HYPS, REFS, SRCS)
    assert sum(calls) == 5
    # other batches, other float32 rounding: relative to the score (CI at ba17321: 6.348702 against 6.348691, 1.7e-6
    # of it, past an absolute 1e-5)
    np.testing.assert_allclose(first, plain, rtol=1e-5, atol=1e-5)
    calls.clear()
    again = MetricX(model, tokenizer_path=tok, cache=path).sentence_scores(HYPS, REFS, SRCS)
    assert calls == [] and np.array_equal(again, first)
    # one changed row and one new row: only those two are scored
    hyps = [*HYPS[:4], "The cat is lying", "A new hypothesis"]
    more = MetricX(model, tokenizer_path=tok, cache=path).sentence_scores(hyps, [*REFS, "x"], [*SRCS, "y"])
    assert sum(calls) == 2
    np.testing.assert_array_equal(more[:4], first[:4])
    expected = MetricX(model, tokenizer_path=tok).sentence_scores(hyps, [*REFS, "x"], [*SRCS, "y"])
    np.testing.assert_allclose(more, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.neural
def test_cache_file_of_another_signature_is_refused_before_scoring(tiny, tmp_path):
    from xleval.metrics._metricx import MetricX

    model, tok = tiny
    path = tmp_path / "scores.sqlite"
    MetricX(model, tokenizer_path=tok, cache=path).sentence_scores(HYPS, REFS, SRCS)
    with pytest.raises(SignatureMismatchError, match=r"another metric signature .*variant:24-hybrid"):
        MetricX(model, tokenizer_path=tok, cache=path, variant="24-qe")


@pytest.mark.neural
def test_cache_directory_keeps_one_file_per_signature(tiny, tmp_path):
    from xleval.metrics._metricx import MetricX

    model, tok = tiny
    hybrid = MetricX(model, tokenizer_path=tok, cache=tmp_path)
    qe = MetricX(model, tokenizer_path=tok, cache=tmp_path, variant="24-qe")
    a, b = hybrid.sentence_scores(HYPS, REFS, SRCS), qe.sentence_scores(HYPS, REFS, SRCS)
    files = sorted(p.name for p in tmp_path.glob("metricx-*.sqlite"))
    assert len(files) == 2 and hybrid.cache != qe.cache
    np.testing.assert_array_equal(MetricX(model, tokenizer_path=tok, cache=tmp_path).sentence_scores(HYPS, REFS, SRCS),
                                  a)
    assert not np.allclose(a, b)  # QE scores are not hybrid scores: the two caches were not mixed


@pytest.mark.neural
def test_cli_cache_option(tiny, tmp_path, cli):
    import pandas as pd

    model, tok = tiny
    pd.DataFrame({"lp": "de-en", "system": "A", "source": SRCS, "hypothesis": HYPS, "reference": REFS}).to_csv(
        tmp_path / "in.tsv", sep="\t", index=False)
    args = ("score", tmp_path / "in.tsv", "-m", f"metricx:{model}", "--metricx-tokenizer", tok, "--cache",
            tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    rc, _, err = cli(*args, "-o", tmp_path / "a.tsv")
    assert rc == 0, err
    assert len(list((tmp_path / "cache").glob("metricx-*.sqlite"))) == 1
    rc, _, err = cli(*args, "-o", tmp_path / "b.tsv")
    assert rc == 0, err
    assert (tmp_path / "a.tsv").read_text() == (tmp_path / "b.tsv").read_text()
