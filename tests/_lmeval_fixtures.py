"""lm-evaluation-harness output written the way the harness writes it (``--output_path OUT
--log_samples``, lm_eval 0.4.x): ``OUT/<model_name_sanitized>/results_<date>.json`` with
``configs``, ``model_name`` and ``config.model_args``, and one ``samples_<task>_<date>.jsonl`` per
task whose records carry ``doc_id``, ``doc``, ``target``, ``arguments`` (``gen_args_i``/``arg_j``),
``resps``, ``filtered_resps``, ``filter``, ``metrics``, the hashes and the per-document metrics."""
from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

DATE = "2025-03-14T09-26-53.589793"
MODEL = "EleutherAI/pythia-160m"
SANITIZED = "EleutherAI__pythia-160m"

# FLORES-style parallel sentences (doc_id aligned across languages) and the log-likelihoods the
# model gave them (natural log, summed over every token: loglikelihood_rolling).
TEXTS = {
    "eng_Latn": ["The cat sat on the mat.", "It rained all day in Berlin.", "Water boils at 100 degrees."],
    "deu_Latn": ["Die Katze saß auf der Matte.", "In Berlin regnete es den ganzen Tag.", "Wasser kocht bei 100 Grad."],
}
LOGLIK = {"eng_Latn": [-31.5, -40.25, -35.0], "deu_Latn": [-38.0, -52.5, -41.75]}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def perplexity_task_config(task: str, dataset_name: str) -> dict:
    return {"task": task, "dataset_path": "openlanguagedata/flores_plus", "dataset_name": dataset_name,
            "test_split": "devtest", "doc_to_text": "", "doc_to_target": "{{text}}",
            "output_type": "loglikelihood_rolling", "num_fewshot": 0,
            "metric_list": [{"metric": "word_perplexity"}, {"metric": "byte_perplexity"}, {"metric": "bits_per_byte"}],
            "metadata": {"version": 1.0}}


def rolling_record(doc_id: int, text: str, loglik: float) -> dict:
    words = len(re.split(r"\s+", text))
    n_bytes = len(text.encode("utf-8"))
    return {"doc_id": doc_id, "doc": {"id": doc_id, "text": text}, "target": text,
            "arguments": {"gen_args_0": {"arg_0": text}}, "resps": [[loglik]], "filtered_resps": [loglik],
            "filter": "none", "metrics": ["word_perplexity", "byte_perplexity", "bits_per_byte"],
            "doc_hash": _sha(json.dumps({"id": doc_id, "text": text}, indent=2)), "prompt_hash": _sha(text),
            "target_hash": _sha(text), "word_perplexity": [loglik, words], "byte_perplexity": [loglik, n_bytes],
            "bits_per_byte": [loglik, n_bytes]}


def write_run(out: Path, tasks: dict[str, list[dict]], configs: dict[str, dict], *, date: str = DATE,
              model: str | None = MODEL, folder: str = SANITIZED) -> dict[str, Path]:
    """Write one lm_eval run (one results file, one samples file per task); the samples paths."""
    folder_path = out / folder
    folder_path.mkdir(parents=True, exist_ok=True)
    results = {"results": {t: {"alias": t} for t in tasks}, "configs": configs,
               "versions": dict.fromkeys(tasks, 1.0), "n-shot": dict.fromkeys(tasks, 0),
               "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float32" if model else "",
                          "batch_size": "1", "device": "cpu"},
               "lm_eval_version": "0.4.8", "date": 1741944413.0}
    if model is not None:
        results.update({"model_name": model, "model_name_sanitized": folder})
    (folder_path / f"results_{date}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    paths = {}
    for task, records in tasks.items():
        path = folder_path / f"samples_{task}_{date}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        paths[task] = path
    return paths


def flores_perplexity_run(out: Path, **kw) -> dict[str, Path]:
    """One model, the English and German FLORES sentences, one lm_eval run with two tasks."""
    tasks, configs = {}, {}
    for lang, texts in TEXTS.items():
        task = f"flores_ppl_{lang}"
        tasks[task] = [rolling_record(i, t, ll) for i, (t, ll) in enumerate(zip(texts, LOGLIK[lang], strict=True))]
        configs[task] = perplexity_task_config(task, lang)
    return write_run(out, tasks, configs, **kw)


def bits_per_byte(lang: str) -> float:
    """lm-eval's bits_per_byte aggregation: -sum(loglik) / sum(bytes) / ln 2."""
    n_bytes = sum(len(t.encode("utf-8")) for t in TEXTS[lang])
    return -sum(LOGLIK[lang]) / n_bytes / math.log(2)
