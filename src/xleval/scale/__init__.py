"""Out-of-core (chunked) execution and the Dask backend.

Tables larger than memory are read in batches (Parquet row groups / ``iter_batches``, CSV/TSV and
JSONL streaming readers), processed by the same in-memory functions, and written by an atomic
streaming writer (no partial output on error). Calibration statistics are mergeable
(:class:`~xleval.calibration.GroupStats`), so chunked and distributed fits equal one pass; apply
and score are row-wise, so they are identical. See docs/scale.md.
"""
from ._backend import DaskBackend, LocalBackend, ReadSpec, resolve_backend, should_stream, worker_metric
from ._chunked import (
    ApplyOptions,
    ApplyResult,
    ScoreResult,
    StreamingBias,
    apply_chunked,
    bias_chunked,
    fit_chunked,
    score_chunked,
)
from ._readers import DEFAULT_CHUNK_SIZE, TableBatch, count_rows, iter_batches, table_columns
from ._writers import TableWriter, open_writer

__all__ = [
    "iter_batches", "TableBatch", "count_rows", "table_columns", "DEFAULT_CHUNK_SIZE",
    "open_writer", "TableWriter",
    "fit_chunked", "apply_chunked", "score_chunked", "bias_chunked",
    "ApplyOptions", "ApplyResult", "ScoreResult", "StreamingBias",
    "LocalBackend", "DaskBackend", "ReadSpec", "resolve_backend", "worker_metric", "should_stream",
]
