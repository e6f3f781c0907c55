"""Sections from :mod:`xleval.diagnostics` results: the bias table before/after calibration,
agreement with humans with CIs, and the validity check of LGN's equal-quality assumption.
Only arrangement happens here; every number comes from the result objects."""
from __future__ import annotations

from typing import Any

from ._model import Figure, Section, Table
from ._sections import generic_section

__all__ = ["bias_section", "agreement_section", "validity_section", "validity_line"]

_RESCALING = ("A per-language monotone rescaling (like LGN) leaves every within-language statistic unchanged, "
              "so calibration can only change comparisons pooled across languages: look at the pooled "
              "correlations and at the cross-group pairwise accuracy (pairs of systems from different groups "
              "ordered as the humans order them; ties as in mt-metrics-eval's acc23).")


def _ci(result: Any, prefix: str = "") -> dict:
    """estimate / ci_low / ci_high (/ p) of an Estimate, CorrelationResult or PairwiseAccuracy."""
    if result is None:
        return {f"{prefix}estimate": None, f"{prefix}ci_low": None, f"{prefix}ci_high": None}
    return {f"{prefix}estimate": result.estimate, f"{prefix}ci_low": result.ci_low, f"{prefix}ci_high": result.ci_high}


def _headline_rows(before, after) -> list[dict]:
    """One row per score (raw, then calibrated), one column per headline statistic, CIs and p beside it."""
    rows = []
    for label, d in (("raw", before), ("calibrated", after)):
        if d is None:
            continue
        eta, smd = _est(d.eta_squared), _est(d.largest_smd)
        rows.append({"score": label, "sd of group means": d.sd_of_means,
                     "eta squared": eta[0], "eta squared ci_low": eta[1], "eta squared ci_high": eta[2],
                     "largest d": smd[0], "largest d ci_low": smd[1], "largest d ci_high": smd[2],
                     "Kruskal-Wallis H": d.kruskal.statistic, "Kruskal-Wallis p": d.kruskal.p_value,
                     "calibration advised": d.calibration_advised})
    return rows


def _est(e) -> tuple:
    return (None, None, None, None) if e is None else (e.estimate, e.ci_low, e.ci_high, e.p_value)


def bias_section(diagnosis, figures: tuple[Figure, ...] = ()) -> Section:
    """The bias table: per-group n, mean, std, median (and IQR without calibration) before and after
    calibration; headline statistics with CIs; the decision rule (groups more than 0.5 pooled sd apart)
    with its reasons."""
    before = diagnosis.bias
    after = diagnosis.comparison.after if diagnosis.comparison is not None else None
    verdict = "Calibration is advised" if before.calibration_advised else "Calibration is not advised"
    paragraphs = [f"{verdict} for comparisons across groups of {before.score} (threshold: group differences > "
                  f"{before.threshold:g} pooled standard deviations between some pair of groups). Reasons:",
                  *before.reasons]
    groups = diagnosis.comparison.table if diagnosis.comparison is not None else before.groups
    pair = " vs ".join(before.largest_smd_pair) if before.largest_smd_pair else None
    facts = {"rows used": before.n, "rows without a finite score": before.n_excluded,
             "largest difference between": pair}
    notes = list(before.notes) + (list(after.notes) if after is not None else [])
    level = int(before.eta_squared.level * 100)
    return generic_section("Bias by group before and after calibration", id="bias", paragraphs=paragraphs,
                           facts={k: v for k, v in facts.items() if v is not None}, figures=figures, warnings=notes,
                           tables=[Table.from_records("Per-group statistics (std with ddof=1)", groups),
                                   Table.from_records(f"Headline statistics ({level}% CIs)",
                                                      _headline_rows(before, after))])


