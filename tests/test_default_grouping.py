"""Issue 23 item 10: one ``--by`` default everywhere — ``lp`` when the table has it or its two codes
(``src_lang``, ``tgt_lang``, from which the pair is derived), else ``tgt_lang`` — decided from the header (also
for streamed and gzip inputs), shown in ``--help`` and stated in the outputs. The oracle of the derived pair is
the table's own ``lp`` column: the same groups either way."""
from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from conftest import run_cli
from xleval.synthetic import simulate_mt_evaluation
from xleval.table import default_by

COMMANDS = [("calibrate", "fit"), ("calibrate", "select"), ("calibrate", "evaluate"), ("calibrate", "plan"),
            ("diagnose",), ("report",), ("leaderboard",), ("meta",), ("check-outputs",)]


@pytest.fixture(scope="module")
def frame():
    """Eight language pairs; de-en and fr-en share the target en, so lp and tgt_lang group differently."""
    data = simulate_mt_evaluation(n_segments=30, seed=3).data
    data = data[data["split"] == "calibration"].drop(columns=["split", "true"]).copy()
    into_en = data["lp"].isin(["en-de", "en-fr"])
    data.loc[into_en, "lp"] = data.loc[into_en, "lp"].str[3:] + "-en"
    data.loc[into_en, "src_lang"], data.loc[into_en, "tgt_lang"] = data.loc[into_en, "tgt_lang"], "en"
    assert data["lp"].nunique() == 8 and data["tgt_lang"].nunique() == 7
    return data


#: the columns a table has: lp itself; the two codes only (lp derived); the target only (no pair to derive)
KINDS = ("lp", "codes", "target")


def _variant(frame, kind):
    """The table of ``kind`` and the grouping column the default rule must choose for it."""
    if kind == "lp":
        return frame, "lp"
    if kind == "codes":
        return frame.drop(columns="lp"), "lp"
    return frame.drop(columns=["lp", "src_lang"]), "tgt_lang"


def _cli(*args):
    """``run_cli`` where any warning fails the test: grouped by the derived pair, nothing is pooled."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return run_cli(*args)


def _save(frame, path):
    if path.name.endswith(".parquet"):
        frame.to_parquet(path, index=False)
    elif path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            frame.to_csv(fh, sep="\t", index=False)
    else:
        frame.to_csv(path, sep="\t", index=False)
    return path


def test_the_rule():
    assert default_by(["lp", "tgt_lang", "system"]) == "lp"
    assert default_by(["src_lang", "tgt_lang", "system"]) == "lp"
    assert default_by(["tgt_lang", "system"]) == "tgt_lang"
    assert default_by(["src_lang", "system"]) == "tgt_lang"
    assert default_by([]) == "tgt_lang"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_states_the_one_default(command):
    r = run_cli(*command, "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())  # rich/click wrap the help
    assert "Default: lp (given, or from src_lang and tgt_lang), else tgt_lang." in text, text


@pytest.mark.parametrize("name", ["t.tsv", "t.tsv.gz", "t.parquet"])
@pytest.mark.parametrize("chunk", [None, "100"])
@pytest.mark.parametrize("kind", KINDS)
def test_fit_groups_by_lp_when_present_or_derived_else_tgt_lang(tmp_path, frame, name, chunk, kind):
    table, expected = _variant(frame, kind)
    path = _save(table, tmp_path / name)
    args = ["calibrate", "fit", path, "--score", "metric", "-o", tmp_path / "m.json", "--format", "json"]
    r = run_cli(*args, *(["--chunk-size", chunk] if chunk else []))
    assert r.exit_code == 0, r.stderr
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["params"]["by"] in (expected, [expected]), model["params"]
    n_groups = frame[expected].nunique()  # the groups of the table's own column: 8 pairs, 7 targets
    assert len(json.loads(r.stdout)["groups"]) == n_groups


@pytest.mark.parametrize("chunk", [None, "100"])
@pytest.mark.parametrize("kind", KINDS)
def test_diagnose_groups_by_the_rule_and_says_so(tmp_path, frame, chunk, kind):
    table, expected = _variant(frame, kind)
    path = _save(table, tmp_path / "t.tsv.gz")
    r = _cli("diagnose", path, "--score", "metric", "--format", "json", *(["--chunk-size", chunk] if chunk else []))
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    by = out["by"] if "by" in out else out["bias"]["by"]
    assert by == expected


@pytest.mark.parametrize("kind", KINDS)
def test_leaderboard_and_select_follow_the_same_rule(tmp_path, frame, kind):
    table, expected = _variant(frame, kind)
    path = _save(table, tmp_path / "t.tsv")
    r = _cli("leaderboard", path, "--score", "metric", "--method", "lgn", "--n-resamples", "20", "--format", "json")
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["by"] == expected
    assert {row["group"] for row in out["rows"]} == set(frame[expected])  # de-en and fr-en apart unless no pair
    r = _cli("calibrate", "select", path, "--score", "metric", "--budget", "5", "-o", tmp_path / "pick.tsv",
                "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["by"] == expected  # the output states the grouping used
    r = _cli("calibrate", "plan", path, "--score", "metric", "--budget", "80", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["by"] == expected
    picked = pd.read_csv(tmp_path / "pick.tsv", sep="\t")
    assert expected in picked.columns and len(picked) == 5 * frame[expected].nunique()


@pytest.mark.parametrize("kind", KINDS)
def test_exclude_invalid_uses_the_same_grouping(tmp_path, frame, kind):
    table, expected = _variant(frame, kind)
    table = table.assign(
        hypothesis=lambda d: "a translation of segment " + d["seg_id"].astype(str),
        reference=lambda d: "the translation of segment " + d["seg_id"].astype(str))
    path = _save(table, tmp_path / "t.tsv")
    fit = ("calibrate", "fit", path, "-o", tmp_path / "m.json")
    for command in (("leaderboard", path, "--n-resamples", "20"), fit):
        r = _cli(*command, "--score", "metric", "--exclude-invalid", "--format", "json")
        assert r.exit_code == 0, r.stderr
    assert json.loads((tmp_path / "m.json").read_text())["params"]["by"] in (expected, [expected])


@pytest.mark.parametrize("kind", KINDS)
def test_check_outputs_groups_by_the_rule(tmp_path, frame, kind):
    """check-outputs groups by the rule too (a table with tgt_lang only was refused)."""
    table, expected = _variant(frame, kind)
    table = table.assign(
        hypothesis=lambda d: "a translation of segment " + d["seg_id"].astype(str),
        reference=lambda d: "the translation of segment " + d["seg_id"].astype(str))
    path = _save(table, tmp_path / "t.tsv")
    r = run_cli("check-outputs", path, "--langid", "none", "--format", "json")
    assert r.exit_code == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["by"] == [expected]
    assert {row[expected] for row in result["rates"]} == set(frame[expected])


def test_the_calibrators_fit_a_frame_with_the_two_codes_as_one_with_lp(frame):
    """The calibrators, given a frame with src_lang and tgt_lang but no lp, group by the derived pair: the same fit
    and the same calibrated scores as on the frame with its lp (the oracle), and the caller's frame unchanged."""
    from xleval.calibration import LGN, AnchoredCalibrator

    codes = frame.drop(columns="lp")
    before = codes.copy()
    for make in (lambda: LGN(score="metric"), lambda: AnchoredCalibrator(score="metric", human="human")):
        derived, given = make().fit(codes), make().fit(frame)
        assert derived.by_ == given.by_ == ["lp"]
        assert derived.transform(codes) == pytest.approx(given.transform(frame))
    pd.testing.assert_frame_equal(codes, before)


