"""Which cells differ: every comparison of two (group, system) cells with the interval of its difference
and a verdict, from the same joint draws as the leaderboard's intervals and ranks.

A leaderboard cell ``i`` has a calibrated mean ``y_i`` and joint draws ``D[:, i]`` of its target (for
anchored calibration: the cell's human mean; the draws carry one slope error, one offset error per
group, one deviation and one segment-noise mean per cell and one test-set resample each,
:mod:`._cell_interval`). The difference
of two cells is ``y_a - y_b`` and its interval the percentile interval of ``D[:, a] - D[:, b]``: errors
the two cells share cancel draw by draw (within a group its offset error, in every comparison the part of
the slope error at the same distance from the labels), and an error of one group enters a comparison
across groups once, not twice as when two marginal intervals are compared. The verdict is ``A better``
when the interval lies on A's side of 0 (in the direction of the scale), ``B better`` on B's side, else
``cannot tell``. Pairs of a group with itself are ``within``; the others ``across``.

Two marginal 95% intervals that do not overlap amount to a test at about 99.4% for independent cells;
with shared errors they are further off. The pairwise interval is the test the user asks for ("is A above
B?"), at the stated level.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._base.result import Result

__all__ = ["CellPairs", "cell_pairs", "PAIR_COLUMNS", "VERDICTS"]

PAIR_COLUMNS = ("group_a", "system_a", "group_b", "system_b", "scope", "difference", "diff_low", "diff_high",
                "verdict")
VERDICTS = ("A better", "B better", "cannot tell")


@dataclass(frozen=True, eq=False)
class CellPairs(Result):
    """Every pair of cells (:data:`PAIR_COLUMNS`; ``scope`` ``within`` a group or ``across`` groups;
    ``difference`` = A minus B on the calibrated scale, its interval ``diff_low``-``diff_high``, the
    ``verdict``). ``level``: of the intervals; ``higher_is_better``: the direction the verdicts read;
    ``target``: what the draws are draws of; ``n_draws``."""

    table: pd.DataFrame
    level: float
    higher_is_better: bool
    target: str
    n_draws: int
    notes: tuple[str, ...] = field(default=())

    _dump_extra = ("declared",)

    def declared(self) -> dict[str, float]:
        """The share of the pairs with a verdict (not ``cannot tell``): ``within``, ``across`` and ``all``
        (NaN where there are no such pairs)."""
        counts = self.counts()
        counts["all"] = (counts["within"][0] + counts["across"][0], counts["within"][1] + counts["across"][1])
        return {scope: told / n if n else float("nan") for scope, (told, n) in counts.items()}

    def counts(self) -> dict[str, tuple[int, int]]:
        """``(pairs with a verdict, pairs)`` ``within`` a group and ``across`` groups."""
        t = self.table
        out = {}
        for scope in ("within", "across"):
            sel = t[t["scope"] == scope]
            out[scope] = (int((sel["verdict"] != "cannot tell").sum()), len(sel))
        return out

    def summary(self, *, top: int = 3, named: int = 10) -> list[str]:
        """One line per pair of groups (and per group, within) where some of its cell pairs differ: how many,
        and the ``top`` clearest ("de-en vs zh-en: 12 of 64 pair(s) differ; e.g. de-en/A above zh-en/B (+3.1
        [0.4, 5.9])"); then one line for the pairs of groups where none does, naming up to ``named`` of them
        ("no verdict in the other 25 of 28 pairs of groups or groups within (4,550 pairs of cells; cannot tell
        at 95%): cs-en: within; cs-en vs de-en; ..."). With many groups most lines would be "0 of N": 31
        language pairs make 496 pairs of groups and groups within, and the decided few would be lost among
        them. The table has every pair."""
        t = self.table
        lines, quiet, quiet_cells = [], [], 0
        a, b = t["group_a"].astype(str).to_numpy(dtype=object), t["group_b"].astype(str).to_numpy(dtype=object)
        first = np.where(a <= b, a, b)  # the pair of groups in sorted order, one vectorised pass (not row by row)
        keys = pd.MultiIndex.from_arrays([first, np.where(a <= b, b, a)])
        for (g, h), sel in t.groupby(keys, sort=True):
            told = sel[sel["verdict"] != "cannot tell"]
            head = f"{g}: within" if g == h else f"{g} vs {h}"
            if not len(told):
                quiet.append(head)
                quiet_cells += len(sel)
                continue
            width = (told["diff_high"] - told["diff_low"]).to_numpy()
            z = np.abs(told["difference"].to_numpy()) / np.where(width > 0, width, np.inf)
            shown = told.iloc[np.argsort(-z, kind="stable")[:top]]
            lines.append(f"{head}: {len(told)} of {len(sel)} pair(s) differ; e.g. "
                         + "; ".join(_pair_words(r) for r in shown.itertuples(index=False)))
        if quiet:
            n = len(quiet)
            which = f"the other {n:,} of {len(lines) + n:,}" if lines else f"any of the {n:,}"
            names = "; ".join(quiet[:named]) + (f"; and {n - named:,} more" if n > named else "")
            lines.append(f"no verdict in {which} pairs of groups or groups within "
                         f"({quiet_cells:,} pair{'s' if quiet_cells != 1 else ''} of cells; cannot tell at "
                         f"{self.level:.0%}): {names}")
        return lines


def _pair_words(r) -> str:
    a, b = f"{r.group_a}/{r.system_a}", f"{r.group_b}/{r.system_b}"
    better, worse = (a, b) if r.verdict == "A better" else (b, a)
    # one number of decimals for the three, from the interval's width (3 significant digits of it): a bound near
    # 0 printed as 0.0763 beside 22.5 claims a precision the interval does not have
    width = abs(r.diff_high - r.diff_low)
    # a width at float noise (two systems a constant apart: every draw gives the same difference) is no precision
    noise = width <= 1e-9 * max(1.0, abs(r.difference)) if math.isfinite(r.difference) else False
    places = max(0, 2 - math.floor(math.log10(width))) if width > 0 and math.isfinite(width) and not noise else 3
    # a verdict's bound nearest 0 shows its first significant digit: "[0.0, 18.3]" beside "above" reads as an
    # interval that touches 0, which the verdict says it does not (0.039 prints as 0.04, and the others to match)
    near = min(abs(r.diff_low), abs(r.diff_high))  # a verdict's bounds lie on one side of 0, whichever the direction
    if r.verdict != "cannot tell" and 0 < near < math.inf and round(near, places) == 0:
        places = min(12, -math.floor(math.log10(near)))
    return (f"{better} above {worse} ({r.difference:+.{places}f} [{r.diff_low:.{places}f}, "
            f"{r.diff_high:.{places}f}])")


def share_words(told: int, n: int) -> str:
    """``"19 of 4,402 (0.4%)"``: a count and its share; a share that would round to 0% or 100% keeps a decimal."""
    share = told / n if n else float("nan")
    places = 1 if 0 < share < 0.01 or 0.99 < share < 1 else 0
    return f"{told:,} of {n:,} ({share:.{places}%})" if n else "none"


def cell_pairs(groups, systems, points, draws, *, level: float = 0.95, higher_is_better: bool = True,
               target: str = "", scope: str = "all") -> CellPairs:
    """Every pair of cells ``(a, b)``, ``a`` before ``b`` in the given order: the difference of their
    ``points`` (calibrated means), the ``level`` percentile interval of the difference of their ``draws``
    (``(n_draws, n_cells)``, joint), and the verdict (module docstring). ``scope``: ``all``, ``across``
    (pairs of different groups) or ``within``."""
    from ..stats import percentile_bounds

    groups = np.asarray(groups, dtype=object)
    systems = np.asarray(systems, dtype=object)
    points = np.asarray(points, dtype=float)
    draws = np.asarray(draws, dtype=float)
    n = len(points)
    a, b = np.triu_indices(n, k=1)
    same = groups[a] == groups[b]
    keep = {"all": np.ones(len(a), dtype=bool), "across": ~same, "within": same}[scope]
    a, b, same = a[keep], b[keep], same[keep]
    low, high = np.empty(len(a)), np.empty(len(a))
    chunk = max(1, 2_000_000 // max(len(draws), 1))
    for start in range(0, len(a), chunk):
        sl = slice(start, start + chunk)
        lo, hi = percentile_bounds(draws[:, a[sl]] - draws[:, b[sl]], level)
        low[sl], high[sl] = lo, hi
    a_wins, b_wins = (low > 0, high < 0) if higher_is_better else (high < 0, low > 0)
    verdict = np.where(a_wins, "A better", np.where(b_wins, "B better", "cannot tell"))
    table = pd.DataFrame({"group_a": groups[a], "system_a": systems[a], "group_b": groups[b],
                          "system_b": systems[b], "scope": np.where(same, "within", "across"),
                          "difference": points[a] - points[b], "diff_low": low, "diff_high": high,
                          "verdict": verdict}, columns=list(PAIR_COLUMNS))
    return CellPairs(table, float(level), bool(higher_is_better), target, len(draws))
