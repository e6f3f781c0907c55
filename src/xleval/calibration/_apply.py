"""Any saved calibrator applied to a table: load by format, add the calibrated column,
``calibration_source`` and interval columns, and the output's metadata (signatures).

LGN goes through :func:`calibrate_frame`; an AnchoredCalibrator gets the same output shape here
(its calibrated column is ``<score>_anchored`` by default, on the human scale).
"""
from __future__ import annotations

import copy
import os
import warnings
from typing import Any, cast

import numpy as np
import pandas as pd

from ..exceptions import DataQualityWarning, InputError, ModelFileError, SignatureMismatchError
from ..io import read_table_metadata
from ..io.langs import copy_on_write
from ._anchored import FORMAT as ANCHORED_FORMAT
from ._anchored import AnchoredCalibrator
from ._frame import calibrate_frame, calibrated_metadata, check_added_columns, prepare_frame
from ._lgn import FORMAT as LGN_FORMAT
from ._lgn import LGN
from ._persist import _read_json

__all__ = ["load_calibrator", "apply_calibrator", "output_metadata", "output_column", "calibrator_kind"]


def calibrator_kind(model) -> str:
    return "anchored" if isinstance(model, AnchoredCalibrator) else "lgn"


def output_column(model, column: str | None = None) -> str:
    """The calibrated column's name: ``column``, else ``<score>_lgn`` or ``<score>_anchored``."""
    return column or f"{model.score}_{calibrator_kind(model)}"


def load_calibrator(path: str | os.PathLike):
    """An LGN or an AnchoredCalibrator, by the ``format`` the file declares (checked like every load)."""
    payload = _read_json(path, str(path))  # regular files of bounded size only; says what is wrong with others
    fmt = payload.get("format") if isinstance(payload, dict) else None
    if isinstance(fmt, str) and fmt.startswith("xleval.") and fmt not in (ANCHORED_FORMAT, LGN_FORMAT):
        raise ModelFileError(f"{path}: not an xleval calibrator (its format is {fmt[:60]!r}); pass the file written by "
                             "`xleval calibrate fit -o`")
    return AnchoredCalibrator.load(path) if fmt == ANCHORED_FORMAT else LGN.load(path)


def apply_calibrator(model, df: pd.DataFrame, *, column: str | None = None, interval: float | None = None,
                     signature: str | None = None, force: bool = False, where: str = "input",
                     on_unseen: str | None = None, overwrite: bool = False) -> pd.DataFrame:
    """``df`` with the calibrated column, ``calibration_source`` and, with ``interval`` (a level such as
    0.95), ``<column>_low``/``<column>_high``; every input row and column kept in order (an input column
    of one of those names is an error, or replaced with ``overwrite=True``). ``on_unseen``: what to do
    with groups the calibrator has not seen (LGN: ``pooled``, ``raw``, ``error``; anchored: ``pooled``,
    ``error``)."""
    if isinstance(model, LGN):
        return calibrate_frame(model, df, column=column, interval=interval, signature=signature, force=force,
                               where=where, on_unseen=on_unseen, overwrite=overwrite)
    if not isinstance(model, AnchoredCalibrator):
        raise ModelFileError(f"{where}: not a calibrator ({type(model).__name__})")
    check_added_columns(cast(Any, model), df.columns, output_column(model, column), interval, overwrite=overwrite,
                        where=where)  # it reads only the score's name
    if on_unseen is not None:
        if on_unseen not in ("pooled", "error"):
            raise InputError(f"on_unseen={on_unseen!r}: an anchored calibrator gives unseen groups the common offset "
                             "(pooled) or refuses them (error); raw scores are not on the human scale")
        model = copy.copy(model).set_params(fallback=on_unseen)
    frame = prepare_frame(df, model.by_, where)
    missing = [c for c in model.by_ if c not in frame.columns]
    if missing:
        raise InputError(f"{where}: the calibrator groups by {'+'.join(model.by_)}, but column(s) {missing} are not in "
                         f"the table (columns: {list(df.columns)}); add them, or map yours with --col "
                         f"{missing[0]}=YOUR_COLUMN")
    name = output_column(model, column)
    out = df.copy(deep=not copy_on_write())
    try:
        out[name] = np.asarray(model.transform(frame, signature=signature, force=force)).reshape(-1)
        if interval is not None:
            low, high = model.interval(frame, level=interval, signature=signature, force=force)
            out[f"{name}_low"], out[f"{name}_high"] = low, high
    except (SignatureMismatchError, InputError) as exc:  # name the table: the model cannot know it
        raise exc.prefixed(where) from None
    out["calibration_source"] = model.sources(frame)
    n_bad = int((~np.isfinite(pd.to_numeric(frame[model.score], errors="coerce").to_numpy(dtype=float))).sum())
    if n_bad:
        warnings.warn(f"{n_bad} row(s) have a missing, NaN or infinite score; their calibrated value is NaN "
                      "(rows kept)", DataQualityWarning, stacklevel=2)
    return out


def output_metadata(model, path, column: str | None = None) -> dict:
    """The input table's metadata plus a signature for the calibrated column naming the calibrator."""
    if isinstance(model, LGN):
        return calibrated_metadata(model, path, column)
    meta = read_table_metadata(path) if str(path) != "-" else {}
    meta = dict(meta) if isinstance(meta, dict) else {}
    signatures = dict(meta.get("signatures", {}))
    direction = "higher" if model.direction_ * (1 if model.score_higher_is_better else -1) > 0 else "lower"
    signatures[output_column(model, column)] = (
        f"anchored|by:{'+'.join(model.by_)}|human:{model.human}|human_better:{direction}|level:{model.level_}"
        f"|labels:{model.slopes_['n_labels']}|of:{model.signature_ or 'unknown'}")
    meta["signatures"] = signatures
    return meta
