"""The end-to-end demo: simulate an evaluation with a known truth, calibrate, compare rankings.

Steps (each a function, so later stages — diagnostics, the HTML report — plug in here):
1. :func:`xleval.synthetic.simulate_mt_evaluation` draws calibration and evaluation splits;
2. an :class:`~xleval.calibration.LGN` is fitted by ``tgt_lang`` on the calibration split and
   applied to the evaluation split;
3. every (system, language) gets its mean raw and calibrated score; both are compared with the
   true quality across languages (Kendall tau-b and the share of cross-language pairs ordered
   as the truth orders them);
4. :func:`xleval.decision.diagnose` runs on the evaluation split (bias before/after, agreement
   with the simulated human scores, validity check) and is kept in ``DemoResult.diagnosis``;
5. the report (``report.html``) leads with the ranking against the truth, then the verdict
   (recommended calibration and why, cross-validated agreement) and the leaderboard; its summary
   and leaderboard rows are kept in ``DemoResult.report_summary`` / ``DemoResult.leaderboard``.
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _sps

from ._base.jsonable import to_jsonable
from ._base.result import Result
from .calibration import LGN, CalibrationSummary, calibration_summary
from .decision import DEFAULT_PROCEDURE, Diagnosis, diagnose
from .io import write_table, write_text
from .synthetic import SyntheticEval, simulate_mt_evaluation

__all__ = ["DemoResult", "run_demo", "ranking_agreement"]


@dataclass(frozen=True, eq=False)
class DemoResult(Result):
    simulation: SyntheticEval
    model: LGN
    calibrated: pd.DataFrame
    systems: pd.DataFrame
    agreement: dict
    verification: CalibrationSummary
    files: dict = field(default_factory=dict)
    diagnosis: Diagnosis | None = None  # xleval.decision.diagnose of the evaluation split (raw vs metric_lgn)
    report_summary: dict | None = None  # the report's verdict (recommendation, reasons, agreement)
    board: Any = None  # the report's Leaderboard (xleval.leaderboard), best first

    @property
    def leaderboard(self) -> tuple[dict, ...] | None:
        return None if self.board is None else tuple(self.board.to_dict()["rows"])

    def to_dict(self, *, include_distribution: bool = False) -> dict:
        # what the demo reports (the model and the simulated tables are left out), not every field
        out = {"random_state": self.simulation.seed, "agreement": self.agreement,
               "verification": self.verification.to_dict(), "files": self.files,
               "systems": self.systems.to_dict(orient="records")}
        if self.report_summary is not None:
            out["summary"] = self.report_summary
        if self.leaderboard is not None:
            out["leaderboard"] = list(self.leaderboard)
        if self.diagnosis is not None:
            out["diagnosis"] = self.diagnosis.to_dict()
        return out


def ranking_agreement(estimate: np.ndarray, truth: np.ndarray, groups: np.ndarray) -> dict:
    """Kendall tau-b with the truth over all (system, language) cells, and the share of cross-group
    pairs (cells of different languages) that ``estimate`` orders as ``truth`` does."""
    tau = _sps.kendalltau(estimate, truth, variant="b")
    i, j = np.triu_indices(len(truth), k=1)
    cross = groups[i] != groups[j]
    agree = np.sign(estimate[i] - estimate[j]) == np.sign(truth[i] - truth[j])
    return {"kendall_tau_b": float(tau.statistic), "cross_group_pairwise_accuracy": float(agree[cross].mean()),
            "n_cells": len(truth), "n_cross_pairs": int(cross.sum())}


def run_demo(out_dir: str | Path | None = None, *, seed: int = 0,
             target: tuple[float, float] = (80.0, 10.0)) -> DemoResult:
    sim = simulate_mt_evaluation(seed=seed)
    cal = sim.data[sim.data["split"] == "calibration"]
    ev = sim.data[sim.data["split"] == "evaluation"].reset_index(drop=True)
    model = LGN(by="tgt_lang", target=target, score="metric").fit(cal, signature="synthetic-metric")
    ev = ev.assign(metric_lgn=model.transform(ev, signature="synthetic-metric"), calibration_source=model.sources(ev))
    cells = (ev.groupby(["system", "tgt_lang"], sort=True)[["metric", "metric_lgn", "human"]].mean()
             .reset_index().merge(sim.truth, on=["system", "tgt_lang"]))
    groups = cells["tgt_lang"].to_numpy()
    truth = cells["true_quality"].to_numpy()
    agreement = {
        "raw": ranking_agreement(cells["metric"].to_numpy(), truth, groups),
        "calibrated": ranking_agreement(cells["metric_lgn"].to_numpy(), truth, groups),
        "human": ranking_agreement(cells["human"].to_numpy(), truth, groups),
    }
    verification = calibration_summary(ev["metric"], ev["metric_lgn"], ev["tgt_lang"])
    diagnosis = diagnose(ev, "metric", "tgt_lang", human="human", calibrated="metric_lgn",
                         procedure=DEFAULT_PROCEDURE.with_(random_state=seed))
    files: dict[str, str] = {}
    if out_dir is not None:
        out = Path(out_dir)
        files = {"data": str(out / "data.parquet"), "model": str(out / "lgn.json"),
                 "calibrated": str(out / "calibrated.parquet"), "summary": str(out / "summary.json"),
                 "report": str(out / "report.html")}
    result = DemoResult(sim, model, ev, cells, agreement, verification, files, diagnosis)
    if out_dir is not None:
        analysis = demo_analysis(result)
        report = demo_report(result, analysis)
        result = replace(result, report_summary=report.summary, board=analysis.board)
        _write_files(result, report, Path(out_dir))
    return result


def _write_files(result: DemoResult, report, out: Path) -> None:
    """The demo's five files, written together once everything is computed: a run stopped before the end
    (Ctrl-C, SIGTERM, a full disk) writes none of them, and removes the folder if it made it (empty)."""
    from .io._write import outputs_together
    from .report import write_report

    made = [d for d in (out, *out.parents) if not d.exists()]  # what mkdir(parents=True) creates, deepest first
    out.mkdir(parents=True, exist_ok=True)
    files = result.files
    try:
        with outputs_together():
            write_table(result.simulation.data, files["data"])
            result.model.save(files["model"])
            write_table(result.calibrated, files["calibrated"])
            write_text(files["summary"], json.dumps(to_jsonable(result.to_dict()), indent=2) + "\n")
            write_report(report, files["report"])
    except BaseException:
        for folder in made:
            with contextlib.suppress(OSError):  # a folder that holds something (another writer's) is left
                folder.rmdir()
        raise


def key_result(result: DemoResult) -> str:
    """The demo's answer in one sentence: cross-language ranking against the known truth, raw vs calibrated."""
    a = result.agreement
    return (f"Key result: against the simulation's known true quality, raw metric scores order "
            f"{a['raw']['cross_group_pairwise_accuracy']:.3f} of the pairs of (system, language) cells from different "
            f"languages correctly; LGN-calibrated scores (LGN fitted on a separate calibration split) "
            f"{a['calibrated']['cross_group_pairwise_accuracy']:.3f}; the simulated human scores "
            f"{a['human']['cross_group_pairwise_accuracy']:.3f}.")


