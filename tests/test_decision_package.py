"""The decision package (issue 32): one decision over a table that flows.

* a report run measures the raw score's bias once and each validity check once (counted);
* on a to-English table every door groups by ``lp`` (the one grouping default, a value, not a sentence);
* a grouping column whose name holds ``+`` survives the comparison and the decision (groupings are tuples);
* ``ter`` without a signature is lower-is-better in every consumer (the one direction rule);
* the comparison never calls the decision.
"""
from __future__ import annotations

import inspect
import json
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval import table as table_module
from xleval.calibration import LGN, AnchoredCalibrator
from xleval.decision import (
    DEFAULT_PROCEDURE,
    EVALUATION_PROCEDURE,
    Procedure,
    compare_calibrations,
    decide_calibration,
    diagnose,
    evaluate_calibration,
    fit_calibration,
    gather_evidence,
)
from xleval.exceptions import InputError
from xleval.stats import Resampling
from xleval.table import DEFAULT_BY, EvalTable


def _to_english(seed: int = 0, k: int = 30) -> pd.DataFrame:
    """Three to-English pairs (every row's tgt_lang is en) whose metric levels differ by pair."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, shift in (("de-en", -10.0), ("fr-en", 0.0), ("ru-en", 10.0)):
        for s in range(6):
            q = rng.normal(size=k)
            rows.append(pd.DataFrame({"lp": lp, "src_lang": lp[:2], "tgt_lang": "en", "system": f"s{s}",
                                      "seg_id": np.arange(k), "metric": 50 + shift + s + 5 * q,
                                      "human": 70 + s + 3 * q + rng.normal(size=k)}))
    return pd.concat(rows, ignore_index=True)


# ------------------------------------------------------------------ the evidence is measured once
def test_a_report_run_measures_the_bias_once_and_each_validity_check_once(monkeypatch):
    import xleval.diagnostics as diagnostics_package
    from xleval.decision import _evidence
    from xleval.diagnostics import _bias, _validity
    from xleval.report import analyze_mt

    made: dict[str, list] = {"bias": [], "validity": []}
    diagnose_bias, check_lgn_validity = _bias.diagnose_bias, _validity.check_lgn_validity

    def count_bias(data, score=None, *args, **kwargs):  # every module that calls it by name
        result = diagnose_bias(data, score, *args, **kwargs)
        made["bias"].append(result.score)
        return result

    def count_validity(*args, **kwargs):
        made["validity"].append("system" if kwargs.get("system") else "segment")
        return check_lgn_validity(*args, **kwargs)

    for module in (_bias, diagnostics_package, _evidence):
        monkeypatch.setattr(module, "diagnose_bias", count_bias)
    for module in (_validity, diagnostics_package, _evidence):
        monkeypatch.setattr(module, "check_lgn_validity", count_validity)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analyze_mt(_to_english(), "metric", human="human", resampling=Resampling(n_resamples=50))
    # the raw score once; the calibrated column once (the before/after comparison)
    assert made["bias"].count("metric") == 1, made["bias"]
    assert made["bias"].count("metric_calibrated") == 1
    # one segment-level and one system-level check: not three of each as before
    assert sorted(made["validity"]) == ["segment", "system"], made["validity"]


def test_diagnose_reads_the_evidence_of_the_decision_it_is_given():
    frame = _to_english()
    table = EvalTable.from_frame(frame, score="metric", human="human", system="system")
    decision = decide_calibration(table, procedure=DEFAULT_PROCEDURE.with_(n_repeats=1, n_resamples=50))
    result = diagnose(table, decision=decision)
    assert result.bias is decision.evidence.bias or result.bias.largest_smd == decision.evidence.bias.largest_smd
    assert result.validity is decision.evidence.validity_segment
    assert result.validity_system is decision.evidence.validity_system


# ------------------------------------------------------------------ one grouping default
def test_the_default_grouping_is_a_value():
    assert DEFAULT_BY is table_module.DefaultGrouping()  # one value, compared by identity
    assert DEFAULT_BY.resolve(["lp", "tgt_lang"]) == "lp" and DEFAULT_BY.resolve(["tgt_lang"]) == "tgt_lang"
    assert DEFAULT_BY.resolve(["src_lang", "tgt_lang"]) == "lp"  # the pair, derived from its two codes
    assert str(DEFAULT_BY) == "lp (given, or from src_lang and tgt_lang), else tgt_lang"  # as --help spells it
    assert pickle.loads(pickle.dumps(DEFAULT_BY)) is DEFAULT_BY
    # a sentence equal to its spelling is not the default
    spelled = str(DEFAULT_BY)
    assert table_module._given_default(spelled, ["lp"]) == spelled


def test_every_door_groups_a_to_english_table_by_lp(cli, tmp_path):
    frame = _to_english()
    assert frame["tgt_lang"].nunique() == 1 and frame["lp"].nunique() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert LGN(score="metric").fit(frame).by_ == ["lp"]
        assert AnchoredCalibrator(score="metric").fit(frame).by_ == ["lp"]
        assert EvalTable.from_frame(frame, score="metric").by == ("lp",)
        fitted = fit_calibration(frame, "lgn", score="metric")
        assert fitted.model.by_ == ["lp"] and len(fitted.model.group_table()) == 3
        auto = fit_calibration(frame, score="metric", human="human")
        assert auto.model.by_ == ["lp"] and set(auto.decision.labels_per_group) == {"de-en", "fr-en", "ru-en"}
        result = diagnose(frame, "metric", human="human", procedure=DEFAULT_PROCEDURE.with_(n_resamples=50))
        assert result.by == "lp" and len(result.bias.groups) == 3
    # a saved calibrator records the grouping it fitted, not the default
    assert LGN(score="metric").fit(frame).to_dict()["params"]["by"] == "lp"
    path = tmp_path / "t.tsv"
    frame.to_csv(path, sep="\t", index=False)
    rc, _, err = cli("calibrate", "fit", path, "--score", "metric", "--method", "lgn", "-o", tmp_path / "m.json",
                       "--format", "json")
    assert rc == 0, err
    assert json.loads((tmp_path / "m.json").read_text())["params"]["by"] == "lp"


def test_a_table_with_its_own_grouping_is_fitted_by_it():
    frame = _to_english()
    table = EvalTable.from_frame(frame, score="metric", by="tgt_lang")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert LGN(score="metric").fit(table).by_ == ["tgt_lang"]
    with pytest.raises(InputError, match="groups by"):
        LGN(score="metric", by="lp").fit(table)


# ------------------------------------------------------------------ groupings stay tuples
def test_a_grouping_column_named_with_a_plus_survives_the_comparison_and_the_decision():
    frame = _to_english().rename(columns={"lp": "lp+domain"}).drop(columns=["tgt_lang", "src_lang"])
    procedure = EVALUATION_PROCEDURE.with_(n_repeats=1, n_folds=3, budgets=(5,), n_resamples=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation = evaluate_calibration(frame, "metric", "human", "lp+domain", procedure=procedure)
    assert evaluation.by == ("lp+domain",)
    assert set(evaluation.decision.labels_per_group) == {"de-en", "fr-en", "ru-en"}
    assert evaluation.recommended in ("raw", "lgn", "anchored")
    two = frame.assign(domain="news")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = evaluate_calibration(two, "metric", "human", ["lp+domain", "domain"], procedure=procedure)
    assert both.by == ("lp+domain", "domain") and both.decision.n_groups == 3


# ------------------------------------------------------------------ one direction
def test_ter_is_lower_is_better_in_every_consumer():
    from xleval.decision import score_direction
    from xleval.metrics import higher_is_better

    frame = _to_english().rename(columns={"metric": "ter"})
    assert higher_is_better("ter") is False and higher_is_better("chrf") is True
    assert score_direction(EvalTable.from_frame(frame, score="ter"), "ter", None) is False
    # the signature's direction wins over the name: a MetricX column renamed "ter" is still lower-is-better,
    # and a column called "bleu" whose signature says dir:lower is lower-is-better
    assert higher_is_better("bleu", "metricx|dir:lower") is False
    assert higher_is_better("ter", "x|dir:higher") is True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = fit_calibration(frame, "anchored", score="ter", human="human")
    assert fitted.model.score_higher_is_better is False


# ------------------------------------------------------------------ the comparison never decides
def test_the_comparison_returns_evidence_only():
    procedure = EVALUATION_PROCEDURE.with_(n_repeats=1, n_folds=3, budgets=(5,), n_resamples=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation = compare_calibrations(_to_english(), "metric", "human", procedure=procedure)
    assert evaluation.decision is None and evaluation.recommended == "" and evaluation.verdict == ""
    source = inspect.getsource(inspect.getmodule(compare_calibrations))
    assert "_decide" not in source and "decide_" not in source


def test_the_evidence_is_one_object_the_decision_carries():
    table = EvalTable.from_frame(_to_english(), score="metric", human="human", system="system")
    evidence = gather_evidence(table, procedure=DEFAULT_PROCEDURE.with_(n_resamples=50))
    assert evidence.by == ("lp",) and evidence.validity_system is not None
    decision = decide_calibration(table, evidence=evidence, procedure=DEFAULT_PROCEDURE.with_(n_repeats=1))
    assert decision.evidence is evidence and decision.bias is evidence.bias
    assert decision.reasons[0].startswith("Scores differ between groups")


def test_the_procedure_checks_itself():
    with pytest.raises(InputError, match="n_folds must be an integer >= 2"):
        Procedure(n_folds=1)
    with pytest.raises(InputError, match="level must be between 0 and 1"):
        Procedure(level=95)
    assert Procedure(budgets=[25, 50]).budgets == (25, 50)
    assert DEFAULT_PROCEDURE.with_(random_state=3).random_state == 3 and DEFAULT_PROCEDURE.random_state == 0


# ------------------------------------------------------------------ never raw across groups whose levels differ
def _levels_world(seed: int = 0, k: int = 40, labels: int = 1) -> pd.DataFrame:
    """Three pairs whose metric levels differ exactly as their human levels do (the raw scores are right
    across pairs), with one noisy label per system: out of fold the raw scores lead in some draws."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, level in (("en-de", -12.0), ("en-ja", 0.0), ("en-zh", 12.0)):
        for s in range(8):
            q = rng.normal(size=k)
            skill = rng.normal(0, 2)
            human = 70 + level + skill + 3 * q + rng.normal(0, 15, size=k)
            metric = 50 + level + skill + 3 * q + rng.normal(0, 1, size=k)
            keep = np.zeros(k, bool)
            keep[rng.choice(k, labels, replace=False)] = True
            rows.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(k), "metric": metric,
                                      "human": np.where(keep, human, np.nan)}))
    return pd.concat(rows, ignore_index=True)


