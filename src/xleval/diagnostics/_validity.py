"""Validity check for LGN: does the calibration set have the same true quality in every group?

LGN maps every group to the same mean and sd, so a real quality difference between groups of
the calibration set is erased. With human scores on that set the check compares the groups'
human means in pooled-sd units (Cohen's d per pair, Hedges-Olkin standard error):

* ``violated``     a difference between groups is significant (Kruskal-Wallis p < alpha) and
                   some pair's upper confidence bound of |d| reaches ``threshold`` (default 0.5):
                   LGN would erase a difference that may be that large. The pairs are named
                   (those whose difference is also significant on its own, when there are any).
* ``inconclusive`` some pair's upper bound reaches the threshold but no difference is
                   significant: too few human scores to tell.
* ``holds``        every pair's upper bound is below the threshold: any real difference is
                   smaller than ``threshold`` pooled sd.
* ``uninformative`` the human column is standardised within groups (:func:`human_scale_check`: the user
                   says so with ``human_scale="z"``, every group's mean is 0 and sd 1 or all group means
                   are equal to 1e-6, or a z-like name *and* z-like moments): equal means are built into
                   the scale (DA z per annotator, z-scores per language), so it cannot show a quality
                   difference.
* ``untested``     no human scores: the equal-quality assumption cannot be checked.

:func:`validity_verdict` combines the two levels: with a system column the system-level check is
primary, and the verdict is the worse of the two (violated > uninformative > inconclusive >
untested > holds).

The upper bound is one-sided at ``level`` (0.95: z = 1.645) and treats segments as independent,
which over-states the uncertainty of a fixed calibration set's mean (it includes the spread of
true quality, not only human noise), so the check errs towards firing.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.stats as ss

from .._base.result import Result
from ..exceptions import InputError
from ..stats import TestResult, kruskal_wallis
from ..table import DEFAULT_BY, EvalTable, as_table
from ._common import finite_rows

__all__ = ["ValidityCheck", "ValidityVerdict", "check_lgn_validity", "validity_verdict", "DESIGN_ADVICE",
           "SEVERITY", "HumanScale", "human_scale_check", "HUMAN_SCALES", "below_threshold",
           "status_said"]

SEVERITY = ("holds", "untested", "inconclusive", "uninformative", "violated")
STANDARDISED_TOL = 1e-6
#: what a user may say about the human column (``human_scale=``): standardised per annotator or group, or not
HUMAN_SCALES = ("z", "raw")
# a z-like name: `z`, `human_z`, `da-z`, `zscore`, `z_score` (not `zh`, `size`)
_Z_NAME = re.compile(r"(?:^|[_\-. ])z(?:$|[_\-. ])|z[_\- ]?scores?", re.IGNORECASE)
# z-like moments: the pooled within-group sd within these bounds (averaging several judgments shrinks a z
# column's sd: WMT21 DA z per pair 0.82-0.89), every group's sd within them up to 3 of its standard errors,
# and every group's mean within Z_MEAN of 0 plus 3 standard errors (a sample of labels)
Z_SD = (0.5, 1.5)
Z_MEAN = 0.1

DESIGN_ADVICE = (
    "LGN assumes every group's calibration set has the same true quality distribution. It holds by design "
    "when every group is scored on translations of the same source documents by the same systems (a "
    "multi-way parallel calibration set, e.g. FLORES-style, with one shared system list); add human "
    "scores for a sample of each group to test it."
)


@dataclass(frozen=True, eq=False)
class ValidityCheck(Result):
    """Result of :func:`check_lgn_validity`.

    ``status``: ``violated``/``inconclusive``/``holds``/``untested`` (see the module docstring);
    ``warn`` is True for ``violated``; ``message`` one paragraph for users; ``flagged_pairs``
    (tuple of (higher, lower) group pairs whose upper bound reaches the threshold, only when
    violated); ``groups`` (DataFrame ``group, n, human_mean, human_std``); ``pairs`` (DataFrame
    ``group_a, group_b, d, se, upper``: d = (mean_a - mean_b)/pooled sd >= 0, upper = one-sided
    bound); ``test`` (Kruskal-Wallis TestResult or None); ``threshold``, ``level``, ``alpha``,
    ``human`` (column) and ``notes``.
    """

    status: str
    warn: bool
    message: str
    flagged_pairs: tuple[tuple[str, str], ...]
    groups: pd.DataFrame | None
    pairs: pd.DataFrame | None
    test: TestResult | None
    threshold: float
    level: float
    alpha: float
    human: str | None
    notes: tuple[str, ...] = field(default=())


@dataclass(frozen=True, eq=False)
class HumanScale(Result):
    """Is the human column standardised within groups (a z scale such as WMT DA z)? ``status``:
    ``standardised``, ``raw`` (a scale comparable across groups) or ``unknown`` (the tool cannot tell);
    ``source``: what said so (``declared``: the user's ``human_scale=``; ``exact``: every group's mean 0
    and sd 1 or equal means, to 1e-6; ``signals``: the name and the per-group moments); ``reason``: one
    sentence for users; ``name_says_z``/``moments_say_z``: the two signals (None when not looked at)."""

    status: str
    source: str
    reason: str
    human: str | None
    name_says_z: bool | None = None
    moments_say_z: bool | None = None

    @property
    def standardised(self) -> bool:
        return self.status == "standardised"


def human_scale_check(h: np.ndarray, labels: np.ndarray, human: str | None, declared: str | None = None) -> HumanScale:
    """Whether the human scores ``h`` (NaN = no label) grouped by ``labels`` are standardised within groups.

    Per-annotator z (WMT DA z) cannot be recognised from group means alone: its pair means are not exactly
    equal (WMT21 to-English: -0.04 to +0.05, about 10 standard errors apart). So: the user's ``declared``
    scale (``z`` or ``raw``) wins; exact per-group standardisation is recognised; otherwise a z-like name
    (``human_z``, ``zscore``) and z-like moments (sds near 0.5-1.5 and means near 0, :func:`_z_moments`)
    together say ``standardised``, neither says ``raw``, and one alone says ``unknown``."""
    named = declared  # as the user gave it: the reason says that name, not only its kind
    if declared is not None and declared not in HUMAN_SCALES:  # a named scale (mqm, esa, da-z ...): its kind
        from ..calibration._scales import scale_kind

        try:
            declared = scale_kind(declared)
        except InputError:
            declared = str(declared)
    if declared is not None and declared not in HUMAN_SCALES:
        raise InputError(f"human_scale={declared!r}: use 'z' (standardised per annotator or group, like WMT DA z), "
                         "'raw' (one scale for every group: raw DA, MQM) or None (look at the data)",
                         argument="human_scale", value=declared)
    given = f"human_scale={named!r}" + (", as declared" if named == declared else f": a {declared} scale")
    if declared == "z":
        return HumanScale("standardised", "declared", f"{human!r} is standardised within groups ({given})", human)
    if declared == "raw":
        return HumanScale("raw", "declared", f"{human!r} is on one scale for every group ({given})", human)
    ok = np.isfinite(h)
    exact = _standardised(h[ok], labels[ok]) if ok.any() else None
    if exact:
        return HumanScale("standardised", "exact", exact, human, None, True)
    by_name = bool(human and _Z_NAME.search(str(human)))
    by_moments = _z_moments(h[ok], labels[ok])
    if by_name and by_moments:
        return HumanScale("standardised", "signals", f"{human!r} looks standardised within groups (a z-like name, "
                          "and every group's mean is near 0 and its sd near 1, like WMT DA z); say human_scale='raw' "
                          "if it is not", human, True, True)
    if by_name or by_moments:
        why = ("its name says z, but its group means and sds are not those of a z scale" if by_name else
               "every group's mean is near 0 and its sd near 1, as on a z scale, but its name does not say z")
        return HumanScale("unknown", "signals", f"cannot tell whether {human!r} is standardised within groups ({why}); "
                          "the cross-validated comparison decides; say human_scale='z' or human_scale='raw'",
                          human, by_name, by_moments)
    return HumanScale("raw", "signals", f"{human!r} does not look standardised within groups (neither its name nor "
                      "its group means and sds say z)", human, False, False)


def _z_moments(h: np.ndarray, labels: np.ndarray) -> bool:
    """Z-like moments of a sample of labels: the pooled within-group sd in :data:`Z_SD`, each group's sd
    there up to 3 standard errors and each group's mean within :data:`Z_MEAN` + 3 standard errors of 0.
    A group's sample sd strays with few labels (25 labels per pair of WMT21 DA z, sd 0.81-0.89: 0.35-1.89, one
    pair outside the band in 18 of 100 draws; tests/test_diagnostics_validity.py), so a fixed band for every
    group misses a z scale in such samples. A group's sd
    is read as in the band when a true sd at the band's nearer edge could give it: the sample sd's standard
    error at a true sd ``sigma`` is ``sigma * sqrt((kurtosis - 1) / (4 n))`` (the delta method), with the
    pooled kurtosis of the centred labels, at least the normal's 3."""
    frame = pd.DataFrame({"g": labels, "h": h}).groupby("g", sort=True)["h"]
    n, mean, sd = frame.size(), frame.mean(), frame.std(ddof=1)
    if len(n) < 2 or (n < 3).any():
        return False
    centred = h - frame.transform("mean").to_numpy()
    pooled = float(np.sqrt((centred**2).sum() / (len(h) - len(n))))
    if not Z_SD[0] <= pooled <= Z_SD[1]:
        return False
    kurtosis = max(float((centred**4).mean() / (centred**2).mean() ** 2), 3.0)
    relative_se = np.sqrt((kurtosis - 1.0) / (4.0 * n))
    inside = ((sd >= Z_SD[0] * (1 - 3 * relative_se)) & (sd <= Z_SD[1] * (1 + 3 * relative_se))
              & (mean.abs() <= Z_MEAN + 3 * sd / np.sqrt(n)))
    return bool(inside.all())


