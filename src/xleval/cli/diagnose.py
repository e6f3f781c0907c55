"""``xleval diagnose INPUT --score COL [--by lp|tgt_lang] [--human COL] [--calibrated COL]``."""
from __future__ import annotations

import warnings

import click

from .._base.numbers import format_text
from .._base.terminal import data_text
from ..calibration import HumanScale
from ..decision import Caller, Procedure
from ..decision import diagnose as run_diagnose
from ..diagnostics import DEFAULT_THRESHOLD, below_threshold
from ..exceptions import InputError
from ..io import parse_column_mapping
from ..table import EvalTable
from ._advice import CommandContext
from ._common import (
    by_option,
    by_role,
    check_named_column,
    col_option,
    console,
    emit_json,
    format_option,
    grouping,
    header_columns,
    print_table,
    progress_bar,
    say,
)
from .calibrate_advice import flags, human_scale_option
from .calibrate_common import DIRECTION_OPTION


@click.command("diagnose")
@click.argument("input")
@click.option("--score", required=True, help="Score column to diagnose.")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--human", help="Human score column: agreement and validity check.")
@click.option("--calibrated", help="Calibrated score column: before/after.")
@click.option("--system", default="system", help="System column for system-level agreement.")
@click.option("--threshold", type=float, default=DEFAULT_THRESHOLD,
              help="Pooled-sd difference that advises calibration.")
@click.option("--average-by", type=click.Choice(["none", "group", "item"]), default="none",
              help="How the all-pairs accuracy of the agreement with --human averages: none (pool every pair of "
                   "systems), group (the pairs of systems inside each group, mean over groups) or item (WMT23's "
                   "segment-level accuracy: the systems' outputs of each seg_id, mean over segments). Cross-group "
                   "accuracy compares pairs across groups, so averaging by group or item does not apply to it nor to "
                   "the --calibrated comparison made on it (that combination is refused).")
@click.option("--alternative", type=click.Choice(["two-sided", "greater", "less"]), default="two-sided",
              help="Sidedness of the permutation test of --calibrated against --score on cross-group accuracy: "
                   "two-sided, greater (WMT's one-sided test: the calibrated score orders more pairs as humans do) "
                   "or less.")
@click.option("--n-resamples", type=click.IntRange(2), default=1000, help="Bootstrap/permutation resamples.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Random state of resampling.")
@human_scale_option
@DIRECTION_OPTION
@col_option
@format_option
@click.option("--chunk-size", type=click.IntRange(1),
              help="Stream the input in batches of N rows and report the mergeable "
              "statistics only (per-group moments, sd of group means, eta squared, largest d); no medians, "
              "tests or CIs.")
@click.option("--backend", default="local", help="local or dask (with --chunk-size).")
@click.option("--workers", type=click.IntRange(1, 256), help="Dask: start a local cluster of N workers.")
@click.option("--scheduler", help="Dask: address of an existing scheduler.")
def diagnose(input, score, by, human, calibrated, system, threshold, average_by, alternative, n_resamples, seed,
             human_scale, human_up, col, fmt, chunk_size, backend, workers, scheduler) -> None:
    """Is SCORE biased by language? Did calibration remove it? Does it agree with humans across languages?

    INPUT is a table (.tsv/.csv/.jsonl/.parquet, '-' = TSV on stdin).
    """
    streamed = chunk_size is not None or backend != "local"
    _check_unused_options(streamed, human)
    if streamed:
        by_cols = grouping(by, header_columns(input, col) if by is None else ())  # before the rows are read
        return _streamed(input, score, by_cols, chunk_size, col, fmt, backend, workers, scheduler, human, calibrated)
    _check_agreement_options(average_by, alternative, human, calibrated)
    numeric = [c for c in (score, human, calibrated) if c]
    if len(set(numeric)) < len(numeric):
        raise InputError(f"--score, --human and --calibrated name the same column ({', '.join(numeric)}); each "
                         "compares one column with another: give different columns")
    columns = parse_column_mapping(col)
    # read once: the table checks its roles, naming the file (the library cannot know it), and carries the
    # signatures it was written with
    table = EvalTable.read(input, columns=columns, required=numeric, numeric=numeric, score=score, human=human,
                           by=by_role(by))
    check_named_column(table.frame, "--system", system, input)  # a --system typed but absent is not skipped unsaid
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress_bar(f"diagnosing {input}") as advance:
            procedure = Procedure(threshold=threshold, n_resamples=n_resamples, random_state=seed)
            result = run_diagnose(table, calibrated=calibrated, system=system, procedure=procedure,
                                  caller=Caller(commands=CommandContext.from_cli(input, col), progress=advance),
                                  average_by=average_by, alternative=alternative,
                                  human_scale=HumanScale(human_scale, human_up))
    notes = [str(w.message) for w in caught]
    if fmt == "json":
        decision = result.recommendation
        loud = [decision.warning] if decision is not None and decision.warning else []
        emit_json({**result.to_dict(), "warnings": loud + list(decision.notes if decision else ()) + notes})
        return
    _render(result, notes)


