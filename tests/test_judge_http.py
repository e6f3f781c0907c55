"""``judge:http://HOST:PORT/v1#MODEL`` against a real server process on 127.0.0.1 speaking the OpenAI chat protocol
with recorded behaviours (``_judge_fixtures.SERVER``): answers, concurrency limit, 429 and 5xx retried, timeouts,
a malformed body, a refused connection, the API key."""
from __future__ import annotations

import socket
import warnings

import numpy as np
import pandas as pd
import pytest

from _judge_fixtures import SERVER, serve, server_stats
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_table, read_table_metadata
from xleval.judges import JudgeServer
from xleval.metrics._judge import Judge

SRCS = ["The cat sits on the mat.", "The weather is nice.", "A dog.", "Two dogs.", "Three cats.", "Four."]
HYPS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist schön.", "Ein Hund.", "Zwei Hunde.", "Drei Katzen.",
        "Vier."]


@pytest.fixture
def server(tmp_path):
    """A fresh server process per test (its counters start at zero); yields the base URL."""
    with serve(SERVER, tmp_path) as base:
        yield base


_stats = server_stats


def test_answers_scores_spans_and_signature(server):
    judge = Judge(f"{server}#good", src_lang="en", tgt_lang="de", server=JudgeServer(concurrency=2))
    result = judge.judge(HYPS[:2], None, SRCS[:2])
    assert result.scores.tolist() == [72.0, 72.0]
    assert result.spans[["start", "end"]].to_numpy().tolist() == [[24, 29], [-1, -1]]
    assert result.requests == 4
    fields = dict(f.split(":", 1) for f in judge.signature.split("|"))
    assert fields["model"] == "good" and fields["decode"] == "temperature=0"
    assert fields["served"] == "good,root=/models/good,owned_by=test"  # what GET /models reported


def test_concurrency_is_bounded(server):
    judge = Judge(f"{server}#good", prompt="da", src_lang="en", tgt_lang="de", server=JudgeServer(concurrency=3))
    assert judge.sentence_scores(HYPS, None, SRCS).tolist() == [72.0] * 6
    stats = _stats(server)
    assert stats["requests"] == 6
    assert 2 <= stats["max_active"] <= 3  # requests overlapped, never more than three at once


@pytest.mark.parametrize("model", ["flaky429", "flaky503"])
def test_429_and_5xx_are_retried(server, model):
    judge = Judge(f"{server}#{model}", prompt="da", src_lang="en", tgt_lang="de",
                  server=JudgeServer(retries=2, backoff=0.01))
    assert judge.sentence_scores(HYPS[:2], None, SRCS[:2]).tolist() == [72.0, 72.0]
    assert _stats(server)["requests"] == 6  # two refusals, then the answer, for each of two prompts


def test_retries_exhausted_and_timeouts_are_missing_with_reasons(server):
    few = Judge(f"{server}#flaky429", prompt="da", src_lang="en", tgt_lang="de",
                server=JudgeServer(retries=1, backoff=0.01))
    result = few.judge(HYPS[:1], None, SRCS[:1])
    assert np.isnan(result.scores[0]) and result.reasons == ("HTTP 429 after 1 retries",)
    slow = Judge(f"{server}#slow", prompt="da", src_lang="en", tgt_lang="de",
                 server=JudgeServer(timeout=0.3, retries=1, backoff=0.01))
    with pytest.warns(DataQualityWarning, match=r"1 of 1 judge answer\(s\) could not be read"):
        assert np.isnan(slow.sentence_scores(HYPS[:1], None, SRCS[:1])).all()
    assert slow.judge(HYPS[:1], None, SRCS[:1]).reasons == ("timed out after 0.3 s after 1 retries",)


def test_malformed_body_and_client_errors_are_reasons(server):
    bad = Judge(f"{server}#malformed", prompt="da", src_lang="en", tgt_lang="de")
    assert bad.judge(HYPS[:1], None, SRCS[:1]).reasons == ("malformed response body: '<html>gateway error</html>'",)
    gone = Judge(f"{server}#gone", prompt="da", src_lang="en", tgt_lang="de", server=JudgeServer(retries=3))
    assert gone.judge(HYPS[:1], None, SRCS[:1]).reasons[0].startswith("HTTP 404")
    assert _stats(server)["requests"] == 2  # neither was retried


