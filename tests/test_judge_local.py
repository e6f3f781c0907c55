"""``judge:PATH`` end to end through transformers, on tiny GPT-2 checkpoints built here (no network, no GPU).

The steered checkpoints (``_judge_fixtures.build_steered_gpt2``) answer GEMBA's prompts with fixed texts under
greedy decoding, so parsing, spans, scores, failures, the cache and the command line are checked on real
generation: nothing in xleval is patched.
"""
from __future__ import annotations

import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy

pytestmark = pytest.mark.neural
torch = importorskip_lazy("torch", reason="needs the neural extra (torch)")
importorskip_lazy("transformers", reason="needs transformers")

from _judge_fixtures import build_steered_gpt2  # noqa: E402
from xleval.exceptions import DataQualityWarning, InputError, SignatureMismatchError  # noqa: E402
from xleval.io import read_table, read_table_metadata  # noqa: E402
from xleval.judges import JudgeLocal  # noqa: E402
from xleval.metrics import get_metric, score_frame  # noqa: E402
from xleval.metrics._judge import Judge  # noqa: E402

# Error-list prompts (ESA stage 1, MQM) end with "understandable." / "comprehension."; score prompts (ESA stage 2,
# DA) end with "Score (0-100): " / "Score: ". The good model lists one minor error on "Matte" and scores 72.
GOOD = {"understandable.": ["Minor:", "\n", "style/awkward", ' - "', 'Matte"'], "Score: ": ["7", "2"]}
# The bad model answers without an error list, and with a score outside 0-100.
BAD = {"understandable.": ["I", " cannot", " tell"], "Score: ": ["2", "5", "0"]}

