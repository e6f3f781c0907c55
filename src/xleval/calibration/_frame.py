"""Calibrating a whole table with any calibrator: language-code normalisation of the group columns, the
calibrated column, ``calibration_source`` and optional interval columns, every input row and column kept
in order, and the output's metadata (a signature for the calibrated column)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._base.frames import copy_on_write
from .._base.grouping import group_index
from ..exceptions import DataQualityWarning, InputError, ModelFileError, SignatureMismatchError
from ..io import add_language_columns, read_table_metadata
from ..table import EvalTable
from ._protocol import Calibrator

__all__ = ["prepare_frame", "calibrate_frame", "score_signature", "calibrated_metadata", "added_columns",
           "check_added_columns", "output_column"]

_LANGUAGE_COLUMNS = {"lp", "src_lang", "tgt_lang"}


def prepare_frame(df: pd.DataFrame, by: list[str], where: str = "input", *, categorical: bool = False) -> pd.DataFrame:
    """A copy of ``df`` whose language columns are normalised keys (derived from ``lp`` when absent).
    Tables without any language column are returned as they are (grouping by other columns).
    ``categorical=True``: the language columns are categoricals (what the calibrators group by, cheaply)."""
    if _LANGUAGE_COLUMNS & set(df.columns):
        return add_language_columns(df, where=where, categorical=categorical)
    return df


def score_signature(path, score: str, columns=None) -> str | None:
    """The metric signature stored with a table for ``score`` (Parquet metadata or sidecar), if any;
    ``columns`` is the readers' rename (file column -> canonical): the signature is the one of the file
    column read as ``score`` (:func:`renamed_signatures`)."""
    from .._base.signature import renamed_signatures

    meta = read_table_metadata(path)
    signatures = meta.get("signatures", {}) if isinstance(meta, dict) else {}
    return renamed_signatures(signatures, columns).get(score)


def output_column(model: Calibrator, column: str | None = None) -> str:
    """The calibrated column's name: ``column``, else ``<score>_<kind>`` (``chrf_lgn``, ``chrf_anchored``)."""
    return column or f"{model.score}_{model.kind}"


def calibrated_metadata(model: Calibrator, path, column: str | None = None) -> dict:
    """The input table's metadata (its metric signatures) plus one for the calibrated column, which
    names the calibrator and the signature of the score it calibrated, so the output stays traceable."""
    meta = read_table_metadata(path) if str(path) != "-" else {}
    meta = dict(meta) if isinstance(meta, dict) else {}
    signatures = dict(meta.get("signatures", {}))
    signatures[output_column(model, column)] = model.calibrated_signature()
    meta["signatures"] = signatures
    return meta


def added_columns(model: Calibrator, column: str | None = None, interval: float | None = None) -> list[str]:
    """The columns :func:`calibrate_frame` adds: the calibrated one, ``calibration_source``, the interval's."""
    name = output_column(model, column)
    return [name, "calibration_source"] + ([f"{name}_low", f"{name}_high"] if interval is not None else [])


def check_added_columns(model: Calibrator, columns, column: str | None = None, interval: float | None = None, *,
                        overwrite: bool = False, where: str = "input") -> None:
    """Refuse output column names that collide with each other, or (unless ``overwrite``) with an input
    column: writing the calibrated values over ``score`` or ``lp`` would destroy input data silently."""
    added = added_columns(model, column, interval)
    if not isinstance(added[0], str) or not added[0].strip():
        raise InputError(f"column={added[0]!r}: give a column name, e.g. column={output_column(model)!r}",
                         argument="column", value=added[0])
    if len(set(added)) < len(added):
        raise InputError(f"column={added[0]!r}: the name is taken by another output column ({', '.join(added[1:])}); "
                         "choose another name", argument="column", value=added[0])
    taken = [c for c in added if c in set(columns)]
    if taken and not overwrite:
        raise InputError(f"{where}: already has column(s) {taken}, which calibrating would replace; choose another "
                         "name with column=, or pass overwrite=True to replace them", argument="column",
                         value=taken)


def calibrate_frame(model: Calibrator, df: EvalTable | pd.DataFrame, *, column: str | None = None,
                    interval: float | None = None, signature: str | None = None, force: bool = False,
                    where: str = "input", on_unseen: str | None = None, overwrite: bool = False) -> pd.DataFrame:
    """``df`` with ``column`` (default ``<score>_<kind>``), ``calibration_source`` and, with ``interval``
    (a confidence level, e.g. 0.95), ``<column>_low``/``<column>_high`` appended; rows and existing
    columns untouched (an input column of one of these names is an error, or replaced with
    ``overwrite=True``). ``on_unseen`` replaces the calibrator's handling of groups it cannot calibrate
    itself (``Calibrator.with_on_unseen``: LGN ``pooled``, ``raw``, ``error``; anchored ``pooled``,
    ``error``). Any :class:`Calibrator`: one path for all of them."""
    if isinstance(df, EvalTable):  # the rows as the table checked them (language columns normalised)
        df = df.frame
    if not isinstance(model, Calibrator):
        raise ModelFileError(f"{where}: not a calibrator ({type(model).__name__})")
    check_added_columns(model, df.columns, column, interval, overwrite=overwrite, where=where)
    model = model.with_on_unseen(on_unseen)
    by = model.group_columns()
    frame = prepare_frame(df, by, where, categorical=True)
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise InputError(f"{where}: the calibrator groups by {'+'.join(by)}, but column(s) {missing} are not in "
                         f"the table (columns: {list(df.columns)}); add them, or map yours with "
                         f"columns={{'YOUR_COLUMN': {missing[0]!r}}}", argument="by", value=missing)
    name = output_column(model, column)
    out = df.copy(deep=not copy_on_write())  # with copy-on-write a shallow copy is a copy: no column copied
    try:
        out[name] = np.asarray(model.transform(frame, signature=signature, force=force)).reshape(-1)
        if interval is not None:
            low, high = model.interval(frame, level=interval, signature=signature, force=force)
            out[f"{name}_low"], out[f"{name}_high"] = low, high
    except (SignatureMismatchError, InputError) as exc:  # name the table: the model cannot know it
        raise exc.prefixed(where) from None
    out["calibration_source"] = _sources(model, frame)
    n_bad = int((~np.isfinite(pd.to_numeric(frame[model.score], errors="coerce").to_numpy(dtype=float))).sum())
    if n_bad:
        warnings.warn(f"{n_bad} row(s) have a missing, NaN or infinite score; "
                      "their calibrated value is NaN (rows kept)",
                      DataQualityWarning, stacklevel=2)
    return out


def _sources(model: Calibrator, frame: pd.DataFrame):
    """``model.sources(frame)`` as a text column, resolved once per distinct combination of the group
    columns: turning a million per-row Python strings into pandas text costs ten times the calibration."""
    cols = [c for c in dict.fromkeys([*model.group_columns(), "tgt_lang", "lp"]) if c in frame.columns]
    index = group_index([frame[c] for c in cols], names=cols, allow_missing=True)  # a column outside `by` may have gaps
    names = np.asarray(model.sources(frame.iloc[index.first]), dtype=object)
    text = pd.Series(np.array(["x"], dtype=object)).dtype  # what pandas makes of strings (pyarrow-backed on pandas 3)
    if not (isinstance(text, pd.StringDtype) and text.storage == "pyarrow"):
        return names[index.codes]
    import pyarrow as pa

    column = pa.DictionaryArray.from_arrays(pa.array(index.codes.astype(np.int32)), pa.array(names, type=pa.string()))
    return pd.array(column.cast(pa.string()), dtype=text)
