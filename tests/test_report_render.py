"""The HTML/JSON report: answer first, deterministic, self-contained, the same content in both
formats, and every number it shows traceable to the result objects (checked against independent
pandas computations)."""
from __future__ import annotations

import html
import json
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from xleval.calibration import LGN
from xleval.exceptions import UnseenGroupWarning
from xleval.report import (
    Figure,
    Report,
    Table,
    analyze_mt,
    build_mt_report,
    figure_from_matplotlib,
    generic_section,
    mt_report,
    render_html,
    render_json,
    result_section,
    write_report,
)
from xleval.stats import Estimate, Resampling
from xleval.synthetic import simulate_mt_evaluation


@pytest.fixture(scope="module")
def sim():
    return simulate_mt_evaluation(n_systems=3, n_segments=40, languages=("de", "fi", "zh"), seed=3)


@pytest.fixture(scope="module")
def evaluation(sim):
    return sim.data[sim.data["split"] == "evaluation"].reset_index(drop=True)


@pytest.fixture(scope="module")
def report(evaluation):
    # by tgt_lang, as the oracles below group (the default would be lp, which the simulation has too)
    return mt_report(evaluation, "metric", by="tgt_lang", human="human", method="lgn")


def test_same_input_renders_the_same_bytes(evaluation, report, tmp_path):
    again = mt_report(evaluation.copy(), "metric", by="tgt_lang", human="human", method="lgn")
    assert render_html(again) == render_html(report)
    assert render_json(again) == render_json(report)
    write_report(report, tmp_path / "a.html")
    write_report(again, tmp_path / "b.html")
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


def test_html_is_self_contained(report):
    page = render_html(report)
    assert page.lower().count("<script") == 1 and "<script>" in page  # the inline table sorter, nothing loaded
    sources = re.findall(r'<img src="([^"]+)"', page)
    text = re.sub(r'<img src="[^"]+"', "", page)  # the figures are SVG (their clip paths say url(#...))
    assert "<link" not in text.lower() and "@import" not in text and "url(" not in text
    assert len(sources) == 4 and all(s.startswith("data:image/svg+xml;charset=utf-8,") for s in sources)
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_the_answer_comes_first(report):
    assert [s.id for s in report.sections][:3] == ["summary", "leaderboard", "warnings"]
    payload = json.loads(render_json(report))
    assert list(payload)[4:8] == ["summary", "leaderboard", "warnings", "meta"] and list(payload)[-1] == "sections"
    assert payload["summary"]["recommendation"] in ("none", "lgn", "anchored") and payload["summary"]["reasons"]
    assert len(payload["leaderboard"]) == 9  # 3 languages x 3 systems
    page = render_html(report)
    assert page.index("<section") == page.index('<section id="summary">') < page.index('<section id="leaderboard">')
    assert "seed" not in page.lower()


def test_leaderboard_numbers_are_the_system_means(evaluation, report):
    # Oracle: pandas. The metric column has no texts, so a system's score is the mean of its segments.
    means = evaluation.groupby(["tgt_lang", "system"])[["metric", "human"]].mean()
    rows = {(r["group"], r["system"]): r for r in report.leaderboard}
    assert set(rows) == set(means.index)
    for key, row in rows.items():
        assert row["raw"] == pytest.approx(means.loc[key, "metric"], rel=1e-12)
        assert row["human"] == pytest.approx(means.loc[key, "human"], rel=1e-12)
        assert row["raw_ci_low"] <= row["raw"] <= row["raw_ci_high"]
        assert row["rank_in_group_low"] <= row["rank_in_group"] <= row["rank_in_group_high"]
    # LGN: a system's calibrated score is the mean of its z-scored segments (the language's mean and population sd)
    lang = evaluation.groupby("tgt_lang")["metric"].agg(["mean", lambda x: x.std(ddof=0)])
    lang.columns = ["mean", "sd"]
    for (g, system), value in means["metric"].items():
        expected = (value - lang.loc[g, "mean"]) / lang.loc[g, "sd"]
        assert rows[(g, system)]["calibrated"] == pytest.approx(expected, abs=1e-9)
    ranks = sorted(rows.values(), key=lambda r: -r["calibrated"])
    assert [r["rank_overall"] for r in ranks] == list(range(1, 10))
    html_table = report.section("leaderboard").tables[0]
    assert html_table.sortable and len(html_table.rows) == 9


