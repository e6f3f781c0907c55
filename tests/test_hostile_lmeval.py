"""Hostile lm-eval runs and options at the entry points of the intrinsic and audit commands: names from
a run (model names in the results file, task names in the file names) are shown and plotted as they
are; outputs never replace an input (the samples, or the results file the reader found beside them);
a results file that is a FIFO, a device, too large or malformed JSON is one line, never a hang or a
traceback; a malformed audit --scale is one line. (The ordinary reading is tested in test_io_lmeval.py.)"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from _lmeval_fixtures import DATE, LOGLIK, TEXTS, perplexity_task_config, rolling_record, write_run
from xleval.audit import simulate_audit_data
from xleval.exceptions import InputError
from xleval.intrinsic import read_scores
from xleval.io import read_lm_eval_samples

MODELS = ["[link=https://evil.example/x]totally-safe[/link]", "[bold red]B", "\x1b[31mred\x1b[0m", "$\\undefinedmacro$"]
TASKS = ["[bold red]T", "\x1b[2Jt", "$\\undefinedmacro$", "two\nlines"]  # file names: anything but '/'
RAW = ("\x1b", "two\nlines")  # must never reach a terminal or a report as such


def _hostile_perplexity_runs(out: Path) -> list[Path]:
    """Four models (named in each run's results file) x English/German FLORES sentences; every task name
    is hostile, the language comes from the task config's dataset_name."""
    paths = []
    for k, model in enumerate(MODELS):
        tasks, configs = {}, {}
        for j, (lang, texts) in enumerate(TEXTS.items()):
            task = f"{TASKS[(k + j) % len(TASKS)]}_{j}"
            tasks[task] = [rolling_record(i, t, ll * (1 + 0.1 * k)) for i, (t, ll) in enumerate(zip(texts, LOGLIK[lang],
                                                                                                    strict=True))]
            configs[task] = perplexity_task_config(task, lang)
        paths += write_run(out, tasks, configs, model=model, folder=f"m{k}").values()
    return paths


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    return _hostile_perplexity_runs(tmp_path / "out")


def test_the_reader_keeps_hostile_names_exactly(runs):
    found = {read_lm_eval_samples(p).model for p in runs}
    assert found == set(MODELS)
    scores = read_scores(runs)
    assert set(scores.table["model"]) == set(MODELS) and sorted(scores.table["lang"].unique()) == ["de", "en"]
    assert {t.rsplit("_", 1)[0] for t in scores.table["task"]} == set(TASKS)  # "two\nlines" parsed from its file name


@pytest.mark.parametrize("args", [
    ("metrics", "--by", "lang,model,task"),
    ("metrics", "--by", "lang,model", "--format", "json"),
    ("confounds",),
    ("confounds", "--level", "model"),
    ("confounds", "--format", "json"),
])
def test_intrinsic_commands_show_hostile_run_names_as_they_are(args, runs, cli):
    rc, out, err = cli("intrinsic", args[0], *runs, *args[1:])
    assert rc == 0, err
    text = out + err
    assert not [raw for raw in RAW if raw in text], text[-2000:]
    if args[:3] == ("metrics", "--by", "lang,model,task"):  # the names are shown literally, controls as escapes
        for shown in ("[bold red]B", "totally-safe[/link]", "\\x1b[31mred", "$\\undefinedmacro$", "two\\x0alines_"):
            assert shown in out, shown
    if "json" in args:
        json.loads(out)


def test_intrinsic_confounds_report_with_hostile_names(runs, tmp_path, cli):
    report = tmp_path / "r.html"
    rc, _, err = cli("intrinsic", "confounds", *runs, "--level", "model", "--report", report)
    assert rc == 0, err
    html = report.read_text(encoding="utf-8")
    assert 'src="data:image/svg+xml;' in html
    assert "[bold red]B" in html and "\x1b" not in html


def _choice(doc_id: int, target: int, best: int) -> dict:
    resps = [[-3.0, False], [-2.0, False], [-4.0, False], [-5.0, False]]
    resps[best] = [-1.0, True]
    return {"doc_id": doc_id, "doc": {"subject": "anatomy"}, "target": target, "resps": [[r] for r in resps],
            "filtered_resps": resps, "filter": "none", "acc": float(best == target)}


def test_audit_of_lm_eval_runs_plots_hostile_model_names_literally(tmp_path, cli):
    """CONDITION=samples without @MODEL: the model is the one the run's results file names, hostile here;
    the audit figures label the models with it ($\\undefinedmacro$ broke matplotlib's mathtext)."""
    specs = []
    for k, model in enumerate(MODELS):
        tasks = {"mmlu_en": [_choice(i, i % 4, i % 4) for i in range(24)],
                 "mmlu_bt": [_choice(i, i % 4, (i * (k + 2)) % 4) for i in range(24)]}
        paths = write_run(tmp_path / "out", tasks, {t: {"task": t} for t in tasks}, model=model, folder=f"m{k}")
        specs += [f"source={paths['mmlu_en']}", f"back_translated={paths['mmlu_bt']}"]
    report = tmp_path / "audit.html"
    rc, out, err = cli("audit", *specs, "--n-resamples", "20", "--report", report)
    assert rc == 0, err
    assert not [raw for raw in RAW if raw in out + err] and "[bold red]B" in out
    html = report.read_text(encoding="utf-8")
    assert html.count('src="data:image/svg+xml;') >= 1
    assert "$\\undefinedmacro$" in html and "\x1b" not in html


def test_an_error_about_a_hostile_file_name_is_one_line(tmp_path, cli):
    path = tmp_path / f"samples_two\nlines\x1b[2J_{DATE}.jsonl"  # no results file: nothing names the language
    path.write_text(json.dumps(rolling_record(0, "Some text", -9.0)) + "\n", encoding="utf-8")
    rc, _, err = cli("intrinsic", "metrics", path)
    assert rc == 2 and err.count("\n") == 1 and "\x1b" not in err and "two\\x0alines\\x1b[2J" in err, err


# outputs never replace an input ------------------------------------------------------------------------
def test_ingest_onto_an_input_is_refused_and_the_inputs_are_untouched(runs, tmp_path, cli):
    a, b = runs[:2]
    before = {p: p.read_bytes() for p in (a, b)}
    link = tmp_path / "link.jsonl"
    link.symlink_to(b)
    for output in (a, b, link):
        rc, _, err = cli("intrinsic", "ingest", a, b, "-o", output)
        assert rc == 2 and err.count("\n") == 1 and "input" in err, err
    rc, _, err = cli("intrinsic", "metrics", a, b, "-o", b)
    assert rc == 2 and "input" in err
    assert {p: p.read_bytes() for p in (a, b)} == before
    assert not list(a.parent.glob(".*")) and link.is_symlink()  # no temporary file left, the link kept


def test_the_results_file_the_reader_found_is_an_input_too(runs, cli):
    """The results file is not on the command line, yet it is read: a report written onto it is refused."""
    results = runs[0].with_name(f"results_{DATE}.json")
    before = results.read_bytes()
    rc, _, err = cli("intrinsic", "confounds", *runs[:2], "--report", results)
    assert rc == 2 and err.count("\n") == 1 and "input" in err, err
    assert results.read_bytes() == before


# results files that are not what they claim ------------------------------------------------------------
def _perplexity_run(tmp_path: Path) -> Path:
    task = "flores_ppl_eng_Latn"
    return write_run(tmp_path, {task: [rolling_record(0, "The cat sat.", -12.0)]},
                     {task: perplexity_task_config(task, "eng_Latn")})[task]


def _finishes(func, seconds: float = 60):
    """func() run in a thread that must end within ``seconds`` (a read blocked on a FIFO never would)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = func()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the reader blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize("same_date", [True, False])
def test_a_results_file_that_is_a_fifo_is_refused_without_waiting(tmp_path, same_date):
    samples = _perplexity_run(tmp_path)
    results = samples.with_name(f"results_{DATE}.json")
    results.unlink()
    fifo = results if same_date else samples.with_name("results_2025-01-01T00-00-00.000000.json")  # found by glob
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"cannot read the lm-eval results file \(it is a FIFO"):
        _finishes(lambda: read_lm_eval_samples(samples))


def test_a_results_file_that_is_a_fifo_ends_the_command(tmp_path, cli_process):
    samples = _perplexity_run(tmp_path)
    results = samples.with_name(f"results_{DATE}.json")
    results.unlink()
    os.mkfifo(results)
    rc, _, err = cli_process("intrinsic", "metrics", samples, timeout=120)  # TimeoutExpired if it blocked
    assert rc == 2 and err.count("\n") == 1 and "FIFO" in err, err


def test_a_results_file_that_is_a_device_or_too_large_is_refused(tmp_path, monkeypatch):
    samples = _perplexity_run(tmp_path)
    results = samples.with_name(f"results_{DATE}.json")
    monkeypatch.setattr("xleval.io._lmeval.MAX_RESULTS_BYTES", 100)
    with pytest.raises(InputError, match="more than the 0 MiB an lm-eval results file may have"):
        read_lm_eval_samples(samples)
    monkeypatch.undo()
    results.unlink()
    results.symlink_to("/dev/zero")  # would never end if it were read
    with pytest.raises(InputError, match="character device"):
        _finishes(lambda: read_lm_eval_samples(samples))


@pytest.mark.parametrize("content, message", [
    (b'{"model_name": "a", "configs": {}, "model_name": "b"}', "key 'model_name' occurs more than once"),
    (b'{"configs": {"t": {"dataset_name": "de", "dataset_name": "en"}}}', "key 'dataset_name' occurs more than once"),
    (b"[1, 2]", "expected a JSON object, got an array"),
    (b"{\n  \"model_name\": \"m\",\n  oops\n}", r"line 3 column 3: not valid JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"n": ' + b"9" * 5000 + b"}", "cannot read the JSON"),
    (b'{"model_name": "caf\xe9"}', "cannot read the lm-eval results file .*utf-8"),
], ids=["duplicate key", "duplicate nested key", "array", "syntax", "deep", "huge integer", "latin-1"])
def test_a_malformed_results_file_is_one_input_error(tmp_path, content, message):
    samples = _perplexity_run(tmp_path)
    samples.with_name(f"results_{DATE}.json").write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_lm_eval_samples(samples)


def test_a_results_file_of_another_shape_names_nothing_and_breaks_nothing(tmp_path):
    samples = _perplexity_run(tmp_path)
    samples.with_name(f"results_{DATE}.json").write_text('{"configs": 5, "config": [1], "model_name": 7}')
    s = read_lm_eval_samples(samples)
    assert s.model == samples.parent.name and s.model_source.startswith("folder")
    assert s.lang == "en" and s.lang_source.startswith("task name")


def test_samples_from_a_fifo_are_read_once(tmp_path):
    samples = _perplexity_run(tmp_path)
    data = samples.read_bytes()
    samples.unlink()
    os.mkfifo(samples)  # e.g. <(zcat samples.jsonl.gz): detected by its name, never sniffed first
    writer = threading.Thread(target=lambda: samples.write_bytes(data), daemon=True)
    writer.start()
    scores = _finishes(lambda: read_scores(samples))
    writer.join(timeout=30)
    assert scores.table["nll"].tolist() == [12.0] and set(scores.table["lang"]) == {"en"}


# audit --scale ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", ["5-1", "a-b", "1-1e9", "1-1000000000", "nan,inf", "1,1", "3", ""])
def test_audit_scale_garbage_is_one_line(scale, tmp_path, cli):
    df, _ = simulate_audit_data(n_items=12, n_models=2, n_native=12, random_state=1)
    data, ratings, saved = tmp_path / "results.csv", tmp_path / "ratings.tsv", tmp_path / "saved.tsv"
    df.to_csv(data, index=False)
    ratings.write_text("item_id\trater\trating\nq0000\tr1\t1\nq0000\tr2\t2\n")
    rc, out, err = cli("audit", data, "--ratings", ratings, "--scale", scale, "--save-table", saved)
    assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("xleval: error: rating scale"), err
    assert not saved.exists()  # refused before anything is read or written
