"""`evaluate_calibration` (``xleval calibrate evaluate``): the right calibration wins where the truth
is known, held-out systems never see their own labels, results are seeded, bad inputs say so."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.decision import EVALUATION_PROCEDURE, evaluate_calibration
from xleval.exceptions import InputError

FAST = dict(procedure=EVALUATION_PROCEDURE.with_(n_repeats=2, n_resamples=200, budgets=(10, 40)))


def _world(human_offsets, metric_bias, seed=0, n_sys=6, n_seg=60, noise=6.0):
    """Per group: true system quality q ~ N(0, 1); metric = 50 + bias + 5 q + 5 u; human = 70 + offset +
    3 q + noise * e. Offsets are real quality differences; biases are the metric's own."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, (off, bias) in enumerate(zip(human_offsets, metric_bias, strict=False)):
        for s in range(n_sys):
            q = rng.normal()
            u = rng.normal(size=n_seg)
            rows.append(pd.DataFrame({
                "lp": f"en-x{g}", "system": f"sys{s}", "seg_id": np.arange(n_seg),
                "score": 50 + bias + 5 * q + 5 * u, "human": 70 + off + 3 * q + noise * rng.normal(size=n_seg)}))
    return pd.concat(rows, ignore_index=True)


def test_anchored_wins_where_groups_really_differ():
    df = _world(human_offsets=(-8, 0, 8), metric_bias=(6, 0, -6))
    ev = evaluate_calibration(df, "score", "human", "lp", **FAST)
    raw, lgn, anchored = (ev.variant(n).accuracy.estimate for n in ("raw", "lgn", "anchored"))
    assert anchored > 0.9 > lgn and anchored > raw
    assert ev.variant("anchored").minus_raw.ci_low > 0 and ev.variant("anchored").minus_lgn.ci_low > 0
    assert ev.recommended == "anchored" and "Trust anchored calibration" in ev.verdict
    curve = ev.curve()
    assert curve[["budget", "selection"]].values.tolist() == [[10, "spread"], [10, "random"], [40, "spread"],
                                                              [40, "random"]]
    assert ev.labels_needed() in (10, 40)
    json.dumps(ev.to_dict())  # plain JSON


def test_lgn_wins_where_only_the_metric_differs():
    df = _world(human_offsets=(0, 0, 0), metric_bias=(25, 0, -25), n_sys=12)
    ev = evaluate_calibration(df, "score", "human", "lp", **FAST)
    assert ev.variant("lgn").accuracy.estimate > ev.variant("raw").accuracy.estimate + 0.15
    assert ev.recommended in ("lgn", "anchored")  # anchored with every label learns the same offsets
    assert ev.variant("lgn").minus_raw.ci_low > 0


def test_held_out_systems_never_see_their_own_labels():
    df = _world(human_offsets=(-8, 0, 8), metric_bias=(6, 0, -6))
    base = evaluate_calibration(df, "score", "human", "lp", human_higher_is_better=True, **FAST)
    shifted = df.copy()
    target = (shifted.lp == "en-x1") & (shifted.system == "sys2")
    shifted.loc[target, "human"] += 100.0
    moved = evaluate_calibration(shifted, "score", "human", "lp", human_higher_is_better=True, **FAST)
    a, b = (e.systems.set_index(["group", "system"]) for e in (base, moved))
    # its own human scores changed its truth, never its out-of-fold calibrated score
    assert b.loc[("en-x1", "sys2"), "human"] == pytest.approx(a.loc[("en-x1", "sys2"), "human"] + 100.0)
    assert b.loc[("en-x1", "sys2"), "anchored"] == a.loc[("en-x1", "sys2"), "anchored"]
    assert b.loc[("en-x1", "sys2"), "lgn"] == a.loc[("en-x1", "sys2"), "lgn"]
    # while the other systems' calibrations used it
    assert not np.allclose(b.drop(("en-x1", "sys2"))["anchored"], a.drop(("en-x1", "sys2"))["anchored"])


