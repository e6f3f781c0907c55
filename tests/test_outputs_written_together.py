"""The outputs of one command are written together, or none is (docs/errors.md): a run that fails or is
stopped leaves no output behind, not one of several, and "no output was written" is then true.

* ``check-outputs -o X --rows Y``: the per-row flags were written before ``-o``; a failed ``-o`` (``/dev/full``,
  a full disk) exited 2 with ``Y`` on disk (review D5).
* ``demo --out DIR`` stopped by SIGTERM said "no output was written" with three of its five files in DIR. The
  signal is delivered deterministically: a step of the demo raises what the handler raises
  (:class:`xleval._base.interrupt.Terminated`), before the files and while the last one is written."""
from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pandas as pd
import pytest

from xleval._base.interrupt import Terminated

SIGTERM_LINE = "xleval: error: terminated (SIGTERM); no output was written\n"


@pytest.fixture
def texts(tmp_path: Path) -> Path:
    rows = [{"lp": lp, "system": s, "seg_id": i, "source": f"The dog {i} runs home.",
             "reference": f"Der Hund {i} läuft nach Hause.", "hypothesis": f"Der Hund {i} rennt heim.",
             "metric": 50.0 + i + (5 if s == "B" else 0)}
            for lp in ("en-de", "en-fr") for s in ("A", "B") for i in range(12)]
    path = tmp_path / "texts.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    return path


def _check_outputs(cli, texts: Path, output: str | Path, rows: Path):
    return cli("check-outputs", texts, "--langid", "none", "--score", "metric", "--format", "json",
               "-o", output, "--rows", rows)


def _disk_full_for(output: Path, monkeypatch) -> None:
    """ENOSPC on ``output``'s temporary file, simulated at its flush (as tests/test_output_guard.py does)."""
    import xleval.io._write as write

    flush = write._flush_to_disk

    def full(path: Path) -> None:
        if path.name.startswith(f".{output.name}."):
            raise OSError(errno.ENOSPC, "No space left on device")
        flush(path)

    monkeypatch.setattr(write, "_flush_to_disk", full)


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_check_outputs_writes_no_rows_file_when_o_fails_on_a_full_device(cli, texts, tmp_path):
    rows = tmp_path / "rows.tsv"
    rc, _, err = _check_outputs(cli, texts, "/dev/full", rows)
    assert rc == 2, err
    assert err == ("xleval: error: /dev/full: cannot write (No space left on device); free some space or write "
                   "elsewhere; the output is incomplete\n")
    assert not rows.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [texts.name]


def test_check_outputs_keeps_the_earlier_rows_file_when_o_fails_on_a_full_disk(cli, texts, tmp_path, monkeypatch):
    """ENOSPC on -o's temporary file (simulated at its flush, as tests/test_output_guard.py does): the rows file
    written in the same run is not renamed into place, so its earlier version stays."""
    rows, output = tmp_path / "rows.tsv", tmp_path / "rates.json"
    rows.write_text("earlier complete version\n")
    _disk_full_for(output, monkeypatch)
    rc, _, err = _check_outputs(cli, texts, output, rows)
    assert rc == 2, err
    assert err == (f"xleval: error: {output}: cannot write (No space left on device); free some space or write "
                   "elsewhere; no output was written\n")
    assert rows.read_text() == "earlier complete version\n"
    assert not output.exists() and _temporaries(tmp_path) == []


def test_check_outputs_writes_both_outputs(cli, texts, tmp_path):
    rows, output = tmp_path / "rows.tsv", tmp_path / "rates.json"
    rc, _, err = _check_outputs(cli, texts, output, rows)
    assert rc == 0, err
    assert len(pd.read_csv(rows, sep="\t")) == 48 and output.read_text().startswith("{")
    assert _temporaries(tmp_path) == []


def _terminated(*args, **kwargs):
    raise Terminated(signal.SIGTERM)


# where SIGTERM arrives: after the data, calibrator and calibrated table were computed (they used to be written
# then), and while the report, the last file, is written (the other four are complete by then)
STEPS = {"before the report": "xleval.demo.demo_analysis", "writing the report": "xleval.report.write_report"}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_demo_stopped_by_sigterm_writes_no_file_and_makes_no_folder(step, cli, tmp_path, monkeypatch):
    monkeypatch.setattr(STEPS[step], _terminated)
    out = tmp_path / "new" / "demo"
    rc, _, err = cli("demo", "--out", out)
    assert rc == 143, err
    assert err.endswith(SIGTERM_LINE)
    assert sorted(tmp_path.iterdir()) == []  # neither the folder nor the parent it would have made


