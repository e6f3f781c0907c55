"""The decision of ``calibrate fit --method auto`` told on the command line: what was chosen and why,
and the commands its advice names, complete for the table this command read."""
from __future__ import annotations

import click

from .._base.terminal import data_text
from ..calibration._scales import SCALE_NAMES
from ._common import err_console

__all__ = ["announce", "decision_commands", "human_scale_option", "flags"]

#: --human-scale, on every command that decides which calibration to use
human_scale_option = click.option(
    "--human-scale", type=click.Choice(SCALE_NAMES, case_sensitive=False), default=None,
    help="The scale of the --human column: mqm, esa, da (raw DA), hter, sqm, likert, raw (one scale for every group, "
         "direction not said), z or da-z (standardised within groups, like WMT DA z, so it cannot compare groups). "
         "A named scale also fixes its direction for anchored calibration (MQM by the labels' signs: error points "
         "or their negation). Default: the HUMAN_scale column `xleval ingest` writes, else the column's name and "
         "its group means and sds decide, or the output says the tool cannot tell.")


def flags(text: str) -> str:
    """The decision's text with the library's arguments written as the running command's flags
    (``human_scale='z'`` -> ``--human-scale z``), as ``say`` writes notes."""
    from ._errors import cli_words

    ctx = click.get_current_context(silent=True)
    return cli_words(text, ctx.command if ctx is not None else None)


def decision_commands(input, col):
    """The context that completes the advice's commands: this table's path and ``--col`` mapping."""
    from ._advice import CommandContext

    return CommandContext.from_cli(input, col)


def announce(choice, fmt) -> None:
    """--method auto says what it chose and why (on stderr; in JSON it is the `decision` field)."""
    if fmt == "json":
        return
    # soft wraps only: the warning names commands, and a hard line break inside one breaks its paste
    err_console.print(data_text(flags(choice.summary()), style="bold"), soft_wrap=True)
    if choice.warning:
        err_console.print(data_text(flags(choice.warning), style="bold red" if choice.warn else ""), soft_wrap=True)
    for note in getattr(choice, "notes", ()):
        err_console.print(data_text(f"note: {flags(note)}"), soft_wrap=True)
