"""The one calibrator contract: what LGN and AnchoredCalibrator (and a format-1 anchored file) offer.

Code that applies, saves, shows or ranks with a calibrator asks for this protocol, never for a
class: ``isinstance(model, Calibrator)`` instead of ``type(model).__name__ == "LGN"``.

The scikit-learn signature, decided once for every calibrator:

* ``fit(X, y=None, *, groups=None, signature=None, ...)``: ``X`` is an :class:`~xleval.table.EvalTable`
  or a DataFrame holding the score and group columns the calibrator's parameters name (``score``,
  ``by``; the anchored calibrator also ``human`` and ``system``). The groups come from the table's
  ``by`` columns, never from ``y``: ``y`` is there for scikit-learn (``Pipeline``, ``cross_val_score``)
  and ignored, as :class:`sklearn.preprocessing.StandardScaler` ignores it. An array of scores with
  ``groups=`` stays accepted. ``fit`` returns ``self``; a refused fit leaves the calibrator as it was.
* ``transform(X, *, signature=None, force=False)``: one calibrated value per row (a 1-D array).
* ``interval(X, *, level=0.95, ...)``: lower and upper bounds at confidence ``level`` (the keyword
  :mod:`xleval.stats` uses).
* ``sources(X)``: per row, what calibrated it (the group, a fallback level, ``pooled``...).
* ``to_dict``/``save``/``load``: versioned, checksummed JSON; ``signature_``: the metric signature
  of the scores it was fitted on (None when unknown).
* ``kind`` (``lgn``, ``anchored``): the calibrated column is ``<score>_<kind>``;
  :meth:`calibrated_signature` names the calibrator in the output table's metadata;
  :meth:`with_on_unseen` sets what happens to groups unseen in fit.

``scale/`` (chunked files, Dask, ``partial_fit``) stays LGN-only and reads files, not tables: the
anchored calibrator needs every row of a system at once (system means), so it fits in memory.
"""
from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Calibrator"]


@runtime_checkable
class Calibrator(Protocol):
    """A fitted-or-not calibrator (module docstring). ``kind``: ``lgn`` or ``anchored``."""

    score: str
    signature_: str | None
    kind: str

    def fit(self, X: Any, y: Any = None, *, signature: str | None = None) -> Any: ...

    def transform(self, X: Any, *, signature: str | None = None, force: bool = False) -> Any: ...

    def interval(self, X: Any, *, level: float = 0.95, signature: str | None = None,
                 force: bool = False) -> tuple[np.ndarray, np.ndarray]: ...

    def sources(self, X: Any) -> np.ndarray: ...

    def with_on_unseen(self, on_unseen: str | None) -> Any: ...

    def calibrated_signature(self) -> str: ...

    def group_columns(self) -> list[str]: ...

    def group_table(self) -> Any: ...

    def to_dict(self) -> dict: ...

    def save(self, path: str | os.PathLike) -> None: ...

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any: ...
