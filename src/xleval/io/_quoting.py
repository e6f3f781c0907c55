"""The one quoting rule of TSV files: are double quotes text, or CSV quoting?

Both kinds of TSV exist. WMT and mt-metrics-eval plain text keeps quotes as text (``"Yes," he
said.``); pandas' ``to_csv(sep="\\t")``, ``csv.writer`` and spreadsheets wrap every field that holds a
quote, a tab or a line break in quotes and double the quotes inside (``"He said ""hi"" twice"``). The rule,
decided once per file from every field of it (``quoting="auto"``):

* no field holds a quote: nothing to decide;
* every field that holds a quote is wholly wrapped in quotes with its inner quotes doubled, and a
  doubled quote or a wrapped header shows a CSV writer: **CSV quoting** (the quotes come off);
* a field holds a quote that a CSV writer would have wrapped (``He said "hi".``, ``"Yes," he said``):
  **quotes are text**;
* the only quotes are texts wholly in quotes *without* a doubled quote inside (``"Yes."``: a quoted
  text, or the CSV field ``Yes.`` of a writer that quotes everything): **ambiguous**, refused with a
  line naming ``quoting=``;
* a record split by a tab or a line break inside quotes reads only as CSV: CSV quoting.

Whenever the two readings of a file differ, the reading chosen is said, naming the file, the rule and
how to force the other: a :class:`DataQualityWarning` when the file holds evidence both ways (quotes
kept as text next to fields a CSV reading would unwrap), else a note in the log of this module (which
the command line prints: ``xleval: note: ...``). ``quoting="csv"`` or ``"none"`` forces a rule.
xleval writes TSV with the CSV rule (:func:`xleval.io._write.format_rows`), which it and pandas read back
unchanged.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import warnings
from collections.abc import Callable, Iterator

from ..exceptions import DataQualityWarning, InputError

__all__ = ["QUOTING", "QuoteEvidence", "decide_quoting", "check_quoting", "default_quoting", "use_quoting",
           "resolve_quoting", "set_default_quoting", "is_wrapped"]

#: ``auto``: decided per file from its fields; ``csv``: RFC 4180 quoting (pandas, csv.writer);
#: ``none``: every quote is text (WMT, mt-metrics-eval)
QUOTING = ("auto", "csv", "none")

_DEFAULT: contextvars.ContextVar[str] = contextvars.ContextVar("xleval_tsv_quoting", default="auto")
logger = logging.getLogger(__name__)


def check_quoting(quoting: object) -> str:
    if quoting not in QUOTING:
        raise InputError(f"quoting={quoting!r}: expected one of {', '.join(map(repr, QUOTING))}",
                         argument="quoting", value=quoting)
    return str(quoting)


def resolve_quoting(quoting: str | None) -> str:
    """The rule asked for, else the one :func:`use_quoting` set for the running command, else 'auto'."""
    return check_quoting(_DEFAULT.get() if quoting is None else quoting)


def default_quoting() -> str:
    return _DEFAULT.get()


@contextlib.contextmanager
def use_quoting(quoting: str) -> Iterator[None]:
    """Read every TSV in the block with ``quoting`` unless a call names its own (the CLI's ``--quoting``)."""
    token = _DEFAULT.set(check_quoting(quoting))
    try:
        yield
    finally:
        _DEFAULT.reset(token)


def set_default_quoting(quoting: str) -> Callable[[], None]:
    """Set the rule for the rest of this context (a CLI command); returns the function that restores
    the previous one."""
    token = _DEFAULT.set(check_quoting(quoting))
    return lambda: _DEFAULT.reset(token)


def is_wrapped(field: str) -> bool:
    """Wholly in double quotes with every inner quote doubled: a CSV-quoted field."""
    return len(field) >= 2 and field[0] == '"' and field[-1] == '"' and '"' not in field[1:-1].replace('""', "")


class QuoteEvidence:
    """What the fields of a TSV file say about its quotes, gathered line by line (split at tabs)."""

    def __init__(self) -> None:
        self.wrapped = 0  # fields wholly in quotes, inner quotes doubled
        self.doubled = 0  # of those, with a doubled quote inside: a CSV writer's mark
        self.header_wrapped = False
        self.literal = 0  # fields holding a quote that a CSV writer would have wrapped
        self.first_wrapped: int | None = None  # its line in the file
        self.first_literal: tuple[int, str] | None = None

    @property
    def any(self) -> bool:
        return bool(self.wrapped or self.literal)

    def add(self, line: str, lineno: int, *, header: bool = False) -> None:
        if '"' not in line:
            return
        for field in line.rstrip("\r").split("\t"):
            if '"' not in field:
                continue
            if is_wrapped(field):
                self.wrapped += 1
                self.doubled += '""' in field[1:-1] or field == '""'  # an empty field in quotes: a CSV writer's too
                self.header_wrapped |= header
                if self.first_wrapped is None:
                    self.first_wrapped = lineno
            else:
                self.literal += 1
                if self.first_literal is None:
                    self.first_literal = (lineno, field)


def decide_quoting(quoting: str, evidence: QuoteEvidence, name: str, *, literal_error: InputError | None,
                   csv_fits: Callable[[], bool], quiet: bool = False) -> str:
    """'csv' or 'none' for a TSV file: ``quoting`` if forced, else the rule of this module.

    ``literal_error`` is what reading every quote as text found wrong with the record widths (None:
    nothing); ``csv_fits()`` tells whether the file reads as strict CSV with the header's width.
    ``quiet``: the choice is not said (a reader that only looks at the header, before the rows are read)."""
    if quoting != "auto":
        return quoting
    if quiet:
        with _silenced():
            return decide_quoting(quoting, evidence, name, literal_error=literal_error, csv_fits=csv_fits)
    if not evidence.any:
        if literal_error is not None:
            raise literal_error
        return "none"
    if literal_error is not None:  # a tab or a line break inside quotes, or a row that is simply wrong
        if csv_fits():
            _note(f"{name}: read with CSV quoting: a field in quotes holds a tab or a line break, as pandas' "
                 'to_csv and csv.writer write it; to keep quotes as text, pass quoting="none"')
            return "csv"
        raise literal_error
    if evidence.literal == 0:
        if evidence.doubled or evidence.header_wrapped:
            _note(f"{name}: read with CSV quoting: {evidence.wrapped} field(s) are wholly in double quotes with the "
                 "quotes inside doubled, as pandas' to_csv and csv.writer write them, so those quotes are taken off; "
                 'to keep them as text (a WMT-style file), pass quoting="none"')
            return "csv"
        raise InputError(f"{name}: cannot tell whether quotes are text or CSV quoting: {evidence.wrapped} field(s) "
                         f"are wholly in double quotes (first on line {evidence.first_wrapped}) and nothing else in "
                         'the file tells; pass quoting="csv" (written by pandas or csv.writer) or quoting="none" (the '
                         "quotes are part of the text)", argument="quoting", value="auto")
    if evidence.wrapped and csv_fits():
        line, field = evidence.first_literal or (0, "")
        _say(f"{name}: quotes read as text: {evidence.wrapped} field(s) wholly in double quotes are kept as they are, "
             f"since line {line} holds a quote a CSV writer would have wrapped ({_short(field)}); to read the file "
             'with CSV quoting, pass quoting="csv"')
    return "none"


def _short(field: str) -> str:
    return repr(field if len(field) <= 40 else field[:37] + "...")


_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("xleval_tsv_quoting_quiet", default=False)


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def _say(message: str) -> None:
    if _QUIET.get():
        return
    warnings.warn(message, DataQualityWarning, stacklevel=3)  # names the reader that decided


def _note(message: str) -> None:
    """A decision the file's evidence settles: a note in the log (the command line prints it)."""
    if not _QUIET.get():
        logger.info(message)
