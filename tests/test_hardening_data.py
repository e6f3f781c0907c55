"""Issue 26, calibration and data semantics: a signature travels with its file column, one rule for a
calibrator of another score column, bad human labels, contradicting repeated labels, merged language
codes, hand-edited calibrators, scikit-learn pipelines, one-group tables, budgets above the labels."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.calibration import LGN
from xleval.exceptions import InputError
from xleval.io import write_table

SIG_BLEU = "bleu|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"
SIG_CHRF = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


def _frame(n_lp=2, systems=3, segs=20, seed=0, human=False):
    rng = np.random.default_rng(seed)
    rows = []
    for i, lp in enumerate(["en-de", "en-zh", "en-fr"][:n_lp]):
        for s in range(systems):
            q = rng.normal()
            for k in range(segs):
                x = 30 + 10 * i + 3 * q + rng.normal()
                rows.append({"lp": lp, "system": f"S{s}", "seg_id": k, "bleu": x, "chrf": x + 5,
                             **({"human": 50 + 5 * q + rng.normal()} if human else {})})
    return pd.DataFrame(rows)


@pytest.fixture
def files(tmp_path):
    """scores.tsv with a BLEU and a chrF column (each with its signature), chrf.tsv with chrF only,
    and a BLEU calibrator fitted on the first."""
    frame = _frame(human=True)
    write_table(frame, tmp_path / "scores.tsv", metadata={"signatures": {"bleu": SIG_BLEU, "chrf": SIG_CHRF}})
    write_table(frame.drop(columns="bleu"), tmp_path / "chrf.tsv", metadata={"signatures": {"chrf": SIG_CHRF}})
    r = run_cli("calibrate", "fit", "scores.tsv", "--score", "bleu", "--by", "lp", "-o", "bleu.json", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    return tmp_path


# --- 1. --col bleu=chrf keeps chrF's signature ------------------------------------------------------------
def test_col_mapping_keeps_the_file_columns_signature_in_apply(files):
    r = run_cli("calibrate", "apply", "bleu.json", "chrf.tsv", "--col", "bleu=chrf", "-o", "out.tsv", cwd=files)
    assert r.exit_code == 2 and "chrF2" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / "out.tsv").exists()


@pytest.mark.parametrize("command", ["leaderboard", "report"])
def test_col_mapping_keeps_the_file_columns_signature_with_model(files, command):
    out = "out.html" if command == "report" else "out.tsv"
    r = run_cli(command, "chrf.tsv", "--score", "bleu", "--col", "bleu=chrf", "--by", "lp", "--model", "bleu.json",
                "-o", out, cwd=files)
    assert r.exit_code == 2 and "chrF2" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / out).exists()


def test_fit_with_a_mapped_column_saves_its_signature(files):
    r = run_cli("calibrate", "fit", "chrf.tsv", "--score", "bleu", "--col", "bleu=chrf", "--by", "lp",
                "-o", "m.json", cwd=files)
    assert r.exit_code == 0, r.stderr
    assert json.loads((files / "m.json").read_text())["signature"] == SIG_CHRF


def test_eval_table_renames_signatures_with_columns(files):
    from xleval.table import EvalTable

    table = EvalTable.read(files / "scores.tsv", columns={"chrf": "bleu", "bleu": "old"}, score="bleu", by="lp")
    assert table.signature("bleu") == SIG_CHRF and table.signature("old") == SIG_BLEU


# --- 2./3. a calibrator of another column: one rule; the mismatch names the table ---------------------------
@pytest.mark.parametrize("command", ["leaderboard", "report"])
def test_model_of_another_score_column_is_refused_by_both(files, command):
    out = "out.html" if command == "report" else "out.tsv"
    r = run_cli(command, "scores.tsv", "--score", "chrf", "--by", "lp", "--model", "bleu.json", "-o", out, cwd=files)
    assert r.exit_code == 2 and "fitted on column 'bleu'" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (files / out).exists()


def test_leaderboard_signature_mismatch_names_the_table(files):
    write_table(_frame(), files / "other.tsv", metadata={"signatures": {"bleu": SIG_CHRF}})
    r = run_cli("leaderboard", "other.tsv", "--score", "bleu", "--by", "lp", "--model", "bleu.json", cwd=files)
    assert r.exit_code == 2 and "other.tsv" in r.stderr and "Traceback" not in r.stderr, r.stderr


# --- 4. an infinite human score is bad input everywhere ---------------------------------------------------
@pytest.fixture
def inf_labels(tmp_path):
    frame = _frame(human=True)
    frame["human"] = frame["human"].astype(object)
    frame.loc[7, "human"] = "inf"
    frame.loc[9, "human"] = ""
    write_table(frame, tmp_path / "inf.tsv")
    return tmp_path


@pytest.mark.parametrize("args", [
    ("calibrate", "fit", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--method", "anchored",
     "-o", "out.json"),
    ("calibrate", "select", "inf.tsv", "--score", "bleu", "--budget", "3", "--skip-labelled", "human", "-o", "out.tsv"),
    ("leaderboard", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "-o", "out.tsv"),
    ("calibrate", "evaluate", "inf.tsv", "--score", "bleu", "--by", "lp", "--human", "human"),
])
def test_infinite_human_score_is_refused(inf_labels, args):
    r = run_cli(*args, cwd=inf_labels)
    assert r.exit_code == 2 and "row 8" in r.stderr and "infinite" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not list(inf_labels.glob("out.*"))


def test_infinite_human_score_is_refused_by_the_table():
    from xleval.table import EvalTable

    table = EvalTable.from_frame(_frame(human=True).assign(human=lambda d: d["human"].where(d.index != 3, -np.inf)),
                                 score="bleu", by="lp", human="human")
    with pytest.raises(InputError, match="row 4: human score -inf is infinite"):
        table.human_values()


# --- 7. hand-edited calibrators (checksum recomputed) are validated at load -------------------------------
def _edited(path, edit):
    """The calibrator at ``path`` edited by ``edit(payload)`` and saved with a recomputed checksum, as
    :func:`xleval.calibration._persist.save_checked` computes it."""
    from xleval.calibration._persist import checksum

    payload = json.loads(path.read_text())
    payload.pop("checksum")
    edit(payload)
    payload["checksum"] = checksum(json.loads(json.dumps(payload, allow_nan=True)))
    path.write_text(json.dumps(payload, allow_nan=True))


def _set(*keys, value):
    def edit(payload):
        node = payload
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value(node[keys[-1]]) if callable(value) else value
    return edit


def _no_sketches(payload):
    for level in payload["levels"].values():
        level.pop("sketches", None)


LGN_EDITS = {
    "by-empty": _set("params", "by", value=[]),
    "by-nested": _set("params", "by", value=[["lp"]]),
    "score-number": _set("params", "score", value=5),
    "m2-nan": _set("levels", "__by__", "m2", value=lambda v: [float("nan")] * len(v)),
    "mean-nan": _set("levels", "__by__", "mean", value=lambda v: [float("nan")] * len(v)),
    "count-nan": _set("levels", "__by__", "count", value=lambda v: [float("nan")] * len(v)),
    "target-nan": _set("params", "target", value=[0, float("nan")]),
}
ANCHORED_EDITS = {
    "by-empty": _set("params", "by", value=[]),
    "by-nested": _set("params", "by", value=[["lp"]]),
    "score-number": _set("params", "score", value=5),
    "human-number": _set("params", "human", value=1),
    "pooled-offset-var-negative": _set("pooled", "offset_var", value=-1.0),
    "group-offset-var-nan": lambda p: p["groups"]["en-de"].update(offset_var=float("nan")),
    "group-offset-var-negative": lambda p: p["groups"]["en-de"].update(offset_var=-2.0),
    "cov-nan": _set("slopes", "cov", value=[[float("nan"), 0.0], [0.0, 1.0]]),
    "cov-negative": _set("slopes", "cov", value=[[-1.0, 0.0], [0.0, 1.0]]),
    "tau2-negative": _set("pooled", "tau2", value=-3.0),
}


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    root = tmp_path_factory.mktemp("fitted")
    write_table(_frame(human=True), root / "t.tsv")
    for name, extra in (("lgn", ()), ("quantile", ("--method", "quantile")),
                        ("anchored", ("--method", "anchored", "--human", "human"))):
        r = run_cli("calibrate", "fit", "t.tsv", "--score", "bleu", "--by", "lp", *extra, "-o", f"{name}.json",
                    cwd=root)
        assert r.exit_code == 0, r.stderr
    return root


def _refused_everywhere(root, model):
    for args in (("calibrate", "show", model),
                 ("calibrate", "apply", model, "t.tsv", "--interval", "0.9", "-o", "o.tsv"),
                 ("leaderboard", "t.tsv", "--score", "bleu", "--by", "lp", "--model", model, "-o", "o.tsv")):
        r = run_cli(*args, cwd=root)
        assert r.exit_code == 2, (args, r.stdout[-300:], r.stderr[-600:])
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert "refit" in r.stderr and not (root / "o.tsv").exists(), r.stderr


@pytest.mark.parametrize("edit", sorted(LGN_EDITS))
def test_edited_lgn_is_refused_at_load(fitted, edit):
    import shutil

    shutil.copy(fitted / "lgn.json", fitted / f"lgn-{edit}.json")
    _edited(fitted / f"lgn-{edit}.json", LGN_EDITS[edit])
    _refused_everywhere(fitted, f"lgn-{edit}.json")


def test_quantile_lgn_without_sketches_is_refused_at_load(fitted):
    import shutil

    shutil.copy(fitted / "quantile.json", fitted / "q-edited.json")
    _edited(fitted / "q-edited.json", _no_sketches)
    _refused_everywhere(fitted, "q-edited.json")


@pytest.mark.parametrize("edit", sorted(ANCHORED_EDITS))
def test_edited_anchored_is_refused_at_load(fitted, edit):
    import shutil

    shutil.copy(fitted / "anchored.json", fitted / f"a-{edit}.json")
    _edited(fitted / f"a-{edit}.json", ANCHORED_EDITS[edit])
    _refused_everywhere(fitted, f"a-{edit}.json")


# --- 10. one group: a valid leaderboard, a clear line elsewhere ---------------------------------------------
@pytest.fixture
def one_group(tmp_path):
    write_table(_frame(n_lp=1, human=True), tmp_path / "one.tsv")
    return tmp_path


@pytest.mark.parametrize("human", [(), ("--human", "human")])
def test_one_group_leaderboard_is_ranked_with_a_note(one_group, human):
    r = run_cli("leaderboard", "one.tsv", "--score", "bleu", "--by", "lp", *human, "--format", "json",
                "-o", "board.json", cwd=one_group)
    assert r.exit_code == 0, r.stderr
    board = json.loads((one_group / "board.json").read_text())
    assert "no cross-group question exists" in json.dumps(board)
    assert len(board["rows"] if "rows" in board else board["leaderboard"]) == 3


@pytest.mark.parametrize("args", [
    ("report", "one.tsv", "--score", "bleu", "--by", "lp", "-o", "out.html"),
    ("calibrate", "fit", "one.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "-o", "out.json"),
])
def test_one_group_report_and_fit_say_why_in_one_line(one_group, args):
    r = run_cli(*args, cwd=one_group)
    assert r.exit_code == 2 and "no cross-group question" in r.stderr and "--by" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not list(one_group.glob("out.*"))


# --- 11. a budget above the labels a group has is capped, and said so ------------------------------------
def test_evaluate_budget_above_the_labels_is_capped_and_said(tmp_path):
    frame = _frame(n_lp=3, systems=6, segs=40, human=True)
    keep = frame.groupby("lp").sample(30, random_state=1).index
    frame.loc[~frame.index.isin(keep), "human"] = np.nan
    write_table(frame, tmp_path / "ev.tsv")
    args = ("calibrate", "evaluate", "ev.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--budget", "200",
            "--repeats", "1")
    r = run_cli(*args, cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    text = r.stdout + r.stderr
    assert "capped at 30" in text and "200 labels per group already match" not in text, text
    r = run_cli(*args, "--format", "json", cwd=tmp_path)
    result = json.loads(r.stdout)
    assert result["budget"] == 30 and list(result["budgets"]) == [30]
    assert any("capped at 30" in n for n in result["notes"])
    assert not any(v["name"].startswith("anchored@200") for v in result["variants"])


def test_infinite_label_in_a_column_not_named_human_is_refused_by_anchored():
    from xleval.calibration import AnchoredCalibrator

    frame = _frame(human=True).rename(columns={"human": "da"})
    frame.loc[5, "da"] = np.inf
    with pytest.raises(InputError, match="row 6: human score inf is infinite"):
        AnchoredCalibrator(by="lp", score="bleu", human="da").fit(frame)


# --- 5. repeated keys with contradicting labels are said ----------------------------------------------------
@pytest.fixture
def repeated(tmp_path):
    frame = _frame(human=True)
    extra = frame.iloc[[0, 1, 2]].assign(human=frame["human"].iloc[[0, 1, 2]] + 40)  # same keys, other labels
    same = frame.iloc[[3]]  # a repeated key with the same label is not a contradiction
    write_table(pd.concat([frame, extra, same], ignore_index=True), tmp_path / "rep.tsv")
    return tmp_path


@pytest.mark.parametrize("args", [
    ("calibrate", "fit", "rep.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--method", "anchored",
     "-o", "m.json"),
    ("calibrate", "evaluate", "rep.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--repeats", "1",
     "--folds", "3"),
    ("leaderboard", "rep.tsv", "--score", "bleu", "--by", "lp", "--human", "human", "--method", "anchored"),
])
def test_contradicting_repeated_labels_are_warned(repeated, args):
    import warnings

    with warnings.catch_warnings():  # a warning no command renders is printed by the CLI (an error under pytest)
        warnings.simplefilter("default")
        r = run_cli(*args, cwd=repeated)
    assert r.exit_code == 0, r.stderr
    text = " ".join((r.stdout + r.stderr).split())  # the terminal wraps long lines
    assert "3 (lp, system, seg_id) key(s) repeat with different human scores" in text, text[-2000:]
    assert "(e.g. ('en-de', 'S0', 0): " in text


def test_repeated_keys_with_equal_labels_are_not_warned():
    import warnings

    from xleval.table import EvalTable

    frame = _frame(human=True)
    table = EvalTable.from_frame(pd.concat([frame, frame.iloc[:5]]), score="bleu", by="lp", human="human")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table.human_values()


def test_segments_numbered_within_documents_are_not_repeats():
    """WMT25 numbers segments within each document: seg_id 1 of two documents are two segments, whose different
    labels contradict nothing (the ingested WMT25 table gave a false warning on 41 such keys); the same segment of
    one document judged twice differently still warns, with doc_id in the key."""
    import warnings

    from xleval.table import warn_contradicting_labels

    frame = pd.DataFrame({"lp": "en-de", "system": "S0", "doc_id": ["a", "a", "b", "b"], "seg_id": [1, 2, 1, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_contradicting_labels(frame, "human", np.array([10.0, 20.0, 90.0, 80.0]))
    twice = pd.concat([frame, frame.iloc[[2]]], ignore_index=True)
    with pytest.warns(match=r"1 \(lp, system, doc_id, seg_id\) key\(s\) repeat .*\('en-de', 'S0', 'b', 1\)"):
        warn_contradicting_labels(twice, "human", np.array([10.0, 20.0, 90.0, 80.0, 30.0]))


def test_a_table_with_the_two_codes_is_grouped_by_its_pairs(tmp_path):
    """A table with src_lang and tgt_lang but no lp was grouped by tgt_lang: a target with two sources (WMT25's
    en-de_DE and cs-de_DE; any to-English data) pooled two pairs into one group, with a warning. The default
    grouping is now the pair, derived from the two codes, in the library and on the command line; --by tgt_lang
    still pools when asked."""
    import json
    import warnings

    from conftest import run_cli
    from xleval.leaderboard import leaderboard
    from xleval.stats import Resampling

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"src_lang": ["en"] * 40 + ["cs"] * 40, "tgt_lang": "de",
                       "system": np.tile(np.repeat(["a", "b"], 20), 2), "seg_id": np.tile(np.arange(20), 4),
                       "score": rng.normal(size=80)})
    few = Resampling(n_resamples=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn of: no pair is pooled
        apart = leaderboard(df, "score", method="none", resampling=few)
        pooled = leaderboard(df, "score", "tgt_lang", method="none", resampling=few)
    assert set(apart.rows["group"]) == {"en-de", "cs-de"} and apart.by == "lp"
    assert set(pooled.rows["group"]) == {"de"}
    assert "lp" not in df.columns  # the caller's frame is not changed
    path = tmp_path / "two sources.tsv"
    df.to_csv(path, sep="\t", index=False)
    r = run_cli("leaderboard", path, "--score", "score", "--method", "none", "--n-resamples", "20", "--format", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["by"] == "lp" and {row["group"] for row in out["rows"]} == {"en-de", "cs-de"}
    assert "pooled" not in r.stderr


# --- 6. two input codes that become one group are named --------------------------------------------------------
def test_merged_language_codes_are_named(tmp_path):
    import warnings

    frame = _frame(n_lp=2)
    frame["lp"] = frame["lp"].map({"en-de": "twi-en", "en-zh": "ak-en"})
    write_table(pd.concat([frame, _frame(n_lp=1)]), tmp_path / "langs.tsv")
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        r = run_cli("leaderboard", "langs.tsv", "--score", "bleu", "--by", "lp", "--method", "none", cwd=tmp_path)
    assert r.exit_code == 0, r.stderr
    text = " ".join(r.stderr.split())
    assert "'ak-en' and 'twi-en' become one group, 'ak-en'" in text, text


def test_spellings_of_one_code_are_not_a_merge():
    import warnings

    from xleval.io import add_language_columns

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = add_language_columns(pd.DataFrame({"lp": ["de-en", "DE_en", " de-en"]}))
    assert set(out["lp"]) == {"de-en"}
    with pytest.warns(Warning, match="'ak' and 'twi' become one group"):
        add_language_columns(pd.DataFrame({"src_lang": ["twi", "ak"], "tgt_lang": ["en", "en"]}))


# --- 8. scikit-learn Pipeline: y is ignored by fit, never taken as groups ------------------------------------
@pytest.mark.parametrize("kind", ["lgn", "anchored"])
def test_sklearn_pipeline_ignores_y_and_refuses_y_as_groups(kind):
    pipeline_module = pytest.importorskip("sklearn.pipeline")
    from xleval.calibration import AnchoredCalibrator

    frame = _frame(human=True)
    model = LGN(by="lp", score="bleu") if kind == "lgn" else AnchoredCalibrator(by="lp", score="bleu", human="human")
    pipe = pipeline_module.Pipeline([("calibrate", model)])
    out = pipe.fit(frame, frame["human"]).transform(frame)  # y ignored, as scikit-learn transformers do
    assert np.isfinite(np.asarray(out, dtype=float)).all()
    assert np.allclose(pipe.fit_transform(frame, frame["human"]), out)
    with pytest.raises(InputError, match="groups come from those columns"):
        model.transform(frame, frame["human"])  # a second positional argument is groups, never y
    with pytest.raises(InputError, match="groups come from those columns"):
        model.sources(frame, frame["human"])
    with pytest.raises(InputError, match=r"y is never the groups|pass groups="):
        pipeline_module.Pipeline([("calibrate", model)]).fit(frame["bleu"].to_numpy(), frame["human"].to_numpy())


# --- 9. a compressed calibrator name is refused at fit time ----------------------------------------------------
def test_fit_refuses_a_gz_calibrator_before_fitting(tmp_path):
    write_table(_frame(), tmp_path / "t.tsv")
    r = run_cli("calibrate", "fit", "t.tsv", "--score", "bleu", "--by", "lp", "-o", "model.json.gz", cwd=tmp_path)
    assert r.exit_code == 2 and "plain JSON" in r.stderr and "model.json" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "model.json.gz").exists()
    model = LGN(by="lp", score="bleu").fit(_frame())
    with pytest.raises(InputError, match="plain JSON"):
        model.save(tmp_path / "m.json.gz")
    assert not (tmp_path / "m.json.gz").exists()


def test_a_gzipped_calibrator_is_named_as_such(tmp_path):
    import gzip

    model = LGN(by="lp", score="bleu").fit(_frame())
    model.save(tmp_path / "m.json")
    (tmp_path / "z.json").write_bytes(gzip.compress((tmp_path / "m.json").read_bytes()))
    write_table(_frame(), tmp_path / "t.tsv")
    r = run_cli("calibrate", "apply", "z.json", "t.tsv", "-o", "o.tsv", cwd=tmp_path)
    assert r.exit_code == 2 and "gzip-compressed" in r.stderr and "refit" not in r.stderr, r.stderr


def test_col_mapping_keeps_the_signature_in_the_streamed_paths(files):
    r = run_cli("calibrate", "apply", "bleu.json", "chrf.tsv", "--col", "bleu=chrf", "--chunk-size", "50",
                "-o", "out.tsv", cwd=files)
    assert r.exit_code == 2 and "chrF2" in r.stderr and not (files / "out.tsv").exists(), r.stderr
    r = run_cli("calibrate", "fit", "chrf.tsv", "--score", "bleu", "--col", "bleu=chrf", "--by", "lp",
                "--chunk-size", "50", "-o", "m.json", cwd=files)
    assert r.exit_code == 0, r.stderr
    assert json.loads((files / "m.json").read_text())["signature"] == SIG_CHRF
