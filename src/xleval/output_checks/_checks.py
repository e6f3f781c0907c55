"""Per-row output checks, their rates per (group, system) and their effect on each metric column."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._base.grouping import group_index
from .._base.result import Result
from .._base.terminal import CONTROL_CHARACTERS, visible_controls
from ..exceptions import InputError
from ..table import default_by, numeric_column, require_columns, require_some_value
from . import _flags as F
from ._langid import LanguageIdentifier, resolve_identifier

__all__ = ["OutputChecks", "Exclusion", "flag_outputs", "check_outputs", "FlagThresholds", "DEFAULT_THRESHOLDS",
           "exclude_invalid", "wilson_interval"]

_NEEDS = {"copy_source": ("source",), "truncated": ("source",), "identical_reference": ("reference",),
          "extreme_length": ("source|reference",), "off_target": ("tgt_lang",)}


@dataclass(frozen=True, eq=False)
class OutputChecks(Result):
    """Result of :func:`check_outputs`.

    ``rates``: one row per (group, system, flag): ``n`` rows checked, ``count`` flagged, ``rate`` and its Wilson
    interval ``ci_low``/``ci_high`` at ``level`` (segments treated as independent). ``group_rates``: the same per
    group over every system. ``effects``: one row per (group, flag, metric) with flagged rows: ``n_flagged``,
    ``mean_flagged``, ``n_unflagged``, ``mean_unflagged``, ``difference`` (flagged - unflagged) and its Welch
    t interval (NaN with fewer than 2 rows on a side; for ``off_target`` both sides are rows whose language was
    checked, as in its rates). ``flags``: the per-row table (the input's key columns, one
    boolean column per flag checked, ``length_z``, ``src_chrf``, ``hyp_lang``, ``langid_checked``); left out of
    ``to_dict()``. ``checked``/``skipped``: the flags computed and those left out (``notes`` say why).
    """

    rates: pd.DataFrame
    group_rates: pd.DataFrame
    effects: pd.DataFrame
    flags: pd.DataFrame = field(repr=False, metadata={"dump": False})
    by: tuple[str, ...] = ()
    system: str | None = None
    metrics: tuple[str, ...] = ()
    checked: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    identifier: str | None = None
    near_copy: float = 70.0
    length_z: float = 3.5
    truncated_z: float = 2.0
    min_letters: int = 20
    level: float = 0.95
    method: str = "Wilson score interval (rates); Welch t interval (differences of means)"
    notes: tuple[str, ...] = ()

    _dump_order = ("by", "system", "metrics", "checked", "skipped", "identifier", ...)

    def invalid(self, flags: Sequence[str] = F.INVALID_FLAGS) -> np.ndarray:
        """Boolean per row of the input: any of ``flags`` (among those checked) is set."""
        table = self.flags
        present = [f for f in flags if f in table.columns]
        if not present:
            return np.zeros(len(table), dtype=bool)
        return table[present].to_numpy(dtype=bool).any(axis=1)


@dataclass(frozen=True, eq=False)
class Exclusion(Result):
    """What :func:`exclude_invalid` removed: ``n_rows`` in, ``n_excluded``, ``flags`` used, ``counts`` per flag
    (a row may carry several), and ``by_group`` (group label -> rows excluded)."""

    n_rows: int
    n_excluded: int
    flags: tuple[str, ...]
    counts: dict[str, int]
    by_group: dict[str, int]
    notes: tuple[str, ...] = ()
    #: (group label, system) whose every row was excluded: the system is gone from that group
    emptied: tuple[tuple[str, str], ...] = ()

    def sentence(self) -> str:
        """One line for users: how many rows were left out and for which flags, and which systems lost every
        row (they are missing from what follows, not scored as empty)."""
        if self.n_excluded == 0:
            return f"excluded no rows: none of {self.n_rows} is flagged ({', '.join(self.flags)})"
        parts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        gone = ""
        if self.emptied:
            shown = ", ".join(f"{visible_controls(system)!r} in {visible_controls(group)}"
                              for group, system in self.emptied[:5])
            more = f" and {len(self.emptied) - 5} more" if len(self.emptied) > 5 else ""
            gone = (f"; every row of system {shown}{more} was flagged: that system is left out there, not ranked "
                    "(check its outputs)")
        return (f"excluded {self.n_excluded} of {self.n_rows} rows flagged invalid by the output checks "
                f"({parts}; see docs/output-checks.md){gone}")


def wilson_interval(count: np.ndarray, n: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for binomial proportions count/n (Wilson 1927; NaN where n = 0)."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    count = np.asarray(count, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = count / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    # the exact bounds at the ends (0 when nothing is flagged, 1 when everything is): centre - half rounds to
    # about 1e-18 there, an interval that would leave out its own rate
    return np.where((count == 0) & (n > 0), 0.0, low), np.where((count == n) & (n > 0), 1.0, high)


def _columns_present(frame: pd.DataFrame, hypothesis: str, source: str, reference: str) -> dict[str, bool]:
    return {"source": source in frame.columns, "reference": reference in frame.columns,
            "source|reference": source in frame.columns or reference in frame.columns,
            "tgt_lang": "tgt_lang" in frame.columns or "lp" in frame.columns}


def _choose_flags(flags: str | Sequence[str], present: dict[str, bool], langid: str | None,
                  source: str, reference: str) -> tuple[list[str], list[str]]:
    """The flags to compute and the notes about those left out; an explicitly requested flag whose
    column is missing is refused."""
    auto = isinstance(flags, str) and flags == "auto"
    wanted = list(F.FLAGS) if auto else ([flags] if isinstance(flags, str) else list(flags))
    unknown = [f for f in wanted if f not in F.FLAGS]
    if unknown:
        raise InputError(f"flags={unknown[0]!r}: unknown output check; use some of {', '.join(F.FLAGS)} or 'auto'",
                         argument="flags", value=unknown[0])
    names = {"source": f"source column {source!r}", "reference": f"reference column {reference!r}",
             "source|reference": f"source or reference column ({source!r}, {reference!r})",
             "tgt_lang": "target-language column ('tgt_lang', or 'lp' as SRC-TGT)"}
    chosen, notes = [], []
    for flag in wanted:
        if flag == "off_target" and langid is None:
            if not auto:
                raise InputError("flags='off_target' needs a language identifier: give langid='py3langid' (extra "
                                 "'langid'), or leave the flag out", argument="langid", value=None)
            notes.append("off_target not checked: no language identifier (langid='none')")
            continue
        missing = [need for need in _NEEDS.get(flag, ()) if not present[need]]
        if missing:
            what = names[missing[0]]
            if not auto:
                raise InputError(f"flags={flag!r} needs the {what}, which the table does not have; add it (map "
                                 "one with columns=) or leave the flag out", argument="flags", value=flag)
            notes.append(f"{flag} not checked: the table has no {what}")
            continue
        chosen.append(flag)
    return chosen, notes


def _check_numbers(near_copy: float, length_z: float, truncated_z: float, min_letters: int) -> None:
    for name, value, low, high in (("near_copy", near_copy, 0, 100), ("length_z", length_z, 0, math.inf),
                                   ("truncated_z", truncated_z, 0, math.inf),
                                   ("min_letters", min_letters, 0, math.inf)):
        if not isinstance(value, (int, float)) or not (low < value <= high if name != "min_letters" else low <= value):
            raise InputError(f"{name}={value!r}: expected a number in ({low}, {high}]", argument=name, value=value)


@dataclass(frozen=True)
class FlagThresholds:
    """Where the flags of :func:`check_outputs` start (:mod:`xleval.output_checks._flags`): ``near_copy``,
    chrF(hypothesis, source) from which an output is a near copy of its source (0-100]; ``length_z`` and
    ``truncated_z``, the robust z of the length ratio beyond which a length is extreme, or below whose negative
    an output looks truncated; ``min_letters``, the letters an output needs for its language to be checked.
    Checked when built; ``with_(...)`` changes some thresholds."""

    near_copy: float = 70.0
    length_z: float = 3.5
    truncated_z: float = 2.0
    min_letters: int = 20

    def __post_init__(self) -> None:
        _check_numbers(self.near_copy, self.length_z, self.truncated_z, self.min_letters)

    def with_(self, **changes: Any) -> FlagThresholds:
        """These thresholds with some changed."""
        return replace(self, **changes)


#: the flags' documented defaults
DEFAULT_THRESHOLDS = FlagThresholds()


def flag_outputs(data: pd.DataFrame, *, hypothesis: str = "hypothesis", source: str = "source",
                 reference: str = "reference", by: str | Sequence[str] | None = None,
                 flags: str | Sequence[str] = "auto",
                 langid: str | None = "auto", thresholds: FlagThresholds = DEFAULT_THRESHOLDS,
                 ) -> tuple[pd.DataFrame, list[str], list[str], str | None]:
    """Per-row flags (see :mod:`xleval.output_checks._flags` for their definitions).

    Returns ``(table, checked, notes, identifier)``: ``table`` has one row per input row (same order) with
    one boolean column per flag checked plus ``length_z``, ``src_chrf``, ``hyp_lang`` and ``langid_checked``.
    ``thresholds`` (:class:`FlagThresholds`): where the flags start.
    """
    require_columns(data, [hypothesis], what="data", argument="hypothesis")
    by = default_by(data.columns) if by is None else by  # the one default (DEFAULT_BY)
    by_cols = (by,) if isinstance(by, str) else tuple(by)
    langid, missing_note = resolve_identifier(langid)
    chosen, notes = _choose_flags(flags, _columns_present(data, hypothesis, source, reference), langid, source,
                                  reference)
    if missing_note is not None and "off_target" not in chosen:
        notes = [missing_note if n.startswith("off_target") else n for n in notes]
    frame = data
    if "off_target" in chosen or any(c in ("lp", "src_lang", "tgt_lang") and c not in data.columns for c in by_cols):
        from ..io.langs import add_language_columns  # lazily: the language tables load only when needed

        frame = add_language_columns(data, "data")
    require_columns(frame, list(by_cols), what="data", argument="by")
    n = len(frame)
    hyp = F.text_column(frame[hypothesis])
    src = F.text_column(frame[source]) if source in frame.columns else None
    ref = F.text_column(frame[reference]) if reference in frame.columns else None
    out: dict[str, Any] = {}
    # empty: nothing a reader sees (spaces, zero-width and other invisible or control characters only)
    empty = np.array([not CONTROL_CHARACTERS.sub("", h).strip() for h in hyp], dtype=bool)
    norm_h = F.normalised(hyp)
    src_chrf = np.full(n, np.nan)
    if "empty" in chosen:
        out["empty"] = empty
    if src is not None and ("copy_source" in chosen):
        out["copy_source"], src_chrf = _copied_source(hyp, norm_h, src, ref, empty, thresholds.near_copy)
    if ref is not None and "identical_reference" in chosen:
        out["identical_reference"] = (norm_h == F.normalised(ref)) & (norm_h != "")
    codes = group_index(frame[list(by_cols)], names=list(by_cols), where="data").codes
    z = np.full(n, np.nan)
    if {"extreme_length", "truncated"} & set(chosen):
        z = _length_flags(hyp, src, ref, empty, codes, chosen, thresholds, out)
    hyp_lang, checked_lang, identifier = np.full(n, None, dtype=object), np.zeros(n, dtype=bool), None
    if "off_target" in chosen:
        ident = LanguageIdentifier(langid or "py3langid")
        identifier = ident.version
        out["off_target"], hyp_lang, checked_lang = _off_target(ident, frame["tgt_lang"].astype(str).to_numpy(), hyp,
                                                                ref, thresholds.min_letters)
        notes.append(f"off_target checked on {int(checked_lang.sum())} of {n} rows (at least "
                     f"{thresholds.min_letters} letters"
                     + (", and the reference, where the row has one, identified as the target language)"
                        if ref is not None else ")"))
    table = frame[[c for c in dict.fromkeys([*by_cols, *_keys(frame)]) if c in frame.columns]].reset_index(drop=True)
    table = table.assign(**{f: out[f] for f in F.FLAGS if f in out}, length_z=z, src_chrf=src_chrf,
                         hyp_lang=hyp_lang, langid_checked=checked_lang)
    return table, [f for f in F.FLAGS if f in out], notes, identifier


def _copied_source(hyp: list[str], norm_h: np.ndarray, src: list[str], ref: list[str] | None, empty: np.ndarray,
                   near_copy: float) -> tuple[np.ndarray, np.ndarray]:
    """``copy_source`` per row (the source itself, or chrF to it at least ``near_copy`` and closer to it than to
    the reference; never where the reference copies the source too) and each row's chrF to its source."""
    norm_s = F.normalised(src)
    src_chrf = F.chrf_to(hyp, src)
    near = (src_chrf >= near_copy) & ~empty
    if ref is not None:  # a near copy is closer to the source than to the reference (names, headlines are not)
        near &= src_chrf > F.chrf_to(hyp, ref)
    copied = ((norm_h == norm_s) & (norm_h != "")) | near
    if ref is not None:
        ref_is_copy = (F.normalised(ref) == norm_s) | (F.chrf_to(ref, src) >= F.REFERENCE_COPY)
        copied &= ~ref_is_copy
    return copied, src_chrf


