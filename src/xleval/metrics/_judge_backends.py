"""Where a judge's answers come from: a local causal LM (transformers) or an OpenAI-compatible chat server.

Both take a list of requests (chat messages) and return one :class:`Answer` per request: the text, or the reason
there is none (a server that kept failing for that request, a malformed response body). Both decode
deterministically: greedy search locally, ``temperature 0`` on a server; both report what goes in the
signature (:meth:`identity`).

The HTTP client is the standard library's (``urllib``): bounded concurrency (a thread pool of ``concurrency``
workers), a timeout per request, retries with exponential backoff on timeouts, HTTP 429 and 5xx (honouring a
short ``Retry-After``), and one clear error when the server cannot be reached at all. The key is read from the
environment variable named by ``api_key_env`` at request time and sent as a bearer token; it is never stored on
the object, logged or written anywhere.
"""
from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xleval.exceptions import InputError

__all__ = ["Answer", "LocalChat", "HTTPChat", "folder_identity", "plain_chat_text"]

logger = logging.getLogger(__name__)

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Answer:
    """A request's answer ``text``, or None with the ``error`` that prevented one; ``cut`` when the answer stopped at
    the answer-length bound (``max_tokens``/``max_new_tokens``) rather than where the model ended it."""

    text: str | None
    error: str = ""
    cut: bool = False


# ----------------------------------------------------------------------------------------------- identity
_IDENTITY_MEMO: dict[tuple, str] = {}
_CHAT_MEMO: dict[tuple, str] = {}
_SERVED_MEMO: dict[tuple, dict[str, str]] = {}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".model", ".json", ".txt", ".jinja", ".tiktoken")


