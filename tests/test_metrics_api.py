"""Metric objects, registry, the seed's simple BLEU, tokenizer defaults, table scoring and `xleval score`."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF

from import_check import modules_after
from xleval.exceptions import InputError, XlevalWarning
from xleval.metrics import BLEU, CHRF, TER, Metric, available_metrics, corpus_table, get_metric, score_frame
from xleval.metrics._tokenize import load_tokenizer

# ------------------------------------------------------------------ the seed's worked examples (seed 004)
SEED_REFS = ["the cat is on the mat", "there is a cat on the mat"]


def test_seed_identical_candidate_scores_one():
    score = BLEU.simple(nrefs=2).sentence_scores(["the cat is on the mat"], [[SEED_REFS[0]], [SEED_REFS[1]]])
    assert score[0] / 100 == pytest.approx(1.0)


def test_seed_short_candidate_is_about_zero():
    # BP = exp(1 - 6/2); p1 = p2 = 1; p3 = p4 floored at 1e-16: exp(-2) * 1e-8
    score = BLEU.simple(nrefs=2).sentence_scores(["the cat"], [[SEED_REFS[0]], [SEED_REFS[1]]])[0] / 100
    assert score == pytest.approx(np.exp(-2) * 1e-8, rel=1e-9)


def test_seed_repeated_word_is_clipped_to_zero():
    # p1 = 2/4 (clipped by 'the' x2 in a reference), p2..p4 floored: 0.5**0.25 * 1e-12, BP = exp(1 - 6/4)
    score = BLEU.simple(nrefs=2).sentence_scores(["The the THE the"], [[SEED_REFS[0]], [SEED_REFS[1]]])[0] / 100
    assert score == pytest.approx(np.exp(1 - 6 / 4) * 0.5**0.25 * 1e-12, rel=1e-9)
    assert score < 1e-10


def test_simple_signature_names_its_options():
    sig = BLEU.simple().signature
    assert "case:lc" in sig and "tok:none" in sig and "smooth:epsilon[1e-16]" in sig and "eff:no" in sig


# ------------------------------------------------------------------ Metric contract (all stat metrics)
@pytest.mark.parametrize("metric", [BLEU(), CHRF(), CHRF(word_order=2), TER()], ids=lambda m: m.name)
def test_corpus_equals_score_of_summed_stats_and_chunks_add_up(metric):
    hyps = ["a b c d", "the cat sat", "", "x y z", "one two three four five"]
    refs = ["a b c e", "the cat sat down", "nothing", "x y", "one two three four five"]
    stats = metric.sentence_stats(hyps, refs)
    assert stats.shape[0] == len(hyps)
    parts = [metric.sentence_stats(hyps[:2], refs[:2]), metric.sentence_stats(hyps[2:], refs[2:])]
    np.testing.assert_array_equal(np.vstack(parts), stats)
    assert metric.corpus_score(hyps, refs) == pytest.approx(metric.score_from_stats(stats.sum(axis=0)))
    per_row = metric.score_from_stats(stats)
    np.testing.assert_allclose(per_row, metric.sentence_scores(hyps, refs))
    assert isinstance(metric, Metric) and metric.signature.endswith("xleval:0.1.0")


def test_scoring_never_mutates_the_metric():
    m = BLEU(nrefs=1)
    before = dict(vars(m))
    m.sentence_scores(["a b"], ["a b"])
    m.corpus_score(["a b"], ["a c"])
    assert vars(m) == before


def test_without_nrefs_only_the_signatures_reference_count_follows_the_data():
    """Built without nrefs (sacrebleu's way), the object records the number of references it last
    scored, for its signature, as sacrebleu's get_signature() does; nothing else changes."""
    m = BLEU()
    before = dict(vars(m))
    assert m.signature.startswith("nrefs:1|")
    m.corpus_score(["a b"], [["a c"], ["a b"]])
    assert {k: v for k, v in vars(m).items() if k != "_seen_nrefs"} == before
    assert m.signature.startswith("nrefs:2|") and str(m.get_signature()).startswith("nrefs:2|")


def test_bad_inputs_raise_input_errors():
    with pytest.raises(InputError, match="aligned"):
        BLEU().sentence_scores(["a", "b"], ["a"])
    with pytest.raises(InputError, match="not a string"):
        CHRF().sentence_scores(["a", None], ["a", "b"])
    with pytest.raises(InputError, match="nrefs=2"):
        BLEU(nrefs=1).sentence_scores(["a"], [["a"], ["b"]])  # an explicit nrefs is checked
    with pytest.raises(InputError, match="nrefs='var'"):
        BLEU(nrefs=2).sentence_scores(["a", "b"], [["a", "b"], ["b", None]])
    with pytest.raises(InputError, match="segment 1 has no reference"):
        BLEU(nrefs="var").sentence_scores(["a", "b"], [["a", None], ["b", None]])
    with pytest.raises(InputError, match="needs references"):
        BLEU().sentence_scores(["a"])
    with pytest.raises(InputError, match="smooth_method"):
        BLEU(smooth_method="magic")
    with pytest.raises(InputError, match="tokenize"):
        BLEU(tokenize="klingon")


# ------------------------------------------------------------------ registry
def test_registry_lists_without_importing_metric_modules():
    assert "comet:PATH" in available_metrics()
    loaded = modules_after("import xleval.metrics as m; m.available_metrics()")
    assert not {k for k in loaded if k.startswith("xleval.metrics._bleu") or k == "torch"}


def test_registry_builds_metrics_and_rejects_unknown_names():
    assert "bleu" in available_metrics() and "chrf++" in available_metrics()
    assert get_metric("chrf++").word_order == 2 and get_metric("chrf++").name == "chrf++"
    assert get_metric("bleu", tokenize="char").tokenizer == "char"
    with pytest.raises(InputError, match="unknown metric"):
        get_metric("rouge")
    with pytest.raises(InputError, match="model path"):
        get_metric("comet")
    with pytest.raises(InputError, match="takes no"):
        get_metric("bleu:foo")


# ------------------------------------------------------------------ target-language tokenizer defaults
def test_tokenizer_follows_target_language():
    assert BLEU(tokenize=None, tgt_lang="zh").tokenizer == "zh"
    assert BLEU(tokenize=None, tgt_lang="de").tokenizer == "13a"
    assert BLEU(tokenize=None).tokenizer == "13a"


def test_missing_mecab_falls_back_with_a_warning(monkeypatch):
    """Simulate a machine without the ja extra (CI installs it, so the real import would succeed)."""
    import xleval.metrics._bleu as bleu_module
    from xleval.exceptions import MissingDependencyError

    real = bleu_module.load_tokenizer

    def missing(name):
        if name.endswith("mecab"):
            raise MissingDependencyError("mecab-python3, ipadic", "ja", f"the {name} tokenizer")
        return real(name)

    monkeypatch.setattr(bleu_module, "load_tokenizer", missing)
    with pytest.warns(XlevalWarning, match="ja-mecab"):
        m = BLEU(tokenize=None, tgt_lang="ja")
    assert m.tokenizer == "char" and "tok:char" in m.signature


@pytest.mark.parametrize("lang, tokenizer, hyps, refs", [
    ("ja", "ja-mecab", ["今日は良い天気です。", "猫が座った", ""], ["今日はいい天気です。", "猫が座っている", "空"]),
    ("ko", "ko-mecab", ["오늘은 날씨가 좋습니다.", "고양이가 앉았다", ""],
     ["오늘 날씨가 좋네요.", "고양이가 앉아 있다", "비"]),
])
def test_mecab_tokenizers_equal_sacrebleu_when_installed(lang, tokenizer, hyps, refs):
    try:
        load_tokenizer(tokenizer)
    except Exception as exc:  # noqa: BLE001 - the extra is optional; `make test` installs it
        pytest.skip(f"{tokenizer} not installed (pip install 'xleval[{lang}]'): {exc}")
    ours = BLEU(tokenize=None, tgt_lang=lang)
    assert ours.tokenizer == tokenizer and f"tok:{tokenizer}" in ours.signature
    theirs = SacreBLEU(tokenize=tokenizer)
    expected = [theirs.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)]
    np.testing.assert_allclose(ours.sentence_scores(hyps, refs), expected, rtol=0, atol=1e-9)


