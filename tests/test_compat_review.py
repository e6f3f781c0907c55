"""Review of the sacrebleu-compatible command line and metric objects (sacrebleu's own CLI and API are the oracle,
run in process), and of two judge-server defects: a redirected POST, and ``--dry-run``'s count of ESA's stage 2.

Judge servers are processes started here on 127.0.0.1 (tests/_judge_fixtures.serve)."""
from __future__ import annotations

import pandas as pd
import pytest

from _judge_fixtures import HYPS, SERVER_HEAD, SERVER_RUN, SRCS, fast_client, server_fixture, server_stats
from xleval.exceptions import InputError
from xleval.metrics._judge import Judge

# ----------------------------------------------------------------------------------------------- judge server
# Model names choose the behaviour. r301/r302/r303/r307/r308: POST /v1/chat/completions is redirected to /v2 (r302
# with a relative Location); /v2 answers a POST like 'good' and a GET with a model list (what urllib's redirected GET
# used to read as a "malformed response body"). cut: an error list stopped by max_tokens (finish_reason length).
# GET /moved/v1/models is redirected to another host name (localhost), GET /slash/v1/models to /slash/v1/models/.
SERVER = SERVER_HEAD + r'''
MODELS = ["good", "cut", "r301", "r302", "r303", "r307", "r308"]
lock = threading.Lock()
state = {"requests": 0, "paths": []}


class Handler(JsonHandler):
    def do_GET(self):
        if self.path == "/stats":
            with lock:
                return self._send(200, state)
        port = self.server.server_address[1]
        if self.path == "/moved/v1/models":  # another host name: the key must not follow
            return self._send(301, {}, [("Location", f"http://localhost:{port}/v1/models")])
        if self.path == "/slash/v1/models":  # the same server
            return self._send(301, {}, [("Location", "/slash/v1/models/")])
        with lock:
            state["paths"].append("GET " + self.path)
        self._send(200, {"data": [{"id": m} for m in MODELS]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with lock:
            state["requests"] += 1
            state["paths"].append("POST " + self.path)
        model = body["model"]
        score = body["messages"][-1]["content"].rstrip().endswith(("Score:", "Score (0-100):"))
        if model.startswith("r3") and self.path.startswith("/v1/"):
            port = self.server.server_address[1]
            where = "/v2/chat/completions" if model == "r302" else f"http://127.0.0.1:{port}/v2/chat/completions"
            return self._send(int(model[1:]), {"moved": where}, [("Location", where)])
        answer, reason = ("72", "stop") if score else ('Minor:\nstyle/awkward - "Matte"', "stop")
        if model == "cut" and not score:
            answer, reason = 'Major:\naccuracy/mistranslation - "Katze"\nMinor:\nfluency/gr', "length"
        self._chat(answer, reason)

''' + SERVER_RUN

FAST = fast_client()
server = server_fixture(SERVER)


def test_a_redirected_post_is_one_clear_line_on_the_command_line(server, tmp_path, cli):
    """urllib turned the 301 into a GET of the new address and read its model list as a 'malformed response body';
    the user needs to hear that the server redirected, and where to."""
    table = tmp_path / "t.tsv"
    pd.DataFrame({"lp": ["en-de"], "source": SRCS[:1], "hypothesis": HYPS[:1]}).to_csv(table, sep="\t", index=False)
    out = tmp_path / "o.tsv"
    rc, _, err = cli("score", str(table), "-m", f"judge:{server}#r301", "--judge-prompt", "da", "-o", str(out))
    new = server.removesuffix("/v1") + "/v2"
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "redirect (HTTP 301) to " + new + "/chat/completions" in err
    assert f"give the final address, {new}#r301" in err and "malformed" not in err
    assert not out.exists()
    assert "GET /v2/chat/completions" not in server_stats(server)["paths"]  # the redirect was not followed