def test_svg_has_no_date_and_is_stable():
    from matplotlib.figure import Figure as MplFigure

    def draw():
        fig = MplFigure(figsize=(3, 2))
        fig.add_subplot().plot([1, 3, 2])
        return fig
    a, b = figure_from_matplotlib(draw(), "t"), figure_from_matplotlib(draw(), "t")
    assert a.content == b.content and "<dc:date>" not in a.content
    png = figure_from_matplotlib(draw(), "t", fmt="png")
    assert png.media_type == "image/png" and png.data_uri().startswith("data:image/png;base64,iVBOR")


def test_json_has_the_same_sections_tables_and_warnings_as_html(report):
    page = html.unescape(render_html(report))
    payload = json.loads(render_json(report))
    assert [s["title"] for s in payload["sections"]] == [s.title for s in report.sections]
    for section in payload["sections"]:
        assert f">{section['title']}</h2>" in page
        for table in section["tables"]:
            assert f"<h3>{table['title']}</h3>" in page
            for row in table["rows"]:
                for value in row.values():
                    if isinstance(value, str):
                        assert f">{value}<" in page
        for warning in section["warnings"]:
            assert warning in page


def test_sections_show_the_verification_numbers(evaluation, report):
    # Oracle: the LGN paper's pandas recipe (sd of the per-language means), computed here independently.
    raw_means = evaluation.groupby("tgt_lang")["metric"].mean()
    raw_sd = evaluation.groupby("tgt_lang")["metric"].std()
    facts = dict(report.section("calibration").facts)
    assert facts["sd of group means (segments), raw"] == pytest.approx(raw_means.std(), rel=1e-12)
    # in-sample z-scores of system means (equal segments per system): every language's mean is 0
    assert abs(facts["sd of group means (segments), calibrated"]) < 1e-9
    rows = {r["group"]: r for r in report.section("bias").tables[0].rows}
    for lang, mean in raw_means.items():
        assert rows[lang]["mean_before"] == pytest.approx(mean, rel=1e-12)
        assert rows[lang]["std_before"] == pytest.approx(raw_sd[lang], rel=1e-12)
    headline = {r["score"]: r for r in report.section("bias").tables[1].rows}
    assert headline["raw"]["sd of group means"] == pytest.approx(raw_means.std(), rel=1e-12)
    h = scipy.stats.kruskal(*[g["metric"].to_numpy() for _, g in evaluation.groupby("tgt_lang")])
    assert headline["raw"]["Kruskal-Wallis H"] == pytest.approx(h.statistic, rel=1e-9)
    assert headline["raw"]["Kruskal-Wallis p"] == pytest.approx(h.pvalue, rel=1e-6, abs=1e-300)
    data_rows = {r["group"]: r for r in report.section("data").tables[0].rows}
    assert {k: v["n"] for k, v in data_rows.items()} == evaluation.groupby("tgt_lang").size().to_dict()
    assert all(v["n_systems"] == 3 for v in data_rows.values())


def test_agreement_section_shows_the_diagnosis_numbers(evaluation, report):
    sec = report.section("agreement")
    pooled = {(r["score"], r["level"], r["method"]): r for r in sec.tables[2].rows}
    r = scipy.stats.pearsonr(evaluation["metric"], evaluation["human"])
    assert pooled[("metric", "segment", "pearson")]["estimate"] == pytest.approx(r.statistic, rel=1e-9)
    cells = evaluation.groupby(["tgt_lang", "system"])[["metric", "human"]].mean()
    r = scipy.stats.pearsonr(cells["metric"], cells["human"])
    assert pooled[("metric", "system", "pearson")]["estimate"] == pytest.approx(r.statistic, rel=1e-9)
    acc = {(r["score"], r["pairs"]): r for r in sec.tables[0].rows}
    n_cells = len(cells)  # 9 cells in 3 groups: 27 cross-group pairs, 36 pairs in all
    assert acc[("metric", "cross-group")]["n_pairs"] == n_cells * (n_cells - 3) // 2
    assert acc[("metric", "all pairs")]["n_pairs"] == n_cells * (n_cells - 1) // 2
    for row in acc.values():
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    assert [t.title for t in sec.tables][1] == "Raw vs calibrated: cross-group pairwise accuracy"