#: options of the in-memory diagnosis that the streamed one (--chunk-size, --backend dask) does not read
_IN_MEMORY_ONLY = ("threshold", "system", "average_by", "alternative", "n_resamples", "seed", "human_scale", "human_up")
#: options of the human column
_OF_HUMAN = ("human_scale", "human_up")


def _check_unused_options(streamed: bool, human: str | None) -> None:
    """An option typed on the command line that this run would not read is refused, not ignored: the streamed
    diagnosis reads none of the in-memory one's options, the dask options need the streamed run, and the human
    scale's options need --human."""
    ctx = click.get_current_context()
    given = {p.name: p for p in ctx.command.params
             if p.name and ctx.get_parameter_source(p.name) is click.core.ParameterSource.COMMANDLINE}

    def _flags(names) -> list[str]:  # as typed: --human-lower-is-better is the secondary flag of human_up
        return [given[n].opts[0] if n != "human_up" or ctx.params.get(n) else given[n].secondary_opts[0]
                for n in names]

    def said(names) -> str:
        return " and ".join(_flags(names)) + (" are" if len(names) > 1 else " is")

    if streamed:
        unread = [n for n in _IN_MEMORY_ONLY if n in given]
        if unread and not (human or ctx.params.get("calibrated")):  # those two are refused on their own, below
            raise InputError(f"{said(unread)} read only by the in-memory diagnosis (rule, tests, CIs, agreement, "
                             "validity); the streamed one (--chunk-size, --backend dask) reports the mergeable "
                             f"statistics only: drop --chunk-size and --backend, or drop {', '.join(_flags(unread))}")
        return
    dask = [n for n in ("workers", "scheduler") if n in given]
    if dask:
        raise InputError(f"{said(dask)} read only by the streamed diagnosis (dask): add --backend dask "
                         f"(and --chunk-size N), or drop {', '.join(_flags(dask))}")
    scale = [n for n in _OF_HUMAN if n in given]
    if scale and human is None:
        raise InputError(f"{said(scale)} read only with a human column: give --human COL, or drop "
                         f"{', '.join(_flags(scale))}")


def _check_agreement_options(average_by, alternative, human, calibrated) -> None:
    """Before reading the table: the options of the agreement need --human, and averaging cannot go
    with the --calibrated comparison (its cross-group pairs lie in no group or segment)."""
    given = [name for name, value, default in (("--average-by", average_by, "none"),
                                               ("--alternative", alternative, "two-sided")) if value != default]
    if given and human is None:
        raise InputError(f"{' and '.join(given)} set(s) how agreement with human scores is measured: give --human COL")
    if alternative != "two-sided" and calibrated is None:
        raise InputError("--alternative is the sidedness of the test of --calibrated against --score: give "
                         "--calibrated COL")
    if average_by != "none" and calibrated is not None:
        raise InputError(f"--average-by {average_by} does not apply with --calibrated: raw and calibrated scores are "
                         "compared on cross-group accuracy, whose pairs cross groups (and a per-group calibration "
                         f"cannot reorder pairs within a {average_by}); drop one of the two options")


