"""One seed resolver: every public procedure that takes a ``random_state`` (or ``seed``) turns it into a
Generator and a recorded seed the same way, and refuses a bool (``True`` is not seed 1) with one message.

The procedures are found by introspecting the public ``__all__`` of the analysis packages, so a new
function with a ``random_state`` is either called here or listed as skipped, with the reason."""
from __future__ import annotations

import importlib
import inspect
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval._base.seeding import child_seeds, make_rng, resolve_seed
from xleval.audit import AUDIT_RESAMPLING
from xleval.calibration import LabelDraw
from xleval.decision import DEFAULT_PROCEDURE, EVALUATION_PROCEDURE, RECOMMEND_PROCEDURE
from xleval.exceptions import InputError
from xleval.stats import Resampling

PACKAGES = ("stats", "diagnostics", "fairness", "audit", "intrinsic", "calibration", "leaderboard")
ONE_MESSAGE = "random_state must be a non-negative integer, None or a numpy Generator; got True"

# result records hold a seed that was already resolved (they are not procedures); the other skips are
# procedures whose seed argument is the record of a seed resolved by their caller
SKIPPED = {
    "bootstrap_pairwise_accuracy": "takes the seed its caller resolved (with the resample counts it drew)",
}


def _public_with_seed() -> dict[str, object]:
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(f"xleval.{package}")
        for name in module.__all__:
            obj = getattr(module, name)
            members = [(name, obj)] if not inspect.isclass(obj) else [
                (f"{name}.{m}", f) for m, f in vars(obj).items() if callable(f) and not m.startswith("_")]
            for qual, func in members:
                try:
                    params = inspect.signature(func).parameters
                except (TypeError, ValueError):
                    continue
                if {"random_state", "seed"} & set(params):
                    found[qual] = func
    return found


# ----------------------------------------------------------------------------- valid other arguments
def _mt_table() -> pd.DataFrame:
    from xleval.synthetic import simulate_mt_evaluation

    data = simulate_mt_evaluation(seed=0, n_segments=8, languages=("de", "ja", "ru")).data
    return data[data["split"] == "evaluation"].assign(doc_id=lambda d: d["seg_id"] % 4)


def _lgn_interval(rs):
    from xleval.calibration import LGN

    t = _mt_table()
    # zscore intervals draw nothing (delta method): the robust ones bootstrap the stored sample
    model = LGN(by="tgt_lang", method="robust", min_count=2).fit(t["metric"].to_numpy(),
                                                                groups=t["tgt_lang"].to_numpy())
    return model.interval(t["metric"].to_numpy()[:5], groups=t["tgt_lang"].to_numpy()[:5], random_state=rs)


def _lm_scores():
    from xleval.intrinsic import LMScores

    rows = [{"lang": lang, "model": "m", "item": i, "nll": 10.0 + i + k, "tokens": 5 + i, "chars": 20 + i,
             "bytes": 20 + i} for k, lang in enumerate(("en", "de")) for i in range(6)]
    return LMScores.from_frame(pd.DataFrame(rows))


def _ratings() -> pd.DataFrame:
    return pd.DataFrame([{"item_id": i, "rater": r, "rating": 1 + (i + r) % 5} for i in range(8) for r in range(2)])


def _fairness_table() -> pd.DataFrame:
    return pd.DataFrame({"lang": np.repeat(["en", "de", "sw"], 6), "acc": np.tile([1, 0, 1, 1, 0, 1], 3)})


_X = np.arange(12, dtype=float)
_Y = _X[::-1] ** 0.5 + np.tile([0.0, 0.3], 6)
_G = np.repeat([0, 1, 2], 4)
_SUMS = np.column_stack([_X, np.ones(12)])

