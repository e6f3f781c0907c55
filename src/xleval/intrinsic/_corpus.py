"""Corpus-level metrics (ratios of sums), information parity and length premiums.

Cross-language numbers are computed on **parallel rows only**: the items present for every
language compared within a setting. Items missing on one side are counted and reported
(``DataQualityWarning``), never silently dropped or averaged in.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.result import Result
from xleval._base.seeding import resolve_seed
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import normalize_code
from xleval.stats import bootstrap_sums

from ._scores import METRIC_UNITS, METRICS, STATS, LMScores, metrics_from_sums

__all__ = ["CorpusMetrics", "corpus_metrics", "information_parity", "length_premiums", "parallel_items"]

AGGREGATION = "ratio of sums over the sentences of each group (never a mean of per-sentence ratios)"


@dataclass(frozen=True, eq=False)
class CorpusMetrics(Result):
    """One row per group: sums of the sufficient statistics and every metric from them (with
    bootstrap CIs when asked; ``random_state`` is the seed every metric's resamples share).
    ``to_dict()`` gives the table as ``rows``, last."""

    _dump_order = (..., "rows")

    table: pd.DataFrame = field(metadata={"key": "rows"})
    by: tuple[str, ...]
    aggregation: str = AGGREGATION
    units: dict[str, str] = field(default_factory=lambda: dict(METRIC_UNITS))
    excluded: dict[str, int] = field(default_factory=dict)
    random_state: int | None = None
    #: groups whose numbers no trained model produces (:func:`~xleval.intrinsic.flag_anomalies`): kept in the
    #: table, listed here and warned about
    anomalies: pd.DataFrame = field(default_factory=pd.DataFrame)


def _sums(table: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    # min_count=1 keeps "unknown" (all NaN) as NaN; a partly unknown group becomes NaN below.
    # dropna=False: a row whose group value is missing forms its own group instead of vanishing.
    g = table.groupby(list(by), sort=True, observed=True, dropna=False)
    sums = g[list(STATS)].sum(min_count=1)
    unknown = g[list(STATS)].agg(lambda s: s.isna().any())
    sums = sums.mask(unknown)
    sums.insert(0, "n_sentences", g.size())
    return sums.reset_index()


def corpus_metrics(
    scores: LMScores,
    by: Sequence[str] = ("lang", "model", "variant"),
    *,
    ci: bool = False,
    n_resamples: int = 1000,
    level: float = 0.95,
    random_state: Any = None,
) -> CorpusMetrics:
    """Corpus metrics per group of ``by`` (ratio of sums). With ``ci=True`` each metric gets a
    bootstrap interval over the group's sentences (``<metric>_ci_low``/``_ci_high``)."""
    by = _check_by(scores.table, by)
    sums = _sums(scores.table, by)
    values = metrics_from_sums(sums["nll"], sums["tokens"], sums["chars"], sums["bytes"], sums["n_sentences"])
    table = sums.rename(columns={s: f"{s}_sum" for s in STATS}).assign(**values)
    seed = None
    if ci:
        seed = resolve_seed(random_state)  # one seed: every metric and group is resampled reproducibly
        table = _add_cis(scores.table, table, by, n_resamples, level, seed)
    anomalies = _anomalous_groups(table)
    return CorpusMetrics(table=table, by=tuple(by), excluded=dict(scores.excluded), random_state=seed,
                         anomalies=anomalies)


def _anomalous_groups(table: pd.DataFrame) -> pd.DataFrame:
    """The groups worse than a model that knows nothing (the confound analysis's rule, which leaves such runs
    out): listed, and said in one DataQualityWarning; the corpus table keeps them, as computed."""
    from ._anomalies import flag_anomalies

    found = flag_anomalies(table)
    if found.empty:
        return found
    keys = [c for c in ("model", "lang", "variant", "setting") if c in found.columns]
    first = found.iloc[0]
    named = ", ".join(f"{k} {first[k]}" for k in keys if pd.notna(first[k]) and str(first[k]) != "")
    groups = found[keys].drop_duplicates() if keys else found
    warnings.warn(f"{len(groups)} group(s) have corpus metrics no trained model produces, e.g. {named}: "
                  f"{first['reason']}; a failed or mis-scored run is likely (the confound analysis leaves such "
                  "runs out: docs/intrinsic.md); their rows are in the table as computed, and listed in anomalies",
                  DataQualityWarning, stacklevel=3)
    return found.reset_index(drop=True)


def _check_by(table: pd.DataFrame, by: Sequence[str]) -> list[str]:
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in table.columns]
    if missing:
        raise InputError(f"group columns {missing} are not in the scores; available: {list(table.columns)}")
    return by


