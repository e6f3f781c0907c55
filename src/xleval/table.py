"""The evaluation table: one long table of scored rows and the roles of its columns, checked once.

:class:`EvalTable` plays the part of mt-metrics-eval's ``EvalSet`` for xleval's long tables: it is
built once from a frame and the column roles (score columns, grouping columns, human score,
system, segment, document), and does once what every MT-path function used to do again:

* checks that every named column exists (:func:`require_columns`, the one column check);
* derives and normalises language columns (``lp``, ``src_lang``, ``tgt_lang``) in one place;
* parses numbers with one parser (:func:`numeric_column`: the row and the value that is not a number);
* computes the group codes with the one group-code function (:func:`xleval._base.grouping.group_index`):
  group keys are tuples of values, never joined strings, so ``("a|b", "c")`` and ``("a", "b|c")`` stay
  two groups, as do ``1`` and ``"1"``;
* carries the metric signatures and where the table came from.

Every MT-path entry point (diagnostics, leaderboard, report, calibrators, calibration evaluation and
selection) accepts an :class:`EvalTable` or a DataFrame (:func:`as_table` builds the table from a
frame and the roles given as keywords), so no call that passes a frame breaks.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ._base.default_by import DEFAULT_BY, DefaultGrouping, default_by
from ._base.grouping import GroupIndex, combined_codes, group_index
from .exceptions import ArgumentTypeError, InputError

__all__ = ["EvalTable", "as_table", "resolve_roles", "require_columns", "numeric_column", "check_labels_finite",
           "warn_contradicting_labels", "require_some_value", "LANGUAGE_COLUMNS", "default_by", "DEFAULT_BY",
           "DefaultGrouping", "scored_groups", "scored_group_rows", "pooled_pairs_note", "pair_labels"]

#: columns holding language codes: normalised (and derived from ``lp``) by the table
LANGUAGE_COLUMNS = ("lp", "src_lang", "tgt_lang")

def _given_default(default: Any, columns: Iterable[Any]) -> str | Sequence[str] | None:
    """``default`` as given, :data:`DEFAULT_BY` resolved on ``columns``."""
    return default_by(columns) if default is DEFAULT_BY else default


#: the column roles a table knows, in the order they are listed
ROLES = ("score", "by", "human", "system", "segment", "document")


def require_columns(data: Any, columns: Sequence[str], *, what: str = "data",
                    argument: str | None = None) -> None:
    """The one column check: an :class:`InputError` naming the missing column(s), the argument that
    named them (``argument``, carried on the error for the CLI to name its flag) and the columns the
    table has."""
    if not isinstance(data, pd.DataFrame):
        raise ArgumentTypeError(f"{what} must be a pandas DataFrame or an EvalTable; got {type(data).__name__}",
                                argument="data", value=type(data).__name__)
    have = set(data.columns)
    missing = [c for c in dict.fromkeys(columns) if c not in have]
    if missing:
        kind = _KINDS.get(argument or "")
        named = f" (given as {argument}=)" if argument else ""
        named = f" (the {kind} column, given as {argument}=)" if kind else named
        listed = ", ".join(repr(c) for c in missing)
        where = "" if what in ("data", "table") else f"{what}: "
        from .io._shape import missing_column_error, missing_column_hint

        hint = missing_column_hint(missing[0], list(data.columns))
        raise missing_column_error(f"{where}no column{'s' if len(missing) > 1 else ''} {listed}{named}; columns are "
                                   f"{list(data.columns)}" + (f"; {hint}" if hint else ""), missing, list(data.columns),
                                   argument=argument)


_KINDS = {"score": "score", "scores": "score", "by": "group", "human": "human", "system": "system",
          "segment": "segment", "document": "document"}


def numeric_column(data: pd.DataFrame, column: str, *, what: str = "data", argument: str | None = None) -> np.ndarray:
    """A frame's column as float64 through the one number parser, the readers'
    (:func:`xleval.io.to_numeric_column`: empty and NA tokens are NaN, ``inf`` stays inf, anything else
    is an InputError naming the row and the cell). A column of human scores (``argument`` ``human`` or
    ``skip_labelled``) refuses ``inf`` (:func:`check_labels_finite`)."""
    from .io._read import to_numeric_column

    require_columns(data, [column], what=what, argument=argument)
    try:
        values = to_numeric_column(data[column], column, what).to_numpy(dtype=np.float64, na_value=np.nan)
    except InputError as exc:
        exc.argument, exc.value = argument, column
        raise
    if argument in HUMAN_ARGUMENTS:
        check_labels_finite(values, column, what=what, argument=argument)
    return values


def require_some_value(values: np.ndarray, column: str, *, kind: str = "column", argument: str | None = None,
                       fix: str = "name a column with scores") -> None:
    """The one refusal of a column with no finite value (every statistic of it would be missing, a table of
    dashes): an InputError naming the ``kind`` of column ('score', 'metric'), how many rows it has and ``fix``."""
    if not np.isfinite(values).any():
        raise InputError(f"{kind} {column!r} has no finite value on any of the {len(values)} rows; {fix}",
                         argument=argument, value=column)


def scored_groups(table: EvalTable) -> EvalTable:
    """``table`` without the groups that have no finite score at all (:func:`scored_group_rows`)."""
    keep = scored_group_rows(table)
    return table if keep is None else table.with_positions(np.flatnonzero(keep))


def scored_group_rows(table: EvalTable) -> np.ndarray | None:
    """Which rows of ``table`` are in a group with a finite score (None: all of them), the others said once in a
    :class:`~xleval.exceptions.DataQualityWarning` naming them: what the decision, the calibration fit and the report
    read. Such a group is not one of the groups to compare (on WMT25's automatic scores, chrF++ in 2 of 31 pairs,
    the decision counted the other 29 as groups without labels and recommended LGN). Rows without a score in the
    other groups stay, for each reader to count as before. No finite score anywhere, or human scores only in the
    groups without one: None, the table read as it is (its readers refuse it in their own words: E40, the human
    scores and the scores share no row)."""
    import warnings

    from ._base.grouping import groups_left_out
    from .exceptions import DataQualityWarning

    finite = np.isfinite(table.scores())
    codes = table.groups.codes
    keep = (np.bincount(codes[finite], minlength=table.groups.n_groups) > 0)[codes]
    if keep.all() or not finite.any():
        return None
    if table.human is not None:
        labelled = np.isfinite(table.human_values())
        if labelled.any() and not (labelled & keep).any():
            return None
    warnings.warn(f"score {table.score_column!r}: {int((~keep).sum())} of {len(keep)} row(s) have no finite value "
                  f"and were left out{groups_left_out(table.groups, keep)}", DataQualityWarning, stacklevel=4)
    return keep


def pair_labels(frame: pd.DataFrame) -> np.ndarray | None:
    """Each row's language pair as text: the ``lp`` column, else ``src_lang-tgt_lang``; None without either."""
    if "lp" in frame.columns:
        return frame["lp"].astype(str).to_numpy()
    if {"src_lang", "tgt_lang"} <= set(frame.columns):
        return (frame["src_lang"].astype(str) + "-" + frame["tgt_lang"].astype(str)).to_numpy()
    return None


