"""Simulated item-level benchmark results with planted translation-tax effects.

The data-generating process keeps every planted effect additive on the probability scale,
so the true value of each estimator is known exactly: item ``i`` has a base accuracy
``p_i ~ U(0.3, 0.85)``, model ``m`` adds an offset ``o_m ~ U(-0.05, 0.05)``, and

* E1: ``P(correct | source) = p_im``, ``P(correct | back_translated) = p_im - e1``;
* E4: ``P(correct | translated) = p_im``, ``P(correct | naturalized) = p_im - e4_i`` with
  ``e4_i = e4_high`` when the item's residual rating ``r_i ~ U(1, 5)`` is ``>= 3`` (half of
  the items), else ``e4_low``; the pooled E4 truth is ``(e4_high + e4_low) / 2``;
* E3: natively authored items have ``p_j ~ U(0.3, 0.85) - e3``, so the E3 truth is ``e3``.

Parser failures (a response with no answer letter) hit each row of a model independently of
condition and correctness with that model's failure rate, so they are ignorable for the
``exclude`` policy (truth unchanged) and attenuate the ``wrong`` policy by ``1 - rate``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.result import Result
from xleval._base.seeding import make_rng, resolve_seed
from xleval.audit._estimators import paired_contrast, unpaired_contrast

__all__ = ["simulate_audit_data", "coverage_study", "CoverageResult"]

_LETTERS = np.array(list("ABCD"))
_CORRECT_TEMPLATES = ("答案是{}", "The answer is {}.", "**{}**", "{}")
_FAILED = ("I cannot determine the answer.", "无法确定。", "")


def _offsets(rng: np.random.Generator, shape: tuple[int, ...], n_models: int) -> np.ndarray:
    """Model offsets, shared by every item pool of one benchmark (shape (..., 1, models))."""
    return rng.uniform(-0.05, 0.05, shape[:-1] + (1, n_models))


def _base(rng: np.random.Generator, shape: tuple[int, ...], offsets: np.ndarray) -> np.ndarray:
    return rng.uniform(0.3, 0.85, shape)[..., None] + offsets


def simulate_audit_data(
    n_items: int = 200,
    n_models: int = 6,
    *,
    families: tuple[str, ...] = ("english-centric", "chinese-optimized", "open-multilingual"),
    e1: float = 0.05,
    e4_high: float = 0.10,
    e4_low: float = 0.0,
    e3: float = 0.03,
    n_native: int = 200,
    parser_failure: dict[str, float] | float = 0.0,
    n_subjects: int = 20,
    random_state: Any = 0,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """A long table (response + answer text, model_family, subject, residual) for all five
    conditions, and the true value of every estimator under the ``exclude`` policy."""
    rng = make_rng(random_state)[0]
    models = [f"model-{k}" for k in range(n_models)]
    offsets = _offsets(rng, (n_items,), n_models)
    p = _base(rng, (n_items,), offsets)  # (items, models)
    residual = np.round(rng.uniform(1, 5, n_items), 1)
    e4 = np.where(residual >= 3, e4_high, e4_low)[:, None]
    probs = {"source": p, "back_translated": p - e1, "translated": p, "naturalized": p - e4}
    items = np.array([f"q{i:04d}" for i in range(n_items)])
    subject = np.array([f"subject-{i % n_subjects:02d}" for i in range(n_items)])
    frames = [_rows(rng, probs[c], c, items, subject, residual, models) for c in probs]
    native = _base(rng, (n_native,), offsets) - e3
    frames.append(_rows(rng, native, "native", np.array([f"n{j:04d}" for j in range(n_native)]),
                        np.full(n_native, "native-exam"), np.full(n_native, np.nan), models))
    df = pd.concat(frames, ignore_index=True)
    df["model_family"] = df["model"].map({m: families[k % len(families)] for k, m in enumerate(models)})
    _break_parses(rng, df, parser_failure)
    truth = {"E1": e1, "E3": e3, "E4": (e4_high + e4_low) / 2, "E4_high": e4_high, "E4_low": e4_low,
             "dose_contrast": e4_high - e4_low}
    return df, truth


def _rows(rng, prob, condition, items, subject, residual, models) -> pd.DataFrame:
    n, m = prob.shape
    answer = rng.integers(0, 4, n)
    correct = rng.random((n, m)) < prob
    wrong = (answer[:, None] + rng.integers(1, 4, (n, m))) % 4
    letter = np.where(correct, answer[:, None], wrong)
    template = rng.integers(0, len(_CORRECT_TEMPLATES), (n, m))
    responses = [_CORRECT_TEMPLATES[t].format(_LETTERS[x])
                 for t, x in zip(template.ravel(), letter.ravel(), strict=True)]
    return pd.DataFrame({
        "item_id": np.repeat(items, m), "model": np.tile(models, n), "condition": condition,
        "subject": np.repeat(subject, m), "residual": np.repeat(residual, m),
        "answer": np.repeat(_LETTERS[answer], m), "response": responses,
    })


def _break_parses(rng, df: pd.DataFrame, parser_failure: dict[str, float] | float) -> None:
    rates = df["model"].map(parser_failure if isinstance(parser_failure, dict) else lambda _: parser_failure)
    broken = rng.random(len(df)) < rates.fillna(0.0).to_numpy()
    df.loc[broken, "response"] = rng.choice(_FAILED, int(broken.sum()))


@dataclass(frozen=True, eq=False)
class CoverageResult(Result):
    """How often the 95% CIs covered the planted values, the mean estimates (bias), and how
    often the tests rejected at 0.05, over ``n_sims`` simulated benchmarks."""

    n_sims: int
    n_items: int
    n_models: int
    truth: dict[str, float]
    coverage: dict[str, float]
    mean_estimate: dict[str, float]
    rejection_rate: dict[str, float]
    ci_excludes_zero_rate: dict[str, float]
    random_state: int


def coverage_study(n_sims: int = 500, n_items: int = 200, n_models: int = 3, *, e1: float = 0.05,
                   e4_high: float = 0.10, e4_low: float = 0.0, e3: float = 0.03, n_native: int = 200,
                   n_resamples: int = 1000, n_permutations: int = 999, level: float = 0.95,
                   random_state: Any = 0) -> CoverageResult:
    """Simulate ``n_sims`` benchmarks (outcomes drawn for all simulations at once) and run the
    audit's estimators on each: pooled E1, E4 and E3, per-model E1 (model 0, McNemar) and the
    dose-response contrast. Zero effects give the false-positive rates."""
    seed = resolve_seed(random_state)
    rng, _ = make_rng(seed)
    s, n, m = n_sims, n_items, n_models
    offsets = _offsets(rng, (s, n), m)
    p = _base(rng, (s, n), offsets)
    residual_high = rng.random((s, n)) < 0.5
    e4 = np.where(residual_high, e4_high, e4_low)[..., None]
    draw = lambda prob: (rng.random(prob.shape) < prob).astype(float)  # noqa: E731
    src, bt, tr, nat = draw(p), draw(p - e1), draw(p), draw(p - e4)
    native = draw(_base(rng, (s, n_native), offsets) - e3)
    truth = {"E1": e1, "E1_model0": e1, "E4": (e4_high + e4_low) / 2, "E3": e3, "dose_contrast": e4_high - e4_low}
    kw: dict[str, Any] = dict(n_resamples=n_resamples, n_permutations=n_permutations, level=level)
    runs: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in truth}
    for k in range(s):
        sim = seed * 100_003 + k  # one reproducible resampling seed per simulated benchmark
        _collect(runs["E1"], paired_contrast(src[k].mean(1), bt[k].mean(1), mcnemar=False, random_state=sim, **kw))
        _collect(runs["E1_model0"], paired_contrast(src[k, :, 0], bt[k, :, 0], mcnemar=True, random_state=sim, **kw))
        d4 = tr[k].mean(1) - nat[k].mean(1)
        _collect(runs["E4"], paired_contrast(tr[k].mean(1), nat[k].mean(1), mcnemar=False, random_state=sim, **kw))
        _collect(runs["E3"], unpaired_contrast(tr[k].mean(1), native[k].mean(1), random_state=sim, **kw))
        _collect(runs["dose_contrast"], unpaired_contrast(d4[residual_high[k]], d4[~residual_high[k]],
                                                          random_state=sim, **kw))
    return _summarise(runs, truth, s, n, m, seed)


def _collect(store: list, out: dict[str, Any]) -> None:
    store.append((out["estimate"], out["ci_low"], out["ci_high"], out["p_value"]))


def _summarise(runs, truth, s, n, m, seed) -> CoverageResult:
    cov, mean, rej, excl = {}, {}, {}, {}
    for key, rows in runs.items():
        arr = np.array(rows)
        cov[key] = float(np.mean((arr[:, 1] <= truth[key]) & (truth[key] <= arr[:, 2])))
        mean[key] = float(arr[:, 0].mean())
        rej[key] = float(np.mean(arr[:, 3] < 0.05))
        excl[key] = float(np.mean((arr[:, 1] > 0) | (arr[:, 2] < 0)))
    return CoverageResult(s, n, m, truth, cov, mean, rej, excl, seed)
