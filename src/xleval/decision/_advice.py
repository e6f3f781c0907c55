"""What advice asks the user to do, as facts, and how it is written out.

Advice such as "label 100 rows per group" is an :class:`AdviceAction` (no command line). A caller
that knows how the user works writes each action in the user's words through an
:class:`AdviceRenderer` (the command line passes one that writes complete ``xleval`` commands for the
table it read, ``xleval.cli._advice.CommandContext``). Without one, :class:`PythonAdvice` writes the
library call that does it: a Python user is never told about command-line flags.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._base.result import Result

__all__ = ["AdviceAction", "AdviceRenderer", "PythonAdvice"]


@dataclass(frozen=True, eq=False)
class AdviceAction(Result):
    """One thing the advice asks the user to do, as facts (no command line): ``select`` ``budget`` rows
    per group to label (``skip`` rows that already have a ``human`` score), ``plan`` ``budget`` labels in all
    (those in ``human`` count toward it) for anchored calibration, ``relabel`` the ``budget``
    rows that carry a ``human`` score standardised within groups with raw-scale scores (into the column
    ``label_column``: those rows, not others, are the ones to re-judge or fetch raw scores for), or
    ``fit`` the anchored calibrator of ``score`` onto the ``human`` column (on the ``human_scale`` the user named:
    the fit then takes its direction and bounds, as the advice's evidence did). An :class:`AdviceRenderer`
    writes it out."""

    action: str
    score: str
    by: tuple[str, ...]
    system: str | None = "system"
    human: str | None = None
    budget: int | None = None
    label_column: str | None = None
    human_scale: str | None = None


@runtime_checkable
class AdviceRenderer(Protocol):
    """Writes an :class:`AdviceAction` as the instruction that does it (a command, a library call)."""

    def render(self, action: AdviceAction) -> str: ...


class PythonAdvice:
    """The default renderer: the ``xleval`` library call that does the action, on ``data``."""

    def render(self, action: AdviceAction) -> str:
        by = action.by[0] if len(action.by) == 1 else list(action.by)
        if action.action == "relabel":
            return (f"raw-scale human scores (raw DA, MQM) in a new column {action.label_column!r} for the "
                    f"{int(action.budget or 0)} rows data[data[{action.human!r}].notna()]")
        if action.action == "select":
            skip = f", skip_labelled={action.human!r}" if action.human else ""
            return (f"xleval.calibration.select_for_annotation(data, by={by!r}, budget={int(action.budget or 1)}, "
                    f"score={action.score!r}, system={action.system!r}{skip})")
        scale = f", human_scale={action.human_scale!r}" if action.human_scale else ""
        if action.action == "plan":
            human = f", human={action.human!r}" if action.human else ""
            return (f"xleval.calibration.plan_labels(data, by={by!r}, budget={int(action.budget or 1)}, "
                    f"score={action.score!r}{human}, system={action.system!r}{scale})")
        return (f"xleval.decision.fit_calibration(data, 'anchored', score={action.score!r}, by={by!r}, "
                f"human={action.human or 'human'!r}, system={action.system!r}{scale})")
