"""Does a metric move when nothing but the tokenizer vocabulary, or the choice among equivalent
translations, changes? Both analyses run within one stratum (tokenizer algorithm, model family)
at a time: models of different algorithms are never pooled.

* :func:`vocab_sensitivity` - models that differ only in vocabulary size, per language.
* :func:`translation_stability` - the same text in several equivalent translations.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from xleval.exceptions import InputError
from xleval.stats import correlation

__all__ = ["vocab_sensitivity", "translation_stability", "stability_summary", "strata_groups"]


def strata_groups(table: pd.DataFrame, strata: Sequence[str]):
    """``(stratum values as a dict, rows)`` per stratum; one group holding everything without strata."""
    if not strata:
        yield {}, table
        return
    keyed = table.assign(**{c: table[c].astype(object).where(table[c].notna(), "(none)") for c in strata})
    for group, rows in keyed.groupby(list(strata), sort=True):
        key = group if isinstance(group, tuple) else (group,)
        yield dict(zip(strata, key, strict=True)), rows


# ----------------------------------------------------------------------------- vocabulary
def vocab_sensitivity(lang_table: pd.DataFrame, metrics: Sequence[str], *, strata: Sequence[str] = (),
                      vocab_col: str = "vocab_size") -> pd.DataFrame:
    """Per stratum and metric: how much the metric moves with the vocabulary size alone.

    ``rel_range_median``: median over languages of (max - min) / |mean| across the language's
    vocabulary sizes. ``rho_median``: median over languages of the Spearman correlation of the
    metric with the vocabulary size (languages with >= 3 sizes); ``n_increasing`` /
    ``n_decreasing`` count the languages with a positive / negative one and ``sign_p`` is the
    two-sided sign test across languages (the language is the unit; the sizes within a language
    are repeated measures). ``ranking_tau_mean``/``_min``: Kendall tau-b between the
    cross-language rankings at each pair of vocabulary sizes (1 = the ranking never changes).
    """
    if vocab_col not in lang_table.columns:
        raise InputError(f"vocab_sensitivity needs a {vocab_col!r} column (models that differ only in vocabulary)")
    sizes = pd.to_numeric(lang_table[vocab_col], errors="coerce")
    t = lang_table[np.isfinite(sizes) & (sizes > 0)]
    rows = []
    for stratum, part in strata_groups(t, strata):
        if part.groupby("lang")[vocab_col].nunique().max() < 2:
            continue  # no language with two vocabulary sizes left in this stratum: nothing to measure
        for metric in metrics:
            if metric in part.columns:
                rows.append({**stratum, "metric": metric, **_vocab_one(part, metric, vocab_col)})
    return pd.DataFrame(rows)


def _vocab_one(t: pd.DataFrame, metric: str, vocab_col: str) -> dict[str, Any]:
    wide = t.pivot_table(index="lang", columns=vocab_col, values=metric, aggfunc="mean")
    out: dict[str, Any] = {"n_languages": int(wide.notna().sum(axis=1).ge(2).sum()), "n_vocab_sizes": wide.shape[1]}
    ranges, rhos = [], []
    for _, values in wide.iterrows():
        v = values.dropna()
        if len(v) >= 2 and v.mean() != 0:
            ranges.append(float(np.ptp(v.to_numpy()) / abs(v.mean())))
        if len(v) >= 3 and v.nunique() > 1:
            rhos.append(correlation(v.index.to_numpy(dtype=float), v.to_numpy(), "spearman", ci="none").estimate)
    if ranges:
        out["rel_range_median"] = float(np.median(ranges))
    if rhos:
        from scipy.stats import binomtest

        up, down = sum(r > 0 for r in rhos), sum(r < 0 for r in rhos)
        out.update({"rho_median": float(np.median(rhos)), "n_increasing": up, "n_decreasing": down,
                    "sign_p": float(binomtest(up, up + down).pvalue) if up + down else float("nan")})
    taus = []
    for a, b in itertools.combinations(wide.columns, 2):
        both = wide[[a, b]].dropna()
        if len(both) >= 3:
            taus.append(correlation(both[a].to_numpy(), both[b].to_numpy(), "kendall_b", ci="none").estimate)
    if taus:
        out["ranking_tau_mean"], out["ranking_tau_min"] = float(np.nanmean(taus)), float(np.nanmin(taus))
    return out


# ----------------------------------------------------------------------------- translations
def translation_stability(lang_table: pd.DataFrame, metrics: Sequence[str], *,
                          strata: Sequence[str] = ()) -> pd.DataFrame:
    """Per stratum, metric and setting: how much the choice among equivalent translations moves
    the cross-language comparison. Two views, because each can mislead alone:

    * ``order`` (languages by their mean value, e.g. ``en < de``) and ``order_flips``: whether
      the order of some pair of languages depends on the translation chosen (``flip_rate``:
      the share of (version, version) comparisons against the majority order);
    * ``spread_ratio``: the mean range across a language's versions divided by the range of the
      language means. The denominator is the cross-language gap the metrics disagree about (its
      sign differs between metrics, see ``order``), so a small ratio can come from a large gap
      rather than from stable values: read it with ``order``.
    """
    rows = []
    for stratum, part in strata_groups(lang_table, strata):
        for metric in metrics:
            if metric not in part.columns:
                continue
            for setting, in_setting in part.groupby("setting", sort=True):
                t = in_setting[np.isfinite(in_setting[metric].to_numpy(dtype=float))]
                if t["lang"].nunique() < 2 or t.groupby("lang")["variant"].nunique().max() < 2:
                    continue
                rows.append({**stratum, "metric": metric, "setting": setting, **_stability_one(t, metric)})
    return pd.DataFrame(rows)


def _stability_one(t: pd.DataFrame, metric: str) -> dict[str, Any]:
    by_lang = {lang: g[metric].to_numpy(dtype=float) for lang, g in t.groupby("lang", sort=True)}
    means = {lang: float(v.mean()) for lang, v in by_lang.items()}
    gap = float(np.ptp(list(means.values())))
    ranges = [float(np.ptp(v)) for v in by_lang.values() if len(v) > 1]
    flips, combos = 0, 0
    for a, b in itertools.combinations(by_lang.values(), 2):
        signs = np.sign(np.subtract.outer(a, b)).ravel()
        flips += int(min((signs > 0).sum(), (signs < 0).sum()))
        combos += signs.size
    return {"n_languages": len(by_lang), "n_variants": int(t["variant"].nunique()),
            "order": " < ".join(sorted(means, key=lambda lang: means[lang])),
            "variant_range_mean": float(np.mean(ranges)),
            "language_gap": gap, "spread_ratio": float(np.mean(ranges)) / gap if gap > 0 else float("inf"),
            "flip_rate": flips / combos if combos else float("nan"), "order_flips": bool(flips)}


def stability_summary(stability: pd.DataFrame, strata: Sequence[str] = ()) -> pd.DataFrame:
    """Per stratum and metric: settings whose language order depends on the translation, out of
    all settings; the majority order; median and maximum spread ratio."""
    if stability.empty:
        return stability
    keys = [*[c for c in strata if c in stability.columns], "metric"]
    return stability.groupby(keys, sort=False).agg(
        settings_with_flip=("order_flips", "sum"), n_settings=("order_flips", "size"),
        order=("order", lambda o: o.mode().iloc[0]), spread_ratio_median=("spread_ratio", "median"),
        spread_ratio_max=("spread_ratio", "max"), flip_rate_mean=("flip_rate", "mean")).reset_index()
