"""Bias diagnosis: is a metric's score distribution shifted by language (LGN's guide: verification and bias step)?

Per group n, mean, std, median, IQR; the standard deviation of the group means (the guide's
number, ddof=1); eta squared with a stratified bootstrap CI; Kruskal-Wallis; the largest
standardised mean difference (Cohen's d with the pair's pooled sd) and the guide's decision rule:
a difference above ``threshold`` pooled sd (default 0.5) advises calibration.
"""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._base.numbers import format_column, format_number
from .._base.result import Result
from ..exceptions import InputError, warn_again
from ..stats import Estimate, TestResult, cohens_d, eta_squared, kruskal_wallis
from ..table import DEFAULT_BY, EvalTable, as_table, require_some_value
from ._common import finite_rows

__all__ = ["BiasDiagnosis", "BiasComparison", "diagnose_bias", "compare_bias", "one_group_error", "DEFAULT_THRESHOLD"]

DEFAULT_THRESHOLD = 0.5  # pooled sd; LGN's guide, bias step


@dataclass(frozen=True, eq=False)
class BiasDiagnosis(Result):
    """How much a score differs by group.

    Fields: ``score`` and ``by`` (column names); ``groups`` (DataFrame, one row per group, sorted by
    label: ``group, n, mean, std, median, q1, q3, iqr``; std with ddof=1); ``n`` rows used (for a score
    constant within each system of a group, a system-level score repeated on its rows: systems) and
    ``n_excluded`` rows without a finite score; ``sd_of_means`` (ddof=1, the guide's verification number);
    ``eta_squared`` (Estimate: share of score variance explained by the groups, bootstrap CI,
    ANOVA p); ``kruskal`` (TestResult, effect_size = epsilon squared); ``largest_smd`` (Estimate:
    Cohen's d of ``largest_smd_pair`` = (higher group, lower group), always >= 0);
    ``threshold``; ``calibration_advised`` and its ``reasons`` (sentences); ``notes``.
    """

    score: str
    by: str
    groups: pd.DataFrame
    n: int
    n_excluded: int
    sd_of_means: float
    eta_squared: Estimate
    kruskal: TestResult
    largest_smd: Estimate | None
    largest_smd_pair: tuple[str, str] | None
    threshold: float
    calibration_advised: bool
    reasons: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True, eq=False)
class BiasComparison(Result):
    """The same diagnosis before (raw ``score``) and after calibration (``calibrated`` column).

    ``table`` (DataFrame) puts them side by side per group: ``group, n, mean_before, mean_after,
    std_before, std_after, median_before, median_after``; ``summary`` (DataFrame) one row per
    headline statistic: ``statistic, before, after``.
    """

    before: BiasDiagnosis
    after: BiasDiagnosis
    table: pd.DataFrame
    summary: pd.DataFrame


def diagnose_bias(data: EvalTable | pd.DataFrame, score: str | None = None, by: str | list[str] | None = None, *,
                  threshold: float = DEFAULT_THRESHOLD, n_resamples: int = 1000, level: float = 0.95,
                  random_state: Any = 0) -> BiasDiagnosis:
    """Diagnose language bias of ``score`` in a long table grouped by ``by``.

    ``data`` is an :class:`~xleval.table.EvalTable` or a frame; ``score``/``by`` default to the table's
    roles (a frame: ``by`` is :data:`~xleval.table.DEFAULT_BY`, ``lp`` given or derived, else ``tgt_lang``).
    Rows without a finite score are left out (counted in ``notes``,
    DataQualityWarning).
    """
    if not np.isfinite(threshold) or threshold <= 0:
        raise InputError(f"threshold={threshold!r}: the threshold must be a positive number of pooled sd (e.g. 0.5)",
                         argument="threshold", value=threshold)
    # the bootstrap draws rows by position: in the canonical order, a re-sorted table gives the same interval
    table = as_table(data, score=score, by=by, default_by=DEFAULT_BY).in_canonical_order()
    score = table.score_column
    labels = table.row_labels()
    x = table.scores(score)  # repeated keys whose scores differ are said (each row counts as a segment)
    notes: list[str] = []
    require_some_value(x, score, kind="score", argument="score")  # not 'group by another column': no grouping helps
    keep = finite_rows(x, f"score {score!r}", notes)
    x, labels = x[keep], labels[keep]
    x, labels = _system_level_rows(table, x, labels, keep, score, notes)
    # every statistic here is a function of each group's values alone; the bootstrap draws by position, so the
    # rows are put in (group, value) order: rows the canonical order leaves tied (a table without system or
    # segment columns, repeated keys) can come in any order without moving the interval
    order = np.lexsort((x, labels.astype(str)))
    x, labels = x[order], labels[order]
    groups = _group_table(x, labels)
    if len(groups) < 2:
        raise one_group_error(list(groups["group"]), table.by, _other_grouping(table.frame, table.by))
    eta = eta_squared(x, labels, level=level, n_resamples=n_resamples, random_state=random_state)
    kw = kruskal_wallis(x, labels)
    smd, pair = _largest_smd(x, labels, groups, level, notes)
    advised, reasons = _decide(groups, smd, pair, eta, kw, threshold)
    by_name = "+".join(table.by)
    sd_means = float(groups["mean"].std(ddof=1))
    return BiasDiagnosis(score, by_name, groups, len(x), int((~keep).sum()), sd_means, eta, kw, smd, pair,
                         float(threshold), advised, tuple(reasons), tuple(notes))


