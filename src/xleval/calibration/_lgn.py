"""LGN: Language-specific Group Normalization of metric scores (the seed, sections 2-4).

Per group ``g`` (target language by default) a location ``c_g`` and scale ``s_g`` are fitted on a
calibration set and every score is mapped to ``(x - c_g) / s_g * target_std + target_mean``:

* ``zscore``  : ``c`` = mean, ``s`` = population std (the seed's formula);
* ``robust``  : ``c`` = median, ``s`` = 1.4826 * MAD (consistent with the std for normal data);
* ``quantile``: ``x`` -> ``target_mean + target_std * Phi^-1(F_g(x))`` with ``F_g`` the group's
  mid-rank empirical CDF, linearly interpolated between distinct calibration values and
  continued linearly (slope ``1/std``) beyond them, so the map is strictly increasing.

Small groups (``n < min_count``) are shrunk toward the median of the well-estimated groups'
parameters with limited-fluctuation credibility ``Z = sqrt(n / min_count)`` (Longley-Cook 1962;
full credibility at ``min_count``): ``c = Z c_g + (1 - Z) c_prior``, ``s^2 = Z s_g^2 + (1 - Z) s_prior^2``,
and flagged. A group whose spread is below ``sigma_floor`` is *degenerate*: it is never divided by
1; its rows go down the fallback chain like an unseen group. Rows of unseen groups are
calibrated by the first level of ``fallback`` that knows them (``tgt_lang``, ``script``,
``family``: statistics of all calibration rows at that level; ``pooled``: the median of the
groups' parameters), or left raw / refused (``raw`` / ``error``). Every row's level is reported
by :meth:`LGN.sources`.
"""
from __future__ import annotations

import collections
import math
import os
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from .. import __version__
from ..exceptions import (
    DegenerateGroupWarning,
    InputError,
    ModelFileError,
    NotFittedError,
    SmallGroupWarning,
    UnseenGroupWarning,
)
from ..io.langs import family_of, script_of
from ._groupstats import GroupStats
from ._params import ParamsMixin
from ._persist import load_checked, save_checked
from ._signature import check_compatible, merge_signatures

__all__ = ["LGN", "GroupParams", "FORMAT_VERSION"]

FORMAT_VERSION = 1
METHODS = ("zscore", "robust", "quantile")
DERIVED_LEVELS = ("tgt_lang", "script", "family")
TERMINALS = ("pooled", "raw", "error")
MAD_TO_SD = 1.482602218505602  # 1 / Phi^-1(3/4)


@dataclass(frozen=True)
class GroupParams:
    """Fitted parameters of one level: per key the location, scale, n and flags."""

    keys: tuple[Hashable, ...]
    center: np.ndarray
    scale: np.ndarray
    count: np.ndarray
    shrunk: np.ndarray
    degenerate: np.ndarray