def test_reference_copies_are_found_per_derived_pair(frame):
    """A system copying the reference in one pair is found in that pair, as with the table's own lp; grouped by
    tgt_lang the pair was pooled with its neighbour into English (fr-en)."""
    from xleval.output_checks import drop_reference_copies, reference_copies

    texts = frame.assign(reference="the translation of segment " + frame["seg_id"].astype(str),
                         hypothesis="a translation of segment " + frame["seg_id"].astype(str))
    copier = (texts["lp"] == "de-en") & (texts["system"] == texts["system"].iloc[0])
    texts.loc[copier, "hypothesis"] = texts.loc[copier, "reference"]
    want = reference_copies(texts)
    got = reference_copies(texts.drop(columns="lp"))
    assert got.checked and got.copies == want.copies == (("de-en", texts["system"].iloc[0]),)
    kept, _ = drop_reference_copies(texts.drop(columns="lp"))  # the rows of that pair's copy, and only those
    pd.testing.assert_frame_equal(kept, texts.loc[~copier].drop(columns="lp"))


def test_score_names_a_copy_in_a_table_with_the_two_codes(tmp_path, frame):
    """`xleval score` names a copy of the reference per pair; a table with src_lang and tgt_lang and no lp was
    grouped by lp, which it has not, and said nothing."""
    texts = frame.drop(columns="lp").assign(
        reference="the translation of segment " + frame["seg_id"].astype(str),
        hypothesis="a translation of segment " + frame["seg_id"].astype(str))
    system = texts["system"].iloc[0]
    copier = (frame["lp"] == "de-en") & (texts["system"] == system)
    texts.loc[copier, "hypothesis"] = texts.loc[copier, "reference"]
    for name in ("in.tsv", "in.parquet"):
        path = _save(texts, tmp_path / name)
        r = run_cli("score", path, "-m", "chrf", "-o", tmp_path / f"out-{name}")
        assert r.exit_code == 0, r.stderr
        assert f"'{system}' in de-en" in " ".join(r.stderr.split()), r.stderr