def test_a_demo_stopped_by_sigterm_keeps_the_earlier_files(cli, tmp_path, monkeypatch):
    out = tmp_path / "demo"
    out.mkdir()
    names = ("data.parquet", "lgn.json", "calibrated.parquet", "summary.json", "report.html")
    for name in names:
        (out / name).write_text(f"earlier {name}\n")
    monkeypatch.setattr(STEPS["writing the report"], _terminated)
    rc, _, err = cli("demo", "--out", out)
    assert rc == 143, err
    assert err.endswith(SIGTERM_LINE)
    assert sorted(p.name for p in out.iterdir()) == sorted(names)
    assert {name: (out / name).read_bytes() for name in names} == {name: f"earlier {name}\n".encode() for name in names}


def test_outputs_written_together_are_all_or_none_and_never_one_file_twice(tmp_path):
    from xleval.exceptions import OutputError
    from xleval.io import write_table, write_text
    from xleval.io._write import outputs_together

    first, second = tmp_path / "a.tsv", tmp_path / "b.txt"

    def fails_after_a_complete_output() -> None:
        with outputs_together():
            write_table(pd.DataFrame({"x": [1, 2]}), first)
            assert not first.exists()  # complete, and still a temporary file
            raise RuntimeError("a later step failed")

    def writes_one_file_twice() -> None:
        with outputs_together():
            write_text(second, "one\n")
            write_text(tmp_path / "." / "b.txt", "two\n")

    with pytest.raises(RuntimeError, match="a later step failed"):
        fails_after_a_complete_output()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputError, match=r"is already an output of this command"):
        writes_one_file_twice()
    assert list(tmp_path.iterdir()) == []
    with outputs_together():
        write_table(pd.DataFrame({"x": [1, 2]}), first)
        write_text(second, "text\n")
    assert second.read_text() == "text\n" and len(pd.read_csv(first, sep="\t")) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tsv", "b.txt"]


def test_a_failed_block_within_a_block_drops_what_it_wrote(tmp_path):
    """A block that fails inside another (the error caught there) leaves its files out of the outer block's
    rename (before: the outer block renamed them into place)."""
    from xleval.io._write import outputs_together, write_text

    def inner() -> None:
        with outputs_together():
            write_text(tmp_path / "y.txt", "y")
            raise ValueError("inner")

    with outputs_together():
        write_text(tmp_path / "x.txt", "x")
        with pytest.raises(ValueError, match="inner"):
            inner()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_a_failed_rename_names_the_output_that_failed(tmp_path, monkeypatch):
    """The one rename step fails on the second output: the message names that output, not the first (before:
    'rows.tsv: cannot write' where rates.json failed), and both earlier files stay."""
    import xleval.io._write as write
    from xleval.exceptions import OutputError

    rows, rates = tmp_path / "rows.tsv", tmp_path / "rates.json"
    rows.write_text("old rows\n")
    rates.write_text("old rates\n")
    replace, refused = os.replace, []

    def refuse_rates(src, dst, *args, **kwargs):
        if Path(dst) == rates and not refused:  # once: the rollback's own moves go through
            refused.append(dst)
            raise PermissionError(errno.EPERM, "Operation not permitted", str(dst))
        return replace(src, dst, *args, **kwargs)

    def both() -> None:
        with write.outputs_together():
            write.write_text(rows, "new rows\n")
            write.write_text(rates, "new rates\n")

    monkeypatch.setattr(write.os, "replace", refuse_rates)
    with pytest.raises(OutputError, match=rf"^{rates}: cannot write \(Operation not permitted\)"):
        both()
    assert rows.read_text() == "old rows\n" and rates.read_text() == "old rates\n"
    assert _temporaries(tmp_path) == []


def test_a_leaderboard_whose_pairs_file_fails_writes_neither_file(cli, tmp_path, monkeypatch):
    """-o and --pairs land together: a full disk on the pairs file leaves no leaderboard file and says nothing
    was written (before: 'wrote tsv leaderboard' and the board on disk, then 'no output was written')."""
    rows = [{"lp": lp, "system": f"s{s}", "seg_id": i, "metric": 40.0 + 10 * g + 3 * s + (i % 5),
             "human": 60.0 + 4 * s + (i % 5) + g if i % 3 == 0 else float("nan")}
            for g, lp in enumerate(("en-de", "en-ja", "en-zh")) for s in range(4) for i in range(30)]
    table = tmp_path / "t.tsv"
    pd.DataFrame(rows).to_csv(table, sep="\t", index=False)
    board, pairs = tmp_path / "board.tsv", tmp_path / "pairs.tsv"
    _disk_full_for(pairs, monkeypatch)
    rc, _, err = cli("leaderboard", table, "--score", "metric", "--human", "human", "--method", "anchored",
                     "--human-scale", "da", "--n-resamples", "20", "-o", board, "--pairs", pairs)
    assert rc == 2
    assert "wrote" not in err
    assert err.strip().endswith(f"{pairs}: cannot write (No space left on device); free some space or write "
                                "elsewhere; no output was written")
    assert not board.exists() and not pairs.exists() and _temporaries(tmp_path) == []
