"""One note, one rendering: the "plan them" advice of the pairs of cells is the same runnable command in the
leaderboard's stderr, the report's JSON (summary and section) and its HTML, and the library's call in Python;
the budget curve's selection is named as the evaluation drew it."""
from __future__ import annotations

import html
import json
import re
import warnings

import numpy as np
import pytest

from conftest import import_example
from xleval.decision import recommend_calibration
from xleval.leaderboard import leaderboard
from xleval.stats import Resampling

PLAN = re.compile(r"plan them: ([^)]*)\)")


@pytest.fixture(scope="module")
def few_labels(tmp_path_factory):
    """4 groups of 5 systems, 20 labels per group (4 per system): the labels decide few comparisons across groups."""
    frame, _ = import_example("calibration_simulation").world(np.random.default_rng(4), "lgn", 4, n_systems=5,
                                                               n_labels=20)
    path = tmp_path_factory.mktemp("few") / "w.tsv"
    frame.to_csv(path, sep="\t", index=False)
    return frame, path


def test_the_plan_note_is_one_runnable_command_in_every_output(few_labels, tmp_path, cli):
    frame, path = few_labels
    roles = ["--score", "score", "--by", "lp", "--human", "human", "--method", "anchored", "--human-scale", "da",
             "--n-resamples", "100"]
    rc, _, err = cli("leaderboard", path, *roles, "--pairs", tmp_path / "p.tsv")
    assert rc == 0, err
    said = PLAN.findall(" ".join(err.split()))
    labels = int(frame["human"].notna().sum())
    command = (f"xleval calibrate plan {path} --budget {2 * labels} --score score --by lp --human human "
               "--human-scale da")
    assert said == [command]
    for suffix in ("json", "html"):
        rc, _, err = cli("report", path, *roles, "-o", tmp_path / f"r.{suffix}")
        assert rc == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    notes = report["summary"]["which_cells_differ"]["notes"]
    section = " ".join(json.dumps(s) for s in report["sections"] if s.get("id") == "pairs")
    page = html.unescape((tmp_path / "r.html").read_text())
    # was: the summary's notes named the library's function, the section and the page a bare `xleval calibrate
    # plan` with a pointer to the docs
    assert PLAN.findall(" ".join(notes)) == [command]
    assert PLAN.findall(section) == [command]
    assert PLAN.findall(page) == [command]
    # the command it names runs as written, on the scale named (its direction)
    rc, _, err = cli(*command.split()[1:])
    assert rc == 0, err


def test_the_library_names_its_own_call_with_the_scale_named(few_labels):
    frame, _ = few_labels
    boards = {}
    for scale in (None, "da"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            boards[scale] = leaderboard(frame, "score", "lp", human="human", method="anchored", human_scale=scale,
                                        resampling=Resampling(n_resamples=100, random_state=0))
    plain = " ".join(boards[None].pairs().notes)
    named = " ".join(boards["da"].pairs().notes)  # the scale the board was built with
    assert " ".join(boards[None].pairs(human_scale="da").notes) == named
    labels = int(frame["human"].notna().sum())
    call = (f"(plan them: xleval.calibration.plan_labels(data, by='lp', budget={2 * labels}, score='score', "
            "human='human', system='system'")
    assert call + "))" in plain
    assert call + ", human_scale='da'))" in named
    assert "xleval calibrate" not in plain + named  # a Python user is not told a command line


def test_the_budget_curve_names_the_selection_it_drew(few_labels):
    from xleval.report._summary import _selection_note

    frame, _ = few_labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = recommend_calibration(frame, "score", "lp", human="human", human_scale="da")
    drawn = set(rec.evaluation.curve()["selection"])
    note = _selection_note(rec.evaluation)
    # was: "chosen to spread over systems and scores" whatever the selection
    assert drawn == {"random"} and note == " K labels per group are drawn at random (random) from the table's labels."
