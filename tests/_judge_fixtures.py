"""Test helpers for LLM judges: a tiny causal LM whose greedy answers are fixed, and a local OpenAI-style server.

:func:`build_steered_gpt2` builds a real GPT-2 checkpoint (the tiny one of ``_tiny_models``) whose weights make
greedy decoding a bigram machine: the transformer blocks add nothing (their output projections are zero), there
are no position embeddings, so the last hidden state is the layer-normed embedding of the current token, and
``lm_head`` maps each chosen token to the next token of a chosen answer. ``chains`` maps the text a prompt ends
with (GEMBA's prompts end with ``... understandable.`` or ``... comprehension.`` for error lists and with
``Score: `` / ``Score (0-100): `` for scores) to the answer, as a list of chunks; chunks longer than one character
are added to the tokenizer's vocabulary, so every token of the answer is distinct and the chain is unambiguous.
Nothing in xleval is patched: the judge loads the folder with transformers and generates as for any model.

``judge_server.py``-style server: :data:`SERVER` is the source of a small ``http.server`` process speaking the
OpenAI chat-completions protocol on 127.0.0.1, with recorded behaviours chosen by the requested model name.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["build_steered_gpt2", "SERVER", "SERVER_HEAD", "SERVER_RUN", "SRCS", "HYPS", "CONTEXT", "serve",
           "server_stats", "server_fixture", "fast_client"]

#: the steered model's context (positions); a longer prompt is refused by the judge with a reason
CONTEXT = 8192


def build_steered_gpt2(path: str | Path, chains: dict[str, list[str]], *, seed: int = 0) -> Path:
    import torch
    from transformers import GPT2LMHeadModel, GPT2TokenizerFast

    from _tiny_models import build_tiny_gpt2

    path = Path(path)
    build_tiny_gpt2(path, seed=seed)
    tok = GPT2TokenizerFast.from_pretrained(path)
    tok.add_tokens(sorted({c for chunks in chains.values() for c in chunks if len(c) > 1}))
    tok.model_max_length = CONTEXT
    tok.save_pretrained(path)
    base = GPT2LMHeadModel.from_pretrained(path)
    base.resize_token_embeddings(len(tok), mean_resizing=False)
    config = base.config
    config.tie_word_embeddings = False
    config.n_positions = CONTEXT  # GEMBA's few-shot prompts are ~3,500 tokens of this tiny vocabulary
    model = GPT2LMHeadModel(config)
    model.load_state_dict({k: v for k, v in base.state_dict().items() if "wpe" not in k}, strict=False)
    succ: dict[int, int] = {}
    for start, chunks in chains.items():
        seq = [tok.encode(start)[-1], *tok.encode("".join(chunks)), tok.eos_token_id]
        for a, b in itertools.pairwise(seq):
            assert succ.get(a, b) == b, f"token {tok.convert_ids_to_tokens([a])} has two successors; change an answer"
            succ[a] = b
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for block in model.transformer.h:
            for linear in (block.attn.c_proj, block.mlp.c_proj):
                linear.weight.zero_()
                linear.bias.zero_()
        model.transformer.wpe.weight.zero_()
        model.transformer.ln_f.weight.fill_(1.0)
        model.transformer.ln_f.bias.zero_()
        wte = torch.randn(model.transformer.wte.weight.shape, generator=gen)
        model.transformer.wte.weight.copy_(wte)
        hidden = torch.nn.functional.layer_norm(wte, (wte.shape[1],))
        head = torch.zeros_like(model.lm_head.weight)
        for a, b in succ.items():
            head[b] += 10 * hidden[a]
        model.lm_head.weight.copy_(head)
    model.save_pretrained(path)
    return path


#: the start of every test server's source: its imports, and a request handler that answers JSON
#: (``self._send(status, payload, headers)``; a server subclasses it as ``Handler``)
SERVER_HEAD = r'''
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, payload, headers=()):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _chat(self, answer, reason="stop"):
        """A chat completion whose one choice is ``answer``, stopped for ``reason`` ("length": cut by max_tokens)."""
        self._send(200, {"choices": [{"index": 0, "finish_reason": reason,
                                      "message": {"role": "assistant", "content": answer}}]})

'''

#: the end of every test server's source: serve ``Handler`` on a free port of 127.0.0.1 and print the port
SERVER_RUN = r'''

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
'''

#: two segments a judge scores in the server tests
SRCS = ["The cat sits on the mat.", "The weather is nice."]
HYPS = ["Die Katze sitzt auf der Matte.", "Das Wetter ist schön."]

# An OpenAI-compatible chat server with recorded behaviours, chosen by the requested model name:
# good: 'Minor:\nstyle/awkward - "Matte"' for an error-list prompt, '72' for a score prompt, after 0.2 s;
# flaky429 / flaky503: the first two requests of each prompt get HTTP 429 (Retry-After: 0) / 503, then good;
# slow: answers after 3 s; malformed: HTTP 200 with a body that is not a chat completion; gone: HTTP 404.
# GET /stats: {"requests": n, "max_active": k, "auth": [Authorization headers seen]}.
SERVER = SERVER_HEAD + r'''
lock = threading.Lock()
state = {"requests": 0, "active": 0, "max_active": 0, "auth": [], "seen": {}}
MODELS = ["good", "flaky429", "flaky503", "slow", "malformed", "gone"]


class Handler(JsonHandler):
    def do_GET(self):
        if self.path == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test",
                                                         "root": "/models/" + m} for m in MODELS]})
        elif self.path == "/stats":
            with lock:
                self._send(200, {k: state[k] for k in ("requests", "max_active", "auth")})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with lock:
            state["requests"] += 1
            state["active"] += 1
            state["max_active"] = max(state["max_active"], state["active"])
            state["auth"].append(self.headers.get("Authorization"))
            key = json.dumps(body["messages"])
            seen = state["seen"][key] = state["seen"].get(key, 0) + 1
        done = []

        def respond(*args):  # the request stops counting as active before its answer goes out: the client may
            with lock:      # send its next request the moment it has read this one
                state["active"] -= 1
            done.append(True)
            return self._send(*args)

        try:
            model = body["model"]
            last = body["messages"][-1]["content"]
            answer = "72" if last.rstrip().endswith(("Score:", "Score (0-100):")) else 'Minor:\nstyle/awkward - "Matte"'
            if model == "slow":
                time.sleep(3)
            else:
                time.sleep(0.2)
            if model in ("flaky429", "flaky503") and seen <= 2:
                status = 429 if model == "flaky429" else 503
                return respond(status, {"error": "busy"}, [("Retry-After", "0")])
            if model == "malformed":
                return respond(200, b"<html>gateway error</html>")
            if model == "gone":
                return respond(404, {"error": "no such model"})
            respond(200, {"id": "x", "object": "chat.completion", "model": model, "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}]})
        finally:
            if not done:
                with lock:
                    state["active"] -= 1

''' + SERVER_RUN


def server_fixture(source: str):
    """A pytest fixture that starts the server of ``source`` (:func:`serve`) for a test and yields its address."""
    import pytest

    @pytest.fixture
    def server(tmp_path):
        with serve(source, tmp_path) as base:
            yield base

    return server


#: a judge client that gives up fast (the servers answer at once or never)
def fast_client():
    from xleval.judges import JudgeServer

    return JudgeServer(retries=1, backoff=0.01, timeout=10)


@contextlib.contextmanager
def serve(source: str, folder: Path) -> Iterator[str]:
    """A server process running ``source`` (it prints its port, then serves on 127.0.0.1), fresh for each use so its
    counters start at zero; yields the base URL ``http://127.0.0.1:PORT/v1``."""
    script = Path(folder) / "server.py"
    script.write_text(source, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def server_stats(base: str) -> dict:
    """What the server counted (``GET /stats``)."""
    with urllib.request.urlopen(base.removesuffix("/v1") + "/stats", timeout=10) as resp:
        return json.loads(resp.read())