def _length_flags(hyp: list[str], src: list[str] | None, ref: list[str] | None, empty: np.ndarray, codes: np.ndarray,
                  chosen: Sequence[str], thresholds: FlagThresholds, out: dict[str, Any]) -> np.ndarray:
    """``extreme_length`` and ``truncated`` (into ``out``, as ``chosen``) from the robust z of the log length
    ratio to the reference (else the source) within each group; returns the z."""
    base = ref if ref is not None else src
    assert base is not None  # _choose_flags kept these flags only with a source or reference
    base_len = F.length_units(base)
    if ref is not None and src is not None and (base_len == 0).any():
        # a row without its reference (a missing cell, a table of references for some rows only) is measured
        # against its source, as a table without references is; its ratio is on another scale (source and
        # target lengths differ by language), so those rows get their own median and spread within the group
        no_ref = base_len == 0
        base_len = np.where(no_ref, F.length_units(src), base_len)
        codes = codes * 2 + no_ref
    ratio = np.log((F.length_units(hyp) + 1) / (base_len + 1))
    ratio[empty | (base_len == 0)] = np.nan
    z = F.robust_z(ratio, codes)
    if "extreme_length" in chosen:
        out["extreme_length"] = np.abs(np.nan_to_num(z, nan=0.0)) > thresholds.length_z
    if "truncated" in chosen and src is not None:
        cut = np.array([F.ends_mid_sentence(h) and not F.ends_mid_sentence(s)
                        for h, s in zip(hyp, src, strict=True)], dtype=bool)
        out["truncated"] = cut & ~empty & (np.nan_to_num(z, nan=0.0) < -thresholds.truncated_z)
    return z


