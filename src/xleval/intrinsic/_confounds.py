"""Confound analyses of intrinsic metrics (the three criteria of "Apples to Apples?").

Everything starts from a model-level *language table* (:func:`language_table`: one row per
setting x language x variant with the corpus-level metrics and the lengths of the same
sentences). Then:

1. anomalous runs are flagged and left out, with a note (:func:`flag_anomalies`);
2. the table is split into strata that are never pooled: tokenizer algorithm and model family
   (a BPE model and a Unigram model of the same size are different instruments);
3. **length confounds** (:func:`length_tests`): within each stratum, does the metric follow the
   length of the text in tokens, characters or bytes across languages? The unit of analysis is
   the *language*: characters and bytes are properties of the text, constant across the models
   of a language, so the models of one language are repeated measures, not independent points
   (:func:`unit_table` averages them). The pooled model-level view (``level="model"``) is
   available on request and labelled pseudo-replicated. Pearson tests (:func:`xleval.stats.correlation`,
   scipy) get a Holm correction over the whole table (statsmodels) and the power to detect a
   given correlation (Fisher z approximation), so that "not significant" is read for what it is;
4. vocabulary sensitivity and translation stability (:mod:`._stability`), per stratum.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.progress import Progress, Steps
from xleval._base.result import Result
from xleval.exceptions import InputError
from xleval.stats import correlation
from xleval.stats._validate import check_choice, check_probability

from ._anomalies import RUN_KEYS, flag_anomalies
from ._corpus import AGGREGATION, _sums, one_model_per_run, parallel_items
from ._scores import LMScores, metrics_from_sums
from ._stability import stability_summary, strata_groups, translation_stability, vocab_sensitivity

__all__ = [
    "CONFOUND_METRICS",
    "LENGTHS",
    "LEVELS",
    "STRATA",
    "ConfoundReport",
    "analyze_confounds",
    "correlation_power",
    "language_table",
    "length_tests",
    "unit_table",
]

# bpt and sent_nll_bits are token_nll and sent_nll rescaled: the same tests, counted twice by Holm.
CONFOUND_METRICS = ("sent_nll", "token_nll", "ppl", "bpc", "bpb")
LENGTHS = ("tokens", "chars", "bytes")
LEVELS = ("language", "model")
STRATA = ("tokenizer_algo", "model_family")
_EXTRA = ("vocab_size", "tokenizer_algo", "model_family", "model")


def _length_col(length: str) -> str:
    return f"{length}_per_sentence"


# ----------------------------------------------------------------------------- tables
def language_table(scores: LMScores, *, parallel: bool = True, extra: Sequence[str] = _EXTRA) -> pd.DataFrame:
    """One row per (setting, lang, variant): corpus metrics (ratio of sums) and length measures
    (mean tokens/chars/bytes per sentence; ``ctc`` = total tokens), plus the ``extra`` columns
    of the scores (first value per row). With ``parallel`` only the items present for every
    language and variant of a setting are used (drops are counted in a warning)."""
    table = scores.table
    one_model_per_run(table, "setting", "language table")  # rows are (setting, lang, variant): never pool models
    if parallel:
        parts = []
        for setting, rows in table.groupby("setting", sort=True):
            sides = list(rows[["lang", "variant"]].drop_duplicates().itertuples(index=False, name=None))
            kept, _ = parallel_items(rows, sides, ["lang", "variant"], f"language table (setting={setting})")
            parts.append(kept)
        table = pd.concat(parts) if parts else table.iloc[:0]
    sums = _sums(table, RUN_KEYS)
    values = metrics_from_sums(sums["nll"], sums["tokens"], sums["chars"], sums["bytes"], sums["n_sentences"])
    n = sums["n_sentences"].to_numpy(dtype=float)
    out = sums.assign(**values, **{_length_col(s): sums[s] / n for s in LENGTHS}, ctc=sums["tokens"])
    present = [c for c in extra if c in table.columns]
    if present:
        first = table.groupby(RUN_KEYS, sort=True)[present].first().reset_index()
        out = out.merge(first, on=RUN_KEYS, how="left")
    out.attrs["aggregation"] = AGGREGATION
    return out


def unit_table(lang_table: pd.DataFrame, *, level: str = "language", strata: Sequence[str] = (),
               metrics: Sequence[str] = CONFOUND_METRICS) -> tuple[pd.DataFrame, list[str]]:
    """The table the length tests run on, and notes on how it was built.

    ``level="language"``: one row per stratum x language, each metric and length averaged over
    the settings (e.g. vocabulary sizes) of the stratum that *every* language of the stratum
    has, so that no language mean rests on a different set of models (``n_settings`` says how
    many). ``level="model"``: the model-level rows as they are (pseudo-replicated when a
    language has several).
    """
    check_choice(level, "level", LEVELS)
    values = [c for c in (*metrics, *map(_length_col, LENGTHS)) if c in lang_table.columns]
    if level == "model":
        return lang_table.assign(n_settings=1), []
    parts, notes = [], []
    for stratum, rows in strata_groups(lang_table, strata):
        settings_per_lang = rows.groupby("lang")["setting"].agg(set)
        common = set.intersection(*settings_per_lang) if len(settings_per_lang) else set()
        label = _label(stratum)
        if common and len(common) < rows["setting"].nunique():
            dropped = sorted(set(rows["setting"]) - common)
            notes.append(f"{label}: language means over the {len(common)} setting(s) every language has; "
                         f"left out of the means: {', '.join(map(str, dropped))}")
        elif not common:
            common = set(rows["setting"])
            notes.append(f"{label}: no setting is shared by every language; language means mix different settings")
        kept = rows[rows["setting"].isin(common)]
        means = kept.groupby("lang", sort=True)[values].mean()
        means["n_settings"] = kept.groupby("lang", sort=True)["setting"].nunique()
        means["n_runs"] = kept.groupby("lang", sort=True).size()
        parts.append(means.reset_index().assign(**stratum))
    return (pd.concat(parts, ignore_index=True) if parts else lang_table.iloc[:0]), notes


def _label(stratum: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in stratum.items()) or "all runs"


# ----------------------------------------------------------------------------- length tests
def correlation_power(r: float, n: int, alpha: float) -> float:
    """Power of the two-sided test of zero correlation at ``alpha`` to detect a true ``r`` with
    ``n`` units (Fisher z approximation: ``atanh(r) sqrt(n - 3)`` against the normal quantile);
    NaN for n <= 3."""
    from scipy.stats import norm

    if n <= 3:
        return float("nan")
    shift = math.atanh(abs(r)) * math.sqrt(n - 3)
    crit = norm.ppf(1 - alpha / 2)
    return float(norm.cdf(shift - crit) + norm.cdf(-shift - crit))


def length_tests(table: pd.DataFrame, metrics: Sequence[str] = CONFOUND_METRICS, lengths: Sequence[str] = LENGTHS, *,
                 strata: Sequence[str] = (), alpha: float = 0.01, power_r: float = 0.5,
                 level: str = "language") -> pd.DataFrame:
    """Pearson correlation of each metric with each length measure within each stratum of
    ``table`` (a :func:`unit_table`): one row per test with ``metric``, ``length``, the stratum
    columns, ``n``, ``r`` with its Fisher CI, ``p``, ``p_holm`` (Holm over every test of the
    table), ``confounded`` (``p_holm < alpha``), ``power`` (to detect ``|r| = power_r`` at
    ``alpha``, before the correction), the ``finding`` in a word (``yes``, ``before Holm only``, ``no evidence``,
    ``not tested``) and a ``verdict`` in words. Tests with fewer than 3 units are listed with the reason and no
    p-value."""
    check_probability(alpha, "alpha")
    check_probability(power_r, "power_r")
    unit = "languages" if level == "language" else "models (pseudo-replicated: several per language)"
    rows = []
    for stratum, part in strata_groups(table, strata):
        for metric in metrics:
            for length in lengths:
                if metric in part.columns and _length_col(length) in part.columns:
                    rows.append({**stratum, "metric": metric, "length": length, "level": level,
                                 **_one_test(part, metric, length)})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["p_holm"] = _holm(out["p"].to_numpy(dtype=float))
    out["confounded"] = out["p_holm"] < alpha
    out["power"] = [correlation_power(power_r, int(n), alpha) for n in out["n"]]
    m = int(np.isfinite(out["p"].to_numpy(dtype=float)).sum())
    records = out.to_dict(orient="records")
    out["finding"] = [_finding(row, alpha) for row in records]
    out["verdict"] = [_verdict(row, alpha, power_r, m, unit) for row in records]
    return out


def _one_test(part: pd.DataFrame, metric: str, length: str) -> dict[str, Any]:
    x = part[_length_col(length)].to_numpy(dtype=float)
    y = part[metric].to_numpy(dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    n = int(keep.sum())
    nan = float("nan")
    if n < 3 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        why = f"n = {n}" if n < 3 else f"{metric} or {length} constant over the {n}"
        return {"n": n, "r": nan, "ci_low": nan, "ci_high": nan, "p": nan, "untested": why}
    res = correlation(x[keep], y[keep], "pearson")
    return {"n": n, "r": res.estimate, "ci_low": res.ci_low, "ci_high": res.ci_high, "p": res.p_value, "untested": None}


def _holm(p: np.ndarray) -> np.ndarray:
    from statsmodels.stats.multitest import multipletests

    out = np.full(len(p), np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def _finding(row: Mapping[str, Any], alpha: float) -> str:
    """A test's verdict in a word: a False "confounded" reads as "not confounded" where ten languages give the test
    power 0.13 (the Apples PUD runs), so a test that finds nothing says "no evidence"."""
    if isinstance(row.get("untested"), str):
        return "not tested"
    return "yes" if row["confounded"] else "before Holm only" if row["p"] < alpha else "no evidence"


def _verdict(row: Mapping[str, Any], alpha: float, power_r: float, m: int, unit: str) -> str:
    n, length, finding = row["n"], row["length"], _finding(row, alpha)
    if finding == "not tested":
        return f"not tested: {row['untested']} {unit} (a correlation needs at least 3 distinct values)"
    stats = f"r = {row['r']:+.2f}, p = {_fmt(row['p'])}, Holm-adjusted p = {_fmt(row['p_holm'])}"
    if finding == "yes":
        return f"confounded with {length} at alpha = {alpha:g} with n = {n} {unit} ({stats})"
    if finding == "before Holm only":
        return (f"significant at alpha = {alpha:g} only before the Holm correction over {m} tests, "
                f"n = {n} {unit} ({stats})")
    power = row["power"]
    power_text = f"; power to detect |r| = {power_r:g} is {power:.2f}" if np.isfinite(power) else ""
    return f"no evidence of a {length} confound at alpha = {alpha:g} with n = {n} {unit} ({stats}){power_text}"


def _fmt(p: float) -> str:
    return "nan" if not np.isfinite(p) else (f"{p:.1e}" if p < 1e-3 else f"{p:.3f}")


# ----------------------------------------------------------------------------- report
@dataclass(frozen=True, eq=False)
class ConfoundReport(Result):
    """The confound analyses of one corpus.

    ``tests``: the length tests (one row per stratum x metric x length; see
    :func:`length_tests`); ``level``: their unit (``language`` or the pseudo-replicated
    ``model``); ``n_languages``: languages in the analysed table; ``strata``: the columns whose
    values are analysed separately; ``anomalies``: runs left out and why; ``vocab`` and
    ``translation`` (+ ``translation_summary``): the other two criteria, per stratum;
    ``unit_table``: the table the tests ran on; ``language_table``: the model-level table.
    ``to_dict()`` leads with the settings and :meth:`summary`, then the tables.
    """

    _dump_extra = ("summary",)
    _dump_order = ("level", "n_languages", "alpha", "power_r", "strata", "aggregation", "summary", ...)

    level: str
    n_languages: int
    alpha: float
    power_r: float
    strata: tuple[str, ...]
    tests: pd.DataFrame
    anomalies: pd.DataFrame
    vocab: pd.DataFrame
    translation: pd.DataFrame
    translation_summary: pd.DataFrame
    unit_table: pd.DataFrame
    language_table: pd.DataFrame
    aggregation: str = AGGREGATION
    excluded: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row per stratum and metric: the lengths it is confounded with (Holm, ``alpha``),
        its strongest correlation, the power of the tests, vocabulary sensitivity and the
        settings whose language order depends on the translation."""
        keys = [c for c in self.strata if c in self.tests.columns]
        rows = []
        if not self.tests.empty:
            for group, t in self.tests.groupby([*keys, "metric"], sort=False):
                key = group if isinstance(group, tuple) else (group,)
                row: dict[str, Any] = dict(zip([*keys, "metric"], key, strict=True))
                tested = t[t["p"].notna()]
                row["n"] = int(t["n"].max())
                row["confounded_with"] = ", ".join(tested.loc[tested["confounded"], "length"]) or "-"
                if len(tested):
                    top = tested.loc[tested["r"].abs().idxmax()]
                    row.update({"max_abs_r": float(top["r"]), "max_abs_r_length": top["length"],
                                "p_holm": float(top["p_holm"]), "power": float(top["power"])})
                # key is (*keys, metric): the metric is row["metric"]
                row.update(self._other_criteria(dict(zip(keys, key[:-1], strict=True)), row["metric"]))
                rows.append(row)
        return pd.DataFrame(rows)

    def _other_criteria(self, stratum: dict[str, Any], metric: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, table, cols in (("vocab", self.vocab, ("rel_range_median", "rho_median", "ranking_tau_mean")),
                                  ("translation", self.translation_summary, ("settings_with_flip", "n_settings"))):
            if table.empty:
                continue
            match = table["metric"] == metric
            for k, v in stratum.items():
                if k in table.columns:
                    match &= table[k].astype(object) == v
            if match.any():
                first = table[match].iloc[0]
                out.update({f"{name}_{c}": first.get(c) for c in cols if c in table.columns})
        return out



def analyze_confounds(
    scores: LMScores | pd.DataFrame,
    metrics: Sequence[str] | None = None,
    *,
    level: str = "language",
    alpha: float = 0.01,
    power_r: float = 0.5,
    strata: Sequence[str] | None = None,
    parallel: bool = True,
    empty_runs: Iterable[Mapping[str, Any]] = (),
    progress: Progress | None = None,
) -> ConfoundReport:
    """Flag and leave out anomalous runs, then run the length tests (at ``level``), vocabulary
    sensitivity and translation stability within each stratum.

    ``scores``: :class:`LMScores` or a ready model-level language table. ``strata``: the
    columns whose values are never pooled (default: those of :data:`STRATA` present).
    ``level="model"`` is the pooled sensitivity view (pseudo-replicated when a language has
    several models). ``alpha``: level of the Holm-corrected tests; ``power_r``: the correlation
    whose detection power is reported. ``progress``: told of each finished step (anomalies and
    units, length tests, vocabulary and translation).
    """
    check_choice(level, "level", LEVELS)
    check_probability(alpha, "alpha")
    check_probability(power_r, "power_r")
    if isinstance(scores, LMScores):
        table = language_table(scores, parallel=parallel)
        empty_runs, excluded = scores.empty_runs, dict(scores.excluded)
    else:
        table, excluded = scores, {}
    metrics = _metrics(table, metrics)
    steps = Steps(progress, 3)
    strata = tuple(c for c in (STRATA if strata is None else strata) if c in table.columns)
    anomalies = flag_anomalies(table, empty_runs=empty_runs)
    clean, notes = _drop_anomalies(table, anomalies, strata)
    units, unit_notes = unit_table(clean, level=level, strata=strata, metrics=metrics)
    notes += unit_notes + _strata_notes(clean, strata, level)
    metrics, lengths, unknown = _known(units, metrics)
    steps.done()
    if unknown:
        notes.append(f"not in the data (no value at all), so not tested: {', '.join(unknown)}")
    tests = length_tests(units, metrics, lengths, strata=strata, alpha=alpha, power_r=power_r, level=level)
    steps.done()
    for column in STRATA:  # every row names its tokenizer algorithm and model family (null: not in the data)
        if column not in tests.columns:
            tests.insert(0, column, None)
    vocab = vocab_sensitivity(clean, metrics, strata=strata) if _has_vocab_sweep(clean) else pd.DataFrame()
    translation = translation_stability(clean, metrics, strata=strata) if _has_variants(clean) else pd.DataFrame()
    steps.done()
    return ConfoundReport(level=level, n_languages=int(clean["lang"].nunique()), alpha=alpha, power_r=power_r,
                          strata=strata, tests=tests, anomalies=anomalies, vocab=vocab, translation=translation,
                          translation_summary=stability_summary(translation, strata), unit_table=units,
                          language_table=clean, excluded=excluded, notes=tuple(notes))


def _metrics(table: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    wanted = list(metrics) if metrics else list(CONFOUND_METRICS)
    unknown = [m for m in wanted if m not in table.columns]
    if metrics and unknown:
        raise InputError(f"metric(s) {unknown} are not in the language table; choose from {list(CONFOUND_METRICS)}")
    present = [m for m in wanted if m in table.columns]
    if not present:
        raise InputError(f"no metric columns in the language table; expected some of {list(CONFOUND_METRICS)}")
    return present


def _known(units: pd.DataFrame, metrics: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The metrics and lengths with at least one value (token counts are unknown for lm-eval
    samples, for instance), and the names of the others."""
    def known(col: str) -> bool:
        return col in units.columns and bool(np.isfinite(units[col].to_numpy(dtype=float)).any())

    kept_m = [m for m in metrics if known(m)]
    kept_l = [x for x in LENGTHS if known(_length_col(x))]
    unknown = [m for m in metrics if m not in kept_m] + [f"{x} per sentence" for x in LENGTHS if x not in kept_l]
    return kept_m, kept_l, unknown


def _drop_anomalies(table: pd.DataFrame, anomalies: pd.DataFrame,
                    strata: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    notes: list[str] = []
    if anomalies.empty:
        return table, notes
    runs = anomalies.drop_duplicates(RUN_KEYS)
    flagged = table.set_index(RUN_KEYS).index.isin(runs.set_index(RUN_KEYS).index)
    for stratum, rows in strata_groups(runs, strata):
        empty = int(rows["value"].isna().sum())
        langs = ", ".join(sorted(map(str, rows["lang"].unique())))
        notes.append(f"{_label(stratum)}: {len(rows)} anomalous run(s) left out (languages {langs}; "
                     f"{empty} with no usable value, {len(rows) - empty} worse than a uniform model): see 'anomalies'")
    return table[~flagged], notes


def _strata_notes(table: pd.DataFrame, strata: Sequence[str], level: str) -> list[str]:
    notes = []
    if strata:
        groups = [_label(s) for s, _ in strata_groups(table, strata)]
        if len(groups) > 1:
            notes.append(f"analysed separately, never pooled: {'; '.join(groups)}")
    else:
        notes.append("no tokenizer_algo or model_family column: every run is analysed as one stratum; "
                     "if the runs differ in tokenizer algorithm or model family, add the column")
    repeated = len(table) > 0 and table.groupby([*strata, "lang"]).size().max() > 1
    if level == "model" and repeated:
        notes.append("level 'model' is a pseudo-replicated sensitivity view: a language's models share its text "
                     "(its characters and bytes), so they are not independent points and the p-values are optimistic")
    return notes


def _has_vocab_sweep(table: pd.DataFrame) -> bool:
    if "vocab_size" not in table.columns or table.empty:
        return False
    sizes = pd.to_numeric(table["vocab_size"], errors="coerce")
    return bool((sizes > 0).any()) and table[sizes > 0].groupby("lang")["vocab_size"].nunique().max() > 1


def _has_variants(table: pd.DataFrame) -> bool:
    return not table.empty and table.groupby(["setting", "lang"])["variant"].nunique().max() > 1
