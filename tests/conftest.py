"""Shared fixtures. Real third-party data is read from XLEVAL_DATA (default ../shared/data):
tests that need it skip with a reason when it is absent, and fail when XLEVAL_REQUIRE_DATA=1."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]

# CI must be reproducible: property tests draw the same examples on every run there (locally they
# keep exploring new ones; a failure found locally is replayed from hypothesis' example database).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _data_root() -> Path:
    return Path(os.environ.get("XLEVAL_DATA", REPO.parent / "shared" / "data")).resolve()


def require_data(*relative: str) -> Path:
    """Path to a file under the shared data folder; skip (or fail under XLEVAL_REQUIRE_DATA=1) if absent."""
    path = _data_root().joinpath(*relative)
    if not path.exists():
        reason = f"shared data not found: {path} (set XLEVAL_DATA to the shared/data folder)"
        if os.environ.get("XLEVAL_REQUIRE_DATA") == "1":
            pytest.fail(reason + "; XLEVAL_REQUIRE_DATA=1 requires it")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def data_root() -> Path:
    return require_data()


@pytest.fixture(scope="session")
def wmt21_segments():
    import pandas as pd

    return pd.read_parquet(require_data("wmt21", "segments.parquet"))


@pytest.fixture(scope="session")
def wmt21_systems():
    import pandas as pd

    return pd.read_csv(require_data("wmt21", "systems.csv"))
