"""lm-evaluation-harness ingestion, the `xleval audit` command and the audit figures."""
import json

import pandas as pd
import pytest

from import_check import loaded_by
from xleval.audit import AUDIT_RESAMPLING, audit, lm_eval_answers, simulate_audit_data
from xleval.audit._plots import plot_dose_response, plot_estimates, plot_parser_validity
from xleval.exceptions import InputError


def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _loglik(doc_id, target, best, subject="anatomy"):
    resps = [[-3.0, False], [-2.0, False], [-4.0, False], [-5.0, False]]
    resps[best] = [-1.0, True]
    return {"doc_id": doc_id, "doc": {"subject": subject, "answer": target}, "target": target,
            "resps": [[r] for r in resps], "filtered_resps": resps, "filter": "none", "acc": float(best == target)}


def _generate(doc_id, target, text, filt="strict-match"):
    return {"doc_id": doc_id, "target": target, "resps": [[text]], "filtered_resps": [text], "filter": filt}


def test_loglik_samples_become_letters(tmp_path):
    f = _write(tmp_path / "org__model-x" / "samples_mmlu_2025.jsonl",
               [_loglik(0, 2, 2), _loglik(1, 0, 3), _loglik(2, [1], 1)])
    df = lm_eval_answers(f, condition="translated")
    assert df["model"].unique().tolist() == ["org__model-x"]  # the folder lm-eval writes per model
    assert df["response"].tolist() == ["C", "D", "B"] and df["answer"].tolist() == ["C", "A", "B"]
    assert df["subject"].tolist() == ["anatomy"] * 3


def test_generation_samples_keep_text_and_pick_one_filter(tmp_path):
    recs = [_generate(0, "B", "答案是B"), _generate(1, "C", "I am not sure"), _generate(0, "B", "B", "flexible"),
            {"doc_id": 2, "target": 3, "resps": ["D."], "filtered_resps": ["D."], "filter": "strict-match"}]
    df = lm_eval_answers(_write(tmp_path / "m" / "samples_t.jsonl", recs), model="m", condition="source")
    assert df["item_id"].tolist() == ["0", "1", "2"]
    assert df["answer"].tolist() == ["B", "C", "D"]
    assert df["response"].tolist() == ["答案是B", "I am not sure", "D."]


def test_lm_eval_bad_files(tmp_path):
    bad = tmp_path / "samples_bad.jsonl"
    bad.write_text("{not json}\n")
    with pytest.raises(InputError, match="not valid JSON"):
        lm_eval_answers(bad, model="m", condition="source")
    f = _write(tmp_path / "samples_free.jsonl", [_generate(0, "Paris", "Paris")])
    with pytest.raises(InputError, match="multiple-choice"):
        lm_eval_answers(f, model="m", condition="source")


def test_cli_table_checklist_and_json(tmp_path, cli):
    df, _ = simulate_audit_data(n_items=40, n_models=2, n_native=40, random_state=1)
    path = tmp_path / "results.csv"
    df.to_csv(path, index=False)
    checklist = tmp_path / "checklist.md"
    rc, stdout, err = cli("audit", path, "--format", "json", "--checklist", checklist, "--n-resamples", "100")
    assert rc == 0, err
    out = json.loads(stdout)
    assert {c["estimator"] for c in out["contrasts"]} == {"E1", "E3", "E4"}
    assert checklist.read_text().startswith("# Translation-tax audit: reporting checklist")
    rc, _, err = cli("audit", tmp_path / "missing.csv")
    assert rc == 2 and "no such file" in err


def test_cli_reads_lm_eval_specs(tmp_path, cli):
    src = _write(tmp_path / "m1" / "samples_en.jsonl", [_loglik(i, i % 4, i % 4) for i in range(8)])
    tr = _write(tmp_path / "m1" / "samples_zh.jsonl", [_loglik(i, i % 4, (i * 3) % 4) for i in range(8)])
    saved = tmp_path / "long.tsv"
    rc, out, err = cli("audit", f"source={src}", f"back_translated@m1={tr}", "--save-table", saved,
                       "--n-resamples", "50")
    assert rc == 0, err
    long = pd.read_csv(saved, sep="\t")
    assert set(long["condition"]) == {"source", "back_translated"} and set(long["model"]) == {"m1"}
    assert "E1" in out


def test_figures_and_lazy_matplotlib():
    df, _ = simulate_audit_data(n_items=60, n_models=2, n_native=30, random_state=2)
    res = audit(df, resampling=AUDIT_RESAMPLING.with_(n_resamples=100), n_permutations=99)
    from matplotlib.figure import Figure

    for fig in (plot_estimates(res), plot_parser_validity(res), plot_dose_response(res)):
        assert isinstance(fig, Figure) and fig.axes
    assert loaded_by("import xleval.audit") == []


def test_model_comes_from_the_run_results_file(tmp_path):
    from _lmeval_fixtures import write_run

    paths = write_run(tmp_path, {"mmlu_zh": [_loglik(i, i % 4, i % 4) for i in range(4)]},
                      {"mmlu_zh": {"task": "mmlu_zh", "dataset_name": "zh"}}, model="org/model-x",
                      folder="org__model-x")
    df = lm_eval_answers(paths["mmlu_zh"], condition="translated")
    assert set(df["model"]) == {"org/model-x"}


def _ratings_file(tmp_path):
    a, b = [1, 2, 4, 5] * 3, [2, 1, 5, 4] * 3  # a 1-5 scale on which nobody rated 3
    rows = [(f"q{k:04d}", r, v) for r, vals in (("r1", a), ("r2", b)) for k, v in enumerate(vals)]
    path = tmp_path / "ratings.tsv"
    pd.DataFrame(rows, columns=["item_id", "rater", "rating"]).to_csv(path, sep="\t", index=False)
    return path


def test_cli_ratings_scale(tmp_path, cli):
    df, _ = simulate_audit_data(n_items=12, n_models=2, n_native=12, random_state=1)
    data = tmp_path / "results.csv"
    df.to_csv(data, index=False)
    ratings = _ratings_file(tmp_path)
    base = ["audit", data, "--ratings", ratings, "--format", "json", "--n-resamples", "50"]
    rc, out, err = cli(*base, "--scale", "1-5")
    assert rc == 0, err
    agreement = json.loads(out)["agreement"][0]
    assert agreement["pairs"][0]["kappa"] == pytest.approx(0.80) and agreement["meets_target"]
    assert agreement["scale"] == [1, 2, 3, 4, 5] and "warning" not in err
    rc, out, err = cli(*base)  # scale from the data: 1-5 again, with a warning that 3 is unused
    assert rc == 0, err
    assert json.loads(out)["agreement"][0]["pairs"][0]["kappa"] == pytest.approx(0.80)
    assert "warning:" in err and "unused" in err
    rc, _, err = cli("audit", data, "--scale", "1-5")
    assert rc == 2 and "--ratings" in err


def test_cli_unknown_condition_lists_the_valid_ones(tmp_path, cli):
    src = _write(tmp_path / "m1" / "samples_en.jsonl", [_loglik(i, i % 4, i % 4) for i in range(4)])
    rc, _, err = cli("audit", f"source={src}", f"back-translation@m1={src}")
    assert rc == 2
    assert "'back-translation'" in err and "back_translated" in err and "Traceback" not in err
