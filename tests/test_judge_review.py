"""Review of the LLM judge: answers as models really write them (a minus sign, decimals, ``85/100`` inside a
sentence, severity headers in markdown or with the first error on the header's line), answers cut by the length
bound, broken HTTP bodies, FLORES-style language codes, and the parser in the signature.

Every expected value is written by hand from the answer's text; servers are processes started here on 127.0.0.1."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from _judge_fixtures import HYPS, SERVER_HEAD, SERVER_RUN, SRCS, fast_client, server_fixture, server_stats
from xleval.exceptions import DataQualityWarning
from xleval.metrics import _judge_prompts as P
from xleval.metrics._judge import Judge

# Model names choose the behaviour. The answers are fixed texts; finish_reason "length" is what an OpenAI-compatible
# server reports when max_tokens stopped the answer.
SERVER = SERVER_HEAD + r'''
MODELS = ["incomplete", "badstatus", "cut_list", "cut_number", "cut_after", "minus", "inline"]
lock = threading.Lock()
state = {"requests": 0}


class Handler(JsonHandler):
    def do_GET(self):
        if self.path == "/stats":
            return self._send(200, state)
        self._send(200, {"data": [{"id": m} for m in MODELS]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with lock:
            state["requests"] += 1
        model = body["model"]
        score = body["messages"][-1]["content"].rstrip().endswith(("Score:", "Score (0-100):"))
        if model == "incomplete":  # promises 1000 bytes, sends 13, closes
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.close_connection = True
            return
        if model == "badstatus":  # not HTTP at all
            self.wfile.write(b"garbage\r\n\r\n")
            self.close_connection = True
            return
        answer, reason = {
            "cut_list": ('Critical:\nno-error\nMajor:\naccuracy/mistranslation - "Katze"\nMinor:\nfluency/gr',
                         "length"),
            "cut_number": ("The translation is adequate. Score: 8", "length"),
            "cut_after": ("Score: 85. The translation keeps the meaning but", "length"),
            "minus": ("Score: -5", "stop"),
            "inline": ('Critical: no-error\nMajor: accuracy/mistranslation - "Katze"\nMinor: no-error', "stop"),
        }[model]
        if score and model == "cut_list":
            answer, reason = "60", "stop"
        self._chat(answer, reason)

''' + SERVER_RUN

FAST = fast_client()
server = server_fixture(SERVER)


def _requests(base: str) -> int:
    return server_stats(base)["requests"]


# ----------------------------------------------------------------------------------------------- score answers
@pytest.mark.parametrize(("answer", "expected"), [
    ("-5", (None, "-5 outside 0-100")),  # minus five, not five
    ("Score: -5", (None, "-5 outside 0-100")),
    ("\u22125", (None, "-5 outside 0-100")),  # the typographic minus sign
    ("72.5", (72.5, "")),  # a continuous scale: a decimal is one number, not "2 numbers"
    ("Score: 85.", (85.0, "")),  # a full stop is no decimal part
    ("Score: 85/100", (85.0, "")),  # N/100 inside a sentence
    ("I give it 85 out of 100.", (85.0, "")),
    ("On a 0-100 scale: 85", (None, "3 numbers")),  # a range's dash is no minus sign: 0, 100 and 85
    ("70-80", (None, "2 numbers")),
    ("85/100 or 90/100", (None, "4 numbers")),
])
def test_score_answers_with_signs_decimals_and_ratios(answer, expected):
    assert P.parse_score(answer) == expected


def test_no_error_scores_zero_not_minus_zero():
    assert math.copysign(1.0, P.mqm_score([])) == 1.0  # "-0.0" in a table reads as a penalty


# ----------------------------------------------------------------------------------------------- error lists
@pytest.mark.parametrize("answer", [
    'Critical: no-error\nMajor: accuracy/mistranslation - "Katze"\nMinor: no-error',  # errors on the header line
    'Critical:\nno-error\nMajor errors:\naccuracy/mistranslation - "Katze"\nMinor errors:\nno-error',
    '**Critical:**\nno-error\n**Major:**\naccuracy/mistranslation - "Katze"\n**Minor:**\nno-error',
    '### Critical:\nno-error\n### Major:\n- accuracy/mistranslation - "Katze"\n### Minor:\nno-error',
    'Critical\uff1a\nno-error\nMajor\uff1a\naccuracy/mistranslation - "Katze"\nMinor\uff1a\nno-error',  # fullwidth
])
def test_error_list_headers_as_models_write_them(answer):
    """Each answer lists one major mistranslation of "Katze": MQM -5, one span at 4..9 of HYPS[0]. (Read as no
    error, the translation would score a perfect 0; "Major errors:" read as an error would score -25.)"""
    errors, why = P.parse_errors(answer)
    assert why == ""
    assert errors == [P.ParsedError("major", "accuracy/mistranslation", "Katze")]
    assert P.mqm_score(errors) == -5.0
    assert P.locate_spans(errors, HYPS[0]) == [(4, 9)]


def test_inline_headers_through_a_server(server):
    judge = Judge(f"{server}#inline", prompt="mqm", src_lang="en", tgt_lang="de", server=FAST)
    result = judge.judge(HYPS, None, SRCS)
    assert result.scores.tolist() == [-5.0, -5.0] and result.reasons == ("", "")
    assert result.counts["major"].tolist() == [1, 1]


# ----------------------------------------------------------------------------------------------- languages
def test_flores_codes_are_named_in_the_prompt():
    assert [P.language_name(c) for c in ("deu_Latn", "eng_Latn", "zho_Hans", "arb_Arab", "eng")] == \
        ["German", "English", "Chinese", "Arabic", "English"]
    plan = Judge("http://127.0.0.1:9/v1#m", prompt="da", src_lang="eng_Latn", tgt_lang="deu_Latn").plan(
        HYPS[:1], None, SRCS[:1])  # nothing is sent: port 9 is never asked
    text = plan.prompts[0][0]["content"]
    assert text.startswith("Score the following translation from English to German on")
    assert 'English source: "The cat sits on the mat."\nGerman translation: "Die Katze sitzt auf der Matte."' in text


# ----------------------------------------------------------------------------------------------- HTTP bodies
@pytest.mark.parametrize(("model", "what"), [("incomplete", "IncompleteRead"), ("badstatus", "BadStatusLine")])
def test_broken_bodies_are_retried_then_a_reason(server, model, what):
    judge = Judge(f"{server}#{model}", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    result = judge.judge(HYPS[:1], None, SRCS[:1])
    assert np.isnan(result.scores[0])
    assert result.reasons[0].startswith(f"connection broken ({what}") and result.reasons[0].endswith("after 1 retries")
    assert _requests(server) == 2  # the request and its one retry


def test_broken_body_on_the_command_line_is_no_traceback(server, tmp_path, cli):
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de"], "source": SRCS[:1], "hypothesis": HYPS[:1]}).to_csv(table, sep="\t", index=False)
    out = tmp_path / "o.tsv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # the count is said on stderr too
        rc, _, err = cli("score", str(table), "-m", f"judge:{server}#incomplete", "--judge-prompt", "da",
                         "--judge-retries", "0", "-o", str(out))
    assert rc == 2 and "Traceback" not in err and err.count("\n") == 1, err  # no answer read: refused, one line
    assert "gemba_da: none of the 1 answers could be read (the reasons: 1x connection broken (IncompleteRead(13 " \
        "bytes read, 987 more expected)) after 0 retries)" in err and not out.exists()


# ----------------------------------------------------------------------------------------------- length bound
def test_an_error_list_cut_by_the_length_bound_is_missing(server, tmp_path):
    """The cut MQM list names one major error and breaks off inside the minor ones: read as it stands it scores -5,
    better than the full list. It is a missing score with its reason, and ESA sends no stage 2 for it."""
    cache = tmp_path / "cache"
    cache.mkdir()
    mqm = Judge(f"{server}#cut_list", prompt="mqm", src_lang="en", tgt_lang="de", server=FAST, cache=cache)
    result = mqm.judge(HYPS[:1], None, SRCS[:1])
    assert np.isnan(result.scores[0])
    assert result.reasons == ("error list cut off at max_new_tokens=512; raise max_new_tokens=",)
    # from the cache the answer is still known to be cut
    again = Judge(f"{server}#cut_list", prompt="mqm", src_lang="en", tgt_lang="de", server=FAST, cache=cache)
    before = _requests(server)
    result = again.judge(HYPS[:1], None, SRCS[:1])
    assert (result.requests, result.cached, _requests(server)) == (0, 1, before)
    assert np.isnan(result.scores[0]) and result.reasons[0].startswith("error list cut off")
    esa = Judge(f"{server}#cut_list", prompt="esa", src_lang="en", tgt_lang="de", server=FAST)
    result = esa.judge(HYPS[:1], None, SRCS[:1])
    assert np.isnan(result.scores[0]) and result.requests == 1  # the stage-2 answer (60) would be of a cut list


def test_a_score_cut_by_the_length_bound(server):
    """"...Score: 8" may be the 8 of 85: missing. "Score: 85. The translation keeps..." was cut after its number:
    85."""
    cut = Judge(f"{server}#cut_number", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    result = cut.judge(HYPS[:1], None, SRCS[:1])
    assert np.isnan(result.scores[0])
    assert result.reasons == ("number at the end; answer cut off at max_new_tokens=32; raise max_new_tokens=",)
    after = Judge(f"{server}#cut_after", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    assert after.judge(HYPS[:1], None, SRCS[:1]).scores.tolist() == [85.0]


def test_a_negative_answer_through_a_server_is_missing(server):
    judge = Judge(f"{server}#minus", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    result = judge.judge(HYPS, None, SRCS)
    assert np.isnan(result.scores).all() and result.reasons == ("-5 outside 0-100",) * 2


# ----------------------------------------------------------------------------------------------- signature
def test_signature_names_the_answer_parser(server):
    """Scores are recomputed from stored answers: another way of reading them is another metric."""
    fields = dict(f.split(":", 1) for f in Judge(f"{server}#minus", prompt="da", src_lang="en",
                                                 tgt_lang="de").signature.split("|"))
    assert fields["parser"] == P.PARSER


@pytest.mark.neural
def test_a_local_answer_cut_by_max_new_tokens_is_missing(tmp_path):
    """The steered model answers 'Minor:', newline, 'style/awkward', ' - "', 'Matte"' then its end: five tokens. With
    three the list stops before its quoted span (missing, with the reason); with six the model ends it (-1)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _judge_fixtures import build_steered_gpt2

    path = build_steered_gpt2(tmp_path / "m", {"comprehension.": ["Minor:", "\n", "style/awkward", ' - "', 'Matte"']})
    short = Judge(path, prompt="mqm", src_lang="en", tgt_lang="de", max_new_tokens=3).judge(
        ["Die Matte."], None, ["The mat."])
    assert np.isnan(short.scores[0])
    assert short.reasons == ("error list cut off at max_new_tokens=3; raise max_new_tokens=",)
    whole = Judge(path, prompt="mqm", src_lang="en", tgt_lang="de", max_new_tokens=6).judge(
        ["Die Matte."], None, ["The mat."])
    assert whole.scores.tolist() == [-1.0] and whole.reasons == ("",)


def test_a_run_that_reads_no_answer_is_refused_and_writes_nothing(server, tmp_path, cli):
    """Every request answered with a score out of range (a model that answers nothing usable, a wrong prompt):
    `score` wrote an all-NaN column and exited 0, the failure only in a note; a run that read no answer is no
    result. One line, exit 2, nothing written; a run where some answers are read still writes, with its note."""
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de"] * 2, "source": SRCS, "hypothesis": HYPS}).to_csv(table, sep="\t", index=False)
    out = tmp_path / "o.tsv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # the library's count (the line below says more)
        r = cli("score", str(table), "-m", f"judge:{server}#minus", "--judge-prompt", "da", "-o", str(out))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("xleval: error: gemba_da: none of the 2 answers could be read (the reasons: "
                               "2x -5 outside 0-100)") and "--dry-run" in r.stderr
    assert not out.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # (said or not by the library: the line below decides)
        r = cli("score", str(table), "-m", f"judge:{server}#cut_list", "--judge-prompt", "esa", "-o", str(out))
    assert r.exit_code == 2 and "none of the 2 answers could be read" in r.stderr and not out.exists()
