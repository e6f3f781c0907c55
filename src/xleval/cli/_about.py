"""``--version``/``-V``: the one callback of the top level and of ``score`` (sacrebleu's ``-V``)."""
from __future__ import annotations

import click

from .. import __version__


def print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """Print xleval's own version (never sacrebleu's: ``score -V`` is xleval's) and stop."""
    if value and not ctx.resilient_parsing:
        click.echo(f"xleval {__version__}")
        ctx.exit()
