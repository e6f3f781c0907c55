"""Library errors in the command line's words: a message names Python arguments (``score=``); the
command that ran knows which of its flags sets each one, so the line the user reads names the flag."""
from __future__ import annotations

import re

import click

from ..exceptions import XlevalError

__all__ = ["cli_message"]


def cli_message(exc: XlevalError, command: click.Command | None) -> str:
    """``exc``'s message with each ``name=`` that is a parameter of ``command`` written as its flag
    (``by=`` -> ``--by``); an error about a missing column also names ``--col`` where the command has it."""
    message = str(exc)
    if command is None:
        return message
    flags = _flags(command)
    if flags:
        names = "|".join(sorted(map(re.escape, flags), key=len, reverse=True))
        message = re.sub(rf"(?<![\w.=-])({names})=(?=[\s;,).]|$)", lambda m: flags[m.group(1)], message)
        message = re.sub(rf"(?<![\w.=-])({names})=(?=\S)", lambda m: flags[m.group(1)] + " ", message)
    if getattr(exc, "argument", None) in _ROLES and "col" in flags and "no column" in message:
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
