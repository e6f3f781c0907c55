"""``xleval meta TABLE --metrics A,B | --metrics-prefix P --human COL [--by lp] [--judges A,B|auto|none]``:
meta-evaluation of many metrics, and the agreement of the table's judges per language (``xleval meta TABLE``
without ``--human``: the judges only)."""
from __future__ import annotations

import warnings

import click

from ..decision import N_FOLDS, N_REPEATS, Procedure
from ..exceptions import InputError
from ..io import parse_column_mapping, read_table
from ._common import (
    by_option,
    check_outputs,
    col_option,
    emit_json,
    emit_text,
    emit_tsv,
    format_of_output,
    grouping,
    in_cli_words,
    keep_reference_copies_option,
    parse_columns,
    progress_bar,
    reference_copy_step,
    report_option,
    say,
    working,
    write_analysis_report,
)


@click.command("meta")
@click.argument("input")
@click.option("--metrics", help="Metric columns, comma-separated (e.g. chrf,bleu,comet).")
@click.option("--metrics-prefix", help="Every column whose name starts with this prefix is a metric (e.g. metric:).")
@click.option("--human", help="Human score column (e.g. DA z). Without it, only the judges' agreement (--judges).")
@by_option("Group by lp, tgt_lang, or COL[,COL...].")
@click.option("--system", default="system", help="System column.")
@click.option("--segment", default="seg_id", help="Segment column (absent: the table is system-level).")
@click.option("--average-by", type=click.Choice(["none", "item", "system"]), default="none",
              help="Segment-level Pearson/Kendall: none (pooled over the group's rows), item (per segment, mean over "
                   "segments) or system (per system, mean over systems), as mt-metrics-eval.")
@click.option("--system-scores", type=click.Choice(["complete", "judged"]), default="complete",
              help="System scores: means over the segments judged for every system of the group (the matrix SPA "
                   "needs), or over each system's own judged segments (the official WMT DA system score).")
@click.option("--human-scale", metavar="NAME|GROUP=SCALE,...",
              help="The human scale: one name when every group shares it, or GROUP=SCALE per group (cross-group "
                   "pairs join groups of one scale). Needed when groups' human scores spread very differently.")
@click.option("--exclude", metavar="PATTERN", multiple=True,
              help="Leave out systems whose name matches this shell pattern (repeatable), e.g. 'Human-*'.")
@click.option("--darr", metavar="COL", help="Raw human column (0-100 DA): add WMT20's DARR Kendall-like tau.")
@click.option("--darr-threshold", type=float, default=25.0, help="DARR: least raw difference of a pair.")
@click.option("--spa/--no-spa", default=True, help="Soft pairwise accuracy (WMT24; needs segment scores).")
@click.option("--pdp/--no-pdp", default=True,
              help="Segment-level Pairwise Difference Pearson (within-segment differences of system scores; CI from "
                   "segments resampled), as mt-metrics-eval's Pearson(pdp=True).")
@click.option("--spa-permutations", type=click.IntRange(2), default=1000,
              help="SPA: sign permutations per p-value (mt-metrics-eval: 1000, seed 4).")
@click.option("--clusters", metavar="STAT,...",
              help="Significance clusters of the metrics in each group for these statistics (sys_pearson, "
                   "sys_spearman, sys_kendall, sys_accuracy, spa, seg_acc_t, seg_pearson), as mt-metrics-eval's tasks "
                   "test them.")
@click.option("--task", metavar="wmt23|wmt24|wmt25|FILE.json",
              help="Rank the metrics as that year's metrics task (its statistics' clusters and task weights, over the "
                   "table's pairs), or as the task list of a JSON file: [{\"lang\": \"en-de\", \"level\": \"sys\", "
                   "\"statistic\": \"spa\", \"weight\": 1}, ...].")
@click.option("--cluster-resamples", type=click.IntRange(2), default=1000, help="Permutations of the cluster tests.")
@click.option("--cluster-ties", type=click.Choice(["count", "mtme"]), default="count",
              help="Cluster tests: a resampled difference equal to the observed one counts as at least as large "
                   "(count), or mt-metrics-eval's floating-point >= decides (mtme: its p-values, which can be lower).")
@click.option("--chance/--no-chance", default=False,
              help="Print each value's chance baseline (the statistic of an uninformative metric) beside it.")
