"""Issue 23 item 10: one ``--by`` default everywhere — ``lp`` when the table has it, else ``tgt_lang`` —
decided from the header (also for streamed and gzip inputs), shown in ``--help`` and stated in the outputs."""
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


def _cli(*args):
    """``run_cli`` with warnings printed as the command line prints them: grouped by tgt_lang, de-en and fr-en are
    pooled into the group 'en', which a warning says (under pytest's filter it would raise)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("default")
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
    assert default_by(["src_lang", "tgt_lang", "system"]) == "tgt_lang"
    assert default_by([]) == "tgt_lang"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_states_the_one_default(command):
    r = run_cli(*command, "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())  # rich/click wrap the help
    assert "Default: lp if present, else tgt_lang." in text, text


@pytest.mark.parametrize("name", ["t.tsv", "t.tsv.gz", "t.parquet"])
@pytest.mark.parametrize("chunk", [None, "100"])
@pytest.mark.parametrize("with_lp", [True, False])
def test_fit_groups_by_lp_when_present_else_tgt_lang(tmp_path, frame, name, chunk, with_lp):
    table = frame if with_lp else frame.drop(columns="lp")
    path = _save(table, tmp_path / name)
    args = ["calibrate", "fit", path, "--score", "metric", "-o", tmp_path / "m.json", "--format", "json"]
    r = run_cli(*args, *(["--chunk-size", chunk] if chunk else []))
    assert r.exit_code == 0, r.stderr
    expected = "lp" if with_lp else "tgt_lang"
    model = json.loads((tmp_path / "m.json").read_text())
    assert model["params"]["by"] in (expected, [expected]), model["params"]
    n_groups = table[expected].nunique()
    assert len(json.loads(r.stdout)["groups"]) == n_groups


@pytest.mark.parametrize("chunk", [None, "100"])
@pytest.mark.parametrize("with_lp", [True, False])
def test_diagnose_groups_by_the_rule_and_says_so(tmp_path, frame, chunk, with_lp):
    table = frame if with_lp else frame.drop(columns="lp")
    path = _save(table, tmp_path / "t.tsv.gz")
    r = _cli("diagnose", path, "--score", "metric", "--format", "json", *(["--chunk-size", chunk] if chunk else []))
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    expected = "lp" if with_lp else "tgt_lang"
    by = out["by"] if "by" in out else out["bias"]["by"]
    assert by == expected


@pytest.mark.parametrize("with_lp", [True, False])
def test_leaderboard_and_select_follow_the_same_rule(tmp_path, frame, with_lp):
    table = frame if with_lp else frame.drop(columns="lp")
    path = _save(table, tmp_path / "t.tsv")
    expected = "lp" if with_lp else "tgt_lang"
    r = _cli("leaderboard", path, "--score", "metric", "--method", "lgn", "--n-resamples", "20", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["by"] == expected
    pooled = "pooled into one group (e.g. 'en' from 'de', 'fr'); give --by lp" in " ".join(r.stderr.split())
    assert pooled == (not with_lp)  # the two pairs into English share the group 'en': said, not silent
    r = _cli("calibrate", "select", path, "--score", "metric", "--budget", "5", "-o", tmp_path / "pick.tsv",
                "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["by"] == expected  # the output states the grouping used
    r = _cli("calibrate", "plan", path, "--score", "metric", "--budget", "80", "--format", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["by"] == expected
    picked = pd.read_csv(tmp_path / "pick.tsv", sep="\t")
    assert expected in picked.columns and len(picked) == 5 * table[expected].nunique()


@pytest.mark.parametrize("with_lp", [True, False])
def test_exclude_invalid_uses_the_same_grouping(tmp_path, frame, with_lp):
    table = (frame if with_lp else frame.drop(columns="lp")).assign(
        hypothesis=lambda d: "a translation of segment " + d["seg_id"].astype(str),
        reference=lambda d: "the translation of segment " + d["seg_id"].astype(str))
    path = _save(table, tmp_path / "t.tsv")
    fit = ("calibrate", "fit", path, "-o", tmp_path / "m.json")
    for command in (("leaderboard", path, "--n-resamples", "20"), fit):
        r = _cli(*command, "--score", "metric", "--exclude-invalid", "--format", "json")
        assert r.exit_code == 0, r.stderr
    assert json.loads((tmp_path / "m.json").read_text())["params"]["by"] in ("lp" if with_lp else "tgt_lang",
                                                                             ["lp" if with_lp else "tgt_lang"])


@pytest.mark.parametrize("with_lp", [True, False])
def test_check_outputs_groups_by_the_rule(tmp_path, frame, with_lp):
    """check-outputs grouped by lp whatever the table (a table with tgt_lang only was refused)."""
    table = (frame if with_lp else frame.drop(columns="lp")).assign(
        hypothesis=lambda d: "a translation of segment " + d["seg_id"].astype(str),
        reference=lambda d: "the translation of segment " + d["seg_id"].astype(str))
    path = _save(table, tmp_path / "t.tsv")
    r = run_cli("check-outputs", path, "--langid", "none", "--format", "json")
    assert r.exit_code == 0, r.stderr
    expected = "lp" if with_lp else "tgt_lang"
    result = json.loads(r.stdout)
    assert result["by"] == [expected]
    assert {row[expected] for row in result["rates"]} == set(table[expected])
