"""The one exception tree of xleval, and its warning classes.

::

    XlevalError                      base of every error a user can cause
    ├── InputError (ValueError)      bad file, column, value or argument; says what, where, how to fix
    │   ├── ArgumentTypeError (TypeError)  an argument of the wrong type (as sacrebleu raises TypeError)
    │   ├── LanguageCodeError        a language code langcodes cannot read
    │   ├── ModelFileError           a calibrator/model file that is missing, of another version, or tampered
    │   └── OutputError              an output that would destroy an input, or cannot be written (a full disk)
    ├── SignatureMismatchError       scores of one metric given to a calibrator fitted on another
    ├── NotFittedError (AttributeError)  an estimator used before fit
    └── MissingDependencyError (ImportError)  an optional extra is not installed; names the extra

    XlevalWarning (UserWarning)
    ├── SmallGroupWarning            a group below min_count (shrunk, flagged)
    ├── DegenerateGroupWarning       a group with (near) zero spread
    ├── UnseenGroupWarning           a group not seen in fit, calibrated by a fallback
    └── DataQualityWarning           NaN/inf values, partly missing columns, excluded rows
        └── RepeatedKeysWarning      rows repeat a (pair, system, segment) key with different values

The CLI turns every ``XlevalError`` into one line on stderr and exit status 2; an interrupted run
(SIGINT, SIGTERM) removes its temporary files and exits with 130 or 143.

Errors speak Python: a message names arguments as a Python caller wrote them (``score=``), never a
command-line flag. An error about one argument carries it as ``argument`` (the keyword's name) and
``value`` (what was given); the CLI maps ``argument`` to its own flag when it prints the line.
"""
from __future__ import annotations

import copy
import re
import warnings

__all__ = [
    "XlevalError",
    "InputError",
    "ArgumentTypeError",
    "LanguageCodeError",
    "ModelFileError",
    "OutputError",
    "SignatureMismatchError",
    "NotFittedError",
    "MissingDependencyError",
    "XlevalWarning",
    "SmallGroupWarning",
    "DegenerateGroupWarning",
    "UnseenGroupWarning",
    "DataQualityWarning",
    "RepeatedKeysWarning",
    "repeated_column",
    "first_repeats",
    "warn_again",
    "ScaleRangeWarning",
    "PooledPairsWarning",
]


class XlevalError(Exception):
    """Base class of every error a user can cause. A message quoting a numpy scalar shows the number
    (``-5.0``), not its repr (``np.float64(-5.0)``): messages are for people, not for numpy."""

    #: the Python keyword the error is about (``"score"``, ``"by"``), or None
    argument: str | None = None
    #: the value given for ``argument`` (None when the error does not carry one)
    value: object = None
    #: of a function's several inputs, the one the error is about (``"table"``, ``"labels"``), so that a caller
    #: names the right file; None: the one the caller names
    about: str | None = None

    def __init__(self, *args: object, argument: str | None = None, value: object = None, about: str | None = None):
        if args and isinstance(args[0], str):
            args = (_plain_numbers(args[0]), *args[1:])
        super().__init__(*args)
        self.argument = argument
        self.value = value
        self.about = about

    def prefixed(self, where: str) -> XlevalError:
        """The same error (class, argument, value) with ``where: `` before its message: a caller that
        knows the file names it, which the function that raised could not (in place of ``data: `` or ``input: ``,
        the library's names for a table it was handed as a frame)."""
        out = type(self).__new__(type(self))
        message = str(self)
        Exception.__init__(out, f"{where}: {message.removeprefix('data: ').removeprefix('input: ')}")
        out.argument, out.value = self.argument, self.value
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("argument", "value")})
        return out


_NUMPY_SCALAR = re.compile(r"np\.(?:u?int|float|complex|longdouble|clongdouble)\d*\(([^()]*)\)"
                           r"|np\.(?:str_|bytes_|datetime64|timedelta64)\(((?:'[^']*'|\"[^\"]*\")(?:, *'[^']*')?)\)"
                           r"|np\.(True|False)_")


def _plain_numbers(message: str) -> str:
    if "np." not in message:
        return message
    return _NUMPY_SCALAR.sub(lambda m: next(g for g in m.groups() if g is not None), message)


class InputError(XlevalError, ValueError):
    """Bad input: the message says what is wrong, where (file, row, column), and how to fix it."""

    #: for a missing column (``value``): the columns the table has, by their canonical names, so that a
    #: caller above the readers can say more (the command line: "score it first" on a table of texts)
    columns: tuple[str, ...] | None = None


