"""Chunked (out-of-core) fit, apply, score and bias statistics over a table on disk.

Every operation reads the table in batches (:func:`iter_batches`) and runs the in-memory function
of the library on each batch; what it keeps between batches is a mergeable summary
(:class:`GroupStats`), so memory is bounded by the batch size and results equal the one-pass ones:

* ``fit_chunked``  : ``LGN.partial_fit`` per batch (on Dask workers too), merged on the client in
  input order; the statistics equal ``LGN.fit`` to rounding (~1e-15 relative), and a cluster's fit
  equals the single process's bit for bit when both read the same batches (row groups of a multiple
  of ``chunk_size`` rows).
* ``apply_chunked``: ``calibrate_frame`` per batch, streamed to an atomic writer; bit-identical
  to the in-memory apply (a row's value depends only on the row and the model).
* ``score_chunked``: ``Metric.sentence_scores`` per batch (one model per Dask worker).
* ``bias_chunked`` : the mergeable part of ``diagnose_bias`` (per-group n/mean/std, sd of the
  group means, eta squared, largest standardised difference).
"""
from __future__ import annotations

import collections
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from .._base.frames import copy_on_write
from .._base.grouping import key_labels
from .._base.result import Result
from ..calibration import LGN, GroupStats, calibrate_frame, calibrated_metadata, prepare_frame, score_signature
from ..calibration._frame import check_added_columns
from ..exceptions import DataQualityWarning, InputError, UnseenGroupWarning
from ..io import check_output_path
from ..table import as_table, repeated_key_columns, repeated_keys_warning
from ._backend import DaskBackend, FramePart, LocalBackend, ReadSpec, resolve_backend, worker_metric
from ._keys import KeyedScores, concatenated, first_repeated_key, keyed_scores, offending_hashes
from ._readers import DEFAULT_CHUNK_SIZE, batch_context
from ._writers import open_writer

__all__ = ["fit_chunked", "apply_chunked", "score_chunked", "bias_chunked", "ApplyOptions", "ApplyResult",
           "ScoreResult", "StreamingBias"]

_LANGUAGE_COLUMNS = ("lp", "src_lang", "tgt_lang")
Backend = str | LocalBackend | DaskBackend | None


# fit ------------------------------------------------------------------------------------------------
#: the columns of the key whose repeats with different scores the fit says (:func:`xleval.table.warn_repeated_keys`;
#: the pair is read for the groups anyway), read when the table has them
_KEY_COLUMNS = ("system", "doc_id", "seg_id")


@dataclass(frozen=True)
class _FittedPart:
    """What a part of the fit returns: a fitted LGN per batch; the repeated-key check's columns (None: the table
    has none) and its (key hash, score) pairs (:mod:`._keys`, 16 bytes a row)."""

    fitted: list[LGN]
    key: list[str] | None
    pairs: KeyedScores | None


def fit_chunked(model: LGN, path: str | os.PathLike, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                columns: dict[str, str] | None = None, signature: str | None = None,
                backend: Backend = None, progress: Callable[[int], None] | None = None) -> LGN:
    """Fit ``model`` (its options; earlier state is discarded) on the table at ``path`` in batches;
    ``progress(rows)`` is called as parts finish.

    Equals ``model.fit(whole_table)`` up to floating-point rounding in the merged moments (and for
    ``robust``/``quantile``, exactly while every group holds at most ``sketch_capacity`` scores).
    ``signature`` defaults to the score's signature stored with the table. Returns ``model``.
    Rows that repeat a (pair, system, segment) key with different scores get the in-memory fit's
    :class:`~xleval.exceptions.RepeatedKeysWarning` (:func:`xleval.table.warn_repeated_keys`).
    """
    if model.decay is not None or model.window is not None:
        raise InputError("chunked fitting equals one pass only without decay/window; fit online models with "
                         "partial_fit on your own batches")
    path = str(path)
    sig = signature if signature is not None else _stored_signature(path, model.score, columns)
    by = [model.by] if isinstance(model.by, str) else list(model.by)
    spec = ReadSpec(path, chunk_size, dict(columns or {}), required=[model.score], numeric=[model.score],
                    read_columns=[model.score, *by, *_LANGUAGE_COLUMNS, *_KEY_COLUMNS])
    params = model.get_params()
    with _backend_context(backend) as be:
        fitted: list[LGN] = []
        keyed: list[KeyedScores] = []
        key: list[str] | None = None
        for part in be.map(_fit_part, be.parts(spec), params, sig, small=True):
            fitted.extend(part.fitted)
            key = key or part.key
            if part.pairs is not None:
                keyed.append(part.pairs)
            if progress is not None:
                progress(sum(int(b.by_stats_.count.sum() + b.by_stats_.n_nonfinite.sum()) for b in part.fitted))
    model.fit_from(fitted)
    if key is not None:
        _warn_repeated_keys(spec, by, key, model.score, offending_hashes(concatenated(keyed)))
    return model


