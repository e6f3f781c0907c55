"""``xleval leaderboard TABLE --score COL --by lp``: every (group, system) with raw and calibrated
scores, intervals, ranks within the group and overall, and the human score."""
from __future__ import annotations

from pathlib import Path

import click

from ._common import (
    PROBABILITY,
    by_option,
    calibration_choice_options,
    check_outputs,
    col_option,
    console,
    emit_json,
    emit_text,
    emit_tsv,
    err_console,
    format_of_output,
    in_cli_words,
    keep_reference_copies_option,
    progress_bar,
    read_ranked_table,
    reference_copy_step,
)
from .calibrate_advice import human_scale_option
from .check_outputs import drop_invalid, exclude_invalid_option


@click.command("leaderboard")
@click.argument("table")
@click.option("--score", required=True,
              help="Score column (bleu/chrf/ter give corpus scores when the texts are there).")
@by_option("Group by lp, tgt_lang or a column name.")
@click.option("--human", help="Human score column: mean per system, and what anchored calibration maps to.")
@calibration_choice_options
@human_scale_option
@click.option("--unit", help="Column to resample in the bootstrap (default: doc_id, else seg_id, else rows).")
@click.option("--lower-is-better/--higher-is-better", "lower_is_better", default=None,
              help="The score's direction (default: from its signature, else its metric's name: TER and MetricX rank "
                   "low scores first).")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, help="Bootstrap resamples.")
@click.option("--level", type=PROBABILITY, default=0.95, help="Confidence level of the intervals.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Seed of the bootstrap and the cross-validation.")
@click.option("--force", is_flag=True, help="Use --model even if the score's metric signature differs.")
@click.option("--format", "fmt", type=click.Choice(["text", "tsv", "json", "html"]), default="text",
              help="text (a table), tsv and json (full precision, for machines) or html (a self-contained page); "
                   "default: as -o's extension says (.tsv, .json, .html), else text.")
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Write here instead of stdout (html needs it; '-' = stdout).")
@click.option("--pairs", "pairs_path", type=click.Path(path_type=Path), metavar="FILE",
              help="Also write every pair of (group, system) cells here (TSV, or JSON for a .json name): both cells, "
                   "the difference, its interval (diff_low, diff_high) from the same draws as the intervals and ranks, "
                   "and the verdict (A better, B better, cannot tell); a per-pair-of-groups summary goes to stderr.")
@exclude_invalid_option
@keep_reference_copies_option
@col_option
def leaderboard(table, score, by, system, human, method, model, metric, human_up, human_range, human_scale, unit,
                lower_is_better, n_resamples, level, seed, force, fmt, output, pairs_path, exclude_invalid,
                keep_reference_copies,
                col) -> None:
    """Rank every (group, system) of TABLE, with intervals, within groups and across groups.

    TABLE is a scored table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin). Raw scores are corpus
    scores from summed statistics (BLEU/chrF/TER with the texts) or means; calibrated scores make
    groups comparable; intervals resample documents (doc_id) or segments.
    """
    fmt = format_of_output(fmt, output)  # -o board.json writes JSON, not a text table
    from ..calibration import HumanScale
    from ..decision import Caller
    from ..exceptions import InputError
    from ..leaderboard import ScoreReading
    from ..leaderboard import leaderboard as build
    from ..stats import Resampling
    from .calibrate_common import parse_human_range, rerun_command, scale_notes, scale_range

    if fmt == "html" and output is None:
        raise InputError("--format html writes a file: give -o PAGE.html")
    check_outputs({"-o": "-" if output is None else output, "--pairs": pairs_path}, inputs=[table, model],
                  stdout=["-o"])
    data, calibrator, commands = read_ranked_table(table, score=score, human=human, system=system, by=by,
                                                   model=model, col=col)
    excluded = None
    if exclude_invalid:  # before anything is scored or fitted: the board never sees the flagged rows
        kept, excluded = drop_invalid(data.frame, data.by, table)  # the grouping the board will use
        data = data.with_rows(kept.index)
    kept, copies = reference_copy_step(data.frame, data.by, system, table, keep_reference_copies, quiet=True)
    data = data.with_rows(kept.index)
    # a named scale with known bounds (ESA, raw DA 0-100) bounds the calibrated scores without a flag
    bounds = scale_range(data.frame, human, human_scale, human_range)
    with progress_bar(f"ranking {table}") as advance:
        board = build(data, system=system, model=calibrator, method=method,
                      reading=ScoreReading(metric=metric, unit=unit, force=force,
                                           higher_is_better=None if lower_is_better is None else not lower_is_better),
                      resampling=Resampling(n_resamples=n_resamples, level=level, random_state=seed),
                      human_scale=HumanScale(human_scale, human_up, parse_human_range(bounds[0])),
                      caller=Caller(where=table, commands=commands, progress=advance))
    import dataclasses

    scale = scale_notes(bounds, board.rows, data.frame, human, board.calibration["method"],
                        rerun_command(commands, "leaderboard", score, by, human, system, method,
                                      human_scale=human_scale),
                        human_scale=human_scale)
    said = tuple(n for n in (copies, excluded, *scale) if n)
    if said:  # the exclusion is said where the board's notes are: text, tsv's stderr, json, html
        board = dataclasses.replace(board, notes=(*said, *board.notes))
    board = in_cli_words(board)  # notes name the library's arguments: say them as flags
    # refused before anything is written
    pairs = _pairs_file(board, pairs_path, commands, human_scale) if pairs_path is not None else None
    if pairs_path is None:
        _write(board, fmt, output)
        return
    import sys

    from ..io._write import outputs_together

    # -o and --pairs land together or neither does (docs/errors.md); what was written is said once both are
    with err_console.capture() as said_after, outputs_together():
        _write(board, fmt, output)
        _write_pairs(board, pairs_path, pairs)
    sys.stderr.write(said_after.get())


