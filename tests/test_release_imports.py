"""`import xleval`, `import xleval.cli` and `xleval --help` load no torch, transformers, dask or
matplotlib (the same check `make release-check` runs against the installed wheel)."""
import pytest

from import_check import CHECKS, loaded_by


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_no_heavy_import(name):
    assert loaded_by(CHECKS[name]) == []