def check_lgn_validity(data: EvalTable | pd.DataFrame | None, by: str | list[str] | None = None,
                       human: str | None = "human", *,
                       threshold: float = 0.5, level: float = 0.95, alpha: float = 0.05,
                       system: str | None = None, human_scale: str | None = None) -> ValidityCheck:
    """Check LGN's equal-quality assumption on a calibration set with (or without) human scores.

    ``human=None`` (or a column that is all missing) gives ``status="untested"`` with the design
    that makes the assumption hold. Rows without a human score are left out and counted.
    With ``system``, each (group, system) mean human score is one observation, so differences are
    measured in units of the spread of *system* quality within a group: the scale on which LGN of
    system scores ranks systems (a gap that is small in segment sd can be large in system sd).
    ``human_scale``: ``z``, ``raw`` or None; a column standardised within groups (:func:`human_scale_check`)
    is ``uninformative``.
    """
    if not (np.isfinite(threshold) and threshold > 0):
        raise InputError(f"threshold={threshold!r}: the threshold must be a positive number of pooled sd (e.g. 0.5)",
                         argument="threshold", value=threshold)
    if not 0 < level < 1 or not 0 < alpha < 1:
        raise InputError(f"level and alpha must lie between 0 and 1; got level={level!r}, alpha={alpha!r}")
    notes: list[str] = []
    if data is None or human is None:
        return _untested(threshold, level, alpha, human, notes)
    table = as_table(data, by=by, human=human, system=system, default_by=DEFAULT_BY)
    labels = table.row_labels()
    h = table.values(human, argument="human")
    keep = finite_rows(h, f"human column {human!r}", notes, warn=False)
    if not keep.any():
        notes.append(f"human column {human!r} has no values")
        return _untested(threshold, level, alpha, human, notes)
    h, labels = h[keep], labels[keep]
    scale = human_scale_check(h, labels, human, human_scale)
    if scale.standardised:
        notes.append(scale.reason)
        return _uninformative(scale.reason, _groups(h, labels), threshold, level, alpha, human, notes)
    if system is not None:
        systems = table.column_labels(system)[keep]
        means = pd.DataFrame({"g": labels, "s": systems, "h": h}).groupby(["g", "s"], sort=True)["h"].mean()
        labels = means.index.get_level_values("g").to_numpy()
        h = means.to_numpy()
        notes.append(f"system level: {len(h)} (group, system) mean human scores; d in units of the within-group sd "
                     "of system means")
    groups = _groups(h, labels)
    usable = groups[groups["n"] >= 2]
    if len(usable) < 1 or len(groups) < 2:
        notes.append("fewer than two groups with human scores, or none with at least 2")
        return _untested(threshold, level, alpha, human, notes, groups)
    single = groups.loc[groups["n"] < 2, "group"].tolist()
    if single:  # its pairs take the sd of the other group (the pooled sd's only degrees of freedom)
        one = "system" if system is not None else "human score"
        notes.append(f"group(s) {[str(g) for g in single]} have one {one}: compared in the sd of the other group "
                     "of each pair, with a wide interval (pairs of two such groups have no sd and are left out)")
    pairs = _pairs(groups, ss.norm.ppf(level))
    test = kruskal_wallis(h, labels)
    return _verdict(groups, pairs, test, threshold, level, alpha, human, notes, unit="system" if system else "row")


