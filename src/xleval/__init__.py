"""xleval: make evaluation scores comparable across languages."""
from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["EvalTable", "as_table", "__version__"]


def __getattr__(name: str) -> Any:
    # the table noun on first use (PEP 562): `import xleval` and `xleval --help` load no pandas
    if name in ("EvalTable", "as_table"):
        from . import table

        return getattr(table, name)
    raise AttributeError(f"module 'xleval' has no attribute {name!r}")