def _fit_part(part, params: dict, signature: str | None) -> _FittedPart:
    """A fresh LGN with ``params`` per batch of the part, each ``partial_fit`` on its batch: its summable
    statistics per group (count, mean, M2, min, max; a few KB). The client merges every batch's in input
    order (``LGN.fit_from``), so the merge, and the fitted model, do not depend on how the batches were
    split into parts: one process and a cluster give the same bits. Also the (key hash, score) pairs of the
    part's rows, for the client's repeated-key check (:mod:`._keys`), when the table has the key's columns."""
    fitted, pairs, key = [], [], None
    for batch in part.batches():
        local = LGN(**params)
        by = [local.by] if isinstance(local.by, str) else list(local.by)
        with batch_context(batch, batch.source):
            frame = prepare_frame(batch.frame, by, batch.source, categorical=True)
            local.partial_fit(frame, signature=signature)
        fitted.append(local)
        key = repeated_key_columns(frame.columns)  # the same in every batch: the columns are the file's
        if key is not None:
            pairs.append(keyed_scores(frame, key, local.score))
    return _FittedPart(fitted, key, concatenated(pairs) if key is not None else None)


def _warn_repeated_keys(spec: ReadSpec, by: list[str], key: list[str], score: str, hashes: np.ndarray) -> None:
    """The in-memory fit's warning about keys whose scores differ, from the hashes that carry different scores.

    The hashes say how many keys repeat with different scores, and a second pass over the file (taken only
    then) finds the example on the real key values. Why that is enough: a key that repeats with different scores
    always carries them under its one hash, so no repeat goes unsaid; a hash shared by two keys (2**-64 for a
    pair of keys; about n**2 / 2**65 over n distinct keys: 3e-6 for ten million) can only add one to the count.
    The key named is checked on its values, and when no real key repeats (every such hash a shared one), nothing
    is said."""
    if not len(hashes):
        return

    def prepared_batches():
        for batch in spec.batches():
            with batch_context(batch, batch.source):
                yield prepare_frame(batch.frame, by, batch.source, categorical=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the first pass said what reading the rows says
        found = first_repeated_key(prepared_batches, key, score, hashes)
    if found is not None:
        warnings.warn(repeated_keys_warning(len(hashes), key, score, *found), stacklevel=3)


# apply ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ApplyResult(Result):
    """What ``apply_chunked`` wrote: rows, batches, per-source row counts, non-finite scores (``n_nan``), the column."""

    output: str
    rows: int
    batches: int
    column: str
    calibration_source: dict[str, int]
    n_nan: int
    backend: str


@dataclass(frozen=True)
class ApplyOptions:
    """What :func:`apply_chunked` adds to each row, as :func:`~xleval.calibration.calibrate_frame` takes it:
    the column name (default ``SCORE_lgn``), an ``interval`` level, the score ``signature`` (default: the one
    stored with the table), ``force`` past a signature mismatch, ``on_unseen`` groups, ``overwrite`` existing
    output columns."""

    column: str | None = None
    interval: float | None = None
    signature: str | None = None
    force: bool = False
    on_unseen: str | None = None
    overwrite: bool = False


def apply_chunked(model: LGN, path: str | os.PathLike, output: str | os.PathLike,
                  options: ApplyOptions | None = None, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                  columns: dict[str, str] | None = None, backend: Backend = None,
                  progress: Callable[[int], None] | None = None) -> ApplyResult:
    """Calibrate the table at ``path`` batch by batch into ``output`` (every input row once, in input
    order, all columns kept; the file appears only when complete); ``progress(rows)`` is called per batch.
    Warnings about unseen groups and NaN scores are emitted once, with totals, at the end.

    ``options`` (:class:`ApplyOptions`) are :func:`calibrate_frame`'s. An ``interval`` for
    ``robust``/``quantile`` bootstraps each batch with the same seed, so those intervals differ from
    the in-memory ones (z-score intervals are identical)."""
    opts = options if options is not None else ApplyOptions()
    if not isinstance(opts, ApplyOptions):
        raise InputError(f"options must be an ApplyOptions, got {type(opts).__name__}", argument="options",
                         value=opts)
    column, interval, signature, force, on_unseen, overwrite = (opts.column, opts.interval, opts.signature,
                                                                opts.force, opts.on_unseen, opts.overwrite)
    model = model.with_on_unseen(on_unseen)  # also checks that it is fitted
    path, output = str(path), str(output)
    _check_output(output, path)
    sig = signature if signature is not None else _stored_signature(path, model.score, columns)
    # the signature is checked per batch by transform, against the languages each batch holds
    name = column or f"{model.score}_lgn"
    spec = ReadSpec(path, chunk_size, dict(columns or {}), required=[model.score], numeric=[model.score])
    sources: collections.Counter = collections.Counter()
    n_nan = 0
    with _backend_context(backend) as be, open_writer(output,
                                                      metadata=calibrated_metadata(model, path, column)) as writer:
        shared = be.share(model)
        for out in _joined_batches(be, spec, _apply_part, shared, name, interval, sig, force, overwrite):
            writer.write(out)
            if progress is not None:
                progress(len(out))
            sources.update(out["calibration_source"].value_counts().to_dict())
            n_nan += int((~np.isfinite(out[model.score].to_numpy(dtype=float))).sum())
    _warn_totals(model, sources, n_nan)
    return ApplyResult(output, writer.rows, writer.batches, name, {str(k): int(v) for k, v in sources.items()},
                       n_nan, be.name)


def _apply_part(part, model: LGN, column: str, interval: float | None, signature: str | None,
                force: bool, overwrite: bool) -> list[dict[str, Any]]:
    """The columns :func:`calibrate_frame` adds to each batch of ``part`` (the calibrated score, its interval,
    ``calibration_source``; in the order it adds them), in batch order: :func:`_joined_batches` adds them to
    the client's rows."""
    added = [column, *([f"{column}_low", f"{column}_high"] if interval is not None else []), "calibration_source"]
    out = []
    for batch in part.batches():
        # the columns are the file's: a collision is the table's, not this batch's
        check_added_columns(model, batch.frame.columns, column, interval, overwrite=overwrite, where=batch.source)
        with batch_context(batch, batch.source), warnings.catch_warnings():
            # counted over the whole table and warned once by the caller
            warnings.simplefilter("ignore", UnseenGroupWarning)
            warnings.simplefilter("ignore", DataQualityWarning)
            frame = calibrate_frame(model, batch.frame, column=column, interval=interval, signature=signature,
                                    force=force, where=batch.source, overwrite=overwrite)
        out.append({name: frame[name].values for name in added})
    return out


def _warn_totals(model: LGN, sources: collections.Counter, n_nan: int) -> None:
    main = "+".join(model.by_)
    fell = {k: v for k, v in sources.items() if k != main}
    if fell:
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(fell.items()))
        warnings.warn(f"{sum(fell.values())} row(s) of unseen or degenerate groups were calibrated by fallback "
                      f"({detail})", UnseenGroupWarning, stacklevel=3)
    if n_nan:
        warnings.warn(f"{n_nan} row(s) have a missing, NaN or infinite score; "
                      "their calibrated value is NaN (rows kept)",
                      DataQualityWarning, stacklevel=3)


