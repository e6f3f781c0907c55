"""The MT report: compute the results (calibration, its verification, diagnostics) with the
library, then arrange them into sections. :func:`analyze_mt` is the compute step,
:func:`build_mt_report` the layout step; :func:`mt_report` runs both."""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..calibration import LGN, CalibrationSummary, calibration_summary, prepare_frame
from ..exceptions import InputError
from ..diagnostics import Diagnosis, diagnose
from ._diagnostics import agreement_section, bias_section, validity_line, validity_section
from ._figures import figure_from_matplotlib
from ._model import Report, Section
from ._plots import group_means_figure, score_distributions_figure
from ._sections import generic_section, warnings_section

__all__ = ["DataSummary", "MTAnalysis", "summarize_data", "analyze_mt", "build_mt_report", "mt_report"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DataSummary:
    """Counts of the input: rows, groups, systems, missing scores and human-score coverage."""

    n_rows: int
    n_groups: int
    n_systems: int | None
    n_missing_score: int
    n_human: int | None
    groups: pd.DataFrame  # per group: n, n_systems, n_missing_score, n_human

    def to_dict(self) -> dict:
        return {"n_rows": self.n_rows, "n_groups": self.n_groups, "n_systems": self.n_systems,
                "n_missing_score": self.n_missing_score, "n_human": self.n_human,
                "groups": self.groups.to_dict(orient="records")}


def summarize_data(frame: pd.DataFrame, score: str, group: str, human: str | None = None) -> DataSummary:
    """Count rows per group; a score or human value counts as present when it is finite."""
    g = frame.groupby(group, sort=True)
    table = pd.DataFrame({"n": g.size()})
    if "system" in frame.columns:
        table["n_systems"] = g["system"].nunique()
    bad = ~np.isfinite(frame[score].to_numpy(dtype=float))
    table["n_missing_score"] = pd.Series(bad, index=frame.index).groupby(frame[group]).sum()
    if human is not None:
        table["n_human"] = pd.Series(np.isfinite(frame[human].to_numpy(dtype=float)), index=frame.index) \
            .groupby(frame[group]).sum()
    table = table.reset_index().rename(columns={group: "group"})
    n_systems = int(frame["system"].nunique()) if "system" in frame.columns else None
    n_human = int(table["n_human"].sum()) if human is not None else None
    return DataSummary(len(frame), len(table), n_systems, int(bad.sum()), n_human, table)


@dataclass(frozen=True)
class MTAnalysis:
    """Everything the MT report shows, computed: the calibrated frame, the calibrator, the
    before/after verification, the data summary, diagnostics results and the warnings raised."""

    frame: pd.DataFrame
    score: str
    calibrated: str
    group: str
    human: str | None
    model: LGN
    in_sample: bool
    summary: DataSummary
    verification: CalibrationSummary
    diagnosis: Diagnosis
    warnings: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)


def analyze_mt(df: pd.DataFrame, score: str, *, by: str = "tgt_lang", human: str | None = None,
               model: LGN | None = None, signature: str | None = None, force: bool = False,
               random_state: int = 0, n_resamples: int = 1000, where: str = "input") -> MTAnalysis:
    """Calibrate ``score`` (fit an LGN by ``by`` on ``df`` itself unless ``model`` is given) and
    collect every result the report shows: the calibration's verification and
    :func:`xleval.diagnostics.diagnose` of the raw and calibrated scores (agreement with ``human``
    when given; ``random_state`` and ``n_resamples`` drive its bootstrap). Warnings raised on the
    way (small groups, unseen groups, data quality) are recorded in the result, and logged,
    rather than re-emitted."""
    for col in [score] + ([human] if human else []):
        if col not in df.columns:
            raise InputError(f"{where}: no column {col!r}; columns are {', '.join(map(str, df.columns))}")
    if model is not None and model.score is not None and model.score != score:
        raise InputError(f"the calibrator was fitted on column {model.score!r}, not on {score!r}: its \"after\" would "
                         f"be {model.score!r} calibrated; report --score {model.score}, or fit a calibrator on {score!r}")
    by_cols = list(model.by_) if model is not None else [by]
    frame = prepare_frame(df, sorted(set(by_cols + [by])), where)
    if by not in frame.columns:
        raise InputError(f"{where}: cannot group by {by!r}: no such column (use tgt_lang, lp or a column name)")
    calibrated = f"{score}_lgn"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        in_sample = model is None
        if in_sample:
            model = LGN(by=by, score=score).fit(frame, signature=signature)
        frame = frame.assign(**{calibrated: model.transform(frame, signature=signature, force=force),
                                "calibration_source": model.sources(frame)})
        diagnosis = diagnose(frame, score, by, human=human, calibrated=calibrated, n_resamples=n_resamples,
                             random_state=random_state)
    messages = tuple(f"{w.category.__name__}: {w.message}" for w in caught)
    for message in messages:
        logger.warning(message)
    verification = calibration_summary(frame[score], frame[calibrated], frame[by])
    return MTAnalysis(frame, score, calibrated, by, human, model, in_sample,
                      summarize_data(frame, score, by, human), verification, diagnosis, messages,
                      (validity_line(diagnosis.validity),),
                      meta={"signature": model.signature_, "rows": len(frame), "random_state": random_state})


