"""Confound analyses of intrinsic metrics (the three criteria of "Apples to Apples?").

All three work on a *language table*: one row per (setting, lang, variant) with the
corpus-level metrics and the length measures of the same sentences (see :func:`language_table`).

1. :func:`vocab_sensitivity` - does the metric move when only the tokenizer vocabulary changes
   (same language, same text)? Within-language Spearman correlation with vocabulary size,
   relative range, and agreement of the cross-language ranking between vocabulary sizes.
2. :func:`length_correlations` - across languages, does the metric follow the length of the
   text in tokens, characters or bytes (CTC per sentence)? Correlations with CIs and p-values
   from :mod:`xleval.stats`.
3. :func:`translation_stability` - does the cross-language comparison survive swapping one
   translation of the text for another equivalent one?
"""
from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval.exceptions import DataQualityWarning, InputError
from xleval.stats import correlation

from ._corpus import AGGREGATION, _sums, parallel_items
from ._scores import METRICS, LMScores, metrics_from_sums

__all__ = [
    "LENGTHS",
    "language_table",
    "length_correlations",
    "vocab_sensitivity",
    "translation_stability",
    "ConfoundReport",
    "analyze_confounds",
]

LENGTHS = ("tokens_per_sentence", "chars_per_sentence", "bytes_per_sentence")
SIDE = ["setting", "lang", "variant"]


def language_table(scores: LMScores, *, parallel: bool = True, extra: Sequence[str] = ("vocab_size",)) -> pd.DataFrame:
    """One row per (setting, lang, variant): corpus metrics (ratio of sums) and length measures
    (mean tokens/chars/bytes per sentence; ``ctc`` = total tokens). With ``parallel`` only the
    items present for every language and variant of a setting are used (drops are counted)."""
    table = scores.table
    if parallel:
        parts = []
        for setting, rows in table.groupby("setting", sort=True):
            sides = list(rows[["lang", "variant"]].drop_duplicates().itertuples(index=False, name=None))
            kept, _ = parallel_items(rows, sides, ["lang", "variant"], f"language table (setting={setting})")
            parts.append(kept)
        table = pd.concat(parts) if parts else table.iloc[:0]
    sums = _sums(table, SIDE)
    values = metrics_from_sums(sums["nll"], sums["tokens"], sums["chars"], sums["bytes"], sums["n_sentences"])
    n = sums["n_sentences"].to_numpy(dtype=float)
    out = sums.assign(**values, tokens_per_sentence=sums["tokens"] / n, chars_per_sentence=sums["chars"] / n,
                      bytes_per_sentence=sums["bytes"] / n, ctc=sums["tokens"])
    for col in extra:
        if col in table.columns:
            first = table.groupby(SIDE, sort=True)[col].first().reset_index()
            out = out.merge(first, on=SIDE, how="left")
    out.attrs["aggregation"] = AGGREGATION
    return out