# score ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ScoreResult(Result):
    """Rows/batches written, and per metric its signature and mean segment score (finite scores)."""

    output: str
    rows: int
    batches: int
    signatures: dict[str, str]
    mean_segment_score: dict[str, float]
    backend: str


def score_chunked(metrics: Sequence[Any], path: str | os.PathLike, output: str | os.PathLike, *,
                  chunk_size: int = DEFAULT_CHUNK_SIZE, columns: dict[str, str] | None = None,
                  backend: Backend = None, progress: Callable[[int], None] | None = None,
                  corpus_signatures: Mapping[str, str] | None = None) -> ScoreResult:
    """Add one column per metric (named by ``metric.name``) to the table at ``path``, batch by batch,
    into ``output`` with the metric signatures as table metadata. On Dask, each worker keeps one
    copy of each metric, so a neural model is loaded once per worker. ``corpus_signatures``: column ->
    signature of its corpus score from the summed statistics (BLEU's ``eff:no``), stored where it differs
    from the column's, as the in-memory ``score`` stores it (:meth:`xleval.metrics.ScoredFrame.metadata`)."""
    _check_output(output, path)
    metrics = list(metrics)
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise InputError(f"metrics {names} share a column name; score them in separate runs")
    needed = ["hypothesis"] + (["reference"] if any(m.needs_refs for m in metrics) else []) + \
        (["source"] if any(m.needs_srcs for m in metrics) else [])
    spec = ReadSpec(str(path), chunk_size, dict(columns or {}), required=needed)
    signatures = {m.name: m.signature for m in metrics}
    from ..metrics._frame import signature_metadata

    metadata = signature_metadata(signatures, corpus_signatures or {})
    sums = dict.fromkeys(names, 0.0)
    counts = dict.fromkeys(names, 0)
    with _backend_context(backend) as be, open_writer(output, metadata=metadata) as writer:
        for out in _scored_batches(be, spec, metrics):
            writer.write(out)
            if progress is not None:
                progress(len(out))
            for m in names:
                finite = np.isfinite(out[m].to_numpy(dtype=float))
                sums[m] += float(out[m].to_numpy(dtype=float)[finite].sum())
                counts[m] += int(finite.sum())
    means = {m: sums[m] / counts[m] if counts[m] else float("nan") for m in names}
    return ScoreResult(str(output), writer.rows, writer.batches, signatures, means, be.name)