def _off_target(ident: Any, targets: np.ndarray, hyp: list[str], ref: list[str] | None,
                min_letters: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(off_target, hyp_lang, checked)`` per row: checked where the output has ``min_letters`` letters and the
    row's reference (where it has one) is identified as the target language; off target where the output's
    language is not accepted for the target."""
    ident.check_known(sorted(set(targets)), column="tgt_lang")
    n = len(hyp)
    checked = (F.letter_count(hyp) >= min_letters)
    if ref is not None:
        # only a row with a reference text can have it identified; a row without one (a missing cell) is checked
        # as in a table without references, not left out (an empty reference is identified as some language)
        rows = np.flatnonzero(checked & np.array([bool(r.strip()) for r in ref], dtype=bool))
        ref_lang = ident.identify([ref[i] for i in rows])
        checked[rows[~_accepted(targets[rows], ref_lang)]] = False
    rows = np.flatnonzero(checked)
    hyp_lang = np.full(n, None, dtype=object)
    hyp_lang[rows] = ident.identify([hyp[i] for i in rows])
    off = np.zeros(n, dtype=bool)
    off[rows] = ~_accepted(targets[rows], hyp_lang[rows])
    return off, hyp_lang, checked


def _accepted(targets: np.ndarray, labels: np.ndarray) -> np.ndarray:
    from ._langid import accepts

    return np.array([accepts(t, lab) for t, lab in zip(targets, labels, strict=True)], dtype=bool)


def _keys(frame: pd.DataFrame) -> list[str]:
    return [c for c in ("lp", "src_lang", "tgt_lang", "system", "seg_id") if c in frame.columns]


def check_outputs(data: pd.DataFrame, *, hypothesis: str = "hypothesis", source: str = "source",
                  reference: str = "reference", by: str | Sequence[str] | None = None, system: str | None = "system",
                  metrics: Sequence[str] = (), flags: str | Sequence[str] = "auto", langid: str | None = "auto",
                  thresholds: FlagThresholds = DEFAULT_THRESHOLDS, level: float = 0.95) -> OutputChecks:
    """Flag every row (:func:`flag_outputs`), then rate each flag per (group, system) with a Wilson interval
    and compare each metric column's mean on flagged and unflagged rows per group (Welch t interval).

    ``metrics``: numeric columns of ``data`` (e.g. ``("chrf", "bleu", "comet")``); ``system=None`` or a
    missing ``"system"`` column: each group is one system. ``thresholds`` (:class:`FlagThresholds`): where the
    flags start. No randomness: the intervals are closed-form.
    """
    near_copy, length_z = thresholds.near_copy, thresholds.length_z
    truncated_z, min_letters = thresholds.truncated_z, thresholds.min_letters
    if not 0 < level < 1:
        raise InputError(f"level={level!r}: expected a confidence level in (0, 1), e.g. 0.95", argument="level",
                         value=level)
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    require_columns(data, list(metrics), what="data", argument="metrics")
    values = {m: numeric_column(data, m, what="data", argument="metrics") for m in metrics}
    for m, v in values.items():  # every effect would be missing (a table of dashes, 'flagged n 0')
        require_some_value(v, m, kind="metric", argument="metrics",
                           fix="name a column with scores, or leave it out of metrics=")
    by = default_by(data.columns) if by is None else by  # the one default (DEFAULT_BY)
    table, checked, notes, identifier = flag_outputs(
        data, hypothesis=hypothesis, source=source, reference=reference, by=by, flags=flags, langid=langid,
        thresholds=thresholds)
    by_cols = (by,) if isinstance(by, str) else tuple(by)
    sys_col = system if system is not None and system in data.columns else None
    if system is not None and system != "system" and sys_col is None:
        require_columns(data, [system], what="data", argument="system")
    if sys_col is not None and sys_col not in table.columns:
        table[sys_col] = data[sys_col].to_numpy()
    # a system column that is also a group column is one key (--by system would name it twice)
    rates = _rates(table, checked, list(dict.fromkeys([*by_cols, *([sys_col] if sys_col else [])])), level)
    group_rates = _rates(table, checked, list(by_cols), level)
    effects = _effects(table, checked, list(by_cols), values, level)
    if sys_col is not None and "identical_reference" in checked:
        notes = [*notes, *_reference_copy_notes(data, by_cols, sys_col, hypothesis, reference)]
    return OutputChecks(rates=rates, group_rates=group_rates, effects=effects, flags=table, by=by_cols,
                        system=sys_col, metrics=metrics, checked=tuple(checked),
                        skipped=tuple(f for f in F.FLAGS if f not in checked), identifier=identifier,
                        near_copy=float(near_copy), length_z=float(length_z), truncated_z=float(truncated_z),
                        min_letters=int(min_letters), level=float(level), notes=tuple(notes))


def _reference_copy_notes(data: pd.DataFrame, by_cols: tuple[str, ...], system: str, hypothesis: str,
                          reference: str) -> list[str]:
    """A note naming the systems that are copies of the reference (:func:`reference_copies`, the rule every
    command uses): the rates show one only as an identical_reference rate, and the commands that fit or rank
    leave it out, so the check that looks at outputs says so too."""
    from ._copies import reference_copies

    found = reference_copies(data, by=list(by_cols), system=system, hypothesis=hypothesis, reference=reference)
    if not found.copies:
        return []
    cells = found.cells.set_index(["group", system])
    named = ", ".join(f"{s!r} in {visible_controls(str(g))} ({100 * cells.loc[(g, s), 'share']:.1f}% of "
                      f"{int(cells.loc[(g, s), 'n'])} rows)" for g, s in sorted(found.copies))  # not in row order
    return [f"{len(found.copies)} system(s) equal the reference on most rows (copies of the reference, "
            f"docs/output-checks.md): {named}; checked here like every system, and left out of fitting, label "
            "selection, rankings and meta-evaluation unless those are told to keep them (docs/output-checks.md)"]


def _in_order(keys: Sequence[tuple[Any, ...]]) -> list[int]:
    """The groups' positions sorted by their key values (numbers by value, before texts): the tables come out
    in one order whatever the order of the input's rows (the group index numbers groups as they first appear)."""
    def number(v: Any) -> bool:
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)

    def sort_key(key: tuple[Any, ...]) -> tuple[tuple[int, float, str], ...]:
        return tuple((0, float(v), "") if number(v) else (1, 0.0, str(v)) for v in key)

    return sorted(range(len(keys)), key=lambda g: sort_key(keys[g]))