def folder_identity(path: Path) -> str:
    """The content hash of a local model folder: SHA-256 over the relative path and bytes of every weight,
    configuration and tokenizer file (``*.safetensors``, ``*.bin``, ``*.json``, ``*.model``, ``*.txt``, ...),
    in sorted order; the first 16 hex digits. Memoised per process on (path, size, mtime) of the files.

    A private stand-in for ``xleval.metrics._model_files.model_identity`` (being written on another branch):
    swap this function for it when it lands; only the signature's ``sha:`` field depends on it."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_WEIGHT_SUFFIXES)
                   and not any(part.startswith(".") for part in p.relative_to(path).parts))
    if not files:
        raise InputError(f"model folder {str(path)!r} holds no weight or configuration files; give the folder of "
                         "a downloaded causal LM (config.json, *.safetensors, tokenizer files)")
    stamp = tuple((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    key = (str(path.resolve()), stamp)
    if key not in _IDENTITY_MEMO:
        digest = hashlib.sha256()
        for p in files:
            digest.update(str(p.relative_to(path)).encode("utf-8") + b"\0")
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
        _IDENTITY_MEMO[key] = digest.hexdigest()[:16]
    return _IDENTITY_MEMO[key]


# ----------------------------------------------------------------------------------------------- local model
def plain_chat_text(messages: Messages) -> str:
    """The conversation as plain text, for a model without a chat template (a base LM): the turns' contents
    separated by blank lines, ending with the last user turn as written (GEMBA's prompts end with ``Score: `` or
    the question, so a base LM continues from there)."""
    return "\n\n".join(m["content"] for m in messages)


class LocalChat:
    """Greedy generation with a local causal LM (``AutoModelForCausalLM``), in batches, left-padded.

    The tokenizer's chat template renders the messages when it has one; otherwise :func:`plain_chat_text`.
    ``max_new_tokens`` bounds each answer. torch and transformers are imported on first use."""

    def __init__(self, path: Path, *, device: str, precision: str, batch_size: int, max_new_tokens: int,
                 progress: bool = False) -> None:
        self.path, self.device, self.precision = path, device, precision
        self.batch_size, self.max_new_tokens, self.progress = batch_size, max_new_tokens, progress
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            from ._neural import _check_device_available, offline, quiet, require

            torch = require("torch", "torch", "a local judge model")
            transformers = require("transformers", "transformers", "a local judge model")
            _check_device_available(torch, self.device)
            dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[self.precision]
            with offline(), quiet(self.progress):
                tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
                model = transformers.AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True,
                                                                          dtype=dtype)
            tokenizer.padding_side = "left"
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            model.to(self.device).eval()
            self._loaded = (tokenizer, model)
            logger.info("loaded judge model %s on %s", self.path, self.device)
        return self._loaded

    def chat_format(self) -> str:
        """``template`` when the tokenizer has a chat template, else ``plain`` (in the signature; memoised per
        folder content, as the signature is asked once per language pair)."""
        key = (str(self.path.resolve()), folder_identity(self.path))
        if key not in _CHAT_MEMO:
            from ._neural import offline, require

            transformers = require("transformers", "transformers", "a local judge model")
            with offline():
                tokenizer = transformers.AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            _CHAT_MEMO[key] = "template" if getattr(tokenizer, "chat_template", None) else "plain"
        return _CHAT_MEMO[key]

    def text(self, tokenizer: Any, messages: Messages) -> str:
        if getattr(tokenizer, "chat_template", None):
            return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return plain_chat_text(messages)

    def ask(self, requests: Sequence[Messages], progress: Callable[[int], None] | None = None) -> list[Answer]:
        import torch

        from ._neural import quiet

        tokenizer, model = self._load()
        prompts = [self.text(tokenizer, m) for m in requests]
        lengths = [len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"]]
        context = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
        answers: dict[int, Answer] = {}
        if context:
            for i, n in enumerate(lengths):
                if n + self.max_new_tokens > context:
                    answers[i] = Answer(None, f"prompt of {n} tokens + {self.max_new_tokens} new exceeds the "
                                              f"model's context of {context}")
        # longest first, so a batch pads little; answers go back to the request order
        order = sorted((i for i in range(len(requests)) if i not in answers), key=lambda i: -lengths[i])
        with quiet(self.progress), torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                part = order[start : start + self.batch_size]
                enc = tokenizer([prompts[i] for i in part], return_tensors="pt", padding=True,
                                add_special_tokens=False).to(self.device)
                generated = model.generate(**enc, do_sample=False, num_beams=1, max_new_tokens=self.max_new_tokens,
                                           pad_token_id=tokenizer.pad_token_id)
                new = generated[:, enc["input_ids"].shape[1]:]
                ends = {tokenizer.eos_token_id, tokenizer.pad_token_id}
                for i, ids in zip(part, new, strict=True):
                    # all max_new_tokens used and the last one no end: the bound stopped the answer, not the model
                    cut = len(ids) >= self.max_new_tokens and int(ids[-1]) not in ends
                    answers[i] = Answer(tokenizer.decode(ids, skip_special_tokens=True), cut=cut)
                if progress is not None:
                    progress(len(part))
        return [answers[i] for i in range(len(requests))]


# ----------------------------------------------------------------------------------------------- HTTP server
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follow no redirect of a request: urllib's handler turns a redirected POST (301/302/303) into a GET without its
    body, and keeps the ``Authorization`` header for any new address; the 3xx comes back as an HTTPError to report
    instead. A GET (``/models``) follows a redirect on the same scheme, host and port (``/models/``)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # urllib's signature
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if req.get_method() == "GET" and (old.scheme, old.netloc) == (new.scheme, new.netloc):
            return super().redirect_request(req, fp, code, msg, headers, newurl)
        return None


class _Unreachable(Exception):
    """The server cannot be reached at all (refused, unknown host): no retry helps."""


class _Transient(Exception):
    """A connection that broke off (reset, closed without a response): retried like a timeout."""


class HTTPChat:
    """Chat completions from an OpenAI-compatible server (``POST {base}/chat/completions``).

    ``base`` ends in ``/v1`` (vLLM, llama.cpp's server, Ollama, TGI and hosted APIs all serve that path);
    ``model`` is the served model's name. ``concurrency`` requests are in flight at most; each waits
    ``timeout`` seconds; a timeout, a 429 or a 5xx is retried ``retries`` times with backoff ``backoff * 2**k``
    seconds (or the server's ``Retry-After`` when it is shorter than 60 s). A refused connection or an unknown
    host is one :class:`InputError`; a request that still fails after its retries, or a body that is not a chat
    completion, is an :class:`Answer` without text and with the reason."""

    def __init__(self, base: str, model: str, *, api_key_env: str | None, concurrency: int, timeout: float,
                 retries: int, backoff: float, max_tokens: int) -> None:
        self.base, self.model, self.api_key_env = base.rstrip("/"), model, api_key_env
        self.concurrency, self.timeout, self.retries, self.backoff = concurrency, timeout, retries, backoff
        self.max_tokens = max_tokens

    # -------------------------------------------------------------- transport
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _call(self, method: str, path: str, body: dict | None = None) -> tuple[int, bytes, dict[str, str]]:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=self._headers())
        try:
            # built per call: an opener reads the proxy settings of the environment when it is built
            with urllib.request.build_opener(_NoRedirect).open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read() if exc.fp is not None else b"", dict(exc.headers or {})
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError | socket.timeout):
                raise TimeoutError(str(reason)) from None
            if isinstance(reason, ConnectionError) and not isinstance(reason, ConnectionRefusedError):
                raise _Transient(str(reason)) from None
            raise _Unreachable(str(reason)) from None
        except ConnectionRefusedError as exc:
            raise _Unreachable(str(exc)) from None
        except ConnectionError as exc:  # reset, or closed without a response
            raise _Transient(str(exc) or type(exc).__name__) from None
        except http.client.HTTPException as exc:  # a body cut short (IncompleteRead), a status line that is no HTTP
            text, kind = str(exc).strip()[:80], type(exc).__name__
            raise _Transient(text if text.startswith(kind) else f"{kind}: {text}") from None

    def _redirected(self, method: str, path: str, status: int, headers: dict[str, str]) -> InputError:
        """One clear error for a redirect: urllib would turn the POST of a 301/302/303 into a GET (whose answer is no
        chat completion) and send the key to wherever the server points; the final address is the user's to give."""
        location = next((v for k, v in headers.items() if k.lower() == "location"), None)
        if location is None:
            where = "without saying where (no Location header)"
            hint = "give the server's final address"
        else:
            final = urllib.parse.urljoin(self.base + path, location)
            where = f"to {final}"
            new_base = final.removesuffix(path) if final.endswith(path) else None
            hint = (f"give the final address, {new_base}#{self.model}" if new_base
                    else "give the server's final address")
        return InputError(f"the judge server {self.base} answered {method} {path} with a redirect (HTTP {status}) "
                          f"{where}; xleval follows no redirects (a POST would become a GET, the key would go "
                          f"elsewhere): {hint}", argument="model", value=self.base)

    def _unreachable(self, detail: str) -> InputError:
        return InputError(f"cannot reach the judge server {self.base} ({detail}); start it, or check the URL "
                          "(http://HOST:PORT/v1#MODEL)", argument="model", value=self.base)

    # -------------------------------------------------------------- identity
    def identity(self) -> dict[str, str]:
        """What the server reports about the model (``GET /models``): its id, and ``root``/``owned_by`` when
        given. A server without ``/models`` gives ``unreported``; an unreachable one is an InputError. Asked once
        per process for a server and model (the signature is asked once per language pair)."""
        key = (self.base, self.model)
        if key not in _SERVED_MEMO:
            _SERVED_MEMO[key] = self._identity()
        return dict(_SERVED_MEMO[key])

    def _identity(self) -> dict[str, str]:
        try:
            status, body, headers = self._call("GET", "/models")
        except (TimeoutError, _Transient):
            raise self._unreachable(f"no answer to GET /models within {self.timeout:g} s") from None
        except _Unreachable as exc:
            raise self._unreachable(str(exc)) from None
        if status in _REDIRECT_STATUS:
            raise self._redirected("GET", "/models", status, headers)
        if status in (401, 403):
            raise InputError(f"the judge server {self.base} refused the key (HTTP {status}); set the environment "
                             f"variable {self.api_key_env} to a valid key", argument="api_key_env",
                             value=self.api_key_env)
        try:
            entries = json.loads(body)["data"] if status == 200 else []
        except (ValueError, KeyError, TypeError):
            entries = []
        entry = next((e for e in entries if isinstance(e, dict) and e.get("id") == self.model), None)
        if entry is None:
            if entries:
                served = ", ".join(str(e.get("id")) for e in entries[:5] if isinstance(e, dict))
                raise InputError(f"the judge server {self.base} does not serve {self.model!r} (it serves {served}); "
                                 "name one of those after '#'", argument="model", value=self.model)
            return {"served": "unreported"}
        out = {"served": str(entry["id"])}
        for key in ("root", "owned_by"):
            if entry.get(key):
                out[key] = str(entry[key])
        return out

    # -------------------------------------------------------------- requests
    def _one(self, messages: Messages, stop: threading.Event) -> Answer:
        body = {"model": self.model, "messages": messages, "temperature": 0, "top_p": 1, "n": 1,
                "max_tokens": self.max_tokens}
        last = ""
        for attempt in range(self.retries + 1):
            if stop.is_set():
                return Answer(None, "not sent: the server became unreachable")
            wait = self.backoff * 2 ** attempt
            try:
                status, payload, headers = self._call("POST", "/chat/completions", body)
            except TimeoutError:
                last = f"timed out after {self.timeout:g} s"
            except _Transient as exc:
                last = f"connection broken ({exc})"
            except _Unreachable as exc:
                stop.set()
                raise self._unreachable(str(exc)) from None
            else:
                if status == 200:
                    return _chat_answer(payload)
                if status in _REDIRECT_STATUS:  # every request would be redirected alike: one error, not n reasons
                    stop.set()
                    raise self._redirected("POST", "/chat/completions", status, headers)
                last = f"HTTP {status}"
                if status not in _RETRY_STATUS:
                    return Answer(None, f"{last}: {_snippet(payload)}")
                after = _retry_after(headers)
                if after is not None:
                    wait = after
            if attempt < self.retries:
                logger.info("judge request failed (%s); retry %d of %d in %.2f s", last, attempt + 1, self.retries,
                            wait)
                time.sleep(wait)
        return Answer(None, f"{last} after {self.retries} retries")

    def ask(self, requests: Sequence[Messages], progress: Callable[[int], None] | None = None) -> list[Answer]:
        stop = threading.Event()

        def run(messages: Messages) -> Answer:
            answer = self._one(messages, stop)
            if progress is not None:
                progress(1)
            return answer

        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="xleval-judge") as pool:
            futures = [pool.submit(run, m) for m in requests]
            try:
                return [f.result() for f in futures]
            except BaseException:
                stop.set()
                for f in futures:
                    f.cancel()
                raise


def _chat_answer(payload: bytes) -> Answer:
    try:
        data = json.loads(payload)
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Answer(None, f"malformed response body: {_snippet(payload)}")
    if not isinstance(content, str):
        return Answer(None, f"malformed response body: content is {type(content).__name__}")
    return Answer(content, cut=choice.get("finish_reason") == "length")


def _snippet(payload: bytes, limit: int = 80) -> str:
    text = payload.decode("utf-8", "replace").strip().replace("\n", " ")
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def _retry_after(headers: dict[str, str]) -> float | None:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < 60 else None
