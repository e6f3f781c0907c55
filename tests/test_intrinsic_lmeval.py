"""The lm-eval perplexity path end to end: samples of one model in two languages -> scores ->
corpus metrics -> confounds; the ingested table reads back; the input kind is told from content."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from _lmeval_fixtures import (
    MODEL,
    TEXTS,
    bits_per_byte,
    flores_perplexity_run,
    perplexity_task_config,
    rolling_record,
    write_run,
)
from xleval.exceptions import InputError
from xleval.intrinsic import analyze_confounds, corpus_metrics, detect_source, lm_eval_scores, read_scores
from xleval.io import write_table


@pytest.fixture
def run(tmp_path):
    return flores_perplexity_run(tmp_path / "out")


def test_one_model_two_languages(run):
    scores = read_scores(list(run.values()))
    t = scores.table
    assert set(t["model"]) == {MODEL} and sorted(t["lang"].unique()) == ["de", "en"]
    assert set(t["setting"]) == {MODEL}  # the languages are compared within the one model
    c = corpus_metrics(scores, by=["lang"]).table.set_index("lang")
    for lang, code in (("en", "eng_Latn"), ("de", "deu_Latn")):
        assert c.loc[lang, "bpb"] == pytest.approx(bits_per_byte(code), rel=1e-12)
        assert c.loc[lang, "chars_sum"] == sum(len(s) for s in TEXTS[code])
        assert math.isnan(c.loc[lang, "token_nll"])  # the harness logs no token counts


def test_ingested_table_reads_back_for_metrics_and_confounds(run, tmp_path):
    scores = read_scores(list(run.values()))
    assert "loglik" not in scores.table.columns  # one log-likelihood column: nll (nats)
    path = tmp_path / "scores.parquet"
    write_table(scores.table, path)
    again = read_scores(path)
    assert detect_source(path) == "scores"
    a = corpus_metrics(scores, by=["lang", "model"]).table
    b = corpus_metrics(again, by=["lang", "model"]).table
    np.testing.assert_allclose(a["bpb"], b["bpb"], rtol=1e-15)
    rep = analyze_confounds(again)
    assert rep.n_languages == 2 and rep.level == "language"
    assert rep.tests["verdict"].str.startswith("not tested: n = 2 languages").all()  # said, not crashed


def test_source_detection(run, tmp_path):
    samples = run["flores_ppl_eng_Latn"]
    assert detect_source(samples) == "lm-eval"
    renamed = samples.with_name("english.jsonl")  # not named samples_*: the first record tells
    renamed.write_bytes(samples.read_bytes())
    assert detect_source(renamed) == "lm-eval"
    apples = tmp_path / "results.parquet"
    pd.DataFrame({"experiment": ["main"], "eval_set": ["pud"], "metric": ["bpb"], "value": [1.0],
                  "source_file": ["x.csv"]}).to_parquet(apples)
    assert detect_source(apples) == "apples"
    table = tmp_path / "scores.tsv"
    table.write_text("lang\tnll\nen\t3.0\n")
    assert detect_source(table) == "scores"
    with pytest.raises(InputError, match="eval_set"):
        read_scores(apples)
    with pytest.raises(InputError, match="different kinds"):
        read_scores([samples, table])


def test_a_run_that_names_no_language_needs_one(tmp_path):
    task = "wikitext"
    paths = write_run(tmp_path, {task: [rolling_record(0, "Some text here", -20.0)]},
                      {task: perplexity_task_config(task, "wikitext-2-raw-v1")})
    with pytest.raises(InputError, match=r"give the language \(lang=\)"):
        read_scores(paths[task])
    assert set(read_scores(paths[task], lang="en").table["lang"]) == {"en"}


def test_non_rolling_samples_are_refused(tmp_path):
    path = tmp_path / "samples_arc_easy_2025-01-01T00-00-00.000000.jsonl"
    path.write_text('{"doc_id": 0, "target": "1", "acc": 1.0}\n')
    with pytest.raises(InputError, match="loglikelihood_rolling"):
        lm_eval_scores(path, lang="en", model="m")


def test_cli_ingest_metrics_confounds(run, tmp_path, cli):
    scores = tmp_path / "scores.parquet"
    rc, _, err = cli("intrinsic", "ingest", *run.values(), "-o", scores)
    assert rc == 0 and "6 rows" in err, err
    rc, out, err = cli("intrinsic", "metrics", scores, "--by", "lang,model", "--format", "json")
    assert rc == 0, err
    rows = {r["lang"]: r for r in json.loads(out)["rows"]}
    assert set(rows) == {"en", "de"} and {r["model"] for r in rows.values()} == {MODEL}
    assert rows["de"]["bpb"] == pytest.approx(bits_per_byte("deu_Latn"), rel=1e-12)
    rc, out, err = cli("intrinsic", "confounds", scores, "--format", "json")
    assert rc == 0, err
    out = json.loads(out)
    assert out["n_languages"] == 2 and not any(r["confounded"] for r in out["tests"])
    # the samples files themselves, without ingesting first
    rc, out, err = cli("intrinsic", "metrics", *run.values(), "--by", "lang", "--format", "json")
    assert rc == 0 and len(json.loads(out)["rows"]) == 2, err


def test_cli_names_the_missing_language(tmp_path, cli):
    task = "wikitext"
    paths = write_run(tmp_path, {task: [rolling_record(0, "Some text here", -20.0)]},
                      {task: perplexity_task_config(task, "wikitext-2-raw-v1")})
    rc, _, err = cli("intrinsic", "metrics", paths[task])
    assert rc == 2 and "--lang" in err and err.count("\n") == 1
    rc, _, err = cli("intrinsic", "metrics", paths[task], "--lang", "en", "--format", "json")
    assert rc == 0, err
