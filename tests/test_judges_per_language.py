"""Judges in the analyses (issue 37 item 3): per-language agreement in ``xleval meta`` and the report section
"Judges per language", judge columns found by their signatures, and a judge column calibrated and reported like
any metric.

Every figure is recomputed here independently: Kendall's tau-b and Pearson's r with scipy, the weighted kappa from
its definition (a confusion matrix of the quantile classes built by hand), the pairwise system-order agreement from
the system means; on the shared WMT25 scores, the Kendall of the two GEMBA judges read from the raw JSONL files
with json.loads (not through xleval's reader)."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from xleval.exceptions import InputError
from xleval.io import add_language_columns, read_table, write_table
from xleval.judges import judge_agreement, judge_columns
from xleval.stats import Resampling

JUDGE_SIG = "model:m|sha:0123|prompt:gemba-esa|prompt-sha:abc|refs:no|decode:greedy|xleval:0.1.0"
INGESTED = "ingested:wmt25-automatic-scores|metric:GEMBA-X|sha:1|judge:yes|xleval:0.1.0"
METRIC_SIG = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


def _table(seed: int = 0) -> pd.DataFrame:
    """Two language pairs, 4 systems, 12 segments; judges A and B (B noisier in en-fr), a metric M, humans."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, noise in (("de-en", 4.0), ("en-fr", 25.0)):
        for s, level in enumerate((50, 60, 70, 80)):
            for seg in range(12):
                quality = level + rng.normal(0, 10)
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": seg, "human": quality + rng.normal(0, 3),
                             "A": quality + rng.normal(0, 4), "B": quality + rng.normal(0, noise) + 5,
                             "M": quality / 100 + rng.normal(0, 0.05)})
    return pd.DataFrame(rows)


def _write(df: pd.DataFrame, path, signatures) -> None:
    write_table(df, path, metadata={"signatures": signatures})


def _kappa_by_hand(x: np.ndarray, y: np.ndarray, k: int = 5) -> float:
    """Quadratically weighted kappa of quantile classes: distinct values, class = floor(k * p) of the percentile
    rank p = (rank - 1/2) / n."""
    n = len(x)
    cx = np.floor(k * (np.argsort(np.argsort(x)) + 0.5) / n).astype(int)
    cy = np.floor(k * (np.argsort(np.argsort(y)) + 0.5) / n).astype(int)
    confusion = np.zeros((k, k))
    for i, j in zip(cx, cy, strict=True):
        confusion[i, j] += 1
    confusion /= n
    expected = np.outer(confusion.sum(1), confusion.sum(0))
    w = np.array([[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)])
    return 1 - (w * confusion).sum() / (w * expected).sum()


def _pairwise_by_hand(part: pd.DataFrame) -> float:
    means = part.groupby("system")[["A", "B"]].mean()
    names = list(means.index)
    same = [np.sign(means.loc[p, "A"] - means.loc[q, "A"]) == np.sign(means.loc[p, "B"] - means.loc[q, "B"])
            for i, p in enumerate(names) for q in names[i + 1:]]
    return float(np.mean(same))


def test_judge_columns_from_signatures():
    sigs = {"A": JUDGE_SIG, "B": INGESTED, "M": METRIC_SIG,
            "A_anchored": f"anchored|by:lp|human:human|level:segment|of:{JUDGE_SIG}",
            "P": f"tgt_lang=de: {JUDGE_SIG} ; tgt_lang=fr: {JUDGE_SIG}",
            "Q": f"tgt_lang=de: {JUDGE_SIG} ; tgt_lang=fr: {METRIC_SIG}"}
    # a calibrated judge is a calibrated score; per language, every language's signature must say judge
    assert judge_columns(sigs) == ["A", "B", "P"]
    assert judge_columns(sigs, ["M", "B", "A", "nosig"]) == ["B", "A"]
    assert judge_columns(None) == []


