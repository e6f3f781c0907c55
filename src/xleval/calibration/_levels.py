"""Fallback levels: which fitted statistics calibrate each group.

A fitted LGN keeps statistics for its ``by`` level and for every language level its fallback
chain names (``tgt_lang``, ``script``, ``family``). A group that is unseen, or degenerate (no
usable spread), is calibrated by the first level of the chain that knows it, else by the chain's
terminal: the pooled parameters, the raw score, or an error. :func:`resolve` walks the chain once
per distinct combination of the group columns, never per row.
"""
from __future__ import annotations

import enum
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._base.grouping import group_index
from ..exceptions import InputError
from ..io.langs import family_of, script_of, split_lp
from ._spelling import SpellingIndex

__all__ = ["Level", "Terminal", "Route", "DERIVED_LEVELS", "TERMINALS", "ON_UNSEEN", "fallback_chain",
           "fitted_levels", "level_codes", "derived_stats_labels", "Resolution", "resolve", "route_names",
           "group_label"]


class Level(enum.StrEnum):
    """Levels a calibrator holds statistics for. ``BY`` is the ``by`` columns themselves; its value is
    the key of those statistics in saved files (format version 1)."""

    BY = "__by__"
    TGT_LANG = "tgt_lang"
    SCRIPT = "script"
    FAMILY = "family"


class Terminal(enum.StrEnum):
    """How the chain ends for a group no fitted level knows."""

    POOLED = "pooled"  # the median of the well-estimated groups' parameters
    RAW = "raw"  # the score is left as it is
    ERROR = "error"  # refused


class Route(enum.IntEnum):
    """Per combination of group values, what calibrates it when it is not a fitted level (whose
    index in ``levels_``, >= 0, is used otherwise). Negative, so one int array holds both."""

    POOLED = -1
    RAW = -2
    UNRESOLVED = -3  # no level knows it and the chain has not been terminated yet


DERIVED_LEVELS = (Level.TGT_LANG, Level.SCRIPT, Level.FAMILY)
TERMINALS = tuple(Terminal)
ON_UNSEEN = (Terminal.POOLED, Terminal.RAW, Terminal.ERROR)


def fallback_chain(by: list[str], fallback: Sequence[str] | str) -> list[str]:
    """The chain of fallback levels, validated, ending in a terminal. ``"default"`` is
    ``tgt_lang -> script -> family -> pooled`` without the levels finer than or equal to ``by``."""
    if isinstance(fallback, str) and fallback == "default":
        if by == ["lp"] or (len(by) > 1 and ("tgt_lang" in by or "lp" in by)):
            return [Level.TGT_LANG.value, Level.SCRIPT.value, Level.FAMILY.value, Terminal.POOLED.value]
        if by == ["tgt_lang"]:
            return [Level.SCRIPT.value, Level.FAMILY.value, Terminal.POOLED.value]
        return [Terminal.POOLED.value]
    chain = [fallback] if isinstance(fallback, str) else list(fallback)
    for i, level in enumerate(chain):
        if level not in DERIVED_LEVELS + TERMINALS:
            raise InputError(f"fallback level {level!r}: use {', '.join(DERIVED_LEVELS + TERMINALS)}")
        if level in TERMINALS and i != len(chain) - 1:
            raise InputError(f"fallback level {level!r} ends the chain; put it last")
    if not chain or chain[-1] not in TERMINALS:
        chain.append(Terminal.ERROR.value)
    return [str(level) for level in chain]


def fitted_levels(chain: list[str]) -> list[str]:
    """The levels a calibrator with this chain holds statistics for, ``by`` first."""
    return [Level.BY.value] + [level for level in chain if level in DERIVED_LEVELS]


def tgt_of_lp(lp: str) -> str:
    return split_lp(lp)[1]


def derived_label(level: str, tgt: str) -> Hashable:
    """The group of target language ``tgt`` at a language level."""
    if level == Level.TGT_LANG:
        return tgt
    if level == Level.SCRIPT:
        return script_of(tgt)
    return family_of(tgt) or "?"


def level_codes(level: str, frame: pd.DataFrame, by: list[str]) -> tuple[np.ndarray, list]:
    """Integer codes of each row at ``level`` and the group labels (a value, or a tuple of values for
    several ``by`` columns)."""
    if level == Level.BY:
        index = group_index([frame[c] for c in by], names=by)
        return index.codes, [k[0] for k in index.keys] if len(by) == 1 else index.keys
    index = group_index([_tgt_column(frame)], names=["tgt_lang"])
    tgts = [k[0] for k in index.keys]
    if level == Level.TGT_LANG:
        return index.codes, tgts
    inner = group_index([pd.Series([derived_label(level, t) for t in tgts], dtype=object)])
    return inner.codes[index.codes], [k[0] for k in inner.keys]


