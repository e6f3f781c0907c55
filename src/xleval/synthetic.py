"""Simulated multilingual MT evaluations with a known ground truth (used by the demo and tests).

Generative model (all draws from one ``numpy.random.Generator(seed)``):

* systems ``s = 1..S`` with true skill ``a_s ~ N(0, system_sd^2)``; languages ``l = 1..L``;
* true quality of system ``s`` in language ``l``: ``q_sl = a_s + e_sl``, ``e_sl ~ N(0, interaction_sd^2)``,
  plus ``language_effect[l]`` (default 0: every language has the same true quality distribution,
  the assumption LGN needs; a non-zero value plants a *real* difference LGN would wrongly erase);
* segment ``i`` true quality ``t = q_sl + u``, ``u ~ N(0, 1)``;
* metric ``m = base + offset_l + scale_l * t + noise * v``, ``v ~ N(0, 1)``: the planted per-language bias
  (:class:`MetricBias`: ``offset_l ~ U(-offset_range, offset_range)``, ``scale_l ~ U(scale_low, scale_high)``,
  ``noise``);
* human ``h = t + human_noise * w``, ``w ~ N(0, 1)``.

Each (system, language) has ``n_segments`` segments in the evaluation split and, independently,
in the calibration split (``split`` column), drawn from the same process.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.seeding import make_rng

__all__ = ["SyntheticEval", "simulate_mt_evaluation", "MetricBias", "DEFAULT_LANGUAGES"]

DEFAULT_LANGUAGES = ("de", "fr", "ru", "zh", "ja", "fi", "hi", "sw")


@dataclass(frozen=True)
class SyntheticEval:
    """The simulated table and its ground truth."""

    data: pd.DataFrame  # one row per segment: split, lp, src_lang, tgt_lang, system, seg_id, true, metric, human
    truth: pd.DataFrame  # one row per (system, tgt_lang): true_quality q_sl
    offsets: dict[str, float]
    scales: dict[str, float]
    seed: int


@dataclass(frozen=True)
class MetricBias:
    """The metric's planted per-language distortion of the true quality (module docstring): offsets drawn
    from ``U(-offset_range, offset_range)``, scales from ``U(scale_low, scale_high)``, and the segment
    ``noise`` sd. ``with_(...)`` changes some settings."""

    offset_range: float = 15.0
    scale_low: float = 4.0
    scale_high: float = 12.0
    noise: float = 4.0

    def with_(self, **changes: Any) -> MetricBias:
        """This distortion with some settings changed."""
        return replace(self, **changes)


DEFAULT_BIAS = MetricBias()


def simulate_mt_evaluation(
    *, languages: tuple[str, ...] = DEFAULT_LANGUAGES, n_systems: int = 6, n_segments: int = 200,
    system_sd: float = 0.5, interaction_sd: float = 0.25, metric_bias: MetricBias = DEFAULT_BIAS,
    human_noise: float = 0.7, base: float = 50.0, language_effect: dict[str, float] | None = None, seed: int = 0,
) -> SyntheticEval:
    """Draw one evaluation (see the module docstring for the model; ``metric_bias``: :class:`MetricBias`)."""
    offset_range, scale_low, scale_high = metric_bias.offset_range, metric_bias.scale_low, metric_bias.scale_high
    metric_noise = metric_bias.noise
    rng, resolved = make_rng(seed)  # an int seed gives numpy.random.default_rng(seed): the documented stream
    L, S = len(languages), n_systems
    systems = [f"sys{i + 1}" for i in range(S)]
    skill = rng.normal(0.0, system_sd, S)
    q = skill[:, None] + rng.normal(0.0, interaction_sd, (S, L))
    effect = np.array([(language_effect or {}).get(lang, 0.0) for lang in languages])
    q = q + effect[None, :]
    offsets = rng.uniform(-offset_range, offset_range, L)
    scales = rng.uniform(scale_low, scale_high, L)
    frames = []
    for split in ("calibration", "evaluation"):
        s_grid, l_grid = np.meshgrid(np.arange(S), np.arange(L), indexing="ij")
        s_idx = np.repeat(s_grid.ravel(), n_segments)
        l_idx = np.repeat(l_grid.ravel(), n_segments)
        true = q[s_idx, l_idx] + rng.normal(0.0, 1.0, len(s_idx))
        metric = base + offsets[l_idx] + scales[l_idx] * true + metric_noise * rng.normal(0.0, 1.0, len(s_idx))
        human = true + human_noise * rng.normal(0.0, 1.0, len(s_idx))
        tgt = np.asarray(languages, dtype=object)[l_idx]
        frames.append(pd.DataFrame({
            "split": split, "lp": "en-" + pd.Series(tgt, dtype=object), "src_lang": "en", "tgt_lang": tgt,
            "system": np.asarray(systems, dtype=object)[s_idx],
            "seg_id": np.tile(np.arange(1, n_segments + 1), S * L), "true": true, "metric": metric, "human": human,
        }))
    truth = pd.DataFrame({
        "system": np.repeat(systems, L), "tgt_lang": np.tile(languages, S), "true_quality": q.ravel(),
    })
    return SyntheticEval(pd.concat(frames, ignore_index=True), truth,
                         dict(zip(languages, offsets.tolist(), strict=True)),
                         dict(zip(languages, scales.tolist(), strict=True)), seed if resolved is None else resolved)
