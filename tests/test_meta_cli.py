"""``xleval meta``: every format, -o written whole, names from the data escaped, the library's numbers."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "human": q + rng.normal(),
                        "metric:chrf": q + rng.normal(), "metric:bleu": rng.normal()}
                       for lp in ("en-de", "de-en\x1b[31m") for q, s in enumerate("ABCD") for i in range(10)])
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    return path, df


def test_json_carries_the_library_result(table):
    path, df = table
    r = run_cli("meta", str(path), "--metrics-prefix", "metric:", "--human", "human", "--n-resamples", "50",
                "--format", "json")
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    want = meta_evaluate(df, ["metric:chrf", "metric:bleu"], "human", resampling=Resampling(n_resamples=50)).to_dict()
    assert got["cells"] == json.loads(json.dumps(want["cells"]))
    assert got["system_scores"] == "complete" and got["warnings"] == []


def test_text_is_wmt_style_and_escapes_names(table):
    path, _ = table
    r = run_cli("meta", str(path), "--metrics", "metric:chrf,metric:bleu", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 0, r.stderr
    assert "\x1b" not in r.stdout and "de-en\\x1b[31m" in r.stdout
    assert "sys_pearson" in r.stdout and "cross-group acc" in r.stdout and "spa" in r.stdout
    head = next(line for line in r.stdout.splitlines() if line.startswith("lp ")).split()
    assert head == ["lp", "chrf", "bleu"]  # the shared prefix metric: is dropped from the headers


def test_tsv_and_latex_files(table, tmp_path):
    path, _ = table
    out = tmp_path / "o.tsv"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                "--format", "tsv", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    tidy = pd.read_csv(out, sep="\t")
    assert list(tidy.columns) == ["group", "metric", "statistic", "value", "ci_low", "ci_high", "n", "rank", "chance",
                                   "left_out", "relative"]
    assert {"sys_pearson", "seg_acc_t", "global_accuracy", "cross_accuracy"} <= set(tidy["statistic"])
    tex = tmp_path / "o.tex"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                "--format", "latex", "-o", str(tex))
    text = tex.read_text()
    assert r.exit_code == 0 and text.count("\\begin{tabular}") == text.count("\\end{tabular}") >= 5
    assert "\x1b" not in text


def test_darr_and_system_level_table(table, tmp_path):
    path, df = table
    sys_path = tmp_path / "sys.tsv"
    df.groupby(["lp", "system"])[["human", "metric:chrf"]].mean().reset_index().to_csv(sys_path, sep="\t", index=False)
    r = run_cli("meta", str(sys_path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20")
    assert r.exit_code == 0 and "system-level table" in r.stdout and "seg_pearson" not in r.stdout
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--darr", "human",
                "--darr-threshold", "1", "--no-spa", "--n-resamples", "20")
    assert r.exit_code == 0 and "darr_tau" in r.stdout and "\nspa:" not in r.stdout


def test_report_has_a_meta_evaluation_section(table, tmp_path):
    path, _ = table
    out = tmp_path / "r.json"
    r = run_cli("meta", str(path), "--metrics", "metric:chrf,metric:bleu", "--human", "human", "--n-resamples", "20",
                "--report", str(out), "-o", str(tmp_path / "t.txt"))
    assert r.exit_code == 0, r.stderr
    report = json.loads(out.read_text())
    section = next(s for s in report["sections"] if s["id"] == "meta-evaluation")
    titles = [t["title"] for t in section["tables"]]
    assert titles[0].startswith("sys_pearson") and any(t.startswith("Across groups") for t in titles)
    assert "system scores" in section["lead"][0]
    html = tmp_path / "r.html"
    assert run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
                   "--report", str(html), "-o", str(tmp_path / "u.txt")).exit_code == 0
    assert "Meta-evaluation" in html.read_text() and "\x1b" not in html.read_text()


def test_input_is_never_an_output(table):
    path, _ = table
    r = run_cli("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "-o", str(path))
    assert r.exit_code == 2 and r.stderr.startswith("xleval: error:") and path.read_text().startswith("lp\t")


def _sys_kendall(out: str, metric: str) -> list[float]:
    return [c["value"] for c in json.loads(out)["cells"] if c["statistic"] == "sys_kendall" and c["metric"] == metric]


def test_lower_is_better_metrics_are_negated_by_signature_name_or_flag(tmp_path):
    """An error score (MetricX: dir:lower in its signature; TER: by its name) agrees with the humans when it
    falls as they rise: its statistics come out positive, as in WMT's tables; --higher-is-better undoes it."""
    from xleval.io import write_table

    rng = np.random.default_rng(1)
    rows = [{"lp": lp, "system": s, "seg_id": i, "human": q + rng.normal(0, 0.1), "mx": 20 - 3 * q + rng.normal(0, 0.1),
             "ter": 80 - 10 * q + rng.normal(0, 0.1), "chrf": 40 + 5 * q + rng.normal(0, 0.1)}
            for lp in ("en-de", "en-ja") for q, s in enumerate("ABCD") for i in range(8)]
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame(rows), path, metadata={"signatures": {"mx": "metricx|variant:24-ref|dir:lower"}})
    args = ("meta", str(path), "--metrics", "mx,ter,chrf", "--human", "human", "--no-spa", "--n-resamples", "20",
            "--format", "json")
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    for metric in ("mx", "ter", "chrf"):
        assert _sys_kendall(r.stdout, metric) == [1.0, 1.0], metric
    assert any("lower is better for mx, ter" in n for n in json.loads(r.stdout)["notes"])
    r = run_cli(*args, "--higher-is-better", "mx")
    assert _sys_kendall(r.stdout, "mx") == [-1.0, -1.0]
    r = run_cli(*args, "--higher-is-better", "mx", "--lower-is-better", "mx")
    assert r.exit_code == 2 and "name it once" in r.stderr


