"""Systems that are copies of the reference: found once, per (group, system), and left out by default.

A system whose outputs are the reference (a human reference submitted or kept as a system, a leaked
reference) scores the metric's maximum against that reference: it tops every ranking, moves a fitted
calibration and enters a meta-evaluation as a "system" no metric can judge. The rule:

* **nearly equal**: a row's hypothesis equals its reference after the normalisation of the
  ``identical_reference`` flag (NFKC, case folded, letters and digits only: case, punctuation, white space
  and compatibility forms do not count) and is not empty;
* **most rows**: at least ``min_share`` (default 0.8) of the system's rows in the group that have both texts,
  and at least ``min_rows`` (default 10) such rows.

Measured on WMT21 (``/work/shared/data/wmt21/segments.parquet``, 229 (pair, system) cells, hypothesis
against ref-A): the highest share of any MT system is 10.4 % (fr-de Online-W), the next 4.9 %; the second
human translation ``ref-B`` (a translation of its own, not a copy) has 0.5 % (cs-en), 0.7 % (de-en) and
2.1 % (ru-en). A copy of ref-A has 100 %; the issue's refA 99.7 %. Short segments raise an honest
system's share: in the README's stand-in table (5-11 words, 90 % of words right) the best system equals the
reference on about 45 % of rows. 0.8 is eight times the highest WMT21 MT system, well above a strong system on
short segments, and below a copy with a fifth of its rows damaged. Sentence chrF (e.g. >= 95) would also
catch a lightly edited copy, but costs about 1.3 ms a row (27 s for de-en's 20,000 rows), too much for a
check every command runs; a copy with an edit in most sentences is left to ``xleval check-outputs``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._base.grouping import group_index
from .._base.result import Result
from ..exceptions import InputError
from ..table import default_by
from . import _flags as F
from ._normal import MIN_ROWS, MIN_SHARE

__all__ = ["ReferenceCopies", "reference_copies", "drop_reference_copies", "MIN_SHARE", "MIN_ROWS"]



@dataclass(frozen=True, eq=False)
class ReferenceCopies(Result):
    """Result of :func:`reference_copies`.

    ``cells``: one row per (group, system) with ``n`` rows that have both texts, ``identical`` rows equal to
    the reference (normalised), ``share`` and ``copy`` (the rule met). ``copies``: the (group label, system)
    pairs that are copies. ``checked`` is False when the table lacks a hypothesis, reference or system
    column (``notes`` say which): nothing could be found.
    """

    cells: pd.DataFrame
    copies: tuple[tuple[str, str], ...]
    by: tuple[str, ...] = ()
    system: str = "system"
    min_share: float = MIN_SHARE
    min_rows: int = MIN_ROWS
    checked: bool = True
    rule: str = ("hypothesis equal to the reference after normalisation (NFKC, case folded, letters and digits "
                 "only) on at least min_share of the system's rows in the group, and on at least min_rows rows")
    notes: tuple[str, ...] = ()

    _dump_order = ("copies", "by", "system", "min_share", "min_rows", "checked", "rule", ...)

    def mask(self, data: pd.DataFrame) -> np.ndarray:
        """Boolean per row of ``data`` (the table checked): the row belongs to a reference copy."""
        if not self.copies:
            return np.zeros(len(data), dtype=bool)
        from ..io import with_pair_column

        data = with_pair_column(data, self.by, "data")  # the pair the check derived, derived again
        index = group_index(data[list(self.by)], names=list(self.by), where="data", allow_missing=True)
        labels = np.asarray(index.labels(), dtype=object)[index.codes]
        systems = data[self.system].astype(str).to_numpy()
        wanted = set(self.copies)
        return np.fromiter(((g, s) in wanted for g, s in zip(labels, systems, strict=True)), dtype=bool,
                           count=len(data))

    def sentence(self, done: str = "left out", keep: str = "keep_reference_copies=True") -> str:
        """One line for users naming every copy, its share and what was ``done`` with it: ``"left out"``
        (the default of the commands that fit, select, rank or meta-evaluate), ``"kept"`` (asked for) or
        ``"named"`` (a command that only scores). ``keep``: how the caller asks to keep them (the library's
        argument; the command line says its flag)."""
        if not self.copies:
            return "no system is a copy of the reference"
        cells = self.cells.set_index(["group", self.system])
        named = ", ".join(f"{s!r} in {g} ({100 * cells.loc[(g, s), 'share']:.1f}% of "
                          f"{int(cells.loc[(g, s), 'n'])} rows)" for g, s in self.copies)
        what = (f"{len(self.copies)} system(s) equal the reference on most rows (copies of the reference, "
                f"docs/output-checks.md): {named}")
        if done == "kept":
            return f"{what}; kept as asked: they score the metric's best against that reference"
        if done == "named":
            return (f"{what}; scored like every system; fitting, label selection, rankings and meta-evaluation "
                    f"leave them out unless told {keep}")
        return f"{what}; left out of fitting, label selection, rankings and meta-evaluation ({keep} keeps them)"


def reference_copies(data: pd.DataFrame, *, by: str | Sequence[str] | None = None, system: str = "system",
                     hypothesis: str = "hypothesis", reference: str = "reference", min_share: float = MIN_SHARE,
                     min_rows: int = MIN_ROWS) -> ReferenceCopies:
    """The systems of ``data`` that are copies of the reference, per group (``by``, default the one rule:
    ``lp``, given or derived from ``src_lang`` and ``tgt_lang``, else ``tgt_lang``); see the module's docstring
    for the rule and its thresholds. A table without the hypothesis, reference or system column gives
    ``checked=False`` and no copies."""
    if not (isinstance(min_share, (int, float)) and 0 < min_share <= 1):
        raise InputError(f"min_share={min_share!r}: expected a share in (0, 1], e.g. 0.5", argument="min_share",
                         value=min_share)
    if isinstance(min_rows, bool) or not isinstance(min_rows, (int, np.integer)) or min_rows < 1:
        raise InputError(f"min_rows={min_rows!r}: expected a whole number >= 1", argument="min_rows", value=min_rows)
    from ..io import with_pair_column  # lazily: the language tables load only when a pair is derived

    by_cols = _by(data, by)
    data = with_pair_column(data, by_cols, "data")
    missing = [c for c in (hypothesis, reference, system) if c not in data.columns]
    missing += [c for c in by_cols if c not in data.columns]
    empty = pd.DataFrame(columns=["group", system, "n", "identical", "share", "copy"])
    if missing:
        return ReferenceCopies(cells=empty, copies=(), by=tuple(by_cols), system=system, min_share=float(min_share),
                               min_rows=int(min_rows), checked=False,
                               notes=(f"reference copies not checked: the table has no {missing[0]!r} column",))
    if len(data) == 0:
        return ReferenceCopies(cells=empty, copies=(), by=tuple(by_cols), system=system, min_share=float(min_share),
                               min_rows=int(min_rows))
    hyp, ref = _normalised_unique(data[hypothesis]), _normalised_unique(data[reference])
    both = (hyp != "") & (ref != "")
    same = both & (hyp == ref)
    keys = list(dict.fromkeys([*by_cols, system]))  # grouped by the system itself: one key
    index = group_index(data[keys], names=keys, where="data", allow_missing=True)
    n = np.bincount(index.codes, weights=both, minlength=index.n_groups).astype(np.int64)
    count = np.bincount(index.codes, weights=same, minlength=index.n_groups).astype(np.int64)
    groups = group_index(data[by_cols], names=by_cols, where="data", allow_missing=True)
    group_of_cell = np.zeros(index.n_groups, dtype=np.int64)
    group_of_cell[index.codes] = groups.codes
    group_labels = np.asarray(groups.labels(), dtype=object)[group_of_cell]
    system_of_cell = np.empty(index.n_groups, dtype=object)
    system_of_cell[index.codes] = data[system].astype(str).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, count / np.maximum(n, 1), np.nan)
    is_copy = (n > 0) & (share >= min_share) & (count >= min_rows)
    cells = pd.DataFrame({"group": group_labels, system: system_of_cell, "n": n, "identical": count,
                          "share": share, "copy": is_copy})
    copies = tuple((str(g), str(s)) for g, s in zip(cells["group"][is_copy], cells[system][is_copy], strict=True))
    return ReferenceCopies(cells=cells, copies=copies, by=tuple(by_cols), system=system, min_share=float(min_share),
                           min_rows=int(min_rows))


def drop_reference_copies(data: pd.DataFrame, *, keep: bool = False, **options: Any,
                          ) -> tuple[pd.DataFrame, ReferenceCopies]:
    """``data`` without the rows of its reference copies (all of it with ``keep=True``), and what was found
    (:func:`reference_copies`; ``options`` are its keywords)."""
    from ..io import with_pair_column

    frame = with_pair_column(data, _by(data, options.get("by")), "data")  # the pair derived once, for both
    found = reference_copies(frame, **options)
    if keep or not found.copies:
        return data, found
    return data.loc[~found.mask(frame)], found


def _by(data: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        by = default_by(data.columns)
    return [by] if isinstance(by, str) else list(by)


def _normalised_unique(values: pd.Series) -> np.ndarray:
    """:func:`~xleval.output_checks._flags.normalised` of each text, computed once per distinct text (a
    reference repeats once per system)."""
    texts = F.text_column(values)
    uniques, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
    return F.normalised(list(uniques))[inverse]
