"""Every command the advice prints runs as written: diagnose, report and leaderboard name the table,
--score, --by, --col and -o, shell-quoted, and the printed command succeeds when pasted."""
import json
import re
import shlex

import numpy as np
import pandas as pd

from xleval.cli._advice import CommandContext
from xleval.decision import choose_method

LANGS = {"x0": "en-de", "x1": "en-fr", "x2": "en-zh"}


def _table(n_sys=5, n_seg=40, seed=0, quality=(0.0, 0.0, 0.0)):
    rng = np.random.default_rng(seed)
    rows = []
    for g, (lp, bias, true) in enumerate(zip(LANGS.values(), (10.0, 0.0, -10.0), quality, strict=True)):
        for s in range(n_sys):
            q = rng.normal()
            rows.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(n_seg),
                                      "source": [f"source {g}-{i}" for i in range(n_seg)],
                                      "m": 50 + bias + 5 * q + 5 * rng.normal(size=n_seg),
                                      "human": 70 + true + 3 * q + 5 * rng.normal(size=n_seg)}))
    return pd.concat(rows, ignore_index=True)


def _commands(text: str) -> list[list[str]]:
    """The backquoted xleval commands of the output, as argv (without 'xleval')."""
    found = re.findall(r"`(xleval [^`]+)`", text.replace("\n", " "))
    return [shlex.split(c)[1:] for c in dict.fromkeys(found)]


def _write(df, path):
    df.to_csv(path, sep="\t", index=False)
    return path


def test_without_a_renderer_the_library_names_library_calls_not_flags():
    """A Python caller is told the call that does it; the actions carry the facts for any renderer."""
    df = _table().rename(columns={"m": "my score"})
    df["human"] = np.nan
    choice = choose_method(df, "my score", "lp", human="human")
    select, fit = choice.commands
    assert select == ("xleval.calibration.select_for_annotation(data, by='lp', budget=100, score='my score', "
                      "system='system', skip_labelled='human')")
    assert fit.startswith("xleval.decision.fit_calibration(data, 'anchored', score='my score', by='lp'")
    assert select in choice.warning and "--" not in choice.warning
    assert [a.action for a in choice.actions] == ["select", "fit"] and choice.actions[0].budget == 100


def test_the_cli_renderer_names_every_option_but_the_table():
    df = _table().rename(columns={"m": "my score"})
    df["human"] = np.nan
    choice = choose_method(df, "my score", "lp", human="human", commands=CommandContext())
    select, fit = choice.commands
    assert select == ("xleval calibrate select TABLE --score 'my score' --by lp --budget 100 --skip-labelled human "
                      "-o to_label.tsv")
    assert fit.startswith("xleval calibrate fit TABLE --score 'my score' --by lp --method anchored --human human")
    assert select in choice.warning and fit in choice.warning


def test_context_quotes_paths_and_repeats_the_column_mapping():
    ctx = CommandContext.from_cli("my data/it's.tsv", ("metric=m",))
    argv = shlex.split(ctx.select("metric", ["lp", "domain"], 50, system="engine"))
    assert argv == ["xleval", "calibrate", "select", "my data/it's.tsv", "--score", "metric", "--by", "lp,domain",
                    "--budget", "50", "--system", "engine", "-o", "to_label.tsv", "--col", "metric=m"]
    assert CommandContext.from_cli("-").table is None  # stdin cannot be read twice: the placeholder


def test_diagnose_with_labels_everywhere_prints_a_fit_command_that_runs(cli, tmp_path):
    # the groups differ in true quality as the metric says: anchored keeps it, LGN would erase it
    path = _write(_table(quality=(8.0, 0.0, -8.0)), tmp_path / "my table.tsv")
    rc, out, err = cli("diagnose", path, "--score", "metric", "--col", "metric=m", "--by", "tgt_lang",
                       "--human", "human", "--n-resamples", "50", cwd=tmp_path)
    assert rc == 0, err
    (fit,) = _commands(out)
    assert fit[:3] == ["calibrate", "fit", str(path)] and "--method" in fit and "anchored" in fit
    rc, _, err = cli(*fit, cwd=tmp_path)
    assert rc == 0, err
    assert json.loads((tmp_path / "calibrator.json").read_text())["params"]["human"] == "human"


def test_the_advised_fit_keeps_the_human_scale_the_user_named(cli, tmp_path):
    """diagnose --human-scale da decided on DA's direction and 0-100 bounds; the fit it printed dropped the scale,
    so the calibrator it wrote kept neither. The command (and the Python call) now carry it, and it runs."""
    df = _table(quality=(8.0, 0.0, -8.0))
    path = _write(df, tmp_path / "scaled.tsv")
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", "--human-scale", "da",
                       "--n-resamples", "50", cwd=tmp_path)
    assert rc == 0, err
    (fit,) = _commands(out)
    assert fit[:2] == ["calibrate", "fit"] and fit[fit.index("--human-scale") + 1] == "da"
    rc, _, err = cli(*fit, cwd=tmp_path)
    assert rc == 0, err
    assert json.loads((tmp_path / "calibrator.json").read_text())["params"]["human_range"] == [0.0, 100.0]
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--human", "human", "--n-resamples", "50",
                       cwd=tmp_path)
    assert rc == 0, err
    assert "--human-scale" not in _commands(out)[0]  # nothing named, nothing added
    python = choose_method(df, "m", "lp", human="human", human_scale="da").commands
    assert python[-1].endswith("system='system', human_scale='da')")