class LGN(ParamsMixin):
    """Language-specific Group Normalization, a scikit-learn style estimator.

    Parameters
    ----------
    by : str or list of str
        Grouping columns: ``"tgt_lang"`` (default), ``"lp"`` or any column list.
    method : {"zscore", "robust", "quantile"}
    target : (mean, std)
        Shared scale of the calibrated scores, e.g. ``(80, 10)``; default ``(0, 1)``.
    min_count : int
        Groups with fewer finite scores are shrunk toward the well-estimated groups and flagged.
    sigma_floor : float
        A group whose scale is at most ``sigma_floor * max(1, |center|)`` is degenerate.
    fallback : sequence of str or "default"
        Levels tried for unseen/degenerate groups, from ``tgt_lang``, ``script``, ``family``,
        ending in one of ``pooled``, ``raw``, ``error``. ``"default"`` is
        ``tgt_lang -> script -> family -> pooled`` (the levels finer than or equal to ``by`` dropped;
        for a ``by`` without ``tgt_lang`` or ``lp``, just ``pooled``).
    decay : float or None
        Exponential forgetting for online use: before each ``partial_fit`` batch is merged, earlier
        observations are down-weighted by ``decay`` (0 < decay <= 1).
    window : int or None
        Keep only the last ``window`` ``partial_fit`` batches (the seed's dynamic LGN buffer).
    score : str
        Name of the score column when ``X`` is a DataFrame.
    sketch_capacity : int
        Per-group quantile sketch size for ``robust``/``quantile`` (exact below it).
    """

    def __init__(self, by: str | Sequence[str] = "tgt_lang", method: str = "zscore",
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
    def fit(self, X, groups=None, *, signature: str | None = None) -> LGN:
        """Fit on a calibration set (resets any earlier state). ``X``: a DataFrame with the score and
        group columns, or an array of scores with ``groups`` (array, Series or DataFrame)."""
        self._reset()
        self._update(X, groups, signature)
        self._refresh_params(warn=True, strict=True)
        return self

    def partial_fit(self, X, groups=None, *, signature: str | None = None) -> LGN:
        """Add a batch; over all batches gives the one-pass ``fit`` (unless ``decay``/``window``).
        Small/degenerate groups are flagged in :meth:`group_table` (``fit`` also warns about them)."""
        self._update(X, groups, signature)
        self._refresh_params(warn=False, strict=False)
        return self

    def fit_from(self, parts: Sequence[LGN]) -> LGN:
        """Fit from LGNs with this estimator's parameters, each ``partial_fit`` on a disjoint share of
        the data (chunks of a file, partitions on a cluster): their statistics are merged exactly, so
        the result equals ``fit`` on all the data. Warns and refuses like ``fit``. Returns ``self``."""
        if self.decay is not None or self.window is not None:
            raise InputError("fit_from merges independent parts; decay/window depend on the order of batches")
        self._reset()
        fitted = [p for p in parts if getattr(p, "n_batches_", 0) > 0]
        for part in fitted:
            if part.get_params() != self.get_params():
                raise InputError("fit_from: every part must have this estimator's parameters")
            self.signature_ = merge_signatures(self.signature_, part.signature_)
            self.stats_ = part.stats_ if self.n_batches_ == 0 else {
                lv: self.stats_[lv].merge(part.stats_[lv]) for lv in self.levels_}
            self.n_batches_ += part.n_batches_
        if not fitted:
            raise InputError("fit_from: no part saw any data")
        self._refresh_params(warn=True, strict=True)
        return self

    def _update(self, X, groups, signature) -> None:
        self._validate_params()
        if not hasattr(self, "levels_"):
            self._reset()
        self.signature_ = merge_signatures(self.signature_, signature)
        scores, frame = self._scores_and_groups(X, groups)
        batch = self._batch_stats(scores, frame)
        if self.window is not None:
            self._batches_.append(batch)
            acc = None
            for b in self._batches_:
                acc = b if acc is None else {lv: acc[lv].merge(b[lv]) for lv in self.levels_}
            self.stats_ = acc
        else:
            if self.decay is not None and self.n_batches_ > 0:
                self.stats_ = {lv: s.scaled(self.decay) for lv, s in self.stats_.items()}
            self.stats_ = batch if self.n_batches_ == 0 else {lv: self.stats_[lv].merge(batch[lv]) for lv in self.levels_}
        self.n_batches_ += 1

    def _reset(self) -> None:
        self._validate_params()
        self.by_ = [self.by] if isinstance(self.by, str) else list(self.by)
        self.fallback_ = self._resolve_fallback()
        self.levels_ = ["__by__"] + [lv for lv in self.fallback_ if lv in DERIVED_LEVELS]
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
        if self.decay is not None and not 0 < self.decay <= 1:
            raise InputError(f"decay={self.decay!r}: expected 0 < decay <= 1")
        if self.window is not None and (not isinstance(self.window, (int, np.integer)) or self.window < 1):
            raise InputError(f"window={self.window!r}: expected an integer >= 1")
        if self.decay is not None and self.window is not None:
            raise InputError("decay and window are alternatives; give one of them")

    def _resolve_fallback(self) -> list[str]:
        by = [self.by] if isinstance(self.by, str) else list(self.by)
        if isinstance(self.fallback, str) and self.fallback == "default":
            if by == ["lp"] or ("tgt_lang" in by and len(by) > 1) or ("lp" in by and len(by) > 1):
                chain = ["tgt_lang", "script", "family", "pooled"]
            elif by == ["tgt_lang"]:
                chain = ["script", "family", "pooled"]
            else:
                chain = ["pooled"]
            return chain
        chain = [self.fallback] if isinstance(self.fallback, str) else list(self.fallback)
        for i, level in enumerate(chain):
            if level not in DERIVED_LEVELS + TERMINALS:
                raise InputError(f"fallback level {level!r}: use {', '.join(DERIVED_LEVELS + TERMINALS)}")
            if level in TERMINALS and i != len(chain) - 1:
                raise InputError(f"fallback level {level!r} ends the chain; put it last")
        if not chain or chain[-1] not in TERMINALS:
            chain.append("error")
        return chain

    # data plumbing -----------------------------------------------------------------------------
    def _scores_and_groups(self, X, groups) -> tuple[np.ndarray, pd.DataFrame]:
        if isinstance(X, pd.DataFrame):
            if self.score not in X.columns:
                raise InputError(f"score column {self.score!r} not in the data; columns are {list(X.columns)}")
            scores = X[self.score]
            frame = X if groups is None else _as_frame(groups, self.by_)
        else:
            if groups is None:
                raise InputError("groups are required when X is an array of scores")
            scores = X
            frame = _as_frame(groups, self.by_)
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 1:
            raise InputError(f"scores must be one-dimensional, got shape {scores.shape}")
        if len(frame) != len(scores):
            raise InputError(f"{len(scores)} scores but {len(frame)} group rows; they must be aligned")
        needed = set(self.by_)
        if any(lv in DERIVED_LEVELS for lv in self.levels_[1:]):
            needed.add("tgt_lang")
        missing = sorted(c for c in needed if c not in frame.columns and not (c == "tgt_lang" and "lp" in frame.columns))
        if missing:
            raise InputError(f"group column(s) {missing} not in the data; columns are {list(frame.columns)}")
        return scores, frame

    def _level_keys(self, level: str, frame: pd.DataFrame) -> tuple[np.ndarray, list]:
        """Integer codes and labels of each row at ``level``."""
        if level == "__by__":
            codes, combos = _factorize_many([frame[c] for c in self.by_])
            return codes, [c[0] for c in combos] if len(self.by_) == 1 else combos
        tgt = frame["tgt_lang"] if "tgt_lang" in frame.columns else frame["lp"].map(_tgt_of_lp)
        codes, uniques = _factorize(tgt)
        if level == "tgt_lang":
            return codes, uniques
        mapper = script_of if level == "script" else (lambda k: family_of(k) or "?")
        mapped = [mapper(u) for u in uniques]
        inner, labels = _factorize(pd.Series(mapped, dtype=object))
        return inner[codes], labels

    def _batch_stats(self, scores: np.ndarray, frame: pd.DataFrame) -> dict[str, GroupStats]:
        """Statistics of one batch at every level: one pass over the rows for ``by``; the language
        levels are merged from it when ``by`` determines the target language, else counted from rows."""
        stats = {"__by__": self._level_stats("__by__", scores, frame)}
        derived = self.levels_[1:]
        if not derived:
            return stats
        if "tgt_lang" in self.by_ or "lp" in self.by_:
            col = self.by_.index("tgt_lang" if "tgt_lang" in self.by_ else "lp")
            keys = stats["__by__"].keys
            values = [k[col] if isinstance(k, tuple) else k for k in keys]
            tgt = values if "tgt_lang" in self.by_ else [_tgt_of_lp(v) for v in values]
            for level in derived:
                stats[level] = stats["__by__"].coarsen([_derived_label(level, t) for t in tgt])
            return stats
        for level in derived:
            stats[level] = self._level_stats(level, scores, frame)
        return stats

    def _level_stats(self, level: str, scores: np.ndarray, frame: pd.DataFrame) -> GroupStats:
        codes, labels = self._level_keys(level, frame)
        return GroupStats.from_values(scores, codes, labels, with_sketch=self.method != "zscore",
                                      capacity=self.sketch_capacity)

    # parameters --------------------------------------------------------------------------------
    def _refresh_params(self, warn: bool = False, strict: bool = False) -> None:
        self.params_ = {lv: self._params_of(self.stats_[lv]) for lv in self.levels_}
        main = self.params_["__by__"]
        usable = ~main.degenerate & (main.count > 0)
        if not usable.any() and strict:
            raise InputError(f"score column {self.score!r}: no group has a usable spread (all scores constant or "
                             "missing); LGN cannot be fitted; check that it is the metric's column, or fit on scores "
                             "that vary within a group")
        self.pooled_ = ((float(np.median(main.center[usable])), float(np.median(main.scale[usable])))
                        if usable.any() else (np.nan, np.nan))
        self.groups_ = list(main.keys)
        self._usable_ = {lv: {key: i for i, key in enumerate(p.keys) if not p.degenerate[i] and p.count[i] > 0}
                         for lv, p in self.params_.items()}
        if warn:
            small = [_label(k) for k, s in zip(main.keys, main.shrunk) if s]
            degenerate = [_label(k) for k, d in zip(main.keys, main.degenerate) if d]
            if small:
                warnings.warn(f"{len(small)} group(s) have fewer than min_count={self.min_count} scores and were "
                              f"shrunk toward the other groups: {', '.join(small[:10])}", SmallGroupWarning, stacklevel=3)
            if degenerate:
                warnings.warn(f"{len(degenerate)} group(s) have (near) zero spread and are calibrated through the "
                              f"fallback chain: {', '.join(degenerate[:10])}", DegenerateGroupWarning, stacklevel=3)

    def _params_of(self, stats: GroupStats) -> GroupParams:
        n = stats.count
        if self.method == "zscore":
            center, scale = stats.mean.copy(), stats.std(ddof=0)
        else:
            center = np.array([s.quantile(0.5) if s.weight > 0 else np.nan for s in stats.sketches], dtype=float)
            if self.method == "robust":
                scale = np.array([_mad(s, c) * MAD_TO_SD if s.weight > 0 else np.nan
                                  for s, c in zip(stats.sketches, center)], dtype=float)
            else:  # quantile: the location/scale only serve shrinkage, tails and intervals
                center, scale = stats.mean.copy(), stats.std(ddof=0)
        with np.errstate(invalid="ignore"):
            degenerate = ~(scale > self.sigma_floor * np.maximum(1.0, np.abs(center)))
        shrunk = (n < self.min_count) & ~degenerate
        if shrunk.any():
            solid = ~degenerate & ~shrunk
            pool = solid if solid.any() else ~degenerate
            c0, v0 = np.median(center[pool]), np.median(scale[pool] ** 2)
            z = np.sqrt(np.minimum(1.0, n / self.min_count))
            center = np.where(shrunk, z * center + (1 - z) * c0, center)
            scale = np.where(shrunk, np.sqrt(z * scale**2 + (1 - z) * v0), scale)
        return GroupParams(stats.keys, center, scale, n, shrunk, degenerate)

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

    def _resolve(self, frame: pd.DataFrame):
        """Per distinct group combination (``by`` values, plus the target language when a language
        fallback is active): the level that calibrates it (index into ``levels_``; -1 pooled, -2 raw)
        and its key index there. Rows map to combinations through ``codes``; the fallback chain is
        walked once per combination, never per row."""
        active = ["__by__"] + [lv for lv in self.fallback_ if lv in DERIVED_LEVELS]
        columns = [frame[c] for c in self.by_]
        need_tgt = len(active) > 1
        # the target language is read off the group label when `by` holds it (no second column to hash)
        tgt_of = None
        if need_tgt and "tgt_lang" in self.by_:
            position = self.by_.index("tgt_lang")
            tgt_of = lambda combo: combo[position]  # noqa: E731
        elif need_tgt and "lp" in self.by_:
            position = self.by_.index("lp")
            tgt_of = lambda combo: _tgt_of_lp(combo[position])  # noqa: E731
        elif need_tgt:
            columns.append(frame["tgt_lang"] if "tgt_lang" in frame.columns else frame["lp"].map(_tgt_of_lp))
            tgt_of = lambda combo: combo[-1]  # noqa: E731
        # unused categories of a categorical cost a pass to drop; they only matter if they fall back
        codes, combos = _factorize_many(columns, drop_unused=False)
        n_by = len(self.by_)
        level = np.full(len(combos), -3, dtype=np.int64)
        key = np.full(len(combos), -1, dtype=np.int64)
        for i, combo in enumerate(combos):
            by_label = combo[0] if n_by == 1 else tuple(combo[:n_by])
            tgt = tgt_of(combo) if need_tgt else None
            for lv in active:
                label = by_label if lv == "__by__" else _derived_label(lv, tgt)
                j = self._usable_[lv].get(label)
                if j is not None:
                    level[i], key[i] = self.levels_.index(lv), j
                    break
        if (level != 0).any():  # combinations without rows (unused categories) are no one's concern
            present = np.bincount(codes, minlength=len(combos)) > 0
            level[~present & (level == -3)] = -2
        missing = level == -3
        if missing.any():
            terminal = self.fallback_[-1]
            if terminal == "error":
                labels = [_label(c[0] if n_by == 1 else tuple(c[:n_by])) for c in np.asarray(combos, dtype=object)[missing]]
                n_rows = int(np.isin(codes, np.flatnonzero(missing)).sum())
                raise InputError(
                    f"{n_rows} row(s) belong to group(s) the calibrator cannot calibrate "
                    f"({', '.join(sorted(set(labels))[:10])}); fit on data that covers them or allow a fallback "
                    "(e.g. --on-unseen pooled)"
                )
            level[missing] = -1 if terminal == "pooled" else -2
        return codes, level, key

    def _combo_coefficients(self, level: np.ndarray, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        center = np.full(len(level), np.nan)
        scale = np.full(len(level), np.nan)
        for li, lv in enumerate(self.levels_):
            sel = level == li
            center[sel] = self.params_[lv].center[key[sel]]
            scale[sel] = self.params_[lv].scale[key[sel]]
        center[level == -1], scale[level == -1] = self.pooled_
        return center, scale

    def _coefficients(self, frame: pd.DataFrame):
        """Per row: location, scale, level index used and key index within that level."""
        codes, level, key = self._resolve(frame)
        center, scale = self._combo_coefficients(level, key)
        return center[codes], scale[codes], level[codes], key[codes]

    def transform(self, X, groups=None, *, signature: str | None = None, force: bool = False) -> np.ndarray:
        """Calibrated scores (NaN where the score is NaN; raw where the fallback is ``raw``)."""
        self._check_fitted()
        scores, frame = self._scores_and_groups(X, groups)
        self._check_signature(signature, force, frame)
        codes, level, key = self._resolve(frame)
        self._warn_unseen(codes, level)
        if self.method == "quantile":
            center, scale = self._combo_coefficients(level, key)
            return self._forward(scores, center[codes], scale[codes], level[codes], key[codes])
        # one fused gather per row: out = x * a[g] + b[g], the memory-bandwidth bound
        center, scale = self._combo_coefficients(level, key)
        t_mean, t_std = (float(v) for v in self.target)
        a = t_std / scale
        b = t_mean - center * a
        a[level == -2], b[level == -2] = 1.0, 0.0
        codes = codes.astype(np.intp, copy=False)  # take() with small int codes would convert them twice
        out = a.take(codes)  # in place from here: one output array, no temporaries
        out *= scores
        out += b.take(codes)
        if not np.isfinite(np.add.reduce(out)):  # one cheap pass; only NaN/inf data pays for the mask
            out[np.isinf(out)] = np.nan  # +-inf scores are kept as rows but have no calibrated value
        return out

    def _forward(self, scores, center, scale, level_used, key_index) -> np.ndarray:
        t_mean, t_std = (float(v) for v in self.target)
        if self.method != "quantile":
            a = t_std / scale
            out = scores * a + (t_mean - center * a)
        else:
            out = np.empty_like(scores)
            for li, level in enumerate(self.levels_):
                rows = np.flatnonzero(level_used == li)
                if len(rows):
                    out[rows] = self._quantile_map(level, scores[rows], key_index[rows], inverse=False)
            pooled = level_used == -1
            out[pooled] = (scores[pooled] - center[pooled]) / scale[pooled] * t_std + t_mean
        raw = level_used == -2
        out[raw] = scores[raw]
        out[np.isinf(scores)] = np.nan
        return out

    def inverse_transform(self, X, groups=None) -> np.ndarray:
        """Map calibrated scores back to the raw scale (exact inverse of :meth:`transform`)."""
        self._check_fitted()
        calibrated, frame = self._scores_and_groups(X, groups)
        center, scale, level_used, key_index = self._coefficients(frame)
        t_mean, t_std = (float(v) for v in self.target)
        out = (calibrated - t_mean) / t_std * scale + center
        if self.method == "quantile":
            for li, level in enumerate(self.levels_):
                rows = np.flatnonzero(level_used == li)
                if len(rows):
                    out[rows] = self._quantile_map(level, calibrated[rows], key_index[rows], inverse=True)
        raw = level_used == -2
        out[raw] = calibrated[raw]
        return out

    def fit_transform(self, X, groups=None, *, signature: str | None = None) -> np.ndarray:
        return self.fit(X, groups, signature=signature).transform(X, groups, signature=signature)

    def sources(self, X, groups=None) -> np.ndarray:
        """Per row, the level that calibrated it: ``by`` columns joined by '+', a fallback level, ``pooled`` or ``raw``."""
        self._check_fitted()
        _, frame = self._scores_and_groups(X, groups)
        codes, level, _ = self._resolve(frame)
        names = np.array(["+".join(self.by_)] + self.levels_[1:] + ["raw", "pooled"], dtype=object)
        return names[np.where(level >= 0, level, len(self.levels_) + (level == -1))][codes]

    def _warn_unseen(self, codes: np.ndarray, level: np.ndarray) -> None:
        if not (level != 0).any():
            return
        per_level = np.bincount(level[codes] + 2, minlength=len(self.levels_) + 2)
        names = ["raw", "pooled", *self.levels_]
        detail = ", ".join(f"{names[i]}: {c}" for i, c in enumerate(per_level) if c and names[i] != "__by__")
        n_fell = int(per_level.sum() - per_level[2])
        if n_fell == 0:
            return
        warnings.warn(f"{n_fell} row(s) of unseen or degenerate groups were calibrated by fallback ({detail})",
                      UnseenGroupWarning, stacklevel=3)

    def _quantile_map(self, level: str, x: np.ndarray, key_index: np.ndarray, inverse: bool) -> np.ndarray:
        params = self.params_[level]
        stats = self.stats_[level]
        t_mean, t_std = (float(v) for v in self.target)
        out = np.full(len(x), np.nan)
        for k in np.unique(key_index):
            rows = key_index == k
            values, probs = stats.sketches[k].cdf_points()
            z_grid = special.ndtri(probs)
            slope = 1.0 / params.scale[k]
            if len(values) == 1:
                z_grid = np.zeros(1)
            if not inverse:
                z = np.interp(x[rows], values, z_grid)
                z = np.where(x[rows] < values[0], z_grid[0] + (x[rows] - values[0]) * slope, z)
                z = np.where(x[rows] > values[-1], z_grid[-1] + (x[rows] - values[-1]) * slope, z)
                out[rows] = z * t_std + t_mean
            else:
                z = (x[rows] - t_mean) / t_std
                v = np.interp(z, z_grid, values)
                v = np.where(z < z_grid[0], values[0] + (z - z_grid[0]) / slope, v)
                v = np.where(z > z_grid[-1], values[-1] + (z - z_grid[-1]) / slope, v)
                out[rows] = v
        return out

    # uncertainty -------------------------------------------------------------------------------
    def interval(self, X, groups=None, *, level: float = 0.95, n_resamples: int = 400,
                 random_state: int | np.random.Generator | None = 0) -> tuple[np.ndarray, np.ndarray]:
        """Confidence interval of each calibrated score from the sampling uncertainty of its group's
        statistics. ``zscore``: delta method, ``Var(z_hat) ~ (1 + z^2/2) / n`` for near-normal
        calibration sets. ``robust``/``quantile``: percentile bootstrap of the stored calibration
        sample (the sketch), ``n_resamples`` draws with ``random_state``. Rows calibrated raw get NaN."""
        self._check_fitted()
        if not 0 < level < 1:
            raise InputError(f"level={level!r}: expected a number between 0 and 1, e.g. 0.95")
        scores, frame = self._scores_and_groups(X, groups)
        center, scale, level_used, key_index = self._coefficients(frame)
        t_mean, t_std = (float(v) for v in self.target)
        n = np.full(len(scores), np.nan)
        for li, lv in enumerate(self.levels_):
            rows = level_used == li
            n[rows] = self.params_[lv].count[key_index[rows]]
        n[level_used == -1] = np.median(self.params_["__by__"].count[self.params_["__by__"].count > 0])
        point = self._forward(scores, center, scale, level_used, key_index)
        if self.method == "zscore":
            z = (scores - center) / scale
            half = special.ndtri(0.5 + level / 2) * t_std * np.sqrt((1 + z * z / 2) / n)
            low, high = point - half, point + half
        else:
            low, high = self._bootstrap_interval(scores, level_used, key_index, point, level, n_resamples, random_state)
        raw = level_used == -2
        low[raw] = high[raw] = np.nan
        return low, high

    def _bootstrap_interval(self, scores, level_used, key_all, point, level, n_resamples, random_state):
        rng = np.random.default_rng(random_state)
        low, high = point.copy(), point.copy()
        t_mean, t_std = (float(v) for v in self.target)
        alpha = (1 - level) / 2
        for li, lv in enumerate(self.levels_):
            rows_all = np.flatnonzero(level_used == li)
            if not len(rows_all):
                continue
            key_index = key_all[rows_all]
            stats = self.stats_[lv]
            for k in np.unique(key_index):
                rows = rows_all[key_index == k]
                sk = stats.sketches[k]
                p = sk.weights / sk.weights.sum()
                m = max(int(round(sk.weight)), 1)
                draws = rng.multinomial(m, p, size=n_resamples).astype(float)
                x = scores[rows]
                if self.method == "robust":
                    centers = np.array([_wquantile(sk.values, d, 0.5) for d in draws])
                    scales = np.array([MAD_TO_SD * _wquantile(np.abs(sk.values - c), d, 0.5) for c, d in zip(centers, draws)])
                    sims = (x[None, :] - centers[:, None]) / scales[:, None] * t_std + t_mean
                else:
                    sims = np.empty((n_resamples, len(x)))
                    for b, d in enumerate(draws):
                        keep = d > 0
                        vals, w = sk.values[keep], d[keep]
                        cum = np.cumsum(w)
                        zg = special.ndtri((cum - 0.5 * w) / cum[-1])
                        sd = math.sqrt(np.average((vals - np.average(vals, weights=w)) ** 2, weights=w)) or 1.0
                        z = np.interp(x, vals, zg)
                        z = np.where(x < vals[0], zg[0] + (x - vals[0]) / sd, z)
                        z = np.where(x > vals[-1], zg[-1] + (x - vals[-1]) / sd, z)
                        sims[b] = z * t_std + t_mean
                low[rows] = np.quantile(sims, alpha, axis=0)
                high[rows] = np.quantile(sims, 1 - alpha, axis=0)
        pooled = level_used == -1
        low[pooled] = high[pooled] = np.nan
        return low, high

    # reporting ---------------------------------------------------------------------------------
    def group_table(self) -> pd.DataFrame:
        """One row per fitted group of the ``by`` level: n, mean, std, min, max, center, scale, flags."""
        self._check_fitted()
        stats, params = self.stats_["__by__"], self.params_["__by__"]
        return pd.DataFrame({
            "group": [_label(k) for k in stats.keys],
            "n": stats.count, "mean": stats.mean, "std": stats.std(ddof=0), "min": stats.min, "max": stats.max,
            "center": params.center, "scale": params.scale, "shrunk": params.shrunk, "degenerate": params.degenerate,
            "n_nonfinite": stats.n_nonfinite,
        })

    # persistence -------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        self._check_fitted()
        params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.get_params().items()}
        params["fallback"] = self.fallback if isinstance(self.fallback, str) else list(self.fallback)
        params["by"] = self.by if isinstance(self.by, str) else list(self.by)
        return {
            "format": "xleval.LGN", "format_version": FORMAT_VERSION, "xleval_version": __version__,
            "params": params, "signature": self.signature_, "n_batches": self.n_batches_,
            "levels": {lv: self.stats_[lv].to_dict() for lv in self.levels_},
        }

    def save(self, path: str | os.PathLike) -> None:
        """Versioned JSON with options, per-level statistics, the metric signature and a SHA-256 checksum."""
        save_checked(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> LGN:
        return cls.from_dict(load_checked(path, "xleval.LGN", FORMAT_VERSION, "LGN calibrator"), source=str(path))

    @classmethod
    def from_dict(cls, payload: dict, source: str = "calibrator") -> LGN:
        load_checked(payload, "xleval.LGN", FORMAT_VERSION, "LGN calibrator")
        try:
            params = dict(payload["params"])
            params["target"] = tuple(params["target"])
            model = cls(**params)
            model._reset()
            model.stats_ = {lv: GroupStats.from_dict(d) for lv, d in payload["levels"].items()}
            if list(model.stats_) != model.levels_:
                raise ValueError("levels do not match the options")
            model.signature_ = payload.get("signature")
            model.n_batches_ = int(payload.get("n_batches", 1))
            model._refresh_params(warn=False)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
            raise ModelFileError(f"{source}: malformed calibrator ({exc}); refit and save it again") from None
        return model


# helpers -------------------------------------------------------------------------------------------
def _as_frame(groups, by: list[str]) -> pd.DataFrame:
    if isinstance(groups, pd.DataFrame):
        return groups
    if len(by) != 1:
        raise InputError(f"by={by} has several columns; pass groups as a DataFrame with those columns")
    return pd.DataFrame({by[0]: np.asarray(groups, dtype=object)})


def _factorize_many(columns: list, drop_unused: bool = True) -> tuple[np.ndarray, list[tuple]]:
    """Integer codes of the distinct combinations of several aligned columns, and the combinations.
    Categorical columns use their codes directly (no hashing of 10M strings)."""
    parts = [_factorize(c, drop_unused) for c in columns]
    if len(parts) == 1:
        codes, uniques = parts[0]
        return codes, [(u,) for u in uniques]
    combined = np.zeros(len(parts[0][0]), dtype=np.int64)
    for codes, uniques in parts:
        combined = combined * (len(uniques) + 1) + codes
    codes, _ = pd.factorize(combined)
    first = np.empty(codes.max() + 1 if len(codes) else 0, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    combos = [tuple(uniques[c[r]] for c, uniques in parts) for r in first]
    return codes.astype(np.intp), combos


def _derived_label(level: str, tgt):
    if level == "tgt_lang":
        return tgt
    if level == "script":
        return script_of(tgt)
    return family_of(tgt) or "?"


def _factorize(values, drop_unused: bool = True) -> tuple[np.ndarray, list]:
    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        uniques = list(values.cat.categories)
    else:
        codes, uniques = pd.factorize(pd.Series(values), use_na_sentinel=True)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0]) + 1
        raise InputError(f"group value missing at row {row}; fill it in or drop the row before calibrating")
    if drop_unused and len(uniques) > 1 and len(codes):
        used = np.bincount(codes, minlength=len(uniques)) > 0
        if not used.all():  # unused categories of a categorical are not groups (no empty groups, no false 'unseen')
            codes = (np.cumsum(used) - 1)[codes]
            uniques = [u for u, keep in zip(uniques, used) if keep]
    return codes, [_py(u) for u in uniques]


def _py(value):
    return value.item() if hasattr(value, "item") else value


def _label(key) -> str:
    return "|".join(map(str, key)) if isinstance(key, tuple) else str(key)


def _tgt_of_lp(lp: str) -> str:
    from ..io.langs import split_lp

    return split_lp(lp)[1]


def _mad(sketch, center: float) -> float:
    return float(_wquantile(np.abs(sketch.values - center), sketch.weights, 0.5))


def _wquantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    keep = weights > 0
    v, w = values[keep], weights[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    pos = (cum - 0.5 * w) / cum[-1]
    return float(np.interp(q, pos, v))
