"""Inter-rater agreement for ordinal (Likert) ratings: weighted Cohen's kappa and
Krippendorff's alpha, and the E2 annotation-calibration summary built on them.

Kappa follows Cohen (1968): ``1 - sum(w * O) / sum(w * E)`` with disagreement weights on the
label *positions* (as scikit-learn does) and ``E`` the outer product of the two raters'
marginals. Alpha follows Krippendorff (2011), "Computing Krippendorff's alpha-reliability":
a coincidence matrix over pairable values (units rated by at least two raters) and the
nominal, ordinal, interval or ratio difference function.
"""
from __future__ import annotations

import itertools
import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

from xleval._base.seeding import resolve_seed
from xleval.audit._data import check_filled
from xleval.audit._results import AnnotationAgreement, RaterAgreement
from xleval.exceptions import DataQualityWarning, InputError

__all__ = ["weighted_kappa", "krippendorff_alpha", "annotation_agreement", "rating_scale"]

WEIGHTS = ("linear", "quadratic", "none")
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def weighted_kappa(rater_a: Any, rater_b: Any, *, weights: str | None = "quadratic", labels: Any = None) -> float:
    """Cohen's kappa of two raters' labels on the same items, with ``linear``, ``quadratic`` or
    no (``None``/``"none"``) disagreement weights. ``labels`` fixes the ordered label set (pass
    the full scale, e.g. ``range(1, 6)``, so unused levels keep their distance); by default the
    sorted union of the observed labels. NaN/None ratings are refused."""
    a, b = np.asarray(rater_a), np.asarray(rater_b)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError("weighted_kappa: rater_a and rater_b must be 1-D of the same length; "
                         f"got {a.shape} and {b.shape}")
    if a.size == 0:
        raise InputError("weighted_kappa: no ratings given")
    if pd.isna(a).any() or pd.isna(b).any():
        raise InputError("weighted_kappa: missing ratings; keep only items both raters rated")
    kind = "none" if weights is None else weights
    if kind not in WEIGHTS:
        raise InputError(f"weighted_kappa: weights must be one of {WEIGHTS} or None; got {weights!r}")
    labels_arr = np.unique(np.concatenate([a, b])) if labels is None else np.asarray(list(labels))
    index = {label: i for i, label in enumerate(labels_arr.tolist())}
    try:
        ia = np.array([index[x] for x in a.tolist()])
        ib = np.array([index[x] for x in b.tolist()])
    except KeyError as exc:
        raise InputError(f"weighted_kappa: rating {exc.args[0]!r} is not in labels {labels_arr.tolist()}") from None
    k = len(labels_arr)
    observed = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k) / a.size
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    pos = np.arange(k)
    diff = np.abs(pos[:, None] - pos[None, :]).astype(float)
    w = {"none": (diff > 0).astype(float), "linear": diff, "quadratic": diff**2}[kind]
    denom = float(np.sum(w * expected))
    if denom == 0:
        return float("nan")  # both raters used one and the same label: chance agreement is total
    return 1.0 - float(np.sum(w * observed)) / denom


def krippendorff_alpha(reliability_data: Any, *, level: str = "ordinal", value_domain: Any = None) -> float:
    """Krippendorff's alpha of a (raters x units) matrix of numeric ratings, NaN = not rated.

    ``level``: ``nominal``, ``ordinal``, ``interval`` or ``ratio``. ``value_domain`` lists the
    possible values in order (default: the observed ones); for ordinal data unobserved values
    do not change alpha. Units rated by fewer than two raters are not pairable and ignored."""
    if level not in LEVELS:
        raise InputError(f"krippendorff_alpha: level must be one of {LEVELS}; got {level!r}")
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise InputError(f"krippendorff_alpha: reliability_data must be 2-D (raters x units); got shape {data.shape}")
    values = np.unique(data[~np.isnan(data)]) if value_domain is None else np.asarray(value_domain, dtype=float)
    counts = _value_counts(data, values)
    pairable = counts.sum(axis=1) >= 2
    if not pairable.any():
        raise InputError("krippendorff_alpha: no unit was rated by two or more raters; nothing to compare")
    coincidence = _coincidences(counts[pairable])
    n_c = coincidence.sum(axis=1)
    delta = _differences(values, n_c, level)
    expected = float(np.sum(np.outer(n_c, n_c) * delta))
    if expected == 0:
        return float("nan")  # a single value used throughout: agreement is undefined, not perfect
    return 1.0 - (n_c.sum() - 1) * float(np.sum(coincidence * delta)) / expected


