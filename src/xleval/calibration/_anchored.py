"""Anchored calibration (the seed's "regression-based calibration", section 4.2): per group a
monotone map from the metric to the human scale, fitted on rows that have human scores.

* ``linear``  : ``h ~ a_g + b_g x`` by least squares;
* ``isotonic``: the non-decreasing least-squares fit (``scipy.optimize.isotonic_regression`` on
  the distinct metric values, weighted by their counts), linearly interpolated between them and
  held constant beyond them.

A group with ``n < min_count`` anchor rows is shrunk toward the pooled map (one map fitted on
all groups together) with the same credibility as LGN, ``Z = sqrt(n / min_count)``:
``f(x) = Z f_g(x) + (1 - Z) f_pooled(x)``. A group with fewer than two distinct metric values is
degenerate and, like an unseen group, uses the pooled map (``fallback="pooled"``) or is refused
(``fallback="error"``). Persistence follows LGN: versioned JSON, metric signature, SHA-256 checksum.
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.optimize import isotonic_regression

from .. import __version__
from ..exceptions import (DegenerateGroupWarning, InputError, ModelFileError, NotFittedError, SmallGroupWarning, UnseenGroupWarning)
from ._params import ParamsMixin
from ._persist import load_checked, save_checked
from ._signature import check_compatible

__all__ = ["AnchoredCalibrator"]

FORMAT = "xleval.AnchoredCalibrator"
FORMAT_VERSION = 1
METHODS = ("linear", "isotonic")


class AnchoredCalibrator(ParamsMixin):
    """Per-group metric -> human-scale map, a scikit-learn style estimator.

    Parameters: ``by`` (column or list of columns), ``method`` (``linear`` or ``isotonic``),
    ``min_count`` (anchor rows for full credibility), ``score`` and ``human`` (column names when
    ``X`` is a DataFrame), ``fallback`` (``pooled`` or ``error`` for unseen/degenerate groups).
    Learned state: ``maps_`` (group label -> map dict), ``pooled_``, ``signature_``.
    """

    _output_suffix = "anchored"

    def __init__(self, by: str | Sequence[str] = "tgt_lang", method: str = "linear", min_count: int = 50,
                 score: str = "score", human: str = "human", fallback: str = "pooled"):
        self.by = by
        self.method = method
        self.min_count = min_count
        self.score = score
        self.human = human
        self.fallback = fallback

    # fitting -------------------------------------------------------------------------------------
    def fit(self, X, groups=None, human=None, *, signature: str | None = None) -> AnchoredCalibrator:
        """Fit on rows with a finite score and human score (others ignored). ``X``: a DataFrame with
        the ``score``, ``human`` and ``by`` columns, or an array of scores with ``groups`` and ``human``."""
        self._validate()
        x, labels, h = self._inputs(X, groups, human, need_human=True)
        keep = np.isfinite(x) & np.isfinite(h)
        if keep.sum() < 2:
            raise InputError(f"anchored calibration needs at least 2 rows with both a score and a human score; got {int(keep.sum())}")
        x, labels, h = x[keep], labels[keep], h[keep]
        self.pooled_ = _fit_map(x, h, self.method)
        if self.pooled_ is None:
            raise InputError("scores are constant over all anchor rows; no map to the human scale can be fitted")
        self.maps_ = {}
        for g in sorted(set(labels.tolist())):
            rows = labels == g
            fitted = _fit_map(x[rows], h[rows], self.method)
            n = int(rows.sum())
            z = math.sqrt(min(1.0, n / self.min_count))
            self.maps_[g] = {"n": n, "credibility": z if fitted is not None else 0.0,
                             "degenerate": fitted is None, "map": fitted}
        self.signature_ = signature
        self._warn_fit()
        return self

    def _validate(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"method={self.method!r}: use one of {', '.join(METHODS)}")
        if not isinstance(self.min_count, (int, np.integer)) or self.min_count < 1:
            raise InputError(f"min_count={self.min_count!r}: expected an integer >= 1")
        if self.fallback not in ("pooled", "error"):
            raise InputError(f"fallback={self.fallback!r}: use 'pooled' or 'error'")

    def _inputs(self, X, groups, human, need_human: bool):
        by = [self.by] if isinstance(self.by, str) else list(self.by)
        if isinstance(X, pd.DataFrame):
            cols = [self.score, *(by if groups is None else []), *([self.human] if need_human and human is None else [])]
            missing = [c for c in cols if c not in X.columns]
            if missing:
                raise InputError(f"column(s) {missing} not in the data; columns are {list(X.columns)}")
            x = X[self.score]
            gframe = X[by] if groups is None else groups
            h = X[self.human] if need_human and human is None else human
        else:
            if groups is None or (need_human and human is None):
                raise InputError("with an array of scores, pass groups= (and human= to fit)")
            x, gframe, h = X, groups, human
        x = np.asarray(x, dtype=np.float64)
        labels = _labels(gframe, len(x))
        h = None if h is None else np.asarray(h, dtype=np.float64)
        if h is not None and len(h) != len(x):
            raise InputError(f"{len(x)} scores but {len(h)} human scores; they must be aligned")
        return x, labels, h

    def _warn_fit(self) -> None:
        small = [g for g, m in self.maps_.items() if not m["degenerate"] and m["credibility"] < 1]
        degenerate = [g for g, m in self.maps_.items() if m["degenerate"]]
        if small:
            warnings.warn(f"{len(small)} group(s) have fewer than min_count={self.min_count} anchor rows and were shrunk "
                          f"toward the pooled map: {', '.join(small[:10])}", SmallGroupWarning, stacklevel=3)
        if degenerate:
            warnings.warn(f"{len(degenerate)} group(s) have fewer than 2 distinct scores; they use the "
                          f"{self.fallback} map: {', '.join(degenerate[:10])}", DegenerateGroupWarning, stacklevel=3)

    # applying ------------------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        if not hasattr(self, "maps_"):
            raise NotFittedError("this AnchoredCalibrator is not fitted yet; call fit() or load() first")

    def transform(self, X, groups=None, *, signature: str | None = None, force: bool = False):
        """Scores mapped to the human scale (NaN stays NaN): a 1-D array, or as configured by ``set_output``."""
        self._check_fitted()
        if not force:
            check_compatible(self.signature_, signature)
        x, labels, _ = self._inputs(X, groups, None, need_human=False)
        out = np.full(len(x), np.nan)
        fell = []
        for g in np.unique(labels):
            rows = labels == g
            m = self.maps_.get(g)
            if m is None or m["degenerate"]:
                fell.append(str(g))
                out[rows] = _apply(self.pooled_, x[rows])
            else:
                z = m["credibility"]
                out[rows] = z * _apply(m["map"], x[rows]) + (1 - z) * _apply(self.pooled_, x[rows])
        if fell:
            if self.fallback == "error":
                raise InputError(f"group(s) {fell[:10]} were not fitted (or are degenerate); fit on data that covers "
                                 "them or use fallback='pooled'")
            warnings.warn(f"group(s) {fell[:10]} unseen or degenerate in fit: mapped with the pooled map",
                          UnseenGroupWarning, stacklevel=2)
        return self._as_output(out, X)

    def fit_transform(self, X, groups=None, human=None, *, signature: str | None = None) -> np.ndarray:
        return self.fit(X, groups, human, signature=signature).transform(X, groups, signature=signature)

    def sources(self, X, groups=None) -> np.ndarray:
        """Per row: ``group`` (its own map, possibly shrunk) or ``pooled``."""
        self._check_fitted()
        _, labels, _ = self._inputs(X, groups, None, need_human=False)
        own = np.array([g in self.maps_ and not self.maps_[g]["degenerate"] for g in labels], dtype=bool)
        return np.where(own, "group", "pooled").astype(object)

    def group_table(self) -> pd.DataFrame:
        """One row per fitted group: n, credibility, degenerate and (linear) intercept/slope."""
        self._check_fitted()
        rows = []
        for g, m in self.maps_.items():
            fitted = m["map"] or {}
            rows.append({"group": g, "n": m["n"], "credibility": m["credibility"], "degenerate": m["degenerate"],
                         "intercept": fitted.get("intercept", np.nan), "slope": fitted.get("slope", np.nan),
                         "n_knots": len(fitted.get("x", ())) or np.nan})
        return pd.DataFrame(rows)

    # persistence ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        self._check_fitted()
        params = self.get_params()
        params["by"] = self.by if isinstance(self.by, str) else list(self.by)
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "xleval_version": __version__, "params": params,
                "signature": self.signature_, "pooled": self.pooled_, "groups": self.maps_}

    def save(self, path: str | os.PathLike) -> None:
        """Versioned JSON with options, per-group maps, the metric signature and a SHA-256 checksum."""
        save_checked(self.to_dict(), path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> AnchoredCalibrator:
        return cls.from_dict(load_checked(path, FORMAT, FORMAT_VERSION, "anchored calibrator"), source=str(path))

    @classmethod
    def from_dict(cls, payload: dict, source: str = "calibrator") -> AnchoredCalibrator:
        load_checked(payload, FORMAT, FORMAT_VERSION, "anchored calibrator")
        try:
            model = cls(**payload["params"])
            model._validate()
            model.pooled_ = payload["pooled"]
            model.maps_ = {str(g): m for g, m in payload["groups"].items()}
            model.signature_ = payload.get("signature")
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
            raise ModelFileError(f"{source}: malformed calibrator ({exc}); refit and save it again") from None
        return model


def _labels(groups, n: int) -> np.ndarray:
    frame = groups if isinstance(groups, pd.DataFrame) else pd.DataFrame({"g": np.asarray(groups, dtype=object)})
    if len(frame) != n:
        raise InputError(f"{n} scores but {len(frame)} group rows; they must be aligned")
    if frame.isna().any(axis=1).any():
        row = int(np.flatnonzero(frame.isna().any(axis=1).to_numpy())[0]) + 1
        raise InputError(f"group value missing at row {row}; fill it in or drop the row")
    if frame.shape[1] == 1:
        return frame.iloc[:, 0].astype(str).to_numpy(dtype=object)
    return frame.astype(str).agg("|".join, axis=1).to_numpy(dtype=object)


def _fit_map(x: np.ndarray, h: np.ndarray, method: str) -> dict | None:
    """The map of one group as a JSON-ready dict, or None with fewer than 2 distinct scores."""
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    if len(values) < 2:
        return None
    if method == "linear":
        slope, intercept = np.polyfit(x, h, 1)
        return {"kind": "linear", "intercept": float(intercept), "slope": float(slope)}
    means = np.bincount(inverse, weights=h) / counts
    fitted = isotonic_regression(means, weights=counts.astype(float), increasing=True).x
    return {"kind": "isotonic", "x": values.tolist(), "y": np.asarray(fitted, dtype=float).tolist()}


def _apply(m: dict, x: np.ndarray) -> np.ndarray:
    if m["kind"] == "linear":
        return m["intercept"] + m["slope"] * x
    out = np.interp(x, np.asarray(m["x"]), np.asarray(m["y"]))
    return np.where(np.isnan(x), np.nan, out)