def test_the_raw_scores_never_rank_groups_whose_levels_differ():
    procedure = DEFAULT_PROCEDURE.with_(n_repeats=2, n_resamples=200)
    seen = set()
    for seed in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # one label per system cannot settle the scale's direction: the scale is named (E122 otherwise)
            decision = decide_calibration(_levels_world(seed), "metric", "lp", human="human", procedure=procedure,
                                          human_scale="da")
        assert decision.bias.calibration_advised  # the levels differ by far more than 0.5 sd
        assert decision.method != "none" and decision.calibrator == decision.method
        seen.add(decision.basis)
        if decision.basis == "levels":  # the raw scores led, and the decision says why it did not follow them
            assert decision.accuracy["none"] >= max(decision.accuracy["lgn"], decision.accuracy["anchored"]) - 0.02
            assert "cannot rank across groups" in decision.reason and "levels differ" in decision.steps[-1].finding
            result = diagnose(_levels_world(seed), "metric", "lp", human="human", decision=decision)
            assert "score levels differ" in result.advice and "not needed" not in result.advice
    assert "levels" in seen  # the world makes the raw scores lead in at least one draw


def test_the_report_summary_states_the_one_decision():
    from xleval.report import analyze_mt, build_mt_report

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(_to_english(), "metric", human="human", resampling=Resampling(n_resamples=50))
    decision = analysis.recommendation
    summary = build_mt_report(analysis).summary
    assert summary["recommendation"] == decision.method
    cv = summary["cross_validated_accuracy"]
    assert cv["best_supported"] == decision.evaluated_method != ""
    assert cv["verdict"] == decision.paragraph and cv["verdict"].startswith("Out of fold")
    assert summary["reasons"] == list(decision.reasons)
