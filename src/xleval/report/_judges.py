"""The report section "Judges per language" of a :class:`xleval.judges.JudgeAgreement` (``xleval report`` and
``xleval meta --report`` when the table has two or more judge columns, ``mt_report(..., judges=...)``): laid
out from the result object, nothing computed here."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ._model import Section, Table

if TYPE_CHECKING:
    from ..judges import JudgeAgreement

__all__ = ["judges_section"]

_MEANING = (
    "kendall: Kendall's tau-b of the segment scores; pearson: Pearson's r; kappa: Cohen's kappa with quadratic "
    "weights on binned scores; pairwise: the share of system pairs the two columns' system means order alike. "
    "The pooled row * compares (group, system) units: its pairwise is the agreement on a ranking across groups.",
    "Where two judges (or a judge and a metric) agree less, their scores are a weaker basis for comparing systems "
    "there, and a per-group difference of their means is a bias that a ranking across groups on either takes for "
    "quality. Calibrate the judge per group against human labels (anchored calibration; docs/judges.md gives the "
    "commands), then compare again.",
)


def judges_section(agreement: JudgeAgreement, *, image_format: str = "svg") -> Section:
    """The "Judges per language" section: the findings first (where each pair of columns agrees least and most,
    their mean offsets, the pooled system-order agreement), then one table per pair of columns, lowest Kendall
    first and the pooled row last."""
    from ..judges import agreement_findings, agreement_rows
    from ..judges._render import STATISTIC_COLUMNS

    rows = agreement_rows(agreement)
    tables = []
    for a, b in dict.fromkeys((r["a"], r["b"]) for r in rows):
        mine = [{agreement.by: r["group"], "n": r["n"], "systems": r["systems"],
                 **{s: r[s] for s in STATISTIC_COLUMNS}, f"mean {a}": r["mean_a"], f"mean {b}": r["mean_b"]}
                for r in rows if (r["a"], r["b"]) == (a, b)]
        tables.append(Table.from_records(f"{a} and {b} per {agreement.by} (lowest kendall first; * = pooled)", mine,
                                         sortable=True))
    bins = (f"{agreement.bins} quantile classes per column and group" if isinstance(agreement.bins, int)
            else f"fixed classes {list(agreement.bins)}")
    per = "language" if agreement.by in ("lp", "tgt_lang", "src_lang") else agreement.by
    return Section("judges-per-language", f"Judges per {per}",
                   lead=tuple(agreement_findings(agreement)), tables=tuple(tables),
                   paragraphs=(*_MEANING, f"kappa bins: {bins}."),
                   facts=(("columns", ", ".join(agreement.columns)), ("grouped by", agreement.by)))