def test_refused_connection_is_one_clear_error(cli, tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = Judge(f"http://127.0.0.1:{port}/v1#good", prompt="da", src_lang="en", tgt_lang="de")
    with pytest.raises(InputError, match=rf"cannot reach the judge server http://127.0.0.1:{port}/v1 \("):
        judge.sentence_scores(HYPS[:1], None, SRCS[:1])
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de"], "source": SRCS[:1], "hypothesis": HYPS[:1]}).to_csv(table, sep="\t", index=False)
    rc, _, err = cli("score", str(table), "-m", f"judge:http://127.0.0.1:{port}/v1#good", "-o", str(tmp_path / "o.tsv"))
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith(f"xleval: error: cannot reach the judge server http://127.0.0.1:"
                                                   f"{port}/v1")


def test_unknown_model_is_refused_naming_the_served_ones(server):
    with pytest.raises(InputError, match=r"does not serve 'nope' \(it serves good, flaky429"):
        _ = Judge(f"{server}#nope", src_lang="en", tgt_lang="de").signature


def test_key_is_sent_and_never_written(server, tmp_path, monkeypatch, cli):
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-secret-123")
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de"] * 2, "system": "A", "seg_id": [1, 2], "source": SRCS[:2],
                  "hypothesis": HYPS[:2]}).to_csv(table, sep="\t", index=False)
    out, cache = tmp_path / "o.tsv", tmp_path / "cache"
    cache.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc, stdout, err = cli("score", str(table), "-m", f"judge:{server}#good", "--judge-key-env", "JUDGE_TEST_KEY",
                              "-o", str(out), "--cache", str(cache))
    assert rc == 0, err
    assert read_table(out)["gemba_esa"].tolist() == [72.0, 72.0]
    assert "served:good" in read_table_metadata(out)["signatures"]["gemba_esa"]
    assert set(_stats(server)["auth"]) == {"Bearer sk-secret-123"}
    written = b"".join(p.read_bytes() for p in [*tmp_path.rglob("*")] if p.is_file() and p.name != "server.py")
    assert b"sk-secret-123" not in written and "sk-secret-123" not in stdout + err
    # the second run answers from the cache: no request reaches the server
    before = _stats(server)["requests"]
    rc, _, err = cli("score", str(table), "-m", f"judge:{server}#good", "-o", str(tmp_path / "o2.tsv"), "--cache",
                     str(cache))
    assert rc == 0, err
    assert _stats(server)["requests"] == before


def test_dry_run_needs_no_server(tmp_path, cli):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de", "en-de", "ja-zh"], "source": SRCS[:3], "hypothesis": HYPS[:3]}).to_csv(
        table, sep="\t", index=False)
    rc, out, err = cli("score", str(table), "-m", f"judge:http://127.0.0.1:{port}/v1#good", "--judge-prompt", "mqm",
                       "--dry-run")
    assert rc == 0, err
    assert "3 rows, 3 request(s) to send" in out
    assert "[system]\nYou are an annotator for the quality of machine translation." in out
    assert "Japanese source:\n```A dog.```\nChinese translation:\n```Ein Hund.```" in out


def test_a_run_stopped_halfway_keeps_its_answers(server, tmp_path, monkeypatch):
    from xleval.metrics import _judge

    monkeypatch.setattr(_judge, "_CHUNK", 1)  # store after every request (256 by default)
    cache = tmp_path / "cache"
    cache.mkdir()
    calls = []

    def stop_on_second(n):
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    judge = Judge(f"{server}#good", prompt="da", src_lang="en", tgt_lang="de", cache=cache,
                  server=JudgeServer(concurrency=1))
    with pytest.raises(KeyboardInterrupt):
        judge.judge(HYPS[:3], None, SRCS[:3], progress=stop_on_second)
    again = Judge(f"{server}#good", prompt="da", src_lang="en", tgt_lang="de", cache=cache)
    result = again.judge(HYPS[:3], None, SRCS[:3])
    assert (result.cached, result.requests) == (1, 2) and result.scores.tolist() == [72.0] * 3