@click.option("--calibrations", metavar="raw,lgn,anchored@K",
              help="Also evaluate each metric raw and after each calibration out of system folds, as `calibrate "
                   "evaluate` does, and answer which metric with which calibration to trust across languages.")
@click.option("--ceiling", metavar="COL",
              help="A second human column (another rater): scored against --human with the same statistics, as one "
                   "more metric of every table (the human ceiling); every value also relative to it.")
@click.option("--gold-spans", metavar="FILE",
              help="Gold error spans (rows: the table's --by, --system and --segment columns, severity, start, end), "
                   "for --predicted-spans.")
@click.option("--predicted-spans", metavar="NAME=FILE", multiple=True,
              help="Predicted error spans (XCOMET's, a judge's, another rater's; same columns as --gold-spans), "
                   "repeatable: WMT25's character-level F1 and the partial-overlap span F1 per pair, with CIs.")
@click.option("--span-mismatch", type=click.FloatRange(0, 1), default=0.5,
              help="Credit of a span marked with the wrong severity (WMT25: 0.5).")
@click.option("--error-free", type=float, metavar="T",
              help="Error-free segment detection (WMT26): gold 1 when the human score is at least T (85 for ESA) and "
                   "the gold has no error span; each metric's F1 at its best threshold.")
@click.option("--critical", type=float, metavar="T",
              help="Critical segment detection (WMT25): gold 1 when the human score is below T (10 for ESA); each "
                   "metric's F1 at its best threshold.")
@click.option("--lower-is-better", "lower", multiple=True, metavar="COLUMN",
              help="A metric whose lower scores are better (repeatable); it is negated so every statistic reads "
                   "higher as better. Default: as its signature says (dir:lower for MetricX), else by its name (ter).")
@click.option("--higher-is-better", "higher", multiple=True, metavar="COLUMN",
              help="A metric whose higher scores are better, whatever its signature or name say (repeatable; e.g. a "
                   "TER column already negated).")
@click.option("--folds", type=click.IntRange(2), default=N_FOLDS,
              help="--calibrations: system folds (as `calibrate evaluate`).")
@click.option("--repeats", type=click.IntRange(1), default=N_REPEATS,
              help="--calibrations: fold splits and label draws (as `calibrate evaluate`).")
@click.option("--n-resamples", type=click.IntRange(2), default=1000,
              help="Bootstrap resamples of systems (CIs), also of --calibrations' intervals.")
@click.option("--seed", type=click.IntRange(0), default=0,
              help="Random state of every draw: the bootstrap, the cluster and PDP resamples, chance shuffles and "
                   "--calibrations' folds and label draws (SPA keeps mt-metrics-eval's seed 4).")
@click.option("--judges", "judges", metavar="A,B,...|auto|none", default="auto", show_default=True,
              help="Judges per group: Kendall, Pearson, kappa on binned scores and pairwise system-order agreement "
                   "of these columns (two or more: judges, or a judge and a metric), as `xleval judges agree`. auto: "
                   "the table's judge columns (their signature says judge: `xleval score -m judge:...`, `xleval "
                   "ingest judge`) when there are two or more; none: no agreement.")
@click.option("--format", "fmt", type=click.Choice(["text", "tsv", "json", "latex"]), default="text",
              help="text (WMT-style tables), tsv (tidy: group, metric, statistic, value, CI, n), json or latex; "
                   "default: as -o's extension says (.tsv, .json, .tex), else text.")
