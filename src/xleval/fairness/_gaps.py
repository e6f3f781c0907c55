"""The four-dimension gap analysis of one model over a long table of per-item results.

Resampling is done by :func:`xleval.stats.bootstrap`, once per language: with independent test
sets each language's items are resampled on their own (a bootstrap stratified by language: every
resample keeps every language at its size, so a language with 1-5 items never vanishes, and it
is flagged "unreliable"); with parallel items (``item=``) every language uses the same seed, so
resample b draws the same items in every language (a paired bootstrap). Every summary (ratios,
differences, the mean / worst / spread across languages) is then a function of each resample's
vector of language means, with a percentile interval; one pass over the data serves them all.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, cast, overload

import numpy as np
import pandas as pd

from xleval._base.progress import Progress, Steps
from xleval._base.seeding import child_seeds, resolve_seed
from xleval.exceptions import DataQualityWarning, InputError, LanguageCodeError, PooledPairsWarning, warn_again
from xleval.fairness._elasticity import resource_elasticity
from xleval.fairness._results import Elasticity, FairnessReport, GapSummary, LanguageGap, TypologyBias
from xleval.fairness._typology import typology_bias
from xleval.io import (
    add_language_columns,
    family_of,
    normalize_code,
    normalize_codes,
    script_of,
    split_lp,
    to_numeric_column,
)
from xleval.metrics._direction import higher_is_better as metric_direction
from xleval.stats import FRESH_RESAMPLING, Estimate, Resampling, bootstrap, estimate_from_distribution
from xleval.table import POOLED_PAIRS_WORDS, pooled_pairs_note, require_columns

__all__ = ["fairness_gaps", "fairness_gaps_by", "ResourceFit", "DEFAULT_RESOURCE_FIT", "DERIVED_FEATURES"]

DERIVED_FEATURES = {"script": script_of, "family": family_of}  # typology features read off the language code
Reducer = Callable[[np.ndarray], np.ndarray]
MIN_ITEMS = 5  # the stats engine flags strata below this size as unreliable


# ----------------------------------------------------------------------------- designs
class _Independent:
    """Each language has its own items: a bootstrap stratified by language, i.e. each language's
    items are resampled on their own (independent seeds), and every resample has every language."""

    name = "independent"

    def __init__(self, values: np.ndarray, codes: np.ndarray, labels: list[str]):
        # Each language's values in a canonical (sorted) order: the resamples drawn with a seed then depend on
        # the data, not on the order of the input rows (equal values are interchangeable).
        order = np.lexsort((values, codes))
        self.values, self.codes, self.labels = values[order], codes[order], labels
        self.counts = np.bincount(codes, minlength=len(labels))

    def language_values(self, g: int) -> np.ndarray:
        return self.values[self.codes == g]

    def language_means(self, seed: int, kw: dict) -> list[Estimate]:
        seeds = child_seeds(seed, len(self.labels))
        return [bootstrap(self.language_values(g), "mean", random_state=seeds[g], **kw)
                for g in range(len(self.labels))]


class _Paired:
    """Parallel items: rows of an (items x languages) matrix are resampled together (one seed
    for every language, so resample b draws the same items in each)."""

    name = "paired"

    def __init__(self, matrix: np.ndarray, labels: list[str]):
        self.matrix, self.labels = matrix, labels
        self.counts = np.full(matrix.shape[1], matrix.shape[0])

    def language_values(self, g: int) -> np.ndarray:
        return self.matrix[:, g]

    def language_means(self, seed: int, kw: dict) -> list[Estimate]:
        return [bootstrap(self.matrix[:, g], "mean", random_state=seed, **kw) for g in range(len(self.labels))]


class _Joint:
    """Statistics of the language means over the engine's resamples.

    ``draws`` is the (B, G) matrix of resampled language means (column g = the distribution of
    language g's bootstrap, drawn by :func:`xleval.stats.bootstrap`); a summary such as a ratio or
    the worst language is a function of each row, with a percentile interval.
    """

    def __init__(self, design, estimates: list[Estimate], level: float, seed: int):
        self.point = np.array([e.estimate for e in estimates])
        # bootstrap estimates keep their distribution
        self.draws = np.column_stack(cast("list[np.ndarray]", [e.distribution for e in estimates]))
        self.level, self.seed, self.n = level, seed, int(design.counts.sum())
        self.label = f"bootstrap-{'stratified' if design.name == 'independent' else 'paired'}"
        self.design, self.estimates = design, estimates
        self.notes = _language_notes(design, estimates)

    def estimate(self, reducer: Reducer, languages: Sequence[int] | None = None) -> Estimate:
        """``languages``: the columns the reducer reads (a ratio to the reference reads two); only their notes
        are carried (a language of one item must not flag another language's ratio as unreliable). None: all."""
        with np.errstate(divide="ignore", invalid="ignore"):
            point = float(reducer(self.point))
            dist = np.asarray(reducer(self.draws), dtype=float)
        notes = self.notes if languages is None else _language_notes(self.design, self.estimates, languages)
        return estimate_from_distribution(point, dist, n=self.n, level=self.level, label=self.label,
                                          random_state=self.seed, notes=notes)


def _language_notes(design, estimates: list[Estimate], languages: Sequence[int] | None = None) -> tuple[str, ...]:
    if design.name == "paired":
        return estimates[0].notes
    chosen = range(len(estimates)) if languages is None else languages
    notes = [f"{design.labels[g]}: {note}" for g in chosen for note in estimates[g].notes]
    return tuple(dict.fromkeys(notes))


# ----------------------------------------------------------------------------- public API
@dataclass(frozen=True)
class ResourceFit:
    """How :func:`fairness_gaps` fits performance on ln(data size) across languages
    (:func:`resource_elasticity`): ``log_performance`` fits the log of the metric instead of the metric;
    ``target_gain``: the gain (metric units; with the log model a factor > 0, e.g. 1.2 for +20 %) whose data
    multiplier ``exp(gain / b)`` is reported (None: none). ``with_(...)`` changes some settings."""

    log_performance: bool = False
    target_gain: float | None = None

    def with_(self, **changes: Any) -> ResourceFit:
        """These settings with some changed."""
        return replace(self, **changes)


DEFAULT_RESOURCE_FIT = ResourceFit()


def fairness_gaps(
    data: pd.DataFrame,
    metric: str,
    by: str = "lang",
    *,
    reference: str | None = "en",
    item: str | None = None,
    resource: str | None = None,
    typology: Sequence[str] = (),
    floor: float | None = None,
    higher_is_better: bool | None = None,
    resource_fit: ResourceFit = DEFAULT_RESOURCE_FIT,
    resampling: Resampling = FRESH_RESAMPLING,
    progress: Progress | None = None,
) -> FairnessReport:
    """Per-language level, ratio to ``reference``, resource elasticity and typological bias.

    ``data``: one row per item and language (a score or 0/1 correctness in ``metric``), or one
    row per language (aggregates; CIs are then unavailable and flagged). ``by`` names the
    language column (codes are normalised; ``lp`` columns keep the pair). ``item`` marks
    parallel items (paired design). ``resource``: per-language training-data size (constant
    within a language). ``typology``: per-language feature columns; ``script`` and ``family``
    are derived from the language code when no such column exists. ``floor``: the usability
    floor (e.g. 0.5 for F1 in [0, 1]); with ``higher_is_better=False`` it is a ceiling.
    ``higher_is_better``: the metric's direction; None asks the one rule
    (:func:`xleval.metrics.higher_is_better` on the column's name: ``ter`` is an error rate, else higher).
    ``resource_fit`` (:class:`ResourceFit`): how the resource elasticity is fitted. ``resampling``
    (:class:`xleval.stats.Resampling`): the bootstraps of the CIs (default: a fresh seed, recorded in the report).
    ``progress``: told of each finished step (language means, gaps, elasticity and typology).
    """
    log_performance, target_gain = resource_fit.log_performance, resource_fit.target_gain
    level, n_resamples, random_state = resampling.level, resampling.n_resamples, resampling.random_state
    steps = Steps(progress, 3)
    higher_is_better = metric_direction(metric, given=higher_is_better,
                                        values=data[metric] if metric in data.columns else None)
    if floor is not None and not (isinstance(floor, (int, float)) and math.isfinite(floor)):
        raise InputError(f"floor must be a finite number (a usability floor on the metric's scale); got {floor!r}")
    if by in ("src_lang", "tgt_lang") and by not in data.columns and "lp" in data.columns:
        data = add_language_columns(data, "fairness input")  # MT tables: languages from the pair
    _check_columns(data, metric, by, item, resource, typology)
    frame = _clean(data, metric, by, item)
    langs, labels = _language_keys(frame[by], by)
    ref = _reference(reference, labels, by)
    design = _design(frame, metric, langs, len(labels), item, labels)
    seed = resolve_seed(random_state)  # one seed for every bootstrap of the report: the same resamples
    estimates = design.language_means(seed, {"n_resamples": n_resamples, "level": level})
    joint = _Joint(design, estimates, level, seed)
    steps.done()
    worst = np.min if higher_is_better else np.max
    pooled = _pooled_note(frame, by, langs, labels)
    notes: list[str] = [pooled] if pooled else []
    ratio_ok = ref is not None and _ratio_scale(design, labels, ref, notes)
    sizes = _per_language(frame, resource, langs, labels, "resource") if resource else None
    gaps = _language_gaps(design, joint, estimates, labels, ref, ratio_ok, floor, higher_is_better, sizes)
    summary = _summary(joint, labels, ref, ratio_ok, worst)
    if (design.counts == 1).any():  # one row: a bootstrap of it has no spread, and a zero-width CI claims certainty
        gaps, summary = _single_rows_without_intervals(gaps, summary, ref)
    means = np.array([g.mean.estimate for g in gaps])
    steps.done()
    elasticity = _elasticity(means, sizes, labels, log_performance, target_gain, level, notes)
    typo = _typology(frame, typology, langs, labels, means, sizes, level)
    steps.done()
    small = [f"{g.language} ({g.n})" for g in gaps if g.n < MIN_ITEMS]
    if small:
        notes.append(f"unreliable: languages with fewer than {MIN_ITEMS} items: {', '.join(small)}; their CIs "
                     "(and those of summaries that include them) say little" +
                     ("; with one row per language (aggregates) no per-language CI "
                      "exists" if max(design.counts) == 1 else ""))
    if len(labels) < 2:
        notes.append("only one language: there is no gap to measure")
    return FairnessReport(
        metric=metric, by=by, reference=ref, higher_is_better=higher_is_better, design=design.name, floor=floor,
        languages=tuple(gaps), summary=summary, elasticity=elasticity, typology=typo, level=level,
        n_resamples=n_resamples, random_state=seed, notes=tuple(notes),
    )


def fairness_gaps_by(data: pd.DataFrame, model: str, metric: str, by: str = "lang",
                     **kwargs: Any) -> dict[str, FairnessReport]:
    """:func:`fairness_gaps` for each value of the ``model`` column (one report per model); a
    ``progress`` keyword counts the steps of every model's report."""
    if model not in data.columns:
        raise InputError(f"model column {model!r} not in the table; its columns are {list(data.columns)}")
    if data[model].isna().any():
        raise InputError(f"model column {model!r} has {int(data[model].isna().sum())} empty cell(s); "
                         "name every row's model")
    parts = data.groupby(model, sort=True)
    steps = Steps(kwargs.pop("progress", None), 3 * parts.ngroups)
    reports = {}
    for name, part in parts:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                reports[str(name)] = fairness_gaps(part, metric, by, progress=steps.inner(), **kwargs)
        except InputError as exc:  # the problem is this model's: say which (a reference it lacks, no finite value)
            raise exc.prefixed(f"model {str(name)!r}") from None
        warn_again(caught, prefix=f"model {str(name)!r}: ")  # a warning about one model's rows says which model
    # a group of several pairs is the table's: said once, with the models that have only some of its pairs, not once
    # a model (WMT25 by tgt_lang, one analysis per system: 40 notes)
    if by in ("src_lang", "tgt_lang") and by not in data.columns and "lp" in data.columns:
        data = add_language_columns(data, "fairness input")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows left out were said per model
        frame = _clean(data, metric, by, None)
    pooled = _pooled_note(frame, by, *_language_keys(frame[by], by), system=model)
    if pooled is not None:
        reports = {name: replace(r, notes=tuple(n for n in r.notes if POOLED_PAIRS_WORDS not in n))
                   for name, r in reports.items()}
        warnings.warn(pooled, PooledPairsWarning, stacklevel=2)
    return reports


def _pooled_note(frame: pd.DataFrame, by: str, langs: np.ndarray, labels: list[str],
                 system: str | None = None) -> str | None:
    """:func:`~xleval.table.pooled_pairs_note` of the languages as the analysis reads them (codes normalised: EN and
    en are one), each with the pairs it holds."""
    return pooled_pairs_note(frame.assign(**{by: np.asarray(labels, dtype=object)[langs]}), [by], system)


# ----------------------------------------------------------------------------- input handling
def _check_columns(data: pd.DataFrame, metric: str, by: str, item, resource, typology) -> None:
    for argument, names in (("metric", [metric]), ("by", [by]), ("item", [item] if item else []),
                            ("resource", [resource] if resource else []),
                            ("typology", [c for c in typology if c not in DERIVED_FEATURES])):
        require_columns(data, names, what="table", argument=argument)
    if len(data) == 0:
        raise InputError("the table has no rows; nothing to analyse")
    if item:
        # a missing id would become one "NaN" item, paired across languages as if it were parallel
        missing = data[item].isna().to_numpy() | (data[item].astype(str).str.strip() == "").to_numpy()
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise InputError(f"column {item!r} row {row + 1}: no item id ({int(missing.sum())} such row(s)); a paired "
                             "analysis pairs rows by id: fill the ids, drop those rows, or leave out the item column",
                             argument="item", value=item)


def _clean(data: pd.DataFrame, metric: str, by: str, item: str | None) -> pd.DataFrame:
    frame = data.reset_index(drop=True).copy()
    frame[metric] = to_numeric_column(frame[metric], metric, "fairness input")
    bad = ~np.isfinite(frame[metric].to_numpy())
    if bad.all():
        raise InputError(f"column {metric!r} has no finite values; choose the metric column with metric=",
                         argument="metric", value=metric)
    if bad.any():
        warnings.warn(f"fairness: {int(bad.sum())} of {len(frame)} rows with a NaN/inf {metric!r} left out",
                      DataQualityWarning, stacklevel=3)
        frame = frame.loc[~bad].reset_index(drop=True)
    return frame


def _language_keys(column: pd.Series, by: str) -> tuple[np.ndarray, list[str]]:
    if by == "lp":
        uniques, inverse = np.unique(column.astype(str).to_numpy(), return_inverse=True)
        try:
            keys = np.asarray(["-".join(split_lp(u)) for u in uniques], dtype=object)[inverse]
        except LanguageCodeError as exc:
            raise LanguageCodeError(f"column 'lp': {exc}") from None
    else:
        keys = normalize_codes(column.to_numpy(), by, "fairness input")
    labels, codes = np.unique(keys.astype(str), return_inverse=True)
    return codes.astype(np.intp), [str(x) for x in labels]


def _reference(reference: str | None, labels: list[str], by: str) -> str | None:
    if reference is None:
        return None
    try:
        key = "-".join(split_lp(reference)) if by == "lp" else normalize_code(reference)
    except LanguageCodeError as exc:
        if by == "lp":  # a language ('en', the default) where the groups are language pairs
            near = [lab for lab in labels if reference.lower() in lab.lower().split("-")] or labels
            raise InputError(f"reference={reference!r} is a language, but the groups of {by!r} are language pairs "
                             f"({', '.join(labels)}): pick a pair with reference={near[0]!r}, or pass reference=None "
                             "to skip the ratios", argument="reference", value=reference) from None
        raise InputError(f"reference={reference!r}: {exc}", argument="reference", value=reference) from None
    if key not in labels:
        # 'cs' where the column writes cs-CZ: the same language with a region (WMT25's codes) is named, not taken
        same = [lab for lab in labels if _base_languages(lab, by) == _base_languages(key, by)]
        pick = f"pick {' or '.join(f'reference={lab!r}' for lab in same)}" if same else "pick one with reference="
        raise InputError(
            f"reference language {reference!r} is not in column {by!r} (languages: {', '.join(labels)}); "
            f"{pick}, or pass reference=None to skip the ratios", argument="reference", value=reference
        )
    return key


def _base_languages(code: str, by: str) -> tuple[str, ...]:
    """A language's (a pair's: each side's) language subtag, without script or region: en-de-DE -> (en, de)."""
    sides = split_lp(code) if by == "lp" else (code,)
    return tuple(side.split("-")[0].lower() for side in sides)


def _design(frame: pd.DataFrame, metric: str, codes: np.ndarray, n_groups: int, item: str | None,
            labels: list[str]) -> _Independent | _Paired:
    values = frame[metric].to_numpy(dtype=float)
    if item is None:
        return _Independent(values, codes, labels)
    keyed = pd.DataFrame({"item": frame[item].to_numpy(), "g": codes, "v": values})
    dup = keyed.duplicated(["item", "g"])
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(
            f"item {keyed['item'].iloc[row]!r} appears more than once for language {labels[codes[row]]!r} "
            f"(row {row + 1}); with several models name their column with fairness_gaps_by(..., model=), or "
            "aggregate first"
        )
    wide = keyed.pivot(index="item", columns="g", values="v").reindex(columns=range(n_groups))
    complete = wide.notna().all(axis=1)
    if not complete.any():
        raise InputError(f"no item of column {item!r} is present in every language; "
                         "a paired analysis needs parallel items")
    if not complete.all():
        lost = int(wide.loc[~complete].notna().to_numpy().sum())
        warnings.warn(f"fairness: {int((~complete).sum())} items missing in some language; their {lost} rows "
                      "left out of the paired analysis", DataQualityWarning, stacklevel=3)
    return _Paired(wide.loc[complete].to_numpy(dtype=float), labels)


def _ratio_scale(design, labels: list[str], ref: str, notes: list[str]) -> bool:
    values = design.values if isinstance(design, _Independent) else design.matrix
    ref_mean = design.language_values(labels.index(ref)).mean()
    if (values < 0).any() or not ref_mean > 0:
        notes.append("ratios to the reference are not reported: the metric has negative values or a non-positive "
                     "reference mean (not a ratio scale, e.g. z-scores); differences are reported instead")
        return False
    return True


def _per_language(frame: pd.DataFrame, column: str, codes: np.ndarray, labels: list[str], what: str) -> np.ndarray:
    """One value per language from a column that must be constant within each language."""
    values = frame[column]
    out = []
    for g, label in enumerate(labels):
        distinct = values[codes == g].dropna().unique()
        if len(distinct) > 1:
            raise InputError(f"{what} column {column!r} has {len(distinct)} different values for language {label!r}; "
                             "give one value per language")
        out.append(distinct[0] if len(distinct) else np.nan)
    return np.asarray(out, dtype=object)


# ----------------------------------------------------------------------------- dimensions 1-2
def _vs_reference(g: int, r: int, op: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Reducer:
    """Language g's column against the reference's, row by row, in the joint draws."""
    return lambda m: op(m[..., g], m[..., r])


def _language_gaps(design, joint: _Joint, estimates, labels, ref, ratio_ok, floor, higher_is_better,
                   sizes) -> list[LanguageGap]:
    r = labels.index(ref) if ref is not None else None
    gaps = []
    for g, label in enumerate(labels):
        x = design.language_values(g)
        ratio = diff = None
        if r is not None and g != r:
            diff = joint.estimate(_vs_reference(g, r, np.subtract), (g, r))
            if ratio_ok:
                ratio = joint.estimate(_vs_reference(g, r, np.divide), (g, r))
        below, clearly = _floor_flags(estimates[g], floor, higher_is_better)
        gaps.append(LanguageGap(
            language=label, n=int(design.counts[g]), mean=estimates[g],
            std=float(np.std(x, ddof=1)) if len(x) > 1 else float("nan"),
            worst_item=float(x.min() if higher_is_better else x.max()), ratio=ratio, difference=diff,
            below_floor=below, clearly_below_floor=clearly,
            resource=None if sizes is None else _float_or_none(sizes[g]),
        ))
    return gaps


NO_INTERVAL = "no interval: a language with one row (an aggregate) has no spread to resample"


@overload
def _no_interval(estimate: Estimate) -> Estimate: ...
@overload
def _no_interval(estimate: None) -> None: ...
def _no_interval(estimate: Estimate | None) -> Estimate | None:
    if estimate is None:
        return None
    return replace(estimate, ci_low=float("nan"), ci_high=float("nan"), notes=(*estimate.notes, NO_INTERVAL))


def _single_rows_without_intervals(gaps: list[LanguageGap], summary: GapSummary,
                                   ref: str | None) -> tuple[list[LanguageGap], GapSummary]:
    """Every interval that involves a language of one row (its mean; a ratio or difference to or from it; the
    summaries across languages) is NaN, with a note: the bootstrap draws that row every time, so its interval has
    zero width and would claim certainty where there is no measure of it. The point estimates stay."""
    single = {g.language for g in gaps if g.n == 1}
    out = []
    for g in gaps:
        mine, vs_ref = g.language in single, g.language in single or ref in single
        out.append(replace(g, mean=_no_interval(g.mean) if mine else g.mean,
                           ratio=_no_interval(g.ratio) if vs_ref else g.ratio,
                           difference=_no_interval(g.difference) if vs_ref else g.difference,
                           clearly_below_floor=None if mine else g.clearly_below_floor))
    return out, replace(summary, **{f.name: _no_interval(getattr(summary, f.name)) for f in fields(summary)})


def _floor_flags(mean: Estimate, floor: float | None, higher_is_better: bool) -> tuple[bool | None, bool | None]:
    if floor is None:
        return None, None
    if higher_is_better:
        return bool(mean.estimate < floor), bool(mean.ci_high < floor)
    return bool(mean.estimate > floor), bool(mean.ci_low > floor)


def _summary(joint: _Joint, labels, ref, ratio_ok, worst) -> GapSummary:
    extra: dict[str, Estimate | None] = {}
    others = [g for g, lab in enumerate(labels) if lab != ref]
    if ref is not None and others:
        r = labels.index(ref)
        diffs = lambda m: m[..., others] - m[..., [r]]  # noqa: E731
        extra["mean_difference"] = joint.estimate(lambda m: diffs(m).mean(axis=-1))
        extra["worst_difference"] = joint.estimate(lambda m: worst(diffs(m), axis=-1))
        if ratio_ok:
            ratios = lambda m: m[..., others] / m[..., [r]]  # noqa: E731
            extra["mean_ratio"] = joint.estimate(lambda m: ratios(m).mean(axis=-1))
            extra["worst_ratio"] = joint.estimate(lambda m: worst(ratios(m), axis=-1))
    return GapSummary(mean=joint.estimate(lambda m: m.mean(axis=-1)), worst=joint.estimate(lambda m: worst(m, axis=-1)),
                      std=joint.estimate(lambda m: m.std(axis=-1)), **extra)


# ----------------------------------------------------------------------------- dimensions 3-4
def _elasticity(means, sizes, labels, log_performance, target_gain, level, notes) -> Elasticity | None:
    if sizes is None:
        return None
    known = np.array([_float_or_none(s) is not None for s in sizes])
    if not known.all():
        missing = [lab for lab, k in zip(labels, known, strict=True) if not k]
        warnings.warn(f"fairness: no data size for {missing}; left out of the elasticity fit", DataQualityWarning,
                      stacklevel=4)
        notes.append(f"languages without a data size, left out of the elasticity fit: {', '.join(missing)}")
    if known.sum() < 3:
        notes.append("resource elasticity not fitted: fewer than 3 languages have a data size")
        return None
    return resource_elasticity(means[known], sizes[known].astype(float),
                               [lab for lab, k in zip(labels, known, strict=True) if k],
                               log_performance=log_performance, target_gain=target_gain, level=level)


def _typology(frame, typology, codes, labels, means, sizes, level) -> tuple[TypologyBias, ...]:
    if not typology:
        return ()
    features = {}
    keys = _feature_languages(labels)
    for name in typology:
        if name in frame.columns:
            features[name] = _per_language(frame, name, codes, labels, "typology")
        else:
            features[name] = np.asarray([DERIVED_FEATURES[name](key) or "unknown" for key in keys], dtype=object)
    keep = np.ones(len(labels), dtype=bool)
    if sizes is not None:
        keep = np.array([_float_or_none(s) is not None for s in sizes])
    for vals in features.values():
        keep &= ~pd.isna(pd.Series(list(vals))).to_numpy()
    control = None if sizes is None else sizes[keep].astype(float)
    return typology_bias(means[keep], {k: v[keep] for k, v in features.items()}, control, level=level)


def _feature_languages(labels: list[str]) -> list[str]:
    """The language whose script/family describes each group: itself, or for language pairs the
    side that varies (the source of xx-en pairs, the target of en-xx pairs)."""
    try:
        pairs = [split_lp(lab) for lab in labels]
    except LanguageCodeError:
        return labels
    if any(lab == _code_or_none(lab) for lab in labels):
        return labels
    side = 1 if len({src for src, _ in pairs}) == 1 else 0
    return [pair[side] for pair in pairs]


def _code_or_none(code: str) -> str | None:
    try:
        return normalize_code(code)
    except LanguageCodeError:
        return None


def _float_or_none(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None