class ArgumentTypeError(InputError, TypeError):
    """An argument of the wrong type (a string where a list of strings is expected, a number where a
    text is): also a ``TypeError``, which sacrebleu raises for the same mistakes."""


class LanguageCodeError(InputError):
    """A language code that is not a well-formed, known BCP-47 / ISO 639 code."""


class ModelFileError(InputError):
    """A saved calibrator/model file that cannot be trusted (missing, wrong version, bad checksum)."""


class OutputError(InputError):
    """An output path that must not or cannot be written: an input of the same command, a missing or
    read-only folder, a block device; or a write that failed (no space left on the device)."""


class SignatureMismatchError(XlevalError):
    """Scores computed with one metric signature given to an object fitted on another."""


class NotFittedError(XlevalError, AttributeError):
    """An estimator was used before ``fit``/``partial_fit``."""


class MissingDependencyError(XlevalError, ImportError):
    """An optional dependency is missing; the message names the extra, e.g. ``pip install 'xleval[neural]'``."""

    def __init__(self, package: str, extra: str, purpose: str = ""):
        what = f" for {purpose}" if purpose else ""
        super().__init__(
            f"{package} is needed{what} but is not installed; install it with: pip install 'xleval[{extra}]'"
        )
        self.package = package
        self.extra = extra


class XlevalWarning(UserWarning):
    """Base class of xleval's warnings."""


class SmallGroupWarning(XlevalWarning):
    """A group has fewer rows than ``min_count``; its statistics were shrunk toward the pooled ones."""


class DegenerateGroupWarning(XlevalWarning):
    """A group's spread is (near) zero; its calibrated values are undefined (NaN), never divided by 1."""


class UnseenGroupWarning(XlevalWarning):
    """Rows of a group not seen in fit were calibrated through a fallback level."""


class DataQualityWarning(XlevalWarning):
    """NaN/inf values or rows excluded from a statistic; the message counts them."""


class RepeatedKeysWarning(DataQualityWarning):
    """Rows repeat a (pair, system, segment) key with different scores or labels; each row counts as a segment or
    label of its own. Its own class, and ``column`` (the column whose values differ), so that a procedure that
    reads one column twice says it once, and one column's warning never hides another's."""

    def __init__(self, message: str, column: str | None = None) -> None:
        super().__init__(message)
        self.column = column


def repeated_column(caught: warnings.WarningMessage) -> str | None:
    """The column a caught :class:`RepeatedKeysWarning` is about (None for any other warning)."""
    return getattr(caught.message, "column", None) if issubclass(caught.category, RepeatedKeysWarning) else None


def warn_again(caught: list[warnings.WarningMessage], *, said: set[str] | frozenset[str] = frozenset(),
               prefix: str = "") -> None:
    """Warn each of ``caught`` again, for the caller's filters to show or record, but a
    :class:`RepeatedKeysWarning` about a column in ``said`` (one that the caller has said already). ``prefix``:
    words before each message (the part of the input it is about), the warning's class and attributes kept."""
    for w in caught:
        if repeated_column(w) not in said:
            message = w.message
            if prefix:
                message = copy.copy(message) if isinstance(message, Warning) else Warning(str(message))
                message.args = (f"{prefix}{w.message}",)
            warnings.warn_explicit(message, w.category, w.filename, w.lineno)


#: the name of a warning class before its message in a captured warning's text (``DataQualityWarning: ...``):
#: code, not words for users
WARNING_CLASS = re.compile(r"(?:[A-Z][a-z0-9]*)+Warning")


def without_category(text: str) -> str:
    """A captured warning's text ``"Category: message"`` as a user reads it: the message, without the class name
    (any other text is itself)."""
    category, sep, message = text.partition(": ")
    return message if sep and WARNING_CLASS.fullmatch(category) else text


def first_repeats(caught: list[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    """``caught`` with the first :class:`RepeatedKeysWarning` of each column only: a procedure that reads a column
    more than once (the decision, then the fit) says it once."""
    first: dict[str, warnings.WarningMessage] = {}
    for w in caught:
        column = repeated_column(w)
        if column is not None:
            first.setdefault(column, w)
    return [w for w in caught if (column := repeated_column(w)) is None or first[column] is w]


class PooledPairsWarning(DataQualityWarning):
    """A group (``by='tgt_lang'`` over several source languages) holds the rows of several language pairs, whose test
    sets differ (:func:`xleval.table.pooled_pairs_note`)."""


class ScaleRangeWarning(DataQualityWarning):
    """Calibrated system means lie outside the range the human labels look like they come from (0-100, 0-1,
    ...), and no range bounds them; the message names the ``human_range=`` that would."""
