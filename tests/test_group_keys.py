"""Group keys are tuples of values, never joined text: every entry point that groups keeps apart the
groups ``("a|b", "c")`` and ``("a", "b|c")`` (which a ``"|"``-join made one group of 100 rows), and the
values ``1`` and ``"1"`` of one column (which ``astype(str)`` made one group).

The two groups of each probe differ in score by 5 sd, so a merged group shows as one group, a pooled
mean between the two, or a calibrated mean that is not the group's own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xleval import EvalTable
from xleval._base.grouping import group_index
from xleval.calibration import LGN
from xleval.decision import DEFAULT_PROCEDURE, EVALUATION_PROCEDURE
from xleval.diagnostics import check_lgn_validity, compare_bias, diagnose_bias, human_agreement, system_table
from xleval.leaderboard import leaderboard, system_scores
from xleval.stats import Resampling
from xleval.table import as_table

N_SYSTEMS, N_SEGMENTS = 4, 25


def _probe(keys: list[dict]) -> pd.DataFrame:
    """Two groups (their key columns given by ``keys``), 4 systems x 25 segments each; group 2 scores
    about 5 points higher, and the human score follows the metric."""
    rng = np.random.default_rng(7)
    parts = []
    for g, key in enumerate(keys):
        n = N_SYSTEMS * N_SEGMENTS
        system = np.repeat([f"s{i}" for i in range(N_SYSTEMS)], N_SEGMENTS)
        quality = np.repeat(rng.normal(0, 0.3, N_SYSTEMS), N_SEGMENTS)
        metric = 5.0 * g + quality + rng.normal(0, 1, n)
        part = pd.DataFrame({"system": system, "seg_id": np.tile(np.arange(N_SEGMENTS), N_SYSTEMS), "metric": metric,
                             "human": 50 + 10 * quality + rng.normal(0, 1, n)})
        for column, value in key.items():
            part.insert(0, column, pd.Series([value] * n, dtype=object))
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


PIPES = _probe([{"x": "a|b", "y": "c"}, {"x": "a", "y": "b|c"}])  # the probe of issue 21: by=["x", "y"]
TYPES = _probe([{"g": 1}, {"g": "1"}])  # one column, the number 1 and the text "1"
PROBES = {"pipes": (PIPES, ["x", "y"]), "types": (TYPES, ["g"])}


def _truth(frame: pd.DataFrame, by: list[str]) -> np.ndarray:
    """Which of the two groups each row is in, from the probe's own construction (first half, second half)."""
    return (np.arange(len(frame)) >= len(frame) // 2).astype(int)


@pytest.fixture(params=sorted(PROBES))
def probe(request):
    return PROBES[request.param]


def test_the_group_index_keeps_tuples_and_gives_distinct_labels(probe):
    frame, by = probe
    index = group_index(frame[by])
    assert index.n_groups == 2
    assert (index.codes == _truth(frame, by)).all()
    assert len(set(index.labels())) == 2


def test_the_table_noun(probe):
    frame, by = probe
    table = EvalTable.from_frame(frame, score="metric", by=by, human="human", system="system")
    assert table.groups.n_groups == 2
    assert len(set(table.row_labels())) == 2


def test_diagnose_bias_and_compare_bias(probe):
    frame, by = probe
    result = diagnose_bias(frame, "metric", by, n_resamples=50)
    assert len(result.groups) == 2 and result.groups["n"].tolist() == [100, 100]
    assert result.groups["mean"].max() - result.groups["mean"].min() > 4
    comparison = compare_bias(frame.assign(same=frame["metric"]), "metric", "same", by, n_resamples=50)
    assert len(comparison.table) == 2


def test_check_lgn_validity(probe):
    frame, by = probe
    for system in (None, "system"):
        check = check_lgn_validity(frame, by, "human", system=system)
        assert len(check.groups) == 2, system
        assert check.groups["n"].tolist() == ([100, 100] if system is None else [N_SYSTEMS, N_SYSTEMS])


def test_human_agreement_and_system_table(probe):
    frame, by = probe
    table = system_table(frame, ["metric", "human"], by, "system")
    assert len(table) == 2 * N_SYSTEMS and table["group"].nunique() == 2
    result = human_agreement(frame, "metric", "human", by, resampling=Resampling(n_resamples=20))
    assert len(result.scores["metric"].segment_within) == 2
    assert result.n_systems == 2 * N_SYSTEMS


def test_lgn_normalises_each_group_by_itself(probe):
    frame, by = probe
    calibrated = LGN(by=by, score="metric", min_count=10).fit(frame).transform(frame)
    truth = _truth(frame, by)
    for g in (0, 1):  # each group's own z-scores: mean 0; a merged group would give about -2.5 and +2.5
        assert abs(np.mean(calibrated[truth == g])) < 1e-9


@pytest.mark.parametrize("entry", ["system_scores", "leaderboard"])
def test_the_leaderboard_keeps_one_and_text_one_apart(entry):
    frame = TYPES
    if entry == "system_scores":
        table = system_scores(frame, "metric", "g", n_resamples=20).table
    else:
        table = leaderboard(frame, "metric", "g", method="none", resampling=Resampling(n_resamples=20)).rows
    assert len(table) == 2 * N_SYSTEMS and table["group"].nunique() == 2


def test_as_table_accepts_a_table_or_a_frame(probe):
    frame, by = probe
    table = EvalTable.from_frame(frame, score="metric", by=by)
    assert as_table(table) is table
    assert as_table(frame, score="metric", by=by).groups.n_groups == 2
    with_human = as_table(table, human="human")
    assert with_human.human == "human" and table.human is None  # a new table; the first is unchanged
    assert diagnose_bias(table, n_resamples=50).groups["n"].tolist() == [100, 100]


@pytest.mark.parametrize("chunk_size", [7, 1000])
def test_the_streamed_bias_keeps_the_probe_apart_in_every_batch(tmp_path, chunk_size):
    from xleval.scale import bias_chunked

    path = tmp_path / "probe.tsv"
    PIPES.to_csv(path, sep="\t", index=False)
    streamed = bias_chunked(path, "metric", ["x", "y"], chunk_size=chunk_size)
    assert streamed.groups["n"].tolist() == [100, 100]
    whole = diagnose_bias(PIPES, "metric", ["x", "y"], n_resamples=20)
    assert streamed.groups["group"].tolist() == whole.groups["group"].tolist()  # one labelling, streamed or not
    assert np.allclose(streamed.groups["mean"], whole.groups["mean"])


def test_the_anchored_calibrator_and_fit_calibration(probe):
    from xleval.calibration import AnchoredCalibrator
    from xleval.decision import fit_calibration

    frame, by = probe
    truth, human = _truth(frame, by), frame["human"].to_numpy()
    model = AnchoredCalibrator(by=by, score="metric", human="human").fit(frame)
    assert len(model.group_table()) == 2
    out = model.transform(frame)
    for g in (0, 1):  # each group put on its own human level (merged: 5 metric points apart in one map)
        assert abs(np.mean(out[truth == g]) - np.mean(human[truth == g])) < 0.05
    fitted = fit_calibration(frame, "auto", score="metric", by=by, human="human")
    assert len(fitted.model.group_table()) == 2


def test_calibration_summary_selection_decision_and_evaluation(probe):
    from xleval.calibration import calibration_summary, select_for_annotation
    from xleval.decision import choose_method, evaluate_calibration

    frame, by = probe
    assert len(calibration_summary(frame["metric"], frame["metric"], frame[by]).groups) == 2
    chosen = select_for_annotation(frame, by, 5, score="metric")
    assert len(chosen) == 10  # 5 rows from each of the two groups
    choice = choose_method(frame, "metric", by, human="human",
                           procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))
    assert sorted(choice.labels_per_group.values()) == [100, 100]
    evaluation = evaluate_calibration(frame, "metric", "human", by,
                                      procedure=EVALUATION_PROCEDURE.with_(n_repeats=1, n_resamples=20, n_folds=2,
                                          budgets=(5,),random_state=0))
    assert evaluation.to_dict()["n_groups"] == 2