@click.option("-o", "--output", metavar="OUT", help="Write here (atomically) instead of standard output.")
@report_option
@keep_reference_copies_option
@col_option
def meta(input, metrics, metrics_prefix, human, by, system, segment, average_by, system_scores, human_scale, exclude,
         darr, darr_threshold, spa, pdp, spa_permutations, clusters, task, cluster_resamples, cluster_ties, chance,
         calibrations, ceiling, gold_spans, predicted_spans, span_mismatch, error_free, critical, lower, higher, folds,
         repeats, n_resamples, seed, judges, fmt, output, report_path, keep_reference_copies, col) -> None:
    """Which metric agrees with humans, per language pair and across pairs? WMT's statistics for many metrics.

    Per group and metric: system-level Pearson/Spearman/Kendall, pairwise accuracy and SPA; segment-level
    Pearson/Kendall and acc-t (and WMT20's DARR tau with --darr); across groups: global accuracy (WMT23) and
    cross-group accuracy, with CIs from systems resampled within groups. With two or more judge columns
    (--judges), their agreement per group too; without --human, only that.
    """
    fmt = format_of_output(fmt, output)  # -o meta.tsv writes TSV, not the text tables
    if human is None:
        _judges_only(input, metrics, metrics_prefix, judges, by, system, keep_reference_copies, fmt, output,
                     report_path, col)
        return
    from ..meta import (
        Clustering,
        MetaStatistics,
        Spans,
        exclude_systems,
        meta_calibrations,
        meta_evaluate,
        parse_calibrations,
    )
    from ..meta._render import render_latex, render_text, to_frame, to_json
    from ..stats import Resampling
    from ..table import EvalTable

    given = {"--exclude": exclude, "--lower-is-better": lower, "--higher-is-better": higher,
             "--clusters": () if clusters is None else (clusters,),
             "--human-scale": () if human_scale is None else (human_scale,)}
    empty = [flag for flag, values in given.items() if any(not str(v).replace(",", "").strip() for v in values)]
    if empty:  # an empty value would be taken as "nothing given", silently
        raise InputError(f"{empty[0]} '': give a value (a column, pattern or statistic), or leave {empty[0]} out")
    if bool(metrics) == bool(metrics_prefix):
        raise InputError("name the metrics with --metrics A,B or --metrics-prefix PREFIX (one of the two)")
    by_cols = parse_columns(by, "--by") if by is not None else []
    inputs = [input, *([gold_spans] if gold_spans else []), *(p.partition("=")[2] for p in predicted_spans)]
    check_outputs({"-o": output, "--report": report_path}, inputs, stdout=["-o"])
    required = [human, system, *(c for c in by_cols if c != "lp")]  # lp: given, or derived from the two codes
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=required, by=None,
                           normalize_languages=False)  # read once: the metrics' signatures travel with it
    df = table.frame
    if not by_cols:
        by_cols = grouping(by, df.columns)  # the default: lp (given, or from the two codes), else tgt_lang
    df = _with_pair(df, by_cols, input)
    from ..meta._engine import check_keys

    # here, not only in meta_evaluate: this error names the file, and its rows are the file's (no row dropped yet)
    check_keys(df, by_cols, system, segment, where=input)
    df, copies = reference_copy_step(df, by_cols, system, input, keep_reference_copies, quiet=True)
    names = parse_columns(metrics, "--metrics") if metrics else [c for c in df.columns if c.startswith(metrics_prefix)
                                                                   and c != human]
    if not names:
        raise InputError(f"--metrics-prefix {metrics_prefix!r}: no column of {input} starts with it; name the "
                         "metrics with --metrics, or check the prefix")
    unscored = _unscored(df, names, human) if metrics_prefix else []
    left_out = None
    if unscored:  # a prefix takes every such column; one the task's metrics did not score here is left out, said
        names = [c for c in names if c not in unscored]
        if not names:
            raise InputError(f"--metrics-prefix {metrics_prefix!r}: no matching column has a score on a row with a "
                             f"human score ({', '.join(unscored[:6])}); check --human, or the prefix")
        left_out = (f"--metrics-prefix {metrics_prefix!r}: {len(unscored)} column(s) with no score on a row with a "
                    f"human score left out: {', '.join(unscored[:6])}{' ...' if len(unscored) > 6 else ''}")
    if calibrations is not None:
        parse_calibrations(calibrations)  # a typo, or an empty value, is refused before any work
    task = _task(task)
    for flag, named in (("--lower-is-better", lower), ("--higher-is-better", higher)):
        unknown = [c for c in named if c not in names]
        if unknown:
            raise InputError(f"{flag} {unknown[0]!r}: not among the metrics ({', '.join(names[:8])}"
                             f"{' ...' if len(names) > 8 else ''}); name a metric column")
    both = sorted(set(lower) & set(higher))
    if both:
        raise InputError(f"--lower-is-better and --higher-is-better both name {both[0]!r}; name it once")
    agreement = judges_agreement(df, judges, input, table.signatures, by_cols, system)
    df, lower_is_better = metric_columns(df, names, table.signatures, lower, higher)
    calibrated = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        statistics = MetaStatistics(average_by=average_by, system_scores=system_scores, human_scale=_scale(human_scale),
                                    spa=spa, spa_permutations=spa_permutations, pdp=pdp, darr=darr,
                                    darr_threshold=darr_threshold, ceiling=ceiling, chance=chance)
        clustering = Clustering(statistics=parse_columns(clusters, "--clusters") if clusters else (), task=task,
                                n_resamples=cluster_resamples, ties=cluster_ties)
        spans = Spans(gold=read_table(gold_spans, columns=parse_column_mapping(col)) if gold_spans else None,
                      predicted=_span_files(predicted_spans, col), mismatch=span_mismatch, error_free=error_free,
                      critical=critical)
        with working(f"meta-evaluating {len(names)} metric(s) of {input}"):  # meta_evaluate tells no steps
            result = meta_evaluate(df, names, human, by=by_cols[0] if len(by_cols) == 1 else by_cols, system=system,
                                   segment=segment, exclude=exclude, lower_is_better=lower_is_better,
                                   statistics=statistics,
                                   resampling=Resampling(n_resamples=n_resamples, random_state=seed),
                                   clustering=clustering, spans=spans)
        noted = set(result.notes)  # in the library's words, as the warnings were caught
        result = in_cli_words(result)
        if calibrations:
            scale = _known_scale(human_scale)
            with progress_bar(f"calibrations of {len(names)} metric(s)") as advance:
                def each(units: int = 1, *, total: int | None = None) -> None:
                    # every metric's evaluation declares its own total (the same procedure on the same rows)
                    advance(units, total=None if total is None else total * len(names))

                kept = exclude_systems(df, system, exclude)  # the systems the tables above leave out
                calibrated = meta_calibrations(kept, names, human, by=by_cols[0] if len(by_cols) == 1 else by_cols,
                                               system=system, calibrations=calibrations,
                                               procedure=Procedure(n_folds=folds, n_repeats=repeats,
                                                                   n_resamples=n_resamples, random_state=seed),
                                               human_scale=scale, meta=result,
                                               lower_is_better=lower_is_better, progress=each, segment=segment)
    loud = [*([copies] if copies else []), *([left_out] if left_out else []),
            *dict.fromkeys(str(w.message) for w in caught)]
    from ..io._write import outputs_together

    with outputs_together():  # -o and --report land together or neither does (docs/errors.md)
        if agreement is None:
            if fmt == "json":
                emit_json(to_json(result, loud, calibrated), output)
            elif fmt == "tsv":
                emit_tsv(to_frame(result, calibrated), output)
            else:
                emit_text(render_latex(result, calibrated) if fmt == "latex" else render_text(result, calibrated),
                          output)
        else:  # the judges' agreement after the meta-evaluation, in every format
            _emit_with_judges(fmt, output, agreement, to_json(result, loud, calibrated), to_frame(result, calibrated),
                              render_latex(result, calibrated) if fmt == "latex" else render_text(result, calibrated))
        write_analysis_report(report_path, f"Meta-evaluation of {input}",
                              [r for r in (result, calibrated, agreement) if r is not None], loud)
    on_screen = fmt == "text" and output in (None, "-")  # the text's notes are read there: not said twice
    for message in loud:
        if not (on_screen and message in noted):
            say("warning", message)


