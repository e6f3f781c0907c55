"""The ``xleval`` command line: a thin shell over the library, one module per command group.

Each entry of ``_GROUPS`` is ``(name, "module:attribute", help)``; the attribute is a click
command or group, imported only when it runs. Every :class:`XlevalError` becomes
one line on stderr and exit status 2 (``--debug`` shows the traceback); Ctrl-C exits with 130,
SIGTERM with 143, each with one line and no output file. Each run is one ``command_scope``: the
files it reads are recorded, and the one writer refuses to write an output over any of them.
"""
from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import os
import sys
import warnings

# numpy's OpenBLAS starts a worker thread per core when it loads; that cost about 0.1 CPU-second per
# process (measured on `xleval score`: a tenth of scoring 40,000 segments), while the commands'
# matrix products are small. One thread also gives the same bits on every machine. Set before numpy loads (no
# command module is imported yet); a thread count the user chose is kept.
if "numpy" not in sys.modules and not any(v in os.environ for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                                     "OMP_NUM_THREADS")):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import click

from .._base.interrupt import Terminated, signals_as_exceptions
from .._base.scope import command_scope
from .._base.terminal import visible_controls
from ..exceptions import XlevalError, XlevalWarning
from ._about import print_version

_GROUPS: list[tuple[str, str, str]] = [
    ("calibrate", "xleval.cli.calibrate:app",
     "Calibrate scores across languages: select labels, fit (anchored, LGN, auto), evaluate, apply, show."),
    ("diagnose", "xleval.cli.diagnose:diagnose", "Diagnose language bias, agreement with humans and LGN validity."),
    ("demo", "xleval.cli.demo:demo", "Run the whole MT path on generated data with a known truth."),
    ("report", "xleval.cli.report:report", "Write one self-contained HTML (or JSON) report for a scored table."),
    ("leaderboard", "xleval.cli.leaderboard:leaderboard",
     "Rank every (group, system) with intervals, within and across groups."),
    ("audit", "xleval.cli.audit:audit", "Audit a translated benchmark for a translation tax (E1-E4, parser validity)."),
    ("intrinsic", "xleval.cli.intrinsic:app", "Length-fair intrinsic LM metrics, their confounds, LM scoring."),
    ("fairness", "xleval.cli.fairness:app", "Multilingual performance gaps and minimum test-set size."),
    ("score", "xleval.cli.score:score", "Score segments with BLEU, chrF, TER or neural metrics (sacrebleu-exact)."),
    ("meta", "xleval.cli.meta:meta",
     "Meta-evaluate many metrics against human scores: WMT's statistics per pair and across pairs."),
    ("ingest", "xleval.cli.ingest:ingest",
     "Read WMT folders, the mt-metrics-eval layout and human ratings (MQM spans, ESA, mixed gold) into a table."),
    ("judges", "xleval.cli.judges:judges",
     "LLM judges: agreement between judges (or a judge and a metric) per language."),
    ("check-outputs", "xleval.cli.check_outputs:check_outputs",
     "Flag empty, copied, off-target, truncated outputs; rates per (group, system), effect on each metric."),
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
    command = getattr(importlib.import_module(module_name), attr)
    command.name = name
    command.help = command.help or help_text
    return command


app = _LazyGroup(
    name="xleval",
    help="Make evaluation scores comparable across languages.",
    no_args_is_help=True,
    context_settings={"show_default": True},  # inherited by every command; click hides False flags' default
    params=[
        click.Option(["-V", "--version"], is_flag=True, expose_value=False, is_eager=True, callback=print_version,
                     help="Print the version."),
        click.Option(["--debug"], is_flag=True, expose_value=False, help="Show tracebacks instead of one-line errors."),
    ],
)


# click >= 8.2 raises this for a bare group (click 8.1 prints the help and exits 0 itself)
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning xleval errors into one line and exit status 2."""
    args = _sacrebleu_habit(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    common = sys.modules.get("xleval.cli._common")  # imported by an earlier run in this process: its width is stale
    if common is not None:
        common.refresh_widths()
    stdout = sys.stdout
    if stdout is None or getattr(stdout, "closed", False):  # `xleval ... >&-`: printing is one line, not lost
        sys.stdout = _ClosedStdout()
    try:
        return _main(args, debug)
    except ValueError as exc:  # a writer that found the closed stream itself (click.echo's own wrapper)
        if not isinstance(sys.stdout, _ClosedStdout) or "closed file" not in str(exc) or debug:
            raise
        _fail(_CLOSED)
        return 2
    finally:
        if isinstance(sys.stdout, _ClosedStdout):
            sys.stdout = stdout


_CLOSED = ("standard output is closed (the command was started with >&-), so what it prints cannot be shown; "
           "leave standard output open, or write to a file with -o FILE")


class _ClosedStdout:
    """Standard output when the command was started with it closed: writing to it is an OutputError (one
    line, exit 2), as a write error is for any command-line tool, instead of a traceback or a silent success
    whose result went nowhere. Commands that print nothing (``-o FILE``) run as usual."""

    closed = True
    encoding = "utf-8"

    def write(self, text: str) -> int:
        from ..exceptions import OutputError

        if not text:
            return 0
        raise OutputError(_CLOSED)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation("standard output is closed")


def _main(args: list[str], debug: bool) -> int:
    try:
        # make_context + invoke, not app.main: click's main turns Ctrl-C into Abort after printing a blank line;
        # the scope records the command's inputs (its outputs may not overwrite them), SIGTERM unwinds like Ctrl-C
        with signals_as_exceptions(), command_scope(), _one_line_warnings(_command(args)), \
                app.make_context("xleval", list(args)) as ctx:
            rc = app.invoke(ctx)
    except Terminated as exc:
        _fail(f"terminated ({exc.name}); no output was written")
        return exc.exit_status
    except XlevalError as exc:
        if debug:
            raise
        from ._errors import cli_message

        _fail(cli_message(exc, _command(args), args))
        return 2
    except click.exceptions.Exit as exc:  # --help, --version
        return exc.exit_code
    except click.exceptions.Abort:
        _fail("aborted")
        return 130
    except KeyboardInterrupt:
        _fail("interrupted; no output was written")
        return 130
    except _NO_ARGS_IS_HELP as exc:  # a bare group: its help is the answer
        help_text = exc.ctx.get_help() if exc.ctx is not None else ""
        if help_text:
            sys.stderr.write(help_text.rstrip("\n") + "\n")
        return 2
    except click.UsageError as exc:  # a missing option, a bad value, an unknown command
        where = exc.ctx.command_path if exc.ctx is not None else _command_path(args)
        _fail(f"{where}: {exc.format_message().rstrip('.')}; see '{where} --help'")
        return 2
    except click.ClickException as exc:
        _fail(exc.format_message())
        return 2
    except BrokenPipeError:  # the reader of our standard output went away (`| head`): its choice, not an error
        _silence_stdout()
        return 141
    except OSError as exc:
        if debug:
            raise
        if exc.filename is None and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            # a write to standard output failed (a full or failing device): say where, and what to do
            _fail(f"standard output: cannot write ({exc.strerror or exc}); free some space, or send standard "
                  "output elsewhere")
        else:
            _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
        return 2
    except MemoryError:
        if debug:
            raise
        _fail("out of memory; use a smaller input, fewer resamples, or --chunk-size where the command has it")
        return 2
    return rc if isinstance(rc, int) else 0


@contextlib.contextmanager
def _one_line_warnings(command: click.Command | None = None):
    """A warning no command rendered (numpy, matplotlib, a library's own) is one line on stderr,
    'xleval: warning: MESSAGE', without the source path and line python would show; an xleval warning
    names the running ``command``'s flags where it names a Python argument (``on_unseen=``)."""
    with warnings.catch_warnings():
        warnings.showwarning = functools.partial(_show_warning, command=command)
        yield


def _show_warning(message, category, filename, lineno, file=None, line=None, *,
                  command: click.Command | None = None) -> None:
    text = str(message)
    if isinstance(category, type) and issubclass(category, XlevalWarning):
        from ._errors import cli_words

        text = cli_words(text, command)
    sys.stderr.write(f"xleval: warning: {visible_controls(text)}\n")


def _sacrebleu_habit(args: list[str]) -> list[str]:
    """sacrebleu's command line without ``score``: ``xleval REF.txt -i HYP.txt`` and ``cat HYP | xleval
    REF.txt`` run ``xleval score REF.txt ...`` when the first word is no command but a file, given with
    ``-i`` or a plain-text file (the reference, as ``score`` decides it); any other unknown word stays an
    unknown command."""
    first = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if first is None or any(a not in ("--debug",) for a in args[:first]):
        return args
    word = args[first]
    if word in {name for name, _, _ in _GROUPS} or not os.path.isfile(word):
        return args
    from .score import _plain_text

    hyps_given = any(a in ("-i", "--input", "--hyp") or a.startswith(("--input=", "--hyp=")) for a in args)
    return [*args[:first], "score", *args[first:]] if hyps_given or _plain_text(word) else args


def _command_path(args: list[str]) -> str:
    """The command a usage error belongs to, for errors click raises without a context (e.g. a flag
    given a value: ``--lowercase=true``): the leading command names of ``args``."""
    return " ".join(_walk(args)[1])


def _command(args: list[str]) -> click.Command | None:
    """The (sub)command ``args`` ran, whose flags an error's message is translated to."""
    command = _walk(args)[0]
    return None if command is app else command


def _walk(args: list[str]) -> tuple[click.Command, list[str]]:
    command: click.Command = app
    path = ["xleval"]
    for arg in args:
        if arg.startswith("-"):  # the root's own flags come before the command name
            continue
        # no context exists for this error; click's groups (and the lazy root) look names up without one
        sub = command.get_command(None, arg) if isinstance(command, click.Group) else None  # type: ignore[arg-type]
        if sub is None:
            break
        command, path = sub, path + [arg]
    return command, path


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file descriptor (e.g. captured in tests)
        pass


def _fail(message: str) -> None:
    # one line, whatever names from the data the message quotes (newlines, ANSI escapes, bidi overrides)
    sys.stderr.write(f"xleval: error: {visible_controls(message)}\n")


def _console_main() -> None:  # pragma: no cover - thin wrapper for the console script
    sys.exit(main())
