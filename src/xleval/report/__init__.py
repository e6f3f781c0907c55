"""The HTML report: result objects in, one self-contained HTML file (or JSON) out, answer first
(the verdict, the leaderboard, the checks that did not pass, then the detail).

Compute, then render: :func:`analyze_mt` computes (with the leaderboard, calibration and diagnostics
packages), :func:`build_mt_report` lays the results out as :class:`Section` objects, and
:func:`render_html` / :func:`render_json` / :func:`write_report` render them deterministically.
Other analyses plug in with :func:`result_section` (any result with ``to_dict()``) or
:func:`generic_section` (a title, tables as lists of dicts, matplotlib figures); :func:`section_for`
picks the section of a fairness, audit, intrinsic-confounds, meta-evaluation or output-checks result and
:func:`analysis_report` puts several together. The MT report takes the meta-evaluation and the output checks
as results too: ``mt_report(df, "chrf", human="human", meta=meta_evaluate(...), output_checks=check_outputs(...))``
gives the sections ``xleval report --meta A,B --output-checks`` writes, and ``judges=judge_agreement(...)`` (an
:class:`xleval.judges.JudgeAgreement`) the section "Judges per language" (``xleval report`` adds it when the table
has two or more judge columns).
"""
from ._analyses import analysis_report, audit_section, fairness_section, intrinsic_section, section_for
from ._figures import figure_from_matplotlib
from ._format import format_column, format_p, format_value
from ._judges import judges_section
from ._leaderboard import leaderboard_lines, leaderboard_report, leaderboard_text
from ._meta import calibrated_meta_section, meta_section
from ._model import Alert, Figure, Report, Section, Table
from ._mt import DataSummary, MTAnalysis, analyze_mt, build_mt_report, mt_report, summarize_data
from ._output_checks import output_checks_section
from ._render import check_format, render_html, render_json, write_report
from ._sections import generic_section, result_section, warnings_section

__all__ = [
    "Report", "Section", "Table", "Figure", "Alert", "figure_from_matplotlib",
    "leaderboard_report", "leaderboard_text", "leaderboard_lines", "format_column", "format_value", "format_p",
    "generic_section", "result_section", "warnings_section",
    "DataSummary", "MTAnalysis", "summarize_data", "analyze_mt", "build_mt_report", "mt_report",
    "render_html", "render_json", "write_report", "check_format",
    "fairness_section", "audit_section", "intrinsic_section", "section_for", "analysis_report",
    "meta_section", "calibrated_meta_section", "output_checks_section", "judges_section",
]
