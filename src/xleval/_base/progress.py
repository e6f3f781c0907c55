"""Progress of long library computations, told to an optional callback (the CLI draws the bar).

The library never prints: a long function takes ``progress=None``, a callable
``progress(units=1, *, total=None)``. It first declares its total (``progress(0, total=N)``), then
reports each finished step (``progress(1)``), so a bar reaches N exactly when the work is done.
A callback that also takes ``stage=`` is told which part of the work runs now (``progress(0,
stage="chrf (2 of 4)")``, :func:`tell_stage`); one that does not is never called with it.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

__all__ = ["Progress", "Steps", "tell_stage"]

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


def tell_stage(progress: Progress | None, stage: str) -> None:
    """Tell ``progress`` which part of the work starts now (``stage``, a short text), if it takes a
    ``stage=`` keyword (the command line's bars show it); a plain ``progress(units, *, total=None)``
    callback is left alone."""
    if progress is None:
        return
    try:
        params = inspect.signature(progress).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no keywords to look at
        return
    if "stage" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        progress(0, stage=stage)