def agreement_section(agreement, *, in_sample: tuple[str, ...] = (), out_of_fold: str | None = None) -> Section:
    """Agreement with humans: cross-group and all-pairs pairwise accuracy, pooled and within-group
    correlations (segment and system level) with CIs, and the raw-vs-calibrated tests. ``in_sample``:
    score columns fitted on these same labels (an anchored map fitted on the table), labelled
    "(in-sample)" wherever they appear; ``out_of_fold``: the cross-validated figures to quote instead."""
    acc, pooled, within, system_within = [], [], [], []
    paragraphs = [_RESCALING]
    if in_sample:
        paragraphs.insert(0, (
            f"In-sample: {', '.join(in_sample)} comes from a map fitted on these same human scores, so its agreement "
            "here flatters it (the labels it is measured on are the labels it was fitted on)"
            + (f". Out of fold (the summary's figures, measured on systems the map was not fitted on): {out_of_fold}."
               if out_of_fold else "; `xleval calibrate evaluate` measures it out of fold.")))

    def said(name: str) -> str:
        return f"{name} (in-sample)" if name in in_sample else name

    for name, res in ((said(n), r) for n, r in agreement.scores.items()):
        for pairs, value in (("cross-group", res.cross_group_accuracy), ("all pairs", res.all_pairs_accuracy)):
            if value is not None:
                acc.append({"score": name, "pairs": pairs, **_ci(value), "n_systems": value.n,
                            "n_pairs": value.n_pairs})
        for level, table in (("segment", res.segment_pooled), ("system", res.system_pooled)):
            for method, corr in table.items():
                pooled.append({"score": name, "level": level, "method": method, **_ci(corr), "p": corr.p_value,
                               "n": corr.n})
        for group, table in res.segment_within.items():
            within.append({"group": group, "score": name, **{f"{m} {k}": v for m, c in table.items()
                                                             for k, v in _ci(c).items()}, "n": _n(table)})
        for group, corr in res.system_within.items():
            system_within.append({"group": group, "score": name, "pearson": corr.estimate, "ci_low": corr.ci_low,
                                  "ci_high": corr.ci_high, "n_systems": corr.n})
    tests = [{"a": said(c.a), "b": said(c.b), "accuracy difference (b - a)": c.difference.estimate,
              "ci_low": c.difference.ci_low, "ci_high": c.difference.ci_high,
              "permutation p": c.permutation.p_value} for c in agreement.comparisons]
    tables = [("System-level pairwise accuracy", acc), ("Raw vs calibrated: cross-group pairwise accuracy", tests),
              ("Pooled correlations across groups", pooled), ("Segment-level correlations within each group", within),
              ("System-level Pearson within each group", system_within)]
    facts = {"rows": agreement.n_rows, "rows used (human and every score present)": agreement.n_used,
             "systems (group x system)": agreement.n_systems, "confidence level": agreement.level,
             "bootstrap resamples": agreement.n_resamples, "random_state": agreement.random_state}
    notes = list(agreement.notes)
    if agreement.excluded_groups:
        notes.append(f"groups with fewer than 2 systems, left out of system-level statistics: "
                     f"{', '.join(agreement.excluded_groups)}")
    return generic_section(f"Agreement with humans ({agreement.human})", id="agreement", paragraphs=paragraphs,
                           facts=facts, tables=[t for t in tables if t[1]], warnings=notes)


def _n(table: dict) -> int | None:
    return next((c.n for c in table.values()), None)


def validity_section(validity, *, title: str = "Validity of LGN's equal-quality assumption",
                     id: str = "validity") -> Section:
    """LGN's equal-quality assumption: the verdict, per-group human means and the pairwise differences."""
    tables = []
    if validity.groups is not None:
        tables.append(Table.from_records("Human scores per group", validity.groups))
    if validity.pairs is not None and len(validity.pairs):
        tables.append(Table.from_records(
            f"Standardised differences of human means (upper = one-sided {validity.level:g} bound)", validity.pairs))
    from ..diagnostics import below_threshold

    status = validity.status
    if below_threshold(validity):  # significant, but the largest difference is below the threshold
        status = "at risk (a significant difference below the threshold, whose upper bound reaches it)"
    facts = {"status": status, "threshold (pooled sd)": validity.threshold,
             "flagged pairs": [" vs ".join(p) for p in validity.flagged_pairs] or None}
    warn = [validity.message] if validity.warn else []
    return generic_section(title, id=id,
                           paragraphs=[validity.message], facts={k: v for k, v in facts.items() if v is not None},
                           tables=tables, warnings=warn + list(validity.notes))


def validity_line(validity) -> str:
    """One line naming the check and its status."""
    return f"LGN validity check ({validity.status}): {validity.message}"
