"""`--report` on fairness gaps, audit and intrinsic confounds writes the analysis as HTML or JSON."""
import json

import pandas as pd

from xleval.audit._simulate import simulate_audit_data


def _section_titles(path):
    return [s["title"] for s in json.loads(path.read_text())["sections"]]


def test_fairness_audit_and_intrinsic_reports(tmp_path, cli):
    rows = [{"language": lang, "qid": i, "f1": (i % 7 + k) / 10} for k, lang in enumerate(["en", "de", "sw"])
            for i in range(30)]
    pd.DataFrame(rows).to_csv(tmp_path / "items.csv", index=False)
    assert cli("fairness", "gaps", tmp_path / "items.csv", "--metric", "f1", "--by", "language",
               "--n-resamples", "50", "--report", tmp_path / "fair.json", "--format", "json").exit_code == 0
    fair = json.loads((tmp_path / "fair.json").read_text())
    text = json.dumps(fair)
    assert "sw" in text and any("airness" in t for t in _section_titles(tmp_path / "fair.json"))

    df, _ = simulate_audit_data(n_items=30, n_models=2, n_native=30, random_state=1)
    df.to_csv(tmp_path / "audit.csv", index=False)
    assert cli("audit", tmp_path / "audit.csv", "--n-resamples", "50", "--format", "json",
               "--report", tmp_path / "audit.html").exit_code == 0
    html = (tmp_path / "audit.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "E1" in html and "<script" not in html

    from test_intrinsic_confounds import _synthetic

    _synthetic(n=8).table.to_parquet(tmp_path / "lm.parquet")
    assert cli("intrinsic", "confounds", tmp_path / "lm.parquet", "--format", "json",
               "--report", tmp_path / "lm.json").exit_code == 0
    assert "bpb" in (tmp_path / "lm.json").read_text()


def test_report_path_errors_are_one_line(tmp_path, cli):
    rows = [{"language": lang, "f1": v} for lang in ("en", "de") for v in (0.1, 0.5, 0.9)]
    pd.DataFrame(rows).to_csv(tmp_path / "items.csv", index=False)
    rc, _, err = cli("fairness", "gaps", tmp_path / "items.csv", "--metric", "f1", "--by", "language",
                     "--n-resamples", "20", "--report", tmp_path / "missing" / "r.html")
    assert rc == 2 and "does not exist" in err
