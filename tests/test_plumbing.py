"""The test plumbing itself: the ``data`` marker follows the data fixtures and is enforced for direct
``require_data`` calls; the one CLI runner gives what the console gives, in process and in a process."""
from __future__ import annotations

import json

import pytest

from conftest import REPO, run_cli, run_cli_process

pytest_plugins = ["pytester"]

_INNER = '''
import pytest
from conftest import require_data

def test_uses_fixture(data_root):
    pass

def test_direct_call_unmarked():
    require_data("wmt21", "systems.csv")

@pytest.mark.data
def test_direct_call_marked():
    require_data("wmt21", "systems.csv")

def test_plain():
    pass
'''


@pytest.fixture
def inner(pytester, tmp_path, monkeypatch):
    import tomllib

    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    markers = "\n    ".join(options["markers"])
    pytester.makeini(f"[pytest]\naddopts = --strict-markers\nmarkers =\n    {markers}\n")
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_inner=_INNER)
    (tmp_path / "data" / "wmt21").mkdir(parents=True)
    (tmp_path / "data" / "wmt21" / "systems.csv").write_text("lp\n")
    monkeypatch.setenv("XLEVAL_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("XLEVAL_REQUIRE_DATA", raising=False)
    return pytester


def test_fixture_users_are_marked_and_unmarked_direct_calls_fail(inner):
    result = inner.runpytest("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_direct_call_unmarked*reads wmt21/systems.csv but is not marked*"])
    deselected = inner.runpytest("-p", "no:cacheprovider", "-q", "-m", "not data")
    deselected.assert_outcomes(passed=1, failed=1, deselected=2)  # the unmarked direct call still runs, and fails


def test_missing_data_skips_or_fails_under_require(inner, tmp_path, monkeypatch):
    monkeypatch.setenv("XLEVAL_DATA", str(tmp_path / "nowhere"))
    inner.runpytest("-p", "no:cacheprovider", "-q", "-m", "data").assert_outcomes(skipped=2)
    monkeypatch.setenv("XLEVAL_REQUIRE_DATA", "1")
    inner.runpytest("-p", "no:cacheprovider", "-q", "-m", "data").assert_outcomes(errors=1, failed=1)


def test_cli_runner_in_process_and_in_a_process_agree(tmp_path):
    import xleval

    for run in (run_cli, run_cli_process):
        assert tuple(run("--version")) == (0, f"xleval {xleval.__version__}\n", "")
        rc, out, err = run("calibrate", "fit", "missing.tsv", "--score", "s", "-o", "m.json", cwd=tmp_path)
        assert (rc, out) == (2, "") and err.startswith("xleval: error: missing.tsv") and err.count("\n") == 1


def test_cli_runner_feeds_stdin(tmp_path):
    table = "lp\tsystem\tscore\n" + "".join(f"en-{t}\ts\t{v}\n" for t in ("de", "fr") for v in (1, 2, 4))
    rc, out, err = run_cli("calibrate", "fit", "-", "--score", "score", "--by", "lp", "-o", tmp_path / "m.json",
                           "--format", "json", input=table)
    assert rc == 0, err
    assert (tmp_path / "m.json").exists()
    assert {g["group"]: g["n"] for g in json.loads(out)["groups"]} == {"en-de": 3, "en-fr": 3}


def test_version_has_one_source_and_a_changelog_entry():
    import re
    import tomllib

    import xleval

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "xleval.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:\.dev\d+|(?:a|b|rc)\d+)?", xleval.__version__)
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (\S+)", changelog, flags=re.M)
    assert headings[0] == "Unreleased" and xleval.__version__.split(".dev")[0] in headings
