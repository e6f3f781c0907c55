"""The evaluation-table noun (xleval.table): built once, checks itself, never changes the caller's frame;
errors carry the argument they are about, and the command line names its own flag for it."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import xleval
from xleval.cli import main
from xleval.decision import DEFAULT_PROCEDURE, EVALUATION_PROCEDURE, RECOMMEND_PROCEDURE
from xleval.exceptions import ArgumentTypeError, InputError
from xleval.leaderboard import ScoreReading
from xleval.stats import Resampling
from xleval.table import EvalTable, as_table, numeric_column, require_columns

FEW = Resampling(n_resamples=20)

# the frames here mix spellings of one language on purpose ('cmn-en', 'zh-en'): the note that they become
# one group (tests/test_hardening_data.py) is not what these tests are about
pytestmark = pytest.mark.filterwarnings("ignore:.*become one group:xleval.exceptions.DataQualityWarning")


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"lp": ["de-EN", "zh-en", "de-en", "cmn-en"], "system": ["a", "a", "b", "b"],
                         "chrf": ["1.5", "2", "3", "4"], "human": [10.0, np.nan, 30.0, 40.0]})


def test_from_frame_normalises_languages_and_parses_numbers(frame):
    table = EvalTable.from_frame(frame, score="chrf", by="lp", human="human", system="system")
    assert table.frame["lp"].tolist() == ["de-en", "zh-en", "de-en", "zh-en"]  # one key per language pair
    assert table.frame["tgt_lang"].tolist() == ["en"] * 4
    assert table.groups.n_groups == 2 and table.groups.keys == [("de-en",), ("zh-en",)]
    assert table.scores().tolist() == [1.5, 2.0, 3.0, 4.0]
    assert np.isnan(table.human_values()[1])
    assert frame["lp"].tolist() == ["de-EN", "zh-en", "de-en", "cmn-en"]  # the caller's frame is untouched
    assert "tgt_lang" not in frame.columns


def test_a_frame_passed_to_a_function_keeps_its_spellings(frame):
    """as_table on a frame (what every entry point does with a DataFrame) derives a missing language
    column but does not re-spell the ones given, as the functions did before the table existed."""
    table = as_table(frame, score="chrf", by="tgt_lang")
    assert table.frame["lp"].tolist() == frame["lp"].tolist() or table.frame["tgt_lang"].tolist() == ["en"] * 4
    kept = as_table(frame.drop(columns="lp").assign(g=["x", "y", "x", "y"]), by="g")
    assert kept.groups.keys == [("x",), ("y",)]


def test_the_table_is_immutable(frame):
    table = EvalTable.from_frame(frame, score="chrf", by="lp")
    with pytest.raises(AttributeError):
        table.by = ("system",)  # type: ignore[misc]
    copy = table.to_frame()
    copy.loc[0, "chrf"] = "99"
    assert table.scores()[0] == 1.5
    other = table.with_roles(by="system", human="human")
    assert other.by == ("system",) and other.human == "human"
    assert table.by == ("lp",) and table.human is None


def test_roles_are_checked_once_with_the_argument_on_the_error(frame):
    with pytest.raises(InputError) as info:
        EvalTable.from_frame(frame, score="comet", by="lp")
    assert info.value.argument == "score" and info.value.value == "comet"
    assert "no column 'comet' (the score column, given as score=)" in str(info.value)
    assert "--" not in str(info.value)  # the library speaks Python
    with pytest.raises(InputError) as info:
        EvalTable.from_frame(frame, score="chrf", by=["lp", "domain"])
    assert info.value.argument == "by" and "group column" in str(info.value)
    with pytest.raises(ArgumentTypeError):
        EvalTable.from_frame(frame, score="chrf", by=[1, 2])  # type: ignore[list-item]
    with pytest.raises(ArgumentTypeError):
        EvalTable.from_frame(frame.to_dict(), score="chrf")  # type: ignore[arg-type]


def test_one_number_parser_names_the_row(frame):
    bad = frame.assign(chrf=["1", "2", "n/a?", "4"])
    with pytest.raises(InputError, match=r"column .chrf. row 3: .n/a\?. is not a number"):
        numeric_column(bad, "chrf")
    assert np.isnan(numeric_column(frame.assign(chrf=["1", "", "NA", "4"]), "chrf")[1:3]).all()  # the readers' NA
    with pytest.raises(InputError, match="beyond"):  # squares would overflow: every spread would be inf
        numeric_column(frame.assign(chrf=["1", "2", "1e200", "4"]), "chrf")


def test_one_column_check():
    with pytest.raises(InputError, match=r"no columns 'a', 'b'"):
        require_columns(pd.DataFrame({"c": [1]}), ["a", "b", "c"])
    require_columns(pd.DataFrame({"c": [1]}), ["c"])  # present: no error


def test_column_remaps_and_clashes(frame):
    table = EvalTable.from_frame(frame.rename(columns={"chrf": "score_x"}), score="chrf", by="lp",
                                 columns={"score_x": "chrf"})
    assert table.scores().tolist() == [1.5, 2.0, 3.0, 4.0]
    with pytest.raises(InputError, match="names column"):  # a mapping of a column the frame does not have
        EvalTable.from_frame(frame, score="chrf", by="lp", columns={"nope": "chrf"})
    with pytest.raises(InputError, match="chrf"):  # two columns would be called chrf
        EvalTable.from_frame(frame.assign(bleu=1.0), score="chrf", by="lp", columns={"bleu": "chrf"})


def test_read_carries_the_signatures(tmp_path, frame):
    from xleval.io import write_table

    path = tmp_path / "t.parquet"
    write_table(frame.assign(chrf=frame["chrf"].astype(float)), path, metadata={"signatures": {"chrf": "chrF2|x"}})
    table = EvalTable.read(path, score="chrf", by="lp")
    assert table.signature() == "chrF2|x" and table.source == str(path)
    assert "EvalTable(4 rows" in repr(table)


def test_read_keeps_a_signature_with_its_file_column_and_checks_like_the_reader(tmp_path, frame):
    """A column read under another name keeps its file column's signature (chrF's, read as ``bleu``),
    and ``required``/``numeric`` are the reader's checks (the row and the cell that is not a number)."""
    from xleval.io import write_table

    path = tmp_path / "t.tsv"
    write_table(frame.assign(bleu=["9", "8", "7", "x"]), path,
                metadata={"signatures": {"chrf": "chrF2|x", "bleu": "BLEU|y"}})
    table = EvalTable.read(path, columns={"chrf": "bleu", "bleu": "old_bleu"}, score="bleu", by="lp")
    assert table.signature() == "chrF2|x" and table.signature("old_bleu") == "BLEU|y"
    with pytest.raises(InputError, match="row 4"):
        EvalTable.read(path, numeric=["bleu"], score="bleu", by="lp")
    with pytest.raises(InputError, match="comet"):
        EvalTable.read(path, required=["comet"], score="bleu", by="lp")


