"""Every report section from result objects: the meta-evaluation and output-check sections that
``xleval report --meta/--output-checks`` writes come from ``mt_report(..., meta=, output_checks=)`` too;
meta's HTML shows the numbers of its text output, each estimate beside its own interval; no result that
reaches a page is dumped as "key: value" cells; meta's answer names every variant inside the winner's CI
and the rule that chose; the meta and output-check packages do not import the report."""
from __future__ import annotations

import ast
import html
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from test_meta_calibrated import _table as _calibrated_table
from test_report_analyses import audit_result, confounds, fairness  # noqa: F401  (fixtures)
from xleval.decision import Procedure
from xleval.meta import Clustering, MetaStatistics, meta_calibrations, meta_evaluate
from xleval.meta._render import render_text
from xleval.report import (
    Report,
    analysis_report,
    leaderboard_report,
    mt_report,
    render_html,
    result_section,
    section_for,
)
from xleval.stats import Resampling

SRC = Path(__file__).resolve().parents[1] / "src" / "xleval"


def _section(page: str, section_id: str) -> str:
    found = re.search(rf'<section id="{section_id}">.*?</section>', page, re.DOTALL)
    assert found is not None, section_id
    return found.group()


def _html_tables(fragment: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) of every table in an HTML fragment, cell texts unescaped."""
    out = []
    for title, head, body in re.findall(r"<h3>(.*?)</h3>.*?<thead>(.*?)</thead>\s*<tbody>(.*?)</tbody>", fragment,
                                        re.DOTALL):
        header = [html.unescape(c) for c in re.findall(r"<th[^>]*>(.*?)</th>", head)]
        rows = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
                for r in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL)]
        out.append((html.unescape(title), header, rows))
    return out


def _text_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """(title, rows) of every table of meta's text output (a title, a header, a rule of dashes, rows)."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if i >= 2 and line and set(line.replace(" ", "")) == {"-"}:
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(re.split(r"\s{2,}", row.strip()))
            out.append((lines[i - 2], rows))
    return out


