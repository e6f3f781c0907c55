"""Confound analyses on synthetic data with a known structure: the language is the unit, strata
are never pooled, anomalous runs are left out, Holm and power are right; plots."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as ss

from import_check import loaded_by
from xleval.exceptions import InputError
from xleval.intrinsic import (
    LMScores,
    analyze_confounds,
    correlation_power,
    language_table,
    translation_stability,
)

LANGS = {"en": 1.0, "de": 1.05, "fr": 1.1, "fi": 1.04, "pl": 1.2, "ru": 1.85, "ar": 1.8, "ko": 2.5, "zh": 3.0,
         "hi": 2.7}  # UTF-8 bytes per character


def _synthetic(n=30, seed=0, **kw):
    """The scores of :func:`_frame` (also used by tests/test_cli_analysis_reports.py)."""
    return LMScores.from_frame(_frame(n, seed, **kw))


def _frame(n=30, seed=0, vocabs=(8000, 32000, 64000), algo=None):
    """Every language carries the same information per sentence (NLL ~ 60 nats) but needs a
    different number of bytes; a bigger vocabulary gives fewer tokens."""
    rng = np.random.default_rng(seed)
    rows = []
    content = rng.uniform(40, 80, n)
    for lang, bpc in LANGS.items():
        chars = np.round(content * (1.5 + 0.1 * len(lang) + rng.uniform(0, 0.2)))
        for vocab in vocabs:
            tokens = np.maximum(1, np.round(chars / (2 + vocab / 32000)))
            nll = content * rng.normal(1.0, 0.01, n)
            rows += [{"lang": lang, "model": f"{lang}_{vocab}", "setting": f"bpe_{vocab}", "item": i, "nll": nll[i],
                      "tokens": tokens[i], "chars": chars[i], "bytes": np.round(chars[i] * bpc), "vocab_size": vocab,
                      **({"tokenizer_algo": algo} if algo else {})} for i in range(n)]
    return pd.DataFrame(rows)


def _test(rep, metric, length, **stratum):
    t = rep.tests
    mask = (t["metric"] == metric) & (t["length"] == length)
    for k, v in stratum.items():
        mask &= t[k] == v
    assert mask.sum() == 1
    return t[mask].iloc[0]


def test_bpb_follows_bytes_sent_nll_does_not_with_languages_as_units():
    rep = analyze_confounds(_synthetic())
    assert rep.level == "language" and rep.n_languages == len(LANGS)
    bpb = _test(rep, "bpb", "bytes")
    assert bpb["n"] == len(LANGS)  # six languages, not 6 x 3 models
    assert bpb["r"] < -0.8 and bpb["confounded"]
    sent = _test(rep, "sent_nll", "bytes")
    assert not sent["confounded"] and sent["verdict"].startswith("no evidence of a bytes confound")
    v = rep.vocab.set_index("metric")
    assert v.loc["ppl", "rel_range_median"] > 10 * v.loc["sent_nll", "rel_range_median"]
    assert v.loc["ppl", "n_increasing"] == len(LANGS)  # fewer, longer tokens: higher perplexity in every language
    out = json.loads(json.dumps(rep.to_dict()))
    assert out["level"] == "language" and out["n_languages"] == len(LANGS)
    assert {"metric", "length", "tokenizer_algo", "r", "p", "p_holm", "confounded"} <= set(out["tests"][0])
    assert out["tests"][0]["tokenizer_algo"] is None  # no such column: null, never a made-up stratum


def _pseudo_replicated():
    """Five models per language whose Sent-NLL differs from language to language by chance
    (fixed here: r = 0.65, p = 0.16 with characters over 6 languages) and hardly between models."""
    langs = ["en", "de", "fr", "fi", "pl", "ru"]
    lang_effect = dict(zip(langs, [100.0, 112.0, 101.0, 108.0, 106.0, 110.0], strict=True))
    chars = dict(zip(langs, [100.0, 130.0, 90.0, 120.0, 140.0, 110.0], strict=True))
    rng = np.random.default_rng(1)
    rows = [{"lang": lang, "model": f"{lang}{v}", "setting": f"v{v}", "vocab_size": 1000 * (v + 1), "item": i,
             "nll": lang_effect[lang] + rng.normal(0, 0.2), "tokens": 30.0, "chars": chars[lang],
             "bytes": chars[lang] * LANGS[lang]}
            for lang in langs for v in range(5) for i in range(4)]
    return LMScores.from_frame(pd.DataFrame(rows))


def test_pooling_models_of_a_language_is_pseudo_replication():
    scores = _pseudo_replicated()
    lang = _test(analyze_confounds(scores, alpha=0.05), "sent_nll", "chars")
    pooled_rep = analyze_confounds(scores, alpha=0.05, level="model")
    pooled = _test(pooled_rep, "sent_nll", "chars")
    # the same association, but 30 points pretend to be independent evidence where there are 6
    assert lang["n"] == 6 and pooled["n"] == 30
    assert lang["r"] == pytest.approx(pooled["r"], abs=0.05)
    assert lang["p"] > 0.05 > pooled["p"]
    lang_means = pd.DataFrame(scores.table).groupby("lang").agg(nll=("nll", "mean"), chars=("chars", "mean"))
    assert lang["r"] == pytest.approx(ss.pearsonr(lang_means["chars"], lang_means["nll"]).statistic, abs=1e-3)
    assert "pseudo-replicated" in pooled["verdict"] and any("pseudo-replicated" in n for n in pooled_rep.notes)


def test_tokenizer_algorithms_are_never_pooled():
    bpe = _frame(n=10, algo="bpe")
    uni = _frame(n=10, algo="unigram", seed=3)
    # another instrument
    uni = uni.assign(setting=uni["setting"].str.replace("bpe", "uni"), model="u" + uni["model"],
                     nll=uni["nll"] * uni["lang"].map(dict(zip(LANGS, np.linspace(1, 1.5, 10), strict=True))))
    rep = analyze_confounds(LMScores.from_frame(pd.concat([bpe, uni], ignore_index=True)))
    assert set(rep.tests["tokenizer_algo"]) == {"bpe", "unigram"}
    assert (rep.tests["n"] == len(LANGS)).all()
    assert set(rep.vocab["tokenizer_algo"]) == {"bpe", "unigram"}
    assert any("never pooled" in note for note in rep.notes)
    # the within-algorithm numbers are those of each algorithm alone
    alone = analyze_confounds(LMScores.from_frame(bpe))
    assert _test(rep, "bpb", "bytes", tokenizer_algo="bpe")["r"] == pytest.approx(_test(alone, "bpb", "bytes")["r"])


def test_anomalous_runs_are_flagged_and_left_out():
    df = _frame(n=10)
    broken = (df["lang"] == "de") & (df["vocab_size"] == 8000)
    df.loc[broken, "nll"] = df.loc[broken, "bytes"] * 9 * math.log(2)  # 9 bits per byte: worse than uniform bytes
    df.loc[(df["lang"] == "fi") & (df["vocab_size"] == 32000), "nll"] = np.nan  # an all-NaN run
    with pytest.warns(Warning, match="NaN"):
        scores = LMScores.from_frame(df)
    assert [r["model"] for r in scores.empty_runs] == ["fi_32000"]
    rep = analyze_confounds(scores)
    flagged = rep.anomalies
    assert set(flagged["model"]) == {"de_8000", "fi_32000"}
    de = flagged[flagged["model"] == "de_8000"].set_index("metric")
    assert "bpb" in de.index and "256 byte values" in de.loc["bpb", "reason"]
    assert "no usable value" in flagged.loc[flagged["model"] == "fi_32000", "reason"].iloc[0]
    assert not ((rep.language_table["lang"] == "de") & (rep.language_table["vocab_size"] == 8000)).any()
    assert any("anomalous run(s) left out" in n for n in rep.notes)
    # language means over the settings every language still has (de and fi lost one each)
    assert set(rep.unit_table["n_settings"]) == {1}


def test_token_nll_worse_than_a_uniform_vocabulary_is_flagged():
    df = _frame(n=10)
    zh = (df["lang"] == "zh") & (df["vocab_size"] == 8000)
    df.loc[zh, "nll"] = df.loc[zh, "tokens"] * (math.log(8000) + 0.5)  # > ln V nats per token
    flagged = analyze_confounds(LMScores.from_frame(df)).anomalies
    assert flagged["metric"].tolist() == ["token_nll"] and flagged["model"].tolist() == ["zh_8000"]


def test_holm_and_verdicts_over_the_whole_table():
    rep = analyze_confounds(_synthetic(), alpha=0.01)
    t = rep.tests.sort_values("p").reset_index(drop=True)
    m = len(t)
    expected = np.minimum(1, np.maximum.accumulate([(m - i) * p for i, p in enumerate(t["p"])]))  # Holm (1979)
    np.testing.assert_allclose(t["p_holm"], expected, rtol=1e-12)
    assert (t["confounded"] == (t["p_holm"] < 0.01)).all()
    for row in t.itertuples():
        if not row.confounded and row.p >= 0.01:
            assert f"power to detect |r| = 0.5 is {row.power:.2f}" in row.verdict and "n = 10 languages" in row.verdict


def test_correlation_power_against_simulation_and_hand_value():
    # hand value (Fisher z): atanh(0.5) sqrt(7) = 1.453; Phi(1.453 - 2.576) + Phi(-1.453 - 2.576) = 0.131
    assert correlation_power(0.5, 10, 0.01) == pytest.approx(0.131, abs=0.001)
    rng = np.random.default_rng(0)
    n, reps = 30, 4000
    x = rng.normal(size=(reps, n))
    y = 0.5 * x + math.sqrt(0.75) * rng.normal(size=(reps, n))
    rejected = np.mean([ss.pearsonr(a, b).pvalue < 0.05 for a, b in zip(x, y, strict=True)])
    assert correlation_power(0.5, n, 0.05) == pytest.approx(rejected, abs=0.03)
    assert math.isnan(correlation_power(0.5, 3, 0.05))


def test_too_few_languages_are_listed_not_tested():
    df = _frame(n=5)
    rep = analyze_confounds(LMScores.from_frame(df[df["lang"].isin(["en", "de"])]))
    assert rep.tests["p"].isna().all() and not rep.tests["confounded"].any()
    assert rep.tests["verdict"].str.startswith("not tested: n = 2 languages").all()


def test_bad_arguments_are_input_errors():
    scores = _synthetic(n=5)
    with pytest.raises(InputError, match="level"):
        analyze_confounds(scores, level="sentence")
    with pytest.raises(InputError, match="alpha"):
        analyze_confounds(scores, alpha=1.5)
    with pytest.raises(InputError, match="metric"):
        analyze_confounds(scores, ["bleu"])


def test_translation_stability_both_views():
    t = pd.DataFrame({"setting": "s", "lang": ["en", "de", "de"], "variant": ["", "a", "b"],
                      "m": [10.0, 9.0, 12.0], "k": [10.0, 20.0, 21.0]})
    r = translation_stability(t, ["m", "k"]).set_index("metric")
    assert r.loc["m", "flip_rate"] == pytest.approx(0.5)  # de-a < en < de-b: the order depends on the translation
    assert r.loc["m", "order_flips"] and not r.loc["k", "order_flips"]
    assert r.loc["m", "spread_ratio"] == pytest.approx(3.0 / 0.5)
    assert r.loc["k", "order"] == "en < de" and r.loc["k", "spread_ratio"] == pytest.approx(1.0 / 10.5)


def test_language_table_uses_common_items():
    s = _synthetic(n=5)
    table = s.table[~((s.table["lang"] == "zh") & (s.table["item"] == 0))]
    with pytest.warns(Warning, match="common item"):
        lt = language_table(LMScores(table=table))
    assert (lt["n_sentences"] == 4).all()


def test_report_section_and_plots():
    pytest.importorskip("matplotlib")
    from xleval.intrinsic._plots import length_scatter, vocab_lines

    lt = language_table(_synthetic(n=5))
    assert length_scatter(lt).axes and vocab_lines(lt).axes


def test_import_is_light():
    assert loaded_by("import xleval.intrinsic") == []


def test_cli_confounds_json(tmp_path, cli):
    path = tmp_path / "scores.parquet"
    _synthetic(n=8).table.to_parquet(path)
    rc, stdout, err = cli("intrinsic", "confounds", path, "--format", "json")
    assert rc == 0, err
    out = json.loads(stdout)
    assert out["level"] == "language" and out["n_languages"] == len(LANGS)
    rows = {(r["metric"], r["length"]): r for r in out["tests"]}
    assert set(rows) == {(m, x) for m in ("sent_nll", "token_nll", "ppl", "bpc",
                                          "bpb") for x in ("tokens", "chars", "bytes")}
    assert rows[("bpb", "bytes")]["confounded"] is True and rows[("bpb", "bytes")]["n"] == len(LANGS)
    rc, stdout, err = cli("intrinsic", "confounds", path, "--format", "json", "--level", "model", "--metric", "bpb")
    assert rc == 0, err
    out = json.loads(stdout)
    assert out["level"] == "model" and {r["n"] for r in out["tests"]} == {3 * len(LANGS)}
    rc, stdout, err = cli("intrinsic", "confounds", path)  # the text tables render
    assert rc == 0 and "length tests (language level" in stdout and "Traceback" not in err


def test_cli_confounds_text_says_no_evidence_not_false(tmp_path, cli):
    # the text table's 'confounded' column printed False where 10 languages gave the test power 0.13 (Apples PUD):
    # read as "not confounded"; it says the verdict in a word, and a note says what low power means
    path = tmp_path / "scores.parquet"
    _synthetic(n=8).table.to_parquet(path)
    rc, stdout, err = cli("intrinsic", "confounds", path, "--format", "json")
    assert rc == 0, err
    alpha = json.loads(stdout)["alpha"]
    want = {(r["metric"], r["length"]): "yes" if r["confounded"] else "before Holm only" if r["p"] < alpha
            else "no evidence" for r in json.loads(stdout)["tests"]}
    weak = [r["power"] for r in json.loads(stdout)["tests"] if want[(r["metric"], r["length"])] == "no evidence"]
    rc, stdout, err = cli("intrinsic", "confounds", path)
    assert rc == 0, err
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in stdout.splitlines() if line.startswith("│")]
    assert {(c[0], c[1]): c[-1] for c in cells} == want
    assert "yes" in want.values() and "no evidence" in want.values()  # both words are exercised
    said = " ".join(err.split())
    assert f"'no evidence' is not evidence of no confound: {len(weak)} such test(s) detect |r| = 0.5 with " \
           f"probability {min(weak):.2f}" in said


def test_cli_metrics_and_bad_input(tmp_path, cli):
    path = tmp_path / "scores.parquet"
    _synthetic(n=8).table.to_parquet(path)
    rc, stdout, err = cli("intrinsic", "metrics", path, "--by", "lang", "--format", "json", "--reference", "en")
    assert rc == 0, err
    out = json.loads(stdout)
    assert "ratio of sums" in out["aggregation"] and len(out["rows"]) == len(LANGS)
    assert {r["lang"] for r in out["information_parity"]} == set(LANGS)
    bad = tmp_path / "bad.tsv"
    bad.write_text("lang\tnll\nen\t-3\n")
    rc, _, err = cli("intrinsic", "metrics", bad)
    assert rc == 2 and "wrong sign" in err and "Traceback" not in err