def _add_cis(rows: pd.DataFrame, table: pd.DataFrame, by: list[str], n_resamples: int, level: float,
             random_state: Any) -> pd.DataFrame:
    lows: dict[str, list[float]] = {m: [] for m in METRICS}
    highs: dict[str, list[float]] = {m: [] for m in METRICS}
    for _, group in rows.groupby(by, sort=True, observed=True, dropna=False):  # the groups of _sums, in its order
        stats = np.column_stack([group[c].to_numpy(dtype=float) for c in STATS] + [np.ones(len(group))])
        # A canonical row order (identical rows are interchangeable): the interval does not depend on the
        # order of the input rows, only on the seed.
        stats = stats[np.lexsort(stats.T[::-1])]
        for m in METRICS:
            lo, hi = _metric_ci(stats, m, n_resamples, level, random_state)
            lows[m].append(lo)
            highs[m].append(hi)
    extra = {f"{m}_ci_{side}": vals[m] for m in METRICS for side, vals in (("low", lows), ("high", highs))}
    return table.assign(**extra)


def _metric_ci(stats: np.ndarray, metric: str, n_resamples: int, level: float,
               random_state: Any) -> tuple[float, float]:
    if np.isnan(stats).any() or len(stats) < 2:
        return float("nan"), float("nan")
    est = bootstrap_sums(stats,
                         lambda s: metrics_from_sums(s[..., 0], s[..., 1], s[..., 2], s[..., 3], s[..., 4])[metric],
                         n_resamples=n_resamples, level=level, random_state=random_state)
    return est.ci_low, est.ci_high


# ----------------------------------------------------------------------------- parallel rows
def parallel_items(table: pd.DataFrame, sides: Sequence[tuple[Any, ...]], side_cols: Sequence[str],
                   context: str) -> tuple[pd.DataFrame, dict[str, int]]:
    """Keep the items present for every side (a tuple of ``side_cols`` values) of ``table``;
    warn with the count of rows dropped per side."""
    keyed = table.set_index(list(side_cols))
    item_sets = [set(keyed.loc[[s], "item"]) if s in keyed.index else set() for s in sides]
    common = set.intersection(*item_sets) if item_sets else set()
    dropped = {"/".join(map(str, s)): len(items - common)
               for s, items in zip(sides, item_sets, strict=True) if items - common}
    if dropped:
        detail = ", ".join(f"{k}: {v}" for k, v in dropped.items())
        warnings.warn(f"{context}: rows without a parallel row in every language were left out ({detail}); "
                      f"compared on the {len(common)} common item(s)", DataQualityWarning, stacklevel=3)
    return table[table["item"].isin(common)], dropped


def one_model_per_run(table: pd.DataFrame, by: str, what: str) -> None:
    """A ``by`` group (setting) compares one model per language and variant: with two, their rows would be
    pooled into one language value or one would be dropped. Raise, naming the first such run."""
    if "model" not in table.columns or table.empty:
        return
    keys = [by, "lang", "variant"] if "variant" in table.columns else [by, "lang"]
    models = table.groupby(keys, sort=True, dropna=False)["model"].unique()
    several = models[models.map(len) > 1]
    if len(several):
        key = several.index[0]
        names = ", ".join(repr(str(m)) for m in sorted(map(str, several.iloc[0])))
        raise InputError(f"{what}: {by} {key[0]!r} has {len(several.iloc[0])} models for language {key[1]!r} "
                         f"({names}); a {by} compares one model per language: give each model its own {by} "
                         "(or drop the 'setting' column: it then defaults to the model), or keep one model")


def _per_setting_ratio(scores: LMScores | pd.DataFrame, columns: Sequence[str], reference: str, by: str,
                       what: str) -> pd.DataFrame:
    table = scores.table if isinstance(scores, LMScores) else scores
    if by not in table.columns:
        raise InputError(f"{what}: column {by!r} is not in the input; give by= one of {list(table.columns)}")
    one_model_per_run(table, by, what)
    ref = normalize_code(reference)
    out = []
    for setting, rows in table.groupby(by, sort=True, observed=True):
        out.extend(_ratios_in_setting(rows, columns, ref, by, setting, what))
    if not out:
        raise InputError(f"{what}: the reference language {reference!r} has no rows; languages present: "
                         f"{sorted(table['lang'].unique())}")
    return pd.DataFrame(out)


