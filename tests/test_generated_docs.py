"""[data] The documents that examples generate are what their generators write now. docs/meta-evaluation.md had
gone stale for about a day (TER read as its negated error scale: its LGN row 0.339 where the code gives 0.661), and
docs/wmt21-study.md for as long (the comparison's canonical row order changed its random label draws: 0.713 at 100
labels where the code gives 0.723), while the tests that read them checked only that other documents quote them
alike. Each test reruns a generator in full on the shared data and compares its text with the committed one."""
from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

from conftest import REPO, require_data

pytestmark = [pytest.mark.data, pytest.mark.slow]


def _generate(script: str, *args: object) -> None:
    """Run a generator as its command line does, in a process of its own (its tables' memory goes with it: these
    tests run beside the other shared-data tests, conftest._worker_group)."""
    done = subprocess.run([sys.executable, str(REPO / "examples" / script), *map(str, args)], capture_output=True,
                          text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]


def _same(document: str, written: str, command: str) -> None:
    committed = (REPO / "docs" / document).read_text(encoding="utf-8")
    if written != committed:
        diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), written.splitlines(), "committed",
                                                   "generated", n=0, lineterm=""))[:12])
        pytest.fail(f"docs/{document} is not what its generator writes now; regenerate it with `{command}` (and "
                    f"update what quotes it):\n{diff}", pytrace=False)


def test_the_wmt21_study_is_what_its_generator_writes(tmp_path):
    root = require_data("wmt21", "segments.parquet").parents[1]
    tables, out = tmp_path / "wmt21", tmp_path / "study.md"
    _generate("wmt21_study.py", "--data", root, "--tables", tables, "--write", out)
    written = out.read_text(encoding="utf-8").replace(str(tables), "/tmp/wmt21")  # the path the document quotes
    _same("wmt21-study.md", written, "python examples/wmt21_study.py --tables /tmp/wmt21 --write docs/wmt21-study.md")


def test_the_meta_evaluation_is_what_its_generator_writes(tmp_path):
    root = require_data("wmt20-metrics", "segments.parquet").parents[1]
    out = tmp_path / "meta.md"
    _generate("meta_wmt20.py", "--data", root, "--tables", tmp_path / "tables", "--write", out)
    _same("meta-evaluation.md", out.read_text(encoding="utf-8"),
          "python examples/meta_wmt20.py --write docs/meta-evaluation.md")


def test_the_apples_replication_is_what_its_generator_writes(tmp_path):
    root = require_data("apples", "results.parquet").parents[1]
    out = tmp_path / "apples.md"
    _generate("apples_replication.py", "--data", root, "--out", out)
    _same("apples-replication.md", out.read_text(encoding="utf-8"),
          "python examples/apples_replication.py --out docs/apples-replication.md")