def test_meta_prints_per_language_agreement_checked_independently(tmp_path, cli):
    df = _table()
    path = tmp_path / "t.parquet"
    _write(df, path, {"A": JUDGE_SIG, "B": INGESTED, "M": METRIC_SIG})
    rc, out, err = cli("meta", str(path), "--format", "json")  # no --human: the judges found by signature
    assert rc == 0, err
    got = pd.DataFrame(json.loads(out)["judges"]["table"]).set_index("group")
    assert (got["a"] == "A").all() and (got["b"] == "B").all()
    for lp, part in df.groupby("lp"):
        a, b = part["A"].to_numpy(), part["B"].to_numpy()
        assert got.loc[lp, "kendall"] == pytest.approx(stats.kendalltau(a, b).statistic)
        assert got.loc[lp, "pearson"] == pytest.approx(stats.pearsonr(a, b).statistic)
        assert got.loc[lp, "kappa"] == pytest.approx(_kappa_by_hand(a, b))
        assert got.loc[lp, "pairwise"] == pytest.approx(_pairwise_by_hand(part))
        assert got.loc[lp, "mean_b"] - got.loc[lp, "mean_a"] == pytest.approx(b.mean() - a.mean())
    assert got.loc["en-fr", "kendall"] < got.loc["de-en", "kendall"]  # B is noisier there
    pooled = df.assign(system=df["lp"] + "/" + df["system"])
    assert got.loc["*", "pairwise"] == pytest.approx(_pairwise_by_hand(pooled))  # (lp, system) units
    rc, text, err = cli("meta", str(path))
    assert rc == 0, err
    assert "Judges per lp" in text and "agree least in en-fr" in text
    assert text.index("en-fr") < text.index("de-en")  # lowest Kendall first


def test_meta_with_human_adds_the_judges_in_every_format(tmp_path, cli):
    df = _table(1)
    path = tmp_path / "t.parquet"
    _write(df, path, {"A": JUDGE_SIG, "B": JUDGE_SIG, "M": METRIC_SIG})
    common = ["meta", str(path), "--human", "human", "--metrics", "A,M", "--no-spa", "--no-pdp",
              "--n-resamples", "50"]
    rc, text, err = cli(*common)
    assert rc == 0, err
    assert text.index("Meta-evaluation of 2 metric(s)") < text.index("Judges per lp")
    rc, tsv, err = cli(*common, "--format", "tsv", "--judges", "A,M")  # named: a judge and a metric
    assert rc == 0, err
    tidy = pd.read_csv(pd.io.common.StringIO(tsv), sep="\t")
    row = tidy[(tidy["statistic"] == "judges_kendall") & (tidy["group"] == "de-en")]
    part = df[df["lp"] == "de-en"]
    assert row["metric"].tolist() == ["A~M"]
    assert row["value"].iloc[0] == pytest.approx(stats.kendalltau(part["A"], part["M"]).statistic)
    assert {"sys_pearson", "judges_pairwise"} <= set(tidy["statistic"])
    rc, latex, err = cli(*common, "--format", "latex")
    assert rc == 0, err and "\\begin{tabular}{lllrrrrr}" in latex
    rc, text, err = cli(*common, "--judges", "none")
    assert rc == 0, err and "Judges per" not in text
    report = tmp_path / "meta.html"
    rc, _, err = cli(*common, "-o", str(tmp_path / "m.txt"), "--report", str(report))
    assert rc == 0, err
    html = report.read_text(encoding="utf-8")
    assert 'id="judges-per-language"' in html and 'id="meta-evaluation"' in html


def test_meta_refuses_without_human_and_judges(tmp_path, cli):
    df = _table()
    path = tmp_path / "t.parquet"
    _write(df, path, {"A": JUDGE_SIG, "M": METRIC_SIG})  # one judge only
    rc, _, err = cli("meta", str(path))
    assert rc == 2 and "no --human and fewer than two judge columns" in err and err.count("\n") == 1
    rc, _, err = cli("meta", str(path), "--metrics", "A,M")
    assert rc == 2 and "give the human column with --human" in err


