"""The ``xleval`` command line: a thin shell over the library, one module per command group.

Each entry of ``_GROUPS`` is ``(name, "module:attribute", help)``; the attribute is a Typer app
(a command group) or a plain function (a single command). Every :class:`XlevalError` becomes
one line on stderr and exit status 2 (``--debug`` shows the traceback).
"""
from __future__ import annotations

import importlib
import sys

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
]

app = typer.Typer(
    name="xleval",
    help="Make evaluation scores comparable across languages.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"xleval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors."),
) -> None:
    """Make evaluation scores comparable across languages."""


def _register() -> None:
    for name, target, help_text in _GROUPS:
        module_name, attr = target.split(":")
        obj = getattr(importlib.import_module(module_name), attr)
        if isinstance(obj, typer.Typer):
            app.add_typer(obj, name=name, help=help_text)
        else:
            app.command(name=name, help=help_text)(obj)


_register()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning xleval errors into one line and exit status 2."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        rc = app(args=args, prog_name="xleval", standalone_mode=False)
    except XlevalError as exc:
        if debug:
            raise
        _fail(str(exc))
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        _fail("aborted")
        return 130
    except KeyboardInterrupt:
        _fail("interrupted; no output was written")
        return 130
    except _click_exceptions() as exc:
        exc.show()
        return 2
    except OSError as exc:
        if debug:
            raise
        _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        return 2
    return rc if isinstance(rc, int) else 0


def _click_exceptions():
    import click

    return click.ClickException


def _fail(message: str) -> None:
    sys.stderr.write(f"xleval: error: {message}\n")


def _console_main() -> None:  # pragma: no cover - thin wrapper for the console script
    sys.exit(main())
