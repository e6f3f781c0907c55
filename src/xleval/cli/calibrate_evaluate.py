"""``xleval calibrate evaluate``: which calibration to trust here, raw vs LGN vs anchored out of system folds."""
from __future__ import annotations

import warnings

import click

from .._base.terminal import data_text
from ..calibration import SELECTIONS, direction_for, prepare_frame
from ..decision import ALTERNATIVES, N_FOLDS, N_REPEATS, N_RESAMPLES, RANDOM_STATE
from ..exceptions import InputError
from ..io import parse_column_mapping, read_table
from ._advice import CommandContext
from ._common import (
    by_option,
    col_option,
    console,
    emit_json,
    format_option,
    grouping,
    keep_reference_copies_option,
    print_table,
    progress_bar,
    reference_copy_step,
    say,
)
from .calibrate_advice import flags, human_scale_option
from .calibrate_common import DIRECTION_OPTION, app, in_table


@app.command("evaluate")
@click.argument("input")
@click.option("--score", required=True, help="Score column.")
@click.option("--human", required=True, help="Human score column (the reference the calibrations are judged by).")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--system", default="system", help="System column (folds split systems).")
@click.option("--budget", default=None,
              help="Labels per group: one number K (the labels you have or will have) makes the recommendation at K "
                   "random labels per group and adds K to the budget curve; several, comma-separated, are the budget "
                   "curve alone, and the recommendation is made at the labels in the table. Default: the curve "
                   "25,50,100,200, the recommendation at the labels in the table.")
@click.option("--selection", default="spread,random",
              help="Selections to compare: spread, random, stratified, comma-separated (default spread,random).")
@DIRECTION_OPTION
@click.option("--folds", type=click.IntRange(2), default=N_FOLDS,
              help="System folds (the decision's default everywhere).")
@click.option("--repeats", type=click.IntRange(1), default=N_REPEATS, help="Fold splits and label draws (results are "
              "means over them; the decision's default everywhere).")
@click.option("--n-resamples", type=click.IntRange(2), default=N_RESAMPLES,
              help="Bootstrap resamples of systems for the CIs (the decision reads them: keep the default for the "
                   "decision `calibrate fit --method auto` makes).")
@click.option("--alternative", type=click.Choice(ALTERNATIVES),
              help="Also test each calibration against raw (PERM-BOTH permutation test of cross-group accuracy on "
                   "the system scores averaged over repeats, --n-resamples permutations): two-sided, greater (WMT's "
                   "one-sided test: the calibration orders more pairs as humans do) or less. Accuracy here is always "
                   "cross-group, so there is no --average-by: a per-group calibration cannot reorder pairs inside a "
                   "group or a segment (see `diagnose --average-by`).")
@click.option("--seed", type=click.IntRange(0), default=RANDOM_STATE,
              help="Random state of folds, draws and resamples.")
