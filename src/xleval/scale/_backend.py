"""Execution backends: run one function over the *parts* of a table and return results in order.

A part is something that yields :class:`TableBatch` es: a batch already read by the client
(:class:`FramePart`, any format) or a range of Parquet row groups that the worker reads itself
(:class:`ParquetPart`, so only small results travel). The local backend runs the parts one after
the other in this process; :class:`DaskBackend` submits them to a Dask cluster with a bounded
number in flight (memory stays bounded) and yields the results in input order, so outputs keep
the input row order and merges happen in a fixed order.
"""
from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..exceptions import InputError, MissingDependencyError
from ..io import require_file, table_format
from ..io._formats import is_compressed
from ..io._parquet import check_flat_schema
from ._readers import (
    TableBatch,
    check_header,
    finish_batch,
    iter_batches,
    open_parquet,
    open_parquet_checked,
    parquet_columns,
    parquet_frame,
    parquet_null_columns,
)

__all__ = ["ReadSpec", "FramePart", "ParquetPart", "LocalBackend", "DaskBackend", "resolve_backend", "worker_metric",
           "should_stream"]


@dataclass(frozen=True)
class ReadSpec:
    """How to read a table: path, rows per batch, renames (file -> canonical), checks, columns to decode."""

    path: str
    chunk_size: int
    columns: Mapping[str, str] = field(default_factory=dict)
    required: Sequence[str] = ()
    numeric: Sequence[str] = ()
    read_columns: Sequence[str] | None = None

    @property
    def name(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    def batches(self) -> Iterator[TableBatch]:
        return iter_batches(self.path, self.chunk_size, columns=self.columns, required=self.required,
                            numeric=self.numeric, read_columns=self.read_columns)


@dataclass(frozen=True)
class FramePart:
    """One batch read by the client."""

    batch: TableBatch

    def batches(self) -> Iterator[TableBatch]:
        yield self.batch


@dataclass(frozen=True)
class ParquetPart:
    """Row groups ``row_groups`` of a Parquet file (first row ``start``, first batch number ``index``, as the
    single process numbers the batches), read where the task runs; ``with_nulls``: the columns given the whole
    file's pandas dtype (:func:`~xleval.scale._readers.parquet_null_columns`, found once by the client)."""

    spec: ReadSpec
    row_groups: tuple[int, ...]
    start: int
    index: int
    with_nulls: tuple[tuple[str, str], ...] = ()

    def batches(self) -> Iterator[TableBatch]:
        pf = open_parquet(self.spec.path)
        cols = parquet_columns(pf.schema_arrow.names, self.spec.columns, self.spec.read_columns)
        start = self.start
        for i, rb in enumerate(pf.iter_batches(batch_size=self.spec.chunk_size, row_groups=list(self.row_groups),
                                               columns=cols, use_threads=DECODING["threads"])):
            batch = finish_batch(parquet_frame(rb, dict(self.with_nulls)), start, self.index + i, self.spec.columns,
                                 self.spec.numeric, self.spec.name)
            start = batch.stop
            yield batch


# Whether pyarrow decodes a part's columns on its own threads: yes in the client and a single process (a
# second core helps), no in the workers of a local cluster (set by warm_task_thread): each worker is one task
# thread per core, pyarrow's threads there only compete with the other workers, and a fresh decoding thread's
# first batches cost 0.05-0.1 CPU-s more than its later ones.
DECODING = {"threads": True}


class LocalBackend:
    """Runs every part in this process, one after the other."""

    name = "local"

    def parts(self, spec: ReadSpec) -> Iterator[FramePart]:
        return (FramePart(b) for b in spec.batches())

    def map(self, func: Callable, parts: Iterable, *args: Any, small: bool = False) -> Iterator[Any]:
        return (func(part, *args) for part in parts)

    def share(self, obj: Any) -> Any:
        return obj

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


# The glibc malloc settings of the local workers (docs/scale.md, "Where the time goes"). Dask's nanny starts
# workers with MALLOC_TRIM_THRESHOLD_=65536 (to hand freed memory back to the system); that turns off glibc's
# adaptive mmap threshold, so every batch-sized buffer is a fresh mmap whose pages fault in again (~30% more
# CPU in BLEU/chrF tasks). A worker is a batch loop instead: buffers up to 32 MiB (the most glibc's adaptive
# threshold reaches; a float column of 4M rows) come from the heap, and up to 256 MiB of freed heap is kept
# for the next batch rather than returned and faulted in again (an LGN fit of 1M-row batches: 2,200 page
# faults per batch before, ~20 after; 0.08 -> 0.01 system CPU-s per 10M rows, ~10% less wall time).
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "268435456"}


