"""LGN: Language-specific Group Normalization of metric scores (docs/calibration.md, docs/design.md).

Per group ``g`` (target language by default) a location ``c_g`` and scale ``s_g`` are fitted on a
calibration set and every score is mapped to ``(x - c_g) / s_g * target_std + target_mean``
(``zscore``, ``robust``), or through the group's quantile map onto a normal scale (``quantile``).
This module is the estimator (fit, apply, persist); the pieces live beside it:

* ``_groupstats``: mergeable per-group statistics and quantile sketches (exact chunked/online fits);
* ``_estimates``: per-group location/scale, credibility shrinkage of small groups, degeneracy;
* ``_maps``: the linear map and the quantile map, each used forward and inverse;
* ``_levels``: the fallback chain (``tgt_lang``, ``script``, ``family``, then ``pooled``/``raw``/
  ``error``) resolved once per distinct group;
* ``_interval``: confidence intervals (delta method; bootstrap through ``xleval.stats``).

Every row's calibrating level is reported by :meth:`LGN.sources`.
"""
from __future__ import annotations

import collections
import copy
import math
import numbers
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from .._base.seeding import make_rng
from .._base.signature import check_compatible, merge_signatures
from ..exceptions import (
    DegenerateGroupWarning,
    InputError,
    ModelFileError,
    NotFittedError,
    SmallGroupWarning,
    UnseenGroupWarning,
)
from ..table import DEFAULT_BY
from ._estimates import METHODS, group_params, pooled_params
from ._groupstats import GroupStats, QuantileSketch
from ._interval import bootstrap_bounds, delta_halfwidth
from ._levels import (
    ON_UNSEEN,
    Level,
    Resolution,
    Route,
    derived_stats_labels,
    fallback_chain,
    fitted_levels,
    group_label,
    level_codes,
    resolve,
    route_names,
)
from ._maps import QuantileMap, linear_coefficients
from ._params import ParamsMixin
from ._persist import check_loaded_columns, load_checked, save_checked

__all__ = ["LGN", "FORMAT_VERSION"]

FORMAT = "xleval.LGN"
FORMAT_VERSION = 1