@human_scale_option
@keep_reference_copies_option
@col_option
@format_option
def evaluate(input, score, human, by, system, budget, selection, human_up, folds, repeats, n_resamples, alternative,
             seed, human_scale, keep_reference_copies, col, fmt) -> None:
    """Which calibration should I trust here? Raw vs LGN vs anchored out of system folds.

    Cross-group pairwise accuracy and system-level Pearson of raw scores, LGN, anchored with every
    label and anchored with K labels per group (repeated draws), with CIs and paired differences.
    """
    from ..decision import Procedure, compare_calibrations, decide_from_evaluation, with_decision

    budgets = _int_list(budget or "25,50,100,200", "--budget")
    stated = budgets[0] if budget is not None and len(budgets) == 1 else None
    selections = [s.strip() for s in selection.split(",") if s.strip()]
    bad = [s for s in selections if s not in SELECTIONS]
    if bad or not selections:
        raise InputError(f"--selection {selection!r}: use one or more of {', '.join(SELECTIONS)}, comma-separated "
                         "(e.g. spread,random)")
    if score == human:
        raise InputError(f"--score and --human name the same column ({score}); the evaluation compares one with "
                         "the other")
    df = read_table(input, columns=parse_column_mapping(col), required=[score, human], numeric=[score, human])
    by_cols = grouping(by, df.columns)
    df, copies = reference_copy_step(df, by_cols, system, input, keep_reference_copies, quiet=True)
    frame = prepare_frame(df, by_cols, input)
    human_up = direction_for(frame, human, human_scale, human_up)  # a named scale says its direction
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress_bar(f"evaluating on {input}") as advance:
            procedure = in_table(input, Procedure, n_folds=folds, n_repeats=repeats, n_resamples=n_resamples,
                                 random_state=seed, budgets=tuple(budgets), selections=tuple(selections))
            result = in_table(input, compare_calibrations, frame, score, human,
                              by_cols[0] if len(by_cols) == 1 else by_cols, system=system, procedure=procedure,
                              human_higher_is_better=human_up, progress=advance, alternative=alternative,
                              budget=stated, human_scale=human_scale)
            decision = in_table(input, decide_from_evaluation, frame, result,
                                commands=CommandContext.from_cli(input, col))
            result = with_decision(result, decision)
    # the comparison and the decision read one table: what both say about it (rows left out) is said once
    notes = list(dict.fromkeys([*([copies] if copies else []), *(str(w.message) for w in caught)]))
    if fmt == "json":
        loud = [result.decision.warning] if result.decision is not None and result.decision.warning else []
        emit_json({**result.to_dict(), "warnings": loud + notes})
        return
    _render_evaluation(result, notes)


def _int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} {text!r}: expected whole numbers separated by commas, e.g. 25,50,100,200") from None
    if not values:
        raise InputError(f"{option} {text!r}: give at least one number, e.g. 100")
    if min(values) < 1:
        raise InputError(f"{option} {text!r}: labels per group are whole numbers >= 1, e.g. 25,50,100,200")
    return values


def _render_evaluation(result, notes) -> None:
    def ci(est) -> str:
        return f"{est.ci_low:.3f} to {est.ci_high:.3f}"

    def diff(est) -> str:
        return "" if est is None else f"{est.estimate:+.3f} ({est.ci_low:+.3f} to {est.ci_high:+.3f})"

    rows = [{"scores": v.name, "cross-group acc": f"{v.accuracy.estimate:.3f}", "95% CI": ci(v.accuracy),
             "minus raw (CI)": diff(v.minus_raw), "minus LGN (CI)": diff(v.minus_lgn),
             **({f"p vs raw ({result.alternative})": "" if v.vs_raw is None else f"{v.vs_raw.p_value:.3g}"}
                if result.alternative else {}),
             "pearson": f"{v.pearson.estimate:.3f}",
             "runs": f"{min(v.runs):.3f}-{max(v.runs):.3f}" if len(set(v.runs)) > 1 else f"{v.runs[0]:.3f}"}
            for v in result.variants]
    print_table(rows, title=f"{result.score} against {result.human} by {' and '.join(result.by)}: "
                f"{result.n_systems} systems in "
                f"{result.n_groups} groups, {result.n_folds} system folds x {result.n_repeats} repeats")
    for k, gain in result.selection_gain.items():
        console.print(f"spread minus random selection at {k} labels per group: {gain.estimate:+.3f} "
                      f"({gain.ci_low:+.3f} to {gain.ci_high:+.3f} over {gain.n} repeats)")
    console.print(data_text(flags(result.verdict), style="bold"), soft_wrap=True)
    decision = result.decision
    if decision is not None and decision.warning:
        console.print(data_text(flags(decision.warning), style="bold red" if decision.warn else ""), soft_wrap=True)
    for note in list(result.notes) + list(decision.notes if decision is not None else ()) + notes:
        say("note", note, style="")