def _with_pair(df, by_cols: list[str], input):
    """``df`` with the pair ``lp`` derived from ``src_lang`` and ``tgt_lang`` when ``--by`` names it and the table
    has none; refused when it cannot be derived."""
    if "lp" not in by_cols or "lp" in df.columns:
        return df
    if not {"src_lang", "tgt_lang"} <= set(df.columns):
        raise InputError(f"{input}: --by lp needs an lp column, or src_lang and tgt_lang to derive it; name the "
                         "group column with --by COL")
    from ..io import add_language_columns

    return add_language_columns(df, where=str(input))


def _unscored(df, names: list[str], human: str) -> list[str]:
    """The columns of ``names`` with no finite value on a row that has a human score (a metric of the WMT20 metrics
    task that scored other pairs than the table's)."""
    import numpy as np
    import pandas as pd

    judged = pd.to_numeric(df[human], errors="coerce").notna().to_numpy()
    return [c for c in names
            if not np.isfinite(pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)[judged]).any()]


def _judges_only(input, metrics, metrics_prefix, judges, by, system, keep_reference_copies, fmt, output,
                 report_path, col) -> None:
    """``xleval meta TABLE`` without ``--human``: the judges' agreement per group, nothing else (a table of judge
    scores without human scores: the WMT25 automatic scores). ``--by`` defaults to ``lp`` (derived from
    ``src_lang``/``tgt_lang`` when the table has no such column)."""
    if metrics or metrics_prefix:
        raise InputError(f"{'--metrics' if metrics else '--metrics-prefix'} meta-evaluates metrics against human "
                         "scores: give the human column with --human (without it, meta compares the judges only)")
    by_cols = parse_columns(by, "--by") if by is not None else ["lp"]
    check_outputs({"-o": output, "--report": report_path}, [input], stdout=["-o"])
    from ..table import EvalTable

    required = [system, *(c for c in by_cols if c != "lp")]
    table = EvalTable.read(input, columns=parse_column_mapping(col), required=required, by=None,
                           normalize_languages=False)  # read once: the judges' signatures travel with it
    df = table.frame
    df = _with_pair(df, by_cols, input)
    df, copies = reference_copy_step(df, [c for c in by_cols if c in df.columns], system, input,
                                     keep_reference_copies, quiet=True)
    agreement = judges_agreement(df, judges, input, table.signatures, by_cols, system)
    if agreement is None:
        raise InputError(f"{input}: no --human and {_no_judges(judges)}; give --human COL to meta-evaluate metrics, "
                         "or name two or more score columns to compare with --judges A,B")
    loud = [copies] if copies else []
    _emit_with_judges(fmt, output, agreement, {"warnings": loud}, None, "")
    write_analysis_report(report_path, f"Judges per language in {input}", [agreement], loud)
    for message in loud:
        say("warning", message)