def _ratios_in_setting(rows: pd.DataFrame, columns: Sequence[str], ref: str, by: str, setting: Any,
                       what: str) -> list[dict[str, Any]]:
    ref_rows = rows[rows["lang"] == ref]
    if ref_rows.empty:
        return []
    ref_variant = sorted(ref_rows["variant"].unique())[0]
    ref_rows = ref_rows[ref_rows["variant"] == ref_variant]
    out = []
    for (lang, variant), side in rows.groupby(["lang", "variant"], sort=True):
        pair = pd.concat([ref_rows, side]).drop_duplicates(["lang", "variant", "item"])
        kept, _ = parallel_items(pair, [(ref, ref_variant), (lang, variant)], ["lang", "variant"],
                                 f"{what} ({by}={setting}, {lang} vs {ref})")
        a = kept[(kept["lang"] == ref) & (kept["variant"] == ref_variant)]
        b = kept[(kept["lang"] == lang) & (kept["variant"] == variant)]
        row = {by: setting, "lang": lang, "variant": variant, "reference": ref, "n_items": len(b)}
        for col in columns:
            row[f"{col}_reference_sum"], row[f"{col}_sum"] = a[col].sum(min_count=1), b[col].sum(min_count=1)
        out.append(row)
    return out


def information_parity(scores: LMScores, reference: str = "en", *, by: str = "setting") -> pd.DataFrame:
    """Information parity (Tsvetkov & Kipnis 2024): ``IP_l = NLL_ref / NLL_l`` on parallel rows,
    as a ratio of sums over the common items, per ``by`` group (the models compared together).

    IP = 1 when the model needs as much information for language l as for the reference;
    IP < 1 when l costs more nats. The reference language gets IP = 1 by construction.
    """
    out = _per_setting_ratio(scores, ["nll"], reference, by, "information parity")
    out["information_parity"] = out["nll_reference_sum"] / out["nll_sum"]
    out["aggregation"] = "sum(NLL_ref) / sum(NLL_l) over common items"
    return out


def length_premiums(data: LMScores | pd.DataFrame, reference: str = "en", *, by: str = "setting") -> pd.DataFrame:
    """Byte premium, length (character) premium and token premium of each language relative to
    ``reference`` on parallel rows (Arnett et al. 2024): ``sum(bytes_l) / sum(bytes_ref)`` etc.,
    plus the corpus token count (CTC) of each language on the common items.

    ``data`` is an :class:`LMScores` or a table with ``lang``, ``item``, ``by`` (default
    ``setting``), optional ``variant`` and the columns ``chars``/``bytes``/``tokens`` (or ``text``).
    """
    table = data.table if isinstance(data, LMScores) else _length_frame(data, by)
    out = _per_setting_ratio(table, ["bytes", "chars", "tokens"], reference, by, "length premium")
    out["byte_premium"] = out["bytes_sum"] / out["bytes_reference_sum"]
    out["length_premium"] = out["chars_sum"] / out["chars_reference_sum"]
    out["token_premium"] = out["tokens_sum"] / out["tokens_reference_sum"]
    out["ctc"] = out["tokens_sum"]
    return out


def _length_frame(df: pd.DataFrame, by: str) -> pd.DataFrame:
    from xleval.io import normalize_codes

    from ._lengths import count_bytes, count_chars

    if "lang" not in df.columns or "item" not in df.columns:
        raise InputError(f"length premiums need columns 'lang' and 'item'; got {list(df.columns)}")
    t = df.copy()
    t["lang"] = normalize_codes(t["lang"], "lang")
    t["variant"] = t["variant"].fillna("").astype(str) if "variant" in t.columns else ""
    if by not in t.columns:
        t[by] = "all"
    for col, counter in (("chars", count_chars), ("bytes", count_bytes)):
        if col not in t.columns:
            t[col] = counter(t["text"].astype(str)).astype(float) if "text" in t.columns else np.nan
    if "tokens" not in t.columns:
        t["tokens"] = np.nan
    return t
