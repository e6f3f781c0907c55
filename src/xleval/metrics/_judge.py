"""``judge:SPEC`` — an LLM judge as a metric: GEMBA prompts on a local causal LM or an OpenAI-compatible server.

``Judge("./models/qwen2.5-7b-instruct")`` runs a local model folder (transformers, greedy decoding, batches,
``device``, ``precision``); ``Judge("http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct")`` asks a server
(vLLM, llama.cpp, Ollama, TGI, a hosted API) at ``temperature 0``. ``prompt`` picks the GEMBA prompt set:
``esa`` (two stages: error spans, then a 0-100 score; the default, WMT26's baseline), ``mqm`` (error spans, the
score is minus their weighted count, -25..0) or ``da`` (a 0-100 score). Higher is better for all three.

The signature names the model by content (a hash of a local folder's weights, configuration and tokenizer; for a
server, the model name and what ``GET /models`` reports), the prompt set and the SHA-256 of its texts, the
decoding and the versions. An answer that cannot be read is a **missing score with its reason**
(:class:`JudgeResult` ``reasons``), counted in a :class:`~xleval.exceptions.DataQualityWarning`; it never gets a
default. The per-segment statistics are ``[score, 1]`` for a read answer and ``[0, 0]`` for a missing one, so a
corpus score is the mean over the answers read.

Answers are memoised per request (the rendered messages) on the object, and, with ``cache=``, kept in the score
cache's SQLite file (:mod:`xleval.metrics._score_cache`: one file per signature, refused under another one) in a
table of answers beside the scores: a second run sends no request, and the spans and reasons come back from
the stored answers. Transport failures are not stored; answers that do not parse are (the model gives the same
one again under deterministic decoding).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from xleval._base.result import Result
from xleval.exceptions import DataQualityWarning, InputError

from . import _judge_prompts as P
from ._base import Metric
from ._judge_backends import Answer, HTTPChat, LocalChat, folder_identity
from ._judge_options import DEFAULT_LOCAL, DEFAULT_SERVER, JudgeLocal, JudgeServer
from ._neural import check_model_dir, dist_version, parse_devices

__all__ = ["Judge", "JudgeResult", "JudgePlan", "judge_tables", "JUDGE_PROMPTS"]

logger = logging.getLogger(__name__)

JUDGE_PROMPTS = tuple(P.PROMPT_SETS)
#: answer-length bounds per request kind when ``max_new_tokens`` is not given: error lists, scores
_MAX_NEW = {"errors": 512, "score": 32}
_SPAN_COLUMNS = ("segment", "severity", "category", "start", "end", "confidence", "text")
#: requests asked and stored in the cache at a time
_CHUNK = 256
#: prefix of a stored answer that the length bound cut (memo and cache keep text only; NUL never comes from a model)
_CUT = "\x00cut\x00"


@dataclass(frozen=True, eq=False)
class JudgeResult(Result):
    """A judge's reading of each segment.

    ``scores``: one float per segment, NaN where the answer could not be read. ``reasons``: "" where it was
    read, else why not (``"no number"``, ``"3 numbers"``, ``"120 outside 0-100"``, ``"no error list"``,
    ``"HTTP 503 after 3 retries"``, ``"malformed response body: ..."``). ``answers``: the raw answer that gave
    the score (ESA: stage 2), None where there was none. ``spans``: one row per error the answer listed
    (``segment``, ``severity``, ``category``, ``start``/``end`` character offsets in the translation, -1 when
    the quoted text is not found, ``confidence`` NaN, ``text``); ``counts``: errors per severity per segment.
    ``requests``: requests sent to the model in this call; ``cached``: answers taken from the memo or cache.
    """

    scores: np.ndarray
    reasons: tuple[str, ...]
    answers: tuple[str | None, ...]
    spans: Any
    counts: Any
    requests: int
    cached: int
    signature: str

    @property
    def failures(self) -> int:
        """Segments without a score."""
        return sum(bool(r) for r in self.reasons)

    def failure_summary(self) -> str:
        """``"2 no number, 1 HTTP 429 after 3 retries"``: the reasons, most frequent first."""
        return ", ".join(f"{n} {reason}" for reason, n in Counter(r for r in self.reasons if r).most_common())


@dataclass(frozen=True, eq=False)
class JudgePlan(Result):
    """What a run would send: the first-stage ``prompts`` (chat messages per segment), ``requests`` (all stages, each
    distinct request once, as a run sends it; ESA's second stage counted for every first answer not stored yet, and
    for none whose stored first answer the length bound cut) and ``cached`` (answers already in the memo or cache,
    per segment)."""

    prompts: tuple[Any, ...]
    requests: int
    cached: int
    stages: int


class Judge(Metric):
    """An LLM judge with a GEMBA prompt set; see the module docstring.

    Parameters
    ----------
    target : a local model folder, or ``http(s)://HOST:PORT/v1#MODEL`` (the served model's name after ``#``).
    prompt : ``esa`` (default), ``mqm`` or ``da``.
    use_refs : give the reference to the prompt (``da`` only: GEMBA-DA_ref); ESA and MQM are source-based.
    src_lang, tgt_lang : the segments' language codes (the prompts name the languages); ``score_frame`` sets
        them per language pair from the table's ``lp``/``src_lang``/``tgt_lang``.
    column : the score column's name (default ``gemba_esa``, ``gemba_mqm``, ``gemba_da``).
    max_new_tokens : answer-length bound (default 512 for error lists, 32 for scores); in the signature.
    local : :class:`JudgeLocal`, a local model only: ``batch_size``, ``device`` (cpu, cuda, cuda:N, mps),
        ``precision``, ``progress``.
    server : :class:`JudgeServer`, a server only: ``concurrency`` (requests in flight), ``timeout`` (seconds per
        request), ``retries`` after a timeout/429/5xx, the first ``backoff`` in seconds (doubled each retry), and
        ``api_key_env``, the environment variable holding the API key (read when a request is sent; never stored
        or written).
    cache : a file or directory: answers (and scores) are kept per request and signature.
    """

    name: ClassVar[str] = "judge"
    higher_is_better: ClassVar[bool] = True
    range: ClassVar[tuple[float, float]] = (-25.0, 100.0)  # MQM -25..0, ESA and DA 0..100
    has_stats: ClassVar[bool] = True
    needs_refs = False
    needs_srcs = True

    def __init__(
        self,
        target: str | os.PathLike,
        *,
        prompt: str = "esa",
        use_refs: bool = False,
        src_lang: str | None = None,
        tgt_lang: str | None = None,
        column: str | None = None,
        max_new_tokens: int | None = None,
        local: JudgeLocal = DEFAULT_LOCAL,
        server: JudgeServer = DEFAULT_SERVER,
        cache: str | os.PathLike | None = None,
    ) -> None:
        if prompt not in P.PROMPT_SETS:
            raise InputError(f"prompt must be one of {', '.join(P.PROMPT_SETS)}, got {prompt!r}", argument="prompt",
                             value=prompt)
        if use_refs and prompt != "da":
            raise InputError(f"prompt={prompt!r} is source-based (GEMBA-{prompt.upper()}); use_refs=True is for "
                             "prompt='da' (GEMBA-DA_ref)", argument="use_refs", value=use_refs)
        if max_new_tokens is not None and (isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int)
                                           or max_new_tokens < 1):
            raise InputError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}",
                             argument="max_new_tokens", value=max_new_tokens)
        batch_size, device, precision, progress = local.batch_size, local.device, local.precision, local.progress
        concurrency, timeout, retries, backoff = server.concurrency, server.timeout, server.retries, server.backoff
        api_key_env = server.api_key_env
        self.target = str(target)
        self.prompt = prompt
        self.use_refs = bool(use_refs)
        self.needs_refs = self.use_refs
        self.src_lang, self.tgt_lang = src_lang, tgt_lang
        self.column = column or f"gemba_{prompt}"
        self.max_new_tokens = max_new_tokens
        self.remote = self.target.startswith(("http://", "https://"))
        self._backend: LocalChat | HTTPChat
        if self.remote:
            base, sep, model = self.target.partition("#")
            if not sep or not model.strip():
                raise InputError(f"judge endpoint {self.target!r} names no model: give it after '#', e.g. "
                                 "http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct", argument="target",
                                 value=self.target)
            self.model_name = model.strip()
            self._backend = HTTPChat(base, self.model_name, api_key_env=api_key_env, concurrency=concurrency,
                                     timeout=float(timeout), retries=retries, backoff=float(backoff),
                                     max_tokens=self._max_new("errors" if prompt != "da" else "score"))
        else:
            path = check_model_dir(self.target, "judge")
            devices = parse_devices(device)
            if len(devices) > 1:
                raise InputError(f"device={device!r}: a local judge runs on one device", argument="device",
                                 value=device)
            if precision == "fp16" and devices[0] == "cpu":
                raise InputError("precision='fp16' needs a GPU device (device='cuda'); use precision='fp32' "
                                 "(or bf16) on cpu", argument="precision", value=precision)
            self.model_name = path.resolve().name
            self._backend = LocalChat(path, device=devices[0], precision=precision, batch_size=batch_size,
                                      max_new_tokens=self._max_new("errors" if prompt != "da" else "score"),
                                      progress=progress)
        self.precision = precision
        self.cache_arg = cache
        self._sig: str | None = None
        self._cache: Path | None = None
        self._memo: dict[bytes, str] = {}  # request key -> answer; a cache, not state that changes numbers
        if cache is not None:
            self._cache_path()  # a cache file of another signature is refused now, before any request

    # ------------------------------------------------------------------ signature
    def _max_new(self, kind: str) -> int:
        return self.max_new_tokens if self.max_new_tokens is not None else _MAX_NEW[kind]

    def _signature_fields(self) -> dict[str, Any]:
        spec = P.PROMPT_SETS[self.prompt]
        fields: dict[str, Any] = {"model": self.model_name}
        if self.remote:
            assert isinstance(self._backend, HTTPChat)
            reported = self._backend.identity()
            fields["served"] = ",".join(f"{k}={v}" if k != "served" else v for k, v in reported.items())
        else:
            assert isinstance(self._backend, LocalChat)
            fields["sha"] = folder_identity(self._backend.path)
        fields.update({"prompt": spec.name, "prompt-sha": P.prompt_hash(self.prompt), "refs": self.use_refs,
                       "decode": "temperature=0" if self.remote else "greedy", "parser": P.PARSER})
        lengths = sorted({self._max_new("errors"), self._max_new("score")}, reverse=True) \
            if self.prompt == "esa" else [self._max_new("errors" if self.prompt == "mqm" else "score")]
        fields["max-new"] = ",".join(map(str, lengths))
        if not self.remote:
            assert isinstance(self._backend, LocalChat)
            fields["chat"] = self._backend.chat_format()
            fields["prec"] = self.precision
            fields["torch"] = dist_version("torch")
            fields["transformers"] = dist_version("transformers")
        return fields

    @property
    def signature(self) -> str:
        # computed once: it reads the server's /models or hashes the model folder
        if self._sig is None:
            self._sig = super().signature
        return self._sig

    # ------------------------------------------------------------------ answers
    def _cache_path(self) -> Path | None:
        if self.cache_arg is None:
            return None
        if self._cache is None:
            from ._score_cache import cache_file

            self._cache = cache_file(self.cache_arg, self.column, self.signature)
        return self._cache

    def _answers(self, requests: list[list[dict[str, str]]], progress: Callable[[int], None] | None = None,
                 ) -> tuple[list[Answer], int, int]:
        """The answer of each request, from the memo, the cache, then the model; (answers, sent, cached)."""
        keys = [_request_key(m) for m in requests]
        found: dict[bytes, str] = {k: self._memo[k] for k in keys if k in self._memo}
        path = self._cache_path()
        if path is not None:
            missing = [k for k in dict.fromkeys(keys) if k not in found]
            found.update(_AnswerStore(path, self.signature).get(missing))
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        cached = sum(k in found for k in keys)
        fresh: dict[bytes, Answer] = {}
        if todo:
            index = {k: i for i, k in enumerate(keys)}
            logger.info("%s: %d request(s) to %s", self.column, len(todo), self.target)
            # in chunks, each stored as it comes back: a run stopped halfway keeps what it was answered
            for start in range(0, len(todo), _CHUNK):
                part = todo[start : start + _CHUNK]
                got = self._backend.ask([requests[index[k]] for k in part], progress)
                fresh.update(zip(part, got, strict=True))
                keep: dict[bytes, str] = {k: _stored(a) for k, a in zip(part, got, strict=True) if a.text is not None}
                self._memo.update(keep)
                if path is not None and keep:
                    _AnswerStore(path, self.signature).put(keep)
        self._memo.update(found)
        out = [_loaded(found[k]) if k in found else fresh[k] for k in keys]
        return out, len(todo), cached

    def _languages(self) -> tuple[str, str]:
        if self.src_lang is None or self.tgt_lang is None:
            raise InputError("a judge's prompts name the languages: give src_lang= and tgt_lang= (a table needs an "
                             "lp column, or src_lang and tgt_lang)", argument="src_lang", value=self.src_lang)
        return P.language_name(self.src_lang), P.language_name(self.tgt_lang)

    def _first_requests(self, hyps, refs, srcs) -> list[list[dict[str, str]]]:
        src_name, tgt_name = self._languages()
        ref = self._single_ref(refs)
        return [P.render(self.prompt, src_name, tgt_name, s, h, None if ref is None else ref[i])
                for i, (h, s) in enumerate(zip(hyps, srcs, strict=True))]

    def _single_ref(self, refs) -> list[str] | None:
        if not self.use_refs or refs is None:
            return None
        if len(refs) != 1:
            raise InputError(f"the judge reads one reference; got {len(refs)} reference streams")
        return refs[0]

    # ------------------------------------------------------------------ public
    def judge(self, hyps: Sequence[str], refs=None, srcs: Sequence[str] | None = None, *,
              progress: Callable[[int], None] | None = None) -> JudgeResult:
        """Scores, reasons, raw answers and error spans of each segment (see :class:`JudgeResult`)."""
        import pandas as pd

        hyps_, refs_, srcs_ = self._check_inputs(hyps, refs, srcs)
        assert srcs_ is not None
        n = len(hyps_)
        first = self._first_requests(hyps_, refs_, srcs_) if n else []
        answers, sent, cached = self._answers(first, progress)
        scores = np.full(n, np.nan)
        reasons = [""] * n
        final: list[str | None] = [a.text for a in answers]
        spans: list[dict[str, Any]] = []
        severities = P.PROMPT_SETS[self.prompt].severities
        src_name, tgt_name = self._languages() if n else ("", "")
        for i, answer in enumerate(answers):
            if answer.text is None:
                reasons[i] = answer.error
                continue
            if self.prompt == "da":
                scores[i], reasons[i] = self._read_score(answer)
                continue
            if answer.cut:  # a list stopped by the length bound may lack errors: its score would be too good
                reasons[i] = f"error list cut off at max_new_tokens={self._max_new('errors')}; raise max_new_tokens="
                continue
            errors, why = P.parse_errors(answer.text, severities)
            if errors is None:
                if self.prompt == "mqm":
                    reasons[i] = why
                continue
            if self.prompt == "mqm":
                scores[i] = P.mqm_score(errors)
            for error, (start, end) in zip(errors, P.locate_spans(errors, hyps_[i]), strict=True):
                spans.append({"segment": i, "severity": error.severity, "category": error.category, "start": start,
                              "end": end, "confidence": np.nan, "text": error.text})
        if self.prompt == "esa":
            rows = [i for i, a in enumerate(answers) if a.text is not None and not a.cut]
            second = [P.render("esa", src_name, tgt_name, srcs_[i], hyps_[i], error_spans=answers[i].text)
                      for i in rows]
            got, sent2, cached2 = self._answers(second, progress)
            sent, cached = sent + sent2, cached + cached2
            for i, answer in zip(rows, got, strict=True):
                final[i] = answer.text
                if answer.text is None:
                    reasons[i] = f"stage 2: {answer.error}"
                    continue
                scores[i], why = self._read_score(answer)
                reasons[i] = f"stage 2: {why}" if why else ""
        span_frame = pd.DataFrame(spans, columns=list(_SPAN_COLUMNS))
        counts = pd.DataFrame({s: np.bincount(span_frame.loc[span_frame["severity"] == s, "segment"].to_numpy(
            dtype=np.int64), minlength=n)[:n] for s in ("minor", "major", "critical")}, dtype="int64")
        return JudgeResult(scores, tuple(reasons), tuple(final), span_frame, counts, sent, cached, self.signature)

    def _read_score(self, answer: Answer) -> tuple[float, str]:
        """A score answer's number (NaN with the reason when none is read)."""
        assert answer.text is not None
        value, why = P.parse_score(answer.text)
        if answer.cut and (value is None or answer.text.rstrip()[-1:].isdigit()):
            # the bound may have stopped the answer inside its number ("8" of "85") or before it
            bound = self._max_new("score")
            why = f"{why or 'number at the end'}; answer cut off at max_new_tokens={bound}; raise max_new_tokens="
            value = None
        return (np.nan if value is None else value), why

    def plan(self, hyps: Sequence[str], refs=None, srcs: Sequence[str] | None = None) -> JudgePlan:
        """What :meth:`judge` would send, without sending anything (``xleval score --dry-run``). The cache is
        consulted for a local model only: a server's signature needs the server."""
        hyps_, refs_, srcs_ = self._check_inputs(hyps, refs, srcs)
        first = self._first_requests(hyps_, refs_, srcs_)
        stages = P.PROMPT_SETS[self.prompt].stages
        keys = [_request_key(m) for m in first]
        known = {k: self._memo[k] for k in keys if k in self._memo}
        if self.cache_arg is not None and not self.remote:
            known.update(_AnswerStore(self._cache_path(), self.signature).get(  # type: ignore[arg-type]
                [k for k in keys if k not in known]))
        # as judge() counts: a request asked by several rows (identical prompts) is sent once, cached once per row
        cached = sum(k in known for k in keys)
        unknown = dict.fromkeys(k for k in keys if k not in known)
        requests = len(unknown)
        if stages == 2:
            src_name, tgt_name = self._languages()
            stored = {k: _loaded(known[k]) for k in dict.fromkeys(keys) if k in known}
            # a stored first answer that the bound cut gets no stage 2 (judge() sends none for it); one not stored yet
            # is counted as sending one (its answer is unknown), once per distinct first request
            second = [_request_key(P.render("esa", src_name, tgt_name, srcs_[i], hyps_[i],  # type: ignore[index]
                                            error_spans=stored[k].text)) for i, k in enumerate(keys)
                      if k in stored and not stored[k].cut]
            store = None if self.cache_arg is None or self.remote else _AnswerStore(self._cache_path(),  # type: ignore[arg-type]
                                                                                     self.signature)
            hits = {k for k in second if k in self._memo} | (set(store.get(second)) if store is not None else set())
            cached += sum(k in hits for k in second)
            requests += len({k for k in second if k not in hits}) + len(unknown)
        return JudgePlan(tuple(first), requests, cached, stages)

    # ------------------------------------------------------------------ Metric hooks
    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        result = self.judge(hyps, refs, srcs)
        if result.failures:
            warnings.warn(f"{self.column}: {result.failures} of {len(hyps)} judge answer(s) could not be read and "
                          f"are kept as missing scores ({result.failure_summary()}); see JudgeResult.reasons",
                          DataQualityWarning, stacklevel=3)
        return result.scores

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        scores = self._sentence_scores(hyps, refs, srcs)
        read = np.isfinite(scores)
        return np.column_stack([np.where(read, scores, 0.0), read.astype(np.float64)])

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return stats[:, 0] / stats[:, 1]

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_memo": {}}