class DaskBackend:
    """A Dask cluster: ``scheduler`` address (``tcp://host:8786``) or a local cluster of ``workers``
    processes (one thread each) on loopback. Use as a context manager; the local cluster is closed
    on exit, a remote scheduler is only disconnected from.

    ``in_flight`` bounds the parts submitted and not yet consumed (default: 2 per worker thread) when
    the client ships their batches or their results are large (scored or calibrated columns), so a
    large input never sits in cluster memory at once; see :meth:`map`.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *, processes: bool = True,
                 threads_per_worker: int = 1, in_flight: int | None = None, client: Any = None):
        if scheduler is not None and workers is not None:
            raise InputError("give either scheduler= (an address) or workers= (a number), not both", argument="workers",
                             value=workers)
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise InputError(f"workers={workers!r}: expected a positive integer", argument="workers", value=workers)
        self.scheduler, self.workers, self.processes = scheduler, workers, processes
        self.threads_per_worker, self.in_flight = threads_per_worker, in_flight
        self.client, self._owns = client, client is None
        self._cluster: Any = None

    def __enter__(self) -> DaskBackend:
        if self.client is not None:
            return self
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise MissingDependencyError("distributed", "dask", "the Dask backend") from exc
        if self.scheduler is not None:
            try:
                self.client = Client(self.scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"scheduler={self.scheduler!r}: cannot connect ({exc}); check the address",
                                 argument="scheduler", value=self.scheduler) from None
        else:
            import dask

            with dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_MALLOC.items()}):
                self._cluster = LocalCluster(n_workers=self.workers or 2, threads_per_worker=self.threads_per_worker,
                                             processes=self.processes, host="127.0.0.1", dashboard_address=None)
            self.client = Client(self._cluster)
        try:
            if self._cluster is not None:
                self.client.run(_quiet_cancellations)
            self.client.run(warm_worker)
            # in the thread that runs the tasks (glibc gives each thread its own heap, an "arena")
            self.client.gather([self.client.submit(warm_task_thread, workers=[w], allow_other_workers=False, pure=False)
                                for w in self.client.nthreads()])
        except ImportError as exc:
            self.__exit__()
            raise InputError(f"the Dask workers cannot import xleval ({exc}); install xleval (same version) on "
                             "every worker", argument="scheduler", value=self.scheduler) from None
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._owns and self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    @property
    def n_threads(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def parts(self, spec: ReadSpec) -> Iterator[FramePart | ParquetPart]:
        """Parquet files with several row groups are split by row groups (workers read them); other inputs
        are read by the client in batches and shipped."""
        if spec.path != "-" and table_format(spec.path) == "parquet" and not is_compressed(spec.path):
            require_file(spec.path, spec.name, streams=False)
            pf = open_parquet_checked(spec.path, spec.name)
            if pf.metadata.num_row_groups > 1:
                check_header(pf.schema_arrow.names, dict(spec.columns), spec.required, spec.name)
                check_flat_schema(pf.schema_arrow, spec.name)
                cols = parquet_columns(pf.schema_arrow.names, spec.columns, spec.read_columns)
                return iter(_row_group_parts(spec, pf.metadata, tuple(parquet_null_columns(pf, cols).items())))
        return (FramePart(b) for b in spec.batches())

    def share(self, obj: Any) -> Any:
        """Send ``obj`` (e.g. a fitted model) to every worker once; tasks receive it by reference."""
        return self.client.scatter(obj, broadcast=True, hash=False)

    def map(self, func: Callable, parts: Iterable, *args: Any, small: bool = False) -> Iterator[Any]:
        """``func(part, *args)`` for every part on the cluster; results in part order.

        At most ``in_flight`` parts are submitted and not yet consumed, so shipped batches and large
        results (score or calibrated columns) never pile up in cluster memory. ``small`` results (a fit's
        or bias statistics' summary, a few KB) of parts the workers read themselves (:class:`ParquetPart`)
        are not bounded: every part is submitted at once and the scheduler hands them out as workers
        free up, so no worker waits for the client to take an earlier result before it gets the next part."""
        window = 0
        pending: collections.deque = collections.deque()
        try:
            for part in parts:
                pending.append(self.client.submit(_guarded, func, part, *args, pure=False))
                if small and isinstance(part, ParquetPart):
                    continue
                window = window or self.in_flight or 2 * self.n_threads
                if len(pending) >= window:
                    yield _unwrapped(pending.popleft().result())
            while pending:
                yield _unwrapped(pending.popleft().result())
        finally:
            for future in pending:
                future.cancel()


@dataclass(frozen=True)
class _Refused:
    """A task's InputError, returned rather than raised: a raised one is logged by the worker as "Compute
    Failed" with a traceback, on the user's terminal for a local cluster, before the one-line message."""

    error: InputError


def _guarded(func: Callable, part: Any, *args: Any) -> Any:
    try:
        return func(part, *args)
    except InputError as exc:
        return _Refused(exc)


def _unwrapped(result: Any) -> Any:
    if isinstance(result, _Refused):
        raise result.error
    return result


def _quiet_cancellations() -> None:
    """On this backend's own local workers: a run that stops early (a bad row, Ctrl-C) cancels its tasks in
    flight and closes the cluster, and a worker then warns, on the user's terminal, that the task it was
    running "ended with CancelledError": the cancellation is ours, and the error was said in one line."""
    import logging

    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


def warm_worker() -> None:
    """Import what the tasks run (the chunked operations, the metrics, the compiled kernels) once per
    worker when the cluster is entered: a fresh worker otherwise spends its first tasks importing
    (about a CPU-second per worker process), which a short run never earns back."""
    import importlib

    for name in ("xleval.scale._chunked", "xleval.metrics._bleu", "xleval.metrics._chrf", "xleval.metrics._ter",
                 "pyarrow.parquet"):
        importlib.import_module(name)
    from ..io.langs import normalize_code

    # langcodes' tables and its tag pattern: ~0.2 CPU-s on first use, which a worker's first fit, apply or
    # bias task paid (a 10M-row LGN fit on 2 workers: 1.15 s first, 0.52-0.56 s after)
    normalize_code("en")
    import warnings

    import pandas as pd

    from ..calibration import LGN, prepare_frame

    with warnings.catch_warnings():  # a two-row fit: the code paths of a fit task, run once (~10 ms)
        warnings.simplefilter("ignore")
        frame = pd.DataFrame({"tgt_lang": pd.Categorical(["de", "en"]), "score": [1.0, 2.0]})
        LGN(by="tgt_lang", score="score").partial_fit(prepare_frame(frame, ["tgt_lang"], "warm-up", categorical=True))
    if os.environ.get("XLEVAL_AOT", "1") != "0":
        from ..metrics import _aot

        _aot.load()  # the compiled BLEU/chrF kernels when built (never builds them: a fit needs none)


WARM_HEAP = 4  # blocks of 16 MiB: the heap a batch of about a million rows takes (a 1M-row LGN fit task: 3,600 pages)
WARM_ROWS = 1 << 20  # rows of the table decoded once by warm_task_thread


def warm_task_thread() -> None:
    """Prepare the worker's task thread for batches of about a million rows, once, where the worker keeps
    freed memory (its ``MALLOC_TRIM_THRESHOLD_`` is xleval's, :data:`WORKER_MALLOC`; skipped elsewhere):

    * Parquet parts are decoded in this thread (:data:`DECODING`), and a table of :data:`WARM_ROWS`
      rows (a dictionary and a float column, zstd) is written and decoded in memory, so pyarrow's
      memory for a batch is in place (a first 10M-row fit cost the workers 0.43-0.57 CPU-s, the next
      ones 0.37-0.40; with this, the first one 0.37-0.40 too; ~0.1-0.2 s more start-up);
    * the heap grows by what a batch takes (glibc gives each thread its own heap) and the worker keeps
      it, so the first batch does not fault in fresh pages (a first 10M-row fit: ~7,000 page faults
      before, ~600 after; under load their system time reached 0.2-0.4 s)."""
    if os.environ.get("MALLOC_TRIM_THRESHOLD_") != WORKER_MALLOC["MALLOC_TRIM_THRESHOLD_"]:
        return
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    DECODING["threads"] = False
    rng = np.random.default_rng(0)
    codes = pa.array(rng.integers(0, 2, WARM_ROWS).astype(np.int8))
    table = pa.table({"lang": pa.DictionaryArray.from_arrays(codes, pa.array(["de", "en"])),
                      "score": rng.standard_normal(WARM_ROWS)})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=WARM_ROWS)
    for rb in pq.ParquetFile(pa.BufferReader(sink.getvalue()), pre_buffer=False).iter_batches(use_threads=False):
        rb.to_pandas()
    blocks = [np.ones(1 << 21) for _ in range(WARM_HEAP)]  # each under the 32 MiB mmap threshold: from the heap
    del blocks