def _scored_batches(be: LocalBackend | DaskBackend, spec: ReadSpec, metrics: Sequence[Any]):
    return _joined_batches(be, spec, _score_part, metrics)


def _joined_batches(be: LocalBackend | DaskBackend, spec: ReadSpec, func: Callable, *args: Any):
    """Every batch with the columns ``func(part, *args)`` computed for it, in input order. The tasks return
    the new columns only (an array per column and batch: a score is ~1/10 of the bytes of a row of WMT
    texts); the client adds them to the batches, which it reads itself from a Parquet part (the workers read
    the same rows) or holds already (a batch it read and shipped). So no row travels back, and the rows
    written are the ones the single process writes: the same reader, the columns added the same way."""
    submitted: collections.deque = collections.deque()

    def parts():
        for part in be.parts(spec):
            submitted.append(part)
            yield part

    changed = f"{spec.name}: the file changed while it was read; run the command again"
    for added in be.map(func, parts(), *args):
        part = submitted.popleft()
        # one batch at a time: a Parquet part is at least a row group, which can hold many batches' rows
        batches = part.batches() if not isinstance(part, FramePart) else iter([part.batch])
        count = 0
        for batch in batches:
            columns = added[count] if count < len(added) else None
            if columns is None or any(len(v) != len(batch.frame) for v in columns.values()):
                # the worker read the part into other rows: the file was replaced while it was read
                raise InputError(changed)
            count += 1
            frame = batch.frame.copy(deep=not copy_on_write())  # with copy-on-write a shallow copy is a copy
            for name, values in columns.items():
                frame[name] = values
            yield frame
        if count != len(added):
            raise InputError(changed)


