"""Library errors in the command line's words: a message names Python arguments (``score=``); the
command that ran knows which of its flags sets each one, so the line the user reads names the flag."""
from __future__ import annotations

import re

import click

from ..exceptions import XlevalError

__all__ = ["cli_message"]


def cli_message(exc: XlevalError, command: click.Command | None) -> str:
    """``exc``'s message with the argument it is about (``exc.argument``), where the message writes it as
    Python does (``by=``, ``by="lp"``), written as the command's flag (``--by``, ``--by "lp"``); an error
    about a missing column of a role also names ``--col`` where the command has it. Messages about no
    one argument are printed as they are."""
    message = str(exc)
    argument = getattr(exc, "argument", None)
    if command is None or argument is None:
        return message
    flags = _flags(command)
    flag = flags.get(argument)
    if flag is not None:
        name = re.escape(argument)
        message = re.sub(rf"(?<![\w.=(-]){name}=(?=[\s;,).]|$)", flag, message)
        message = re.sub(rf"(?<![\w.=(-]){name}=(?=\S)", flag + " ", message)
    if argument in _ROLES and "col" in flags and "no column" in message:
        message += "; or map yours with --col NAME=YOUR_COLUMN"
    return message


_ROLES = {"score", "scores", "by", "human", "system", "segment", "document", "columns"}


def _flags(command: click.Command) -> dict[str, str]:
    """Parameter name -> its long flag (the first ``--`` spelling), for the command's options."""
    out: dict[str, str] = {}
    for param in command.params:
        if isinstance(param, click.Option) and param.name:
            long = [o for o in param.opts if o.startswith("--")]
            if long:
                out[param.name] = long[0]
    if "col" in out:
        out.setdefault("columns", out["col"])
    return out
