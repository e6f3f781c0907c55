"""A calibrator fitted on one spelling of the language pairs applies to another (xleval.calibration._spelling).

xleval's tables normalise the language columns (WMT25's ``en-cs_CZ`` reads as ``en-cs-CZ``, ``deu-eng`` as
``de-en``); a calibrator fitted on a plain DataFrame keeps the labels as written. Before the spelling match,
``calibrate_frame``/``apply_calibrator`` (which normalise the table) found none of the fitted groups: every row
of an anchored map got the common offset and every row of an LGN its target-language fallback, with only a
warning. The oracle is the same calibrator fitted on the normalised table, which groups the same rows."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.calibration import LGN, AnchoredCalibrator, calibrate_frame, prepare_frame
from xleval.exceptions import UnseenGroupWarning
from xleval.leaderboard import leaderboard

PAIRS = ["en-cs_CZ", "EN-DE", "deu-eng", "en-sr_Cyrl_RS"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 240
    df = pd.DataFrame({"lp": np.repeat(PAIRS, n), "system": np.tile(np.repeat(list("abcd"), n // 4), len(PAIRS)),
                       "score": rng.normal(50, 10, n * len(PAIRS)) + np.repeat([0.0, 6.0, -4.0, 9.0], n)})
    quality = {"a": 0.0, "b": 2.0, "c": 4.0, "d": 6.0}
    level = np.repeat([0.0, 3.0, 1.0, -2.0], n) + df["system"].map(quality).to_numpy()
    human = 0.6 * df["score"] + level + rng.normal(0, 5, len(df))
    df["human"] = np.where(rng.random(len(df)) < 0.25, human, np.nan)
    return df


def _models():
    return (LGN(by="lp", score="score"),
            AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True))


@pytest.mark.parametrize("model", _models(), ids=["lgn", "anchored"])
def test_fitted_on_the_spelling_written_applies_to_the_normalised_table(table, model):
    normalised = prepare_frame(table, ["lp"])
    assert {"en-cs-CZ", "en-de", "de-en"} < set(normalised["lp"].astype(str))  # the keys the tables use
    assert not set(PAIRS) & set(normalised["lp"].astype(str))  # none as written
    oracle = type(model)(**model.get_params()).fit(normalised)
    model.fit(table)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenGroupWarning)
        applied = calibrate_frame(model, table)
        reverse = oracle.transform(table)  # fitted on the keys, applied to the spellings
    column = f"score_{model.kind}"
    np.testing.assert_allclose(applied[column], oracle.transform(normalised), rtol=1e-12)
    np.testing.assert_allclose(reverse, model.transform(table), rtol=1e-12)
    assert set(applied["calibration_source"]) == {"lp"}  # no row on a fallback


def test_a_pair_not_fitted_in_any_spelling_is_still_unseen(table):
    model = AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True).fit(
        table[table["lp"] != "deu-eng"])
    with pytest.warns(UnseenGroupWarning, match="de-en"):
        out = calibrate_frame(model, table)
    sources = out.groupby("lp")["calibration_source"].first()
    assert sources["deu-eng"] == "pooled" and (sources.drop("deu-eng") == "lp").all()


def test_two_fitted_spellings_of_one_pair_are_matched_only_as_written(table):
    """``deu-eng`` and ``de-en`` fitted as two groups: ``DE-EN`` could be either, so it is unseen, not guessed."""
    both = pd.concat([table, table[table["lp"] == "deu-eng"].assign(lp="de-en")], ignore_index=True)
    model = AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True).fit(both)
    assert model.fitted_labels(["de-en", "deu-eng", "DE-EN", "en-cs-CZ"]) == ["de-en", "deu-eng", "DE-EN", "en-cs_CZ"]


def test_several_group_columns_match_the_language_part_only(table):
    df = table.assign(domain=np.where(np.arange(len(table)) % 2, "news", "speech"))
    model = AnchoredCalibrator(by=["lp", "domain"], score="score", human="human", human_higher_is_better=True).fit(df)
    assert model.fitted_labels(["en-cs-CZ|news", "de-en|speech", "en-cs-CZ|News"]) == \
        ["en-cs_CZ|news", "deu-eng|speech", "en-cs-CZ|News"]  # a domain is matched as written


def test_a_saved_calibrator_fitted_in_python_ranks_and_applies_from_the_command_line(table, tmp_path):
    """The user's path: fit in Python on the file's spellings, save, then `leaderboard --model` and `calibrate
    apply` read the file (normalising its pairs): every group keeps its own offset."""
    model = AnchoredCalibrator(by="lp", score="score", human="human", system="system",
                               human_higher_is_better=True).fit(table)
    path, data = tmp_path / "anchored.json", tmp_path / "scored.tsv"
    model.save(path)
    table.to_csv(data, sep="\t", index=False)
    rc, _, err = run_cli("calibrate", "apply", path, data, "-o", tmp_path / "out.tsv")
    assert rc == 0, err
    out = pd.read_csv(tmp_path / "out.tsv", sep="\t")
    assert (out["calibration_source"] == "lp").all() and "unseen" not in err
    np.testing.assert_allclose(out["score_anchored"], model.transform(table), rtol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenGroupWarning)
        # without the human column: the board's cells are the map's (a labelled cell would move toward its labels)
        board = leaderboard(table.drop(columns="human"), "score", "lp", model=model)
    cells = board.rows.set_index(["group", "system"])["calibrated"]
    means = pd.Series(model.transform(table)).groupby([prepare_frame(table, ["lp"])["lp"].astype(str),
                                                      table["system"]]).mean()
    np.testing.assert_allclose(cells.sort_index().to_numpy(), means.sort_index().to_numpy(), rtol=1e-9)
