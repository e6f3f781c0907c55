"""The one lm-eval samples reader (xleval.io.read_lm_eval_samples): records, filter, and the model
and language of the run, from files laid out as lm_eval --log_samples writes them."""
from __future__ import annotations

import json

import pytest

from _lmeval_fixtures import (
    DATE,
    MODEL,
    SANITIZED,
    flores_perplexity_run,
    perplexity_task_config,
    rolling_record,
    write_run,
)
from xleval.exceptions import InputError
from xleval.io import read_lm_eval_samples


def test_model_and_language_come_from_the_run(tmp_path):
    paths = flores_perplexity_run(tmp_path)
    en = read_lm_eval_samples(paths["flores_ppl_eng_Latn"])
    de = read_lm_eval_samples(paths["flores_ppl_deu_Latn"])
    assert en.model == de.model == MODEL  # one model, whatever the samples files are called
    assert (en.lang, de.lang) == ("en", "de")  # FLORES-200 codes eng_Latn / deu_Latn
    assert en.task == "flores_ppl_eng_Latn" and en.date == DATE and en.filter == "none"
    assert en.results_path.name == f"results_{DATE}.json" and "dataset_name" in en.lang_source
    assert [r["doc_id"] for r in en.records] == [0, 1, 2]


def test_model_from_model_args_then_folder(tmp_path):
    task = "flores_ppl_eng_Latn"
    recs = {task: [rolling_record(0, "a b", -3.0)]}
    path = write_run(tmp_path / "a", recs, {task: perplexity_task_config(task, "eng_Latn")}, model=None)[task]
    results = path.with_name(f"results_{DATE}.json")
    data = json.loads(results.read_text())
    data["config"]["model_args"] = "pretrained=org/model-x,revision=step1000"
    results.write_text(json.dumps(data))
    s = read_lm_eval_samples(path)
    assert s.model == "org/model-x" and "model_args" in s.model_source
    results.unlink()  # no results file: the folder the harness named after the model
    s = read_lm_eval_samples(path)
    assert s.model == SANITIZED and s.model_source.startswith("folder")
    assert s.lang == "en" and s.lang_source.startswith("task name")  # no config left: the task's own name
    assert read_lm_eval_samples(path, model="m", lang="eng_Latn").model == "m"


def test_language_from_the_task_name_only_when_it_is_a_code(tmp_path):
    configs = {"lambada_openai_mt_de": {"task": "lambada_openai_mt_de", "dataset_name": "default"},
               "wikitext": {"task": "wikitext", "dataset_name": "wikitext-2-raw-v1"},
               "mmlu_pro": {"task": "mmlu_pro", "dataset_name": "all"}}
    tasks = {t: [rolling_record(0, "x y", -2.0)] for t in configs}
    paths = write_run(tmp_path, tasks, configs)
    assert read_lm_eval_samples(paths["lambada_openai_mt_de"]).lang == "de"
    assert read_lm_eval_samples(paths["wikitext"]).lang is None
    assert read_lm_eval_samples(paths["mmlu_pro"]).lang is None  # "all" and "pro" are not taken for languages


def test_results_file_of_another_date_is_found_by_task(tmp_path):
    paths = flores_perplexity_run(tmp_path)
    moved = paths["flores_ppl_deu_Latn"].with_name("samples_flores_ppl_deu_Latn_2025-03-15T10-00-00.000001.jsonl")
    paths["flores_ppl_deu_Latn"].rename(moved)
    assert read_lm_eval_samples(moved).lang == "de"


def test_filters_and_bad_files(tmp_path):
    recs = [{"doc_id": 0, "target": "B", "filtered_resps": ["B"], "filter": "strict-match"},
            {"doc_id": 0, "target": "B", "filtered_resps": ["b"], "filter": "flexible-extract"}]
    path = tmp_path / "samples_t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert read_lm_eval_samples(path).filter == "strict-match"
    assert read_lm_eval_samples(path, filter_name="flexible-extract").records[0]["filtered_resps"] == ["b"]
    with pytest.raises(InputError, match="filters"):
        read_lm_eval_samples(path, filter_name="none")
    path.write_text('{"target": "B"}\n')
    with pytest.raises(InputError, match="doc_id"):
        read_lm_eval_samples(path)
    path.write_text("{not json}\n")
    with pytest.raises(InputError, match="line 1: not valid JSON"):
        read_lm_eval_samples(path)
    with pytest.raises(InputError, match="no such file"):
        read_lm_eval_samples(tmp_path / "samples_missing.jsonl")