def _combinations(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (a, b) pairs of two code columns, as two arrays (each combination's a and b)."""
    codes = combined_codes(a, b)
    first = np.full(int(codes.max()) + 1 if len(codes) else 0, -1)
    first[codes[::-1]] = np.arange(len(codes))[::-1]  # each combination's first row
    return a[first], b[first]


#: the words that mark :func:`pooled_pairs_note`'s sentence among a result's notes
POOLED_PAIRS_WORDS = "group(s) hold the rows of several language pairs"


def pooled_pairs_note(frame: pd.DataFrame, by: Sequence[str], system: str | None = None) -> str | None:
    """A note where a group of ``by`` (``tgt_lang``, ``src_lang``) holds the rows of several language pairs (the
    ``lp`` column, else ``src_lang`` with ``tgt_lang``), None where none does. Their test sets differ (WMT25's de-DE:
    cs-de and en-de, sources in two languages), so such a group's level mixes them; and a ``system`` that has the
    rows of only some of its group's pairs is scored on another test set than the group's other systems."""
    by = list(by)
    pair = pair_labels(frame)
    if pair is None:
        return None
    if "lp" in by or {"src_lang", "tgt_lang"} <= set(by) or not set(by) <= set(frame.columns):
        return None
    groups = group_index(frame[by], allow_missing=True)
    pairs = group_index([pair], allow_missing=True)
    group_of, pair_of = _combinations(groups.codes, pairs.codes)  # each distinct (group, pair): its group and pair
    n_pairs = np.bincount(group_of, minlength=groups.n_groups)
    mixed = np.flatnonzero(n_pairs > 1)
    if not len(mixed):
        return None
    names, pair_names = groups.labels(), pairs.labels()

    def some(found: list[str]) -> str:  # WMT25 by src_lang: en holds 28 pairs
        return ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")

    listed = sorted((names[g], some(sorted(pair_names[p] for p in pair_of[group_of == g]))) for g in mixed)
    shown = "; ".join(f"{g} ({p})" for g, p in listed[:8]) + (f"; and {len(listed) - 8} more" if len(listed) > 8
                                                                   else "")
    col = "/".join(by)
    note = (f"{len(mixed)} {col} {POOLED_PAIRS_WORDS}, whose test sets differ: {shown}; "
            "each such group's level mixes them")
    if system is not None and system in frame.columns:
        systems = group_index([groups.codes, frame[system].to_numpy()], names=["group", "system"], allow_missing=True)
        per_cell = np.bincount(_combinations(systems.codes, pairs.codes)[0], minlength=systems.n_groups)  # its pairs
        cell_group = groups.codes[systems.first]
        short = (per_cell < n_pairs[cell_group]) & (n_pairs[cell_group] > 1)
        if short.any():
            counts = np.bincount(cell_group[short], minlength=groups.n_groups)
            short_groups = sorted(np.flatnonzero(counts), key=lambda g: names[g])
            where = ", ".join(f"{names[g]}: {counts[g]}" for g in short_groups)
            note += (f", and {int(short.sum())} system(s) have the rows of only some of their group's pairs ({where}): "
                     "they are scored on another test set than the others of their group")
    return note + "; by='lp' keeps the pairs apart"


#: the arguments that name a column of human scores (read by :func:`numeric_column` as labels)
HUMAN_ARGUMENTS = ("human", "skip_labelled")


#: beyond this magnitude a label's fourth power overflows float64: the variance of the labels' deviation variance
#: (the leaderboard's intervals) squares a mean of squares; no human scale comes near it
MAX_LABEL_MAGNITUDE = 1e75


def check_labels_finite(values: np.ndarray, column: str, *, what: str = "data", argument: str | None = "human") -> None:
    """The one rule for human scores: a label is a finite number or missing (NaN: not labelled); an infinite
    one is bad input, never dropped as missing nor counted as a label, and so is one beyond
    :data:`MAX_LABEL_MAGNITUDE`. Names the first row (1-based)."""
    where = "" if what in ("data", "table") else f"{what}: "
    huge = np.isfinite(values) & (np.abs(values) > MAX_LABEL_MAGNITUDE)
    if huge.any():
        first = int(np.flatnonzero(huge)[0])
        raise InputError(f"{where}column {column!r} row {first + 1}: human score {values[first]:g} is beyond "
                         f"+-{MAX_LABEL_MAGNITUDE:g}, where the variances of the labels' variances overflow "
                         f"({int(huge.sum())} such cells); rescale the labels", argument=argument, value=column)
    bad = np.isinf(values)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where}column {column!r} row {first + 1}: human score {values[first]:g} is infinite "
                         f"({int(bad.sum())} such cells); a label is a finite number: fix the cell, or leave it "
                         "empty for a row without a label", argument=argument, value=column)


