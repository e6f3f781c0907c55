"""Issue 34, item 6: `meta`, `check-outputs` and `calibrate plan` show that they are working on a terminal
(stderr, after the delay) and nothing in a pipe. Their library calls tell no steps (meta_evaluate,
check_outputs, plan_labels take no progress callback), so the command shows a spinner with the time elapsed;
`meta --calibrations` counts the out-of-fold evaluations of every metric to their total, and every counting
bar shows the time left."""
import json

import numpy as np
import pandas as pd
import pytest
import rich.progress

from test_progress_commands import RECORDED, _mt, _Recording, terminal  # noqa: F401 (a fixture)
from xleval.cli import _common


def _outputs(tmp_path):
    rng = np.random.default_rng(0)
    words = "the cat sat on the mat today and the dog ran far away".split()  # noqa: SIM905
    rows = []
    for lp in ("en-de", "en-fr"):
        for system in ("a", "b"):
            for seg in range(20):
                ref = " ".join(rng.choice(words, size=8))
                rows.append({"lp": lp, "system": system, "seg_id": seg, "source": f"source {seg}", "reference": ref,
                             "hypothesis": "" if seg == 0 else ref, "chrf": float(rng.uniform(20, 80))})
    path = tmp_path / "outputs.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _half_labelled(tmp_path):
    path = _mt(tmp_path)
    frame = pd.read_csv(path, sep="\t")
    frame.loc[frame["seg_id"] % 2 == 1, "human"] = np.nan
    frame.to_csv(path, sep="\t", index=False)
    return path


COMMANDS = {
    "meta": (_mt, lambda p: ["meta", p, "--metrics", "m", "--human", "human", "--by", "lp", "--n-resamples", "30"]),
    "check-outputs": (_outputs, lambda p: ["check-outputs", p, "--score", "chrf", "--langid", "none", "--format",
                                           "json"]),
    "calibrate plan": (_half_labelled, lambda p: ["calibrate", "plan", p, "--budget", "150", "--score", "m", "--by",
                                                  "lp", "--human", "human", "--format", "json"]),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_spinner_on_a_terminal(cli, tmp_path, terminal, name):  # noqa: F811
    make, argv = COMMANDS[name]
    rc, _, err = cli(*argv(make(tmp_path)), cwd=tmp_path)
    assert rc == 0, err
    assert terminal == [[(0, None)]], "one spinner, no count (the library tells no steps)"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_nothing_when_not_a_terminal(cli, tmp_path, monkeypatch, name):
    monkeypatch.setattr(_common, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(rich.progress, "Progress", _Recording)
    RECORDED.clear()
    make, argv = COMMANDS[name]
    rc, out, err = cli(*argv(make(tmp_path)), cwd=tmp_path)
    assert rc == 0, err
    assert RECORDED == [] and "\r" not in err and "\x1b" not in err
    if "--format" in argv(make(tmp_path)):
        json.loads(out)  # stdout stays one JSON document


def test_meta_calibrations_count_every_metric_to_the_total(cli, tmp_path, terminal):  # noqa: F811
    path = _mt(tmp_path)
    frame = pd.read_csv(path, sep="\t")
    frame["m2"] = frame["m"] + np.random.default_rng(1).normal(size=len(frame))
    frame.to_csv(path, sep="\t", index=False)
    rc, _, err = cli("meta", path, "--metrics", "m,m2", "--human", "human", "--by", "lp", "--n-resamples", "30",
                     "--calibrations", "raw,lgn", "--folds", "2", "--repeats", "2", cwd=tmp_path)
    assert rc == 0, err
    spinner, bar = terminal
    assert spinner == [(0, None)]
    ((completed, declared),) = bar
    # calibrate evaluate's steps (folds x repeats + 1, as test_progress_commands counts them) for each of 2 metrics
    assert completed == declared == 2 * (2 * 2 + 1)


def test_counting_bars_show_the_time_left(cli, tmp_path, terminal):  # noqa: F811
    columns: list[list[type]] = []

    class Columns(_Recording):
        def start(self) -> None:
            columns.append([type(c) for c in self.columns])
            super().start()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rich.progress, "Progress", Columns)
        rc, _, err = cli("diagnose", _mt(tmp_path), "--score", "m", "--by", "lp", "--human", "human",
                         "--n-resamples", "30", cwd=tmp_path)
    assert rc == 0, err
    (shown,) = columns
    assert rich.progress.TimeRemainingColumn in shown and rich.progress.TimeElapsedColumn in shown