def _standardised(h: np.ndarray, labels: np.ndarray) -> str | None:
    """The reason a human column carries no between-group information, or None: every group's mean
    is 0 and sd 1 (either ddof), or every group has the same mean, to STANDARDISED_TOL."""
    frame = pd.DataFrame({"g": labels, "h": h}).groupby("g", sort=True)["h"]
    means, n = frame.mean(), frame.size()
    if len(means) < 2 or (n < 2).any():
        return None
    sd0, sd1 = frame.std(ddof=0), frame.std(ddof=1)
    unit = ((sd0 - 1).abs() <= STANDARDISED_TOL) | ((sd1 - 1).abs() <= STANDARDISED_TOL)
    if (means.abs() <= STANDARDISED_TOL).all() and unit.all():
        return ("the human column is standardised within each group (mean 0 and sd 1 in every group): equal group "
                "means are built into it, so it cannot show whether true quality differs; use raw human scores")
    scale = max(1.0, float(np.nanmax(sd1.to_numpy())))
    if float(means.max() - means.min()) <= STANDARDISED_TOL * scale:
        return (f"every group has the same human mean ({float(means.iloc[0]):.6g}, to 1e-6): the column was "
                "centred within groups, so it cannot show whether true quality differs; use raw human scores")
    return None


def _uninformative(reason, groups, threshold, level, alpha, human, notes) -> ValidityCheck:
    message = f"{reason[0].upper()}{reason[1:]}."
    return ValidityCheck("uninformative", True, message, (), groups, None, None, threshold, level, alpha, human,
                         tuple(notes))


