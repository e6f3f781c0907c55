"""Per-sentence LM scores (:class:`LMScores`) and the metrics computed from them.

Every metric is a function of four summable per-sentence statistics: the negative
log-likelihood ``nll`` of the scored tokens (nats), the number of scored ``tokens``, and the
``chars`` and UTF-8 ``bytes`` of the text. A corpus metric is a **ratio of sums** over the
sentences of a group (never a mean of per-sentence ratios):

===============  ==========================================  =================
metric           corpus value                                 unit
===============  ==========================================  =================
``sent_nll``     sum(nll) / n_sentences                      nats / sentence
``sent_nll_bits`` sum(nll) / n_sentences / ln 2              bits / sentence
``token_nll``    sum(nll) / sum(tokens)                      nats / token
``ppl``          exp(token_nll)                               -
``bpt``          sum(nll) / sum(tokens) / ln 2               bits / token
``bpc``          sum(nll) / sum(chars) / ln 2                bits / character
``bpb``          sum(nll) / sum(bytes) / ln 2                bits / byte
===============  ==========================================  =================

A sentence with zero scored tokens (a one-token sentence whose first token a causal LM cannot
score) has no per-token value: it is counted and excluded, never averaged in as 0.
"""
from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.grouping import python_value
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import normalize_codes

from ._lengths import count_bytes, count_chars

__all__ = ["LMScores", "METRICS", "METRIC_UNITS", "from_token_logprobs", "metrics_from_sums", "sentence_metrics"]

LN2 = math.log(2.0)
KEYS = ("lang", "model", "setting", "variant", "item")
STATS = ("nll", "tokens", "chars", "bytes")
METRICS = ("sent_nll", "sent_nll_bits", "token_nll", "ppl", "bpt", "bpc", "bpb")
METRIC_UNITS = {
    "sent_nll": "nats per sentence", "sent_nll_bits": "bits per sentence", "token_nll": "nats per token",
    "ppl": "perplexity (exp of nats per token)", "bpt": "bits per token", "bpc": "bits per character",
    "bpb": "bits per UTF-8 byte",
}
UNITS = ("nats", "bits")


