"""Termination signals end a run like Ctrl-C: the stack unwinds, so every temporary file of the one
writer is removed and a Dask cluster started by the run is closed.

Python turns SIGINT into KeyboardInterrupt, but SIGTERM (what schedulers, ``timeout`` and ``kill``
send) and SIGHUP (the terminal closed) kill the process outright, leaving its temporary files.
:func:`signals_as_exceptions` raises :class:`Terminated` for them instead; the command line reports
it in one line and exits with 128 + the signal number (143 for SIGTERM), as a shell would.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

__all__ = ["Terminated", "signals_as_exceptions"]

_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(BaseException):
    """The process received a termination signal; ``exit_status`` is 128 + its number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum
        self.name = signal.Signals(signum).name
        self.exit_status = 128 + signum


def _raise(signum: int, _frame) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread (elsewhere
    the block changes nothing: only the main thread may set signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _SIGNALS}
    for s in _SIGNALS:
        if previous[s] is signal.SIG_IGN:  # e.g. SIGHUP under nohup: the user asked to ignore it
            continue
        signal.signal(s, _raise)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
