"""The one base of xleval's frozen result objects: ``to_dict()`` over the dataclass fields.

Every statistic, diagnosis, gap, audit contrast and intrinsic analysis returns a frozen dataclass
that inherits :class:`Result`, so the CLI, the report and saved analyses serialise it the same way.
Fields made with :func:`array_field` (resampled distributions, per-row arrays) are kept on the
object for plots and re-use but left out of ``to_dict()`` unless asked for.
"""
from __future__ import annotations

from dataclasses import field, fields
from typing import Any

from .jsonable import to_jsonable

__all__ = ["Result", "array_field"]


class Result:
    """Mixin for frozen dataclasses: ``to_dict()`` and the ``unreliable`` flag read from ``notes``."""

    def to_dict(self, *, include_distribution: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            if not f.metadata.get("dump", True) and not include_distribution:
                continue
            out[f.name] = to_jsonable(getattr(self, f.name))
        return out

    @property
    def unreliable(self) -> bool:
        """True when a note flags the result as unreliable (tiny strata, degenerate data)."""
        return any("unreliable" in note for note in getattr(self, "notes", ()))


def array_field() -> Any:
    """A field for arrays kept on a result but never compared, printed or dumped by default."""
    return field(default=None, repr=False, compare=False, metadata={"dump": False})