def warn_contradicting_labels(frame: pd.DataFrame, human: str, values: np.ndarray, *, system: str | None = "system",
                              segment: str | None = "seg_id", where: str = "data") -> None:
    """The one check of repeated labels: rows that repeat a (language pair, system, segment) key with
    different human scores are each used as a label of their own, so a DataQualityWarning names how
    many keys contradict themselves and one of them (:func:`warn_repeated_keys`)."""
    warn_repeated_keys(frame, human, values, system=system, segment=segment, where=where, what="human scores",
                       fix="each row counts as a label of its own: remove the duplicates, or average the labels of "
                           "one segment")


#: what :func:`warn_repeated_keys` says to do about repeated keys whose scores differ
REPEATED_SCORES_FIX = ("each row counts as a segment of its own (a table concatenated twice, or two runs of one "
                       "system): remove the duplicates")


def warn_repeated_keys(frame: pd.DataFrame, column: str, values: np.ndarray, *, system: str | None = "system",
                       segment: str | None = "seg_id", where: str = "data", what: str = "scores",
                       fix: str = REPEATED_SCORES_FIX) -> None:
    """Rows that repeat a (language pair, system, segment) key with different ``values`` of ``column``: a
    DataQualityWarning names how many keys and one of them, and ``fix``. Equal values repeat silently (one row
    per rating of a segment carries its score in each). Tables without those columns are not checked (the pair
    is ``lp``, else ``src_lang`` and ``tgt_lang``). A ``doc_id`` column is part of the key: WMT25 numbers
    segments within each document, so its ``seg_id`` 1 is a segment of every document."""
    key = repeated_key_columns(frame.columns, system=system, segment=segment)
    if key is None:
        return
    present = np.isfinite(values)
    if present.sum() < 2:
        return
    rows = frame.loc[present, key].assign(_v=values[present]).dropna(subset=key)  # a key with a gap repeats nothing
    repeated = rows[rows.duplicated(key, keep=False)]
    if repeated.empty:
        return
    spread = repeated.groupby(key, sort=True, dropna=False, observed=True)["_v"].agg(["nunique", "min", "max"])
    bad = spread[spread["nunique"] > 1]
    if bad.empty:
        return
    import warnings

    first = bad.index[0] if isinstance(bad.index[0], tuple) else (bad.index[0],)
    warnings.warn(repeated_keys_warning(len(bad), key, column, first, bad["min"].iloc[0], bad["max"].iloc[0],
                                        where=where, what=what, fix=fix), stacklevel=4)