def _no_judges(judges: str) -> str:
    return ("--judges none" if judges.strip() == "none" else
            "fewer than two judge columns (columns whose signature says judge: `xleval score -m judge:...`, "
            "`xleval ingest judge`)")


def judges_agreement(df, judges: str, where, signatures, by_cols: list[str], system: str):
    """``--judges``: the agreement (:func:`xleval.judges.judge_agreement`) of the named columns, of the table's
    judge columns (``auto``, when two or more; ``signatures``: the ones the table was read with), or None.
    Several ``--by`` columns make one group column of distinct labels (the group index's, so two keys never
    read alike). One step for ``meta`` and ``report``."""
    from ..judges import judge_agreement, judge_columns

    spec = judges.strip()
    if not spec:
        raise InputError("--judges '': name two or more columns (A,B), or auto, or none")
    if spec == "none":
        return None
    if spec == "auto":  # the judge columns with a score here (a judge of other pairs only is no judge of these)
        import pandas as pd

        names = [c for c in judge_columns(signatures, df.columns)
                 if pd.to_numeric(df[c], errors="coerce").notna().any()]
        if len(names) < 2:
            return None
    else:
        names = parse_columns(spec, "--judges")
    by = by_cols[0] if len(by_cols) == 1 else "+".join(by_cols)
    if len(by_cols) > 1:
        from .._base.grouping import group_index

        df = df.assign(**{by: group_index(df[by_cols], where=str(where)).row_labels("/")})
    try:
        return judge_agreement(df, names, by=by, system=system)
    except InputError as exc:  # the library cannot name the file
        raise exc.prefixed(f"{where}: --judges") from None


def _emit_with_judges(fmt: str, output, agreement, payload: dict, frame, text: str) -> None:
    """The meta-evaluation's output (``payload``/``frame``/``text``; empty without --human) with the judges'
    agreement after it: a ``judges`` object in JSON, rows of statistic ``judges_*`` in TSV, a table in text."""
    from ..judges import agreement_text, agreement_tidy

    if fmt == "json":
        emit_json({**payload, "judges": agreement.to_dict()}, output)
    elif fmt == "tsv":
        import pandas as pd

        tidy = agreement_tidy(agreement)
        emit_tsv(tidy if frame is None else pd.concat([frame, tidy], ignore_index=True), output)
    elif fmt == "latex":
        emit_text(text + _latex(agreement), output)
    else:
        emit_text((text + "\n" if text else "") + agreement_text(agreement), output)


