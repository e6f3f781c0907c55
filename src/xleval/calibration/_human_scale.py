"""The human column's scale as the caller states it: one value (:class:`HumanScale`) instead of
``human_scale``, ``human_higher_is_better`` and ``human_range`` threaded through the leaderboard, the
report and the decision."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ._anchored import human_range_of

__all__ = ["HumanScale"]


@dataclass(frozen=True)
class HumanScale:
    """The scale of the human column: its ``name`` (``z``, ``raw``, or a name of
    :data:`~xleval.calibration.SCALES` such as ``mqm``, ``esa``, ``da``; None: the table's ``HUMAN_scale``
    column, else unknown), ``higher_is_better`` (None: from the name, else found in the labels) and ``range``
    (the bounds ``(LOW, HIGH)`` of the scale, for an anchored calibration). Checked when built; ``with_(...)``
    changes some settings; :meth:`of` also takes a bare name."""

    name: str | None = None
    higher_is_better: bool | None = None
    range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "range", human_range_of(self.range))

    @classmethod
    def of(cls, value: HumanScale | str | None) -> HumanScale:
        """``value`` as a HumanScale: itself, a bare scale name, or None (nothing stated)."""
        return value if isinstance(value, HumanScale) else cls(name=value)

    def with_(self, **changes: Any) -> HumanScale:
        """This scale with some settings changed."""
        return replace(self, **changes)