def _stored(answer: Answer) -> str:
    """An answer as the memo and the cache keep it: its text, marked when the length bound cut it."""
    assert answer.text is not None
    return _CUT + answer.text if answer.cut else answer.text


def _loaded(text: str) -> Answer:
    return Answer(text.removeprefix(_CUT), cut=text.startswith(_CUT))


def _request_key(messages: list[dict[str, str]]) -> bytes:
    return hashlib.blake2b(json.dumps(messages, ensure_ascii=False, sort_keys=True).encode("utf-8"),
                           digest_size=16).digest()


class _AnswerStore:
    """Raw answers in the score cache's SQLite file (a table beside the scores, same signature check)."""

    def __init__(self, path: Path, signature: str) -> None:
        from ._score_cache import ScoreCache

        self.scores = ScoreCache(path, signature)

    def _connect(self) -> sqlite3.Connection:
        con = self.scores._connect()  # creates the file, checks its signature
        con.execute("CREATE TABLE IF NOT EXISTS answers (request BLOB PRIMARY KEY, answer TEXT NOT NULL)")
        return con

    def get(self, keys: Sequence[bytes]) -> dict[bytes, str]:
        if not keys or not self.scores.path.exists():
            return {}
        out: dict[bytes, str] = {}
        con = self._connect()
        try:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                for key, answer in con.execute(f"SELECT request, answer FROM answers WHERE request IN ({marks})",
                                               part):
                    out[bytes(key)] = answer
        finally:
            con.close()
        return out

    def put(self, answers: dict[bytes, str]) -> None:
        con = self._connect()
        try:
            with con:
                con.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?)", list(answers.items()))
        finally:
            con.close()


