"""The decision's sentences that read its evidence: the reasons in order (bias, LGN's assumption, the method
and why, the warning) and the budget curve as the report draws it. The decision object reads them here
(:attr:`~xleval.decision.CalibrationDecision.reasons`, ``budget_curve``)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..diagnostics import BiasDiagnosis, ValidityVerdict
from ._compare import CalibrationEvaluation

__all__ = ["budget_curve", "decision_reasons", "METHOD_LONG_NAMES", "MEASURED_BASES"]

#: what each method is called where the answer names it
METHOD_LONG_NAMES = {"none": "no calibration (raw scores)", "lgn": "LGN", "anchored": "anchored calibration"}

#: the bases of a decision read from the cross-validated comparison (``levels``: the raw scores led, but the
#: groups' score levels differ, so the combined estimator was applied; ``assumption``: LGN led, but the labels
#: do not support its equal-quality assumption, so anchored was applied)
MEASURED_BASES = ("evidence", "tie", "levels", "assumption")


def budget_curve(evaluation: CalibrationEvaluation | None) -> pd.DataFrame | None:
    """The budget curve as the report draws it: accuracy against labels per group, per selection."""
    if evaluation is None:
        return None
    curve = evaluation.curve()
    if curve.empty:
        return None
    return pd.DataFrame({"labels_per_group": curve["budget"].astype(int),
                         "method": "anchored, " + curve["selection"].astype(str) + " selection",
                         "accuracy": curve["accuracy"], "ci_low": curve["ci_low"], "ci_high": curve["ci_high"]})


def decision_reasons(bias: BiasDiagnosis, verdict: ValidityVerdict | None, choice: Any) -> list[str]:
    """The decision's reasons, in order, as sentences for users."""
    reasons = [_bias_reason(bias, choice)]
    if verdict is not None:
        reasons.append(_ended(f"LGN's equal-quality assumption: {verdict.reason}"))
    name = METHOD_LONG_NAMES[choice.method]
    if choice.evaluation is not None:  # its paragraph states the method and why, with the numbers
        reasons.append(choice.paragraph)
    else:
        reasons.append(_ended(f"{name[0].upper()}{name[1:]} is recommended: {choice.reason}"))
    if choice.warning:
        reasons.append(choice.warning)
    return reasons


def _ended(sentence: str) -> str:
    """``sentence`` with its full stop: the reasons are joined into one paragraph."""
    return sentence if sentence.rstrip().endswith((".", "!", "?")) else sentence + "."


def _bias_reason(bias: BiasDiagnosis, choice: Any) -> str:
    d = bias.largest_smd
    pair = " and ".join(bias.largest_smd_pair) if bias.largest_smd_pair else "the groups"
    size = f"{d.estimate:.2f}" if d is not None and np.isfinite(d.estimate) else "an undefined number of"
    measured = choice.basis in MEASURED_BASES
    if bias.calibration_advised:
        text = (f"Scores differ between groups: {pair} differ by {size} pooled standard deviations (more than "
                f"{bias.threshold:g})")
        return text + (": the measured effect of calibration below decides." if measured else
                       ", so raw scores are not comparable across groups as they stand.")
    text = (f"Scores differ between groups by at most {size} pooled standard deviations ({pair}), below the "
            f"{bias.threshold:g} threshold")
    return text + (": the measured effect of calibration below decides." if measured else
                   ": raw scores are roughly comparable across groups.")
