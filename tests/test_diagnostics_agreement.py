"""Agreement with humans: hand-checked accuracy, bad input, and the rise after calibration
predicted by the generative model of xleval.synthetic."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN
from xleval.decision import DEFAULT_PROCEDURE, diagnose
from xleval.diagnostics import human_agreement
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import write_table
from xleval.stats import Resampling, pairwise_accuracy
from xleval.synthetic import simulate_mt_evaluation


def _systems():
    # two groups; within each group the metric orders systems as humans do, across groups it is offset
    return pd.DataFrame({"lp": ["a", "a", "a", "b", "b", "b"], "system": list("pqrstu"),
                         "metric": [10.0, 20, 30, 1, 2, 3], "human": [0.1, 0.2, 0.3, 0.15, 0.25, 0.35]})


def test_hand_checked_cross_group_accuracy():
    res = human_agreement(_systems(), "metric", "human", "lp", resampling=Resampling(n_resamples=200))
    acc = res.scores["metric"].cross_group_accuracy
    # 9 cross pairs: the metric puts every a-system above every b-system; humans agree only for
    # (a.0.2 > b.0.15), (a.0.3 > b.0.15), (a.0.3 > b.0.25): 3 of 9
    assert acc.n_pairs == 9 and acc.estimate == pytest.approx(3 / 9)
    assert acc.ci_low <= acc.estimate <= acc.ci_high
    assert res.scores["metric"].system_within["a"].estimate == pytest.approx(1.0)
    assert res.scores["metric"].segment_pooled == {}  # one row per system: no segment level


def test_partly_missing_human_and_small_groups():
    df = pd.concat([_systems(), pd.DataFrame({"lp": ["c"], "system": ["v"], "metric": [5.0], "human": [0.2]}),
                    pd.DataFrame({"lp": ["a"], "system": ["p"], "metric": [11.0], "human": [np.nan]})],
                   ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataQualityWarning)  # rows without a human score: sparse labels, not bad data
        res = human_agreement(df, "metric", "human", "lp", resampling=Resampling(n_resamples=50))
    assert any("human scores on 7 of 8 rows" in n for n in res.notes)
    assert res.excluded_groups == ("c",) and any("fewer than 2 systems" in n for n in res.notes)
    assert res.n_systems == 6
    with pytest.raises(InputError, match="no values"):
        human_agreement(df.assign(human=np.nan), "metric", "human", "lp")


def _predicted_accuracy(values, noise_sd, truth, groups):
    """acc over cross-group cells of the noise-free cell values, and a tolerance from the model:
    noise flips pair (i, j) with probability Phi(-margin / sd_ij); the realised accuracy moves by
    at most (number of flips) / pairs, bounded by its mean + 5 sd (pairs sharing a cell are
    correlated, hence 5 rather than 3)."""
    from scipy.stats import norm

    pred = pairwise_accuracy(values, truth, groups=groups, pairs="cross", tie_calibration=False).estimate
    i, j = np.triu_indices(len(values), k=1)
    cross = groups[i] != groups[j]
    margin = np.abs(values[i] - values[j])[cross]
    p_flip = norm.cdf(-margin / np.sqrt(noise_sd[i] ** 2 + noise_sd[j] ** 2)[cross])
    flips = p_flip.sum() + 5 * np.sqrt((p_flip * (1 - p_flip)).sum())
    return pred, flips / cross.sum()


def test_cross_group_accuracy_against_truth_rises_after_calibration():
    sim = simulate_mt_evaluation(seed=0)
    cal = sim.data[sim.data.split == "calibration"]
    ev = sim.data[sim.data.split == "evaluation"].reset_index(drop=True)
    ev["metric_lgn"] = LGN(score="metric").fit(cal).transform(ev)
    cells = ev.groupby(["system", "tgt_lang"])[["metric", "metric_lgn"]].mean().reset_index().merge(sim.truth)
    q, groups = cells["true_quality"].to_numpy(), cells["tgt_lang"].to_numpy()
    scale = cells["tgt_lang"].map(sim.scales).to_numpy()
    offset = cells["tgt_lang"].map(sim.offsets).to_numpy()
    qbar = cells.groupby("tgt_lang")["true_quality"].transform("mean").to_numpy()
    qvar = cells.groupby("tgt_lang")["true_quality"].transform(lambda s: s.var(ddof=0)).to_numpy()
    sigma = np.sqrt(scale**2 * (qvar + 1) + 16.0)  # the calibration split's expected sd (metric_noise 4)
    cell_sd = np.sqrt(scale**2 + 16.0) / np.sqrt(200)
    raw_pred, raw_tol = _predicted_accuracy(50 + offset + scale * q, cell_sd, q, groups)
    # calibrated cell: (cell - group mean) / group sd; the group mean is itself estimated from 1200 rows
    cal_pred, cal_tol = _predicted_accuracy(scale * (q - qbar) / sigma, np.sqrt(cell_sd**2 + sigma**2 / 1200) / sigma,
                                            q, groups)
    raw = pairwise_accuracy(cells["metric"], q, groups=groups, pairs="cross", tie_calibration=False).estimate
    cal = pairwise_accuracy(cells["metric_lgn"], q, groups=groups, pairs="cross", tie_calibration=False).estimate
    assert abs(raw - raw_pred) <= raw_tol and abs(cal - cal_pred) <= cal_tol
    assert cal_pred - cal_tol > raw_pred + raw_tol  # the model guarantees the rise for this draw
    assert cal > raw
    # the same rise against human scores, with a paired CI that excludes 0
    d = diagnose(ev, "metric", "tgt_lang", human="human", calibrated="metric_lgn",
                 procedure=DEFAULT_PROCEDURE.with_(n_resamples=300))
    comp = d.agreement.comparisons[0]
    assert comp.difference.ci_low > 0 and comp.permutation.p_value < 0.05
    assert d.validity.status == "holds"  # language_effect is 0: matched quality by construction
    json.dumps(d.to_dict())


def test_cli_diagnose_json_and_errors(tmp_path, cli):
    sim = simulate_mt_evaluation(seed=1, n_segments=30, languages=("de", "fr", "zh"))
    path = tmp_path / "ev.parquet"
    write_table(sim.data[sim.data.split == "evaluation"], path)
    rc, out, err = cli("diagnose", path, "--score", "metric", "--human", "human", "--n-resamples", "50",
                       "--format", "json")
    assert rc == 0, err
    payload = json.loads(out)
    assert payload["bias"]["calibration_advised"] in (True, False)
    assert payload["agreement"]["scores"]["metric"]["cross_group_accuracy"]["n_pairs"] == 3 * 6 * 6
    assert payload["validity"]["status"] in ("holds", "inconclusive", "violated")
    rc, _, err = cli("diagnose", path, "--score", "nope")
    assert rc == 2 and "nope" in err
