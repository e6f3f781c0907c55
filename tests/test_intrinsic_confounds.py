"""Confound analyses on synthetic data with a known structure, the plots and the CLI."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from import_check import loaded_by
from xleval.intrinsic import LMScores, analyze_confounds, language_table, translation_stability

LANGS = {"en": 1.0, "de": 1.3, "zh": 3.0, "fi": 1.2, "ar": 1.8, "ru": 2.0}  # bytes per char


def _synthetic(n=30, seed=0):
    """Every language carries the same information per sentence (NLL ~ 60 nats) but needs a
    different number of bytes; a bigger vocabulary gives fewer tokens."""
    rng = np.random.default_rng(seed)
    rows = []
    content = rng.uniform(40, 80, n)
    for lang, bpc in LANGS.items():
        chars = np.round(content * (1.5 + 0.1 * len(lang) + rng.uniform(0, 0.2)))
        for vocab in (8000, 32000, 64000):
            tokens = np.maximum(1, np.round(chars / (2 + vocab / 32000)))
            nll = content * rng.normal(1.0, 0.01, n)
            rows += [{"lang": lang, "model": f"{lang}_{vocab}", "setting": f"bpe_{vocab}", "item": i, "nll": nll[i],
                      "tokens": tokens[i], "chars": chars[i], "bytes": np.round(chars[i] * bpc), "vocab_size": vocab}
                     for i in range(n)]
    return LMScores.from_frame(pd.DataFrame(rows))


def test_bpb_follows_bytes_sent_nll_does_not():
    rep = analyze_confounds(_synthetic())
    lc = rep.lengths[rep.lengths["method"] == "pearson"].set_index(["metric", "length"])
    assert lc.loc[("bpb", "bytes_per_sentence"), "estimate"] < -0.8
    assert lc.loc[("bpb", "bytes_per_sentence"), "p_value"] < 0.01
    assert abs(lc.loc[("sent_nll", "bytes_per_sentence"), "estimate"]) < 0.6
    v = rep.vocab.set_index("metric")
    assert v.loc["ppl", "rel_range_median"] > 10 * v.loc["sent_nll", "rel_range_median"]
    json.dumps(rep.to_dict())  # JSON-safe


def test_translation_stability_flip_and_spread():
    t = pd.DataFrame({"setting": "s", "lang": ["en", "de", "de"], "variant": ["", "a", "b"],
                      "m": [10.0, 9.0, 12.0]})
    r = translation_stability(t, ["m"]).iloc[0]
    assert r["flip_rate"] == pytest.approx(0.5)  # de-a < en < de-b: the order depends on the translation
    assert r["spread_ratio"] == pytest.approx(3.0 / 0.5)


def test_language_table_uses_common_items():
    s = _synthetic(n=5)
    table = s.table[~((s.table["lang"] == "zh") & (s.table["item"] == 0))]
    with pytest.warns(Warning, match="common item"):
        lt = language_table(LMScores(table=table))
    assert (lt["n_sentences"] == 4).all()


def test_plots_return_figures():
    pytest.importorskip("matplotlib")
    from xleval.intrinsic._plots import length_scatter, vocab_lines

    lt = language_table(_synthetic(n=5))
    assert length_scatter(lt).axes and vocab_lines(lt).axes


def test_cli_metrics_and_confounds(tmp_path, cli):
    path = tmp_path / "scores.parquet"
    _synthetic(n=8).table.to_parquet(path)
    rc, stdout, err = cli("intrinsic", "metrics", path, "--by", "lang", "--format", "json", "--reference", "en")
    assert rc == 0, err
    out = json.loads(stdout)
    assert "ratio of sums" in out["aggregation"] and len(out["rows"]) == len(LANGS)
    rc, stdout, err = cli("intrinsic", "confounds", path, "--format", "json")
    assert rc == 0, err
    out = json.loads(stdout)
    assert {r["metric"] for r in out["summary"]} >= {"bpb", "sent_nll"}


def test_cli_bad_input_is_one_line(tmp_path, cli):
    bad = tmp_path / "bad.tsv"
    bad.write_text("lang\tnll\nen\t-3\n")
    rc, _, err = cli("intrinsic", "metrics", bad)
    assert rc == 2
    assert "wrong sign" in err and "Traceback" not in err


def test_import_is_light():
    assert loaded_by("import xleval.intrinsic") == []