# ------------------------------------------------------------------ tables
def _table():
    return pd.DataFrame({
        "lp": ["de-en", "de-en", "en-zh", "en-zh"],
        "system": ["A", "A", "B", "B"],
        "hypothesis": ["The cat sat on the mat.", "Hello world", "我爱北京天安门。", "今天天气很好"],
        "reference": ["The cat is on the mat.", "Hello, world!", "我爱北京的天安门。", "今天的天气很好"],
    })


def test_score_frame_uses_zh_tokenizer_for_chinese_rows_and_records_it():
    sf = score_frame(_table(), ["bleu", "chrf"])
    zh = SacreBLEU(tokenize="zh", effective_order=True)
    expected = zh.sentence_score("我爱北京天安门。", ["我爱北京的天安门。"]).score
    assert sf.frame["bleu"].iloc[2] == pytest.approx(expected)
    meta = sf.metadata()
    assert "tok:zh" in meta["signatures_by_tgt_lang"]["bleu"]["zh"]
    assert "tok:13a" in meta["signatures_by_tgt_lang"]["bleu"]["en"]
    assert "bleu" in meta["signatures"] and "chrf" in meta["signatures"]


def test_corpus_table_equals_sacrebleu_corpus_scores():
    df = _table()
    table = corpus_table(score_frame(df, ["bleu", "chrf"]))
    de = df[df.lp == "de-en"]
    row = table[table.lp == "de-en"].iloc[0]
    assert row["n"] == 2
    assert row["chrf"] == pytest.approx(SacreCHRF().corpus_score(de.hypothesis.tolist(), [de.reference.tolist()]).score)
    sb = SacreBLEU().corpus_score(de.hypothesis.tolist(), [de.reference.tolist()]).score
    assert row["bleu"] == sb


