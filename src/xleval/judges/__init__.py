"""LLM judges in the analyses: how much two or more judges (or a judge and a metric) agree, language by language.

Scoring with a judge is :class:`Judge` (``xleval score -m judge:SPEC``, or ``get_metric("judge:SPEC")``); judge
scores produced elsewhere are read by :func:`read_judge_scores` (``xleval ingest judge``). Calibrating a judge per
language is the ordinary calibration of a score column: nothing here is judge-specific but the question.
See docs/judges.md.
"""
from xleval.metrics._judge import JUDGE_PROMPTS, Judge, JudgePlan, JudgeResult, judge_tables
from xleval.metrics._judge_options import JudgeLocal, JudgeServer

from ._agree import JudgeAgreement, judge_agreement
from ._columns import is_judge_signature, judge_columns
from ._ingest import JudgeScores, read_judge_scores
from ._render import agreement_findings, agreement_rows, agreement_text, agreement_tidy

__all__ = ["Judge", "JudgeLocal", "JudgeServer", "JudgeResult", "JudgePlan", "JUDGE_PROMPTS", "judge_tables",
           "JudgeScores", "read_judge_scores", "JudgeAgreement", "judge_agreement", "judge_columns",
           "is_judge_signature", "agreement_rows", "agreement_findings", "agreement_text", "agreement_tidy"]