def derived_stats_labels(level: str, by: list[str], by_keys: Sequence[Hashable]) -> list | None:
    """The label at ``level`` of each ``by`` group when ``by`` determines the target language (then the
    language levels are merged from the ``by`` statistics, no second pass over rows); else None."""
    if "tgt_lang" not in by and "lp" not in by:
        return None
    col = by.index("tgt_lang" if "tgt_lang" in by else "lp")
    values: list[Any] = [k[col] if isinstance(k, tuple) else k for k in by_keys]  # the column's codes
    tgt = values if "tgt_lang" in by else [tgt_of_lp(v) for v in values]
    return [derived_label(level, t) for t in tgt]


def _tgt_column(frame: pd.DataFrame) -> pd.Series:
    return frame["tgt_lang"] if "tgt_lang" in frame.columns else frame["lp"].map(tgt_of_lp)


@dataclass(frozen=True)
class Resolution:
    """Rows map to distinct combinations of the group values through ``codes``; per combination,
    ``level`` is the index of the fitted level that calibrates it (or a :class:`Route`), ``key`` the
    group's index in that level's statistics, and ``labels`` its ``by`` label."""

    codes: np.ndarray
    level: np.ndarray
    key: np.ndarray
    labels: list

    def rows_per_combination(self) -> np.ndarray:
        return np.bincount(self.codes, minlength=len(self.level))


def resolve(frame: pd.DataFrame, by: list[str], levels: list[str], chain: list[str],
            usable: dict[str, dict[Hashable, int]]) -> Resolution:
    """Walk ``chain`` once per distinct combination of ``by`` (plus the target language when a
    language level is in the chain). ``usable[level]`` maps the labels of that level's usable groups
    (seen, not degenerate) to their index. A terminal ``error`` raises for combinations with rows."""
    active = [Level.BY.value] + [level for level in chain if level in DERIVED_LEVELS]
    columns = [frame[c] for c in by]
    need_tgt = len(active) > 1
    # the target language is read off the group label when `by` holds it (no second column to hash)
    if need_tgt and "tgt_lang" in by:
        position = by.index("tgt_lang")
        tgt_of = lambda combo: combo[position]  # noqa: E731
    elif need_tgt and "lp" in by:
        position = by.index("lp")
        tgt_of = lambda combo: tgt_of_lp(combo[position])  # noqa: E731
    elif need_tgt:
        columns.append(_tgt_column(frame))
        tgt_of = lambda combo: combo[-1]  # noqa: E731
    index = group_index(columns, names=[*by, "tgt_lang"][:len(columns)])
    n_by = len(by)
    labels = [combo[0] if n_by == 1 else tuple(combo[:n_by]) for combo in index.keys]
    level = np.full(index.n_groups, Route.UNRESOLVED, dtype=np.int64)
    key = np.full(index.n_groups, -1, dtype=np.int64)
    spelling: SpellingIndex | None = None  # built on the first label not fitted as written
    for i, (combo, label) in enumerate(zip(index.keys, labels, strict=True)):
        tgt: Any = tgt_of(combo) if need_tgt else None  # only the language levels (need_tgt) read it
        fitted = label
        if label not in usable[Level.BY.value]:  # another spelling of a fitted label's languages (en-cs_CZ)?
            spelling = spelling or SpellingIndex(usable[Level.BY.value], by)
            fitted = spelling.match(label) or label
        for lv in active:
            j = usable[lv].get(fitted if lv == Level.BY else derived_label(lv, tgt))
            if j is not None:
                level[i], key[i] = levels.index(lv), j
                break
    unresolved = level == Route.UNRESOLVED
    if unresolved.any():
        terminal = chain[-1]
        if terminal == Terminal.ERROR:
            names = sorted({group_label(labels[i]) for i in np.flatnonzero(unresolved)})
            n_rows = int(np.isin(index.codes, np.flatnonzero(unresolved)).sum())
            raise InputError(
                f"{n_rows} row(s) belong to group(s) the calibrator cannot calibrate ({', '.join(names[:10])}); "
                "fit on data that covers them or allow a fallback (e.g. on_unseen=\"pooled\")", argument="on_unseen")
        level[unresolved] = Route.POOLED if terminal == Terminal.POOLED else Route.RAW
    return Resolution(index.codes, level, key, labels)


def route_names(by: list[str], levels: list[str], level: np.ndarray) -> np.ndarray:
    """Per combination, the name of what calibrated it: the ``by`` columns joined by '+', a language
    level, ``pooled`` or ``raw`` (the values of ``calibration_source``)."""
    names = np.array(["+".join(by), *levels[1:]], dtype=object)
    out = np.empty(len(level), dtype=object)
    fitted = level >= 0
    out[fitted] = names[level[fitted]]
    out[level == Route.POOLED] = Terminal.POOLED.value
    out[level == Route.RAW] = Terminal.RAW.value
    return out


def group_label(key) -> str:
    """A group's label as text: the value, or the values joined by '|'."""
    return "|".join(map(str, key)) if isinstance(key, tuple) else str(key)