def test_seeded_and_negative_human_scale():
    df = _world(human_offsets=(-8, 0, 8), metric_bias=(6, 0, -6))
    one = evaluate_calibration(df, "score", "human", "lp", procedure=FAST["procedure"].with_(random_state=5)).to_dict()
    two = evaluate_calibration(df, "score", "human", "lp", procedure=FAST["procedure"].with_(random_state=5)).to_dict()
    assert one == two
    mqm_like = df.assign(human=-df["human"])  # higher = worse
    ev = evaluate_calibration(mqm_like, "score", "human", "lp", procedure=FAST["procedure"].with_(random_state=5))
    assert ev.human_direction == -1 and ev.direction_source == "data"
    assert ev.variant("raw").accuracy.estimate == pytest.approx(one["variants"][0]["accuracy"]["estimate"])
    assert ev.variant("anchored").accuracy.estimate > 0.9


def test_a_group_without_labels_is_left_out_of_the_evaluation():
    df = _world(human_offsets=(-8, 0, 8), metric_bias=(6, 0, -6))
    df.loc[df.lp == "en-x2", "human"] = np.nan
    ev = evaluate_calibration(df, "score", "human", "lp", **FAST)
    assert set(ev.systems["group"]) == {"en-x0", "en-x1"} and ev.n_groups == 3


def test_bad_inputs():
    df = _world(human_offsets=(0, 0, 0), metric_bias=(0, 0, 0))
    with pytest.raises(InputError, match=r"no column .model. \(the system column"):
        evaluate_calibration(df, "score", "human", "lp", system="model")
    with pytest.raises(InputError, match="budget"):
        evaluate_calibration(df, "score", "human", "lp", procedure=EVALUATION_PROCEDURE.with_(budgets=(0,)))
    with pytest.raises(InputError, match="selections"):
        evaluate_calibration(df, "score", "human", "lp",
                             procedure=EVALUATION_PROCEDURE.with_(selections=("best",)))
    with pytest.raises(InputError, match="folds"):
        evaluate_calibration(df, "score", "human", "lp", procedure=EVALUATION_PROCEDURE.with_(n_folds=20))
    with pytest.raises(InputError, match="no values"):
        evaluate_calibration(df.assign(human=np.nan), "score", "human", "lp")
    with pytest.raises(InputError, match="is not a number"):
        evaluate_calibration(df.assign(human="good"), "score", "human", "lp")
    with pytest.raises(InputError, match="fewer than two groups"):
        evaluate_calibration(df[df.lp == "en-x0"], "score", "human", "lp")
    with pytest.raises(InputError, match="constant"):
        evaluate_calibration(df.assign(human=5.0), "score", "human", "lp", **FAST)


def test_a_given_direction_the_labels_contradict_is_refused_but_one_label_per_group_is_evaluated():
    df = _world(human_offsets=(-8, 0, 8), metric_bias=(6, 0, -6))
    mqm_like = df.assign(human=-df["human"])  # higher = worse, said to be better
    with pytest.raises(InputError, match="contradict the given direction"):
        evaluate_calibration(mqm_like, "score", "human", "lp", human_higher_is_better=True, **FAST)
    ev = evaluate_calibration(mqm_like, "score", "human", "lp", human_higher_is_better=False, **FAST)
    assert ev.variant("anchored").accuracy.estimate > 0.9
    # one label per group gives no slope: `fit` refuses it, the evaluation's draws report it as a flat map
    one = evaluate_calibration(df, "score", "human", "lp",
                               procedure=EVALUATION_PROCEDURE.with_(n_repeats=1, n_resamples=100, budgets=(1,),
                                   selections=("random",)))
    assert any("no slope" in note for note in one.notes)
    with pytest.raises(InputError, match="one system"):
        evaluate_calibration(df[df.system == "sys0"], "score", "human", "lp")


def test_notes_name_groups_as_the_table_does():
    """The folds' fits warned with internal group codes ("0, 1, 2"); a user cannot tell which group that is."""
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("en-de", "en-xx-rare", "en-fr"):
        for s in range(6):
            quality = rng.normal()
            for i in range(40):
                labelled = lp != "en-xx-rare" or i < 1  # one label per system in the rare pair
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": i, "score": quality + rng.normal(),
                             "human": quality + rng.normal() if labelled else np.nan})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate_calibration(pd.DataFrame(rows), "score", "human", "lp",
                                  procedure=EVALUATION_PROCEDURE.with_(budgets=(5,), n_repeats=2, n_resamples=50))
    small = [n for n in ev.notes if n.startswith("SmallGroupWarning")]
    assert small and all("en-xx-rare" in n for n in small)
    assert not any(re.search(r": (\d+, )*\d+ \(", n) for n in small)  # no list of bare codes