def test_diagnose_with_partial_labels_prints_select_then_fit_and_both_run(cli, tmp_path):
    df = _table()
    df.loc[df["lp"] != "en-de", "human"] = np.nan
    path = _write(df, tmp_path / "partial labels.tsv")
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "tgt_lang", "--human", "human",
                       "--n-resamples", "50", cwd=tmp_path)
    assert rc == 0, err
    select, fit = _commands(out)
    assert select[:2] == ["calibrate", "select"] and fit[:2] == ["calibrate", "fit"]
    rc, _, err = cli(*select, cwd=tmp_path)
    assert rc == 0, err
    chosen = pd.read_csv(tmp_path / "to_label.tsv", sep="\t")
    assert set(chosen["tgt_lang"]) == {"fr", "zh"} and chosen.groupby("tgt_lang").size().eq(100).all()
    # the annotators fill in the labels; merged back on row_id (0-based), the fit command runs as printed
    truth = _table()["human"].to_numpy()
    df.loc[chosen["row_id"], "human"] = truth[chosen["row_id"]]
    _write(df, path)
    rc, _, err = cli(*fit, cwd=tmp_path)
    assert rc == 0, err
    assert (tmp_path / "calibrator.json").exists()


def test_report_and_leaderboard_advice_runs_as_written(cli, tmp_path):
    df = _table()
    df["human"] = np.nan
    path = _write(df, tmp_path / "no labels.tsv")
    rc, _, err = cli("report", path, "--score", "m", "--by", "lp", "-o", tmp_path / "r.json", "--format", "json",
                     "--n-resamples", "20", cwd=tmp_path)
    assert rc == 0, err
    text = (tmp_path / "r.json").read_text()
    commands = _commands(json.loads(text)["summary"]["reasons"][-1])
    assert [c[:2] for c in commands] == [["calibrate", "select"], ["calibrate", "fit"]]
    rc, out, err = cli("leaderboard", path, "--score", "m", "--by", "lp", "--n-resamples", "20", cwd=tmp_path)
    assert rc == 0, err
    assert _commands(out) == commands  # the same advice in both places
    rc, _, err = cli(*commands[0], cwd=tmp_path)
    assert rc == 0, err
    assert len(pd.read_csv(tmp_path / "to_label.tsv", sep="\t")) == 300


def test_stdin_input_prints_the_table_placeholder(cli, tmp_path):
    df = _table()
    df["human"] = np.nan
    rc, out, err = cli("diagnose", "-", "--score", "m", "--by", "lp", "--n-resamples", "20",
                       input=df.to_csv(sep="\t", index=False), cwd=tmp_path)
    assert rc == 0, err
    assert all(c[2] == "TABLE" for c in _commands(out))


def test_calibrate_fit_auto_warning_names_commands_that_run(cli, tmp_path):
    df = _table()
    df.loc[df["lp"] == "en-zh", "human"] = np.nan
    path = _write(df, tmp_path / "some labels.tsv")
    rc, _, err = cli("calibrate", "fit", path, "--score", "m", "--by", "lp", "--method", "auto", "--human", "human",
                     "-o", tmp_path / "auto.json", cwd=tmp_path)
    assert rc == 0, err
    select, fit = _commands(err)
    assert select[:3] == ["calibrate", "select", str(path)] and "--skip-labelled" in select
    assert fit[:3] == ["calibrate", "fit", str(path)]
    rc, _, err = cli(*select, cwd=tmp_path)
    assert rc == 0, err
    assert set(pd.read_csv(tmp_path / "to_label.tsv", sep="\t")["lp"]) == {"en-zh"}


def test_small_groups_get_a_budget_select_accepts(cli, tmp_path):
    df = _table(n_sys=2, n_seg=15)  # 30 rows per group: below the recommended 100
    df["human"] = np.nan
    path = _write(df, tmp_path / "small.tsv")
    rc, out, err = cli("diagnose", path, "--score", "m", "--by", "lp", "--n-resamples", "20", cwd=tmp_path)
    assert rc == 0, err
    select = _commands(out)[0]
    assert select[select.index("--budget") + 1] == "30"
    rc, _, err = cli(*select, cwd=tmp_path)
    assert rc == 0, err


def test_the_advice_to_label_more_names_the_groups_and_asks_only_for_rows_that_exist():
    # WMT20's systems.csv (one row per system, every system with DA judged): the advice said "label up to 100 rows
    # there" for ps-en (6 systems, all labelled) and named `calibrate select --budget 1`, which had nothing to select
    df = _table()
    few = df.copy()
    keep = (few["lp"] != "en-fr") | (few["seg_id"] < 1) & (few["system"].isin(["s0", "s1", "s2", "s3", "s4"]))
    few.loc[~keep, "human"] = np.nan  # en-fr: 5 labels (one per system), 195 rows left to label
    choice = choose_method(few, "m", "lp", human="human")
    assert choice.method == "anchored"
    assert "the group(s) with fewest labels (5: en-fr) lean on the common offset, so label up to 100 rows there" \
        in choice.reason
    assert [a.action for a in choice.actions] == ["select", "fit"] and choice.actions[0].budget == 100
    systems = df.groupby(["lp", "system"], as_index=False)[["m", "human"]].mean()  # 5 systems a pair, all judged
    choice = choose_method(systems, "m", "lp", human="human")
    assert choice.method == "anchored"
    assert ("the group(s) with fewest labels (5: en-de, en-fr, en-zh) lean on the common offset, and every row of "
            "theirs with a score is labelled" in choice.reason)
    assert "label up to" not in choice.reason
    assert [a.action for a in choice.actions] == ["fit"]