def test_missing_texts_are_an_error_not_dropped():
    df = _table()
    df.loc[1, "hypothesis"] = None
    with pytest.raises(InputError, match="row 2"):
        score_frame(df, ["chrf"])


# ------------------------------------------------------------------ CLI
def test_cli_table_mode_writes_scores_and_signatures(tmp_path, cli):
    src = tmp_path / "in.tsv"
    _table().rename(columns={"hypothesis": "mt"}).to_csv(src, sep="\t", index=False)
    out = tmp_path / "out.parquet"
    res = cli("score", src, "--metric", "bleu,chrf", "-o", out, "--col", "hypothesis=mt")
    assert res.exit_code == 0, res.stderr
    scored = pd.read_parquet(out)
    assert list(scored.columns[-2:]) == ["bleu", "chrf"] and len(scored) == 4
    import pyarrow.parquet as pq

    meta = json.loads(pq.read_schema(out).metadata[b"xleval"])
    assert meta["signatures"]["chrf"].startswith("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:")


def test_cli_plain_files_corpus_json_equals_sacrebleu(tmp_path, cli):
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyps, refs = ["Hello world .", "The cat sat on the mat"], ["Hello world!", "The cat is on the mat"]
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    # plain files print sacrebleu's JSON: one object per metric, the score rounded to -w decimals
    res = cli("score", "-i", hyp, "-r", ref, "-l", "de-en", "--metric", "bleu,chrf", "--format", "json", "-w", "6")
    assert res.exit_code == 0, res.stderr
    corpus = {row["name"]: row["score"] for row in json.loads(res.stdout)}
    assert corpus["chrF2"] == pytest.approx(SacreCHRF().corpus_score(hyps, [refs]).score, abs=1e-6)
    assert corpus["BLEU"] == pytest.approx(SacreBLEU().corpus_score(hyps, [refs]).score, abs=1e-6)


def test_cli_user_errors_are_one_line_exit_2(tmp_path, cli):
    res = cli("score", "-i", tmp_path / "nope.txt", "-r", tmp_path / "nope2.txt")
    assert res.exit_code == 2 and "no such file" in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.count("\n") == 1
    res = cli("score", "-i", "x", "--metric", "rouge")
    assert res.exit_code == 2


def test_ja_mecab_default_equals_sacrebleu_on_wmt21_en_ja(wmt21_segments):
    try:
        load_tokenizer("ja-mecab")
    except Exception as exc:  # noqa: BLE001 - the extra is optional; `make test` installs it
        pytest.skip(f"ja-mecab not installed (pip install 'xleval[ja]'): {exc}")
    df = wmt21_segments[wmt21_segments["lp"] == "en-ja"].iloc[:400]
    scored = score_frame(df, ["bleu"])
    assert "tok:ja-mecab" in scored.signatures["bleu"]
    theirs = SacreBLEU(tokenize="ja-mecab", effective_order=True)
    expected = [theirs.sentence_score(h, [r]).score for h, r in zip(df["hypothesis"], df["reference"], strict=True)]
    np.testing.assert_allclose(scored.frame["bleu"].to_numpy(), expected, rtol=0, atol=1e-9)