@pytest.mark.parametrize("model", ["r302", "r303", "r307", "r308"])
def test_every_redirect_of_a_post_is_refused_alike(server, model):
    """307/308 keep the method, but following them would send the key to another address unasked; refused like 301
    (docs/judges.md, 'Servers that redirect'). r302's Location is relative: resolved against the request's URL."""
    judge = Judge(f"{server}#{model}", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    new = server.removesuffix("/v1") + "/v2"
    with pytest.raises(InputError, match=f"redirect \\(HTTP {model[1:]}\\) to {new}/chat/completions") as info:
        judge.judge(HYPS, None, SRCS)
    assert f"give the final address, {new}#{model}" in str(info.value)
    assert server_stats(server)["requests"] <= 2  # no retries of a redirect, no request sent to /v2


def test_models_redirected_elsewhere_is_refused_and_on_the_same_server_followed(server):
    """GET /models redirected to another address would carry the key there (urllib keeps Authorization): refused
    with the address to give; a redirect on the same scheme, host and port (a trailing slash) is followed."""
    root, port = server.removesuffix("/v1"), server.rsplit(":", 1)[1].split("/")[0]
    moved = Judge(f"{root}/moved/v1#good", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    with pytest.raises(InputError, match=f"GET /models with a redirect \\(HTTP 301\\) to http://localhost:{port}/v1/"
                                         f"models; .*give the final address, http://localhost:{port}/v1#good"):
        moved.judge(HYPS[:1], None, SRCS[:1])
    assert "GET /v1/models" not in server_stats(server)["paths"]  # not followed to localhost
    slash = Judge(f"{root}/slash/v1#good", prompt="da", src_lang="en", tgt_lang="de", server=FAST)
    assert slash.judge(HYPS[:1], None, SRCS[:1]).scores.tolist() == [72.0]
    assert "GET /slash/v1/models/" in server_stats(server)["paths"]


def test_dry_run_counts_no_stage_two_for_a_stored_cut_error_list(server):
    """ESA sends no stage 2 for an error list the length bound cut; the plan said it would (1 request to send)."""
    judge = Judge(f"{server}#cut", prompt="esa", src_lang="en", tgt_lang="de", server=FAST)
    first = judge.judge(HYPS[:1], None, SRCS[:1])
    assert first.reasons[0].startswith("error list cut off") and first.requests == 1  # no stage 2 was sent
    plan = judge.plan(HYPS[:1], None, SRCS[:1])
    again = judge.judge(HYPS[:1], None, SRCS[:1])  # the oracle: what the real run sends now
    assert (plan.requests, plan.cached) == (again.requests, again.cached) == (0, 1)


def test_dry_run_counts_a_repeated_segment_once_as_the_run_sends_it(server):
    """Two identical rows are one request per stage in a real run (2 for ESA); the plan counted 4."""
    judge = Judge(f"{server}#good", prompt="esa", src_lang="en", tgt_lang="de", server=FAST)
    plan = judge.plan(HYPS[:1] * 2, None, SRCS[:1] * 2)
    run = judge.judge(HYPS[:1] * 2, None, SRCS[:1] * 2)
    assert plan.requests == run.requests == server_stats(server)["requests"] == 2
    # stored now: the plan and a second run send nothing and take each row's two answers from the memo
    assert (judge.plan(HYPS[:1] * 2, None, SRCS[:1] * 2).cached, judge.judge(HYPS[:1] * 2, None, SRCS[:1] * 2)
            .cached) == (4, 4)


# ----------------------------------------------------------------------------------------------- sacrebleu parity
REFS = ["The cat sat on the mat.", "Hello world!", "", "A quick brown fox jumps.", "Über die Brücke gehen wir."]
HYP_A = ["The cat is on the mat.", "hello World", "", "A fast brown fox jumped.", "Über die Brücke gehen wir"]
HYP_B = ["The cat sat on a mat.", "Hello, world!", "something", "The quick brown fox jumps.",
         "Wir gehen über die Brücke."]


def _files(tmp_path, **texts):
    paths = {}
    for name, lines in texts.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return paths


def _sacrebleu_metrics():
    from sacrebleu.metrics import BLEU, CHRF, TER

    return {"bleu": BLEU(), "chrf": CHRF(), "ter": TER()}


@pytest.mark.parametrize("hyps", [HYP_A, HYP_B], ids=["a", "b"])
def test_corpus_score_bootstrap_is_sacrebleus_to_the_last_digit(hyps, monkeypatch):
    """sacrebleu sums each resample's statistics in float32 and scores them with its own code; xleval's float64
    resampling gave other means and intervals in the sixth digit (TER's half-width 13.293651 for 13.293652)."""
    from xleval.metrics import BLEU, CHRF, TER

    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    ours = {"bleu": BLEU(), "chrf": CHRF(), "ter": TER()}
    for name, oracle in _sacrebleu_metrics().items():
        want = oracle.corpus_score(hyps, [REFS], n_bootstrap=1000)
        got = ours[name].corpus_score(hyps, [REFS], n_bootstrap=1000)
        assert (got.score, got.mean, got.ci) == (want.score, float(want._mean), float(want._ci)), name


def test_confidence_on_the_command_line_prints_sacrebleus_interval(tmp_path, cli, monkeypatch):
    """``sacrebleu REF -i HYP -ci -m ter`` prints 'μ = 42.8 ± 31.2' (its half-width is 31.24999809 in float32);
    xleval printed '± 31.3'. The oracle is sacrebleu's own bootstrap, run here in process."""
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    f = _files(tmp_path, ref=REFS, hyp=HYP_B)
    rc, out, err = cli("score", str(f["ref"]), "-i", str(f["hyp"]), "-ci", "-m", "bleu", "chrf", "ter", "-b",
                       "-w", "8")
    assert rc == 0, err
    want = []
    for oracle in _sacrebleu_metrics().values():
        s = oracle.corpus_score(HYP_B, [REFS], n_bootstrap=1000)
        want.append(f"{s.score:.8f} (μ = {s._mean:.8f} ± {s._ci:.8f})")
    assert out == "[\n" + ",\n".join(want) + "\n]\n"
    rc, out, err = cli("score", str(f["ref"]), "-i", str(f["hyp"]), "-ci", "-m", "ter", "-f", "text")
    assert rc == 0 and out.endswith(" = 38.9 (μ = 42.8 ± 31.2)\n"), out


def test_empty_files_are_one_line_naming_the_files(tmp_path, cli):
    """sacrebleu refuses them ('contains no sentence'); xleval said 'hypotheses is empty', a Python argument."""
    f = _files(tmp_path, ref=[], hyp=[])
    rc, _, err = cli("score", str(f["ref"]), "-i", str(f["hyp"]))
    assert rc == 2 and err.count("\n") == 1 and "hypotheses" not in err, err
    assert str(f["ref"]) in err and str(f["hyp"]) in err and "empty" in err