def _score_part(part, metrics: Sequence[Any]) -> list[dict[str, np.ndarray]]:
    """The score columns of each batch of ``part`` (``{metric name: scores}``), in batch order."""
    from ..metrics._frame import score_inputs

    metrics = [worker_metric(m) for m in metrics]
    out = []
    for batch in part.batches():
        with batch_context(batch, batch.source):
            hyps, refs, srcs, _ = score_inputs(batch.frame)  # the checks of the in-memory score_frame
            out.append({m.name: m.sentence_scores(hyps, refs, srcs) for m in metrics})
    return out


# bias statistics --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StreamingBias(Result):
    """The mergeable part of :class:`xleval.diagnostics.BiasDiagnosis`, computed in one streaming pass.

    ``groups``: group, n, mean, std (ddof=1), min, max, sorted by label; ``sd_of_means`` (ddof=1);
    ``eta_squared`` = between-group / total sum of squares; ``largest_smd`` = the largest Cohen's d
    over pairs of groups with >= 2 rows (pooled sd), and its pair (higher mean first). Medians,
    quantiles, rank tests and bootstrap CIs need all the data and are left to ``diagnose``.
    """

    score: str
    by: str
    groups: pd.DataFrame
    n: int
    n_excluded: int
    sd_of_means: float
    eta_squared: float
    largest_smd: float | None
    largest_smd_pair: tuple[str, str] | None
    notes: tuple[str, ...] = field(default=())


def bias_chunked(path: str | os.PathLike, score: str, by: str | list[str] | None = None, *,
                 chunk_size: int = DEFAULT_CHUNK_SIZE, columns: dict[str, str] | None = None,
                 backend: Backend = None) -> StreamingBias:
    """Per-group moments of ``score`` by ``by`` over the table at ``path`` in batches (see :class:`StreamingBias`).
    ``by`` None: ``lp`` if the table's header has it (or ``src_lang`` and ``tgt_lang``), else ``tgt_lang``
    (:func:`xleval.table.default_by`)."""
    if by is None:
        from ..table import default_by
        from ._readers import table_columns

        by = default_by(table_columns(path, columns))
    cols = [by] if isinstance(by, str) else list(by)
    spec = ReadSpec(str(path), chunk_size, dict(columns or {}), required=[score, *[c for c in cols
                    if c not in _LANGUAGE_COLUMNS]], numeric=[score], read_columns=[score, *cols, *_LANGUAGE_COLUMNS])
    with _backend_context(backend) as be:
        stats: GroupStats | None = None
        for part_stats in be.map(_bias_part, be.parts(spec), score, cols, small=True):
            stats = part_stats if stats is None else stats.merge(part_stats)
    assert stats is not None  # a table has at least one part (an empty one is refused when read)
    return _bias_result(stats, score, "+".join(cols) if len(cols) > 1 else cols[0])


def _bias_part(part, score: str, cols: list[str]) -> GroupStats:
    """Per-group statistics keyed by the tuple of group values (labels are made once, from every key,
    in :func:`_bias_result`: a label made per batch could differ between batches)."""
    stats: GroupStats | None = None
    for batch in part.batches():
        with batch_context(batch, batch.source):
            frame = prepare_frame(batch.frame, cols, batch.source)
            index = as_table(frame, by=cols).groups
        s = GroupStats.from_values(frame[score].to_numpy(dtype=float), index.codes, index.keys)
        stats = s if stats is None else stats.merge(s)
    assert stats is not None  # a part has at least one batch
    return stats


