"""Shared test plumbing: the shared-data fixtures and the ``data`` marker, the one CLI runner.

Real third-party data is read from XLEVAL_DATA (default ../shared/data): tests that need it skip
with a reason when it is absent, and fail when XLEVAL_REQUIRE_DATA=1 (CI). A test that uses a data
fixture gets the ``data`` marker automatically; a test that calls :func:`require_data` itself must
carry the marker, or it fails saying so (so ``-m "not data"`` really leaves out every data test).

The CLI is run with the ``cli`` fixture (in process: ``xleval.cli.main``) or ``cli_process`` (a real
``python -m xleval`` process, for exit statuses, signals and stdio as the console sees them); the
import-lightness check is ``tests/import_check.py``. Test modules that need an optional heavy
library get it from :func:`importorskip_lazy`, so collecting them imports nothing heavy. Under
pytest-xdist (``--dist loadgroup``) :func:`_worker_group` keeps the shared-data tests on one worker,
the torch tests on one, and every other test with its file.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]

# pytest-xdist's workers run with COLUMNS=80 set by the runner; the CLI's piped output follows COLUMNS
# (issue 34: a pipe at a sane width), so without this the in-process runs would be 80 columns wide under
# `-n 2` and 160 without it. Tests that need a width set COLUMNS themselves (tests/test_width80.py).
os.environ.pop("COLUMNS", None)

# CI must be reproducible: property tests draw the same examples on every run there (locally they
# keep exploring new ones; a failure found locally is replayed from hypothesis' example database).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# ------------------------------------------------------------------------------------- shared data
#: fixtures that read the shared data: a test using any of them (directly or through another
#: fixture) is marked ``data`` at collection
DATA_FIXTURES = frozenset({"data_root", "shared_data", "wmt21_segments", "wmt21_systems"})

_current_item: list[pytest.Item | None] = [None]


def _data_root() -> Path:
    return Path(os.environ.get("XLEVAL_DATA", REPO.parent / "shared" / "data")).resolve()


def import_example(name: str) -> types.ModuleType:
    """The script ``examples/<name>.py`` as a module (the examples import one another by name, so the folder
    is on ``sys.path`` while it loads)."""
    folder = str(REPO / "examples")
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(folder)


def require_data(*relative: str) -> Path:
    """Path to a file under the shared data folder; skip (or fail under XLEVAL_REQUIRE_DATA=1) if absent.

    Call it from a test (or a fixture) marked ``data``; tests that only use the data fixtures are
    marked automatically."""
    item = _current_item[0]
    where = "/".join(relative) or "the shared data folder"
    if item is None:
        pytest.fail(f"require_data({where!r}) called outside a test; call it from a test or fixture", pytrace=False)
    if item.get_closest_marker("data") is None:
        pytest.fail(f"{item.nodeid} reads {where} but is not marked: add @pytest.mark.data "
                    "(or use the data_root/shared_data fixture, which marks it)", pytrace=False)
    path = _data_root().joinpath(*relative)
    if not path.exists():
        reason = f"shared data not found: {path} (set XLEVAL_DATA to the shared/data folder)"
        if os.environ.get("XLEVAL_REQUIRE_DATA") == "1":
            pytest.fail(reason + "; XLEVAL_REQUIRE_DATA=1 requires it", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.hookimpl(tryfirst=True)  # before -m selects on the markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    xdist = config.pluginmanager.hasplugin("xdist")
    # the generated documents' tests (6 minutes of generators) first: a worker starts on them while the other takes
    # the rest, instead of one worker running them alone at the end
    items.sort(key=lambda item: item.path.stem != "test_generated_docs")
    for item in items:
        if DATA_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.data)
        if xdist:
            item.add_marker(pytest.mark.xdist_group(_worker_group(item)))


def _worker_group(item: pytest.Item) -> str:
    """The pytest-xdist group (``--dist loadgroup``) of a test: the tests that read the shared data run
    on one worker, which loads the WMT21 and Apples tables alone and never at the same time as
    another of those tests (make test stays under 4 GB on two workers), but for the generated documents' tests,
    which run their generators in processes of their own, beside that worker; torch users run on one
    worker, which alone imports torch; every other test runs with the rest of its file (module
    fixtures are built once)."""
    if item.path.stem == "test_generated_docs":  # 6 minutes of generators, each in a process of its own (1-1.4 GB):
        return "generated-docs"  # beside the data worker, not after it, which would add them to the suite's wall time
    if item.get_closest_marker("data"):
        return "data"
    if item.get_closest_marker("neural"):
        return "neural"
    return item.path.stem


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # set before any fixture of the test (session-scoped ones included) is made
    _current_item[0] = item
    try:
        yield
    finally:
        _current_item[0] = None


@pytest.fixture(autouse=True, scope="module")
def _return_freed_memory() -> Iterator[None]:
    """After each test file, give the memory its tests freed back to the OS, so a pytest-xdist worker
    does not carry one file's peak into the next: Arrow's allocator keeps freed buffers (reading the
    Apples table left 0.5 GB behind), and so does glibc's heap."""
    yield
    import ctypes
    import gc

    gc.collect()
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@pytest.fixture(scope="session")
def data_root() -> Path:
    return require_data()


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """``shared_data("wmt21", "systems.csv")``: a path under the shared data folder (skips or fails
    like :func:`require_data`), for tests and fixtures that read a file themselves."""
    return require_data


