"""The decision of ``calibrate fit --method auto`` told on the command line: what was chosen and why,
and the commands its advice names, complete for the table this command read."""
from __future__ import annotations

from .._base.terminal import data_text
from ._common import err_console

__all__ = ["announce", "decision_commands"]


def decision_commands(input, col):
    """The context that completes the advice's commands: this table's path and ``--col`` mapping."""
    from ._advice import CommandContext

    return CommandContext.from_cli(input, col)


def announce(choice, fmt) -> None:
    """--method auto says what it chose and why (on stderr; in JSON it is the `decision` field)."""
    if fmt == "json":
        return
    # soft wraps only: the warning names commands, and a hard line break inside one breaks its paste
    err_console.print(data_text(choice.summary(), style="bold"), soft_wrap=True)
    if choice.warning:
        err_console.print(data_text(choice.warning, style="bold red" if choice.warn else ""), soft_wrap=True)