class LGN(ParamsMixin):
    """Language-specific Group Normalization, a scikit-learn style estimator.

    Parameters
    ----------
    by : str or list of str
        Grouping columns: ``"lp"``, ``"tgt_lang"`` or any column list; default
        :data:`xleval.table.DEFAULT_BY` (``lp``, given or derived from ``src_lang`` and ``tgt_lang``, else
        ``tgt_lang``).
    method : {"zscore", "robust", "quantile"}
    target : (mean, std)
        Shared scale of the calibrated scores, e.g. ``(80, 10)``; default ``(0, 1)``.
    min_count : int
        Groups with fewer finite scores are shrunk toward the well-estimated groups and flagged.
    sigma_floor : float
        A group whose scale is at most ``sigma_floor * max(1, |center|)`` is degenerate.
    fallback : sequence of str or "default"
        Fallback levels tried for unseen/degenerate groups, from ``tgt_lang``, ``script``,
        ``family``, ending in one of ``pooled``, ``raw``, ``error``. ``"default"`` is
        ``tgt_lang -> script -> family -> pooled`` (the levels finer than or equal to ``by``
        dropped; for a ``by`` without ``tgt_lang`` or ``lp``, just ``pooled``).
    decay : float or None
        Exponential forgetting for online use: before each ``partial_fit`` batch is merged, earlier
        observations are down-weighted by ``decay`` (0 < decay <= 1).
    window : int or None
        Keep only the last ``window`` ``partial_fit`` batches (dynamic LGN over a sliding window).
    score : str
        Name of the score column when ``X`` is a DataFrame.
    sketch_capacity : int
        Per-group quantile sketch size for ``robust``/``quantile`` (exact below it).

    Learned state: ``by_``, ``fallback_`` (the resolved chain), ``levels_`` (the fallback levels
    with statistics, ``by`` first), ``stats_``/``params_`` per level, ``pooled_``, ``groups_``,
    ``signature_``, ``n_batches_``.
    """

    _output_suffix = "lgn"
    kind = "lgn"  # the calibrated column is <score>_lgn
    # learned state (declared for the type checker; set by _reset and the fits)
    signature_: str | None = None  # the metric signature of the fitted scores (None: unknown or unfitted)
    stats_: dict[str, GroupStats]
    n_batches_: int
    _batches_: collections.deque[dict[str, GroupStats]] | None

    def __init__(self, by: Any = DEFAULT_BY, method: str = "zscore",
                 target: tuple[float, float] = (0.0, 1.0), min_count: int = 50, sigma_floor: float = 1e-9,
                 fallback: Sequence[str] | str = "default", decay: float | None = None,
                 window: int | None = None, score: str = "score", sketch_capacity: int = 20000):
        self.by = by
        self.method = method
        self.target = target
        self.min_count = min_count
        self.sigma_floor = sigma_floor
        self.fallback = fallback
        self.decay = decay
        self.window = window
        self.score = score
        self.sketch_capacity = sketch_capacity

    # fitting -----------------------------------------------------------------------------------
    def fit(self, X, y=None, *, groups=None, signature: str | None = None) -> LGN:
        """Fit on a calibration set (resets any earlier state; a refused fit leaves the earlier state).
        ``X``: an EvalTable or a DataFrame with the score and group columns, or an array of scores with
        ``groups`` (array, Series or DataFrame). ``y`` is ignored (scikit-learn's signature; the groups
        come from the ``by`` columns, never from ``y``)."""
        with self._all_or_nothing():
            self._reset(X)
            self._update(X, groups, signature)
            self._refresh_params(warn=True, strict=True)
        return self

    def partial_fit(self, X, y=None, *, groups=None, signature: str | None = None) -> LGN:
        """Add a batch; over all batches gives the one-pass ``fit`` (unless ``decay``/``window``).
        Small/degenerate groups are flagged in :meth:`group_table` (``fit`` also warns about them).
        ``y`` is ignored, as in :meth:`fit`."""
        self._update(X, groups, signature)
        self._refresh_params(warn=False, strict=False)
        return self

    def fit_from(self, parts: Sequence[LGN]) -> LGN:
        """Fit from LGNs with this estimator's parameters, each ``partial_fit`` on a disjoint share of
        the data (chunks of a file, partitions on a cluster): their statistics are merged exactly, so
        the result equals ``fit`` on all the data. Warns and refuses like ``fit``. Returns ``self``."""
        if self.decay is not None or self.window is not None:
            raise InputError("fit_from merges independent parts; decay/window depend on the order of batches")
        with self._all_or_nothing():
            fitted = [p for p in parts if getattr(p, "n_batches_", 0) > 0]
            self._reset(by=fitted[0].by_ if fitted else None)
            for part in fitted:
                if part.get_params() != self.get_params():
                    raise InputError("fit_from: every part must have this estimator's parameters")
                self.signature_ = merge_signatures(self.signature_, part.signature_)
                self.stats_ = part.stats_ if self.n_batches_ == 0 else self._merged(self.stats_, part.stats_)
                self.n_batches_ += part.n_batches_
            if not fitted:
                raise InputError("fit_from: no part saw any data")
            self._refresh_params(warn=True, strict=True)
        return self

    def _merged(self, a: dict[str, GroupStats], b: dict[str, GroupStats]) -> dict[str, GroupStats]:
        return {lv: a[lv].merge(b[lv]) for lv in self.levels_}

    def _sketch(self, level: str, key: int) -> QuantileSketch:
        sketches = self.stats_[level].sketches
        assert sketches is not None  # kept by every method but zscore, the only one that needs none
        return sketches[key]

    def _update(self, X, groups, signature) -> None:
        self._validate_params()
        signature = self._table_signature(X, signature)
        if not hasattr(self, "levels_"):
            self._reset(X)
        self.signature_ = merge_signatures(self.signature_, signature)
        scores, frame = self._scores_and_groups(X, groups)
        batch = self._batch_stats(scores, frame)
        if self.window is not None:
            assert self._batches_ is not None  # made by _reset when window is set
            self._batches_.append(batch)
            acc = self._batches_[0]
            for b in list(self._batches_)[1:]:
                acc = self._merged(acc, b)
            self.stats_ = acc
        else:
            if self.decay is not None and self.n_batches_ > 0:
                self.stats_ = {lv: s.scaled(self.decay) for lv, s in self.stats_.items()}
            self.stats_ = batch if self.n_batches_ == 0 else self._merged(self.stats_, batch)
        self.n_batches_ += 1

    def _reset(self, X: Any = None, by: list[str] | None = None) -> None:
        """Fresh learned state; the grouping from ``by`` (fit_from: the parts'), else resolved on ``X``."""
        self._validate_params()
        self.by_ = list(by) if by is not None else self._resolve_by(X)
        self.fallback_ = fallback_chain(self.by_, self.fallback)
        self.levels_ = fitted_levels(self.fallback_)
        self.stats_ = {lv: GroupStats.empty(with_sketch=self.method != "zscore") for lv in self.levels_}
        self._batches_ = collections.deque(maxlen=self.window) if self.window is not None else None
        self.n_batches_ = 0
        self.signature_ = None

    def _validate_params(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"method={self.method!r}: use one of {', '.join(METHODS)}")
        try:
            mean, std = (float(v) for v in self.target)
        except (TypeError, ValueError):
            raise InputError(f"target={self.target!r}: expected (mean, std), e.g. (80, 10)") from None
        if not (math.isfinite(mean) and math.isfinite(std) and std > 0):
            raise InputError(f"target={self.target!r}: mean must be finite and std > 0")
        if not isinstance(self.min_count, (int, np.integer)) or self.min_count < 1:
            raise InputError(f"min_count={self.min_count!r}: expected an integer >= 1")
        if (isinstance(self.sigma_floor, bool) or not isinstance(self.sigma_floor, numbers.Real)
                or not 0 <= self.sigma_floor < math.inf):
            raise InputError(f"sigma_floor={self.sigma_floor!r}: expected a finite number >= 0, e.g. 1e-9",
                             argument="sigma_floor", value=self.sigma_floor)
        if (isinstance(self.sketch_capacity, bool) or not isinstance(self.sketch_capacity, (int, np.integer))
                or self.sketch_capacity < 1):
            raise InputError(f"sketch_capacity={self.sketch_capacity!r}: expected an integer >= 1, e.g. 20000",
                             argument="sketch_capacity", value=self.sketch_capacity)
        if self.decay is not None and not 0 < self.decay <= 1:
            raise InputError(f"decay={self.decay!r}: expected 0 < decay <= 1")
        if self.window is not None and (not isinstance(self.window, (int, np.integer)) or self.window < 1):
            raise InputError(f"window={self.window!r}: expected an integer >= 1")
        if self.decay is not None and self.window is not None:
            raise InputError("decay and window are alternatives; give one of them")

    # data plumbing -----------------------------------------------------------------------------
    def _scores_and_groups(self, X, groups) -> tuple[np.ndarray, pd.DataFrame]:
        X = self._table_frame(X)
        if isinstance(X, pd.DataFrame):
            if self.score not in X.columns:
                raise InputError(f"score column {self.score!r} not in the data; columns are {list(X.columns)}")
            scores = X[self.score]
            refuse_groups_beside_columns(X, groups, self.by_)
            frame = X if groups is None else _as_frame(groups, self.by_)
        else:
            if groups is None:
                raise InputError(f"groups= is required when X is an array of scores (y is never the groups): pass a "
                                 f"table with the score and group column(s) {self.by_}, or groups=", argument="groups")
            scores = X
            frame = _as_frame(groups, self.by_)
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 1:
            raise InputError(f"scores must be one-dimensional, got shape {scores.shape}")
        if len(frame) != len(scores):
            raise InputError(f"{len(scores)} scores but {len(frame)} group rows; they must be aligned")
        needed = set(self.by_)
        if len(self.levels_) > 1:
            needed.add("tgt_lang")
        missing = sorted(c for c in needed
                         if c not in frame.columns and not (c == "tgt_lang" and "lp" in frame.columns))
        if missing:
            raise InputError(f"group column(s) {missing} not in the data; columns are {list(frame.columns)}")
        return scores, frame

    def _batch_stats(self, scores: np.ndarray, frame: pd.DataFrame) -> dict[str, GroupStats]:
        """Statistics of one batch at every level: one pass over the rows for ``by``; the language
        levels are merged from it when ``by`` determines the target language, else counted from rows."""
        stats = {Level.BY.value: self._level_stats(Level.BY, scores, frame)}
        for level in self.levels_[1:]:
            labels = derived_stats_labels(level, self.by_, stats[Level.BY].keys)
            stats[level] = (stats[Level.BY].coarsen(labels) if labels is not None
                            else self._level_stats(level, scores, frame))
        return stats

    def _level_stats(self, level: str, scores: np.ndarray, frame: pd.DataFrame) -> GroupStats:
        codes, labels = level_codes(level, frame, self.by_)
        return GroupStats.from_values(scores, codes, labels, with_sketch=self.method != "zscore",
                                      capacity=self.sketch_capacity)

    # parameters --------------------------------------------------------------------------------
    def _refresh_params(self, warn: bool = False, strict: bool = False) -> None:
        self.params_ = {lv: group_params(self.stats_[lv], self.method, self.min_count, self.sigma_floor)
                        for lv in self.levels_}
        main = self.params_[Level.BY]
        if not main.usable.any() and strict:
            raise InputError(f"score column {self.score!r}: no group has a usable spread (all scores constant or "
                             "missing); LGN cannot be fitted; check that it is the metric's column, or fit on scores "
                             "that vary within a group")
        self.pooled_ = pooled_params(main)
        self.groups_ = list(main.keys)
        self._usable_ = {lv: {key: i for i, key in enumerate(p.keys) if p.usable[i]} for lv, p in self.params_.items()}
        if warn:
            small = [group_label(k) for k, s in zip(main.keys, main.shrunk, strict=True) if s]
            degenerate = [group_label(k) for k, d in zip(main.keys, main.degenerate, strict=True) if d]
            if small and len(small) == int(main.usable.sum()):
                # nothing well estimated to shrink toward: the result is neither LGN nor the raw scores
                warnings.warn(f"every group has fewer than min_count={self.min_count} scores, so every group was "
                              f"shrunk toward the others ({', '.join(small[:10])}); for a table of system scores use "
                              "min_count=1 (xleval.calibration.lgn_min_count chooses it by the table's level)",
                              SmallGroupWarning, stacklevel=3)
            elif small:
                warnings.warn(f"{len(small)} group(s) have fewer than min_count={self.min_count} scores and were "
                              f"shrunk toward the other groups: {', '.join(small[:10])}", SmallGroupWarning,
                              stacklevel=3)
            if degenerate:
                warnings.warn(f"{len(degenerate)} group(s) have (near) zero spread and are calibrated through the "
                              f"fallback chain: {', '.join(degenerate[:10])}", DegenerateGroupWarning, stacklevel=3)

    @property
    def by_stats_(self) -> GroupStats:
        """Statistics of the ``by`` level: one entry per fitted group."""
        return self.stats_[Level.BY]

    # applying ----------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "params_"):
            raise NotFittedError("this LGN is not fitted yet; call fit() or load a saved calibrator first")

    def _check_signature(self, signature: str | None, force: bool, frame: pd.DataFrame | None = None) -> None:
        if force or signature is None or self.signature_ is None or signature == self.signature_:
            return  # the common case costs nothing; only a differing signature looks at the languages
        languages = None
        if frame is not None and "tgt_lang" in frame.columns:
            languages = [str(x) for x in pd.unique(frame["tgt_lang"])]
        check_compatible(self.signature_, signature, languages=languages)

    def _resolve(self, frame: pd.DataFrame) -> Resolution:
        return resolve(frame, self.by_, self.levels_, self.fallback_, self._usable_)

    def _combo_coefficients(self, res: Resolution) -> tuple[np.ndarray, np.ndarray]:
        """Location and scale per combination of group values (pooled, or NaN for raw)."""
        center = np.full(len(res.level), np.nan)
        scale = np.full(len(res.level), np.nan)
        for li, lv in enumerate(self.levels_):
            sel = res.level == li
            center[sel] = self.params_[lv].center[res.key[sel]]
            scale[sel] = self.params_[lv].scale[res.key[sel]]
        pooled = res.level == Route.POOLED
        center[pooled], scale[pooled] = self.pooled_
        return center, scale

    def _map(self, x: np.ndarray, res: Resolution, inverse: bool) -> np.ndarray:
        """Calibrated scores (or raw ones, ``inverse``): one fused gather ``x * a[g] + b[g]`` per row, the
        memory-bandwidth bound; ``quantile`` then maps the rows of fitted groups through their quantile map."""
        a, b = linear_coefficients(*self._combo_coefficients(res), self.target)
        raw = res.level == Route.RAW
        a[raw], b[raw] = 1.0, 0.0
        if inverse:
            out = (x - b.take(res.codes)) / a.take(res.codes)
        else:
            out = a.take(res.codes)  # in place from here: one output array, no temporaries
            out *= x
            out += b.take(res.codes)
        if self.method == "quantile":
            self._map_quantile(out, x, res, inverse)
        if not inverse and not np.isfinite(np.add.reduce(out)):  # one cheap pass; only NaN/inf data pays
            out[np.isinf(out)] = np.nan  # +-inf scores are kept as rows but have no calibrated value
        return out

    def _map_quantile(self, out: np.ndarray, x: np.ndarray, res: Resolution, inverse: bool) -> None:
        order = np.argsort(res.codes, kind="stable")
        bounds = np.searchsorted(res.codes[order], np.arange(len(res.level) + 1))
        maps: dict[tuple[int, int], QuantileMap] = {}
        for c in np.flatnonzero(res.level >= 0):
            rows = order[bounds[c]:bounds[c + 1]]
            pair = (int(res.level[c]), int(res.key[c]))
            if pair not in maps:
                level = self.levels_[pair[0]]
                sketch = self._sketch(level, pair[1])
                maps[pair] = QuantileMap.from_points(sketch.values, sketch.weights, self.params_[level].scale[pair[1]])
            qmap = maps[pair]
            out[rows] = qmap.inverse(x[rows], self.target) if inverse else qmap.forward(x[rows], self.target)

    def transform(self, X, groups=None, *, signature: str | None = None, force: bool = False):
        """Calibrated scores (NaN where the score is NaN; raw where the fallback is ``raw``): a 1-D
        array, or as configured by :meth:`set_output`."""
        self._check_fitted()
        X = self._table_frame(X)
        scores, frame = self._scores_and_groups(X, groups)
        self._check_signature(signature, force, frame)
        res = self._resolve(frame)
        self._warn_fallback(res)
        return self._as_output(self._map(scores, res, inverse=False), X)

    def inverse_transform(self, X, groups=None) -> np.ndarray:
        """Map calibrated scores back to the raw scale (exact inverse of :meth:`transform`)."""
        self._check_fitted()
        calibrated, frame = self._scores_and_groups(X, groups)
        return self._map(calibrated, self._resolve(frame), inverse=True)

    def fit_transform(self, X, y=None, *, groups=None, signature: str | None = None):
        return self.fit(X, groups=groups, signature=signature).transform(X, groups, signature=signature)

    def calibrated_signature(self) -> str:
        """The signature of the calibrated column: this calibrator's options and the score's signature."""
        t_mean, t_std = self.target
        return (f"lgn|method:{self.method}|by:{'+'.join(self.group_columns())}|target:{t_mean:g},{t_std:g}"
                f"|of:{self.signature_ or 'unknown'}")

    def sources(self, X, groups=None) -> np.ndarray:
        """Per row, the level that calibrated it: ``by`` columns joined by '+', a fallback level, ``pooled`` or
        ``raw``."""
        self._check_fitted()
        _, frame = self._scores_and_groups(X, groups)
        res = self._resolve(frame)
        return route_names(self.by_, self.levels_, res.level)[res.codes]

    def with_on_unseen(self, on_unseen: str | None) -> LGN:
        """This fitted calibrator, with groups it cannot calibrate itself (unseen or degenerate)
        calibrated by ``on_unseen`` instead of its fallback chain: ``pooled`` (the median of the
        groups' parameters), ``raw`` (left as they are) or ``error`` (refused). ``None`` returns the
        calibrator unchanged. A shallow copy: the fitted statistics are shared, never modified."""
        self._check_fitted()
        if on_unseen is None:
            return self
        if on_unseen not in ON_UNSEEN:
            raise InputError(f"on_unseen={on_unseen!r}: use pooled, raw or error")
        model = copy.copy(self)
        model.fallback_ = [str(on_unseen)]
        return model

    def _warn_fallback(self, res: Resolution) -> None:
        fell = res.level != 0
        if not fell.any():
            return
        rows = res.rows_per_combination()
        names = route_names(self.by_, self.levels_, res.level)
        per_name: collections.Counter[str] = collections.Counter()
        for c in np.flatnonzero(fell):
            per_name[names[c]] += int(rows[c])
        order = ["raw", "pooled", *self.levels_[1:]]
        detail = ", ".join(f"{name}: {per_name[name]}" for name in order if per_name[name])
        warnings.warn(f"{sum(per_name.values())} row(s) of unseen or degenerate groups were calibrated by fallback "
                      f"({detail})", UnseenGroupWarning, stacklevel=3)

    # uncertainty -------------------------------------------------------------------------------
    def interval(self, X, groups=None, *, level: float = 0.95, n_resamples: int = 400,
                 random_state: int | np.random.Generator | None = 0, signature: str | None = None,
                 force: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Confidence interval at ``level`` of each calibrated score from the sampling uncertainty of
        its group's statistics. ``zscore``: delta method, ``Var(z_hat) ~ (1 + z^2/2) / n`` for near-normal
        calibration sets. ``robust``/``quantile``: percentile bootstrap of the stored calibration sample
        (the sketch), ``n_resamples`` draws with ``random_state``. Rows calibrated raw get NaN (and rows
        calibrated by the pooled parameters too, for the bootstrap). ``signature``/``force``: checked as
        by :meth:`transform`."""
        self._check_fitted()
        if not isinstance(level, numbers.Real) or isinstance(level, bool) or not 0 < level < 1:
            raise InputError(f"level={level!r}: expected a number between 0 and 1, e.g. 0.95", argument="level",
                             value=level)
        confidence = float(level)
        scores, frame = self._scores_and_groups(X, groups)
        self._check_signature(signature, force, frame)
        res = self._resolve(frame)
        point = self._map(scores, res, inverse=False)
        if self.method == "zscore":
            center, scale = self._combo_coefficients(res)
            z = (scores - center[res.codes]) / scale[res.codes]
            half = delta_halfwidth(z, self._combo_counts(res)[res.codes], confidence, float(self.target[1]))
            low, high = point - half, point + half
        else:
            low, high = self._bootstrap_interval(scores, res, point, confidence, n_resamples, random_state)
        raw = (res.level == Route.RAW)[res.codes]
        low[raw] = high[raw] = np.nan
        return low, high

    def _combo_counts(self, res: Resolution) -> np.ndarray:
        """The n behind each combination's parameters (pooled: the median group size)."""
        n = np.full(len(res.level), np.nan)
        for li, lv in enumerate(self.levels_):
            sel = res.level == li
            n[sel] = self.params_[lv].count[res.key[sel]]
        counts = self.params_[Level.BY].count
        n[res.level == Route.POOLED] = np.median(counts[counts > 0])
        return n

    def _bootstrap_interval(self, scores, res: Resolution, point, confidence, n_resamples, random_state):
        rng, _ = make_rng(random_state)  # one stream over the groups, in level then key order
        low, high = point.copy(), point.copy()
        for li, k in sorted({(int(lv), int(k)) for lv, k in zip(res.level, res.key, strict=True) if lv >= 0}):
            combos = np.flatnonzero((res.level == li) & (res.key == k))
            rows = np.flatnonzero(np.isin(res.codes, combos))
            sketch = self._sketch(self.levels_[li], k)
            low[rows], high[rows] = bootstrap_bounds(self.method, sketch, scores[rows], self.target, confidence,
                                                     n_resamples, rng)
        pooled = (res.level == Route.POOLED)[res.codes]
        low[pooled] = high[pooled] = np.nan
        return low, high

    # reporting ---------------------------------------------------------------------------------
    def group_table(self) -> pd.DataFrame:
        """One row per fitted group of the ``by`` level: n, mean, std, min, max, center, scale, flags."""
        self._check_fitted()
        stats, params = self.stats_[Level.BY], self.params_[Level.BY]
        return pd.DataFrame({
            "group": [group_label(k) for k in stats.keys],
            "n": stats.count, "mean": stats.mean, "std": stats.std(ddof=0), "min": stats.min, "max": stats.max,
            "center": params.center, "scale": params.scale, "shrunk": params.shrunk, "degenerate": params.degenerate,
            "n_nonfinite": stats.n_nonfinite,
        })

    # persistence -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        self._check_fitted()
        params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.get_params().items()}
        params["fallback"] = self.fallback if isinstance(self.fallback, str) else list(self.fallback)
        params["by"] = self.by_[0] if len(self.by_) == 1 else list(self.by_)  # the default resolved
        return {
            "format": FORMAT, "format_version": FORMAT_VERSION, "xleval_version": __version__,
            "params": params, "signature": self.signature_, "n_batches": self.n_batches_,
            "levels": {lv: self.stats_[lv].to_dict() for lv in self.levels_},
            # a sliding window's batches, so that partial_fit after load drops the oldest one as it would have
            **({"batches": [{lv: b[lv].to_dict() for lv in self.levels_} for b in self._batches_]}
               if self._batches_ is not None else {}),
        }

    def save(self, path: str | os.PathLike) -> None:
        """Versioned JSON with options, per-level statistics, the metric signature and a SHA-256 checksum."""
        save_checked(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> LGN:
        return cls.from_dict(load_checked(path, FORMAT, FORMAT_VERSION, "LGN calibrator"), source=str(path))

    @classmethod
    def from_dict(cls, payload: dict, source: str = "calibrator") -> LGN:
        load_checked(payload, FORMAT, FORMAT_VERSION, "LGN calibrator")
        try:
            params = dict(payload["params"])
            params["target"] = tuple(params["target"])
            check_loaded_columns(params.get("by"), score=params.get("score"))
            model = cls(**params)
            model._reset()
            model.stats_ = {lv: GroupStats.from_dict(d) for lv, d in payload["levels"].items()}
            if list(model.stats_) != model.levels_:
                raise ValueError("levels do not match the options")
            _check_loaded_stats(model)
            model.signature_ = payload.get("signature")
            if model.signature_ is not None and not isinstance(model.signature_, str):
                raise ValueError(f"signature {model.signature_!r} is not text")
            model.n_batches_ = int(payload.get("n_batches", 1))
            if model._batches_ is not None:  # window: its batches (a file without them: its statistics, one batch)
                saved = payload.get("batches")
                batches = ([{lv: GroupStats.from_dict(d) for lv, d in b.items()} for b in saved]
                           if saved is not None else [model.stats_])
                too_many = len(batches) > (model._batches_.maxlen or 0)
                if not batches or too_many or any(list(b) != model.levels_ for b in batches):
                    raise ValueError("the window's batches do not match the options")
                model._batches_.extend(batches)
            model._refresh_params(warn=False)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError,
                InputError) as exc:
            raise ModelFileError(f"{source}: malformed calibrator ({exc}); refit and save it again") from None
        return model