def build_mt_report(analysis: MTAnalysis, *, title: str | None = None, extra_sections: tuple[Section, ...] = (),
                    image_format: str = "svg") -> Report:
    """Arrange an :class:`MTAnalysis` into the report's sections (no statistic is computed here)."""
    a = analysis
    sections = [_data_section(a), _distribution_section(a, image_format),
                bias_section(a.diagnosis, (_means_figure(a, image_format),)), _calibration_section(a)]
    if a.diagnosis.agreement is not None:
        sections.append(agreement_section(a.diagnosis.agreement))
    sections.append(validity_section(a.diagnosis.validity))
    if a.diagnosis.validity_system is not None:
        sections.append(validity_section(a.diagnosis.validity_system, id="validity-system",
                                         title="Validity of LGN's equal-quality assumption, system level"))
    sections += list(extra_sections)
    sections.append(warnings_section(a.warnings, checks=a.checks))
    meta = (("score", a.score), ("grouped by", a.group), ("human", a.human or "none"),
            ("calibrator", "LGN fitted on this input (in-sample)" if a.in_sample else "LGN loaded from file"),
            ("signature", a.model.signature_ or "not recorded"))
    return Report(title or f"xleval report: {a.score} by {a.group}", tuple(sections), meta)


def mt_report(df: pd.DataFrame, score: str, **kwargs: Any) -> Report:
    """:func:`analyze_mt` then :func:`build_mt_report` (layout options: ``title``, ``image_format``)."""
    layout = {k: kwargs.pop(k) for k in ("title", "extra_sections", "image_format") if k in kwargs}
    return build_mt_report(analyze_mt(df, score, **kwargs), **layout)


def _data_section(a: MTAnalysis) -> Section:
    s = a.summary
    facts = {"rows": s.n_rows, f"groups ({a.group})": s.n_groups, "systems": s.n_systems,
             "rows with a missing/non-finite score": s.n_missing_score}
    if a.human is not None:
        facts[f"rows with a human score ({a.human})"] = s.n_human
    return generic_section("Data summary", facts={k: v for k, v in facts.items() if v is not None},
                           tables=[("Rows per group", s.groups)], id="data")


def _distribution_section(a: MTAnalysis, image_format: str) -> Section:
    groups = [str(g) for g in a.verification.groups["group"]]
    key = a.frame[a.group].astype(str)
    raw = [a.frame.loc[key == g, a.score].to_numpy(dtype=float) for g in groups]
    cal = [a.frame.loc[key == g, a.calibrated].to_numpy(dtype=float) for g in groups]
    fig = score_distributions_figure(groups, raw, cal, score=a.score, group_label=a.group,
                                     target_mean=float(a.model.target[0]))
    image = figure_from_matplotlib(fig, "Score distributions before and after calibration",
                                   "Left: raw scores; right: LGN-calibrated scores. If LGN removed the "
                                   "per-language location and scale bias, the right-hand boxes line up at the "
                                   "target mean with similar heights.", fmt=image_format)
    return generic_section("Distributions per group", figures=[image], id="distributions")


def _means_figure(a: MTAnalysis, image_format: str):
    v = a.verification
    fig = group_means_figure([str(g) for g in v.groups["group"]], v.groups["mean_before"], v.groups["mean_after"],
                             score=a.score, group_label=a.group, after_span=float(a.model.target[1]))
    return figure_from_matplotlib(fig, "Group means before and after calibration", fmt=image_format)


def _calibration_section(a: MTAnalysis) -> Section:
    params = a.model.get_params()
    pooled = getattr(a.model, "pooled_", (float("nan"), float("nan")))
    facts = {"method": params["method"], "by": params["by"], "target (mean, std)": list(params["target"]),
             "min_count": params["min_count"], "fallback": params["fallback"],
             "pooled center": pooled[0], "pooled scale": pooled[1],
             "sd of group means, raw": a.verification.sd_of_means_before,
             "sd of group means, calibrated": a.verification.sd_of_means_after}
    sources = a.frame["calibration_source"].value_counts().sort_index()
    note = ("Fitted on the same rows it calibrates: on this data the calibrated group means equal the target "
            "by construction, so the 'after' columns verify the arithmetic, not the benefit; judge the benefit "
            "by agreement with humans on held-out data." if a.in_sample else "Loaded from a file fitted on other data.")
    check = ("The spread of the group means (seed section 3.4) should drop to about 0 on the calibration set; "
             "on other data it measures what is left of the between-group difference.")
    return generic_section("Calibration parameters", paragraphs=[note, check], facts=facts, tables=[
        ("Per-group statistics and parameters", a.model.group_table()),
        ("Rows per calibration source", [{"source": k, "rows": int(v)} for k, v in sources.items()]),
        ("Per-group mean and population std (ddof=0) before and after", a.verification.groups),
    ], id="calibration")
