"""``calibrate fit``/``apply`` on a streamed input (xleval.scale): LGN fitted or applied batch by batch."""
from __future__ import annotations

import warnings

from ..io import parse_column_mapping
from ._common import row_progress
from .calibrate_common import render

__all__ = ["fit_chunked", "apply_chunked"]


def fit_chunked(model, input, output, chunk_size, signature, col, fmt, backend, probe=None) -> None:
    """Fit LGN on INPUT in batches and save it (with the drift ``probe``, when given: ``_drift.make_probe_frames``)."""
    from ..calibration._persist import save_with_probe
    from ..scale import DEFAULT_CHUNK_SIZE
    from ..scale import fit_chunked as fit_batches

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with row_progress(input, "fitting") as advance:
            fit_batches(model, input, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE, columns=parse_column_mapping(col),
                        signature=signature, backend=backend, progress=advance)
    if probe is not None:
        save_with_probe(model, output, probe)
    else:
        model.save(output)
    groups = model.group_table()
    render(fmt, {"model": str(output), "signature": model.signature_, "groups": groups},
           [str(w.message) for w in caught],
           title=f"LGN {model.method} by {model.by} fitted on {int(groups['n'].sum())} rows in {model.n_batches_} "
                 f"batches ({backend.name}) -> {output}")


def apply_chunked(model, input, output, chunk_size, column, interval, signature, force, col, fmt, backend,
                  overwrite) -> None:
    from ..scale import DEFAULT_CHUNK_SIZE, ApplyOptions
    from ..scale import apply_chunked as apply_batches

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with row_progress(input, "calibrating") as advance:
            options = ApplyOptions(column=column, interval=interval, signature=signature, force=force,
                                   overwrite=overwrite)
            result = apply_batches(model, input, output, options, chunk_size=chunk_size or DEFAULT_CHUNK_SIZE,
                                   columns=parse_column_mapping(col), backend=backend, progress=advance)
    if output != "-":
        render(fmt, result.to_dict(), [str(w.message) for w in caught],
               title=f"calibrated {result.rows} rows in {result.batches} batches ({result.backend}) -> {output}")