def repeated_key_columns(columns: Iterable[Any], *, system: str | None = "system",
                         segment: str | None = "seg_id") -> list[str] | None:
    """The key :func:`warn_repeated_keys` checks in a table with ``columns``: the pair (``lp``, else ``src_lang``
    and ``tgt_lang``), ``system``, ``doc_id`` when present, ``segment``; None when the table lacks one of them."""
    names = set(columns)
    pair = ["lp"] if "lp" in names else [c for c in ("src_lang", "tgt_lang") if c in names]
    key = [*pair, *(c for c in (system, segment) if c is not None)]
    if not pair or len(key) < len(pair) + 2 or not all(c in names for c in key):
        return None
    if "doc_id" in names and "doc_id" not in key:
        key.insert(len(key) - 1, "doc_id")
    return key


def repeated_keys_warning(count: int, key: Sequence[str], column: str, example: tuple, low: float, high: float, *,
                          where: str = "data", what: str = "scores", fix: str = REPEATED_SCORES_FIX) -> Warning:
    """The warning of :func:`warn_repeated_keys` (and of the streamed fit, :mod:`xleval.scale`): ``count`` keys
    repeat with different ``what``, ``example`` (values of ``key``) from ``low`` to ``high``."""
    from .exceptions import RepeatedKeysWarning

    example = tuple(v.item() if isinstance(v, np.generic) else v for v in example)
    prefix = "" if where in ("data", "table") else f"{where}: "
    message = (f"{prefix}{count} ({', '.join(key)}) key(s) repeat with different {what} in {column!r} "
               f"(e.g. {example!r}: {low:g} to {high:g}); {fix}")
    return RepeatedKeysWarning(message, column)