def test_missing_scores_are_counted_not_dropped(evaluation):
    df = evaluation.copy()
    df.loc[[0, 5, 7], "metric"] = np.nan
    df.loc[[1, 2], "human"] = np.nan
    rep = mt_report(df, "metric", human="human")
    facts = dict(rep.section("data").facts)
    assert facts["rows"] == len(df)
    assert facts["rows with a missing/non-finite score"] == 3
    assert facts["rows with a human score (human)"] == len(df) - 2


def test_warnings_of_the_analysis_end_up_in_the_report(sim, evaluation):
    # A calibrator fitted without zh: the zh rows of the evaluation are unseen and go to the pooled fallback.
    cal = sim.data[(sim.data["split"] == "calibration") & (sim.data["tgt_lang"] != "zh")]
    model = LGN(by="tgt_lang", score="metric", fallback=["pooled"]).fit(cal)
    rep = mt_report(evaluation, "metric", by="tgt_lang", model=model)
    n_zh = int((evaluation["tgt_lang"] == "zh").sum())
    alerts = [a for a in rep.alerts if a.check == "groups the calibrator has not seen"]
    assert len(alerts) == 1 and f"{n_zh} row(s)" in alerts[0].message and alerts[0].action
    assert dict(rep.meta)["calibration"].startswith("saved LGN (by tgt_lang)")
    zh = [r for r in rep.leaderboard if r["group"] == "zh"]
    with pytest.warns(UnseenGroupWarning):
        pooled = model.transform(pd.DataFrame({"tgt_lang": ["zh"] * 3, "metric": [r["raw"] for r in zh]}))
    assert [r["calibrated"] for r in zh] == pytest.approx(pooled.tolist(), rel=1e-12)


def test_warnings_are_the_checks_that_did_not_pass(evaluation, report):
    rep = mt_report(evaluation, "metric")  # no human column: LGN's assumption is untested
    assert [(a.check, a.status) for a in rep.alerts] == [("LGN validity check, segment level", "untested"),
                                                         ("choice of calibration", "warning")]
    assert "human scores" in rep.alerts[0].action and "label about 100 rows" in rep.alerts[1].message
    payload = json.loads(render_json(rep))
    assert payload["warnings"] == [a.to_dict() for a in rep.alerts]
    assert payload["summary"]["recommendation"] == "lgn"  # no human labels: LGN is the only option, with a warning
    # with human scores every listed check failed, was violated, inconclusive or untested: none that passed
    statuses = {a.status for a in report.alerts}
    assert statuses <= {"violated", "inconclusive", "untested", "failed", "warning"}
    if report.summary["validity"]["status"] == "holds":
        assert not any(a.check.startswith("LGN validity check, system") for a in report.alerts)


def test_inconclusive_checks_are_warnings(evaluation):
    # 3 systems per language cannot settle LGN's assumption at system level: listed with what to do
    rep = mt_report(evaluation, "metric", human="human", method="anchored")
    inconclusive = [a for a in rep.alerts if a.status == "inconclusive"]
    assert [a.check for a in inconclusive] == ["LGN validity check, system level"] and inconclusive[0].action


def test_one_system_per_group_is_not_calibrated_by_lgn(evaluation):
    rep = mt_report(evaluation, "metric", method="lgn", system=None)  # each group is one "system"
    assert [r["system"] for r in rep.leaderboard] == ["(all rows)"] * 3
    assert all(r["calibrated"] == r["raw"] for r in rep.leaderboard)
    assert any("LGN was not applied" in a.message for a in rep.alerts)


def test_text_is_escaped(evaluation):
    df = evaluation.assign(grp=np.where(evaluation["tgt_lang"] == "de", "<b>x</b>", "y & z"))
    page = render_html(mt_report(df, "metric", by="grp"))
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and "y &amp; z" in page


def test_result_section_lays_out_any_result():
    est = Estimate(0.5, 0.4, 0.6, 0.95, 30, "bootstrap-bca", notes=("stratum 'xx' has 2 items: unreliable",),
                   distribution=np.arange(100.0))
    payload = {"overall": est.to_dict(), "per_group": [{"group": "de", "n": 3}, {"group": "fi", "n": 4}],
               "by_metric": {"bleu": {"r": 0.3, "p": 0.01}, "chrf": {"r": 0.4, "p": 0.02}}}
    sec = result_section("Some analysis", payload)
    assert [t.title for t in sec.tables] == ["overall", "per_group", "by_metric"]
    overall = {r["field"]: r["value"] for r in sec.tables[0].rows}
    assert overall["estimate"] == 0.5 and overall["ci_high"] == 0.6
    assert "p_value" not in overall or overall["p_value"] is None
    assert sec.tables[2].rows[0] == {"key": "bleu", "r": 0.3, "p": 0.01}
    assert sec.warnings == ("overall: stratum 'xx' has 2 items: unreliable",)
    assert "distribution" not in json.dumps(sec.to_dict())
    top = result_section("Estimate", est)
    assert top.facts[0] == ("estimate", 0.5) and top.warnings == ("stratum 'xx' has 2 items: unreliable",)
    empty_column = result_section("x", {"t": [{"a": 1, "b": None}, {"a": 2, "b": None}]})
    assert empty_column.tables[0].columns == ["a"]


