"""LLM judges in the analyses: how much two or more judges (or a judge and a metric) agree, language by language.

Scoring with a judge is :class:`xleval.metrics.Judge` (``xleval score -m judge:SPEC``); judge scores produced
elsewhere are read by ``xleval ingest judge`` (:func:`xleval.io.read_judge_scores`). Calibrating a judge per
language is the ordinary calibration of a score column: nothing here is judge-specific but the question.
See docs/judges.md.
"""
from ._agree import JudgeAgreement, judge_agreement

__all__ = ["JudgeAgreement", "judge_agreement"]