def _streamed(input, score, by_cols, chunk_size, col, fmt, backend, workers, scheduler, human, calibrated) -> None:
    from ..scale import DEFAULT_CHUNK_SIZE, bias_chunked, resolve_backend, should_stream

    if human or calibrated:  # (and with them --average-by and --alternative)
        raise InputError("--human and --calibrated need all rows in memory (agreement, tests, CIs); drop --chunk-size, "
                         "or diagnose the calibrated column on its own with --score")
    should_stream(input, chunk_size, backend)  # validates --chunk-size
    result = bias_chunked(input, score, by_cols[0] if len(by_cols) == 1 else by_cols,
                          chunk_size=chunk_size or DEFAULT_CHUNK_SIZE, columns=parse_column_mapping(col),
                          backend=resolve_backend(backend, scheduler=scheduler, workers=workers))
    if fmt == "json":
        emit_json(result.to_dict())
        return
    print_table(result.groups.to_dict(orient="records"), title=f"{score} by {result.by} (streamed, {result.n} rows)")
    pair = " vs ".join(result.largest_smd_pair) if result.largest_smd_pair else "-"
    console.print(f"sd of group means {result.sd_of_means:.4g}; eta squared {result.eta_squared:.4g}; "
                  "largest standardised difference "
                  f"{result.largest_smd if result.largest_smd is not None else float('nan'):.3g} ({pair})")
    for note in result.notes:
        say("note", note)


# the all-pairs column says how it was averaged
_ALL_PAIRS = {"none": "all-pairs acc", "group": "within-group acc (mean over groups)",
              "item": "segment acc (mean over items)"}


def _render(result, notes: list[str]) -> None:
    if result.comparison is not None:
        print_table(result.comparison.table.to_dict(orient="records"),
                    title=f"{result.score} vs {result.calibrated} by {result.by}")
        print_table(result.comparison.summary.to_dict(orient="records"), title="bias before and after")
    else:
        print_table(result.bias.groups.to_dict(orient="records"), title=f"{result.score} by {result.by}")
    # lines that name commands are not wrapped: a hard line break inside a command breaks its paste
    console.print(data_text(flags(result.advice), style="bold"), soft_wrap=True)
    for reason in result.bias.reasons:
        console.print(f"  - {format_text(flags(reason))}")
    if result.agreement is not None:
        agreement = result.agreement
        all_pairs = _ALL_PAIRS[agreement.average_by]
        rows = [{"score": c, "cross-group acc": s.cross_group_accuracy.estimate if s.cross_group_accuracy else None,
                 "CI low": s.cross_group_accuracy.ci_low if s.cross_group_accuracy else None,
                 "CI high": s.cross_group_accuracy.ci_high if s.cross_group_accuracy else None,
                 all_pairs: s.all_pairs_accuracy.estimate if s.all_pairs_accuracy else None,
                 "seg pearson": s.segment_pooled["pearson"].estimate if s.segment_pooled else None}
                for c, s in agreement.scores.items()]
        sparse = agreement.n_used < agreement.n_rows  # labels on some rows only: say which rows the figures use
        on = f" on its {agreement.n_used} labelled rows" if sparse else ""
        print_table(rows, title=f"agreement with {result.human}{on} ({agreement.n_systems} systems)", digits=3)
        if sparse and result.calibrated is not None:
            say("note", f"{result.calibrated} is measured on the rows with {result.human}: if its map was fitted on "
                "those labels (anchored calibration), these figures are in-sample and flatter it; `xleval "
                "calibrate evaluate` measures it out of fold")
        for c in agreement.comparisons:
            console.print(data_text(
                f"{c.b} - {c.a} (cross-group accuracy): {c.difference.estimate:+.3f} (CI {c.difference.ci_low:+.3f} "
                f"to {c.difference.ci_high:+.3f}), permutation p ({c.permutation.alternative}) = "
                f"{c.permutation.p_value:.3g}"))
    # the system level decides when there is one (LGN ranks systems): it comes first
    for level, check in (("system", result.validity_system), ("segment", result.validity)):
        if check is not None:  # "at risk", never "violated", for a significant difference below the threshold
            status = "at risk" if below_threshold(check) else check.status
            console.print(data_text(f"LGN validity, {level} level ({status}): {check.message}"))
    if result.verdict is not None:
        console.print(data_text(f"LGN validity verdict: {result.verdict.reason}", style="bold"))
    if result.recommendation is not None:
        console.print(data_text(f"recommended: {flags(result.recommendation.summary())}"), soft_wrap=True)
        if result.recommendation.warning:
            console.print(data_text(flags(result.recommendation.warning)), soft_wrap=True)
        if result.recommendation.evaluation is not None:
            console.print(data_text(flags(result.recommendation.paragraph)), soft_wrap=True)
        for note in result.recommendation.notes:
            say("note", note)
    agreement_notes = list(result.agreement.notes) if result.agreement else []
    for note in dict.fromkeys(notes + list(result.bias.notes) + agreement_notes + list(result.notes)):
        say("note", note)
