"""Hand-checkable cases for the intrinsic LM metrics (xleval.intrinsic)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from xleval.exceptions import DataQualityWarning, InputError
from xleval.intrinsic import (
    LMScores,
    corpus_metrics,
    count_bytes,
    count_chars,
    count_tokens,
    from_token_logprobs,
    information_parity,
    length_premiums,
    lm_eval_scores,
    sentence_metrics,
)

LN2 = math.log(2)


def _scores(rows, **kw):
    return LMScores.from_frame(pd.DataFrame(rows), **kw)


def test_bits_per_byte_ascii_vs_cjk():
    # The same 4 nats on a 4-character ASCII text (4 bytes) and a 4-character CJK text (12 bytes).
    s = _scores([{"lang": "en", "text": "abcd", "token_logprobs": [-1.0, -1.0, -2.0]},
                 {"lang": "zh", "text": "我们中文", "token_logprobs": [-4.0]}])
    m = sentence_metrics(s).set_index("lang")
    assert m.loc["en", "bytes"] == 4 and m.loc["zh", "bytes"] == 12
    assert m.loc["en", "bpb"] == pytest.approx(4 / 4 / LN2)
    assert m.loc["zh", "bpb"] == pytest.approx(4 / 12 / LN2)
    # Per character both are equal: CJK only looks "better" per byte because UTF-8 spends 3 bytes.
    assert m.loc["en", "bpc"] == pytest.approx(m.loc["zh", "bpc"]) == pytest.approx(1 / LN2)
    assert m.loc["en", "token_nll"] == pytest.approx(4 / 3)
    assert m.loc["en", "ppl"] == pytest.approx(math.exp(4 / 3))
    assert m.loc["zh", "bpt"] == pytest.approx(4 / LN2)
    assert m.loc["en", "sent_nll_bits"] == pytest.approx(4 / LN2)


def test_corpus_metrics_are_ratios_of_sums_not_means_of_ratios():
    rows = [{"lang": "en", "nll": 2.0, "tokens": 1, "chars": 1, "bytes": 1},
            {"lang": "en", "nll": 30.0, "tokens": 10, "chars": 100, "bytes": 100}]
    c = corpus_metrics(_scores(rows)).table.iloc[0]
    assert c["token_nll"] == pytest.approx(32 / 11)  # a mean of ratios would be (2 + 3) / 2 = 2.5
    assert c["bpb"] == pytest.approx(32 / 101 / LN2)
    assert c["sent_nll"] == pytest.approx(16.0)
    assert c["ppl"] == pytest.approx(math.exp(32 / 11))
    assert "ratio of sums" in corpus_metrics(_scores(rows)).aggregation


def test_bits_input_is_converted_to_nats():
    s = _scores([{"lang": "en", "nll": 1.0, "tokens": 1, "chars": 1, "bytes": 1}], unit="bits")
    assert s.table["nll"].iloc[0] == pytest.approx(LN2)
    assert sentence_metrics(s)["bpb"].iloc[0] == pytest.approx(1.0)


def test_loglik_column_and_sign_errors():
    s = _scores([{"lang": "en", "loglik": -3.0, "tokens": 3}])
    assert s.table["nll"].iloc[0] == 3.0
    with pytest.raises(InputError, match=r"wrong sign.*loglik"):
        _scores([{"lang": "en", "nll": -3.0, "tokens": 3}])
    with pytest.raises(InputError, match="exactly one of"):
        _scores([{"lang": "en", "tokens": 3}])
    with pytest.raises(InputError, match="log-probabilities"):
        from_token_logprobs([[0.5]])


def test_zero_token_and_nan_rows_are_counted_and_excluded():
    rows = [{"lang": "en", "nll": 4.0, "tokens": 2, "chars": 4, "bytes": 4},
            {"lang": "en", "nll": 0.0, "tokens": 0, "chars": 3, "bytes": 3},   # one-token sentence
            {"lang": "en", "nll": float("nan"), "tokens": 2, "chars": 3, "bytes": 3},
            {"lang": "en", "nll": 0.0, "chars": 2, "bytes": 2}]                  # minicons-style 0, no count
    with pytest.warns(DataQualityWarning, match="3 row\\(s\\) excluded"):
        s = _scores(rows)
    assert len(s.table) == 1
    assert sum(s.excluded.values()) == 3
    assert any("zero scored tokens" in k for k in s.excluded)
    c = corpus_metrics(s).table.iloc[0]
    assert c["n_sentences"] == 1 and c["sent_nll"] == 4.0  # the zero rows are not averaged in


def test_information_parity_identical_nll_is_one_and_ratio_of_sums():
    rows = [{"lang": "en", "item": i, "nll": v, "tokens": 5} for i, v in enumerate([10.0, 20.0])]
    rows += [{"lang": "de", "item": i, "nll": v, "tokens": 5} for i, v in enumerate([10.0, 20.0])]
    rows += [{"lang": "fr", "item": i, "nll": v, "tokens": 5} for i, v in enumerate([40.0, 20.0])]
    ip = information_parity(_scores(rows), "en").set_index("lang")["information_parity"]
    assert ip["en"] == 1.0 and ip["de"] == 1.0
    # sum(en) / sum(fr) = 30 / 60; a mean of per-item ratios would give (10/40 + 20/20) / 2 = 0.625.
    assert ip["fr"] == pytest.approx(0.5)


def test_mismatched_parallel_rows_are_reported():
    rows = [{"lang": "en", "item": i, "nll": 1.0, "tokens": 1} for i in range(3)]
    rows += [{"lang": "de", "item": i, "nll": 2.0, "tokens": 1} for i in range(2)]
    with pytest.warns(DataQualityWarning, match="en/: 1.*2 common"):
        ip = information_parity(_scores(rows), "en").set_index("lang")
    assert ip.loc["de", "n_items"] == 2
    assert ip.loc["de", "information_parity"] == pytest.approx(0.5)


def test_duplicate_keys_are_refused():
    with pytest.raises(InputError, match="repeats the key"):
        _scores([{"lang": "en", "item": 0, "nll": 1.0}, {"lang": "en", "item": 0, "nll": 2.0}])


def test_lengths_codepoints_graphemes_bytes():
    texts = ["abc", "中文", "नमस्ते", "e\u0301"]
    assert count_chars(texts).tolist() == [3, 2, 6, 2]
    assert count_chars(texts, "graphemes").tolist() == [3, 2, 3, 1]
    assert count_bytes(texts).tolist() == [3, 6, 18, 3]
    assert count_tokens(["a b c", "d"], str.split).tolist() == [3, 1]
    with pytest.raises(InputError, match="not text"):
        count_chars(["a", None])


def test_premiums_and_ctc():
    df = pd.DataFrame({"lang": ["en", "en", "zh", "zh"], "item": [0, 1, 0, 1],
                       "text": ["ab", "cd", "中", "文字"], "tokens": [1, 1, 2, 3]})
    p = length_premiums(df, "en").set_index("lang")
    assert p.loc["zh", "byte_premium"] == pytest.approx(9 / 4)
    assert p.loc["zh", "length_premium"] == pytest.approx(3 / 4)
    assert p.loc["zh", "token_premium"] == pytest.approx(5 / 2)
    assert p.loc["zh", "ctc"] == 5 and p.loc["en", "byte_premium"] == 1.0


def test_lm_eval_samples(tmp_path):
    lines = [
        {"doc_id": 0, "target": "Hello world", "word_perplexity": [-20.0, 2], "byte_perplexity": [-20.0, 11],
         "bits_per_byte": [-20.0, 11]},
        {"doc_id": 1, "arguments": [["Zweiter Text"]], "word_perplexity": [-30.0, 2], "byte_perplexity": [-30.0, 12],
         "bits_per_byte": [-30.0, 12]},
    ]
    path = tmp_path / "samples_wikitext_2024.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    df = lm_eval_scores(path, lang="de", model="m")
    s = LMScores.from_frame(df)
    c = corpus_metrics(s, by=["lang"]).table.iloc[0]
    # lm-eval's bits_per_byte aggregation: -sum(ll) / sum(bytes) / ln 2.
    assert c["bpb"] == pytest.approx(50 / 23 / LN2)
    assert np.isnan(c["token_nll"])  # the harness does not log token counts
    bad = tmp_path / "samples_arc.jsonl"
    bad.write_text(json.dumps({"doc_id": 0, "acc": 1}) + "\n")
    with pytest.raises(InputError, match="loglikelihood_rolling"):
        lm_eval_scores(bad, lang="en")


def test_corpus_ci_contains_estimate():
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({"lang": "en", "nll": rng.uniform(5, 50, n), "tokens": rng.integers(2, 20, n),
                       "chars": rng.integers(10, 80, n), "bytes": rng.integers(10, 90, n)})
    t = corpus_metrics(LMScores.from_frame(df), ci=True, n_resamples=200, random_state=1).table.iloc[0]
    for m in ("bpb", "token_nll", "sent_nll"):
        assert t[f"{m}_ci_low"] <= t[m] <= t[f"{m}_ci_high"]


def test_groups_no_trained_model_produces_are_warned_and_listed(tmp_path):
    """`xleval intrinsic metrics` on the Apples FLORES results showed unigram runs at 8.3-11.0 bits per byte (worse than
    a uniform distribution over the 256 byte values) without a word, although the confound analysis leaves such
    runs out as anomalous. The corpus table keeps them as computed; a DataQualityWarning and `anomalies` name
    them, the command line lists them under the table."""
    from conftest import run_cli

    rows = [{"lang": lang, "model": model, "item": i, "nll": nll, "tokens": 10, "chars": 40, "bytes": 40}
            for lang, model, nll in (("de", "good", 50.0), ("de", "broken", 300.0), ("en", "good", 45.0))
            for i in range(3)]
    with pytest.warns(DataQualityWarning, match=r"1 group\(s\) have corpus metrics no trained model produces, "
                                                 r"e.g. model broken, lang de: bpb = 10\.82"):
        result = corpus_metrics(_scores(rows), ["lang", "model"])
    # 300 nats over 40 bytes: 300 / 40 / ln 2 = 10.82 bits per byte, above the uniform model's 8
    assert result.table.set_index("model").loc["broken", "bpb"] == pytest.approx(300 / 40 / LN2)
    assert list(result.anomalies[["model", "lang", "metric"]].itertuples(index=False, name=None)) == \
        [("broken", "de", "bpb")]
    assert len(result.table) == 3  # kept, as computed
    path = tmp_path / "scores.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    rc, out, err = run_cli("intrinsic", "metrics", path, "--by", "lang,model", "--source", "scores")
    assert rc == 0, err
    assert "groups no trained model produces" in out and "broken" in out.split("groups no trained model")[1]
    assert "1 group(s) have corpus metrics no trained model produces" in " ".join(err.split())