CALLS = {
    "bootstrap": lambda rs: __import__("xleval.stats").stats.bootstrap(_X, random_state=rs),
    "bootstrap_sums": lambda rs: __import__("xleval.stats").stats.bootstrap_sums(
        _SUMS, lambda s: s[..., 0] / s[..., 1], random_state=rs),
    "paired_bootstrap": lambda rs: __import__("xleval.stats").stats.paired_bootstrap(_X, _Y, random_state=rs),
    "weighted_bootstrap_counts": lambda rs: __import__("xleval.stats").stats.weighted_bootstrap_counts(
        [1.0, 2.0], random_state=rs),
    "bootstrap_sums_joint": lambda rs: __import__("xleval.stats").stats.bootstrap_sums_joint(
        _SUMS[:, None, :], lambda s: s[:, 0] / s[:, 1], random_state=rs),
    "permutation_test_paired": lambda rs: __import__("xleval.stats").stats.permutation_test_paired(
        np.r_[_X, _X], np.r_[_Y, _Y], random_state=rs),
    "permutation_test_2samp": lambda rs: __import__("xleval.stats").stats.permutation_test_2samp(
        np.r_[_X, _X], np.r_[_Y, _Y], random_state=rs),
    "correlation": lambda rs: __import__("xleval.stats").stats.correlation(_X, _Y, "kendall_c", random_state=rs),
    "compare_pairwise_accuracy": lambda rs: __import__("xleval.stats").stats.compare_pairwise_accuracy(
        _X, _Y, _X[::-1], resampling=Resampling(random_state=rs)),
    "compare_correlations": lambda rs: __import__("xleval.stats").stats.compare_correlations(
        _X, _Y, _X[::-1], random_state=rs),
    "estimate_from_distribution": lambda rs: __import__("xleval.stats").stats.estimate_from_distribution(
        0.5, [0.1, 0.6, 0.9], n=3, random_state=rs),
    "eta_squared": lambda rs: __import__("xleval.stats").stats.eta_squared(_X, _G, random_state=rs),
    "paired_bootstrap_test": lambda rs: __import__("xleval.stats").stats.paired_bootstrap_test(
        _SUMS, _SUMS[::-1], lambda s: s[..., 0] / s[..., 1], random_state=rs),
    "approximate_randomization_test": lambda rs: __import__("xleval.stats").stats.approximate_randomization_test(
        _SUMS, _SUMS[::-1], lambda s: s[..., 0] / s[..., 1], random_state=rs),
    "bootstrap_score_ci": lambda rs: __import__("xleval.stats").stats.bootstrap_score_ci(
        _SUMS, lambda s: s[..., 0] / s[..., 1], random_state=rs),
    "stratified_resample_counts": lambda rs: __import__("xleval.stats").stats.stratified_resample_counts(
        _G, 10, random_state=rs),
    "diagnose": lambda rs: __import__("xleval.decision").decision.diagnose(
        _mt_table(), "metric", "tgt_lang", human="human", procedure=DEFAULT_PROCEDURE.with_(random_state=rs)),
    "choose_method": lambda rs: __import__("xleval.decision").decision.choose_method(
        _mt_table(), "metric", "tgt_lang", human="human", procedure=DEFAULT_PROCEDURE.with_(random_state=rs)),
    "decide_calibration": lambda rs: __import__("xleval.decision").decision.decide_calibration(
        _mt_table(), "metric", "tgt_lang", human="human", procedure=DEFAULT_PROCEDURE.with_(random_state=rs)),
    "diagnose_bias": lambda rs: __import__("xleval.diagnostics").diagnostics.diagnose_bias(
        _mt_table(), "metric", "tgt_lang", random_state=rs),
    "human_agreement": lambda rs: __import__("xleval.diagnostics").diagnostics.human_agreement(
        _mt_table(), "metric", "human", "tgt_lang", resampling=Resampling(random_state=rs)),
    "evaluate_calibration": lambda rs: __import__("xleval.decision").decision.evaluate_calibration(
        _mt_table(), "metric", "human", "tgt_lang",
        procedure=EVALUATION_PROCEDURE.with_(budgets=(4,), random_state=rs)),
    "fairness_gaps": lambda rs: __import__("xleval.fairness").fairness.fairness_gaps(
        _fairness_table(), "acc", "lang", resampling=Resampling(random_state=rs)),
    "audit": lambda rs: __import__("xleval.audit").audit.audit(
        __import__("xleval.audit").audit.simulate_audit_data(n_items=20, n_models=2)[0],
        resampling=AUDIT_RESAMPLING.with_(random_state=rs)),
    "simulate_audit_data": lambda rs: __import__("xleval.audit").audit.simulate_audit_data(
        n_items=20, n_models=2, random_state=rs),
    "paired_contrast": lambda rs: __import__("xleval.audit").audit.paired_contrast(
        (_X > 5).astype(float), (_Y > 2).astype(float), random_state=rs),
    "unpaired_contrast": lambda rs: __import__("xleval.audit").audit.unpaired_contrast(
        (_X > 5).astype(float), (_Y > 2).astype(float), random_state=rs),
    "dose_response": lambda rs: __import__("xleval.audit").audit.dose_response(
        __import__("xleval.audit").audit.prepare_audit_table(
            __import__("xleval.audit").audit.simulate_audit_data(n_items=20, n_models=2)[0]),
        __import__("xleval.audit").audit.ESTIMATORS["E4"], random_state=rs),
    "annotation_agreement": lambda rs: __import__("xleval.audit").audit.annotation_agreement(
        _ratings(), random_state=rs),
    "corpus_metrics": lambda rs: __import__("xleval.intrinsic").intrinsic.corpus_metrics(
        _lm_scores(), ("lang",), ci=True, random_state=rs),
    "LGN.interval": _lgn_interval,
    "select_for_annotation": lambda rs: __import__("xleval.calibration").calibration.select_for_annotation(
        _mt_table(), "tgt_lang", 6, score="metric", random_state=rs),
    "select_rows": lambda rs: __import__("xleval.calibration").calibration.select_rows(
        _X, _G, 6, random_state=rs),
    "plan_labels": lambda rs: __import__("xleval.calibration").calibration.plan_labels(
        _mt_table(), "tgt_lang", 12, score="metric", draw=LabelDraw(random_state=rs)),
    "leaderboard": lambda rs: __import__("xleval.leaderboard").leaderboard.leaderboard(
        _mt_table(), "metric", "tgt_lang", resampling=Resampling(random_state=rs)),
    "system_scores": lambda rs: __import__("xleval.leaderboard").leaderboard.system_scores(
        _mt_table(), "metric", "tgt_lang", random_state=rs),
    "recommend_calibration": lambda rs: __import__("xleval.decision").decision.recommend_calibration(
        _mt_table(), "metric", "tgt_lang", human="human", procedure=RECOMMEND_PROCEDURE.with_(random_state=rs)),
    "pairwise_difference_pearson": lambda rs: __import__("xleval.stats").stats.pairwise_difference_pearson(
        _X, _Y, np.arange(len(_X)) % 4, n_resamples=20, random_state=rs),
    "soft_pairwise_accuracy": lambda rs: __import__("xleval.stats").stats.soft_pairwise_accuracy(
        _X.reshape(3, 4), _Y.reshape(3, 4), n_resamples=20, random_state=rs),
    "pairwise_permutation_pvalues": lambda rs: __import__("xleval.stats").stats.pairwise_permutation_pvalues(
        _X.reshape(3, 4), n_resamples=20, random_state=rs),
    "metric_clusters": lambda rs: __import__("xleval.stats").stats.metric_clusters(
        {"a": _X.reshape(3, 4), "b": _Y.reshape(3, 4)}, _X.reshape(3, 4) + _Y.reshape(3, 4), "acc_t",
        n_resamples=20, random_state=rs),
    "chance_baseline": lambda rs: __import__("xleval.stats").stats.chance_baseline(
        "acc_t", _X.reshape(3, 4), _Y.reshape(3, 4), n_simulations=5, random_state=rs),
}


