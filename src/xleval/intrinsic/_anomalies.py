"""Runs whose numbers cannot describe a trained model, found before any analysis uses them.

A run (one model on one language's text) is anomalous when nothing of it is usable (every
log-likelihood NaN/inf: an all-NaN run), or when it is worse than a model that knows nothing:

* ``bpb`` above 8 bits per byte: a uniform distribution over the 256 byte values costs 8;
* ``bpc`` above log2(1,114,112) = 20.09 bits per character: a uniform distribution over every
  Unicode code point;
* ``token_nll`` above ln V nats per token, V the vocabulary size (when the table has it): a
  uniform distribution over the vocabulary.

These bounds are deliberately loose: they flag only what no trained model should produce, so a
value just inside them can still be wrong (the report lists the values, for a reader to judge).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["ANOMALY_BOUNDS", "flag_anomalies"]

RUN_KEYS = ["setting", "lang", "variant"]
DESCRIPTION = ("tokenizer_algo", "model_family", "vocab_size")
_UNICODE = 0x110000
ANOMALY_BOUNDS: dict[str, tuple[float, str]] = {
    "bpb": (8.0, "worse than a uniform distribution over the 256 byte values (8 bits per byte)"),
    "bpc": (math.log2(_UNICODE), f"worse than a uniform distribution over all Unicode code points "
                                 f"({math.log2(_UNICODE):.2f} bits per character)"),
}


def flag_anomalies(lang_table: pd.DataFrame, *, empty_runs: Iterable[Mapping[str, Any]] = (),
                   vocab_col: str = "vocab_size") -> pd.DataFrame:
    """One row per anomalous run and reason: the run's keys (``model``, ``setting``, ``lang``,
    ``variant`` and any stratum columns), ``metric``, ``value``, ``bound`` and ``reason``.

    ``lang_table`` is a model-level language table (:func:`language_table`); ``empty_runs`` are
    the runs with no usable row (:attr:`LMScores.empty_runs`), which the table cannot show.
    """
    keys = [c for c in ("model", *RUN_KEYS, *DESCRIPTION) if c in lang_table.columns]
    rows = [{**dict(run), "metric": "nll", "value": None, "bound": None,
             "reason": f"no usable value: all {run.get('n_rows', '?')} log-likelihoods are "
                       "NaN/inf"} for run in empty_runs]
    for metric, (bound, why) in ANOMALY_BOUNDS.items():
        if metric in lang_table.columns:
            rows += _over(lang_table, keys, metric, np.full(len(lang_table), bound), lambda b, why=why: why)
    if "token_nll" in lang_table.columns and vocab_col in lang_table.columns:
        vocab = pd.to_numeric(lang_table[vocab_col], errors="coerce").to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            uniform = np.where(vocab > 1, np.log(vocab), np.nan)
        rows += _over(lang_table, keys, "token_nll", uniform, lambda b: f"worse than a uniform distribution over the "
                      f"{round(math.exp(b))} vocabulary entries (ln V = {b:.2f} nats per token)")
    columns = [*keys, "metric", "value", "bound", "reason"]
    out = pd.DataFrame(rows)
    return out.reindex(columns=list(dict.fromkeys([*columns, *out.columns]))) if rows else pd.DataFrame(columns=columns)


def _over(table: pd.DataFrame, keys: list[str], metric: str, bound: np.ndarray, why) -> list[dict[str, Any]]:
    values = table[metric].to_numpy(dtype=float)
    bad = np.isfinite(bound) & (values > bound)
    return [{**{k: table[k].iloc[i] for k in keys}, "metric": metric, "value": float(values[i]),
             "bound": float(bound[i]), "reason": f"{metric} = {values[i]:.2f}: {why(bound[i])}"}
            for i in np.flatnonzero(bad)]