def test_a_table_read_with_signatures_is_checked_against_a_saved_calibrator(tmp_path, frame):
    """The signature travels in the table: the leaderboard refuses a calibrator of another metric
    without being told the signature again (the command line passes the table, not the signature)."""
    from xleval.calibration import LGN
    from xleval.exceptions import SignatureMismatchError
    from xleval.io import write_table
    from xleval.leaderboard import leaderboard

    data = pd.DataFrame({"lp": ["de-en"] * 6 + ["fr-en"] * 6, "system": list("abcabc") * 2,
                         "chrf": [float(v) for v in range(12)]})
    path = tmp_path / "t.tsv"
    write_table(data, path, metadata={"signatures": {"chrf": "chrF2|nc:6|v:2"}})
    model = LGN(by="lp", score="chrf", min_count=1).fit(data, signature="BLEU|nrefs:1|v:2")
    table = EvalTable.read(path, score="chrf", by="lp", system="system")
    with pytest.raises(SignatureMismatchError):
        leaderboard(table, model=model, resampling=Resampling(n_resamples=10))
    kept = table.with_rows(table.frame.index[table.frame["system"] != "c"])
    assert kept.signature() == "chrF2|nc:6|v:2" and len(kept) == 8 and kept.by == ("lp",)
    forced = leaderboard(kept, model=model, reading=ScoreReading(force=True), resampling=Resampling(n_resamples=10))
    assert len(forced.rows) == 4


def test_the_package_exports_the_noun_lazily():
    assert xleval.EvalTable is EvalTable and xleval.as_table is as_table


