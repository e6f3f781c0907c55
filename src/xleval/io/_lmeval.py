"""The one reader of lm-evaluation-harness per-sample logs (``lm_eval --log_samples``).

The harness writes, per model, a folder ``<output>/<model_name_sanitized>/`` holding
``results_<date>.json`` (aggregate metrics; ``configs`` maps every task to its config, with the
dataset it read; ``model_name`` and ``config.model_args`` name the model) and, per task,
``samples_<task>_<date>.jsonl`` with the same ``<date>``: one JSON object per document and filter,
with ``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``, ``filtered_resps``, ``filter`` and
the per-document metric inputs (``acc``; ``[loglikelihood, n]`` for ``word_perplexity``,
``byte_perplexity``, ``bits_per_byte`` of ``loglikelihood_rolling`` tasks).

:func:`read_lm_eval_samples` reads one samples file together with its run: the records of one
filter, the task, the model (from the results file; the folder name only when there is none) and
the language of the evaluated text (from the task config's dataset name or the task name, when
either is a language code). Perplexity ingestion (:mod:`xleval.intrinsic`) and the translation-tax
audit (:mod:`xleval.audit`) both build their tables on it.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import InputError, LanguageCodeError
from ._inputs import read_regular_file, require_file
from ._shape import iter_json_objects, parse_json_object
from .langs import normalize_code

__all__ = ["LMEvalSamples", "read_lm_eval_samples"]

# samples_<task>_<date>.jsonl, <date> = datetime.isoformat() with ':' replaced by '-'
_SAMPLES_NAME = re.compile(r"samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl", re.DOTALL)
# The model_args keys lm-eval itself looks at, in its order (peft/delta come with pretrained=).
_MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
# A language code as lm-eval task configs spell them: "de", "pt-BR", "eng_Latn" (FLORES-200). Bare
# three-letter words are not accepted: "all", "val" or "pro" in a task name are no language.
# A results file holds aggregate metrics and task configs (a few MB for a large suite); it is read
# whole, so it is read only from a regular file of bounded size (never a FIFO or a device).
MAX_RESULTS_BYTES = 256 << 20
_LANG_LIKE = re.compile(r"^(?:[a-z]{2}|[a-z]{3}[_-][A-Z][a-z]{3})(?:[_-](?:[A-Z]{2}|\d{3}))?$")


@dataclass(frozen=True)
class LMEvalSamples:
    """One ``samples_*.jsonl`` file and what its run says about it.

    ``records`` are the JSON objects of one ``filter`` in file order. ``model`` and ``lang`` (a
    normalised language key) are None when nothing names them; ``model_source``/``lang_source``
    say where each came from. ``task_config`` is the task's entry of the results file's
    ``configs`` (empty without a results file).
    """

    path: Path
    records: tuple[dict[str, Any], ...]
    task: str | None = None
    date: str | None = None
    filter: str | None = None
    results_path: Path | None = None
    model: str | None = None
    model_source: str = "none"
    lang: str | None = None
    lang_source: str = "none"
    task_config: Mapping[str, Any] = field(default_factory=dict)


def read_lm_eval_samples(path: str | os.PathLike, *, filter_name: str | None = None, model: str | None = None,
                         lang: str | None = None) -> LMEvalSamples:
    """Read one lm-eval ``samples_<task>_<date>.jsonl`` and the ``results_<date>.json`` beside it.

    ``filter_name`` picks one filter when the task logged several (default: the first one in
    the file). ``model`` and ``lang`` override what the run says; otherwise the model comes from
    the results file (``model_name``, else the ``pretrained=``/``model=`` model argument), else
    from the folder the harness wrote the file into, and the language from the task config
    (``dataset_name``, then the task name) when it is a language code.
    """
    p = Path(path)
    require_file(p, str(p))  # missing, a directory or a device: one line saying so; recorded as an input
    records, chosen = _records(p, filter_name)
    match = _SAMPLES_NAME.fullmatch(p.name)
    task, date = (match["task"], match["date"]) if match else (None, None)
    results_path, results = _results_beside(p, task, date)
    config = _task_config(results, task)
    found_model, model_source = (model, "given") if model else _model(results, results_path, p)
    found_lang, lang_source = (normalize_code(lang), "given") if lang else _language(config, task)
    return LMEvalSamples(path=p, records=tuple(records), task=task, date=date, filter=chosen,
                         results_path=results_path, model=found_model, model_source=model_source,
                         lang=found_lang, lang_source=lang_source, task_config=config)


def _records(path: Path, filter_name: str | None) -> tuple[list[dict[str, Any]], str | None]:
    records = []
    hint = "is this an lm-eval samples file?"
    with path.open(encoding="utf-8", errors="strict") as fh:
        try:  # the one JSONL line reader: a key given twice in a record is refused, not silently the last
            for line_no, rec in iter_json_objects(fh, str(path), hint):
                if "doc_id" not in rec:
                    raise InputError(f"{path}: line {line_no}: record without 'doc_id'; not an lm-eval samples record")
                records.append(rec)
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: bytes are not valid UTF-8 ({exc.reason}); re-encode the file as UTF-8") from None
    if not records:
        raise InputError(f"{path}: no records; {hint}")
    chosen = records[0].get("filter") if filter_name is None else filter_name
    kept = [r for r in records if r.get("filter") == chosen]
    if not kept:
        seen = sorted({str(r.get("filter")) for r in records})
        raise InputError(f"{path}: no record with filter {chosen!r}; the file has filters {seen}")
    return kept, chosen


def _results_beside(path: Path, task: str | None, date: str | None) -> tuple[Path | None, dict[str, Any]]:
    """The results file of the same run: same folder and date; else the only one naming the task."""
    if date is not None:
        same = path.with_name(f"results_{date}.json")
        if os.path.lexists(same):  # whatever it is: a FIFO or a device there is refused, not skipped
            return same, _load_results(same)
    if task is None:
        return None, {}
    candidates = []
    for other in sorted(path.parent.glob("results_*.json")):
        results = _load_results(other)
        if task in _mapping(results.get("configs")):
            candidates.append((other, results))
    return candidates[0] if len(candidates) == 1 else (None, {})


def _load_results(path: Path) -> dict[str, Any]:
    """A results file, read whole from a regular file of at most MAX_RESULTS_BYTES (recorded as an input)."""
    fix = "remove it or fix it (it is the run's lm-eval results file, read for the model and the language)"
    try:
        raw = read_regular_file(path, MAX_RESULTS_BYTES, "an lm-eval results file")
        text = raw.decode("utf-8")
    except (OSError, ValueError) as exc:  # missing, a directory/FIFO/device, too large, not UTF-8
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{path}: cannot read the lm-eval results file ({reason}); {fix}") from None
    return parse_json_object(text, str(path), fix)


def _mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object of the results file, or {} for anything else (a file of another shape names nothing)."""
    return value if isinstance(value, Mapping) else {}