def _metrics_present(lang_table: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    metrics = [m for m in (metrics or METRICS) if m in lang_table.columns]
    if not metrics:
        raise InputError(f"no metric columns in the language table; expected some of {list(METRICS)}")
    return metrics


# ----------------------------------------------------------------------------- (b) lengths
def length_correlations(
    lang_table: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    lengths: Sequence[str] = LENGTHS,
    *,
    methods: Sequence[str] = ("pearson", "spearman"),
    level: float = 0.95,
) -> pd.DataFrame:
    """Correlation across the rows (languages x settings) of each metric with each length
    measure: one row per (metric, length, method) with estimate, CI, p-value and n."""
    rows = []
    for metric, length, method in itertools.product(_metrics_present(lang_table, metrics), lengths, methods):
        if length not in lang_table.columns:
            continue
        x = lang_table[length].to_numpy(dtype=float)
        y = lang_table[metric].to_numpy(dtype=float)
        keep = np.isfinite(x) & np.isfinite(y)
        if keep.sum() < 3:
            continue
        res = correlation(x[keep], y[keep], method, level=level)
        rows.append({"metric": metric, "length": length, **_flat(res.to_dict())})
    return pd.DataFrame(rows)


def _flat(d: dict[str, Any]) -> dict[str, Any]:
    d = dict(d)
    d["notes"] = "; ".join(d.get("notes") or ())
    return d


# ----------------------------------------------------------------------------- (a) vocabulary
def vocab_sensitivity(
    lang_table: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    *,
    vocab_col: str = "vocab_size",
) -> pd.DataFrame:
    """Per metric: how much it moves with the vocabulary size alone.

    ``rel_range_median``: median over languages of (max - min) / mean across vocabulary sizes;
    ``spearman_within``: Spearman correlation of vocabulary size with the metric after removing
    each language's mean (pooled over languages; CI, p from :func:`xleval.stats.correlation`);
    ``ranking_tau_mean``/``_min``: Kendall tau-b between the cross-language rankings at each
    pair of vocabulary sizes (1 = the ranking never changes).
    """
    if vocab_col not in lang_table.columns:
        raise InputError(f"vocab_sensitivity needs a {vocab_col!r} column (models that differ only in vocabulary)")
    t = lang_table[np.isfinite(lang_table[vocab_col].astype(float)) & (lang_table[vocab_col].astype(float) > 0)]
    rows = []
    for metric in _metrics_present(t, metrics):
        rows.append({"metric": metric, **_vocab_one(t, metric, vocab_col)})
    return pd.DataFrame(rows)


def _vocab_one(t: pd.DataFrame, metric: str, vocab_col: str) -> dict[str, Any]:
    wide = t.pivot_table(index="lang", columns=vocab_col, values=metric, aggfunc="mean")
    wide = wide.dropna(axis=0, how="any")
    out: dict[str, Any] = {"n_languages": len(wide), "n_vocab_sizes": wide.shape[1]}
    if wide.shape[0] < 2 or wide.shape[1] < 2:
        return out
    vals = wide.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["rel_range_median"] = float(np.median(np.ptp(vals, axis=1) / np.abs(vals.mean(axis=1))))
    demeaned = (vals - vals.mean(axis=1, keepdims=True)).ravel()
    vocab = np.tile(wide.columns.to_numpy(dtype=float), len(wide))
    res = correlation(vocab, demeaned, "spearman")
    out.update({"spearman_within": res.estimate, "spearman_ci_low": res.ci_low, "spearman_ci_high": res.ci_high,
                "spearman_p": res.p_value, "n_points": res.n})
    taus = [correlation(vals[:, i], vals[:, j], "kendall_b", ci="none").estimate
            for i, j in itertools.combinations(range(vals.shape[1]), 2)]
    out["ranking_tau_mean"], out["ranking_tau_min"] = float(np.nanmean(taus)), float(np.nanmin(taus))
    return out


# ----------------------------------------------------------------------------- (c) translations
def translation_stability(lang_table: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (metric, setting): how much the choice among equivalent translations moves the
    cross-language comparison.

    ``spread_ratio``: mean over languages with several variants of the range across variants,
    divided by the range of the language means (the cross-language gap); > 1 means the choice
    of translation matters more than the language. ``flip_rate``: over language pairs and all
    combinations of their variants, the share whose order differs from the majority order.
    """
    rows = []
    for metric in _metrics_present(lang_table, metrics):
        for setting, t in lang_table.groupby("setting", sort=True):
            if t.groupby("lang")["variant"].nunique().max() < 2 or t["lang"].nunique() < 2:
                continue
            rows.append({"metric": metric, "setting": setting, **_stability_one(t, metric)})
    if not rows:
        warnings.warn("translation stability: no setting has two languages with at least one of them in "
                      "several variants; nothing to compare", DataQualityWarning, stacklevel=2)
    return pd.DataFrame(rows)


def _stability_one(t: pd.DataFrame, metric: str) -> dict[str, Any]:
    by_lang = {lang: g[metric].to_numpy(dtype=float) for lang, g in t.groupby("lang", sort=True)}
    means = np.array([v.mean() for v in by_lang.values()])
    gap = float(np.ptp(means))
    ranges = [float(np.ptp(v)) for v in by_lang.values() if len(v) > 1]
    flips, combos = 0, 0
    for a, b in itertools.combinations(by_lang.values(), 2):
        signs = np.sign(np.subtract.outer(a, b)).ravel()
        flips += int(min((signs > 0).sum(), (signs < 0).sum()))
        combos += signs.size
    return {"n_languages": len(by_lang), "n_variants": int(t["variant"].nunique()),
            "variant_range_mean": float(np.mean(ranges)), "language_gap": gap,
            "spread_ratio": float(np.mean(ranges)) / gap if gap > 0 else float("inf"),
            "flip_rate": flips / combos if combos else float("nan")}


# ----------------------------------------------------------------------------- report
@dataclass(frozen=True)
class ConfoundReport:
    """The three confound analyses of one set of scores, plus the language table they used."""

    language_table: pd.DataFrame
    lengths: pd.DataFrame
    vocab: pd.DataFrame
    translation: pd.DataFrame
    aggregation: str = AGGREGATION
    alpha: float = 0.01
    excluded: dict[str, int] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """One row per metric: the strongest length correlation and whether it is significant
        at ``alpha``, vocabulary sensitivity, translation stability."""
        metrics = list(dict.fromkeys(self.language_table.columns.intersection(list(METRICS))))
        return pd.DataFrame([self._summary_row(m) for m in metrics])

    def _summary_row(self, metric: str) -> dict[str, Any]:
        row: dict[str, Any] = {"metric": metric}
        lc = self.lengths[(self.lengths.get("metric") == metric) & (self.lengths.get("method") == "pearson")] \
            if len(self.lengths) else self.lengths
        if len(lc):
            top = lc.loc[lc["estimate"].abs().idxmax()]
            row.update({"length_max_abs_r": float(top["estimate"]), "length_measure": top["length"],
                        "length_p": float(top["p_value"]), "length_n": int(top["n"]),
                        f"length_significant_{self.alpha:g}": bool((lc["p_value"] < self.alpha).any())})
        if len(self.vocab) and metric in set(self.vocab["metric"]):
            v = self.vocab.set_index("metric").loc[metric]
            row.update({"vocab_rel_range": v.get("rel_range_median"), "vocab_spearman": v.get("spearman_within"),
                        "vocab_p": v.get("spearman_p"), "vocab_ranking_tau": v.get("ranking_tau_mean")})
        if len(self.translation) and metric in set(self.translation["metric"]):
            tr = self.translation[self.translation["metric"] == metric]
            row.update({"translation_spread_ratio": float(tr["spread_ratio"].median()),
                        "translation_flip_rate": float(tr["flip_rate"].mean())})
        return row

    def to_dict(self) -> dict[str, Any]:
        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return df.astype(object).where(df.notna(), None).to_dict(orient="records")

        return {"aggregation": self.aggregation, "alpha": self.alpha, "excluded": dict(self.excluded),
                "summary": records(self.summary()), "length_correlations": records(self.lengths),
                "vocab_sensitivity": records(self.vocab), "translation_stability": records(self.translation),
                "language_table": records(self.language_table)}


def analyze_confounds(
    scores: LMScores | pd.DataFrame,
    metrics: Sequence[str] | None = None,
    *,
    alpha: float = 0.01,
    parallel: bool = True,
) -> ConfoundReport:
    """Run the three analyses on ``scores`` (or on a ready language table) and return the report."""
    table = language_table(scores, parallel=parallel) if isinstance(scores, LMScores) else scores
    metrics = _metrics_present(table, metrics)
    has_vocab = "vocab_size" in table.columns and (table["vocab_size"].astype(float) > 0).sum() > 0 \
        and table.groupby("lang")["vocab_size"].nunique().max() > 1
    vocab = vocab_sensitivity(table, metrics) if has_vocab else pd.DataFrame()
    has_variants = "variant" in table.columns and table.groupby(["setting", "lang"])["variant"].nunique().max() > 1
    translation = translation_stability(table, metrics) if has_variants else pd.DataFrame()
    return ConfoundReport(language_table=table, lengths=length_correlations(table, metrics), vocab=vocab,
                          translation=translation, alpha=alpha,
                          excluded=dict(scores.excluded) if isinstance(scores, LMScores) else {})