def _value_counts(data: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(units x values) how many raters gave each value to each unit."""
    rated = ~np.isnan(data)
    idx = np.searchsorted(values, data[rated])
    if np.any(idx >= len(values)) or np.any(values[np.minimum(idx, len(values) - 1)] != data[rated]):
        raise InputError(f"krippendorff_alpha: ratings outside value_domain {values.tolist()}")
    unit = np.nonzero(rated)[1]
    counts = np.zeros((data.shape[1], len(values)))
    np.add.at(counts, (unit, idx), 1)
    return counts


def _coincidences(counts: np.ndarray) -> np.ndarray:
    # o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1), as one matrix product
    scale = 1.0 / (counts.sum(axis=1) - 1.0)
    return (counts * scale[:, None]).T @ counts - np.diag((counts * scale[:, None]).sum(axis=0))


def _differences(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        return (c != k).astype(float)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nan_to_num(((c - k) / (c + k)) ** 2)
    # ordinal: squared count of values between c and k, halving the two ends (Krippendorff 2011)
    cum = np.cumsum(n_c)
    i, j = np.meshgrid(np.arange(len(values)), np.arange(len(values)), indexing="ij")
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    between = cum[hi] - cum[lo] + n_c[lo] - (n_c[lo] + n_c[hi]) / 2.0
    return between**2


#: the most levels a rating scale may have (a 0-100 slider has 101; more is a typo such as 1-1000000000)
MAX_SCALE_LEVELS = 1001


def rating_scale(spec: Any) -> tuple[float, ...]:
    """The ordered levels of a rating scale from ``"1-5"``, ``"1,2,3,4,5"``, ``(1, 5)`` (both
    ends, integer steps), or a sequence of three or more levels (finite, increasing, at most
    ``MAX_SCALE_LEVELS``)."""
    shown = repr(spec.strip() if isinstance(spec, str) else spec)
    usage = "give the ends as LOW-HIGH (e.g. 1-5) or the levels as a comma-separated list (e.g. 1,2,3,4,5)"
    try:
        levels = _scale_levels(spec)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"rating scale {shown}: {usage}") from None
    if len(levels) > MAX_SCALE_LEVELS:
        raise InputError(f"rating scale {shown}: more than the {MAX_SCALE_LEVELS} levels a rating scale may have; "
                         "give the scale the raters used (e.g. 1-5)")
    if not all(np.isfinite(levels)):
        raise InputError(f"rating scale {shown}: levels must be finite numbers; {usage}")
    if len(levels) < 2 or any(b <= a for a, b in itertools.pairwise(levels)):
        raise InputError(f"rating scale {shown}: needs at least two levels in increasing order (e.g. 1-5)")
    return tuple(levels)


def _scale_levels(spec: Any) -> list[float]:
    """The levels ``spec`` spells (ValueError/TypeError when it spells none); two integer ends are expanded,
    without building a range longer than a scale may be."""
    if isinstance(spec, str):
        text = spec.strip()
        m = re.fullmatch(r"(-?\d+)\s*(?:-|\.\.|:)\s*(-?\d+)", text)
        spec = (int(m[1]), int(m[2])) if m else [float(v) for v in text.split(",") if v.strip()]
        if not m and len(spec) < 2:
            raise ValueError(text)
    values = [float(v) for v in spec]
    if len(values) == 2 and all(v.is_integer() for v in values):
        low, high = int(values[0]), int(values[1])
        values = [float(v) for v in range(low, min(high, low + MAX_SCALE_LEVELS) + 1)]  # +1 level: "too many"
    return values


def _scale_of(values: np.ndarray, scale: Any, where: str) -> tuple[tuple[float, ...], list[str]]:
    """The scale's levels (given, or from the data) and a note when the data leave a level unused."""
    if scale is not None:
        levels = rating_scale(scale)
        outside = sorted(set(values.tolist()) - set(levels))
        if outside:
            raise InputError(f"{where}: rating(s) {_show(outside)} are not on the scale {_show(levels)}; "
                             "give the scale the raters used")
        source = "given"
    elif len(values) and np.all(np.equal(np.mod(values, 1), 0)):
        levels, source = tuple(float(v) for v in range(int(values.min()), int(values.max()) + 1)), "from the data"
    else:
        levels, source = tuple(float(v) for v in values), "from the data"
    unused = [v for v in levels if v not in set(values.tolist())]
    notes = []
    if unused:
        notes.append(f"{where}: level(s) {_show(unused)} of the scale {_show(levels)} ({source}) are unused; "
                     "weighted kappa keeps their distance" + ("" if source == "given" else
                     "; give the scale (scale=\"LOW-HIGH\") if its ends differ from the ratings' range"))
    return levels, notes


def _show(levels: Any) -> str:
    return "[" + ", ".join(f"{v:g}" for v in levels) + "]"


def annotation_agreement(
    ratings: pd.DataFrame,
    *,
    scale: Any = None,
    weights: str = "quadratic",
    kappa_target: float = 0.7,
    n_resamples: int = 1000,
    level: float = 0.95,
    random_state: Any = 0,
) -> tuple[AnnotationAgreement, ...]:
    """E2 (annotation calibration): agreement of Likert ratings per dimension.

    ``ratings`` has columns ``item_id``, ``rater``, ``rating`` and optionally ``dimension``
    (e.g. cue identifiability, cultural residual, syntactic residual). ``scale`` is the rating
    scale (``"1-5"``, ``(1, 5)`` or the levels, see :func:`rating_scale`): weighted kappa
    measures disagreement on it, so a level nobody used still keeps its place. By default the
    scale runs from the lowest to the highest rating given, with a ``DataQualityWarning`` when a
    level in between is unused. Returns one :class:`AnnotationAgreement` per dimension; the
    alpha CI resamples items (bootstrap from :mod:`xleval.stats`)."""
    missing = [c for c in ("item_id", "rater", "rating") if c not in ratings.columns]
    if missing:
        raise InputError(f"ratings: missing column(s) {missing}; expected item_id, rater, "
                         "rating (and optionally dimension)")
    check_ratings(ratings)
    frame = ratings.assign(dimension=ratings.get("dimension", "rating"))
    seed = resolve_seed(random_state)  # one recorded seed for every dimension's bootstrap
    return tuple(_one_dimension(str(dim), part, scale, weights, kappa_target, n_resamples, level, seed)
                 for dim, part in frame.groupby("dimension", sort=True))


def check_ratings(ratings: pd.DataFrame, where: str = "ratings") -> None:
    """Refuse a ratings table with an empty item_id, rater, rating or dimension cell (naming ``where``)."""
    for column in ("item_id", "rater", "rating", "dimension"):
        if column in ratings.columns:
            check_filled(ratings[column], column, where, "every row is one rater's rating of one item: ")


def _one_dimension(dim: str, part: pd.DataFrame, scale: Any, weights: str, target: float, n_resamples: int,
                   level: float, random_state: Any) -> AnnotationAgreement:
    from xleval.stats import bootstrap

    dup = part.duplicated(["item_id", "rater"])
    if dup.any():
        row = part[dup].iloc[0]
        raise InputError(f"ratings: rater {row['rater']!r} rated item {row['item_id']!r} twice in dimension {dim!r}; "
                         "keep one rating")
    wide = part.pivot(index="item_id", columns="rater", values="rating").astype(float)
    observed = np.unique(wide.to_numpy()[~np.isnan(wide.to_numpy())])
    levels, notes = _scale_of(observed, scale, f"ratings ({dim})")
    if notes and scale is None:
        warnings.warn(notes[0], DataQualityWarning, stacklevel=3)
    values = np.asarray(levels)
    pairs = []
    for ra, rb in itertools.combinations(wide.columns, 2):
        both = wide[[ra, rb]].dropna()
        if len(both) == 0:
            notes.append(f"raters {ra!r} and {rb!r} rated no item in common; no kappa")
            continue
        kappa = weighted_kappa(both[ra].to_numpy(), both[rb].to_numpy(), weights=weights, labels=values)
        pairs.append(RaterAgreement(str(ra), str(rb), len(both), kappa, weights))
    counts = {"dimension": dim, "n_items": len(wide), "n_raters": wide.shape[1],
              "n_ratings": int(wide.notna().sum().sum()), "scale": levels, "level": level, "kappa_target": target}
    if wide.shape[1] < 2:
        notes.append("only one rater: agreement is not identified; this is calibration evidence only")
        nan = float("nan")
        return AnnotationAgreement(**counts, pairs=(), alpha_ordinal=nan, alpha_interval=nan, alpha_ci_low=nan,
                                   alpha_ci_high=nan, meets_target=False, notes=tuple(notes))
    matrix = wide.to_numpy()  # items x raters
    alpha_o = krippendorff_alpha(matrix.T, level="ordinal", value_domain=values)
    alpha_i = krippendorff_alpha(matrix.T, level="interval", value_domain=values)
    sentinel = float(values.min()) - 1.0  # the bootstrap engine refuses NaN; mark "not rated" below the scale
    ci = bootstrap(np.nan_to_num(matrix, nan=sentinel), lambda m: _alpha_or_nan(m, values, sentinel),
                   n_resamples=n_resamples, level=level, random_state=random_state)
    notes.extend(ci.notes)
    meets = bool(pairs) and all(p.kappa > target for p in pairs)
    return AnnotationAgreement(**counts, pairs=tuple(pairs), alpha_ordinal=alpha_o, alpha_interval=alpha_i,
                               alpha_ci_low=ci.ci_low, alpha_ci_high=ci.ci_high, meets_target=meets, notes=tuple(notes))


def _alpha_or_nan(rows: np.ndarray, values: np.ndarray, sentinel: float) -> float:
    # a resample may hold no pairable unit at all: its alpha is undefined, not an error
    data = np.where(rows == sentinel, np.nan, rows).T
    try:
        return krippendorff_alpha(data, level="ordinal", value_domain=values)
    except InputError:
        return float("nan")