def demo_analysis(result: DemoResult):
    """:func:`xleval.report.analyze_mt` of the evaluation split with the LGN fitted on the calibration split,
    grouped by ``tgt_lang`` as that LGN is (the table also has ``lp``, the default grouping)."""
    from .leaderboard import ScoreReading
    from .report import analyze_mt
    from .stats import Resampling

    return analyze_mt(result.calibrated, "metric", by="tgt_lang", human="human", model=result.model,
                      reading=ScoreReading(signature=result.model.signature_),
                      resampling=Resampling(random_state=result.simulation.seed))


def demo_report(result: DemoResult, analysis=None):
    """The report of the evaluation split calibrated by the LGN fitted on the calibration split, led by
    :func:`key_result`, with the planted bias and the ranking against the truth as a section."""
    from .report import build_mt_report, generic_section

    sim = result.simulation
    truth = generic_section("Known truth of the simulation", id="truth", paragraphs=[
        "The demo plants a per-language offset and scale in the metric (metric = 50 + offset + scale * quality + "
        "noise); every language has the same true quality distribution, the assumption LGN needs."], tables=[
        ("(system, language) cells ranked against the true quality",
         [{"score": k, **v} for k, v in result.agreement.items()]),
        ("Planted metric bias",
         [{"tgt_lang": k, "offset": sim.offsets[k], "scale": sim.scales[k]} for k in sim.offsets])])
    analysis = analysis if analysis is not None else demo_analysis(result)
    return build_mt_report(analysis, title="xleval demo report", extra_sections=(truth,),
                           headline=(key_result(result),))


def write_demo_report(result: DemoResult, path: str | Path) -> None:
    """Write :func:`demo_report` to ``path`` (HTML, or JSON for a .json path)."""
    from .report import write_report

    write_report(demo_report(result), path)