def test_generic_section_and_extra_sections_render(evaluation):
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(3, 2))
    fig.add_subplot().bar(["a", "b"], [1, 2])
    extra = generic_section("Fairness gaps", tables=[("ratio to en", pd.DataFrame({"lang": ["de"], "ratio": [0.9]}))],
                            figures=[figure_from_matplotlib(fig, "gap plot")], paragraphs=["from fairness"])
    rep = build_mt_report(analyze_mt(evaluation, "metric"), extra_sections=(extra,))
    page = render_html(rep)
    assert rep.section("fairness-gaps").tables[0].rows == ({"lang": "de", "ratio": 0.9},)
    assert "<h3>ratio to en</h3>" in page and page.count("<img ") == 3  # distributions, means, the extra one
    assert [s.id for s in rep.sections][-2:] == ["fairness-gaps", "data"]


def test_nan_is_rendered_as_missing_and_json_stays_valid():
    table = Table.from_records("T", [{"a": float("nan"), "b": np.float64(1.5)}])
    rep = Report("t", (generic_section("S", tables=[table],
                                       facts={"x": float("inf")}),))
    assert json.loads(render_json(rep))["sections"][0]["tables"][0]["rows"] == [{"a": None, "b": 1.5}]
    assert "<td>–</td>" in render_html(rep)


def test_bad_format_is_an_input_error(report, tmp_path):
    from xleval.exceptions import InputError

    with pytest.raises(InputError, match="html or json"):
        write_report(report, tmp_path / "r.pdf", fmt="pdf")
    with pytest.raises(InputError, match="no column 'nope'"):
        mt_report(pd.DataFrame({"tgt_lang": ["de"], "metric": [1.0]}), "nope")


def test_figure_data_uri_roundtrip():
    from urllib.parse import unquote

    fig = Figure("t", "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'><!-- 50% #1 --></svg>")
    uri = fig.data_uri()
    assert unquote(uri.split(",", 1)[1]) == fig.content and "#" not in uri and '"' not in uri


def test_figures_carry_a_title_and_their_axis_labels(report):
    for section in report.sections:
        for fig in section.figures:
            assert f"<title>{html.escape(fig.title)}</title>" in fig.content
            assert fig.axes and all(x and y for x, y in fig.axes), (fig.title, fig.axes)
            assert re.search(r'<g id="xlabel-', fig.content) and re.search(r'<g id="ylabel-', fig.content)


def test_numbers_are_formatted_for_reading(report):
    page = render_html(report)
    assert "e-1" not in page.split("<footer>")[0].split("<img")[0]  # no 1.86e-15 style noise before the figures
    calibration = page[page.index('<section id="calibration">'):page.index('<section id="agreement">')]
    row = re.search(r"<dt>sd of group means \(segments\), calibrated</dt><dd>([^<]*)</dd>", calibration)
    assert row.group(1) == "0"  # in-sample rounding noise reads 0
    bias = page[page.index('<section id="bias">'):page.index('<section id="calibration">')]
    assert "p &lt; 0.001" in bias and ">&lt; 0.001</td>" in bias  # Kruskal-Wallis p of the planted bias (0.00094)
    kruskal = [p for p in report.section("bias").paragraphs if p.startswith("Kruskal-Wallis")]
    assert len(kruskal) == 1 and "p = 0.000941" in kruskal[0]  # as the analysis wrote it (the JSON keeps it)


