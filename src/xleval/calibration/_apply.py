"""Any saved calibrator applied to a table: load by format, then one path through the
:class:`~xleval.calibration.Calibrator` protocol (:func:`~xleval.calibration.calibrate_frame`) adds
the calibrated column (``<score>_lgn`` or ``<score>_anchored``), ``calibration_source`` and interval
columns, and :func:`output_metadata` the output's signatures."""
from __future__ import annotations

import os

import pandas as pd

from ..exceptions import ModelFileError
from ..table import EvalTable
from ._anchored import FORMAT as ANCHORED_FORMAT
from ._anchored import AnchoredCalibrator
from ._frame import calibrate_frame, calibrated_metadata, output_column
from ._lgn import FORMAT as LGN_FORMAT
from ._lgn import LGN
from ._persist import _read_json
from ._protocol import Calibrator

__all__ = ["load_calibrator", "apply_calibrator", "output_metadata", "output_column", "calibrator_kind"]


def calibrator_kind(model: Calibrator) -> str:
    """``lgn`` or ``anchored`` (the protocol's ``kind``)."""
    return model.kind


def load_calibrator(path: str | os.PathLike) -> Calibrator:
    """An LGN, an AnchoredCalibrator or (a format-1 anchored file) a LegacyAnchoredCalibrator, by the
    ``format`` the file declares (checked like every load)."""
    payload = _read_json(path, str(path))  # regular files of bounded size only; says what is wrong with others
    fmt = payload.get("format") if isinstance(payload, dict) else None
    if isinstance(fmt, str) and fmt.startswith("xleval.") and fmt not in (ANCHORED_FORMAT, LGN_FORMAT):
        raise ModelFileError(f"{path}: not an xleval calibrator (its format is {fmt[:60]!r}); pass the file written by "
                             "`xleval calibrate fit -o`")
    return AnchoredCalibrator.load(path) if fmt == ANCHORED_FORMAT else LGN.load(path)


def apply_calibrator(model: Calibrator, df: EvalTable | pd.DataFrame, *, column: str | None = None,
                     interval: float | None = None,
                     signature: str | None = None, force: bool = False, where: str = "input",
                     on_unseen: str | None = None, overwrite: bool = False) -> pd.DataFrame:
    """``df`` with the calibrated column, ``calibration_source`` and, with ``interval`` (a level such as
    0.95), ``<column>_low``/``<column>_high``; every input row and column kept in order (an input column
    of one of those names is an error, or replaced with ``overwrite=True``). ``on_unseen``: what to do
    with groups the calibrator has not seen (LGN: ``pooled``, ``raw``, ``error``; anchored: ``pooled``,
    ``error``). The same as :func:`calibrate_frame`, which takes any calibrator."""
    return calibrate_frame(model, df, column=column, interval=interval, signature=signature, force=force,
                           where=where, on_unseen=on_unseen, overwrite=overwrite)


def output_metadata(model: Calibrator, path, column: str | None = None) -> dict:
    """The input table's metadata plus a signature for the calibrated column naming the calibrator."""
    return calibrated_metadata(model, path, column)
