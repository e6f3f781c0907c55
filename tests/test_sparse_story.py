"""Issue 34, item 3: one story at sparse labels. WMT21 to-English de-en, ha-en, is-en, zh-en (four groups,
raw DA 0-100) with 100 random labels per pair and the rest unlabelled, as a new user has them: the
segment-level check finds a significant difference whose estimate (the issue's draw: d = 0.35 segment sd, zh-en
vs ha-en; the draw here, `calibrate select`'s seed 5: d = 0.36, is-en vs ha-en) is below the 0.5 threshold, and
the system-level check is inconclusive. The report's summary, its paragraphs,
its warnings and its tables then say the same thing: the level that decided, "at risk" (never "violated")
below the threshold, the in-sample agreement labelled as such beside the out-of-fold one, and the human
column beside its label count; no Python class name anywhere in the text."""
from __future__ import annotations

import re

import numpy as np
import pytest

from test_one_story import sparse_analysis, sparse_wmt21
from xleval.report import build_mt_report, render_html, render_json

pytestmark = pytest.mark.data

PAIRS = ["de-en", "ha-en", "is-en", "zh-en"]
# identifiers of the code, never words for users: CamelCase classes (AnchoredCalibrator, DataQualityWarning ...)
# and constructor calls
CLASS_NAME = re.compile(r"\b(?:[A-Z][a-z]+)+(?:Calibrator|Warning|Error|Check|Verdict|Result)\b|\bLGN\(|"
                        r"Calibrator\(")


@pytest.fixture(scope="module")
def sparse(shared_data):
    # seed 5: a draw of the issue's case (seed 0 draws one whose labels do not settle the human scale's direction,
    # so the decision has no out-of-fold comparison to quote)
    frame = sparse_wmt21(shared_data, PAIRS, ["lp", "system", "seg_id", "doc_id", "reference", "hypothesis"],
                         random_state=5)
    return frame.drop(columns=["reference", "hypothesis"])


@pytest.fixture(scope="module")
def analysis(sparse):
    return sparse_analysis(sparse)


@pytest.fixture(scope="module")
def report(analysis):
    return build_mt_report(analysis, image_format="svg")


def _texts(report) -> list[str]:
    """Every sentence the report shows users: summary answers and reasons, paragraphs, facts, warnings,
    alerts and table cells that are text."""
    out: list[str] = [*report.summary["reasons"], report.summary["lgn_answer"], report.summary["validity"]["message"]]
    for section in report.sections:
        out += [*section.lead, *section.paragraphs, *section.warnings]
        out += [f"{k}: {v}" for k, v in section.facts]
        out += [f"{a.check} ({a.status}): {a.message} {a.action}" for a in getattr(section, "alerts", ())]
        for table in section.tables:
            out += [str(c) for c in table.columns]
            out += [v for row in table.rows for v in (row.values() if isinstance(row, dict) else row)
                    if isinstance(v, str)]
    return out


def test_the_case_of_the_issue(analysis):
    """The figures the issue reports, computed here by hand from the labels: the segment-level difference is
    significant and its estimate below the threshold; the system level is inconclusive."""
    rec = analysis.recommendation
    segment, system = rec.validity_segment, rec.validity_system
    assert segment.status == "violated" and system.status == "inconclusive"
    labels = analysis.frame.dropna(subset=["human"])
    means = labels.groupby("lp")["human"].mean()
    sds = labels.groupby("lp")["human"].std(ddof=1)
    a, b = segment.pairs.iloc[0][["group_a", "group_b"]]
    pooled = np.sqrt((sds[a] ** 2 + sds[b] ** 2) / 2)  # 100 labels in each
    d = abs(means[a] - means[b]) / pooled
    assert d == pytest.approx(segment.pairs.iloc[0]["d"], abs=1e-9) and 0.3 < d < segment.threshold
    assert d == max(abs(means[x] - means[y]) / np.sqrt((sds[x] ** 2 + sds[y] ** 2) / 2)
                    for x in PAIRS for y in PAIRS if x < y)  # the largest difference is the one reported


def test_summary_and_detail_name_the_same_level(report, analysis):
    summary = report.summary
    assert summary["validity"]["level"] == "segment" == analysis.recommendation.validity_level
    assert summary["lgn_allowed"] == "no"
    assert summary["lgn_answer"].startswith("no: at segment level")
    assert "(system level: inconclusive)" in summary["lgn_answer"]
    assert "system means" not in summary["lgn_answer"]  # the issue: the headline named the level that passed
    assert summary["validity"]["message"].startswith("at risk at segment level")
    reason = next(r for r in summary["reasons"] if r.startswith("LGN's equal-quality assumption"))
    d = analysis.recommendation.validity_segment.pairs.iloc[0]["d"]
    assert "at segment level" in reason and f"d = {d:.2f} segment sd" in reason
    page = dict(report.section("summary").facts)
    assert page["May LGN be used here?"] == summary["lgn_answer"]


def test_never_violated_below_the_threshold(report):
    texts = _texts(report)
    assert not [t for t in texts if "violated" in t.lower()]
    alerts = {a.check: a.status for a in report.alerts}
    assert alerts == {"LGN validity check, system level": "inconclusive",
                      "LGN validity check, segment level": "at risk"}
    html = render_html(report)
    assert "violated" not in re.sub(r"<script.*?</script>", "", html, flags=re.S).lower()


def test_no_class_names_in_the_text(report):
    texts = _texts(report)
    assert not [t for t in texts if CLASS_NAME.search(t)]
    assert not CLASS_NAME.search(render_json(report))


def test_the_in_sample_agreement_is_labelled_and_the_out_of_fold_one_quoted(report, analysis):
    section = report.section("agreement")
    accuracy = next(t for t in section.tables if t.title == "System-level pairwise accuracy")
    scores = {row["score"] for row in accuracy.rows}
    assert scores == {"chrf", "chrf_calibrated (in-sample)"}
    lead = section.paragraphs[0]
    out_of_fold = analysis.recommendation.evaluation.variant("anchored").accuracy.estimate
    assert lead.startswith("In-sample: chrf_calibrated") and f"anchored (the table's labels) {out_of_fold:.3f}" in lead
    # the summary quotes the same out-of-fold figure
    assert f"anchored (the table's labels) {out_of_fold:.3f}" in report.section("summary").lead[-1]


def test_the_human_column_carries_its_label_count(report, analysis):
    table = report.section("leaderboard").tables[0]
    rows = table.rows
    assert "human labels" in table.columns
    assert table.columns.index("human labels") == table.columns.index("human (human)") + 1
    labels = analysis.frame.dropna(subset=["human"]).groupby(["lp", "system"])["human"].agg(["count", "mean"])
    for row in rows:
        count, mean = labels.loc[(row["lp"], row["system"])]
        assert row["human labels"] == count and row["human (human)"] == pytest.approx(mean)
        assert row["human labels"] < row["segments"]
    assert max(r["human labels"] for r in rows) <= 12  # 4-12 labels a system, as in the issue
    assert any(p.startswith("Human (human): the mean of the system's human scores") for p in
               report.section("leaderboard").paragraphs)


def test_the_advice_says_at_risk_too(analysis):
    from xleval.diagnostics import status_said

    verdict = analysis.recommendation.validity
    assert verdict.status == "violated" and status_said(verdict) == "at risk"
    assert status_said(analysis.recommendation.validity_system) == "inconclusive"
    assert "violated" not in str(analysis.diagnosis.advice)
    assert "violated" not in analysis.diagnosis.verdict.reason