def test_the_cli_names_its_flag_for_the_library_argument(tmp_path, frame, capsys):
    path = tmp_path / "t.tsv"
    frame.to_csv(path, sep="\t", index=False)
    assert main(["diagnose", str(path), "--score", "chrf", "--by", "domain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "no column 'domain' (the group column, given as --by)" in err[0] and "--col" in err[0]
    assert "by=" not in err[0]


def test_calibrate_help_names_every_calibration(capsys):
    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    entry = out[out.index(" calibrate "):out.index(" demo ")]
    assert "anchored" in entry and "LGN" in entry


def test_a_calibrator_fitted_on_a_table_records_its_signature(frame):
    from xleval.calibration import LGN, AnchoredCalibrator

    data = frame.assign(chrf=frame["chrf"].astype(float) + np.arange(4), human=[10.0, 20.0, 30.0, 40.0])
    table = EvalTable.from_frame(pd.concat([data] * 5, ignore_index=True), score="chrf", by="lp",
                                 signatures={"chrf": "chrF2|nc:6"})
    lgn = LGN(by="lp", score="chrf", min_count=1).fit(table)
    assert lgn.signature_ == "chrF2|nc:6"
    assert LGN(by="lp", score="chrf", min_count=1).fit(table, signature="given").signature_ == "given"
    anchored = AnchoredCalibrator(by="lp", score="chrf", human="human", system=None).fit(table)
    assert anchored.signature_ == "chrF2|nc:6"


def _entry_points(frame):
    """(name, from the table, from the frame and column names): every MT-path entry point."""
    from xleval import calibration as c
    from xleval import decision as dc
    from xleval import diagnostics as d
    from xleval import leaderboard as lb
    from xleval.report import analyze_mt

    def lgn_column(data, *args):
        return c.apply_calibrator(c.LGN(by="lp", score="metric").fit(data), data)["metric_lgn"]

    return [
        ("diagnose", lambda t: dc.diagnose(t, procedure=DEFAULT_PROCEDURE.with_(n_resamples=20)),
         lambda f: dc.diagnose(f, "metric", "lp", human="human",
                              procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))),
        ("diagnose_bias", lambda t: d.diagnose_bias(t, n_resamples=20),
         lambda f: d.diagnose_bias(f, "metric", "lp", n_resamples=20)),
        ("check_lgn_validity", lambda t: d.check_lgn_validity(t, system="system"),
         lambda f: d.check_lgn_validity(f, "lp", "human", system="system")),
        ("human_agreement", lambda t: d.human_agreement(t, resampling=Resampling(n_resamples=20)),
         lambda f: d.human_agreement(f, "metric", "human", "lp", resampling=Resampling(n_resamples=20))),
        ("system_table", lambda t: d.system_table(t, ["metric"]),
         lambda f: d.system_table(f, ["metric"], "lp", "system")),
        ("choose_method", lambda t: dc.choose_method(t, procedure=DEFAULT_PROCEDURE.with_(n_resamples=20)),
         lambda f: dc.choose_method(f, "metric", "lp", human="human",
                                   procedure=DEFAULT_PROCEDURE.with_(n_resamples=20))),
        ("evaluate_calibration", lambda t: dc.evaluate_calibration(t,
                                                                  procedure=EVALUATION_PROCEDURE.with_(n_repeats=1,
                                                                      n_folds=2,budgets=(5,), n_resamples=20)),
         lambda f: dc.evaluate_calibration(f, "metric", "human", "lp",
                                          procedure=EVALUATION_PROCEDURE.with_(n_repeats=1, n_folds=2, budgets=(5,),
                                              n_resamples=20))),
        ("select_for_annotation", lambda t: c.select_for_annotation(t, None, 5),
         lambda f: c.select_for_annotation(f, "lp", 5, score="metric")),
        ("recommend_calibration", lambda t: dc.recommend_calibration(t,
                                                                     procedure=RECOMMEND_PROCEDURE.with_(n_resamples=20,
                                                                         n_repeats=1)),
         lambda f: dc.recommend_calibration(f, "metric", "lp", human="human",
                                            procedure=RECOMMEND_PROCEDURE.with_(n_resamples=20, n_repeats=1))),
        ("leaderboard", lambda t: lb.leaderboard(t, method="lgn", resampling=FEW),
         lambda f: lb.leaderboard(f, "metric", "lp", human="human", method="lgn", resampling=FEW)),
        ("analyze_mt", lambda t: analyze_mt(t, method="lgn", resampling=FEW).board,
         lambda f: analyze_mt(f, "metric", by="lp", human="human", method="lgn", resampling=FEW).board),
        ("fit_calibration", lambda t: dc.fit_calibration(t, "anchored").model.transform(frame),
         lambda f: dc.fit_calibration(f, "anchored", score="metric", by="lp", human="human").model.transform(f)),
        ("apply_calibrator", lgn_column, lgn_column),
    ]


@pytest.mark.parametrize("name", [e[0] for e in _entry_points(None)])
def test_every_entry_point_gives_the_same_result_from_a_table(name):
    """A table built with the roles gives what the frame and the column names give (compared by value:
    results compare by value)."""
    from test_group_keys import _probe

    frame = _probe([{"lp": "de-en"}, {"lp": "zh-en"}])
    table = EvalTable.from_frame(frame, score="metric", by="lp", human="human", system="system")
    _, from_table, from_frame = next(e for e in _entry_points(frame) if e[0] == name)
    a, b = from_table(table), from_frame(frame)
    if isinstance(a, (pd.DataFrame, pd.Series)):
        # the table's language columns are normalised text (the frame's are objects): the same values
        assert_equal = pd.testing.assert_series_equal if isinstance(a, pd.Series) else pd.testing.assert_frame_equal
        assert_equal(a, b, check_dtype=False)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def test_cli_notes_name_flags_not_python_arguments(tmp_path, capsys):
    """A note the library writes in Python terms (``human_higher_is_better=True``) reaches the command
    line in its flags, as errors do."""
    from test_group_keys import _probe

    path = tmp_path / "probe.tsv"
    _probe([{"lp": "de-en"}, {"lp": "zh-en"}]).to_csv(path, sep="\t", index=False)
    assert main(["calibrate", "evaluate", str(path), "--score", "metric", "--human", "human", "--by", "lp",
                 "--folds", "2", "--repeats", "1", "--n-resamples", "20", "--budget", "5"]) == 0
    err = " ".join(capsys.readouterr().err.split())  # the console wraps long notes
    assert "--human-higher-is-better or --human-lower-is-better" in err
    assert "human_higher_is_better" not in err