def judge_tables(frame: Any, scored: Any, column: str) -> tuple[Any, Any]:
    """A scored table's judge details for ``column`` (a judge's score column of ``scored``, a
    :class:`~xleval.metrics.ScoredFrame` of ``frame``): the reason column ``<column>_failure`` ("" where the
    answer was read), the count columns ``<column>_minor/_major/_critical`` (MQM and ESA), and the side table of
    error spans (``row``, the table's id columns, ``metric``, then the span columns). The answers come from the
    judges' memo (or cache): nothing is sent again."""
    import pandas as pd

    from ._comet import _ID_COLUMNS

    metrics = scored.metrics[column]
    group = scored.group_of_row[column]
    n = len(frame)
    reasons = np.full(n, "", dtype=object)
    counts = pd.DataFrame(0, index=range(n), columns=["minor", "major", "critical"], dtype="int64")
    parts = []
    for g, metric in enumerate(metrics.values()):
        rows = np.flatnonzero(group == g)
        if not len(rows):
            continue
        sub = frame.iloc[rows]
        refs = [sub["reference"].astype(str).tolist()] if metric.use_refs else None
        result = metric.judge(sub["hypothesis"].astype(str).tolist(), refs, sub["source"].astype(str).tolist())
        reasons[rows] = list(result.reasons)
        counts.iloc[rows] = result.counts[["minor", "major", "critical"]].to_numpy()
        spans = result.spans
        spans["segment"] = rows[spans["segment"].to_numpy(dtype=np.int64)]
        parts.append(spans)
    out = {f"{column}_failure": reasons}
    severities = P.PROMPT_SETS[next(iter(metrics.values())).prompt].severities
    for s in severities:
        out[f"{column}_{s}"] = counts[s].to_numpy()
    spans = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(_SPAN_COLUMNS))
    spans = spans.rename(columns={"segment": "row"})
    ids = [c for c in _ID_COLUMNS if c in frame.columns]
    keys = frame[ids].reset_index(drop=True).iloc[spans["row"].to_numpy(dtype=np.int64)].reset_index(drop=True)
    spans = pd.concat([spans[["row"]].reset_index(drop=True), keys, spans.drop(columns="row").reset_index(drop=True)],
                      axis=1)
    spans.insert(1 + len(ids), "metric", column)
    return pd.DataFrame(out, index=frame.index), spans