def _rates(table: pd.DataFrame, checked: list[str], keys: list[str], level: float) -> pd.DataFrame:
    index = group_index(table[keys], names=keys, where="data")
    rows = []
    for flag in checked:
        mask = table[flag].to_numpy(dtype=bool)
        eligible = table["langid_checked"].to_numpy(dtype=bool) if flag == "off_target" else np.ones(len(table), bool)
        n = np.bincount(index.codes, weights=eligible, minlength=index.n_groups)
        count = np.bincount(index.codes, weights=mask, minlength=index.n_groups)
        low, high = wilson_interval(count, n, level)
        for g in _in_order(index.keys):
            key = index.keys[g]
            rows.append({**dict(zip(keys, key, strict=True)), "flag": flag, "n": int(n[g]), "count": int(count[g]),
                         "rate": count[g] / n[g] if n[g] else math.nan, "ci_low": low[g], "ci_high": high[g]})
    columns = [*keys, "flag", "n", "count", "rate", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def _effects(table: pd.DataFrame, checked: list[str], keys: list[str], values: dict[str, np.ndarray],
             level: float) -> pd.DataFrame:
    from scipy.stats import t as student_t

    index = group_index(table[keys], names=keys, where="data")
    rows = []
    for flag in checked:
        mask = table[flag].to_numpy(dtype=bool)
        # off_target compares the rows whose language was checked, as its rates count them: a row too short to
        # identify is neither flagged nor known to be on target, and short rows score differently
        eligible = table["langid_checked"].to_numpy(dtype=bool) if flag == "off_target" else np.ones(len(table), bool)
        for g in _in_order(index.keys):
            key, in_group = index.keys[g], (index.codes == g) & eligible
            if not (mask & in_group).any():
                continue
            for metric, x in values.items():
                a, b = x[mask & in_group], x[~mask & in_group]
                # sorted: a sum in a fixed order, so the numbers do not depend on the order of the input rows
                a, b = np.sort(a[np.isfinite(a)]), np.sort(b[np.isfinite(b)])
                diff = (a.mean() if a.size else math.nan) - (b.mean() if b.size else math.nan)
                low = high = math.nan
                if a.size >= 2 and b.size >= 2:
                    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
                    se = math.sqrt(va + vb)
                    if se > 0:
                        df = (va + vb) ** 2 / (va * va / (a.size - 1) + vb * vb / (b.size - 1))
                        half = float(student_t.ppf(0.5 + level / 2, df)) * se
                        low, high = diff - half, diff + half
                    else:
                        low = high = diff
                rows.append({**dict(zip(keys, key, strict=True)), "flag": flag, "metric": metric,
                             "n_flagged": int(a.size), "mean_flagged": a.mean() if a.size else math.nan,
                             "n_unflagged": int(b.size), "mean_unflagged": b.mean() if b.size else math.nan,
                             "difference": diff, "ci_low": low, "ci_high": high})
    columns = [*keys, "flag", "metric", "n_flagged", "mean_flagged", "n_unflagged", "mean_unflagged", "difference",
               "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=columns)


def exclude_invalid(data: pd.DataFrame, *, invalid: Sequence[str] = F.INVALID_FLAGS,
                    by: str | Sequence[str] | None = None,
                    hypothesis: str = "hypothesis", source: str = "source", reference: str = "reference",
                    langid: str | None = "auto", system: str = "system",
                    **options: Any) -> tuple[pd.DataFrame, Exclusion]:
    """``data`` without the rows that any of ``invalid`` flags (those that can be checked on this table), and
    what was excluded; ``system``: the system column, whose systems that lose every row of a group are named.
    Used by ``calibrate fit --exclude-invalid`` and ``leaderboard --exclude-invalid``."""
    invalid = tuple(invalid)
    unknown = [f for f in invalid if f not in F.FLAGS]
    if unknown:
        raise InputError(f"invalid={unknown[0]!r}: unknown output check; use some of {', '.join(F.FLAGS)}",
                         argument="invalid", value=unknown[0])
    by = default_by(data.columns) if by is None else by  # the one default (DEFAULT_BY)
    table, checked, notes, _ = flag_outputs(data, hypothesis=hypothesis, source=source, reference=reference, by=by,
                                            langid=langid, **options)
    used = tuple(f for f in invalid if f in checked)
    mask = table[list(used)].to_numpy(dtype=bool).any(axis=1) if used else np.zeros(len(table), dtype=bool)
    by_cols = [by] if isinstance(by, str) else list(by)
    index = group_index(table[by_cols], names=by_cols, where="data")
    per_group = np.bincount(index.codes, weights=mask, minlength=index.n_groups)
    emptied: list[tuple[str, str]] = []
    if system in data.columns and mask.any():  # any system column (--system model), not only one named 'system'
        labels = np.asarray(index.labels(), dtype=object)[index.codes]
        pairs = pd.DataFrame({"group": labels.astype(str), "system": data[system].astype(str).to_numpy(),
                              "out": mask})
        every = pairs.groupby(["group", "system"], sort=True)["out"].all()
        emptied = [(str(g), str(sy)) for (g, sy), gone in every.items() if gone]
    summary = Exclusion(n_rows=len(table), n_excluded=int(mask.sum()), flags=used,
                        counts={f: int(table[f].sum()) for f in used},
                        by_group={label: int(c) for label, c in sorted(zip(index.labels(), per_group, strict=True),
                                                                      key=lambda lc: str(lc[0])) if c},
                        notes=tuple(n for n in notes if n.split(" ")[0] in invalid), emptied=tuple(emptied))
    return data.loc[~mask], summary
