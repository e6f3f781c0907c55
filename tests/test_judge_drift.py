"""Drift probes: a calibrator fitted on a model's scores refuses new scores of the same signature that moved.

Two tiny BERTScore encoders with different weights saved in folders of the same name give one signature
(BERTScore's names the folder) and different scores: the case no signature check can catch."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import importorskip_lazy
from xleval.calibration._drift import check_drift, is_model_signature, make_probe
from xleval.exceptions import DataQualityWarning, InputError, SignatureMismatchError
from xleval.io import read_table_metadata


def _table(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("en-de", "en-cs"):
        for system in ("A", "B"):
            for seg in range(n):
                rows.append({"lp": lp, "system": system, "seg_id": seg + 1, "score": float(rng.normal()),
                             "hypothesis": f"The cat {seg} sat {system}.", "reference": f"The cat {seg} sat."})
    return pd.DataFrame(rows)


def test_probe_finds_moved_rows_by_hand():
    df = _table()
    probe = make_probe(df, "score", by="lp", per_group=3, random_state=1, signature="model:x|xleval:1")
    assert len(probe["rows"]) == 6 and sorted({r["group"] for r in probe["rows"]}) == ["en-cs", "en-de"]
    same = check_drift(probe, df)
    assert (same.matched, same.moved, same.max_change) == (6, 0, 0.0)
    moved = df.copy()
    moved["score"] = moved["score"] + 1e-9  # far below 1% of the spread: not drift
    assert check_drift(probe, moved).moved == 0
    probe_scores = {r["score"] for r in probe["rows"]}
    hit = moved.index[moved["score"].sub(1e-9).isin(probe_scores)][0]
    moved.loc[hit, "score"] += 0.5
    with pytest.raises(SignatureMismatchError, match=r"1 of 6 probe rows differ by more than"):
        check_drift(probe, moved)
    with pytest.warns(DataQualityWarning, match="scores moved since the calibrator was fitted"):
        assert check_drift(probe, moved, on_drift="warn").moved == 1
    with pytest.warns(DataQualityWarning, match="none of the calibrator's 6 drift-probe rows"):
        check_drift(probe, moved.assign(seg_id=moved["seg_id"] + 100))
    with pytest.raises(InputError, match="on_drift must be one of"):
        check_drift(probe, df, on_drift="loud")


def test_model_signatures():
    assert is_model_signature("model:enc|layer:2|xleval:0.1")
    assert not is_model_signature("nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0|xleval:0.1")
    assert not is_model_signature(None)


@pytest.mark.neural
def test_calibrator_refuses_scores_of_a_changed_model_under_one_signature(tmp_path, cli):
    importorskip_lazy("bert_score", reason="needs bert-score")
    from _tiny_models import build_tiny_encoder

    first = build_tiny_encoder(tmp_path / "a" / "enc", kind="bert", seed=0)
    second = build_tiny_encoder(tmp_path / "b" / "enc", kind="bert", seed=1)
    table = tmp_path / "t.tsv"
    _table().drop(columns="score").to_csv(table, sep="\t", index=False)
    s1, s2 = tmp_path / "s1.tsv", tmp_path / "s2.tsv"
    for model, out in ((first, s1), (second, s2)):
        rc, _, err = cli("score", str(table), "-m", f"bertscore:{model}", "-o", str(out))
        assert rc == 0, err
    sig1 = read_table_metadata(s1)["signatures"]["bertscore"]
    # the content identity tells the two models apart: the other model's scores are refused by signature
    assert sig1 != read_table_metadata(s2)["signatures"]["bertscore"]
    # drift under one signature (the same model's scores moved: another torch, another precision, a GPU)
    from xleval.io import read_table, write_table

    moved = read_table(s1)
    moved["bertscore"] = moved["bertscore"].astype(float) + 0.05
    s2 = tmp_path / "moved.tsv"
    write_table(moved, s2, metadata={"signatures": {"bertscore": sig1}})
    cal = tmp_path / "cal.json"
    rc, _, err = cli("calibrate", "fit", str(s1), "--score", "bertscore", "--method", "lgn", "--min-count", "1",
                     "-o", str(cal))
    assert rc == 0, err
    probe = json.loads(cal.read_text())["probe"]
    assert len(probe["rows"]) == 10 and probe["signature"] == sig1  # 5 rows in each of the 2 language pairs
    rc, _, err = cli("calibrate", "apply", str(cal), str(s1), "-o", str(tmp_path / "ok.tsv"))
    assert rc == 0, err  # the same scores: no drift
    rc, _, err = cli("calibrate", "apply", str(cal), str(s2), "-o", str(tmp_path / "bad.tsv"))
    assert rc == 2 and err.count("\n") == 1 and "bertscore scores moved since the calibrator was fitted" in err
    assert not (tmp_path / "bad.tsv").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc, out, err = cli("calibrate", "apply", str(cal), str(s2), "-o", str(tmp_path / "warned.tsv"),
                           "--on-drift", "warn")
    assert rc == 0 and "moved since the calibrator was fitted" in out + err
    # a metric without a model keeps no probe
    rc, _, err = cli("score", str(table), "-m", "chrf", "-o", str(tmp_path / "c.tsv"))
    assert rc == 0, err
    rc, _, err = cli("calibrate", "fit", str(tmp_path / "c.tsv"), "--score", "chrf", "--method", "lgn",
                     "--min-count", "1", "-o", str(tmp_path / "c.json"))
    assert rc == 0, err
    assert "probe" not in json.loads((tmp_path / "c.json").read_text())