@pytest.fixture(scope="session")
def wmt21_segments():
    import pandas as pd

    return pd.read_parquet(require_data("wmt21", "segments.parquet"))


@pytest.fixture(scope="session")
def wmt21_systems():
    import pandas as pd

    return pd.read_csv(require_data("wmt21", "systems.csv"))


# ------------------------------------------------------------------------------------- optional libraries
class _LazyModule(types.ModuleType):
    """A module imported on first attribute access (pytest's own probes of module-level names during
    collection, private names and ``pytestmark``, do not count)."""

    def __getattr__(self, attr: str) -> Any:
        if (attr.startswith("_") or attr == "pytestmark") and self.__name__ not in sys.modules:
            raise AttributeError(attr)
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, attr)


def importorskip_lazy(name: str, reason: str | None = None) -> types.ModuleType:
    """``pytest.importorskip`` that only checks the module is installed: it is imported when a test
    first uses it (collecting torch-based test files would otherwise import torch, transformers
    and COMET in every pytest process, about 8 s of CPU and 0.6 GB each)."""
    if importlib.util.find_spec(name) is None:
        pytest.skip(reason or f"could not import {name!r}", allow_module_level=True)
    return _LazyModule(name)


# ------------------------------------------------------------------------------------- the CLI
@dataclass(frozen=True)
class CliResult:
    """What a CLI run left: exit status, stdout and stderr (unpacks as ``rc, out, err``)."""

    exit_code: int
    stdout: str
    stderr: str

    def __iter__(self) -> Iterator[Any]:
        return iter((self.exit_code, self.stdout, self.stderr))


def _argv(args: tuple[Any, ...]) -> list[str]:
    return [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args]


def run_cli(*args: Any, input: str | bytes | None = None, cwd: str | os.PathLike | None = None) -> CliResult:
    """``xleval ARGS`` in this process through ``xleval.cli.main`` (what the console script calls),
    with stdout/stderr captured and ``input`` as stdin."""
    from xleval.cli import main

    out, err = io.StringIO(), io.StringIO()
    data = input.encode() if isinstance(input, str) else (input or b"")
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = stdin
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(_argv(args))
            except SystemExit as exc:  # main returns its status; a stray exit still counts
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
    return CliResult(rc, out.getvalue(), err.getvalue())


def xleval_command(*args: Any) -> list[str]:
    """The argv of a real ``xleval ARGS`` process (for ``subprocess.Popen`` in signal tests)."""
    return [sys.executable, "-m", "xleval", *_argv(args)]


def _default_sigint() -> None:
    # a process started from a background job or a pytest-xdist worker inherits SIGINT as ignored,
    # and Python then leaves it ignored: Ctrl-C tests would see the run finish instead of stop
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli_process(*args: Any, **popen_kwargs: Any) -> subprocess.Popen:
    """A running ``xleval ARGS`` process (stdout/stderr piped, text), whose SIGINT acts as a terminal's
    Ctrl-C whatever the test runner ignores: for tests that signal or kill it mid-way."""
    popen_kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **popen_kwargs}
    return subprocess.Popen(xleval_command(*args), preexec_fn=_default_sigint, **popen_kwargs)  # noqa: PLW1509


def run_cli_process(*args: Any, input: str | None = None, cwd: str | os.PathLike | None = None,
                    timeout: float = 300) -> CliResult:
    """``xleval ARGS`` in a fresh Python process (the console's view: real stdio, exit status)."""
    proc = subprocess.run(xleval_command(*args), input=input, capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, check=False)
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    """Run the CLI in process: ``rc, out, err = cli("calibrate", "fit", path, ...)``."""
    return run_cli


@pytest.fixture
def cli_said() -> Callable[..., str]:
    """Run the CLI in process, require exit status 0, and return its stdout and stderr as one line of words (rich
    wraps text at the terminal's width): ``said = cli_said("calibrate", "evaluate", path, ...)``."""
    def said(*args: Any, **kwargs: Any) -> str:
        rc, out, err = run_cli(*args, **kwargs)
        assert rc == 0, err
        return " ".join((out + err).split())

    return said


@pytest.fixture
def cli_process() -> Callable[..., CliResult]:
    """Run the CLI in a real process: ``cli_process("score", ...)``, same result as :func:`cli`."""
    return run_cli_process