def _columns(value: str | Sequence[str] | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise ArgumentTypeError(f"{name} must be a column name or a list of column names; got {value!r}",
                                argument=name, value=value)
    return tuple(value)


def _one(value: str | None, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a column name (a string); got {value!r}", argument=name, value=value)
    return value


def _languages(frame: pd.DataFrame, needed: Sequence[str], where: str, normalize: bool) -> pd.DataFrame:
    """The frame with normalised language columns (``normalize``), or with only the language columns
    that ``needed`` lacks derived from ``lp`` (a frame passed as it is keeps its own spellings)."""
    present = set(LANGUAGE_COLUMNS) & set(frame.columns)
    if not present:
        return frame
    derive = any(c in LANGUAGE_COLUMNS and c not in frame.columns for c in needed)
    if not (normalize or derive):
        return frame
    from .io import add_language_columns

    return add_language_columns(frame, where=where)


@dataclass(frozen=True, eq=False, repr=False)
class EvalTable:
    """One long evaluation table and the roles of its columns (build it with :meth:`from_frame`,
    :meth:`read` or :func:`as_table`).

    ``frame`` is the checked table (language columns normalised, derived from ``lp`` where missing;
    a copy: the caller's frame is never changed); ``score`` the score column(s); ``by`` the grouping
    column(s); ``human``, ``system``, ``segment``, ``document`` one column each or None;
    ``signatures`` the metric signature of each score column that has one; ``source`` where the
    table came from (a path, or ``"data"``). The table is immutable: ``frame`` is a private copy
    handed out as a copy (:meth:`to_frame`), and a new role makes a new table (:meth:`with_roles`).
    """

    _frame: pd.DataFrame = field(repr=False)
    score: tuple[str, ...] = ()
    by: tuple[str, ...] = ()
    human: str | None = None
    system: str | None = None
    segment: str | None = None
    document: str | None = None
    signatures: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    source: str = "data"
    # set by in_canonical_order: the rows are known to be in that order (a second call sorts nothing)
    _canonical: bool = field(default=False, repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(cls, data: pd.DataFrame, *, score: str | Sequence[str] | None = None,
                   by: Any = DEFAULT_BY, human: str | None = None, system: str | None = None,
                   segment: str | None = None, document: str | None = None,
                   columns: Mapping[str, str] | None = None, signatures: Mapping[str, str] | None = None,
                   source: str | os.PathLike = "data", normalize_languages: bool = True) -> EvalTable:
        """Check ``data`` against the roles and build the table.

        ``columns`` renames columns first, as every reader's ``columns=`` does (``{"mt": "hypothesis"}``:
        the frame's column on the left, the canonical name on the right). ``normalize_languages=False``
        keeps the frame's own spellings of language codes (only a missing ``src_lang``/``tgt_lang``
        needed by ``by`` is derived from ``lp``).
        """
        source = os.fspath(source)
        if not isinstance(data, pd.DataFrame):
            raise ArgumentTypeError(f"data must be a pandas DataFrame; got {type(data).__name__}",
                                    argument="data", value=type(data).__name__)
        frame = data
        signatures = dict(signatures or {})
        if columns:  # file column -> canonical name, as every reader's columns= (checked the same way)
            from ._base.signature import renamed_signatures
            from .io._shape import check_header

            check_header(frame.columns, dict(columns), (), source)
            frame = frame.rename(columns=dict(columns))
            signatures = renamed_signatures(signatures, columns)  # a signature travels with its file column
        by = _given_default(by, frame.columns)  # DEFAULT_BY: lp (given, or from the two codes), else tgt_lang
        scores, by_cols = _columns(score, "score"), _columns(by, "by")
        one = {"human": _one(human, "human"), "system": _one(system, "system"), "segment": _one(segment, "segment"),
               "document": _one(document, "document")}
        frame = _languages(frame, by_cols, source, normalize_languages)
        if frame is data:
            frame = data.copy(deep=False)  # the table's own object: the caller may add columns to theirs
        require_columns(frame, scores, what=source, argument="score")
        require_columns(frame, by_cols, what=source, argument="by")
        for role, name in one.items():
            require_columns(frame, [name] if name is not None else [], what=source, argument=role)
        sigs = MappingProxyType({str(k): str(v) for k, v in signatures.items()})
        return cls(frame, scores, by_cols, one["human"], one["system"], one["segment"], one["document"], sigs, source)

    @classmethod
    def read(cls, path: str | os.PathLike, *, columns: Mapping[str, str] | None = None, required: Sequence[str] = (),
             numeric: Sequence[str] = (), quoting: str | None = None, **roles: Any) -> EvalTable:
        """Read a table file (TSV, CSV, JSONL, Parquet; :func:`xleval.io.read_table`, whose ``columns``,
        ``required``, ``numeric`` and ``quoting`` these are) with its metric signatures (Parquet metadata
        or sidecar; a renamed column keeps its file column's signature) and build the table with
        ``roles``: the one reading of a table, so its signatures travel with it."""
        from ._base.signature import renamed_signatures
        from .io import read_table, read_table_metadata

        frame = read_table(path, columns=columns, required=required, numeric=numeric, quoting=quoting)
        meta = read_table_metadata(path) if os.fspath(path) != "-" else {}
        sigs = meta.get("signatures", {}) if isinstance(meta, dict) else {}
        sigs = renamed_signatures(sigs if isinstance(sigs, dict) else {}, columns)
        return cls.from_frame(frame, signatures=sigs, source=path, **roles)

    def with_rows(self, index: Any) -> EvalTable:
        """The table restricted to the rows of ``index`` (labels of :attr:`frame`'s index, e.g. the index
        of a filtered frame): same roles, signatures and source."""
        return replace(self, _frame=self._frame.loc[index], _canonical=False)

    def with_positions(self, positions: np.ndarray) -> EvalTable:
        """The table restricted to the rows at ``positions`` (0-based, in :attr:`frame`'s order; an index with
        repeated labels cannot name them): same roles, signatures and source."""
        return replace(self, _frame=self._frame.iloc[np.asarray(positions, dtype=np.intp)], _canonical=False)

    def in_canonical_order(self) -> EvalTable:
        """The same rows sorted by group, system and segment (:func:`xleval._base.grouping.canonical_order`): what
        draws folds, labels or resamples from the rows reads them in this order, so the table's row order (a
        re-export, a shuffle) never changes a result. Itself when already in that order."""
        from ._base.grouping import canonical_order, segment_rank

        if self._canonical:
            return self
        frame = self._frame
        system = next((c for c in (self.system, "system") if c is not None and c in frame.columns), None)
        # the system role's labels checked here, in the table's own row order: a refusal names the file's row
        systems = None if system is None else self.column_labels(system, allow_missing=system != self.system)
        order = canonical_order(self.row_labels(), systems,
                                segment_rank(frame["seg_id"]) if "seg_id" in frame.columns else None)
        in_order = bool((order == np.arange(len(order))).all())
        return replace(self, _frame=frame if in_order else frame.iloc[order], _canonical=True)

    def with_roles(self, **roles: Any) -> EvalTable:
        """A table over the same rows with some roles changed (``by="lp"``, ``score="bleu"``)."""
        unknown = sorted(set(roles) - set(ROLES))
        if unknown:
            raise ArgumentTypeError(f"unknown role(s) {unknown}; roles are {list(ROLES)}", argument=unknown[0])
        current: dict[str, Any] = {r: getattr(self, r) for r in ROLES}
        current.update(roles)
        return EvalTable.from_frame(self._frame, signatures=self.signatures, source=self.source,
                                    normalize_languages=False, **current)

    # ------------------------------------------------------------------ reading
    @property
    def frame(self) -> pd.DataFrame:
        """The checked table (read-only by convention: change a copy, :meth:`to_frame`)."""
        return self._frame

    def to_frame(self) -> pd.DataFrame:
        """A copy of the checked table, free to change."""
        return self._frame.copy()

    def __len__(self) -> int:
        return len(self._frame)

    def __repr__(self) -> str:
        roles = ", ".join(f"{r}={getattr(self, r)!r}" for r in ROLES if getattr(self, r) not in (None, ()))
        return f"EvalTable({len(self)} rows from {self.source!r}, {roles})"

    def values(self, column: str, *, argument: str | None = None) -> np.ndarray:
        """Column ``column`` parsed as float64 (:func:`numeric_column`)."""
        return numeric_column(self._frame, column, what=self.source, argument=argument)

    def scores(self, column: str | None = None) -> np.ndarray:
        """The (first) score column's values as float64, with a warning about repeated keys whose scores differ
        (:func:`warn_repeated_keys`: a table concatenated twice is averaged otherwise, without a word)."""
        name = column or self.score_column
        values = self.values(name, argument="score")
        warn_repeated_keys(self._frame, name, values, system=self.system or "system",
                           segment=self.segment or "seg_id", where=self.source)
        return values

    def human_values(self) -> np.ndarray:
        """The human scores (NaN: not labelled; an infinite one is refused), with a warning about
        repeated keys whose labels contradict each other (:func:`warn_contradicting_labels`)."""
        if self.human is None:
            raise InputError(f"{self.source}: no human score column; give human=", argument="human")
        values = self.values(self.human, argument="human")
        warn_contradicting_labels(self._frame, self.human, values, system=self.system or "system",
                                  segment=self.segment or "seg_id", where=self.source)
        return values

    @property
    def score_column(self) -> str:
        if not self.score:
            raise InputError(f"{self.source}: no score column; give score=", argument="score")
        return self.score[0]

    def system_role(self, given: str | None = "system") -> str | None:
        """The system column for a function argument whose default is ``"system"``: the table's system
        column when the argument was left at that default, else the argument (None: no system)."""
        return self.system if given == "system" and self.system is not None else given

    def signature(self, column: str | None = None) -> str | None:
        """The metric signature of a score column, when the table came with one."""
        return self.signatures.get(column or self.score_column)

    # ------------------------------------------------------------------ groups
    @cached_property
    def groups(self) -> GroupIndex:
        """The group index of the ``by`` columns (tuples of values; a missing value is an error)."""
        if not self.by:
            raise InputError(f"{self.source}: no grouping column; give by=", argument="by")
        return group_index(self._frame[list(self.by)], where=self.source)

    def row_labels(self) -> np.ndarray:
        """Each row's group label (an object array), distinct for distinct groups."""
        return self.groups.row_labels()

    def column_labels(self, column: str, *, allow_missing: bool = False) -> np.ndarray:
        """Each row's value of ``column`` as a display label, distinct for distinct values (``1`` and
        ``"1"`` stay apart; :meth:`GroupIndex.labels`)."""
        return self.index([column], allow_missing=allow_missing).row_labels()

    def index(self, columns: Sequence[str], *, allow_missing: bool = False) -> GroupIndex:
        """The group index of any columns of the table (cells of group and system, segments, ...)."""
        cols = list(columns)
        require_columns(self._frame, cols, what=self.source)
        return group_index(self._frame[cols], allow_missing=allow_missing, where=self.source)

    @cached_property
    def systems(self) -> GroupIndex:
        """The index of the ``system`` column."""
        if self.system is None:
            raise InputError(f"{self.source}: no system column; give system=", argument="system")
        return self.index([self.system])


def as_table(data: EvalTable | pd.DataFrame, *, default_by: str | Sequence[str] | DefaultGrouping | None = None,
             **roles: Any) -> EvalTable:
    """``data`` as an :class:`EvalTable`: a table is returned with the roles given here applied
    (when they differ), a frame becomes a table with these roles. A frame passed to a function keeps
    its language spellings (as it did before the table existed); only missing language columns are
    derived from ``lp``. A role given as None keeps the table's own (a frame: leaves it unset)."""
    roles = {k: v for k, v in roles.items() if k not in ("columns", "signatures", "source") or v is not None}
    if isinstance(data, EvalTable):
        if not data.by and roles.get("by") is None and default_by is not None:
            roles["by"] = _given_default(default_by, data.frame.columns)
        changed = {k: v for k, v in roles.items() if k in ROLES and v is not None and _differs(getattr(data, k), v)}
        return data.with_roles(**changed) if changed else data
    roles.setdefault("normalize_languages", False)
    if roles.get("by") is None:  # DEFAULT_BY is resolved by from_frame, which warns of pooled pairs
        roles["by"] = default_by if default_by is DEFAULT_BY else _given_default(default_by, data.columns)
    return EvalTable.from_frame(data, **roles)


def resolve_roles(data: EvalTable | pd.DataFrame, *, score: str | None = None,
                  by: str | Sequence[str] | None = None, human: str | None = None, system: str | None = "system",
                  default_by: Any = DEFAULT_BY) -> tuple[pd.DataFrame, dict[str, Any]]:
    """For functions written on a frame and column names: ``data`` as a frame and its roles (``score``,
    ``by`` as a name or a list of names, ``human``, ``system``), each the argument given, else the
    table's, else the default. ``system`` keeps the functions' convention: ``"system"`` (the default)
    is the table's system column when it has one, None is no system. A frame is returned as it is (its
    columns are checked where used)."""
    if isinstance(data, EvalTable):
        by_cols = _columns(by, "by") or data.by or _columns(_given_default(default_by, data.frame.columns), "by")
        roles = {"score": score or (data.score[0] if data.score else None),
                 "by": by_cols[0] if len(by_cols) == 1 else list(by_cols),
                 "human": human if human is not None else data.human,
                 "system": data.system_role(system)}
        return data.frame, roles
    return data, {"score": score, "by": _given_default(default_by, data.columns) if by is None else by, "human": human,
                  "system": system}


def _differs(current: Any, given: Any) -> bool:
    if isinstance(current, tuple):
        return current != _columns(given, "role")
    return current != given