def _task_config(results: Mapping[str, Any], task: str | None) -> Mapping[str, Any]:
    configs = _mapping(results.get("configs"))
    if task is not None and isinstance(configs.get(task), Mapping):
        return configs[task]
    if task is None and len(configs) == 1:
        only = next(iter(configs.values()))
        return only if isinstance(only, Mapping) else {}
    return {}


def _model(results: Mapping[str, Any], results_path: Path | None, path: Path) -> tuple[str | None, str]:
    where = results_path.name if results_path is not None else "results file"
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name, f"{where}: model_name"
    args = _mapping(results.get("config")).get("model_args")
    if isinstance(args, str):
        parsed = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
        for key in _MODEL_ARG_KEYS:
            if parsed.get(key):
                return parsed[key], f"{where}: model_args {key}="
    if isinstance(args, Mapping):
        for key in _MODEL_ARG_KEYS:
            if args.get(key):
                return str(args[key]), f"{where}: model_args {key}="
    folder = path.resolve().parent.name
    return (folder, "folder name (no results file names the model)") if folder else (None, "none")


def _language(config: Mapping[str, Any], task: str | None) -> tuple[str | None, str]:
    candidates = []
    metadata = config.get("metadata")
    if isinstance(metadata, Mapping):
        candidates += [(metadata.get(k), f"task config metadata.{k}") for k in ("lang", "language")]
    candidates.append((config.get("dataset_name"), "task config dataset_name"))
    name = task or config.get("task")
    if isinstance(name, str):
        parts = name.split("_")
        candidates += [("_".join(parts[-2:]), "task name"), (parts[-1], "task name")]
    for value, source in candidates:
        code = _as_language(value, strict=not source.startswith("task config metadata"))
        if code is not None:
            return code, f"{source} {value!r}"
    return None, "none"


def _as_language(value: Any, *, strict: bool) -> str | None:
    if not isinstance(value, str) or not value or (strict and not _LANG_LIKE.match(value)):
        return None
    try:
        return normalize_code(value)
    except LanguageCodeError:
        return None