def test_the_budget_curve_is_drawn_when_the_recommendation_has_one(evaluation):
    # The curve comes from the calibration evaluation (accuracy against human labels per group); the report
    # draws it in the summary, with the methods that need no labels as horizontal lines.
    from unittest.mock import patch

    analysis = analyze_mt(evaluation, "metric", by="tgt_lang", human="human", method="lgn",
                          resampling=Resampling(n_resamples=50))
    curve = pd.DataFrame({"labels_per_group": [5, 10, 20, 40] * 2, "method": ["anchored"] * 4 + ["anchored+lgn"] * 4,
                          "accuracy": [0.6, 0.7, 0.75, 0.8, 0.65, 0.72, 0.76, 0.79],
                          "ci_low": [0.5, 0.6, 0.7, 0.75, 0.55, 0.62, 0.7, 0.74],
                          "ci_high": [0.7, 0.8, 0.8, 0.85, 0.75, 0.8, 0.82, 0.84]})
    decision = analysis.recommendation
    with patch.object(type(decision), "budget_curve", property(lambda self: curve)):  # the decision's own curve
        summary = build_mt_report(analysis).section("summary")
    titles = [f.title for f in summary.figures]
    assert titles == ["System scores against human scores", "Accuracy against the number of human labels per group"]
    budget = summary.figures[1]
    assert budget.axes == (("human labels per tgt_lang", "cross-group accuracy (out of fold)"),)
    assert "anchored+lgn" in budget.content  # legend entries are drawn as text (paths with the text as a comment)
    assert len(build_mt_report(analysis).section("summary").figures) == 1


def test_without_systems_anchored_keeps_the_real_difference():
    # zh is truly worse (planted): LGN would erase that and the segment-level check fails; every group has
    # labels, so anchored calibration is recommended and keeps zh's difference on the human scale.
    sim = simulate_mt_evaluation(n_systems=3, n_segments=40, languages=("de", "fi", "zh"), seed=3,
                                 language_effect={"zh": -1.0})
    ev = sim.data[sim.data["split"] == "evaluation"].drop(columns=["system"]).reset_index(drop=True)
    rep = mt_report(ev, "metric", by="tgt_lang", human="human", resampling=Resampling(n_resamples=100))
    assert rep.summary["recommendation"] == "anchored" and rep.summary["validity"]["level"] == "segment"
    assert [(a.check, a.status) for a in rep.alerts] == [("LGN validity check, segment level", "violated")]
    human = ev.groupby("tgt_lang")["human"].mean()
    calibrated = {r["group"]: r["calibrated"] for r in rep.leaderboard}
    for g, value in calibrated.items():  # on the human scale, near the group's human mean (offsets are shrunk)
        assert value == pytest.approx(human[g], abs=0.05)
    assert calibrated["zh"] < min(calibrated["de"], calibrated["fi"]) - 0.8  # the planted difference is kept


def test_long_group_names_are_cut_on_axes_but_drawn_without_layout_collapse():
    """Eight long names under two stacked panels squeezed the axes to nothing (matplotlib warned that
    constrained layout was not applied); the tick labels are cut, one line each."""
    import numpy as np

    from xleval.report._plots import TICK_CHARS, score_distributions_figure, tick_label

    assert tick_label("two\nlines") == "two\\x0alines"  # as the tables show it: "g\\x092" and "g 2" stay two groups
    assert tick_label("g\t2") != tick_label("g 2")
    long = "[link=https://evil.example/x]totally-safe[/link]"
    assert tick_label(long) == long[:TICK_CHARS - 1] + "\u2026" and len(tick_label(long)) == TICK_CHARS
    groups = [f"{long}-{i}" for i in range(8)]
    values = [np.random.default_rng(i).normal(size=30) for i in range(8)]
    fig = score_distributions_figure(groups, values, values, score="s", group_label="system")
    figure_from_matplotlib(fig, "distributions")  # pytest turns the layout warning into an error
    assert all(len(t.get_text()) <= TICK_CHARS for ax in fig.axes for t in ax.get_xticklabels())


def test_box_plots_say_when_they_leave_out_the_outliers(report, monkeypatch, evaluation):
    """Issue 23, item 14: above FLIERS_UP_TO rows a group's box plot draws no points beyond the
    whiskers; the caption says so (and says dots are those points when they are drawn)."""
    from xleval.report import _mt, _plots

    def caption(rep):
        section = next(s for s in rep.sections if s.id == "distributions")
        return section.figures[0].caption

    assert "Dots: segments beyond the whiskers." in caption(report)
    for module in (_mt, _plots):  # the small table now counts as large, for the plot and its caption
        monkeypatch.setattr(module, "FLIERS_UP_TO", 10)
    big = mt_report(evaluation, "metric", human="human", method="lgn")
    assert "not drawn" in caption(big) and "more than 10" in caption(big)