def test_metrics_missing_from_a_table_of_texts_are_computed(tmp_path):
    """--metrics chrf on a table without a chrf column: the column is scored from the texts (sacrebleu's
    sentence chrF, the oracle here), then meta-evaluated as if it had been there."""
    import sacrebleu

    rng = np.random.default_rng(2)
    refs = ["the cat sat on the mat", "a dog barks in the garden", "we drive to berlin tomorrow", "it is sunny today"]
    rows = []
    for lp in ("en-de", "en-fr"):
        for q, s in enumerate("ABCD"):
            for i, ref in enumerate(refs * 3):
                words = ref.split()
                hyp = " ".join(w if rng.random() < 0.4 + 0.15 * q else "x" for w in words)
                rows.append({"lp": lp, "system": s, "seg_id": i, "hypothesis": hyp, "reference": ref,
                             "human": q + rng.normal(0, 0.3)})
    df = pd.DataFrame(rows)
    df.to_csv(tmp_path / "texts.tsv", sep="\t", index=False)
    r = run_cli("meta", str(tmp_path / "texts.tsv"), "--metrics", "chrf", "--human", "human", "--no-spa",
                "--n-resamples", "20", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert "computed chrf from the texts" in r.stderr
    chrf = sacrebleu.metrics.CHRF()
    oracle = df.assign(chrf=[chrf.sentence_score(h, [ref]).score for h, ref in zip(df["hypothesis"], df["reference"],
                                                                                    strict=True)])
    expected = meta_evaluate(oracle, ["chrf"], "human", statistics=MetaStatistics(spa=False),
                             resampling=Resampling(n_resamples=20))
    got = {(c["group"], c["statistic"]): c["value"] for c in json.loads(r.stdout)["cells"]}
    for c in expected.cells:
        assert got[(c.group, c.statistic)] == pytest.approx(c.value, nan_ok=True), (c.group, c.statistic)


def test_report_meta_adds_the_meta_evaluation_section(tmp_path):
    """`xleval report --meta chrf,ter`: the report carries the same meta-evaluation `xleval meta` computes
    (chrF and TER scored from the texts, TER negated), as a section of the JSON report."""
    rng = np.random.default_rng(4)
    refs = ["the cat sat on the mat", "a dog barks in the garden", "we drive to berlin tomorrow", "it is sunny today"]
    rows = []
    for lp in ("en-de", "en-fr"):
        for q, s in enumerate("ABCDE"):
            for i, ref in enumerate(refs * 3):
                hyp = " ".join(w if rng.random() < 0.3 + 0.15 * q else "x" for w in ref.split())
                rows.append({"lp": lp, "system": s, "seg_id": i, "hypothesis": hyp, "reference": ref,
                             "human": q + rng.normal(0, 0.3), "score": q + rng.normal(0, 0.5)})
    path = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    r = run_cli("report", str(path), "--score", "score", "--human", "human", "--meta", "chrf,ter", "--n-resamples",
                "50", "--format", "json", "-o", str(tmp_path / "r.json"))
    assert r.exit_code == 0, r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    text = json.dumps(report)
    assert "Meta-evaluation" in text and "lower is better for ter" in text
    meta = run_cli("meta", str(path), "--metrics", "chrf,ter", "--human", "human", "--n-resamples", "50",
                   "--format", "json")
    cells = json.loads(meta.stdout)["cells"]
    kendall = next(c["value"] for c in cells if c["statistic"] == "sys_kendall" and c["metric"] == "ter")
    assert kendall > 0  # TER falls as quality rises: negated, it agrees
    r = run_cli("report", str(path), "--score", "score", "--meta", "chrf", "-o", str(tmp_path / "r2.json"),
                "--format", "json")
    assert r.exit_code == 2 and "--meta compares metrics with human scores" in r.stderr
    assert not (tmp_path / "r2.json").exists()
    # refused before the table is read (it was after the output checks: 14 s on six WMT21 pairs)
    r = run_cli("report", str(tmp_path / "no_such_table.tsv"), "--score", "score", "--meta", "chrf", "-o",
                str(tmp_path / "r3.json"))
    assert r.exit_code == 2 and "--meta compares metrics with human scores" in r.stderr, r.stderr


def test_a_system_a_metric_did_not_score_is_named_with_the_flag_that_leaves_it_out(table, tmp_path):
    """WMT20's human translations (Human-A.0) carry no metric scores in ps-en: the refusal names the system and the
    option that leaves it out, and the command with that option runs, without the system."""
    _, df = table
    df = df.copy()
    df.loc[(df["lp"] == "en-de") & (df["system"] == "D"), "metric:chrf"] = np.nan
    path = tmp_path / "partly scored.tsv"
    df.to_csv(path, sep="\t", index=False)
    args = ("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20",
            "--format", "json")
    r = run_cli(*args)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "but not ['D'] (1 of 4)" in r.stderr and r.stderr.rstrip().endswith("leave them out with --exclude D")
    r = run_cli(*args, "--exclude", "D")
    assert r.exit_code == 0, r.stderr
    cells = pd.DataFrame(json.loads(r.stdout)["cells"])
    assert set(cells["group"]) == {"en-de", "de-en\x1b[31m"}


def test_the_warning_on_common_segments_names_the_other_choice(table, tmp_path):
    """System scores over the segments judged for every system kept 21 of ps-en's 2,601 on WMT20: the warning
    says how many, and names --system-scores judged, after which no segment is left out."""
    _, df = table
    df = df.copy()
    df.loc[(df["system"] == "A") & (df["seg_id"] >= 3), "human"] = np.nan  # A judged on 3 segments only
    path = tmp_path / "sparse.tsv"
    df.to_csv(path, sep="\t", index=False)
    args = ("meta", str(path), "--metrics", "metric:chrf", "--human", "human", "--n-resamples", "20", "--no-spa")
    r = run_cli(*args)
    assert r.exit_code == 0, r.stderr
    (said,) = [line for line in r.stdout.splitlines() if "segments kept" in line]
    assert "segments kept" not in r.stderr  # a note of the text on the screen, not said twice
    assert said.startswith("note: system scores use the segments judged for every system")  # --no-spa: no SPA
    assert "en-de 3 of 10" in said and "--system-scores judged takes each system's own" in said
    r = run_cli(*args, "--system-scores", "judged")
    assert r.exit_code == 0, r.stderr
    assert "segments kept" not in r.stderr
    # the report's meta-evaluation section said system_scores='judged', which `xleval report` does not take
    df.assign(lp=df["lp"].map(lambda lp: "de-en" if lp != "en-de" else lp)).to_csv(path, sep="\t", index=False)
    r = run_cli("report", str(path), "--score", "metric:chrf", "--human", "human", "--meta", "metric:chrf",
                "--n-resamples", "20", "-o", str(tmp_path / "r.json"))
    assert r.exit_code == 0, r.stderr
    text = (tmp_path / "r.json").read_text()
    assert "system_scores=" not in text
    assert "--system-scores judged takes each system's own judged segments instead" in text
    assert "(an option of `xleval meta`, which runs this meta-evaluation alone)" in text


def test_a_prefix_leaves_out_columns_with_no_judged_score_and_says_so(table, tmp_path):
    """WMT20's metric:BAQ_* columns score other pairs: over a table of de-en, ja-en and ps-en, --metrics-prefix
    metric: was refused for them. The prefix now leaves out a column with no score on a judged row, and says so in
    every format; naming it with --metrics still refuses it. Notes name options as typed here."""
    _, df = table
    df = df.assign(**{"metric:baq": np.nan})
    path = tmp_path / "prefix.tsv"
    df.to_csv(path, sep="\t", index=False)
    base = ("meta", str(path), "--human", "human", "--n-resamples", "20")
    r = run_cli(*base, "--metrics-prefix", "metric:", "--format", "json")
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    assert sorted({c["metric"] for c in got["cells"]}) == ["metric:bleu", "metric:chrf"]
    said = [w for w in got["warnings"] if "left out: metric:baq" in w]
    assert len(said) == 1 and said[0].startswith("--metrics-prefix 'metric:': 1 column(s) with no score")
    r = run_cli(*base, "--metrics", "metric:chrf,metric:baq")
    assert r.exit_code == 2 and "metric 'metric:baq' has no score on a row with a human score" in r.stderr
    df.loc[(df["system"] == "A") & (df["seg_id"] >= 3), "human"] = np.nan  # the note names the option as typed
    df.to_csv(path, sep="\t", index=False)
    r = run_cli(*base, "--metrics", "metric:chrf", "--format", "json")
    assert r.exit_code == 0, r.stderr
    notes = " ".join(json.loads(r.stdout)["notes"])
    assert "--system-scores judged takes each system's own" in notes and "system_scores=" not in notes


def test_a_note_of_the_text_is_not_said_again_as_a_warning(tmp_path):
    """On WMT20 into English `meta ... --system-scores judged` printed 'SPA uses the segments judged for every system
    of the group; segments kept: ...' twice on the screen: as a note of the text and as a warning on stderr. Said
    once there; with -o FILE the file has the note and the screen the warning."""
    rng = np.random.default_rng(0)
    rows = []
    for lp in ("de-en", "ja-en"):
        for s in range(4):
            for i in range(30):
                quality = s + rng.normal()
                rows.append({"lp": lp, "system": f"sys{s}", "seg_id": i, "chrf": quality + rng.normal(),
                             "bleu": quality + rng.normal(), "human": quality if (i + s) % 3 else np.nan})
    path = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    said = "SPA uses the segments judged for every system of the group"
    args = ("meta", path, "--metrics", "chrf,bleu", "--human", "human", "--system-scores", "judged",
            "--n-resamples", "20", "--spa-permutations", "20")
    rc, out, err = run_cli(*args)
    assert rc == 0, err
    assert (out + err).count(said) == 1 and f"note: {said}" in out
    rc, out, err = run_cli(*args, "-o", tmp_path / "meta.txt")
    assert rc == 0, err
    assert said in (tmp_path / "meta.txt").read_text() and f"warning: {said}" in err