# procedures that pass random_state on through **kwargs (not seen in their signature)
# take their seed through a Procedure (xleval.decision.Procedure.random_state)
THROUGH_KWARGS = {"paired_bootstrap", "diagnose", "choose_method", "decide_calibration", "evaluate_calibration",
                  "recommend_calibration"}
# take their seed through an option object (xleval.stats.Resampling, xleval.calibration.LabelDraw), refused when
# it is built
THROUGH_RESAMPLING = {"leaderboard", "fairness_gaps", "audit", "human_agreement", "compare_pairwise_accuracy",
                      "plan_labels"}


def _procedures() -> list[str]:
    return sorted({q for q in _public_with_seed() if not q.endswith(".__init__")} | THROUGH_KWARGS
                  | THROUGH_RESAMPLING)


def test_every_public_procedure_with_a_seed_is_called_or_skipped_with_a_reason():
    unaccounted = [q for q in _procedures() if q not in CALLS and q not in SKIPPED]
    assert unaccounted == [], f"add a call (or a reason to skip) for {unaccounted}"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_true_is_refused_with_the_one_message(name):
    assert name in _procedures(), f"{name} no longer takes a random_state: drop it from CALLS"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError, match=re.escape(ONE_MESSAGE)):
            CALLS[name](True)


@pytest.mark.parametrize("name", ["bootstrap", "fairness_gaps", "eta_squared", "human_agreement", "corpus_metrics"])
def test_a_seed_is_recorded_as_given_and_a_fresh_one_when_none(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert CALLS[name](17).random_state == 17
        fresh = CALLS[name](None).random_state
    assert isinstance(fresh, int) and fresh >= 0


def test_the_resolver_refuses_bools_negatives_and_non_integers_alike():
    for bad in (True, False, -1, 1.5, "3"):
        with pytest.raises(InputError, match=r"random_state must be a non-negative integer") as info:
            resolve_seed(bad)
        assert info.value.argument == "random_state" and info.value.value is bad
    assert resolve_seed(np.int64(4)) == 4
    rng, seed = make_rng(4)
    assert seed == 4 and rng.random() == np.random.default_rng(4).random()  # an int seed is numpy's stream
    generator = np.random.default_rng(1)
    assert make_rng(generator) == (generator, None)


def test_child_seeds_are_numpys_seed_sequence_children():
    assert child_seeds(11, 3) == [int(s) for s in np.random.SeedSequence(11).generate_state(3)]


def test_the_synthetic_generator_keeps_its_stream_and_refuses_a_bool_seed():
    from xleval.synthetic import simulate_mt_evaluation

    sim = simulate_mt_evaluation(seed=5, n_segments=3)
    rng = np.random.default_rng(5)  # the documented stream: the first draws are the system skills
    skill = rng.normal(0.0, 0.5, 6)
    q = skill[:, None] + rng.normal(0.0, 0.25, (6, len(sim.offsets)))
    assert np.allclose(sim.truth["true_quality"].to_numpy(), q.ravel())
    assert sim.seed == 5
    with pytest.raises(InputError, match=re.escape(ONE_MESSAGE)):
        simulate_mt_evaluation(seed=True)


# ----------------------------------------------------------------------------- resampling only in stats
# modules outside xleval.stats that draw random numbers, and why that is not resampling
DRAWS_ALLOWED = {
    "synthetic.py": "the simulated data set itself (its documented stream)",
    "audit/_simulate.py": "simulated benchmarks (the data, not a resample of it)",
    "calibration/_select.py": "which rows to send for annotation (a sampling design)",
    "calibration/_plan.py": "which rows to send for annotation (a sampling design)",
    "calibration/_drift.py": "the drift probe: which few rows per group a calibrator keeps (not resampling)",
    "calibration/_cell_interval.py": "posterior draws of the deviation variance (uniforms through its distribution "
                                     "function), from the leaderboard's generator: not a resample",
    "decision/_compare.py": "cross-validation folds (the resamples come from stats.stratified_resample_counts)",
    "leaderboard/_board.py": "one seed per group, drawn from the resolved generator",
    "scale/_backend.py": "the Dask workers' warm-up table: fixed data (seed 0) decoded once, no statistic",
    "_base/seeding.py": "the one seed resolver",
}
_DRAW = re.compile(r"default_rng\(|SeedSequence\(|RandomState\(|\brng\.(integers|choice|multinomial|permutation|"
                   r"random|shuffle)\(")


def test_random_draws_outside_stats_are_the_listed_exceptions():
    from pathlib import Path

    import xleval

    root = Path(xleval.__file__).parent
    drawing = {str(p.relative_to(root)) for p in root.rglob("*.py")
               if p.relative_to(root).parts[0] != "stats" and _DRAW.search(p.read_text(encoding="utf-8"))}
    unexpected = sorted(drawing - set(DRAWS_ALLOWED))
    assert unexpected == [], f"resample through xleval.stats instead: {unexpected}"