def _check_loaded_stats(model: LGN) -> None:
    """Per-level statistics a fit could have saved (ValueError): finite counts, finite means and sums of
    squares where a group has scores, and the quantile sketches that ``robust``/``quantile`` read."""
    for level, stats in model.stats_.items():
        has = stats.count > 0
        if not np.isfinite(stats.count).all() or not (np.isfinite(stats.mean[has]).all()
                                                       and np.isfinite(stats.m2[has]).all()):
            raise ValueError(f"level {level!r}: a count, mean or sum of squares is not a finite number")
        if model.method != "zscore" and stats.sketches is None:
            raise ValueError(f"level {level!r}: method {model.method!r} needs the quantile sketches, which are missing")


def refuse_groups_beside_columns(X: pd.DataFrame, groups, by: list[str]) -> None:
    """A table holding the group columns takes its groups from them; ``groups`` beside it is refused (in a
    scikit-learn ``Pipeline``, ``transform(X, y)`` would take the human scores ``y`` as groups). ``y`` of
    ``fit``/``partial_fit``/``fit_transform`` is ignored, as scikit-learn transformers ignore it."""
    if groups is not None and all(c in X.columns for c in by):
        raise InputError(f"groups= was given with a table that holds the group column(s) {by}: the groups come "
                         "from those columns; leave groups out (it is for an array of scores; a second positional "
                         "argument of transform/sources/interval is groups, never y)", argument="groups")


def _as_frame(groups, by: list[str]) -> pd.DataFrame:
    if isinstance(groups, pd.DataFrame):
        return groups
    if len(by) != 1:
        raise InputError(f"by={by} has several columns; pass groups as a DataFrame with those columns")
    return pd.DataFrame({by[0]: np.asarray(groups, dtype=object)})
