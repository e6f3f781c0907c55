"""The ``xleval`` command line: a thin shell over the library, one module per command group.

Each entry of ``_GROUPS`` is ``(name, "module:attribute", help)``; the attribute is a Typer app
(a command group) or a plain function (a single command). Every :class:`XlevalError` becomes
one line on stderr and exit status 2 (``--debug`` shows the traceback).
"""
from __future__ import annotations

import importlib
import sys

import click
import typer

from .. import __version__
from ..exceptions import XlevalError

_GROUPS: list[tuple[str, str, str]] = [
    ("calibrate", "xleval.cli.calibrate:app", "Fit, apply and show LGN calibrators."),
    ("diagnose", "xleval.cli.diagnose:diagnose", "Diagnose language bias, agreement with humans and LGN validity."),
    ("demo", "xleval.cli.demo:demo", "Run the whole MT path on generated data with a known truth."),
    ("report", "xleval.cli.report:report", "Write one self-contained HTML (or JSON) report for a scored table."),
    ("audit", "xleval.cli.audit:audit", "Audit a translated benchmark for a translation tax (E1-E4, parser validity)."),
    ("intrinsic", "xleval.cli.intrinsic:app", "Length-fair intrinsic LM metrics, their confounds, LM scoring."),
    ("fairness", "xleval.cli.fairness:app", "Multilingual performance gaps and minimum test-set size."),
    ("score", "xleval.cli.score:score", "Score segments with BLEU, chrF, TER or neural metrics (sacrebleu-exact)."),
]

class _LazyGroup(click.Group):
    """The root command: a group module is imported only when its command runs, so one command's
    heavy imports (scipy.stats, matplotlib, ...) never slow another, and ``--help`` imports nothing."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name, _, _ in _GROUPS]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        for group, target, help_text in _GROUPS:
            if group == name:
                return _load(group, target, help_text)
        return None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, _, help_text in _GROUPS])


def _load(name: str, target: str, help_text: str) -> click.Command:
    module_name, attr = target.split(":")
    obj = getattr(importlib.import_module(module_name), attr)
    if isinstance(obj, typer.Typer):
        obj.info.help = obj.info.help or help_text
        obj._add_completion = False
        command = typer.main.get_command(obj)
    else:
        single = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        single.command(name=name, help=help_text)(obj)
        command = typer.main.get_command(single)
    command.name = name
    return command


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"xleval {__version__}")
        ctx.exit()


app = _LazyGroup(
    name="xleval",
    help="Make evaluation scores comparable across languages.",
    no_args_is_help=True,
    params=[
        click.Option(["--version"], is_flag=True, expose_value=False, is_eager=True, callback=_version,
                     help="Print the version."),
        click.Option(["--debug"], is_flag=True, expose_value=False, help="Show tracebacks instead of one-line errors."),
    ],
)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning xleval errors into one line and exit status 2."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        # make_context + invoke, not app.main: click's main turns Ctrl-C into Abort after printing a blank line
        with app.make_context("xleval", list(args)) as ctx:
            rc = app.invoke(ctx)
    except XlevalError as exc:
        if debug:
            raise
        _fail(str(exc))
        return 2
    except (click.exceptions.Exit, typer.Exit) as exc:  # --help, --version (typer's own Exit for its commands)
        return exc.exit_code
    except (click.exceptions.Abort, typer.Abort):
        _fail("aborted")
        return 130
    except KeyboardInterrupt:
        _fail("interrupted; no output was written")
        return 130
    except _click_classes("NoArgsIsHelpError") as exc:  # a bare group: its help is the answer
        help_text = exc.ctx.get_help() if exc.ctx is not None else ""
        if help_text:
            sys.stderr.write(help_text.rstrip("\n") + "\n")
        return 2
    except _click_classes("UsageError") as exc:  # a missing option, a bad value, an unknown command
        where = exc.ctx.command_path if exc.ctx is not None else "xleval"
        _fail(f"{where}: {exc.format_message().rstrip('.')}; see '{where} --help'")
        return 2
    except _click_classes("ClickException") as exc:
        _fail(exc.format_message())
        return 2
    except OSError as exc:
        if debug:
            raise
        _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        return 2
    return rc if isinstance(rc, int) else 0


def _click_classes(name: str) -> tuple[type[BaseException], ...]:
    """The exception class ``name`` of click and of the click copy typer >= 0.24 vendors (its
    commands raise ``typer._click`` exceptions, which are not click's)."""
    classes = [getattr(click.exceptions, name)]
    try:
        from typer._click import exceptions as vendored
    except ImportError:  # typer that uses click itself
        return tuple(classes)
    return tuple(classes + ([getattr(vendored, name)] if hasattr(vendored, name) else []))


def _fail(message: str) -> None:
    sys.stderr.write(f"xleval: error: {message}\n")


def _console_main() -> None:  # pragma: no cover - thin wrapper for the console script
    sys.exit(main())
