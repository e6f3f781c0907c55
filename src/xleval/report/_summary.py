"""The answer-first sections: the verdict (is there language bias, may LGN be used, which
calibration and why, how well raw and calibrated scores agree with humans across groups out of
fold), the leaderboard, and the checks that did not pass (as :class:`Alert`s with what to do).

Everything here arranges result objects (:class:`~xleval.decision.CalibrationDecision`,
:class:`~xleval.leaderboard.Leaderboard`, validity checks); no statistic is computed.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..diagnostics import below_threshold
from ._format import format_column, format_number
from ._model import Alert, Figure, Section, Table

__all__ = ["verdict", "summary_section", "leaderboard_section", "leaderboard_display_rows", "check_alerts",
           "cv_rows", "VALIDITY_ACTIONS", "agreement_line"]

_METHOD_NAMES = {"none": "no calibration (raw scores)", "lgn": "LGN", "anchored": "anchored calibration",
                 "model": "the saved calibrator"}
# "the table's labels": the anchored map fitted on every label the table has (not the curve's K per group)
_SCORE_NAMES = {"raw": "raw", "lgn": "LGN", "anchored": "anchored (the table's labels)"}
# how the budget curve's K labels per group are drawn from the table's labels, by selection
_SELECTION_WORDS = {"spread": "chosen to spread over systems and scores", "random": "drawn at random"}

VALIDITY_ACTIONS = {
    "violated": "Do not use LGN to compare these groups: it would erase real quality differences. Use anchored "
                "calibration (human scores for a sample of systems in every group), or a calibration set with the "
                "same systems and source documents in every group.",
    "at risk": "Do not rely on LGN to compare these groups: the groups' human scores differ, and the difference may "
               "reach the threshold. Use anchored calibration (human scores for a sample of systems in every group), "
               "or label more segments per group to tell whether the difference is that large.",
    "inconclusive": "Add human scores for more systems (or segments) per group to settle it, or calibrate on a set "
                    "with the same systems and source documents in every group, where the assumption holds by design.",
    "untested": "Add human scores for a sample of every group (a human score column) so the assumption can be checked.",
    "uninformative": "Use a human scale that is comparable across groups (e.g. raw scores rather than per-annotator "
                     "z-scores, or MQM), or a calibration set with the same systems and documents in every group.",
}
_LGN_ANSWERS = {"holds": "yes", "violated": "no", "inconclusive": "cannot tell", "untested": "untested",
                "uninformative": "cannot tell"}


def _lgn_answer(rec) -> str:
    """May LGN be used: the answer, why, at the level that decided (the other level's status beside it)."""
    status, level = rec.validity_status, rec.validity_level
    verdict = rec.validity
    check = verdict.deciding if verdict is not None else rec.validity_segment
    unit = "system means" if level == "system" else "segments"
    answer = _LGN_ANSWERS.get(status, status)
    why = {"holds": f"its equal-quality assumption is consistent with the human scores ({unit})",
           "violated": f"the groups differ in true quality according to the human scores ({unit}); LGN would erase it",
           "inconclusive": ("too few systems per group to check its equal-quality assumption on system means "
                            "(a system is one observation, however many segments are judged)" if level == "system"
                            else "too few human scores to check its equal-quality assumption (segments)"),
           "untested": "no human scores to check its equal-quality assumption",
           "uninformative": "the human scale cannot tell whether the groups differ in quality"}.get(status, "")
    if status == "violated" and check is not None and check.pairs is not None and len(check.pairs):
        top = check.pairs.iloc[0]
        size = f"d = {top['d']:.2f} {'system' if level == 'system' else 'segment'} sd"
        if below_threshold(check):
            why = (f"at {level} level the groups' human scores differ, by up to {size} ({top['group_a']} vs "
                   f"{top['group_b']}): below the {check.threshold:g} threshold, but its upper bound "
                   f"({top['upper']:.2f}) reaches it, so LGN could erase a real difference")
        else:
            why = (f"at {level} level the groups differ in true quality according to the human scores ({unit}; "
                   f"{size} ({top['group_a']} vs {top['group_b']}), threshold {check.threshold:g}); LGN would "
                   "erase it")
    if verdict is not None and verdict.secondary is not None:
        other = verdict.secondary if check is verdict.primary else verdict.primary
        if other.status != status:
            why += f" ({'segment' if level == 'system' else 'system'} level: {other.status})"
    return f"{answer}: {why}" if why else answer


def _bias_answer(bias) -> str:
    d = bias.largest_smd
    if d is None or not np.isfinite(d.estimate):
        return "cannot tell: the scores have no spread within groups"
    pair = " and ".join(bias.largest_smd_pair)
    size = format_number(float(d.estimate))
    if bias.calibration_advised:
        return f"yes: {pair} differ by {size} pooled standard deviations (threshold {bias.threshold:g})"
    return f"no: groups differ by at most {size} pooled standard deviations ({pair}; threshold {bias.threshold:g})"


def _selection_note(evaluation) -> str:
    """How the rows' anchored variants drew their K labels per group, as the evaluation did (the leaderboard's
    and the report's decision: at random; ``calibrate evaluate``: both ways, each row says which)."""
    curve = evaluation.curve()
    selections = [str(s) for s in dict.fromkeys(curve["selection"])] if not curve.empty else []
    if not selections:
        return ""
    words = " or ".join(f"{_SELECTION_WORDS.get(s, s)} ({s})" for s in selections)
    return f" K labels per group are {words} from the table's labels."


def _variant_label(v) -> str:
    if v.budget is None:
        return _SCORE_NAMES.get(v.name, v.name)
    return f"anchored, {v.budget} labels per group ({v.selection})"


def cv_rows(evaluation) -> list[dict]:
    """Cross-validated cross-group accuracy per variant with the paired difference against raw."""
    rows = []
    for v in evaluation.variants:
        row = {"scores": _variant_label(v), "accuracy": v.accuracy.estimate, "ci_low": v.accuracy.ci_low,
               "ci_high": v.accuracy.ci_high}
        if v.minus_raw is not None and v.name != "raw":
            row.update({"minus raw": v.minus_raw.estimate, "minus raw ci_low": v.minus_raw.ci_low,
                        "minus raw ci_high": v.minus_raw.ci_high})
        row["pooled Pearson r"] = v.pearson.estimate
        rows.append(row)
    return rows


def _accuracy(evaluation, name: str) -> float | None:
    try:
        return float(evaluation.variant(name).accuracy.estimate)
    except KeyError:
        return None


def verdict(recommendation, board, *, score: str, headline: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON ``summary``: the answers in words and numbers (plain values)."""
    rec = recommendation
    status, level = rec.validity_status, rec.validity_level
    out: dict[str, Any] = {
        "recommendation": rec.method, "recommendation_name": _METHOD_NAMES[rec.method], "reasons": list(rec.reasons),
        "language_bias": bool(rec.bias.calibration_advised), "language_bias_answer": _bias_answer(rec.bias),
        "lgn_allowed": _LGN_ANSWERS.get(status, status), "lgn_answer": _lgn_answer(rec),
        "validity": {"level": level, "status": status, "message": rec.validity_reason,
                     "segment": rec.validity_segment.status,
                     "system": rec.validity_system.status if rec.validity_system is not None else None},
        "labels_needed": rec.labels_needed,
        "calibration_used": dict(board.calibration),
        "headline": list(headline),
    }
    if rec.evaluation is not None:
        ev = rec.evaluation
        out["cross_validated_accuracy"] = {"folds": ev.n_folds, "repeats": ev.n_repeats, "systems": ev.n_systems,
                                           "best_supported": rec.evaluated_method, "verdict": rec.paragraph,
                                           "scores": cv_rows(ev)}
    if rec.budget_curve is not None:
        out["budget_curve"] = rec.budget_curve.to_dict(orient="records")
    return out


def agreement_line(evaluation, method: str) -> str | None:
    if evaluation is None or _accuracy(evaluation, "raw") is None:
        return None
    order = ["raw"] + ([method] if method in ("lgn", "anchored") else []) + \
        [m for m in ("lgn", "anchored") if m != method]
    parts = [f"{_SCORE_NAMES[m]} {format_number(a)}" for m in order if (a := _accuracy(evaluation, m)) is not None]
    return ", ".join(parts) + " (share of cross-group system pairs ordered as the human scores order them, out of fold)"


def summary_section(recommendation, board, *, score: str, by: str, figures: Sequence[Figure] = (),
                    headline: Sequence[str] = (), applied: str | None = None) -> Section:
    """The verdict: the lead answer, the four questions answered, the reasons, the cross-validated
    agreement table and the figures that show it."""
    rec = recommendation
    name = _METHOD_NAMES[rec.method]
    lead = list(headline)
    answer = f"Recommended calibration for comparing {score} across {by} groups: {name}."
    agreement = agreement_line(rec.evaluation, rec.method)
    if agreement:
        answer += f" Agreement with human scores across groups: {agreement}."
    lead.append(answer)
    facts = {f"Language bias in {score}?": _bias_answer(rec.bias),
             "May LGN be used here?": _lgn_answer(rec),
             "Recommended calibration": name,
             "Calibration applied in this report": applied or board.calibration["description"]}
    if board.calibration["method"] == "model":  # a saved calibrator was given: say it is not the recommendation
        facts["Calibration applied in this report"] += (
            f" — a saved calibrator given to this report (model=), not chosen by the recommendation above "
            f"({name})")
    if agreement:
        facts["Agreement with humans across groups"] = agreement
    tables = []
    if rec.evaluation is not None:
        ev = rec.evaluation
        tables.append(Table.from_records(
            f"Agreement with human scores across groups, cross-validated by {ev.n_folds} system folds", cv_rows(ev),
            note="Share of pairs of systems from different groups that the scores order as the human scores do "
                 "(pairwise accuracy with ties, as in mt-metrics-eval), and the pooled Pearson r of system scores. "
                 "Out of fold: each system is calibrated by maps fitted on the other folds' systems and labels; mean "
                 f"over {ev.n_repeats} fold splits. Intervals resample systems within groups (the same resamples for "
                 "every row, so the differences to raw are paired)." + _selection_note(ev)))
    paragraphs = ["Why:", *rec.reasons]
    return Section("summary", "Summary: the answer", tuple(paragraphs), tuple(facts.items()), tuple(tables),
                   tuple(figures), lead=tuple(lead))


def _interval(low: list[str], high: list[str]) -> list[str]:
    return [f"{a} to {b}" if a != "–" and b != "–" else "–" for a, b in zip(low, high, strict=True)]


def leaderboard_display_rows(board, *, compact: bool = False) -> list[dict]:
    """The leaderboard as people read it: intervals as 'low to high' text formatted like their column.
    ``compact`` (a terminal): short headers, no raw-score interval."""
    rows = board.rows
    by = board.by
    level = round(board.level * 100)

    def interval(col: str) -> list[str]:
        # bounds share their estimate's precision: format them in one column with the estimates
        n = len(rows)
        text = format_column(rows[f"{col}_ci_low"].tolist() + rows[f"{col}_ci_high"].tolist() + rows[col].tolist(), col)
        return [f"{a} to {b}" if "–" not in (a, b) else "–" for a, b in zip(text[:n], text[n:2 * n], strict=True)]

    def ranks(prefix: str) -> list[str]:
        return [f"{a} to {b}" for a, b in zip(rows[f"{prefix}_low"], rows[f"{prefix}_high"], strict=True)]

    scale = board.calibration["scale"]
    cal = "calibrated" if board.calibration["method"] != "none" else "score"
    out: dict[str, list] = {"rank": rows["rank_overall"].astype(int).tolist(),
                            f"rank, {level}% interval" if not compact else "interval": ranks("rank_overall"),
                            by: rows["group"].tolist(), "system": rows["system"].tolist(),
                            (f"{cal} ({scale})" if not compact else cal): rows["calibrated"].tolist(),
                            (f"{cal}, {level}% CI" if not compact else f"{level}% CI"): interval("calibrated"),
                            f"raw {board.score}": rows["raw"].tolist()}
    if not compact:
        out[f"raw, {level}% CI"] = interval("raw")
    out[f"rank in {by}"] = rows["rank_in_group"].astype(int).tolist()
    out[f"rank in {by}, interval" if not compact else "interval "] = ranks("rank_in_group")
    if "human" in rows.columns:
        out[f"human ({board.human})" if not compact else "human"] = rows["human"].tolist()
        if "n_human" in rows.columns:
            n_human = pd.to_numeric(rows["n_human"], errors="coerce").fillna(0).astype(int)
            # labels on some segments only: the human mean of 4 labels is not that of 1000 segments, so its count
            # stands beside it (it is the count the mean is made of)
            if (rows["human"].notna() & (n_human < rows["n_segments"])).any():
                out["human labels" if not compact else "labels"] = n_human.tolist()
    out["segments"] = rows["n_segments"].astype(int).tolist()
    return [dict(zip(out, values, strict=True)) for values in zip(*out.values(), strict=True)]


_INTERVAL_NAMES = {"raw": "Raw CI", "calibrated": "Calibrated CI", "rank_in_group": "Rank in group, interval",
                   "rank_overall": "Rank, interval"}


def leaderboard_section(board, *, figures: Sequence[Figure] = ()) -> Section:
    """The sortable leaderboard with what its columns mean."""
    level = round(board.level * 100)
    cal = board.calibration
    paragraphs = [
        f"One row per ({board.by}, system), best first by the calibrated score (the only one comparable across "
        f"{board.by} groups). Click a column header to sort.",
        f"Raw score: {board.aggregation}. Calibrated score: {cal['description']}.",
        f"Intervals ({level}%): resamples of {board.unit}, {board.n_resamples} of them, the same for every system "
        "of a group.",
        *(f"{_INTERVAL_NAMES.get(k, k)}: {v}." for k, v in getattr(board, "intervals", {}).items()),
    ]
    rows = leaderboard_display_rows(board)
    if rows and "human labels" in rows[0]:
        paragraphs.append(f"Human ({board.human}): the mean of the system's human scores, over the segments that have "
                          "one (human labels: how many; segments: how many the scores are averaged over). Labelled "
                          "on a few segments, it is a noisy sample of the system's quality, not its measured score.")
    table = Table.from_records(f"Leaderboard: {board.score} by {board.by}", rows, sortable=True)
    notes = [n for n in board.notes if not n.startswith(("SmallGroupWarning", "UnseenGroupWarning",
                                                          "DegenerateGroupWarning", "DataQualityWarning"))]
    return Section("leaderboard", "Leaderboard", tuple(paragraphs), (), (table,), tuple(figures), tuple(notes))


def check_alerts(recommendation, diagnosis=None, *, calibration_method: str, board=None) -> list[Alert]:
    """Every check that failed, was violated, untested or inconclusive, with what to do (nothing that passed)."""
    rec = recommendation
    alerts: list[Alert] = []
    checks = [(rec.validity_system, "system"), (rec.validity_segment, "segment")]
    for validity, level in checks:
        if validity is not None and validity.status != "holds":
            status = "at risk" if below_threshold(validity) else validity.status  # never "violated" below it
            alerts.append(Alert(f"LGN validity check, {level} level", status, validity.message,
                                VALIDITY_ACTIONS.get(status, "")))
    if rec.warn and rec.warning:
        then = ", then ".join(f"`{c}`" for c in rec.commands)
        alerts.append(Alert("choice of calibration", "warning", rec.warning.removeprefix("WARNING: "),
                            f"Label about {rec.labels_needed} rows per group and fit anchored calibration: "
                            f"{then}." if rec.labels_needed and then else ""))
    if diagnosis is not None and diagnosis.comparison is not None and calibration_method in ("lgn", "model-lgn"):
        after = diagnosis.comparison.after
        if after.calibration_advised:
            d = after.largest_smd
            alerts.append(Alert("bias after calibration", "failed",
                                f"calibrated scores still differ between groups by {format_number(d.estimate)} "
                                f"pooled sd "
                                f"({' and '.join(after.largest_smd_pair)}).",
                                "Check that the calibrator was fitted on data like this (same metric and options, "
                                "same groups), or refit it on this data."))
    if rec.evaluation is not None:
        for v in rec.evaluation.variants:
            diff = v.minus_raw
            if v.name in ("lgn", "anchored") and diff is not None and diff.ci_high < 0:
                name = _SCORE_NAMES[v.name]
                applied = rec.basis == "levels" and v.name == rec.method  # the one decision applies it regardless
                action = (f"The decision applies {name} nonetheless: the groups' score levels differ, so the raw "
                          "scores cannot rank across groups, and this comparison, read against few labels per "
                          "system, cannot be trusted to rank the methods (docs/calibration.md); label more rows "
                          "per group to settle it (xleval calibrate plan)." if applied else
                          f"Do not use {name} for cross-group comparisons of this data.")
                alerts.append(Alert(f"cross-validated agreement of {name}", "failed",
                                    f"{name} orders fewer cross-group system pairs as the human scores do than the raw "
                                    f"scores (difference {format_number(diff.estimate)}, 95% CI "
                                    f"{format_number(diff.ci_low)} to {format_number(diff.ci_high)}).", action))
    if diagnosis is not None and diagnosis.agreement is not None and diagnosis.agreement.excluded_groups:
        alerts.append(Alert("agreement with humans", "inconclusive",
                            f"groups with fewer than 2 systems cannot enter system-level agreement: "
                            f"{', '.join(diagnosis.agreement.excluded_groups)}.",
                            "Add systems to these groups, or read their numbers with care."))
    if board is not None:
        unreliable = [n for n in board.notes if "unreliable" in n]
        if unreliable:
            alerts.append(Alert("bootstrap intervals", "inconclusive", "; ".join(unreliable[:5]),
                                "Intervals from fewer than 5 documents or segments per group say little; add data."))
    return alerts