def _system_level_rows(table: EvalTable, x: np.ndarray, labels: np.ndarray, keep: np.ndarray, score: str,
                       notes: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A system-level score repeated on each of its system's rows (a corpus BLEU joined onto segments) as one
    value per (group, system): its rows are copies, not observations, and counting them would narrow every
    interval and test by the number of segments. The rows as given otherwise (a segment-level score)."""
    system = table.system or ("system" if "system" in table.frame.columns else None)
    if system is None or len(x) == 0:
        return x, labels
    systems = table.column_labels(system, allow_missing=True)[keep]
    cells = pd.DataFrame({"g": labels, "s": systems, "x": x}).groupby(["g", "s"], sort=True, dropna=False)["x"]
    sizes = cells.size()
    if sizes.max() < 2 or (cells.nunique(dropna=False) > 1).any():
        return x, labels
    first = cells.first()
    notes.append(f"score {score!r} is constant within each system of a group (a system-level score repeated on its "
                 f"{len(x)} rows): diagnosed on its {len(first)} (group, system) values, so n, the tests and the "
                 "intervals count systems, not copies")
    return first.to_numpy(dtype=float), first.index.get_level_values("g").to_numpy(dtype=object)


def one_group_error(groups: list, by, instead: str | None = None) -> InputError:
    """The one message for a table of fewer than two groups where groups are compared (bias, calibration
    across groups): there is no cross-group question; a ranking of one group needs no calibration.
    ``instead``: a language column of the table with several values (to-English data grouped by
    ``tgt_lang`` has one group; ``lp`` has several), named in the fix."""
    by_name = "+".join(by) if isinstance(by, (list, tuple)) else str(by)
    found = f"one group ({groups[0]!r})" if len(groups) == 1 else "no group with finite scores"
    fix = f"group by {instead!r} (by={instead!r}), which has several values" if instead else \
        "group by a column with several values (by=)"
    return InputError(f"{by_name!r} has {found}: there is no cross-group question (bias between groups, "
                      f"calibration across them), which needs two groups; {fix} (a leaderboard of one group ranks "
                      "its systems on the raw scores)", argument="by",
                      value=list(by) if isinstance(by, (list, tuple)) else by)


def _other_grouping(frame: pd.DataFrame, by) -> str | None:
    """A language column (lp, tgt_lang, src_lang) not in ``by`` with two or more values, if the table has one."""
    used = set(by) if isinstance(by, (list, tuple)) else {by}
    for column in ("lp", "tgt_lang", "src_lang"):
        if column not in used and column in frame.columns and frame[column].nunique(dropna=True) >= 2:
            return column
    return None


def compare_bias(data: EvalTable | pd.DataFrame, score: str | None, calibrated: str,
                 by: str | list[str] | None = None, *, before: BiasDiagnosis | None = None,
                 **kwargs: Any) -> BiasComparison:
    """:func:`diagnose_bias` of the raw and the calibrated column, side by side. ``before``: the raw
    score's diagnosis when already made (with the same settings), so it is not computed again."""
    table = as_table(data, score=score, by=by, default_by=DEFAULT_BY)
    if before is None:
        before = diagnose_bias(table, **kwargs)
    mapped = table.with_roles(score=calibrated)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        after = diagnose_bias(mapped, **kwargs)
    # a calibrated column without a value exactly where its score has none: those rows are said of the score already
    same = np.array_equal(np.isfinite(table.scores()), np.isfinite(mapped.scores()))
    said = f"score {calibrated!r}: " if same else None
    warn_again([w for w in caught if said is None or not (str(w.message).startswith(said)
                                                          and "have no finite value" in str(w.message))])
    b, a = before.groups.set_index("group"), after.groups.set_index("group")
    table = pd.DataFrame({"n": b["n"], "mean_before": b["mean"], "mean_after": a["mean"], "std_before": b["std"],
                          "std_after": a["std"], "median_before": b["median"], "median_after": a["median"]})
    table = table.reset_index().rename(columns={"index": "group"})
    rows = [("sd_of_means", before.sd_of_means, after.sd_of_means),
            ("eta_squared", before.eta_squared.estimate, after.eta_squared.estimate),
            ("kruskal_epsilon_squared", before.kruskal.effect_size, after.kruskal.effect_size),
            ("largest_smd", _est(before.largest_smd), _est(after.largest_smd)),
            ("calibration_advised", before.calibration_advised, after.calibration_advised)]
    summary = pd.DataFrame(rows, columns=["statistic", "before", "after"])
    return BiasComparison(before, after, table, summary)


def _est(e: Estimate | None) -> float:
    return float("nan") if e is None else e.estimate


def _group_table(x: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
    frame = pd.DataFrame({"group": labels, "x": x})
    g = frame.groupby("group", sort=True)["x"]
    table = pd.DataFrame({"n": g.size(), "mean": g.mean(), "std": g.std(ddof=1), "median": g.median(),
                          "q1": g.quantile(0.25), "q3": g.quantile(0.75)})
    table["iqr"] = table["q3"] - table["q1"]
    return table.reset_index()


def _largest_smd(x: np.ndarray, labels: np.ndarray, groups: pd.DataFrame, level: float,
                 notes: list[str]) -> tuple[Estimate | None, tuple[str, str] | None]:
    """Cohen's d of the pair of groups (each >= 2 rows) whose means differ most in pooled-sd units."""
    usable = groups[groups["n"] >= 2]
    small = groups.loc[groups["n"] < 2, "group"].tolist()
    if small:
        notes.append(f"group(s) {small} have fewer than 2 rows: left out of the standardised differences")
    best, pair = -1.0, None
    for (_, gi), (_, gj) in itertools.combinations(usable.iterrows(), 2):
        ni, nj = gi["n"], gj["n"]
        pooled = np.sqrt(((ni - 1) * gi["std"] ** 2 + (nj - 1) * gj["std"] ** 2) / (ni + nj - 2))
        d = abs(gi["mean"] - gj["mean"]) / pooled if pooled > 0 else np.nan
        if np.isfinite(d) and d > best:
            best, pair = d, ((gi["group"], gj["group"]) if gi["mean"] >= gj["mean"] else (gj["group"], gi["group"]))
    if pair is None:
        notes.append("no pair of groups with a non-zero pooled sd: standardised differences undefined")
        return None, None
    return cohens_d(x[labels == pair[0]], x[labels == pair[1]], level=level), (str(pair[0]), str(pair[1]))


#: the bias rule's reminder where no human scores were given (a diagnosis given them leaves it out: it checks them)
REAL_QUALITY_HINT = "a score gap may be real quality, not bias"


def _decide(groups: pd.DataFrame, smd: Estimate | None, pair: tuple[str, str] | None, eta: Estimate,
            kw: TestResult, threshold: float) -> tuple[bool, list[str]]:
    """The guide's rule (bias step) with the numbers that support it."""
    reasons: list[str] = []
    lo, hi = groups.loc[groups["mean"].idxmin()], groups.loc[groups["mean"].idxmax()]
    reasons.append(f"group means range from {lo['mean']:.4g} ({lo['group']}) to {hi['mean']:.4g} ({hi['group']}); "
                   f"sd of group means {groups['mean'].std(ddof=1):.4g}")
    if smd is None or pair is None:  # both or neither
        reasons.append("scores have no spread within groups; the rule cannot be applied")
        return False, reasons
    advised = smd.estimate > threshold
    cmp = ">" if advised else "<="
    d, low, high = format_column([smd.estimate, smd.ci_low, smd.ci_high])  # one precision for the three
    reasons.append(f"largest standardised difference: {pair[0]} vs {pair[1]}, d = {d} (CI {low} to {high}) {cmp} "
                   f"{threshold:g} pooled sd")
    if np.isfinite(eta.estimate):
        reasons.append(f"language explains {100 * eta.estimate:.1f}% of score variance "
                       f"(eta squared CI {100 * eta.ci_low:.1f}% to {100 * eta.ci_high:.1f}%)")
    if np.isfinite(kw.p_value):
        # the p-value as computed (the JSON and the report keep it; text renderers write "p < 0.001")
        reasons.append(f"Kruskal-Wallis H = {format_number(kw.statistic)}, p = {kw.p_value:.3g}")
    reasons.append("the groups' scores differ beyond the rule: "
                   "comparisons across groups need calibration" if advised else
                   "no calibration needed by the 0.5-sd rule" if threshold == DEFAULT_THRESHOLD else
                   f"no calibration needed by the {threshold:g}-sd rule")
    if advised:
        reasons.append(f"{REAL_QUALITY_HINT}: check it against human scores (human=) before trusting LGN")
    return advised, reasons
