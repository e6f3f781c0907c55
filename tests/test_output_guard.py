"""The one writer's output guard: an output never destroys an input of the same command (under any
spelling, through a symbolic or a hard link), two outputs of a command are never the same file,
special files are written in place (a device stays a device, a link stays a link), and a failed write
is an error naming the output, never a success. Inputs are byte-identical afterwards in every case."""
from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN, prepare_frame
from xleval.cli import main
from xleval.exceptions import OutputError
from xleval.io import atomic_path, command_scope, read_table, write_table, write_text

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="replacing /dev nodes needs root (the defect did)")


def _scores(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([{"lp": lp, "system": s, "seg_id": i, "hypothesis": f"the cat {i}",
                          "reference": f"the cat {i} sat",
                          "score": float(rng.normal(50, 10)), "human": float(rng.normal())}
                         for lp in ("en-de", "en-fr", "de-en") for s in ("A", "B") for i in range(n)])


@pytest.fixture
def files(tmp_path, monkeypatch):
    df = _scores()
    df.to_csv(tmp_path / "in.tsv", sep="\t", index=False)
    LGN(score="score").fit(prepare_frame(df, ["tgt_lang"])).save(tmp_path / "m.json")
    rng = np.random.default_rng(1)
    pd.DataFrame([{"item_id": i, "model": m, "condition": c, "correct": int(rng.random() < 0.6)}
                  for m in ("m1", "m2") for c in ("source", "translated") for i in range(25)]
                 ).to_csv(tmp_path / "audit.tsv", sep="\t", index=False)
    pd.DataFrame({"lang": ["en", "de", "fr"] * 20, "correct": rng.integers(0, 2, 60)}).to_csv(tmp_path / "fair.tsv",
                                                                                              sep="\t", index=False)
    pd.DataFrame({"lang": ["en", "de"] * 10, "model": "m", "item": np.repeat(np.arange(10), 2),
                  "nll": rng.uniform(10, 50, 20), "tokens": rng.integers(5, 20, 20), "chars": rng.integers(20, 80, 20),
                  "bytes": rng.integers(20, 90, 20)}).to_csv(tmp_path / "intr.tsv", sep="\t", index=False)
    (tmp_path / "hyp.txt").write_text("the cat\nsat on\n")
    (tmp_path / "ref.txt").write_text("the cat\nsat on the mat\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _digests(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.iterdir() if p.is_file()}


def _run(args, capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(list(args))
    return rc, capsys.readouterr().err


ONTO_AN_INPUT = {
    "calibrate fit -o IN": "calibrate fit in.tsv --score score -o in.tsv",
    "calibrate apply -o IN": "calibrate apply m.json in.tsv -o in.tsv",
    "calibrate apply -o MODEL": "calibrate apply m.json in.tsv -o m.json",
    "calibrate apply streamed -o IN": "calibrate apply m.json in.tsv -o in.tsv --chunk-size 7",
    "calibrate apply -o ./IN": "calibrate apply m.json in.tsv -o ./in.tsv",
    "calibrate apply -o sub/../IN": "calibrate apply m.json in.tsv -o sub/../in.tsv",
    "report -o IN": "report in.tsv --score score -o in.tsv",
    "report -o MODEL": "report in.tsv --score score --model m.json -o m.json",
    "audit --checklist IN": "audit audit.tsv --n-resamples 20 --checklist audit.tsv",
    "audit --save-table IN": "audit audit.tsv --n-resamples 20 --save-table audit.tsv",
    "audit --report IN": "audit audit.tsv --n-resamples 20 --report audit.tsv",
    "fairness gaps --report IN": "fairness gaps fair.tsv --metric correct --n-resamples 20 --report fair.tsv",
    "intrinsic metrics -o IN": "intrinsic metrics intr.tsv -o intr.tsv",
    "intrinsic confounds --report IN": "intrinsic confounds intr.tsv --report intr.tsv",
    "score -o IN": "score in.tsv -m chrf -o in.tsv",
    "score -o HYP": "score -i hyp.txt -r ref.txt -l en-de -m chrf -o hyp.txt",
}


@pytest.mark.parametrize("case", sorted(ONTO_AN_INPUT))
def test_an_output_onto_an_input_is_refused_and_the_input_kept(case, files, capsys):
    (files / "sub").mkdir()
    before = _digests(files)
    rc, err = _run(ONTO_AN_INPUT[case].split(), capsys)
    assert rc == 2, err
    assert err.count("\n") == 1 and "writing the output there would destroy it" in err, err
    assert _digests(files) == before
    assert not [p for p in files.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_the_same_file_through_a_link_is_refused(link, files, capsys):
    (os.symlink if link == "symlink" else os.link)(files / "in.tsv", files / "alias.tsv")
    before = _digests(files)
    rc, err = _run(["calibrate", "apply", "m.json", "in.tsv", "-o", "alias.tsv"], capsys)
    assert rc == 2 and "alias.tsv: is the same file as the input in.tsv" in err, err
    assert _digests(files) == before and (files / "alias.tsv").is_symlink() == (link == "symlink")


def test_two_outputs_of_one_command_are_refused_before_any_is_written(files, capsys):
    rc, err = _run(["audit", "audit.tsv", "--n-resamples", "20", "--checklist", "out.md", "--report", "out.md"], capsys)
    assert rc == 2 and "--checklist and --report name the same file" in err, err
    assert not (files / "out.md").exists()


def test_the_library_refuses_a_streamed_output_onto_its_input(files):
    from xleval.scale import apply_chunked

    model = LGN.load(files / "m.json")
    before = _digests(files)
    with pytest.raises(OutputError, match="would destroy it"):
        apply_chunked(model, files / "in.tsv", files / "in.tsv", chunk_size=5)
    assert _digests(files) == before


def test_outside_a_command_a_python_user_may_rewrite_a_table(tmp_path):
    path = tmp_path / "t.tsv"
    write_table(_scores(2), path)
    df = read_table(path)
    write_table(df.assign(extra=1), path)  # read, change, write back: allowed in a script
    assert "extra" in read_table(path).columns


def test_inside_a_command_every_read_file_is_protected_even_by_a_reader_that_forgets(tmp_path):
    """The audit hook records files opened read-only through Python's open (a new reader that does not
    call record_input is still covered)."""
    path = tmp_path / "notes.txt"
    path.write_text("data\n")
    with command_scope():
        path.read_text()
        with pytest.raises(OutputError, match="is an input"):
            write_text(path, "overwritten\n")
    assert path.read_text() == "data\n"


# special files --------------------------------------------------------------------------------------
@ROOT_ONLY
@pytest.mark.parametrize("args", ["calibrate apply m.json in.tsv -o /dev/null",
                                  "calibrate apply m.json in.tsv -o /dev/null --chunk-size 7",
                                  "calibrate fit in.tsv --score score -o /dev/null",
                                  "report in.tsv --score score -o /dev/null"])
def test_dev_null_stays_a_device(args, files, capsys):
    rc, err = _run(args.split(), capsys)
    assert rc == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and not os.path.exists("/dev/null.signatures.json")


@ROOT_ONLY
def test_dev_stdout_is_written_in_place_and_stays_a_link(files):
    proc = subprocess.run([sys.executable, "-m", "xleval", "calibrate", "apply", "m.json", "in.tsv", "-o",
                           "/dev/stdout"],
                          capture_output=True, text=True, cwd=files)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].startswith("lp\tsystem\tseg_id") and len(proc.stdout.splitlines()) == 181
    assert os.path.islink("/dev/stdout")


def test_dev_stdout_redirected_onto_the_input_is_refused(files):
    before = _digests(files)
    with open(files / "in.tsv", "ab") as appended:  # `xleval ... -o /dev/stdout >> in.tsv`
        proc = subprocess.run([sys.executable, "-m", "xleval", "calibrate", "apply", "m.json", "in.tsv", "-o",
                               "/dev/stdout"], stdout=appended, stderr=subprocess.PIPE, text=True, cwd=files)
    assert proc.returncode == 2 and "is the same file as the input in.tsv" in proc.stderr, proc.stderr
    assert _digests(files) == before


def test_a_symlinked_output_keeps_the_link_and_replaces_its_target(files, capsys):
    (files / "real.tsv").write_text("old\n")
    os.symlink("real.tsv", files / "link.tsv")
    rc, err = _run(["calibrate", "apply", "m.json", "in.tsv", "-o", "link.tsv"], capsys)
    assert rc == 0, err
    assert (files / "link.tsv").is_symlink() and os.readlink(files / "link.tsv") == "real.tsv"
    assert len(read_table(files / "real.tsv")) == 180


def test_a_fifo_is_written_in_place(files, capsys):
    fifo = files / "pipe.tsv"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    rc, err = _run(["calibrate", "apply", "m.json", "in.tsv", "-o", str(fifo)], capsys)
    reader.join(timeout=60)
    assert rc == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert received and received[0].decode().count("\n") == 181


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", ["calibrate apply m.json in.tsv -o /dev/full",
                                  "calibrate apply m.json in.tsv -o /dev/full --chunk-size 7",
                                  "calibrate fit in.tsv --score score -o /dev/full"])
def test_a_full_device_is_an_error_not_a_success(args, files):
    proc = subprocess.run([sys.executable, "-m", "xleval", *args.split()], capture_output=True, text=True, cwd=files)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("xleval: error: /dev/full: cannot write (No space left on device); free some space or write "
                           "elsewhere; the output is incomplete\n")


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("ext", ["tsv", "json", "parquet"])
def test_a_full_disk_keeps_the_previous_output_and_names_no_temporary_file(ext, tmp_path, monkeypatch):
    """ENOSPC while writing a regular file (simulated: the temporary file's flush fails)."""
    target = tmp_path / f"out.{ext}"
    target.write_bytes(b"previous complete version\n")
    monkeypatch.setattr("xleval.io._write._flush_to_disk", _no_space)
    if ext == "json":
        model = LGN(score="score").fit(prepare_frame(_scores(), ["tgt_lang"]))
        write = functools.partial(model.save, target)
    else:
        write = functools.partial(write_table, _scores(), target)
    with pytest.raises(OutputError) as info:
        write()
    message = str(info.value)
    assert message == f"{target}: cannot write (No space left on device); free some space or write elsewhere; " \
                      "no output was written"
    assert ".tmp" not in message
    assert target.read_bytes() == b"previous complete version\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_a_failed_write_inside_the_block_is_an_output_error(tmp_path):
    target = tmp_path / "o.txt"
    with pytest.raises(OutputError, match=r"o\.txt: cannot write \(Disk quota exceeded\)"), atomic_path(target):
        raise OSError(errno.EDQUOT, "Disk quota exceeded")
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_a_directory_or_a_loop_gets_one_line(files, capsys):
    (files / "adir").mkdir()
    os.symlink("loop", files / "loop")
    rc, err = _run(["calibrate", "fit", "in.tsv", "--score", "score", "-o", "adir"], capsys)
    assert rc == 2 and err == "xleval: error: adir: is a directory; give a file name\n"
    rc, err = _run(["calibrate", "fit", "in.tsv", "--score", "score", "-o", "loop"], capsys)
    assert rc == 2 and err.startswith("xleval: error: loop: cannot write (Too many levels of symbolic links)"), err


def test_a_calibrator_written_to_a_fifo_is_refused_as_input_without_hanging(files, capsys):
    os.mkfifo(files / "m.fifo.json")
    rc, err = _run(["calibrate", "apply", "m.fifo.json", "in.tsv", "-o", "o.tsv"], capsys)
    assert rc == 2
    assert err == ("xleval: error: m.fifo.json: cannot read the calibrator file (it is a FIFO (named pipe), not a "
                   "regular file); give the path of a JSON file written by `calibrate fit`\n")
    assert json.loads((files / "m.json").read_text())["format"] == "xleval.LGN"


@pytest.mark.parametrize("output, message", [("", "output path '': give a file name"),
                                             ("newdir/", "newdir/: names a folder that does not exist")])
def test_an_empty_path_or_a_missing_folder_is_not_written_as_a_file(output, message, files, capsys):
    rc, err = _run(["calibrate", "fit", "in.tsv", "--score", "score", "-o", output], capsys)
    assert rc == 2 and message in err, err
    assert not (files / "newdir").exists()


def test_a_reader_that_stops_reading_is_not_an_error(files):
    """`xleval ... -o - | head -1`: the broken pipe ends the run quietly with 141, as `cat` would."""
    proc = subprocess.run(f"{sys.executable} -m xleval calibrate apply m.json in.tsv -o - --chunk-size 1 | head -c 10",
                          shell=True, capture_output=True, text=True, cwd=files, executable="/bin/bash")
    assert proc.stdout == "lp\tsystem\t" and proc.stderr == ""
    status = subprocess.run(f"{sys.executable} -m xleval calibrate apply m.json in.tsv -o - --chunk-size 1 | head -c 10"
                            " >/dev/null; echo ${PIPESTATUS[0]}", shell=True, capture_output=True, text=True,
                            cwd=files, executable="/bin/bash")
    assert status.stdout.strip() == "141", status.stderr


def test_a_read_only_output_file_is_not_replaced(files):
    """A rename would replace a file its owner made read-only; a plain open() would refuse, and so does
    xleval. As root the permission bits do not bind, so the command runs as 'nobody' (setpriv)."""
    import shutil

    target = files / "ro.tsv"
    target.write_text("keep\n")
    target.chmod(0o444)
    files.chmod(0o777)
    for name in ("in.tsv", "m.json"):
        (files / name).chmod(0o644)
    command = [sys.executable, "-m", "xleval", "calibrate", "apply", "m.json", "in.tsv", "-o", "ro.tsv"]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv")
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=files)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("xleval: error: ro.tsv: the file is read-only; "
                           "make it writable or choose another output path\n")
    assert target.read_text() == "keep\n"


