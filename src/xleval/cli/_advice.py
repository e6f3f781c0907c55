"""Complete command lines for advice: what the library cannot know about the user's invocation.

The library's decisions carry what they advise as facts (:class:`xleval.decision.AdviceAction`:
label K rows per group, fit the anchored calibrator); the command line writes each as the ``xleval``
command that does it. Only the command line knows the table's path and the ``--col`` mapping it was
read with: a :class:`CommandContext` carries those two, so the printed command runs as written;
without a path the table shows as the placeholder ``TABLE``. Every value that comes from the data or
the user (paths, column names) is shell-quoted.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._base.result import Result
from .._base.terminal import shell_word
from ..decision import AdviceAction

__all__ = ["CommandContext", "SELECT_OUTPUT", "FIT_OUTPUT"]

#: output files the suggested commands write (in the current directory)
SELECT_OUTPUT = "to_label.tsv"
FIT_OUTPUT = "calibrator.json"


@dataclass(frozen=True, eq=False)
class CommandContext(Result):
    """``table``: the path the data came from (None, or ``-`` for stdin: the placeholder ``TABLE``);
    ``columns``: the ``--col CANONICAL=COLUMN`` options it was read with, as given."""

    table: str | None = None
    columns: tuple[str, ...] = ()

    @classmethod
    def from_cli(cls, table: str | None, col: Sequence[str] = ()) -> CommandContext:
        """From a command's INPUT argument and its ``--col`` options (stdin, ``-``, is no path to repeat)."""
        return cls(None if table in (None, "-") else str(table), tuple(col))

    def command(self, *words: str) -> str:
        """``xleval WORDS...`` with every word shell-quoted (the table placeholder stays bare)."""
        table = "TABLE" if self.table is None else shell_word(self.table)
        cols = [f"--col {shell_word(c)}" for c in self.columns]
        quoted = [table if w == _TABLE else shell_word(w) for w in words]
        return " ".join(["xleval", *quoted, *cols])

    def render(self, action: AdviceAction) -> str:
        """The command line of one advised action."""
        by = action.by[0] if len(action.by) == 1 else list(action.by)
        if action.action == "relabel":  # no command selects them: the rows are named by their column
            table = "TABLE" if self.table is None else shell_word(self.table)
            return (f"raw-scale human scores (raw DA, MQM) in a new column {shell_word(action.label_column or 'raw')} "
                    f"for the {int(action.budget or 0)} rows of {table} where {shell_word(action.human or '')} has a "
                    "value")
        if action.action == "plan":
            return self.plan(action.score, by, int(action.budget or 1), human=action.human, system=action.system,
                             human_scale=action.human_scale)
        if action.action == "select":
            return self.select(action.score, by, int(action.budget or 1), system=action.system,
                               skip_labelled=action.human)
        return self.fit_anchored(action.score, by, action.human or "human", system=action.system,
                                 human_scale=action.human_scale)

    def select(self, score: str, by: str | Sequence[str], budget: int, *, system: str | None = "system",
               skip_labelled: str | None = None) -> str:
        """``xleval calibrate select``: ``budget`` rows per group to send to annotators."""
        words = ["calibrate", "select", _TABLE, "--score", score, "--by", _by(by), "--budget", str(budget)]
        words += _system(system) + (["--skip-labelled", skip_labelled] if skip_labelled else [])
        return self.command(*words, "-o", SELECT_OUTPUT)

    def plan(self, score: str, by: str | Sequence[str], budget: int, *, human: str | None = None,
             system: str | None = "system", human_scale: str | None = None) -> str:
        """``xleval calibrate plan``: ``budget`` labels in all (those in ``human`` count toward it), how many more
        per group and which rows (``human_scale``: the scale's name the user gave, so the plan's map of the
        labels there are takes its direction)."""
        words = ["calibrate", "plan", _TABLE, "--budget", str(budget), "--score", score, "--by", _by(by)]
        words += (["--human", human] if human else []) + _system(system)
        words += ["--human-scale", human_scale] if human_scale else []
        return self.command(*words)

    def fit_anchored(self, score: str, by: str | Sequence[str], human: str, *, system: str | None = "system",
                     human_scale: str | None = None) -> str:
        """``xleval calibrate fit --method anchored``: map ``score`` onto the scale of ``human`` (``human_scale``:
        the scale's name the user gave, kept, so the fit takes its direction and bounds)."""
        words = ["calibrate", "fit", _TABLE, "--score", score, "--by", _by(by), "--method", "anchored",
                 "--human", human, *_system(system)]
        words += ["--human-scale", human_scale] if human_scale else []
        return self.command(*words, "-o", FIT_OUTPUT)


# a marker word: where the table goes (the placeholder is not quoted, a path is)
_TABLE = "\0TABLE"


def _by(by: str | Sequence[str]) -> str:
    return by if isinstance(by, str) else ",".join(by)


def _system(system: str | None) -> list[str]:
    return ["--system", system] if system and system != "system" else []
