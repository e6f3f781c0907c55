"""Every long command shows a progress bar on a terminal (stderr, after the delay) that reaches its
total exactly when the work is done, and nothing at all when stderr is not a terminal. The library
only calls the callback it is given (xleval._base.progress)."""
import json
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
import rich.progress

from test_intrinsic_confounds import _synthetic
from xleval.audit import simulate_audit_data
from xleval.cli import _common
from xleval.decision import DEFAULT_PROCEDURE

RECORDED: list[list[tuple[float, float | None]]] = []


class _Recording(rich.progress.Progress):
    """The real bar, which also records where its tasks stood when it stopped."""

    def stop(self) -> None:
        RECORDED.append([(task.completed, task.total) for task in self.tasks])
        super().stop()


@pytest.fixture
def terminal(monkeypatch):
    """stderr looks like a terminal and the bar shows at once."""
    monkeypatch.setattr(_common.err_console, "_force_terminal", True)
    monkeypatch.setattr(_common, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(rich.progress, "Progress", _Recording)
    RECORDED.clear()
    return RECORDED


def _mt(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for lp, bias in (("en-de", 5.0), ("en-fr", 0.0), ("en-zh", -5.0)):
        for s in range(6):
            q = rng.normal()
            rows.append(pd.DataFrame({"lp": lp, "system": f"s{s}", "seg_id": np.arange(12),
                                      "m": 50 + bias + 5 * q + rng.normal(size=12),
                                      "human": 70 + 3 * q + rng.normal(size=12)}))
    path = tmp_path / "mt table.tsv"
    pd.concat(rows).to_csv(path, sep="\t", index=False)
    return path


def _fairness(tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"language": lang, "qid": i, "f1": float(rng.random() < p), "model": m}
            for m in ("a", "b") for lang, p in (("en", 0.9), ("de", 0.8), ("sw", 0.6)) for i in range(30)]
    path = tmp_path / "items.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _audit(tmp_path):
    df, _ = simulate_audit_data(n_items=30, n_models=2, n_native=30, random_state=1)
    path = tmp_path / "results.csv"
    df.to_csv(path, index=False)
    return path


def _confounds(tmp_path):
    path = tmp_path / "scores.parquet"
    _synthetic(n=8).table.to_parquet(path)
    return path


COMMANDS = {
    "diagnose": (_mt, lambda p, out: ["diagnose", p, "--score", "m", "--by", "lp", "--human", "human",
                                      "--n-resamples", "30"], 4),
    "report": (_mt, lambda p, out: ["report", p, "--score", "m", "--by", "lp", "--human", "human", "-o",
                                    out / "r.json", "--format", "json", "--n-resamples", "30"], 5),
    "leaderboard": (_mt, lambda p, out: ["leaderboard", p, "--score", "m", "--by", "lp", "--human", "human",
                                         "--n-resamples", "30"], 3),
    "calibrate evaluate": (_mt, lambda p, out: ["calibrate", "evaluate", p, "--score", "m", "--human", "human",
                                                "--by", "lp", "--folds", "2", "--repeats", "2", "--budget", "5",
                                                "--n-resamples", "30"], 2 * 2 + 1),
    "fairness gaps": (_fairness, lambda p, out: ["fairness", "gaps", p, "--metric", "f1", "--by", "language",
                                                 "--model", "model", "--n-resamples", "30"], 2 * 3),
    "audit": (_audit, lambda p, out: ["audit", p, "--n-resamples", "30"], None),
    "intrinsic confounds": (_confounds, lambda p, out: ["intrinsic", "confounds", p], 3),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_bar_reaches_its_total_on_a_terminal(cli, tmp_path, terminal, name):
    make, argv, total = COMMANDS[name]
    rc, _, err = cli(*argv(make(tmp_path), tmp_path), cwd=tmp_path)
    assert rc == 0, err
    assert len(terminal) == 1, "one bar per command"
    ((completed, declared),) = terminal[0]
    assert declared is not None and completed == declared
    if total is not None:
        assert declared == total
    else:  # audit: two estimates per estimator that can run (E1, E3, E4 here), dose-response, ratings
        assert declared == 2 * 3 + 2


@pytest.mark.parametrize("name", ["diagnose", "fairness gaps", "intrinsic confounds"])
def test_no_bar_and_no_stderr_when_not_a_terminal(cli, tmp_path, monkeypatch, name):
    monkeypatch.setattr(_common, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(rich.progress, "Progress", _Recording)
    RECORDED.clear()
    make, argv, _ = COMMANDS[name]
    rc, out, err = cli(*argv(make(tmp_path), tmp_path), "--format", "json", cwd=tmp_path)
    assert rc == 0, err
    assert RECORDED == [] and "\r" not in err and "\x1b" not in err
    json.loads(out)  # stdout stays one JSON document


def test_the_library_counts_its_steps_without_a_terminal():
    """The callback protocol on its own: the total first, then one unit per step."""
    from xleval.decision import Caller, diagnose

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"lp": np.repeat(["en-de", "en-fr"], 40), "system": np.tile(["a", "b"], 40),
                       "m": rng.normal(size=80), "human": rng.normal(size=80)})
    calls = []
    diagnose(df, "m", "lp", human="human",
             caller=Caller(progress=lambda units=1, *, total=None: calls.append((units, total))),
             procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))
    assert calls == [(0, 4), (1, None), (1, None), (1, None), (1, None)]


class _Stages(_Recording):
    """The real bar, recording each description it is given."""

    seen: ClassVar[list[str]] = []

    def update(self, task_id, **fields) -> None:
        if "description" in fields:
            _Stages.seen.append(fields["description"])
        super().update(task_id, **fields)


def test_score_names_the_metric_it_is_scoring(cli, tmp_path, monkeypatch):
    """Issue 34: the bar of `score` says which metric runs, with its place among them, and still
    reaches its total (rows x metrics)."""
    monkeypatch.setattr(_common.err_console, "_force_terminal", True)
    monkeypatch.setattr(_common, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(rich.progress, "Progress", _Stages)
    RECORDED.clear()
    _Stages.seen = []
    path = tmp_path / "in.tsv"
    pd.DataFrame({"lp": "en-de", "system": "a", "hypothesis": ["ein Haus", "der Hund"] * 5,
                  "reference": ["ein Haus", "die Katze"] * 5}).to_csv(path, sep="\t", index=False)
    rc, _, err = cli("score", path, "-m", "bleu,chrf,ter", "-o", tmp_path / "out.tsv", cwd=tmp_path)
    assert rc == 0, err
    assert _Stages.seen == ["scoring: bleu (1 of 3)", "scoring: chrf (2 of 3)", "scoring: ter (3 of 3)"]
    assert RECORDED == [[(30, 30)]]


def test_a_callback_without_stage_is_never_told_one():
    """The library's protocol stays `progress(units, *, total=None)`: a callback without `stage=` works."""
    from xleval.metrics import score_frame

    calls = []
    df = pd.DataFrame({"hypothesis": ["a b", "c d"], "reference": ["a b", "c e"], "lp": "en-de"})
    score_frame(df, ["chrf", "bleu"], progress=lambda units=1, *, total=None: calls.append(units))
    assert sum(calls) == 4 and 0 not in calls
