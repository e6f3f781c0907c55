"""The leaderboard on its own: as text lines (the CLI's table), as plain text, and as a small HTML
report (the verdict when the calibration was chosen automatically, the sortable leaderboard and the
checks that did not pass). Every number is formatted by :mod:`xleval.report._format`."""
from __future__ import annotations

import re

from ._figures import figure_from_matplotlib
from ._format import format_rows
from ._model import Report
from ._plots import label_means_words, system_scores_figure
from ._sections import warnings_section
from ._summary import check_alerts, leaderboard_display_rows, leaderboard_section, summary_section, verdict

__all__ = ["leaderboard_lines", "leaderboard_text", "leaderboard_report", "interval_lines"]


def interval_lines(board) -> list[str]:
    """What each interval of the board is an interval for (``Leaderboard.intervals``), one line each."""
    names = {"calibrated": "calibrated CI", "rank_overall": "overall rank interval",
             "rank_in_group": f"rank-in-{board.by} interval", "raw": "raw CI"}
    texts = getattr(board, "intervals", None) or {}
    lines = [f"{names.get(k, k)}: {v}" for k, v in texts.items() if k != "raw"]
    return lines + [f"intervals drawn with random_state {board.random_state}"]


def leaderboard_lines(board) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows of formatted cells, notes) of the leaderboard, best first. Names from the data (the
    group column, groups, systems) are shown as the display rule shows them
    (:func:`~xleval._base.terminal.visible_controls`) before any width is measured, so the text table
    stays aligned and two systems that differ by an invisible code point look different."""
    from .._base.terminal import visible_controls

    rows = leaderboard_display_rows(board, compact=True)
    header = list(rows[0]) if rows else []
    notes = [f"calibrated: {board.calibration['description']} ({board.calibration['scale']})",
             f"raw score: {board.aggregation}", *interval_lines(board)]
    if board.recommendation is not None:
        reasons = " ".join(board.recommendation.reasons)
        notes.append(f"calibration: {board.recommendation.name} (recommended): {reasons}")
    notes += note_words(board)
    cells = [[visible_controls(c, name=True) for c in row] for row in format_rows(header, rows)]
    return [visible_controls(h) for h in header], cells, [visible_controls(n) for n in notes]


def note_words(board) -> list[str]:
    """The board's notes as users read them: a captured warning's class name is code, not words (its message
    only)."""
    return [re.sub(r"^(?:[A-Z][a-z0-9]*)+Warning: ", "", n) for n in board.notes]


def leaderboard_text(board) -> str:
    """The leaderboard as an aligned plain-text table followed by its notes. Widths are display widths
    (terminal cells: a CJK character takes two, a combining mark none), so wide names stay aligned."""
    from rich.cells import cell_len

    header, rows, notes = leaderboard_lines(board)
    widths = [max(cell_len(h), *(cell_len(r[i]) for r in rows)) if rows else cell_len(h)
              for i, h in enumerate(header)]
    left = {2, 3}  # group and system names

    def pad(cell: str, width: int, left_aligned: bool) -> str:
        gap = " " * (width - cell_len(cell))
        return cell + gap if left_aligned else gap + cell

    def line(cells):
        return "  ".join(pad(c, w, i in left) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return "\n".join([line(header), *(line(r) for r in rows), "", *notes])


def leaderboard_report(board, *, title: str | None = None, image_format: str = "svg") -> Report:
    """A self-contained report of a leaderboard: the verdict (when ``board.recommendation`` is set),
    the sortable table with the system-score figure (when human scores exist) and the warnings."""
    figures = []
    if board.human is not None and board.rows["human"].notna().any():
        rows = board.rows
        few = label_means_words(rows["n_human"], rows["n_segments"])
        fig = system_scores_figure(rows["group"], rows["raw"], rows["calibrated"], rows["human"], score=board.score,
                                   human_label=board.human, calibrated_label=board.calibration["method"],
                                   group_label=board.by, of_labels=bool(few))
        figures.append(figure_from_matplotlib(fig, "System scores against human scores", few.strip(),
                                              fmt=image_format))
    sections = []
    summary = None
    if board.recommendation is not None:
        sections.append(summary_section(board.recommendation, board, score=board.score, by=board.by, figures=figures))
        figures = []
        summary = verdict(board.recommendation, board, score=board.score)
    sections.append(leaderboard_section(board, figures=figures))
    alerts = check_alerts(board.recommendation, calibration_method=board.calibration["method"], board=board) \
        if board.recommendation is not None else []
    messages = [n for n in board.notes if n.split(":")[0].endswith("Warning")]
    sections.append(warnings_section(messages, checks=alerts))
    return Report(title or f"xleval leaderboard: {board.score} by {board.by}", tuple(sections),
                  (("score", board.score), ("grouped by", board.by), ("random_state", board.random_state)),
                  summary, tuple(board.to_dict()["rows"]))
