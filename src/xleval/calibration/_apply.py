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
from ._anchored import AnchoredCalibrator, is_format_1
from ._anchored_v1 import LegacyAnchoredCalibrator
from ._frame import calibrate_frame, calibrated_metadata, output_column
from ._lgn import FORMAT as LGN_FORMAT
from ._lgn import LGN
from ._persist import _read_json
from ._protocol import Calibrator

__all__ = ["load_calibrator", "apply_calibrator", "output_metadata", "output_column", "calibrator_kind",
           "row_interval_target"]

# what the row intervals of `calibrate apply --interval` (``Calibrator.interval``) are intervals for
_ROW_INTERVAL_TARGETS = {
    "anchored": ("the expected human score of rows like this one (group, system mean and score): the map's "
                 "uncertainty from the labels (offset and slopes). Not one judge's score, and not a system's human "
                 "mean: a system also deviates from the common line, so averaged row bounds under-cover it; the "
                 "leaderboard with method='anchored' gives intervals for the systems' human means and ranks"),
    "lgn": ("the calibrated score when the group's calibration sample is resampled (the map's sampling "
            "uncertainty); not an interval for a human score"),
}


def calibrator_kind(model: Calibrator) -> str:
    """``lgn`` or ``anchored`` (the protocol's ``kind``)."""
    return model.kind


def load_calibrator(path: str | os.PathLike) -> Calibrator:
    """An LGN, an AnchoredCalibrator or (a format-1 anchored file, xleval 0.1.0) a LegacyAnchoredCalibrator,
    by the ``format`` and ``format_version`` the file declares (checked like every load). The one place that
    dispatches by format: each class's ``load`` reads its own current format."""
    payload = _read_json(path, str(path))  # regular files of bounded size only; says what is wrong with others
    fmt = payload.get("format") if isinstance(payload, dict) else None
    if isinstance(fmt, str) and fmt.startswith("xleval.") and fmt not in (ANCHORED_FORMAT, LGN_FORMAT):
        raise ModelFileError(f"{path}: not an xleval calibrator (its format is {fmt[:60]!r}); pass the file written by "
                             "`xleval calibrate fit -o`")
    if is_format_1(payload):
        return LegacyAnchoredCalibrator.load(path)
    model: Calibrator = AnchoredCalibrator.load(path) if fmt == ANCHORED_FORMAT else LGN.load(path)
    if isinstance(payload, dict) and payload.get("probe") is not None:  # a drift probe (_drift), checksummed
        from ._drift import check_probe

        try:
            check_probe(payload["probe"])
        except ValueError as exc:
            raise ModelFileError(f"{path}: malformed calibrator ({exc}); refit and save it again") from None
        model._drift_probe = payload["probe"]  # type: ignore[attr-defined]
    return model


def apply_calibrator(model: Calibrator, df: EvalTable | pd.DataFrame, *, column: str | None = None,
                     interval: float | None = None,
                     signature: str | None = None, force: bool = False, where: str = "input",
                     on_unseen: str | None = None, overwrite: bool = False, on_drift: str = "error",
                     ) -> pd.DataFrame:
    """``df`` with the calibrated column, ``calibration_source`` and, with ``interval`` (a level such as
    0.95), ``<column>_low``/``<column>_high``; every input row and column kept in order (an input column
    of one of those names is an error, or replaced with ``overwrite=True``). ``on_unseen``: what to do
    with groups the calibrator has not seen (LGN: ``pooled``, ``raw``, ``error``; anchored: ``pooled``,
    ``error``). The same as :func:`calibrate_frame`, which takes any calibrator. What the interval
    covers: :func:`row_interval_target` (anchored: the expected human score of rows like this one, not
    a system's human mean). A calibrator loaded with a drift probe (:mod:`xleval.calibration._drift`) checks that
    the probe rows found in ``df`` kept their scores: ``on_drift`` ``error`` (refuse), ``warn`` or ``ignore``."""
    out = calibrate_frame(model, df, column=column, interval=interval, signature=signature, force=force,
                          where=where, on_unseen=on_unseen, overwrite=overwrite)
    probe = getattr(model, "_drift_probe", None)
    if probe is not None:
        from ._drift import check_drift

        check_drift(probe, df.frame if isinstance(df, EvalTable) else df, model.score, on_drift=on_drift,
                    where=where)
    return out


def row_interval_target(model: Calibrator) -> str:
    """What the interval columns of :func:`apply_calibrator` (``interval=``) are intervals for."""
    return _ROW_INTERVAL_TARGETS.get(model.kind, "the calibrated score under the map's uncertainty")


def output_metadata(model: Calibrator, path, column: str | None = None, interval: float | None = None) -> dict:
    """The input table's metadata plus a signature for the calibrated column naming the calibrator and,
    with ``interval`` (its level), what the interval columns are intervals for."""
    meta = calibrated_metadata(model, path, column)
    if interval is not None:
        name = output_column(model, column)
        meta["intervals"] = {f"{name}_low, {name}_high": f"{interval:g} interval for {row_interval_target(model)}"}
    return meta