def _row_group_parts(spec: ReadSpec, meta: Any, with_nulls: tuple[tuple[str, str], ...] = ()) -> list[ParquetPart]:
    """Consecutive row groups bundled into parts of about ``chunk_size`` rows (at least one group each)."""
    parts: list[ParquetPart] = []
    groups: list[int] = []
    first, rows, batch = 0, 0, 0
    for g in range(meta.num_row_groups):
        groups.append(g)
        rows += meta.row_group(g).num_rows
        if rows >= spec.chunk_size or g == meta.num_row_groups - 1:
            parts.append(ParquetPart(spec, tuple(groups), first, batch, with_nulls))
            # a part's batches run across its row groups: -(-a // b) is ceil(a / b)
            first, groups, rows, batch = first + rows, [], 0, batch + -(-rows // spec.chunk_size)
    return parts


def resolve_backend(backend: str | LocalBackend | DaskBackend | None, *, scheduler: str | None = None,
                    workers: int | None = None) -> LocalBackend | DaskBackend:
    """``None``/"local" -> LocalBackend; "dask" -> DaskBackend(scheduler, workers); objects pass through."""
    if backend is None or backend == "local":
        if scheduler is not None or workers is not None:
            raise InputError("scheduler= and workers= need backend=\"dask\"", argument="backend", value=backend)
        return LocalBackend()
    if backend == "dask":
        return DaskBackend(scheduler=scheduler, workers=workers)
    if isinstance(backend, (LocalBackend, DaskBackend)):
        return backend
    raise InputError(f"backend {backend!r}: use 'local' or 'dask'")


# one model per worker ---------------------------------------------------------------------------------
_METRICS: dict[tuple, Any] = {}
_METRICS_LOCK = threading.Lock()


def worker_metric(metric: Any) -> Any:
    """The worker's own copy of ``metric``: the first task on a worker keeps the metric it received
    (its model loads on first use); later tasks with an equal metric (same class, signature and
    options) reuse it, so a neural model is loaded once per worker process, not once per part."""
    key = (type(metric).__module__, type(metric).__qualname__, metric.signature,
           tuple(sorted((k, repr(v)) for k, v in vars(metric).items() if k != "_model")), os.getpid())
    with _METRICS_LOCK:
        return _METRICS.setdefault(key, metric)


STREAM_ROWS = 5_000_000          # Parquet inputs above this many rows are streamed by default
STREAM_BYTES = 1 << 30           # text inputs above 1 GiB likewise


def should_stream(path: str | os.PathLike, chunk_size: int | None, backend: str | None) -> bool:
    """Whether a command should take the chunked path: asked for (``--chunk-size``, ``--backend dask``)
    or the input is large; small inputs keep the in-memory path (full verification tables)."""
    if chunk_size is not None and chunk_size < 1:
        raise InputError(f"chunk_size={chunk_size}: the chunk size must be a positive number of rows, e.g. 100000",
                         argument="chunk_size", value=chunk_size)
    if chunk_size is not None or (backend not in (None, "local")):
        return True
    if str(path) == "-":
        return False
    if table_format(path) == "parquet":
        if is_compressed(path):  # read whole: a gzip stream cannot be seeked as Parquet needs
            return False
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(path).metadata.num_rows > STREAM_ROWS
        # unreadable (pyarrow's errors have no cheap common base): let the in-memory reader report it
        except Exception:  # noqa: BLE001
            return False
    try:
        return os.path.getsize(path) > STREAM_BYTES
    except OSError:
        return False