def _bias_result(stats: GroupStats, score: str, by: str) -> StreamingBias:
    labels = key_labels([cast(tuple, k) for k in stats.keys])  # the keys are tuples of group values
    order = np.argsort(np.array(labels, dtype=str), kind="stable")
    n, mean, m2 = stats.count[order], stats.mean[order], stats.m2[order]
    keep = n > 0
    keys = [str(labels[i]) for i in order[keep]]
    n, mean, m2 = n[keep], mean[keep], m2[keep]
    if len(keys) < 2:
        raise InputError(f"bias statistics need at least two groups in {by!r}; found {keys}")
    with np.errstate(invalid="ignore", divide="ignore"):
        std = np.where(n > 1, np.sqrt(m2 / (n - 1)), np.nan)
    groups = pd.DataFrame({"group": keys, "n": n.astype(np.int64), "mean": mean, "std": std,
                           "min": stats.min[order][keep], "max": stats.max[order][keep]})
    grand = float(np.sum(n * mean) / n.sum())
    between = float(np.sum(n * (mean - grand) ** 2))
    total = between + float(m2.sum())
    smd, pair, notes = _largest_smd(groups)
    return StreamingBias(score, by, groups, int(n.sum()), int(stats.n_nonfinite.sum()),
                         float(np.std(mean, ddof=1)), between / total if total > 0 else float("nan"), smd, pair,
                         tuple(notes))


def _largest_smd(groups: pd.DataFrame) -> tuple[float | None, tuple[str, str] | None, list[str]]:
    """Largest |mean_i - mean_j| / pooled sd over pairs of groups with n >= 2 (vectorised over pairs)."""
    notes: list[str] = []
    g = groups[groups["n"] >= 2]
    if len(g) < len(groups):
        notes.append(f"group(s) {groups.loc[groups['n'] < 2, 'group'].tolist()} have fewer than 2 rows: left out "
                     "of the standardised differences")
    n, mean, var = g["n"].to_numpy(float), g["mean"].to_numpy(), g["std"].to_numpy() ** 2
    i, j = np.triu_indices(len(g), k=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = np.sqrt(((n[i] - 1) * var[i] + (n[j] - 1) * var[j]) / (n[i] + n[j] - 2))
        d = np.abs(mean[i] - mean[j]) / pooled
    d = np.where(pooled > 0, d, np.nan)
    if not np.isfinite(d).any():
        notes.append("no pair of groups with a non-zero pooled sd: standardised differences undefined")
        return None, None, notes
    k = int(np.nanargmax(d))
    a, b = g["group"].iloc[i[k]], g["group"].iloc[j[k]]
    pair = (a, b) if mean[i[k]] >= mean[j[k]] else (b, a)
    return float(d[k]), (str(pair[0]), str(pair[1])), notes


# helpers ----------------------------------------------------------------------------------------------
def _check_output(output, path) -> None:
    """Before reading: the output (a file, or '-' redirected by the shell) is not the input."""
    check_output_path(output, inputs=[path], stdout=True)


def _stored_signature(path: str, score: str, columns=None) -> str | None:
    return None if path == "-" else score_signature(path, score, columns)


class _backend_context:
    """Enter a backend given by name or object; a backend object the caller entered stays open."""

    def __init__(self, backend: Backend):
        self._given = backend
        self._backend = resolve_backend(backend)

    def __enter__(self) -> LocalBackend | DaskBackend:
        if isinstance(self._backend, DaskBackend) and self._backend.client is not None:
            self._owned = False
            return self._backend
        self._owned = True
        return self._backend.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._owned:
            self._backend.__exit__(*exc)