def metrics_from_sums(nll: Any, tokens: Any, chars: Any, bytes_: Any, n: Any) -> dict[str, np.ndarray]:
    """All metrics from summed statistics (arrays broadcast); a zero denominator gives NaN."""
    nll, tokens, chars, bytes_, n = (np.asarray(a, dtype=float) for a in (nll, tokens, chars, bytes_, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        token_nll = np.where(tokens > 0, nll / np.where(tokens > 0, tokens, 1), np.nan)
        out = {
            "sent_nll": np.where(n > 0, nll / np.where(n > 0, n, 1), np.nan),
            "token_nll": token_nll,
            "ppl": np.exp(token_nll),
            "bpt": token_nll / LN2,
            "bpc": np.where(chars > 0, nll / np.where(chars > 0, chars, 1) / LN2, np.nan),
            "bpb": np.where(bytes_ > 0, nll / np.where(bytes_ > 0, bytes_, 1) / LN2, np.nan),
        }
    out["sent_nll_bits"] = out["sent_nll"] / LN2
    return {m: out[m] for m in METRICS}


def from_token_logprobs(logprobs: Iterable[Sequence[float]], *, unit: str = "nats") -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence ``(nll, tokens)`` (nats) from per-token log-probabilities of the scored tokens.

    Give only the tokens that were scored (a causal LM cannot score the first token unless a
    BOS context was prepended); an empty list gives ``nll = 0, tokens = 0`` (excluded later).
    """
    _check_unit(unit)
    scale = LN2 if unit == "bits" else 1.0
    nll, tokens = [], []
    for i, lp in enumerate(logprobs):
        arr = _logprob_array(lp, i)
        if (arr > 1e-9).any():
            raise InputError(f"token log-probs of sentence {i}: {arr.max():g} > 0; give log-probabilities (<= 0), "
                             "not NLLs")
        nll.append(-arr.sum() * scale)
        tokens.append(arr.size)
    return np.array(nll, dtype=float), np.array(tokens, dtype=float)


def _logprob_array(value: Any, i: int) -> np.ndarray:
    """One sentence's log-probs as floats: a list/array, or its JSON text (a TSV/CSV cell holds text)."""
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    if missing or (isinstance(value, str) and not value.strip()):
        return np.array([np.nan])  # a missing cell: a NaN log-likelihood, counted and excluded like one
    if isinstance(value, str):
        with contextlib.suppress(ValueError):  # not JSON: reported below, with the cell
            value = json.loads(value)
    try:
        if isinstance(value, (str, bytes, Mapping)) or value is None:
            raise TypeError
        return np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        shown = value if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise InputError(f"token log-probs of sentence {i}: {shown!r} is not a list of numbers; give one list "
                         "per row, e.g. [-1.2, -0.4] (in a TSV/CSV cell, as JSON text)") from None


def sentence_metrics(scores: LMScores) -> pd.DataFrame:
    """The scores table with one column per metric (per sentence: the same formulas, n = 1)."""
    t = scores.table
    values = metrics_from_sums(t["nll"], t["tokens"], t["chars"], t["bytes"], np.ones(len(t)))
    return t.assign(**values)


def _check_unit(unit: str) -> None:
    if unit not in UNITS:
        raise InputError(f"unit {unit!r}: log-likelihoods must be declared in 'nats' (natural log) or 'bits' (log2)")


@dataclass(frozen=True)
class LMScores:
    """Validated per-sentence LM scores: one row per (lang, model, setting, variant, item).

    ``table`` holds only the usable rows, with columns ``lang`` (normalised key), ``model``,
    ``setting`` (what is held equal when languages are compared, e.g. ``bpe_32768`` for a set of
    monolingual models, or the model id for one multilingual model; defaults to ``model``),
    ``variant`` (alternative translation of the same text; default ``""``), ``item`` (id of the
    parallel sentence), ``nll`` (nats), ``tokens``, ``chars``, ``bytes`` (NaN = unknown), plus any
    extra columns of the input. ``excluded`` counts the rows left out, by reason; ``empty_runs``
    lists the runs (model, setting, lang, variant) none of whose rows was usable (an all-NaN run),
    which therefore do not appear in ``table`` at all.
    """

    table: pd.DataFrame
    excluded: Mapping[str, int] = field(default_factory=dict)
    source: str = "input"
    empty_runs: tuple[dict[str, Any], ...] = ()

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        *,
        unit: str = "nats",
        char_unit: str = "codepoints",
        where: str = "input",
        warn: bool = True,
    ) -> LMScores:
        """Build from a table with ``lang`` and one of ``nll`` (>= 0), ``loglik`` (<= 0, summed
        log-prob) or ``token_logprobs`` (a list per row); optional ``model``, ``setting``,
        ``variant``, ``item``, ``tokens``, ``chars``, ``bytes`` and ``text`` (chars and bytes are
        counted from ``text`` when not given). ``unit`` declares the log base of the input.
        """
        _check_unit(unit)
        if "lang" not in df.columns:
            raise InputError(f"{where}: no 'lang' column (language of the scored text); "
                             f"its columns are {list(df.columns)}")
        t = df.reset_index(drop=True).copy()
        t["lang"] = normalize_codes(t["lang"], "lang", where)
        _fill_keys(t, where)
        _fill_nll(t, unit, where)
        _fill_lengths(t, char_unit, where)
        _check_unique(t, where)
        table, excluded, empty = _exclude(t)
        scores = cls(table=table.reset_index(drop=True), excluded=excluded, source=where, empty_runs=empty)
        if warn and excluded:
            warnings.warn(scores.exclusion_message(), DataQualityWarning, stacklevel=2)
        return scores

    def exclusion_message(self) -> str:
        parts = [f"{n} {reason}" for reason, n in self.excluded.items()]
        return f"{self.source}: {sum(self.excluded.values())} row(s) excluded from every metric: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"n_rows": len(self.table), "excluded": dict(self.excluded), "source": self.source,
                "empty_runs": [dict(r) for r in self.empty_runs]}


# ----------------------------------------------------------------------------- building helpers
def _fill_keys(t: pd.DataFrame, where: str) -> None:
    for col in ("model", "setting", "item"):
        # a missing key would become the name 'nan' (model, setting) or an item no row pairs with
        if col not in t.columns:
            continue
        # a TSV/CSV cell is read as text: an empty cell is '' (or white space), as empty as a missing value
        empty = t[col].isna().to_numpy() | (t[col].astype(str).str.strip() == "").to_numpy()
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            raise InputError(f"{where}: column {col!r} row {row + 1} is empty ({int(empty.sum())} such "
                             f"row(s)); fill every {col}, or leave the column out (default: "
                             f"{ {'model': 'one model', 'setting': 'the model', 'item': 'the line number'}[col] })")
    if "model" not in t.columns:
        t["model"] = "model"
    t["model"] = t["model"].astype(str)
    t["setting"] = t["model"] if "setting" not in t.columns else t["setting"].astype(str)
    t["variant"] = "" if "variant" not in t.columns else t["variant"].fillna("").astype(str)
    if "item" not in t.columns:
        # Rows are parallel by position within each (lang, model, variant): the n-th line.
        t["item"] = t.groupby(["lang", "model", "variant"], sort=False).cumcount()


