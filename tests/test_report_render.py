"""The HTML/JSON report: deterministic, self-contained, the same content in both formats, and every
number it shows traceable to the result objects (checked against independent pandas computations)."""
from __future__ import annotations

import html
import json
import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from xleval.calibration import LGN
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
from xleval.stats import Estimate
from xleval.synthetic import simulate_mt_evaluation


@pytest.fixture(scope="module")
def sim():
    return simulate_mt_evaluation(n_systems=3, n_segments=40, languages=("de", "fi", "zh"), seed=3)


@pytest.fixture(scope="module")
def evaluation(sim):
    return sim.data[sim.data["split"] == "evaluation"].reset_index(drop=True)


@pytest.fixture(scope="module")
def report(evaluation):
    return mt_report(evaluation, "metric", human="human")


def test_same_input_renders_the_same_bytes(evaluation, report, tmp_path):
    again = mt_report(evaluation.copy(), "metric", human="human")
    assert render_html(again) == render_html(report)
    assert render_json(again) == render_json(report)
    write_report(report, tmp_path / "a.html")
    write_report(again, tmp_path / "b.html")
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


def test_html_is_self_contained(report):
    page = render_html(report)
    assert "<script" not in page.lower() and "<link" not in page.lower() and "@import" not in page
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert len(sources) == 2 and all(s.startswith("data:image/svg+xml;base64,") for s in sources)
    assert not re.search(r'(src|href)="(https?:)?//', page)


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


def test_sections_show_the_seed_verification_numbers(evaluation, report):
    # Oracle: the seed's own pandas recipe (section 3.4), computed here independently.
    raw_means = evaluation.groupby("tgt_lang")["metric"].mean()
    raw_sd = evaluation.groupby("tgt_lang")["metric"].std()
    facts = dict(report.section("calibration").facts)
    assert facts["sd of group means, raw"] == pytest.approx(raw_means.std(), rel=1e-12)
    assert abs(facts["sd of group means, calibrated"]) < 1e-9  # in-sample z-scores: every mean is the target 0
    rows = {r["group"]: r for r in report.section("bias").tables[0].rows}
    for lang, mean in raw_means.items():
        assert rows[lang]["mean_before"] == pytest.approx(mean, rel=1e-12)
        assert rows[lang]["std_before"] == pytest.approx(raw_sd[lang], rel=1e-12)
    headline = {r["statistic"]: r for r in report.section("bias").tables[1].rows}
    assert headline["sd of group means"]["raw"] == pytest.approx(raw_means.std(), rel=1e-12)
    h = scipy.stats.kruskal(*[g["metric"].to_numpy() for _, g in evaluation.groupby("tgt_lang")])
    assert headline["Kruskal-Wallis H"]["raw"] == pytest.approx(h.statistic, rel=1e-9)
    assert headline["Kruskal-Wallis H"]["raw p"] == pytest.approx(h.pvalue, rel=1e-6, abs=1e-300)
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
    assert any("validity check" in w for w in report.section("warnings").warnings)


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
    rep = mt_report(evaluation, "metric", model=model)
    n_zh = int((evaluation["tgt_lang"] == "zh").sum())
    assert any(t.startswith("UnseenGroupWarning") and str(n_zh) in t for t in rep.section("warnings").warnings)
    assert dict(rep.meta)["calibrator"] == "LGN loaded from file"
    sources = {r["source"]: r["rows"] for r in rep.section("calibration").tables[1].rows}
    assert sources == {"pooled": n_zh, "tgt_lang": len(evaluation) - n_zh}


def test_small_groups_are_reported_as_warnings(evaluation):
    rep = mt_report(evaluation, "metric")  # 120 rows per group, LGN's default min_count is 50: no warning
    texts = rep.section("warnings").warnings
    assert len(texts) == 1 and texts[0].startswith("LGN validity check (untested)")  # no human column
    small = evaluation[(evaluation["tgt_lang"] != "fi") | (evaluation["seg_id"] <= 5)]
    rep = mt_report(small, "metric")
    assert any(t.startswith("SmallGroupWarning") and "fi" in t for t in rep.section("warnings").warnings)


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
    assert "<h3>ratio to en</h3>" in page and page.count("<img ") == 3
    assert [s.id for s in rep.sections][-2:] == ["fairness-gaps", "warnings"]


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
    import base64

    fig = Figure("t", "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>")
    assert base64.b64decode(fig.data_uri().split(",", 1)[1]).decode() == fig.content
