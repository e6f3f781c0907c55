"""Review of xleval.intrinsic and xleval.fairness: defects found by a demanding user, each with an
independent oracle (hand computations from the input, not outputs of the code)."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import InputError
from xleval.fairness import fairness_gaps
from xleval.intrinsic import LMScores, analyze_confounds, corpus_metrics, information_parity, length_premiums
from xleval.stats import Resampling


def _run(args: list[str]):
    """exit status and everything said (stdout + stderr)."""
    res = run_cli(*args)
    return res.exit_code, res.stdout, res.stdout + res.stderr


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


# ----------------------------------------------------------------------------- two models in one setting
def _two_models_one_setting() -> pd.DataFrame:
    rows = []
    for model, de_nll in (("A", 20.0), ("B", 40.0)):
        for lang, nll in (("en", 10.0), ("de", de_nll)):
            for item in (1, 2):
                rows.append({"lang": lang, "model": model, "setting": "s", "item": item, "nll": nll, "tokens": 5,
                             "chars": 10, "bytes": 10})
    return pd.DataFrame(rows)


def test_information_parity_does_not_silently_drop_a_second_model_of_a_setting():
    # Two models score en and de under one setting: IP of A is 0.5, of B 0.25. Reporting one number
    # for the setting (the old code kept model A's rows and dropped B's without a word) is wrong.
    scores = LMScores.from_frame(_two_models_one_setting())
    with pytest.raises(InputError, match="2 models for language"):
        information_parity(scores, "en")
    with pytest.raises(InputError, match="2 models for language"):
        length_premiums(scores, "en")


def test_confounds_do_not_pool_two_models_of_a_setting():
    scores = LMScores.from_frame(_two_models_one_setting())
    with pytest.raises(InputError, match="'A', 'B'"):
        analyze_confounds(scores)


def test_cli_two_models_in_one_setting_is_one_line_exit_2(tmp_path):
    path = tmp_path / "two.tsv"
    _two_models_one_setting().to_csv(path, sep="\t", index=False)
    rc, _, said = _run(["intrinsic", "metrics", str(path), "--reference", "en"])
    assert rc == 2, said
    assert "Traceback" not in said and "2 models for language" in said and said.count("\n") <= 1


def test_information_parity_one_model_per_setting_is_still_computed():
    df = _two_models_one_setting()
    df["setting"] = df["model"]
    ip = _quiet(information_parity, LMScores.from_frame(df), "en").set_index(["setting", "lang"])
    assert ip.loc[("A", "de"), "information_parity"] == pytest.approx(20 / 40)
    assert ip.loc[("B", "de"), "information_parity"] == pytest.approx(20 / 80)


# ----------------------------------------------------------------------------- corpus metrics
def test_corpus_metrics_keep_rows_whose_group_value_is_missing():
    df = pd.DataFrame({"lang": ["en", "en", "de"], "item": [1, 2, 1], "nll": [10.0, 30.0, 20.0],
                       "tokens": [5, 5, 5], "chars": [10, 10, 10], "bytes": [10, 20, 10],
                       "family": ["A", None, "A"]})
    table = corpus_metrics(LMScores.from_frame(df), by=["lang", "family"]).table
    assert table["n_sentences"].sum() == 3  # every row is in some group; none vanishes
    missing = table[table["family"].isna()]
    assert len(missing) == 1 and missing["bpb"].iloc[0] == pytest.approx(30.0 / math.log(2) / 20)


def test_corpus_metric_intervals_do_not_depend_on_row_order():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"lang": ["en"] * 40 + ["de"] * 40, "item": list(range(40)) * 2,
                       "nll": rng.gamma(5, 5, 80), "tokens": rng.integers(3, 30, 80),
                       "chars": rng.integers(10, 100, 80), "bytes": rng.integers(10, 120, 80)})
    cols = ["lang", "bpb_ci_low", "bpb_ci_high", "ppl_ci_low"]
    a = corpus_metrics(LMScores.from_frame(df), ci=True, n_resamples=200, random_state=0).table[cols]
    shuffled = df.sample(frac=1, random_state=1)
    b = corpus_metrics(LMScores.from_frame(shuffled), ci=True, n_resamples=200, random_state=0).table[cols]
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_token_logprobs_in_a_tsv_cell_are_read_as_json(tmp_path):
    path = tmp_path / "tlp.tsv"
    path.write_text("lang\ttoken_logprobs\ttext\nen\t[-1.0, -2.0]\thello\nde\t[-1.5]\thallo\n", encoding="utf-8")
    rc, out, said = _run(["intrinsic", "metrics", str(path), "--format", "json"])
    assert rc == 0, said
    rows = {r["lang"]: r for r in json.loads(out)["rows"]}
    assert rows["en"]["nll_sum"] == pytest.approx(3.0) and rows["en"]["tokens_sum"] == 2
    assert rows["en"]["bpb"] == pytest.approx(3.0 / math.log(2) / len(b"hello"))
    bad = tmp_path / "bad.tsv"
    bad.write_text("lang\ttoken_logprobs\nen\t[-1.0, \"x\"]\n", encoding="utf-8")
    rc, _, said = _run(["intrinsic", "metrics", str(bad)])
    assert rc == 2 and "Traceback" not in said and "not a list of numbers" in said


def test_token_logprobs_in_a_jsonl_record_are_read_as_in_a_tsv(tmp_path):
    """A JSONL record holds token_logprobs as an array (what a script writes); the table reader refused every
    array ("a table cell holds one text"), though docs/intrinsic.md lists JSONL for a scores table."""
    records = [{"lang": "en", "token_logprobs": [-1.0, -2.0], "text": "hello"},
               {"lang": "de", "token_logprobs": [-1.5], "text": "hallo"}]
    path = tmp_path / "tlp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rc, out, said = _run(["intrinsic", "metrics", str(path), "--format", "json"])
    assert rc == 0, said
    rows = {r["lang"]: r for r in json.loads(out)["rows"]}
    assert rows["en"]["nll_sum"] == pytest.approx(3.0) and rows["en"]["tokens_sum"] == 2
    assert rows["de"]["bpb"] == pytest.approx(1.5 / math.log(2) / len(b"hallo"))
    other = tmp_path / "other.jsonl"  # an array in any other column is still refused, in one line
    other.write_text(json.dumps({"lang": "en", "nll": 3.0, "tokens": [1, 2]}) + "\n", encoding="utf-8")
    rc, _, said = _run(["intrinsic", "metrics", str(other)])
    assert rc == 2 and "Traceback" not in said and "'tokens' is an array" in said


# ----------------------------------------------------------------------------- CLI reach
def test_cli_reaches_length_premiums_char_unit_and_resamples(tmp_path):
    path = tmp_path / "s.tsv"
    # "e\u0301" is one grapheme but two code points; bytes: "e\u0301t" = 4, "abc" = 3
    pd.DataFrame({"lang": ["en", "fr"], "item": [1, 1], "nll": [3.0, 6.0], "tokens": [2, 4],
                  "text": ["abc", "e\u0301t"]}).to_csv(path, sep="\t", index=False)
    res = _run(["intrinsic", "metrics", str(path), "--reference", "en", "--char-unit", "graphemes",
                "--ci", "--n-resamples", "50", "--format", "json"])
    assert res[0] == 0, res[2]
    body = json.loads(res[1])
    prem = {r["lang"]: r for r in body["length_premiums"]}
    assert prem["fr"]["byte_premium"] == pytest.approx(4 / 3)
    assert prem["fr"]["length_premium"] == pytest.approx(2 / 3)  # graphemes: 2 vs 3
    assert prem["fr"]["token_premium"] == pytest.approx(4 / 2)
    rows = {r["lang"]: r for r in body["rows"]}
    assert rows["fr"]["chars_sum"] == 2


# ----------------------------------------------------------------------------- fairness
def _accuracy_table() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame([{"lang": lang, "qid": i, "correct": int(rng.random() < p)}
                         for lang, p in (("en", 0.9), ("de", 0.8), ("sw", 0.55)) for i in range(60)])


def test_fairness_independent_intervals_do_not_depend_on_row_order():
    df = _accuracy_table()
    kw = dict(resampling=Resampling(n_resamples=200, random_state=0))
    a = _quiet(fairness_gaps, df, "correct", "lang", **kw)
    b = _quiet(fairness_gaps, df.sample(frac=1, random_state=3), "correct", "lang", **kw)
    for ga, gb in zip(a.languages, b.languages, strict=True):
        assert (ga.mean.ci_low, ga.mean.ci_high) == (gb.mean.ci_low, gb.mean.ci_high)
    assert (a.summary.worst.ci_low, a.summary.std.ci_high) == (b.summary.worst.ci_low, b.summary.std.ci_high)


def test_fairness_by_model_error_names_the_model(tmp_path):
    path = tmp_path / "models.csv"
    path.write_text("model,lang,acc\nA,en,0.9\nA,de,0.8\nB,de,0.7\nB,fr,0.6\n", encoding="utf-8")
    rc, _, said = _run(["fairness", "gaps", str(path), "--metric", "acc", "--model", "model"])
    assert rc == 2 and "Traceback" not in said
    assert "model 'B'" in said and "'en'" in said  # which model lacks the reference language


@pytest.mark.parametrize("column", ["tokens", "chars", "bytes"])
def test_infinite_count_is_an_error_not_a_zero_rate(column):
    # tokens = inf made token_nll 0 and perplexity 1 (bytes = inf: bpb 0) without a word
    df = pd.DataFrame({"lang": ["en", "en"], "nll": [10.0, 10.0], "tokens": [5.0, 5.0], "chars": [10.0, 10.0],
                       "bytes": [10.0, 10.0]})
    df.loc[0, column] = float("inf")
    with pytest.raises(InputError, match=rf"column '{column}' row 1: inf is not a finite count"):
        LMScores.from_frame(df)


def test_fairness_paired_rows_without_item_id_are_an_error():
    # the en and de rows with no id were paired as one "NaN" item (n 3 instead of 2), silently
    df = pd.DataFrame({"lang": ["en", "en", "de", "de", "en", "de"], "qid": [1, None, 1, None, 2, 2],
                       "acc": [1, 0, 1, 1, 1, 0]})
    with pytest.raises(InputError, match=r"column 'qid' row 2: no item id"):
        fairness_gaps(df, "acc", "lang", item="qid", resampling=Resampling(n_resamples=50, random_state=0))


@pytest.mark.parametrize("column", ["model", "setting", "item"])
def test_scores_with_an_empty_key_cell_are_an_error(column):
    # an empty model became the model named 'nan'; an empty item an unpaired id
    df = pd.DataFrame({"lang": ["en", "de"], "model": ["m", "m"], "setting": ["s", "s"], "item": [1, 1],
                       "nll": [10.0, 20.0]})
    df[column] = df[column].astype(object)
    df.loc[1, column] = None
    with pytest.raises(InputError, match=rf"column '{column}' row 2 is empty"):
        LMScores.from_frame(df)


def test_fairness_by_model_warnings_name_the_model():
    from xleval.exceptions import DataQualityWarning
    from xleval.fairness import fairness_gaps_by

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"model": np.repeat(["A", "B"], 40), "lang": np.tile(np.repeat(["en", "de"], 20), 2),
                       "acc": rng.random(80)})
    df.loc[(df["model"] == "B") & (df.index % 4 == 0), "acc"] = np.nan  # 10 of B's 40 rows
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fairness_gaps_by(df, "model", "acc", "lang", reference="en")
    said = [str(w.message) for w in caught if issubclass(w.category, DataQualityWarning)]
    assert any(m.startswith("model 'B': ") and "10 of 40" in m for m in said), said
    assert not any("10 of 40" in m and not m.startswith("model 'B': ") for m in said), said


def test_a_warning_of_parity_and_premiums_is_said_once(tmp_path):
    """Information parity and the length premiums leave out the same rows without a parallel row: the command said
    it twice, once per analysis (its de-duplication compared texts that differ by their labels)."""
    path = tmp_path / "ip.tsv"
    path.write_text("lang\titem\tnll\ttokens\ttext\nen\t1\t3\t2\tab\nen\t2\t3\t2\tab\nde\t1\t4\t2\tabc\n",
                    encoding="utf-8")
    rc, _, said = _run(["intrinsic", "metrics", str(path), "--reference", "en"])
    assert rc == 0, said
    left_out = [line for line in said.splitlines() if "were left out" in line]
    assert len(left_out) == 1 and "information parity and length premium (setting=model, de vs en)" in left_out[0]