def _latex(agreement) -> str:
    """The agreement rows as a LaTeX tabular (names escaped as LaTeX text)."""
    from ..judges import agreement_rows
    from ..judges._render import STATISTIC_COLUMNS
    from ..meta._render import _tex as tex  # the meta tables' LaTeX escaping

    rows = [" & ".join([tex(r["group"]), tex(r["a"]), tex(r["b"]), str(r["n"]),
                        *("--" if r[s] != r[s] else f"{r[s]:.3f}" for s in STATISTIC_COLUMNS)]) + r" \\"
            for r in agreement_rows(agreement)]
    head = " & ".join([tex(agreement.by), "a", "b", "n", *STATISTIC_COLUMNS]) + r" \\"
    return "\n".join(["", r"\begin{tabular}{lllrrrrr}", r"\hline", head, r"\hline", *rows, r"\hline",
                      r"\end{tabular}", ""])


def _span_files(named: tuple[str, ...], col) -> dict | None:
    """--predicted-spans NAME=FILE (repeatable) -> {NAME: table}."""
    out = {}
    for item in named:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise InputError(f"--predicted-spans {item!r}: give NAME=FILE (e.g. xcomet=xcomet_spans.tsv)")
        if name.strip() in out:
            raise InputError(f"--predicted-spans names {name.strip()!r} twice; give each source once")
        out[name.strip()] = read_table(path.strip(), columns=parse_column_mapping(col))
    return out or None


def _task(text: str | None):
    """--task: a preset name, or a JSON file of tasks (xleval.stats.read_tasks)."""
    from ..meta._engine import TASK_PRESETS

    if text is None or text in TASK_PRESETS:
        return text
    if not text.lower().endswith(".json"):
        raise InputError(f"invalid value for '--task': {text!r} is not one of {', '.join(TASK_PRESETS)}, nor a JSON "
                         "file of tasks (FILE.json)")
    from ..stats import read_tasks

    return read_tasks(text)


def _scale(text: str | None) -> str | dict[str, str] | None:
    if text is None or "=" not in text:
        return text
    out: dict[str, str] = {}
    for part in text.split(","):
        group, sep, scale = part.partition("=")
        if not sep or not group.strip() or not scale.strip():
            raise InputError(f"--human-scale {text!r}: give NAME, or GROUP=SCALE pairs separated by commas "
                             "(e.g. en-de=da_src,de-en=da_ref)")
        if group.strip() in out and out[group.strip()] != scale.strip():  # the last would win, silently
            raise InputError(f"--human-scale {text!r}: group {group.strip()!r} is given two scales "
                             f"({out[group.strip()]!r} and {scale.strip()!r}); name one")
        out[group.strip()] = scale.strip()
    return out


def _known_scale(text: str | None) -> str | None:
    """The one scale --human-scale names for every group when the library knows it (``da``, ``mqm``, ``z``, ...:
    its kind and direction then reach the calibrations' evaluation, as `calibrate evaluate --human-scale`);
    None for a user's own names or several scales (the evaluation then reads the labels)."""
    from ..calibration._scales import one_known_scale

    parsed = _scale(text)
    return one_known_scale(parsed.values() if isinstance(parsed, dict) else [parsed] if parsed else [])


def metric_columns(df, names, signatures, lower=(), higher=()):
    """The table with the metric columns it lacks scored from its texts (said in a note), and the metrics
    whose lower scores are better: named with --lower-is-better, else as their signature (``signatures``:
    the ones the table was read with) or name says, unless named with --higher-is-better. One step for
    `meta` and `report --meta`."""
    from ..meta import metric_directions, score_missing_metrics

    df, computed = score_missing_metrics(df, names)  # --metrics chrf,bleu on a table of texts: scored here
    if computed:
        say("note", f"computed {', '.join(computed)} from the texts (sentence-level, as `xleval score`): "
                    + "; ".join(f"{m}: {sig}" for m, sig in computed.items()), "cyan")
    auto = metric_directions(df, names, {m: computed.get(m) or signatures.get(m) for m in names})
    return df, [m for m in names if (m in lower or m in auto) and m not in higher]