def test_the_report_keeps_one_and_text_one_apart():
    from xleval.report import analyze_mt

    analysis = analyze_mt(TYPES, "metric", by="g", human="human", method="lgn", resampling=Resampling(n_resamples=20))
    assert analysis.board.rows["group"].nunique() == 2
    assert len(analysis.verification.groups) == 2


def test_diagnose_the_front_door(probe):
    from xleval.decision import diagnose

    frame, by = probe
    result = diagnose(frame, "metric", by, human="human", procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))
    assert result.bias.groups["n"].tolist() == [100, 100]
    assert len(result.validity.groups) == 2 and len(result.agreement.scores["metric"].segment_within) == 2
    assert sorted(result.recommendation.labels_per_group.values()) == [100, 100]


@pytest.mark.parametrize("widths", [(3, 5), (40, 1000), (1, 7, 2), (2**31, 2**31 + 5)])
def test_combined_codes_are_the_group_index_of_code_columns(widths):
    """combined_codes numbers the combinations of code columns as group_index does (first appearance), without
    factorizing each column: small tables through the rank table, wide ones by hashing, and past 2**62 by the tuples
    (the last width pair)."""
    from xleval._base.grouping import combined_codes

    rng = np.random.default_rng(len(widths))
    columns = [rng.integers(0, min(w, 50), size=400) * (w // min(w, 50)) for w in widths]
    for c, w in zip(columns, widths, strict=True):
        c[0] = w - 1  # the largest code occurs
    np.testing.assert_array_equal(combined_codes(*columns), group_index(columns).codes)
    assert len(np.unique(combined_codes(*columns))) > 5


def test_the_anchored_calibrator_reads_categorical_groups_and_systems_as_their_names():
    """Groups and systems given as categoricals (the decision's fold fits: codes, not names hashed in each fit)
    fit and calibrate as the same names given as text: the same offsets, slopes and scores."""
    from xleval.calibration import AnchoredCalibrator

    rng = np.random.default_rng(4)
    n = 600
    names = np.array(["en-de", "en-ja", "cs-uk"], dtype=object)[rng.integers(0, 3, n)]
    systems = np.array([f"sys{k}" for k in range(6)], dtype=object)[rng.integers(0, 6, n)]
    x = rng.normal(size=n) + (names == "en-ja")
    human = np.where(rng.random(n) < 0.3, 50 + 10 * x + rng.normal(scale=5, size=n), np.nan)

    def fitted(groups, sys):
        model = AnchoredCalibrator(by="g", score="score", human="human", human_higher_is_better=True)
        model.fit(x, groups=groups, human=human, systems=sys)
        return model, model.transform(x[:50], groups=groups[:50], systems=sys[:50])

    text, text_out = fitted(names, systems)
    cats, cats_out = fitted(pd.Categorical(names, categories=["en-ja", "cs-uk", "en-de"]),
                            pd.Series(pd.Categorical(systems)))
    np.testing.assert_allclose(cats_out, text_out, rtol=1e-12)
    assert cats.groups_.keys() == text.groups_.keys()
    assert cats.slopes_["between"] == pytest.approx(text.slopes_["between"], rel=1e-12)