def _texts_table(tmp_path, seed=4):
    rng = np.random.default_rng(seed)
    refs = ["the cat sat on the mat", "a dog barks in the garden", "we drive to berlin tomorrow", "it is sunny today"]
    rows = []
    for lp in ("en-de", "en-fr"):
        for q, s in enumerate("ABCDE"):
            for i, ref in enumerate(refs * 3):
                hyp = " ".join(w if rng.random() < 0.3 + 0.15 * q else "x" for w in ref.split())
                hyp = "" if (s, i) == ("A", 0) else hyp  # one empty output: the output checks have a flag to show
                rows.append({"lp": lp, "system": s, "seg_id": i, "source": f"quelle {i} {lp}", "hypothesis": hyp,
                             "reference": ref, "human": q + rng.normal(0, 0.3), "score": q + rng.normal(0, 0.5)})
    path = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def test_python_report_gives_the_cli_sections(tmp_path):
    """`xleval report --meta chrf,ter --output-checks` and mt_report(..., meta=meta_evaluate(...),
    output_checks=check_outputs(...)) write the same two sections, byte for byte."""
    from xleval.io import read_table
    from xleval.meta import score_missing_metrics
    from xleval.output_checks import check_outputs

    path = _texts_table(tmp_path)
    page = tmp_path / "r.html"
    r = run_cli("report", str(path), "--score", "score", "--human", "human", "--meta", "chrf,ter", "--output-checks",
                "--n-resamples", "50", "-o", str(page))
    assert r.exit_code == 0, r.stderr
    df = read_table(path)
    scored, computed = score_missing_metrics(df, ["chrf", "ter"])
    assert sorted(computed) == ["chrf", "ter"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = meta_evaluate(scored, ["chrf", "ter"], "human", by="lp",
                             resampling=Resampling(n_resamples=50, random_state=0))
        checks = check_outputs(df, by="lp", metrics=("score",))
        report = mt_report(df, "score", human="human", resampling=Resampling(n_resamples=50, random_state=0), meta=meta,
                           output_checks=checks)
    ours = render_html(report)
    cli = page.read_text(encoding="utf-8")
    for section_id in ("meta-evaluation", "output-checks"):
        assert _section(ours, section_id) == _section(cli, section_id), section_id
    ids = [s.id for s in report.sections]
    assert ids.index("output-checks") < ids.index("meta-evaluation") < ids.index("data")
    assert "ter" in meta.notes[0] or any("lower is better for ter" in n for n in meta.notes)


@pytest.fixture(scope="module")
def meta_results():
    """Four groups on one raw scale; 'offset' follows humans with a per-group offset, 'noise' does not (the
    table of tests/test_meta_calibrated.py, with names that need escaping)."""
    df = _calibrated_table().rename(columns={"offset": "metric:offset", "noise": "metric:noise"})
    names = ["metric:noise", "metric:offset"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = meta_evaluate(df, names, "human", statistics=MetaStatistics(human_scale="raw", chance=True),
                             resampling=Resampling(n_resamples=50),
                             clustering=Clustering(statistics=("sys_pearson",), n_resamples=20))
        calibrated = meta_calibrations(df, names, "human", calibrations="raw,lgn,anchored@20", human_scale="raw",
                                       procedure=Procedure(n_folds=2, n_repeats=1, random_state=1), meta=meta)
    return meta, calibrated


def _interval(text: str) -> tuple[float, float]:
    low, high = text.split(" to ")
    return float(low), float(high)


def test_across_groups_shows_each_accuracy_with_its_own_interval(meta_results):
    """The page showed global accuracy with the cross-group accuracy's CI (two columns named "95% CI", the
    second overwrote the first): each accuracy now sits beside its own interval."""
    meta, _ = meta_results
    page = render_html(analysis_report("meta", [meta]))
    across = next(t for t in _html_tables(_section(page, "meta-evaluation")) if t[0].startswith("Across groups"))
    _, header, rows = across
    assert header == ["metric", "global acc", "global acc 95% CI", "cross-group acc", "cross-group acc 95% CI"]
    for row, metric in zip(rows, meta.metrics, strict=True):
        cells = dict(zip(header, row, strict=True))
        for name, found in (("global acc", meta.global_accuracy), ("cross-group acc", meta.cross_accuracy)):
            cell = found[metric]
            low, high = _interval(cells[f"{name} 95% CI"])
            assert low == pytest.approx(cell.ci_low, abs=0.006) and high == pytest.approx(cell.ci_high, abs=0.006)
            assert low <= cell.value <= high
            assert float(cells[name].split()[0]) == pytest.approx(cell.value, abs=0.0006)
    glob, cross = meta.global_accuracy["metric:offset"], meta.cross_accuracy["metric:offset"]
    assert abs(glob.ci_low - cross.ci_low) > 0.05  # the two intervals differ: a swap would fail above


def test_meta_page_numbers_are_its_text_numbers(meta_results):
    """Every table of the page, row by row, reads as the text output's table (same cells, same digits),
    cluster ranks and chance baselines included; the answer leads the calibrated section."""
    meta, calibrated = meta_results
    page = render_html(analysis_report("meta", [meta, calibrated]))
    shown = _html_tables(_section(page, "meta-evaluation")) + _html_tables(_section(page, "calibrated-variants"))
    text = _text_tables(render_text(meta, calibrated))
    assert len(shown) == len(text) >= 8
    for (title, _, rows), (text_title, text_rows) in zip(shown, text, strict=True):
        assert title.split(" (")[0] == text_title.split(" (")[0]
        assert rows == text_rows, title
    assert any("[1]" in c and "~" in c for _, _, rows in shown for r in rows for c in r)  # ranks and chance shown
    assert calibrated.answer[1:] in html.unescape(_section(page, "calibrated-variants"))
    assert "key" not in {h for _, header, _ in shown for h in header}


# "estimate: 0.454, ci_low: 0.3, ..." -- an object printed as a cell (a verdict such as "no: groups differ ..." is
# no dump: one key, no field list)
def test_meta_command_page_numbers_are_its_text_numbers(tmp_path):
    """`xleval meta --calibrations ... --report page.html -o text.txt`: the page's tables, row by row, are the
    text file's; the answer leads the calibrated section; no cell is an object's dump."""
    rng = np.random.default_rng(5)
    rows = [{"lp": g, "system": f"{g}-{s}", "seg_id": i, "human": q + rng.normal(0, 10),
             "metric:a": q + b + rng.normal(0, 8), "metric:b": rng.normal(0, 10)}
            for g, b in (("en-de", 0.0), ("en-fr", 20.0), ("en-zh", -10.0)) for s, q in enumerate(rng.normal(70, 8, 6))
            for i in range(20)]
    path = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    page, text = tmp_path / "r.html", tmp_path / "t.txt"
    r = run_cli("meta", str(path), "--metrics-prefix", "metric:", "--human", "human", "--human-scale", "raw",
                "--calibrations", "raw,lgn,anchored@10", "--folds", "2", "--repeats", "1", "--n-resamples", "50",
                "--chance", "--report", str(page), "-o", str(text))
    assert r.exit_code == 0, r.stderr
    shown = page.read_text(encoding="utf-8")
    tables = _html_tables(_section(shown, "meta-evaluation")) + _html_tables(_section(shown, "calibrated-variants"))
    printed = _text_tables(text.read_text(encoding="utf-8"))
    assert len(tables) == len(printed) >= 7
    for (_, _, html_rows), (title, text_rows) in zip(tables, printed, strict=True):
        assert html_rows == text_rows, title
    answer = next(line for line in text.read_text(encoding="utf-8").splitlines() if line.startswith("answer: "))
    assert answer.removeprefix("answer: a") in html.unescape(_section(shown, "calibrated-variants"))
    assert _dumped_cells(shown) == []


_DUMP = re.compile(r"^[A-Za-z_][\w.]*: .*?, [A-Za-z_][\w.]*: ")


def _dumped_cells(page: str) -> list[str]:
    cells = re.findall(r"<td[^>]*>(.*?)</td>", page, re.DOTALL) + re.findall(r"<dd>(.*?)</dd>", page, re.DOTALL)
    return [c for c in (html.unescape(x) for x in cells) if _DUMP.search(c)]


def test_no_result_reaching_a_page_is_dumped(meta_results, fairness, audit_result, confounds, tmp_path):  # noqa: F811
    """Every result class that reaches HTML (the analyses of section_for, the MT report with its meta and
    output-check sections, the leaderboard page) renders without a "key: value" cell."""
    from xleval.output_checks import check_outputs

    meta, calibrated = meta_results
    df = pd.read_csv(_texts_table(tmp_path), sep="\t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checks = check_outputs(df, by="lp", metrics=("score",))
        report = mt_report(df, "score", human="human", resampling=Resampling(n_resamples=30), meta=meta,
                           output_checks=checks)
    pages = {type(r).__name__: render_html(analysis_report("x", [r]))
             for r in (meta, calibrated, checks, fairness, audit_result, confounds)}
    pages["mt_report"] = render_html(report)
    pages["leaderboard"] = render_html(leaderboard_report(_board(df)))
    # the generic layout of any result (nested results in records were dumped: "estimate: 0.454, ci_low: ...")
    pages["generic"] = render_html(Report("x", (result_section("CalibratedMeta", calibrated),)))
    assert {section_for(r).id for r in (meta, calibrated, checks)} == {"meta-evaluation", "calibrated-variants",
                                                                      "output-checks"}
    for name, page in pages.items():
        assert _dumped_cells(page) == [], name


def _board(df):
    from xleval.leaderboard import leaderboard

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return leaderboard(df, "score", "lp", system="system", human="human", resampling=Resampling(n_resamples=30))


def test_answer_names_every_variant_inside_the_winners_ci_and_the_rule(meta_results):
    _, calibrated = meta_results
    win = calibrated.accuracy
    inside = [v for v in calibrated.variants if (v.metric, v.calibration) != (calibrated.metric,
                                                                               calibrated.calibration)
              and win.ci_low <= v.accuracy.estimate <= win.ci_high]
    for v in inside:
        assert f"{v.metric} with {v.calibration} ({v.accuracy.estimate:.3f})" in calibrated.answer
    assert ("no other variant inside that CI" in calibrated.answer) == (not inside)
    assert f"How {calibrated.metric}'s calibration was chosen" in calibrated.answer
    assert "a tie goes to the metric listed first" in calibrated.answer


def test_answer_with_tied_calibrations_names_them_and_the_tie_rule():
    """Without a language bias, raw scores and anchored calibration cannot be told apart (the paired interval
    includes 0): the tie rule applies anchored although raw scored higher, and the answer names the raw
    variant and says that the tie rule chose (issue 34: the better LGN variants went unnamed)."""
    rng = np.random.default_rng(3)
    rows = []
    for g in ("en-de", "en-fr", "en-zh", "en-ja"):
        for s in range(8):
            q = rng.normal(70, 8)
            for _ in range(30):
                h = q + rng.normal(0, 10)
                rows.append({"lp": g, "system": f"{g}-{s}", "human": h, "m": h + rng.normal(0, 4)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_calibrations(pd.DataFrame(rows), ["m"], "human", calibrations="raw,lgn,anchored@20",
                                human_scale="raw", procedure=Procedure(n_folds=2, n_repeats=1, random_state=0))
    acc = {v.calibration: v.accuracy.estimate for v in res.variants}
    assert res.calibration == "anchored@20" and acc["raw"] > acc["anchored@20"]
    assert f"m with raw ({acc['raw']:.3f})" in res.answer
    assert "by the tie rule of its decision" in res.answer and "the tie rule applies anchored" in res.answer
    assert "metric listed first" not in res.answer  # one metric: no rule among metrics to state


def test_answer_lists_variants_inside_and_above_the_ci_best_first():
    """Issue 34's case by hand: the winner 0.702 (CI 0.631 to 0.765); LGN variants at 0.704 and 0.736 lie
    inside and must be named, 0.600 lies below and is not, 0.790 lies above and is named as above."""
    from xleval.meta import CalibratedVariant
    from xleval.meta._calibrated import _others
    from xleval.stats import Estimate

    def est(x, low=0.0, high=1.0):
        return Estimate(x, low, high, 0.95, 40, "test")

    win = est(0.702, 0.631, 0.765)
    variants = [CalibratedVariant("chrf++", "anchored@100", win, est(0.9)),
                CalibratedVariant("chrf++", "lgn", est(0.704), est(0.9)),
                CalibratedVariant("chrf", "lgn", est(0.736), est(0.9)),
                CalibratedVariant("bleu", "raw", est(0.600), est(0.9)),
                CalibratedVariant("bleu", "lgn", est(0.790), est(0.9))]
    assert _others(variants, "chrf++", "anchored@100", win) == (
        "; inside that CI: chrf with lgn (0.736), chrf++ with lgn (0.704); above it: bleu with lgn (0.790)")
    assert _others(variants[:1], "chrf++", "anchored@100", win) == "; no other variant inside that CI"


def _imports(package: str) -> set[tuple[str, str]]:
    """(module file, imported module, resolved to xleval.X) of every import in a package's source."""
    found = set()
    for path in (SRC / package).rglob("*.py"):
        parts = ["xleval", *path.relative_to(SRC).with_suffix("").parts]
        here = parts[:-1]  # the package the module is in
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                found |= {(path.name, f"{target}.{a.name}" if not node.module else target) for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {(path.name, a.name) for a in node.names}
    return found


def test_meta_and_output_checks_do_not_import_the_report():
    """The arrows run one way: the report lays out meta's and the output checks' results; neither package
    imports the report, and the report reads meta's result types, not its text renderers."""
    for package in ("meta", "output_checks"):
        up = {(f, m) for f, m in _imports(package) if m == "xleval.report" or m.startswith("xleval.report.")}
        assert up == set(), package
    private = {(f, m) for f, m in _imports("report") if m.startswith("xleval.meta._")
               or m.startswith("xleval.output_checks._")}
    assert private == set()
