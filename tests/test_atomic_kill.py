"""Atomic outputs under a hard kill: a long streamed ``calibrate apply`` is SIGKILLed mid-way; the
output path must hold nothing or the previous complete file. The killed run cannot remove its
``.NAME.<pid>@<host>.XXXX.tmp`` file; the next write of the same target removes it. Ctrl-C
(SIGINT) ends with one line, exit status 130 and no file at all; SIGTERM (what schedulers and
``timeout`` send) likewise, with exit status 143.

The input is large enough (200 batches, tens of seconds) that a run is always still writing when
the signal arrives, however loaded the machine: the signal is sent as soon as the temporary file
holds data, long before the run could end."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import start_cli_process
from xleval.calibration import LGN, prepare_frame
from xleval.io import atomic_path

N_ROWS = 2_000_000
CHUNK = "10000"  # 200 batches: the run writes its temporary file for ten seconds or more


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    rng = np.random.default_rng(0)
    lps = np.array(["en-de", "en-fr", "en-zh", "de-en"])
    df = pd.DataFrame({"lp": lps[rng.integers(0, 4, N_ROWS)], "seg_id": np.arange(N_ROWS),
                       "score": rng.normal(50, 10, N_ROWS)})
    df.to_parquet(root / "large.parquet")
    df.iloc[:100].to_parquet(root / "small.parquet")
    LGN(score="score").fit(prepare_frame(df.iloc[:5000], ["tgt_lang"])).save(root / "model.json")
    return root


def _apply(root: Path, source: str, output: Path) -> subprocess.Popen:
    return start_cli_process("calibrate", "apply", root / "model.json", root / source, "-o", output,
                             "--chunk-size", CHUNK)


def _temporaries(output: Path) -> list[Path]:
    return sorted(output.parent.glob(f".{output.name}.*.tmp"))


def _interrupt_mid_way(proc: subprocess.Popen, output: Path, sig: int) -> str:
    """Send ``sig`` once the run has written part of its temporary file (some batches, not all);
    return its stderr."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        tmp = _temporaries(output)
        if tmp and tmp[0].stat().st_size > 0:
            proc.send_signal(sig)
            return proc.communicate(timeout=60)[1]
        time.sleep(0.005)
    proc.communicate()
    pytest.fail(f"the run ended (rc={proc.returncode}) before its temporary file appeared; make the input larger")


def _complete(root: Path, source: str, output: Path) -> None:
    proc = _apply(root, source, output)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err


def test_sigkill_leaves_no_output_and_the_next_run_cleans_up(inputs, tmp_path):
    output = tmp_path / "out.tsv"
    proc = _apply(inputs, "large.parquet", output)
    _interrupt_mid_way(proc, output, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert not output.exists()
    stale = _temporaries(output)
    assert len(stale) == 1 and f".{proc.pid}@" in stale[0].name  # what a killed process cannot avoid
    _complete(inputs, "small.parquet", output)
    assert _temporaries(output) == []
    assert len(pd.read_csv(output, sep="\t")) == 100


def test_sigkill_keeps_the_previous_complete_file(inputs, tmp_path):
    output = tmp_path / "out.tsv"
    _complete(inputs, "small.parquet", output)
    previous = output.read_bytes()
    proc = _apply(inputs, "large.parquet", output)
    _interrupt_mid_way(proc, output, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    assert output.read_bytes() == previous


def test_ctrl_c_is_one_line_exit_130_and_no_file(inputs, tmp_path):
    output = tmp_path / "out.parquet"
    proc = _apply(inputs, "large.parquet", output)
    err = _interrupt_mid_way(proc, output, signal.SIGINT)
    assert proc.returncode == 130, err
    assert err == "xleval: error: interrupted; no output was written\n"
    assert not output.exists() and _temporaries(output) == []


def test_sigterm_is_one_line_exit_143_and_no_file(inputs, tmp_path):
    output = tmp_path / "out.tsv"
    proc = _apply(inputs, "large.parquet", output)
    err = _interrupt_mid_way(proc, output, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert err == "xleval: error: terminated (SIGTERM); no output was written\n"
    assert not output.exists() and _temporaries(output) == []


def test_temporaries_of_live_processes_and_other_hosts_are_kept(tmp_path):
    target = tmp_path / "t.tsv"
    live = tmp_path / f".t.tsv.{os.getppid()}@{socket.gethostname()}.abc123.tmp"
    other_host = tmp_path / ".t.tsv.1@some-other-host.abc123.tmp"
    other_target = tmp_path / ".t.tsv.bak.999999999@x.abc.tmp"
    for path in (live, other_host, other_target):
        path.write_text("partial")
    with atomic_path(target) as tmp:
        tmp.write_text("done\n")
    assert target.read_text() == "done\n"
    assert live.exists() and other_host.exists() and other_target.exists()