SRCS = ["The cat sits on the mat.", "The weather is nice.", "The cat sat on the mat."]
HYPS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist schön.", "Matte Katze."]
# "Matte" starts at character 24 of HYPS[0] (D-i-e-space-K-a-t-z-e-space-s-i-t-z-t-space-a-u-f-space-d-e-r-space),
# is absent from HYPS[1], and starts at 0 in HYPS[2]
SPANS = [(24, 29), (-1, -1), (0, 5)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("judges")
    return {"good": build_steered_gpt2(root / "good", GOOD), "bad": build_steered_gpt2(root / "bad", BAD, seed=1)}


def _table(n_copies: int = 1) -> pd.DataFrame:
    rows = []
    for lp in ("en-de", "en-cs"):
        for i, (s, h) in enumerate(zip(SRCS, HYPS, strict=True)):
            rows.append({"lp": lp, "system": "A", "seg_id": i + 1, "source": s, "hypothesis": h,
                         "reference": "ref"})
    return pd.DataFrame(rows * n_copies)


def test_esa_two_stages_scores_and_spans(models):
    judge = Judge(models["good"], prompt="esa", src_lang="en", tgt_lang="de", local=JudgeLocal(batch_size=2))
    result = judge.judge(HYPS, None, SRCS)
    assert result.scores.tolist() == [72.0, 72.0, 72.0]
    assert result.reasons == ("", "", "")
    assert result.requests == 6 and result.cached == 0  # two stages per segment
    spans = result.spans
    assert spans["segment"].tolist() == [0, 1, 2]
    assert set(spans["severity"]) == {"minor"} and set(spans["category"]) == {"style/awkward"}
    assert list(zip(spans["start"], spans["end"], strict=True)) == SPANS
    assert result.counts["minor"].tolist() == [1, 1, 1] and result.counts["major"].tolist() == [0, 0, 0]


def test_mqm_score_is_minus_the_weighted_errors_and_da_reads_the_number(models):
    mqm = Judge(models["good"], prompt="mqm", src_lang="en", tgt_lang="de")
    assert mqm.sentence_scores(HYPS, None, SRCS).tolist() == [-1.0, -1.0, -1.0]  # one minor error = weight 1
    da = Judge(models["good"], prompt="da", src_lang="en", tgt_lang="de")
    assert da.sentence_scores(HYPS, None, SRCS).tolist() == [72.0, 72.0, 72.0]
    assert da.corpus_score(HYPS, None, SRCS) == 72.0


def test_unreadable_answers_are_missing_with_reasons_and_counted(models):
    esa = Judge(models["bad"], prompt="esa", src_lang="en", tgt_lang="de")
    result = esa.judge(HYPS, None, SRCS)
    assert np.isnan(result.scores).all()
    assert result.reasons == ("stage 2: 250 outside 0-100",) * 3
    assert result.failures == 3 and result.failure_summary() == "3 stage 2: 250 outside 0-100"
    with pytest.warns(DataQualityWarning, match=r"gemba_esa: 3 of 3 judge answer\(s\) could not be read"):
        stats = esa.sentence_stats(HYPS, None, SRCS)
    assert stats.tolist() == [[0.0, 0.0]] * 3  # a missing score adds nothing to a corpus mean
    mqm = Judge(models["bad"], prompt="mqm", src_lang="en", tgt_lang="de")
    assert mqm.judge(HYPS, None, SRCS).reasons == ("no error list",) * 3


def test_signature_names_model_content_prompt_and_decoding(models, tmp_path):
    sig = Judge(models["good"], src_lang="en", tgt_lang="de").signature
    fields = dict(f.split(":", 1) for f in sig.split("|"))
    assert fields["model"] == "good" and len(fields["sha"]) == 16
    assert fields["prompt"] == "gemba-esa" and len(fields["prompt-sha"]) == 12
    assert fields["decode"] == "greedy" and fields["max-new"] == "512,32" and fields["chat"] == "plain"
    assert fields["prec"] == "fp32" and fields["refs"] == "no" and "transformers" in fields
    # the same weights in another folder name the same content; other weights another
    other = Judge(models["bad"], src_lang="en", tgt_lang="de").signature
    assert dict(f.split(":", 1) for f in other.split("|"))["sha"] != fields["sha"]
    assert Judge(models["good"], prompt="mqm").signature.split("|")[2] == "prompt:gemba-mqm"


def test_cache_second_run_sends_nothing_and_keeps_spans(models, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    first = Judge(models["good"], src_lang="en", tgt_lang="de", cache=cache).judge(HYPS, None, SRCS)
    again = Judge(models["good"], src_lang="en", tgt_lang="de", cache=cache)
    second = again.judge(HYPS, None, SRCS)
    assert second.requests == 0 and second.cached == 6
    assert again._backend._loaded is None  # the model was never loaded
    assert second == first.__class__(first.scores, first.reasons, first.answers, first.spans, first.counts, 0, 6,
                                     first.signature)
    # another model's answers never come out of this cache file
    (path,) = cache.iterdir()
    with pytest.raises(SignatureMismatchError):
        Judge(models["bad"], src_lang="en", tgt_lang="de", cache=path)
    with sqlite3.connect(path) as con:
        # 3 stage-1 and 3 stage-2 prompts (stage 2 quotes the segment and its stage-1 answer)
        assert con.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 6


def test_score_frame_groups_rows_by_language_pair(models):
    df = _table()
    scored = score_frame(df, [f"judge:{models['good']}"], {f"judge:{models['good']}": {"prompt": "da"}})
    assert scored.frame["gemba_da"].tolist() == [72.0] * 6
    metrics = scored.metrics["gemba_da"]
    assert sorted((m.src_lang, m.tgt_lang) for m in metrics.values()) == [("en", "cs"), ("en", "de")]
    # each pair's prompt names its languages
    plan = next(iter(metrics.values())).plan(HYPS[:1], None, SRCS[:1])
    assert plan.prompts[0][0]["content"].startswith("Score the following translation from English to Czech")


def test_registry_and_validation(models):
    assert get_metric(f"judge:{models['good']}", prompt="mqm").column == "gemba_mqm"
    with pytest.raises(InputError, match="needs a local model folder or a server"):
        get_metric("judge")
    with pytest.raises(InputError, match="prompt must be one of esa, mqm, da"):
        Judge(models["good"], prompt="sqm")
    with pytest.raises(InputError, match="use_refs=True is for prompt='da'"):
        Judge(models["good"], prompt="esa", use_refs=True)
    with pytest.raises(InputError, match="prompts name the languages"):
        Judge(models["good"]).sentence_scores(HYPS, None, SRCS)
    with pytest.raises(InputError, match="names no model"):
        Judge("http://127.0.0.1:9/v1")


def test_cli_scores_a_table_with_reasons_counts_spans_and_signature(models, tmp_path, cli):
    src = tmp_path / "table.tsv"
    _table().to_csv(src, sep="\t", index=False)
    out, spans = tmp_path / "out.tsv", tmp_path / "spans.tsv"
    rc, _, err = cli("score", str(src), "-m", f"judge:{models['good']}", "-o", str(out), "--error-spans", str(spans),
                     "--cache", str(tmp_path / "c.sqlite"))
    assert rc == 0, err
    table = read_table(out)
    assert table["gemba_esa"].tolist() == [72.0] * 6
    assert table["gemba_esa_failure"].fillna("").tolist() == [""] * 6
    assert table["gemba_esa_minor"].tolist() == [1] * 6 and table["gemba_esa_major"].tolist() == [0] * 6
    sig = read_table_metadata(out)["signatures"]["gemba_esa"]
    assert "prompt:gemba-esa" in sig and "sha:" in sig
    side = read_table(spans)
    assert len(side) == 6 and set(side["metric"]) == {"gemba_esa"}
    assert side.sort_values("row")[["start", "end"]].to_numpy().tolist() == [list(s) for s in SPANS] * 2


def test_cli_failures_are_said_and_kept_as_missing(models, tmp_path, cli):
    src = tmp_path / "table.tsv"
    _table().to_csv(src, sep="\t", index=False)
    out = tmp_path / "out.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rc, _, err = cli("score", str(src), "-m", f"judge:{models['bad']}", "--judge-prompt", "da", "-o", str(out))
    # no answer read: the run is refused in one line with the reasons, and nothing is written (a column of missing
    # scores with exit status 0 let a wrong model or prompt pass for a result)
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith("xleval: error: gemba_da: none of the 6 answers could be read (the reasons: 6x 250 outside "
                          "0-100)") and not out.exists()


def test_cli_dry_run_shows_prompts_and_counts_requests(models, tmp_path, cli):
    src = tmp_path / "table.tsv"
    _table().to_csv(src, sep="\t", index=False)
    rc, out, err = cli("score", str(src), "-m", f"judge:{models['good']}", "--dry-run")
    assert rc == 0, err
    assert "12 request(s) to send, 0 answer(s) already cached" in out  # 6 rows x 2 ESA stages
    assert "[system]\nYour task is to identify machine translation errors" in out
    assert "English source:\n```The cat sits on the mat.```\nCzech translation:\n```Die Katze sitzt auf der Matte.```" \
        in out


def test_cli_two_judges_get_a_column_each(models, tmp_path, cli):
    src = tmp_path / "table.tsv"
    _table().to_csv(src, sep="\t", index=False)
    out = tmp_path / "out.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rc, _, err = cli("score", str(src), "-m", f"judge:{models['good']},judge:{models['bad']}", "--judge-prompt",
                         "da", "-o", str(out))
    assert rc == 0, err  # one judge's answers were read: written, and the other's loss said
    assert "gemba_da_bad: none of the 6 answers could be read (the reasons: 6x 250 outside 0-100); its column is " \
        "all missing" in err
    table = read_table(out)
    assert table["gemba_da_good"].tolist() == [72.0] * 6 and table["gemba_da_bad"].isna().all()
    sigs = read_table_metadata(out)["signatures"]
    assert sigs["gemba_da_good"] != sigs["gemba_da_bad"]


def test_chat_template_renders_the_messages(tmp_path):
    """A tokenizer with a chat template: the judge renders the messages with it (signature chat:template); the
    template's generation prompt ends with 'ANSWER:', which the steered model answers with 72."""
    from transformers import AutoTokenizer

    path = build_steered_gpt2(tmp_path / "chat", {"ANSWER:": ["7", "2"]})
    tok = AutoTokenizer.from_pretrained(path)
    tok.chat_template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}ANSWER:{% endif %}")
    tok.save_pretrained(path)
    judge = Judge(path, prompt="da", src_lang="en", tgt_lang="de")
    assert "|chat:template|" in judge.signature
    assert judge.sentence_scores(HYPS, None, SRCS).tolist() == [72.0] * 3