def test_report_section_present_with_two_judges_absent_without(tmp_path, cli):
    from xleval.report import mt_report, render_html, render_json

    df = _table()
    agreement = judge_agreement(df, ["A", "B"])
    with_judges = mt_report(df, "A", human="human", judges=agreement, resampling=Resampling(n_resamples=50))
    without = mt_report(df, "A", human="human", resampling=Resampling(n_resamples=50))
    ids = [s.id for s in with_judges.sections]
    assert "judges-per-language" in ids and "judges-per-language" not in [s.id for s in without.sections]
    section = json.loads(render_json(with_judges))["sections"][ids.index("judges-per-language")]
    rows = {r["lp"]: r for r in section["tables"][0]["rows"]}
    part = df[df["lp"] == "en-fr"]
    assert rows["en-fr"]["kendall"] == pytest.approx(stats.kendalltau(part["A"], part["B"]).statistic)
    assert list(rows)[-1] == "*" and section["lead"][0].startswith("A and B agree least in en-fr")
    assert "Judges per language" in render_html(with_judges)
    # the CLI adds it when the table's signatures name two or more judges, not with one
    two, one = tmp_path / "two.parquet", tmp_path / "one.parquet"
    _write(df, two, {"A": JUDGE_SIG, "B": INGESTED, "M": METRIC_SIG})
    _write(df, one, {"A": JUDGE_SIG, "M": METRIC_SIG})
    for path, present in ((two, True), (one, False)):
        out = tmp_path / f"{path.stem}.json"
        rc, _, err = cli("report", str(path), "--score", "A", "--human", "human", "-o", str(out), "--format", "json",
                         "--n-resamples", "50")
        assert rc == 0, err
        found = [s["id"] for s in json.loads(out.read_text(encoding="utf-8"))["sections"]]
        assert ("judges-per-language" in found) is present


def test_judge_names_are_escaped_in_the_report(tmp_path, cli):
    from xleval.report import mt_report, render_html

    bad_a, bad_b = "<script>alert(1)</script>", 'J&"B"<blink>'
    df = _table().rename(columns={"A": bad_a, "B": bad_b})
    html = render_html(mt_report(df, "M", human="human", judges=judge_agreement(df, [bad_a, bad_b]),
                                 resampling=Resampling(n_resamples=50)))
    assert "<script>alert(1)" not in html and "<blink>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "J&amp;" in html


def test_lp_already_normalised_is_read_again():
    """An ingested WMT25 table: lp derived once as en-is-IS (it does not split one way) is derived again by the
    next command's reader without a contradiction (the report refused such tables before)."""
    df = pd.DataFrame({"src_lang": ["en", "en"], "tgt_lang": ["is-IS", "sr-Latn-RS"]})
    once = add_language_columns(df)
    twice = add_language_columns(once)
    assert twice["lp"].tolist() == once["lp"].tolist() == ["en-is-IS", "en-sr-Latn-RS"]


@pytest.fixture(scope="module")
def wmt25_table(data_root, tmp_path_factory):
    from conftest import run_cli

    out = tmp_path_factory.mktemp("wmt25") / "wmt25.parquet"
    rc, _, err = run_cli("ingest", "judge", str(data_root / "wmt25-autoscores"), "-o", str(out))
    assert rc == 0, err
    return out


