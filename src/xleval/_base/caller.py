"""What the library tells its caller, and how: one value (:class:`Caller`) instead of ``where``,
``commands`` and ``progress`` threaded through the leaderboard, the report and the diagnosis. The CLI
builds one; a Python caller rarely needs to."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .progress import Progress

__all__ = ["Caller", "DEFAULT_CALLER"]


@dataclass(frozen=True)
class Caller:
    """``where``: the name of the input in messages (a file name; an
    :class:`~xleval.table.EvalTable` brings its own ``source``); ``commands``: an
    :class:`xleval.decision.AdviceRenderer`, so that advice names commands that run as written (the CLI
    passes one; None: Python calls); ``progress``: told of each finished step (:mod:`xleval._base.progress`).
    ``with_(...)`` changes some settings."""

    where: str = "input"
    commands: Any = None
    progress: Progress | None = None

    def with_(self, **changes: Any) -> Caller:
        """This caller with some settings changed."""
        return replace(self, **changes)


#: a Python call: messages name "input", advice names Python calls, no progress
DEFAULT_CALLER = Caller()