def _pairs_file(board, path: Path, commands, human_scale: str | None):
    """The pairs of cells, checked for the file ``path`` before the leaderboard is written (a name a TSV cannot
    hold is refused then, so a refused run writes neither file); their notes name ``commands``' plan command."""
    from ..io._write import format_rows

    pairs = board.pairs(advice=commands, human_scale=human_scale)
    if path.suffix.lower() != ".json":
        format_rows(pairs.table, "tsv", where=f"{path}: ", instead="use a .json name, which holds any name")
    return pairs


def _write_pairs(board, path: Path, pairs) -> None:
    """The pairs of cells as TSV (or JSON for a .json name), and their summary on stderr."""
    from .._base.terminal import data_text
    from ..calibration._pairs import share_words

    summary = pairs.summary()
    if path.suffix.lower() == ".json":
        emit_json({**pairs.to_dict(), "summary": summary}, path)
    else:
        emit_tsv(pairs.table, path, float_format=lambda v: repr(float(v)))
    counts = {k: share_words(*v) for k, v in pairs.counts().items()}
    err_console.print(data_text(f"wrote {len(pairs.table)} pairs of cells to {path}: a verdict for {counts['across']} "
                                f"of the pairs across {board.by} and {counts['within']} within (the rest: cannot "
                                f"tell at {board.level:.0%})"), soft_wrap=True)
    for note in pairs.notes:
        err_console.print(data_text("note: " + note), soft_wrap=True)
    for line in summary:
        err_console.print(data_text(line), soft_wrap=True)


def _write(board, fmt: str, output: Path | None) -> None:
    if fmt == "html" and output is not None:  # the command refused html without -o
        from ..report import leaderboard_report, write_report

        write_report(leaderboard_report(board), output, fmt="html")
        err_console.print(f"wrote leaderboard page ({len(board.rows)} rows) to {_shown(output)}")
        return
    if fmt == "text" and output is None:
        _print(board)
        return
    if fmt == "json":
        emit_json(board.to_dict(), output)
    elif fmt == "tsv":
        emit_tsv(board.rows, output, float_format=lambda v: repr(float(v)))
        _say_notes(board)  # a TSV holds rows only: its notes (repeated keys, the scale) go to stderr
    else:
        from ..report import leaderboard_text

        emit_text(leaderboard_text(board) + "\n", output)
    if output is not None and str(output) != "-":
        err_console.print(f"wrote {fmt} leaderboard ({len(board.rows)} rows) to {output}")


def _say_notes(board) -> None:
    from .._base.terminal import data_text
    from ..report._leaderboard import note_words

    for note in note_words(board):
        err_console.print(data_text("note: " + note), soft_wrap=True)


def _shown(output: Path) -> str:
    return "standard output" if str(output) == "-" else str(output)


def _print(board) -> None:
    print_board(board)


def print_board(board, *, top: int | None = None, notes: bool = True) -> None:
    """The leaderboard as a terminal table (the first ``top`` rows), then its notes."""
    from rich.cells import cell_len
    from rich.table import Table

    from ..report import leaderboard_lines

    header, rows, lines = leaderboard_lines(board)
    shown = rows if top is None else rows[:top]
    title = f"leaderboard: {board.score} by {board.by}"
    if len(shown) < len(rows):
        title += f" (top {len(shown)} of {len(rows)})"
    keep = _columns_that_fit(header, shown, board, console.width)
    table = Table(title=title, show_lines=False)
    for i in keep:
        if i in (2, 3):  # names: wrapped (folded) when nothing else can give way, never cut to '…'
            table.add_column(header[i], justify="left", overflow="fold")
        else:  # numbers and intervals keep their width
            widest = max([cell_len(header[i]), *(cell_len(r[i]) for r in shown)])
            table.add_column(header[i], justify="right", no_wrap=True, min_width=widest)
    for row in shown:
        table.add_row(*(row[i] for i in keep))
    console.print(table)
    left_out = [header[i].strip() for i in range(len(header)) if i not in keep]
    if left_out:
        lines = [f"left out to fit the terminal's {console.width} columns: {', '.join(left_out)} (--format tsv "
                 "shows every column)", *lines]
    for line in lines if notes else lines[:1 + bool(left_out)]:
        console.print(line, soft_wrap=True)  # a note may name a command: no hard line break inside it


def _columns_that_fit(header: list[str], rows: list[list[str]], board, width: int) -> list[int]:
    """The columns to print in ``width`` characters: all when they fit, else the least needed ones
    left out first (segments, raw score, rank within the group and its interval), never a name, a
    calibrated score, its interval or the human score cut to '…'."""
    from rich.cells import cell_len

    # display widths (a CJK character takes two cells), plus padding and border
    natural = [max([cell_len(h), *(cell_len(r[i]) for r in rows)]) + 3 for i, h in enumerate(header)]
    keep = list(range(len(header)))
    by_name = {h: i for i, h in enumerate(header)}
    from .._base.terminal import visible_controls

    # the header is shown as the display rule shows it (leaderboard_lines): look its names up the same way
    for name in map(visible_controls, ("segments", f"raw {board.score}", "interval ", f"rank in {board.by}")):
        if sum(natural[i] for i in keep) + 1 <= width:
            break
        if name in by_name and by_name[name] in keep:
            keep.remove(by_name[name])
    return keep