@pytest.mark.parametrize("shell", ["xleval calibrate apply m.json in.tsv -o - >> in.tsv",
                                   "xleval calibrate apply m.json in.tsv -o - --chunk-size 10 >> in.tsv",
                                   "xleval calibrate apply m.json - -o - < in.tsv >> in.tsv",
                                   "xleval calibrate apply m.json - -o /dev/stdin < in.tsv"])
def test_standard_streams_redirected_onto_the_input_are_refused(shell, files):
    before = _digests(files)
    proc = subprocess.run(shell.replace("xleval", f"{sys.executable} -m xleval", 1), shell=True, capture_output=True,
                          text=True, cwd=files, timeout=120)
    assert proc.returncode == 2 and "would destroy it" in proc.stderr, proc.stderr
    assert _digests(files) == before


def test_a_long_output_name_gets_a_temporary_file_within_the_limit(files, capsys):
    name = "a" * 240 + ".parquet"  # the temporary '.NAME.<pid>@<host>.XXXX.tmp' would exceed 255 bytes
    rc, err = _run(["calibrate", "apply", "m.json", "in.tsv", "-o", name], capsys)
    assert rc == 0, err
    assert len(read_table(files / name)) == 180 and not [p for p in files.iterdir() if p.name.endswith(".tmp")]
    rc, err = _run(["calibrate", "apply", "m.json", "in.tsv", "-o", "b" * 245 + ".tsv"], capsys)  # its sidecar cannot
    assert rc == 2 and ".tsv.signatures.json: cannot write (File name too long)" in err and ".tmp" not in err, err
    assert not (files / ("b" * 245 + ".tsv")).exists()
