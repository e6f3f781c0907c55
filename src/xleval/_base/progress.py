"""Progress of long library computations, told to an optional callback (the CLI draws the bar).

The library never prints: a long function takes ``progress=None``, a callable
``progress(units=1, *, total=None)``. It first declares its total (``progress(0, total=N)``), then
reports each finished step (``progress(1)``), so a bar reaches N exactly when the work is done.
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "Steps"]

#: ``progress(units=1, *, total=None)``: ``units`` steps done; ``total`` (once, first) how many there are
Progress = Callable[..., None]


class Steps:
    """The steps of one computation, for an optional :data:`Progress` callback (None: nothing is told)."""

    def __init__(self, progress: Progress | None, total: int):
        self._progress = progress
        if progress is not None:
            progress(0, total=total)

    def done(self, units: int = 1) -> None:
        """``units`` more steps are finished."""
        if self._progress is not None:
            self._progress(units)

    def inner(self) -> Progress | None:
        """A callback for a computation counted among these steps: its steps count here, its total
        is already part of this one."""
        if self._progress is None:
            return None
        outer = self._progress

        def forward(units: int = 1, *, total: int | None = None) -> None:
            if units:
                outer(units)

        return forward