def _fill_nll(t: pd.DataFrame, unit: str, where: str) -> None:
    scale = LN2 if unit == "bits" else 1.0
    given = [c for c in ("nll", "loglik", "token_logprobs") if c in t.columns]
    if len(given) != 1:
        raise InputError(
            f"{where}: give exactly one of the columns 'nll' (summed negative log-likelihood), 'loglik' "
            f"(summed log-probability) or 'token_logprobs' (list per row); found {given or 'none'}"
        )
    col = given[0]
    if col == "token_logprobs":
        nll, tokens = from_token_logprobs(t[col], unit=unit)
        t["nll"] = nll
        if "tokens" not in t.columns:
            t["tokens"] = tokens
        del t[col]  # consumed: the table keeps one log-likelihood column, so it reads back as it is
        return
    values = pd.to_numeric(t[col], errors="coerce").to_numpy(dtype=float)
    bad = t[col].notna().to_numpy() & np.isnan(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where}: column {col!r} row {row + 1}: {t[col].iloc[row]!r} is not a number")
    values = -values if col == "loglik" else values
    neg = values < -1e-9
    if neg.any():
        row = int(np.flatnonzero(neg)[0])
        hint = ("'loglik' values must be <= 0" if col == "loglik"
                else "an NLL is >= 0; if these are log-probabilities, name the column 'loglik'")
        raise InputError(f"{where}: column {col!r} row {row + 1}: {t[col].iloc[row]!r} has the wrong sign; {hint}")
    t["nll"] = np.maximum(values, 0.0) * scale
    if col != "nll":
        del t[col]  # consumed, as above


def _fill_lengths(t: pd.DataFrame, char_unit: str, where: str) -> None:
    has_text = "text" in t.columns
    for col, counter in (("chars", lambda s: count_chars(s, char_unit)), ("bytes", count_bytes)):
        if col in t.columns:
            t[col] = _nonneg(t[col], col, where)
        elif has_text:
            t[col] = counter(t["text"].fillna("").astype(str)).astype(float)
        else:
            t[col] = np.nan
    t["tokens"] = _nonneg(t["tokens"], "tokens", where) if "tokens" in t.columns else np.nan


def _nonneg(values: pd.Series, col: str, where: str) -> np.ndarray:
    arr = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    # inf is not a count: it would make every ratio over it 0 (bpb 0, perplexity 1), a wrong number
    bad = values.notna().to_numpy() & ~((arr >= 0) & np.isfinite(arr))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where}: column {col!r} row {row + 1}: {values.iloc[row]!r} is not a finite count >= 0; "
                         "fix the value, or leave the cell empty if it is unknown")
    return arr


def _check_unique(t: pd.DataFrame, where: str) -> None:
    dup = t.duplicated(list(KEYS), keep="first")
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        key = {k: t[k].iloc[row] for k in KEYS}
        raise InputError(f"{where}: row {row + 1} repeats the key {key}; each (lang, model, setting, variant, "
                         "item) must occur once")


RUN = ["model", "setting", "lang", "variant"]
RUN_DESCRIPTION = ("tokenizer_algo", "model_family", "vocab_size")  # kept for runs with no usable row


def _exclude(t: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int], tuple[dict[str, Any], ...]]:
    nll, tokens, chars, bytes_ = (t[c].to_numpy(dtype=float) for c in STATS)
    reasons = {
        "with NaN/inf log-likelihood": ~np.isfinite(nll),
        "with zero scored tokens (one-token sentences: the first token is not scored)": tokens == 0,
        # minicons-style output: NLL exactly 0 and no token count -> nothing was scored.
        "with NLL exactly 0 and no token count (nothing scored)": np.isnan(tokens) & (nll == 0),
        "with empty text (0 characters or bytes) but a non-zero NLL": (chars == 0) | (bytes_ == 0),
    }
    drop = np.zeros(len(t), dtype=bool)
    excluded: dict[str, int] = {}
    for reason, mask in reasons.items():
        new = mask & ~drop  # each row is counted once, under its first reason
        if new.any():
            excluded[reason] = int(new.sum())
        drop |= mask
    groups = [t[c] for c in RUN]
    runs = pd.Series(~drop, index=t.index).groupby(groups, sort=True).agg(["any", "size"])
    described = [c for c in RUN_DESCRIPTION if c in t.columns]
    first = t[described].groupby(groups, sort=True).first() if described else None
    empty = tuple({**dict(zip(RUN, key, strict=True)),
                   **({c: python_value(first.loc[key, c]) for c in described} if first is not None else {}),
                   "n_rows": int(row["size"])} for key, row in runs[~runs["any"]].iterrows())
    return t.loc[~drop], excluded, empty
