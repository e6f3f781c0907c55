"""TER through sacrebleu's own implementation (no vectorised kernel: its shift search is sequential)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ._sacrebleu_base import SacrebleuMetric, _check_nrefs_option, _sacrebleu_version

__all__ = ["TER"]


class TER(SacrebleuMetric):
    """Translation Edit Rate (sacrebleu ``TER``); lower is better. Statistics: ``[edits, ref_length]``."""

    name: ClassVar[str] = "ter"
    higher_is_better: ClassVar[bool] = False
    range: ClassVar[tuple[float, float]] = (0.0, float("inf"))
    has_stats: ClassVar[bool] = True
    _SIGNATURE_ABBR: ClassVar[dict[str, str]] = {**SacrebleuMetric._SIGNATURE_ABBR, "tok": "t"}
    fills_missing_refs: ClassVar[bool] = False  # sacrebleu averages the reference lengths: None is dropped there

    def __init__(
        self,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        references: Sequence[Sequence[str | None]] | None = None,
        *,
        nrefs: int | str | None = None,
    ):
        _check_nrefs_option(nrefs)
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)
        self.nrefs = nrefs
        self._set_references(references)

    def _score_details(self, stats: np.ndarray) -> dict[str, Any]:
        return {"name": "TER", "num_edits": int(stats[0]), "ref_length": float(stats[1])}

    def _sacrebleu(self):
        from sacrebleu.metrics import TER as SacreTER

        return SacreTER(
            normalized=self.normalized,
            no_punct=self.no_punct,
            asian_support=self.asian_support,
            case_sensitive=self.case_sensitive,
        )

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "nrefs": self.signature_nrefs,
            "case": "mixed" if self.case_sensitive else "lc",
            "tok": self._sacrebleu().tokenizer.signature(),
            "norm": self.normalized,
            "punct": not self.no_punct,
            "asian": self.asian_support,
            "version": _sacrebleu_version(),
        }

    def _sentence_stats(self, hyps, refs, srcs) -> np.ndarray:
        if not hyps:
            return np.zeros((0, 2))
        stats = self._sacrebleu()._extract_corpus_statistics(hyps, refs)
        return np.asarray(stats, dtype=np.float64).reshape(len(hyps), 2)

    def _sentence_scores(self, hyps, refs, srcs) -> np.ndarray:
        return self._score_from_stats(self._sentence_stats(hyps, refs, srcs))

    def _score_from_stats(self, stats: np.ndarray) -> np.ndarray:
        edits, ref_len = stats[:, 0].astype(np.float64), stats[:, 1].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(ref_len > 0, edits / np.where(ref_len > 0, ref_len, 1), np.where(edits > 0, 1.0, 0.0))
        return 100 * ratio