def _untested(threshold, level, alpha, human, notes, groups=None) -> ValidityCheck:
    message = "The equal-quality assumption of LGN is untested: no human scores. " + DESIGN_ADVICE
    return ValidityCheck("untested", False, message, (), groups, None, None, threshold, level, alpha, human,
                         tuple(notes))


def _count_range(groups: pd.DataFrame) -> str:
    low, high = int(groups["n"].min()), int(groups["n"].max())
    return f"{low}" if low == high else f"{low}-{high}"


def _groups(h: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
    g = pd.DataFrame({"group": labels, "h": h}).groupby("group", sort=True)["h"]
    return pd.DataFrame({"n": g.size(), "human_mean": g.mean(), "human_std": g.std(ddof=1)}).reset_index()


def _pairs(groups: pd.DataFrame, z: float) -> pd.DataFrame:
    rows = []
    for (_, first), (_, second) in itertools.combinations(groups.iterrows(), 2):
        a, b = (second, first) if first["human_mean"] < second["human_mean"] else (first, second)
        na, nb = a["n"], b["n"]
        if na + nb < 3:  # two groups of one observation: no within-group spread to measure d in
            continue
        # a group of one observation adds no degree of freedom (its sd is undefined, its weight n - 1 = 0)
        spread = sum((n - 1) * sd**2 for n, sd in ((na, a["human_std"]), (nb, b["human_std"])) if n >= 2)
        pooled = np.sqrt(spread / (na + nb - 2))
        gap = a["human_mean"] - b["human_mean"]
        d = gap / pooled if pooled > 0 else np.inf if gap > 0 else 0.0  # equal constant groups do not differ
        se = np.sqrt((na + nb) / (na * nb) + (d**2 if np.isfinite(d) else 0) / (2 * (na + nb)))
        rows.append((a["group"], b["group"], float(d), float(se), float(d + z * se)))
    return pd.DataFrame(rows, columns=["group_a", "group_b", "d", "se", "upper"]).sort_values(
        "d", ascending=False, kind="stable").reset_index(drop=True)


def _verdict(groups, pairs, test, threshold, level, alpha, human, notes, unit: str = "row") -> ValidityCheck:
    reach = pairs[pairs["upper"] >= threshold]
    # name the pairs that may reach the threshold *and* differ (lower bound above 0): with few
    # observations per group every upper bound can reach it, and naming equal groups misleads
    lower = 2 * reach["d"] - reach["upper"]
    if (lower > 0).any():
        reach = reach[lower > 0]
    significant = bool(np.isfinite(test.p_value) and test.p_value < alpha)
    top = pairs.iloc[0]
    if reach.empty:
        status = "holds"
        message = (f"Human means of the groups differ by at most d = {top['d']:.3g} pooled sd "
                   f"({top['group_a']} vs {top['group_b']}); every {level:.0%} upper bound is below {threshold:g}: "
                   "LGN's equal-quality assumption is consistent with the human scores.")
    elif significant:
        status = "violated"
        named = ", ".join(f"{a} > {b} (d = {d:.2f})"
                          for a, b, d in reach[["group_a", "group_b", "d"]].head(10).itertuples(index=False))
        below = bool(top["d"] < threshold)  # only the upper bounds reach the threshold: say so, not "would"
        message = (f"WARNING: human scores differ between groups (Kruskal-Wallis p = {test.p_value:.3g}) by up to "
                   f"{top['d']:.3g} pooled sd{f', below {threshold:g}' if below else ''}; differences that may reach "
                   f"{threshold:g} sd{' (their upper bounds do)' if below else ''}: {named}. LGN "
                   f"{'could erase such' if below else 'would erase these'} real quality differences; prefer "
                   "anchored calibration (human scores for a sample of systems in every group) or a calibration set "
                   "with the same systems and source documents in every group.")
    else:
        status = "inconclusive"
        # at system level a system's mean is one observation: the limit is systems per group, not labels
        few = (f"with {_count_range(groups)} systems per group (each system's mean human score is one observation) "
               "the check cannot" if unit == "system" else "too few human scores to")
        message = (f"Human means differ by up to d = {top['d']:.3g} pooled sd ({top['group_a']} vs {top['group_b']}), "
                   f"not significantly (p = {test.p_value:.3g}), but {few} rule out a difference "
                   f"of {threshold:g} sd. " + DESIGN_ADVICE)
    flagged = tuple((str(a), str(b)) for a, b in reach[["group_a", "group_b"]].itertuples(index=False)) \
        if status == "violated" else ()
    return ValidityCheck(status, status == "violated", message, flagged, groups, pairs, test, threshold, level, alpha,
                         human, tuple(notes))


@dataclass(frozen=True, eq=False)
class ValidityVerdict(Result):
    """The two levels of the validity check as one verdict. ``primary`` is the system-level check
    when there is one (LGN is used to rank systems), else the segment-level one; ``status`` is the
    worse of the two (``SEVERITY``); ``reason`` one line saying which level decided and why."""

    status: str
    warn: bool
    reason: str
    primary: ValidityCheck
    secondary: ValidityCheck | None

    @property
    def deciding(self) -> ValidityCheck:
        """The check whose status is the verdict's (the primary one when both have it)."""
        return self.primary if self.primary.status == self.status or self.secondary is None else self.secondary

    @property
    def level(self) -> str:
        """``system`` or ``segment``: the level of :attr:`deciding`."""
        return "system" if self.secondary is not None and self.deciding is self.primary else "segment"


def status_said(check: ValidityCheck | ValidityVerdict) -> str:
    """A check's (or a verdict's) status in the words for users: ``at risk`` for a ``violated`` check whose
    largest difference is below its threshold (:func:`below_threshold`), else the status."""
    deciding = check.deciding if isinstance(check, ValidityVerdict) else check
    return "at risk" if below_threshold(deciding) else check.status


def below_threshold(check: ValidityCheck) -> bool:
    """A ``violated`` check whose largest difference is below its threshold: the groups differ
    significantly and the difference *may* reach the threshold (its upper bound does), but its
    estimate does not. Said as "at risk", never as "violated", in the sentences for users."""
    return (check.status == "violated" and check.pairs is not None and len(check.pairs) > 0
            and float(check.pairs.iloc[0]["d"]) < check.threshold)


def validity_verdict(segment: ValidityCheck, system: ValidityCheck | None = None) -> ValidityVerdict:
    """Combine the segment-level and the system-level check (the system level first)."""
    primary: ValidityCheck = system if system is not None else segment
    secondary: ValidityCheck | None = segment if system is not None else None
    checks = [c for c in (primary, secondary) if c is not None]
    # a violation whose estimate reaches the threshold is worse than one that is only at risk (status_said)
    worst = max(checks, key=lambda c: (SEVERITY.index(c.status), not below_threshold(c)))
    level = "system level" if worst is system else "segment level"
    if secondary is not None and status_said(primary) != status_said(secondary):
        other = secondary if worst is primary else primary
        other_level = "segment level" if worst is primary else "system level"
        where = f"at {level} (the worse of the two; {other_level}: {status_said(other)})"
    else:
        where = "at both levels" if len(checks) == 2 else f"at {level}"
    said = worst.status
    if worst.pairs is not None and len(worst.pairs):
        top = worst.pairs.iloc[0]
        unit = "system sd" if worst is system else "segment sd"
        detail = (f"largest difference {top['group_a']} vs {top['group_b']}, d = {top['d']:.2f} {unit} "
                  f"(threshold {worst.threshold:g})")
        if below_threshold(worst):  # significant, but the estimate is below the threshold: only its bound reaches it
            said = "at risk"
            p = f" (Kruskal-Wallis p = {worst.test.p_value:.2g})" if worst.test is not None else ""
            detail = (f"the groups' human scores differ{p}; the largest difference, {top['group_a']} vs "
                      f"{top['group_b']}, d = {top['d']:.2f} {unit}, is below the threshold {worst.threshold:g}, but "
                      f"its {worst.level:.0%} upper bound ({top['upper']:.2f}) reaches it")
        if worst.status == "inconclusive":  # a d above the threshold that is not significant: say what is missing
            missing = "systems per group" if worst is system else "human scores"
            detail += (f", not significant (p = {worst.test.p_value:.2g}): more {missing} would tell whether the "
                       "groups differ" if worst.test is not None else "")
    else:
        detail = _first_sentence(worst.message)
    reason = f"{said} {where}: {detail}"
    return ValidityVerdict(worst.status, worst.status in ("violated", "uninformative"), reason, primary, secondary)


def _first_sentence(text: str) -> str:
    text = text.removeprefix("WARNING: ")
    cut = text.find(". ")
    return text if cut < 0 else text[:cut + 1]