def test_wmt25_meta_two_gemba_judges(wmt25_table, data_root, cli):
    rc, out, err = cli("meta", str(wmt25_table), "--format", "json")  # the GEMBA columns found by signature
    assert rc == 0, err
    got = pd.DataFrame(json.loads(out)["judges"]["table"]).set_index("group")
    assert len(got) == 32 and set(got["a"]) == {"GEMBA-ESA-CMDA"} and set(got["b"]) == {"GEMBA-ESA-GPT4.1"}
    a, b = [], []  # en-is_IS from the raw files
    for f in sorted((data_root / "wmt25-autoscores").glob("*.jsonl.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if rec["language_pair"] == "en-is_IS":
                    for x, y in zip(rec["metric_scores"]["GEMBA-ESA-CMDA"], rec["metric_scores"]["GEMBA-ESA-GPT4.1"],
                                    strict=True):
                        if x is not None and y is not None:
                            a.append(x)
                            b.append(y)
    assert got.loc["en-is-IS", "n"] == len(a) == 10_953  # 10,956 segments (data README), 3 null CMDA scores
    assert got.loc["en-is-IS", "kendall"] == pytest.approx(stats.kendalltau(a, b).statistic)
    assert got["kendall"].drop("*").idxmin() == "en-bho-IN"


def test_wmt25_judge_column_calibrated_and_reported_like_any_metric(data_root, tmp_path, cli):
    """Nothing judge-specific in calibration: anchored calibration of an ingested judge column against a synthetic
    human column, then the report on it (with the judges section, two judge columns in the table)."""
    folder = data_root / "wmt25-autoscores"
    ingested = tmp_path / "three.parquet"
    rc, _, err = cli("ingest", "judge", *(str(folder / f"{s}.jsonl.gz") for s in ("AMI", "Algharb", "CUNI-SFT")),
                     "-o", str(ingested))
    assert rc == 0, err
    from xleval.io import read_table_metadata

    df = read_table(ingested)
    df["human"] = df["GEMBA-ESA-GPT4.1"] + np.random.default_rng(0).normal(0, 10, len(df))
    table = tmp_path / "h.parquet"
    write_table(df, table, metadata=read_table_metadata(ingested))
    rc, _, err = cli("calibrate", "fit", str(table), "--score", "GEMBA-ESA-CMDA", "--method", "anchored", "--human",
                     "human", "-o", str(tmp_path / "a.json"))
    assert rc == 0, err
    rc, _, err = cli("calibrate", "apply", str(tmp_path / "a.json"), str(table), "-o", str(tmp_path / "cal.parquet"))
    assert rc == 0, err
    assert read_table(tmp_path / "cal.parquet")["GEMBA-ESA-CMDA_anchored"].notna().any()
    out = tmp_path / "r.json"
    rc, _, err = cli("report", str(table), "--score", "GEMBA-ESA-CMDA", "--human", "human", "-o", str(out),
                     "--format", "json", "--n-resamples", "50")
    assert rc == 0, err
    found = [s["id"] for s in json.loads(out.read_text(encoding="utf-8"))["sections"]]
    assert "judges-per-language" in found


def test_findings_state_offsets_only_on_one_scale():
    from xleval.judges import agreement_findings

    df = _table()
    judges = agreement_findings(judge_agreement(df, ["A", "B"]))[0]
    part = df[df["lp"] == "de-en"]
    assert f"{part['A'].mean() - part['B'].mean():+.1f} (de-en)" in judges  # B is 5 points more lenient
    mixed = agreement_findings(judge_agreement(df, ["A", "M"]))[0]  # 0-100 against 0-1: no mean offset stated
    assert "Mean" not in mixed and "Across groups they order" in mixed


def test_a_judge_cell_that_is_not_a_number_is_refused_with_its_row():
    """Never a silent NaN: the one number parser names the row and the cell."""
    import pandas as pd

    from xleval.exceptions import InputError
    from xleval.judges import judge_agreement

    df = pd.DataFrame({"lp": ["de-en"] * 4, "system": ["a", "b", "a", "b"], "j1": [1.0, 2.0, 3.0, 4.0],
                       "j2": ["1", "2", "three", "4"]})
    with pytest.raises(InputError, match="row 3"):
        judge_agreement(df, ["j1", "j2"], by="lp")


def test_a_judge_column_with_no_score_is_refused_when_named_and_left_out_when_found(tmp_path, cli):
    """`judges agree --judges chrf,nanj` printed a table of dashes (n = 0 in every group) for a column with no
    value, and `check-outputs --score nanj` an effect table of dashes: both are refused in one line. A judge column
    the table's signatures name but which scores none of its rows (a judge of other pairs) is left out of
    --judges auto, which compares the judges that remain."""
    df = _table().assign(C=np.nan)
    with pytest.raises(InputError, match=r"column 'C' has no finite value on any of the 96 rows"):
        judge_agreement(df, ["A", "C"])
    path = tmp_path / "t.parquet"
    _write(df, path, {"A": JUDGE_SIG, "B": INGESTED, "C": JUDGE_SIG, "M": METRIC_SIG})
    rc, _, err = cli("judges", "agree", str(path), "--judges", "A,C")
    assert rc == 2 and err.startswith(f"xleval: error: {path}: column 'C' has no finite value"), err
    assert err.count("\n") == 1
    rc, out, err = cli("meta", str(path), "--format", "json")  # auto: A and B, not C
    assert rc == 0, err
    got = pd.DataFrame(json.loads(out)["judges"]["table"])
    assert set(got["a"]) | set(got["b"]) == {"A", "B"}
    df.assign(hypothesis="an output").to_parquet(tmp_path / "h.parquet")
    rc, _, err = cli("check-outputs", str(tmp_path / "h.parquet"), "--score", "C")
    assert rc == 2 and "metric 'C' has no finite value on any of the 96 rows" in err and err.count("\n") == 1, err
