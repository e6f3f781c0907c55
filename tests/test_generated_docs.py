"""[data] The documents that examples generate are what their generators write now. docs/meta-evaluation.md had
gone stale for about a day (TER read as its negated error scale: its LGN row 0.339 where the code gives 0.661), and
docs/wmt21-study.md for as long (the comparison's canonical row order changed its random label draws: 0.713 at 100
labels where the code gives 0.723), while the tests that read them checked only that other documents quote them
alike. Each test reruns a generator in full on the shared data and compares its text with the committed one."""
from __future__ import annotations

import difflib
import importlib.util
import subprocess
import sys

import pytest

from conftest import REPO, require_data

pytestmark = [pytest.mark.data, pytest.mark.slow]


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same(document: str, written: str, command: str) -> None:
    committed = (REPO / "docs" / document).read_text(encoding="utf-8")
    if written != committed:
        diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), written.splitlines(), "committed",
                                                   "generated", n=0, lineterm=""))[:12])
        pytest.fail(f"docs/{document} is not what its generator writes now; regenerate it with `{command}` (and "
                    f"update what quotes it):\n{diff}", pytrace=False)


def test_the_wmt21_study_is_what_its_generator_writes(tmp_path, capsys):
    root = require_data("wmt21", "segments.parquet").parents[1]
    tables, out = tmp_path / "wmt21", tmp_path / "study.md"
    assert _example("wmt21_study").main(["--data", str(root), "--tables", str(tables), "--write", str(out)]) == 0
    capsys.readouterr()  # the study also prints itself
    written = out.read_text(encoding="utf-8").replace(str(tables), "/tmp/wmt21")  # the path the document quotes
    _same("wmt21-study.md", written, "python examples/wmt21_study.py --tables /tmp/wmt21 --write docs/wmt21-study.md")


def test_the_meta_evaluation_is_what_its_generator_writes(tmp_path):
    root = require_data("wmt20-metrics", "segments.parquet").parents[1]
    out = tmp_path / "meta.md"
    done = subprocess.run([sys.executable, str(REPO / "examples" / "meta_wmt20.py"), "--data", str(root), "--tables",
                           str(tmp_path / "tables"), "--write", str(out)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    _same("meta-evaluation.md", out.read_text(encoding="utf-8"),
          "python examples/meta_wmt20.py --write docs/meta-evaluation.md")


def test_the_apples_replication_is_what_its_generator_writes(tmp_path, capsys):
    root = require_data("apples", "results.parquet").parents[1]
    out = tmp_path / "apples.md"
    assert _example("apples_replication").main(["--data", str(root), "--out", str(out)]) == 0
    capsys.readouterr()
    _same("apples-replication.md", out.read_text(encoding="utf-8"),
          "python examples/apples_replication.py --out docs/apples-replication.md")
