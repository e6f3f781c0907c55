"""Anchored calibrators saved in format version 1 (xleval 0.1.0) keep loading and give the numbers
they gave: per-group linear or isotonic maps, shrunk toward the pooled map with credibility
``Z = sqrt(n / min_count)``, the pooled map for unseen or degenerate groups. Only applying them is
supported (:class:`LegacyAnchoredCalibrator`, what :func:`xleval.calibration.load_calibrator` returns for
such a file); refit with this xleval for sparse labels, intervals and the between-system slope."""
from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np

from .._base.signature import check_compatible
from ..exceptions import InputError, ModelFileError, NotFittedError, UnseenGroupWarning
from ._anchored import FORMAT, AnchoredCalibrator, anchored_on_unseen
from ._params import ParamsMixin
from ._persist import load_checked, save_checked

__all__ = ["LegacyMaps", "LegacyAnchoredCalibrator"]


class LegacyMaps:
    """The fitted state of a format-1 file and its transform."""

    def __init__(self, payload: dict):
        self.payload = payload
        self.pooled = payload["pooled"]
        self.groups = {str(g): m for g, m in payload["groups"].items()}
        _apply(self.pooled, np.zeros(1))  # a malformed map fails at load, not at use

    def transform(self, x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Calibrated scores and the groups that fell back to the pooled map."""
        out = np.full(len(x), np.nan)
        fell = []
        for g in np.unique(labels):
            rows = labels == g
            m = self.groups.get(str(g))
            if m is None or m["degenerate"]:
                fell.append(str(g))
                out[rows] = _apply(self.pooled, x[rows])
            else:
                z = m["credibility"]
                out[rows] = z * _apply(m["map"], x[rows]) + (1 - z) * _apply(self.pooled, x[rows])
        return out, fell

    def own(self, label: str) -> bool:
        m = self.groups.get(str(label))
        return m is not None and not m["degenerate"]


def _apply(m: dict, x: np.ndarray) -> np.ndarray:
    if m["kind"] == "linear":
        return m["intercept"] + m["slope"] * x
    out = np.interp(x, np.asarray(m["x"], dtype=float), np.asarray(m["y"], dtype=float))
    return np.where(np.isnan(x), np.nan, out)


class LegacyAnchoredCalibrator(ParamsMixin):
    """An anchored calibrator loaded from a file of format version 1: it transforms, names each row's
    source, and saves itself back as it was read; intervals, the group table and refitting need a
    calibrator fitted by this xleval (:class:`~xleval.calibration.AnchoredCalibrator`)."""

    _output_suffix = "anchored"
    kind = "anchored"  # the calibrated column is <score>_anchored
    signature_: str | None = None
    by_: list[str]
    maps_: LegacyMaps  # the learned state: set by from_dict

    def __init__(self, by: str | Sequence[str] = "tgt_lang", score: str = "score", human: str = "human",
                 fallback: str = "pooled"):
        self.by = by
        self.score = score
        self.human = human
        self.fallback = fallback

    @classmethod
    def from_dict(cls, payload: dict, source: str = "calibrator") -> LegacyAnchoredCalibrator:
        """From a verified format-1 payload (``AnchoredCalibrator.load`` checks it)."""
        try:
            params = payload["params"]
            model = cls(by=params["by"], score=params["score"], human=params["human"], fallback=params["fallback"])
            if model.fallback not in ("pooled", "error"):
                raise ValueError(f"fallback {model.fallback!r}")
            model.by_ = [model.by] if isinstance(model.by, str) else list(model.by)
            model.signature_ = payload.get("signature")
            if model.signature_ is not None and not isinstance(model.signature_, str):
                raise ValueError(f"signature {model.signature_!r} is not text")
            model.maps_ = LegacyMaps(payload)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
            raise ModelFileError(f"{source}: malformed calibrator ({exc}); refit and save it again") from None
        return model

    @classmethod
    def load(cls, path: str | os.PathLike) -> LegacyAnchoredCalibrator:
        return cls.from_dict(load_checked(path, FORMAT, 1, "anchored calibrator"), source=str(path))

    def _check_fitted(self) -> None:
        if not hasattr(self, "maps_"):
            raise NotFittedError("this format-1 anchored calibrator holds no maps; load() a saved file")

    def _labels(self, X, groups) -> tuple[np.ndarray, np.ndarray]:
        """Scores and each row's group label, read as the main class reads them."""
        reader = AnchoredCalibrator(by=self.by, score=self.score, human=self.human, system=None)
        x, (codes, labels), _, _ = reader._inputs(self._table_frame(X), groups, None, None, need_human=False)
        return x, np.asarray(labels, dtype=object)[codes]

    def transform(self, X, groups=None, *, systems=None, signature: str | None = None, force: bool = False):
        """Calibrated scores by the format-1 maps (``systems`` is accepted and unused: format 1 had
        no between-system slope)."""
        self._check_fitted()
        if not force:
            check_compatible(self.signature_, signature)
        x, labels = self._labels(X, groups)
        out, fell = self.maps_.transform(x, labels)
        if fell:
            if self.fallback == "error":
                raise InputError(f"group(s) {fell[:10]} were not fitted (or are degenerate); fit on data that covers "
                                 "them or use fallback='pooled'", argument="fallback", value=self.fallback)
            warnings.warn(f"group(s) {fell[:10]} unseen or degenerate in fit: mapped with the pooled map",
                          UnseenGroupWarning, stacklevel=2)
        return self._as_output(out, self._table_frame(X))

    def sources(self, X, groups=None) -> np.ndarray:
        """Per row ``group`` (its own map) or ``pooled``: format 1's names."""
        self._check_fitted()
        _, labels = self._labels(X, groups)
        return np.where([self.maps_.own(g) for g in labels], "group", "pooled").astype(object)

    def with_on_unseen(self, on_unseen: str | None) -> LegacyAnchoredCalibrator:
        self._check_fitted()
        return anchored_on_unseen(self, on_unseen)

    def calibrated_signature(self) -> str:
        return (f"anchored|by:{'+'.join(self.group_columns())}|human:{self.human}|format:1"
                f"|of:{self.signature_ or 'unknown'}")

    def to_dict(self) -> dict:
        self._check_fitted()
        return {k: v for k, v in self.maps_.payload.items() if k != "checksum"}

    def save(self, path: str | os.PathLike) -> None:
        save_checked(self.to_dict(), path)

    def fit(self, X, y=None, **kwargs) -> LegacyAnchoredCalibrator:
        raise ModelFileError(_TRANSFORM_ONLY.format(what="fitting"))

    def interval(self, X, groups=None, *, level: float = 0.95, **kwargs) -> tuple[np.ndarray, np.ndarray]:
        raise ModelFileError(_TRANSFORM_ONLY.format(what="intervals"))

    def group_table(self):
        raise ModelFileError(_TRANSFORM_ONLY.format(what="group_table"))

    def describe(self) -> dict:
        raise ModelFileError(_TRANSFORM_ONLY.format(what="describe"))


_TRANSFORM_ONLY = ("this anchored calibrator was saved in format version 1 and supports transform only, not {what}; "
                   "refit it with this xleval")
