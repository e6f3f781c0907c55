"""How the leaderboard reads its score column: one value (:class:`ScoreReading`) instead of ``metric``,
``unit``, ``higher_is_better``, ``signature`` and ``force`` (shared by :func:`xleval.leaderboard.leaderboard`
and :func:`xleval.report.analyze_mt`)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

__all__ = ["ScoreReading", "DEFAULT_READING"]


@dataclass(frozen=True)
class ScoreReading:
    """``metric``: the metric whose statistics sum into corpus scores (``bleu``, ``chrf``, ``ter``; None:
    the mean of the rows); ``unit``: the column whose values are resampled together (default ``doc_id``, else
    ``seg_id``, else rows); ``higher_is_better`` (None: the signature's ``dir:``, then the registry name);
    ``signature``: the score's signature (None: the table's), checked against a saved model's; ``force``:
    accept a model fitted on a score of another signature. ``with_(...)`` changes some settings."""

    metric: str | None = None
    unit: str | None = None
    higher_is_better: bool | None = None
    signature: str | None = None
    force: bool = False

    def with_(self, **changes: Any) -> ScoreReading:
        """This reading with some settings changed."""
        return replace(self, **changes)


#: the score read as the table describes it
DEFAULT_READING = ScoreReading()
