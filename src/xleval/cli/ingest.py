"""``xleval ingest``: turn a WMT system-output folder, the mt-metrics-eval layout or human ratings (MQM spans,
ESA, mixed gold) into the long table."""
from __future__ import annotations

from typing import Any

import click

from ._common import check_outputs, col_option, emit_json, err_console, format_option, warnings_said


@click.group("ingest")
def ingest() -> None:
    """Read published evaluation data layouts and human ratings into xleval's long table (one row per lp, system,
    segment)."""


def _write(df, output: str, fmt: str, what: str) -> None:
    from ..io import write_table

    write_table(df, output)  # the output guard refuses any file the reader read (recorded as inputs)
    # a table of ingest gold may have no lp or system column (--by another column); empty cells are not pairs
    lps = sorted({str(v) for v in df["lp"].dropna()}) if "lp" in df.columns else []
    keys = [k for k in ("lp", "system") if k in df.columns]
    summary: dict[str, Any] = {"output": output, "rows": len(df), "lps": lps,
                               "systems": int(df[keys].drop_duplicates().shape[0]) if "system" in keys else 0}
    if fmt == "json" and output != "-":  # '-': standard output holds the table
        emit_json(summary)
    else:
        err_console.print(f"wrote {summary['rows']} rows ({what}: {len(summary['lps'])} language pair(s), "
                          f"{summary['systems']} system outputs) to {output}")


@ingest.command("wmt")
@click.argument("folder")
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout).")
@click.option("--test-set", help="e.g. newstest2021 (default: every test set found).")
@click.option("-l", "--lp", "lps", multiple=True, help="Language pair(s) to read (repeatable; default: all).")
@click.option("--system", "systems", multiple=True, help="System(s) to read (repeatable; default: all).")
@click.option("--reference", default="A", show_default=True, help="Reference in the 'reference' column.")
@click.option("--all-references", is_flag=True, help="Add the other references as reference_2, ...")
@click.option("--da", "da", multiple=True, metavar="LP=FILE",
              help="WMT segment-level DA of a pair (ad-seg-scores-XX-YY.csv), added as human_raw, human_z, human_n "
                   "(NaN/0 where not judged), with each row's document as doc_id; its SIDs are placed with "
                   "FOLDER/xml/*.LP.all.xml (repeatable).")
@click.option("--da-order", "da_order", type=click.Choice(["sorted", "file"]), default="sorted", show_default=True,
              help="How a DA SID counts documents: sorted by id as text (WMT21, WMT22) or in file order.")
@click.option("--da-system", "da_systems", multiple=True, metavar="DA_NAME=SYSTEM",
              help="A DA system name (without its .N suffix) that is an output file's SYSTEM under another name "
                   "(repeatable; e.g. Nemo=NVIDIA-NeMo in WMT21).")
@format_option
def wmt(folder, output, test_set, lps, systems, reference, all_references, da, da_order, da_systems, fmt) -> None:
    """A WMT system-output folder: FOLDER/txt/{sources,references,system-outputs}/TESTSET.LP.*, with WMT's
    segment-level DA files of some pairs (--da)."""
    from ..exceptions import InputError
    from ..io import attach_wmt_da, read_wmt_folder

    files = _pairs_of(da, "--da", "LP=FILE", "de-en=ad-seg-scores-de-en.csv")
    renamed = _pairs_of(da_systems, "--da-system", "DA_NAME=SYSTEM", "Nemo=NVIDIA-NeMo")
    if renamed and not files:
        raise InputError("--da-system maps DA system names, but no --da file is given; add the pairs' DA files "
                         "with --da LP=FILE, or leave --da-system out")
    check_outputs({"--output": output}, list(files.values()), stdout=["--output"])  # before reading

    df = read_wmt_folder(folder, test_set=test_set, lps=list(lps) or None, systems=list(systems) or None,
                         reference=reference, all_references=all_references)
    if files:
        with warnings_said():  # DA rows of human translations (no output file) are left out, counted
            df = attach_wmt_da(df, files, root=folder, test_set=test_set, order=da_order, da_systems=renamed)
    _write(df, output, fmt, "WMT folder" + (f" with DA of {', '.join(files)}" if files else ""))


def _pairs_of(values: tuple[str, ...], flag: str, form: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` options (``--da LP=FILE``, ``--da-system DA_NAME=SYSTEM``) as a mapping, each key once."""
    from ..exceptions import InputError

    out: dict[str, str] = {}
    for value in values:
        key, eq, target = value.partition("=")
        if not eq or not key or not target:
            raise InputError(f"{flag} {value}: write it as {form}, e.g. {flag} {example}")
        if key in out:
            raise InputError(f"{flag} {value}: {key} is given twice ({out[key]} and {target}); give it once")
        out[key] = target
    return out


@ingest.command("mtme")
@click.argument("root")
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout).")
@click.option("--test-set", help="Test-set folder under ROOT, e.g. wmt21.news (omit if ROOT is that folder).")
@click.option("-l", "--lp", "lps", multiple=True, required=True, help="Language pair(s) (repeatable).")
@click.option("--reference", help="Reference in the 'reference' column (default refA, else the first).")
@click.option("--system", "systems", multiple=True, help="System(s) to read (repeatable; default: all).")
@format_option
def mtme(root, output, test_set, lps, reference, systems, fmt) -> None:
    """The mt-metrics-eval layout: ROOT/TESTSET/{sources,references,system-outputs,human-scores}, texts as .txt
    or .jsonl files."""
    from ..io import read_mtme

    check_outputs({"--output": output}, stdout=["--output"])

    with warnings_said():  # a human score file renamed (it is named as a column of the table)
        df = read_mtme(root, list(lps), test_set=test_set, reference=reference, systems=list(systems) or None)
    _write(df, output, fmt, "mt-metrics-eval")


_into_option = click.option(
    "--into", "into", metavar="TABLE",
    help="Add the scores to this evaluation table (rows matched on lp, system, seg_id; rows without a rating get "
         "NaN) instead of writing the scores alone.")
_raters_option = click.option(
    "--raters", type=click.Choice(["mean", "z"]), default="mean", show_default=True,
    help="Several raters of a segment: the mean of their scores, or the mean of per-rater z-scores (z over each "
         "rater's segments in the language pair; removes rater severity).")
_lp_option = click.option("-l", "--lp", "lp", help="Language pair of every row, for a file without an lp column "
                                                    "(e.g. en-de for one WMT MQM file).")


def _ratings_table(path: str, col, lp: str | None, lists: tuple[str, ...] = ()):
    from ..exceptions import InputError
    from ..io import parse_column_mapping, read_table

    mapping = parse_column_mapping(col)
    # a JSONL array cell (ESA error spans) is read as its JSON text; the file names the column as --col maps it
    in_file = [next((f for f, canonical in mapping.items() if canonical == c), c) for c in lists]
    df = read_table(path, columns=mapping, lists=in_file)
    if lp is not None:
        if "lp" in df.columns:
            raise InputError(f"--lp {lp}: {path} has an lp column already; drop --lp (or rename its lp column "
                             "with --col)")
        df["lp"] = lp
    elif "lp" not in df.columns:
        raise InputError(f"{path} has no lp column: give the language pair of its rows with --lp (e.g. --lp en-de), "
                         "or map its column: columns={'YOUR_COLUMN': 'lp'}")
    return df


def _write_gold(scores, output: str, into: str | None, col, fmt: str, what: str, value: str) -> None:
    from ..io import read_table
    from ..ratings import attach_gold

    keys = [k for k in ("lp", "system", "doc", "seg_id") if k in scores.columns]
    if into is None:
        _write(scores, output, fmt, what)
        return
    table = read_table(into)  # --col maps the ratings file's columns, not this table's
    extra = [c for c in scores.columns if c not in keys]
    match = [k for k in keys if k != "doc" or k in table.columns]
    if match != keys and scores.duplicated(match).any():
        from ..exceptions import InputError

        raise InputError(f"--into {into}: the ratings name a segment by its doc and seg_id (the same "
                         f"{', '.join(match)} occurs in two documents), but {into} has no doc column to match them on; "
                         "add the document of each row to the table as a column doc")
    _write(attach_gold(table, scores, extra, match), output, fmt, f"{what} added to {into} ({value})")


@ingest.command("mqm")
@click.argument("spans")
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout).")
@click.option("--weights", default="wmt", show_default=True,
              help="Error weights: 'wmt' (Freitag et al. 2021: Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 "
                   "Minor/Fluency/Punctuation:0.1) or a spec 'severity[/category]:weight ...' (most specific wins).")
@_raters_option
@_lp_option
@_into_option
@col_option
@format_option
def mqm(spans, output, weights, raters, lp, into, col, fmt) -> None:
    """MQM error spans (one row per error: system, seg_id, rater, severity, category; WMT's MQM TSV files) ->
    segment MQM scores (column mqm: minus the weighted error count, higher is better) and mqm_scale."""
    from ..ratings import mqm_weights, score_mqm
    from .calibrate_common import in_table

    check_outputs({"--output": output}, [spans, *([into] if into else [])], stdout=["--output"])
    w = mqm_weights(weights)  # a bad spec is refused before the file is read
    with warnings_said():  # contradictions in the annotation (a No-error row beside an error)
        scores = in_table(spans, score_mqm, _ratings_table(spans, col, lp), weights=w, raters=raters)
    _write_gold(scores, output, into, col, fmt, "MQM scores", "column mqm")


@ingest.command("esa")
@click.argument("ratings")
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout).")
@click.option("--score", "score", default="score", show_default=True, help="Column of the rater's 0-100 score.")
@click.option("--spans", help="Column of the error spans as JSON ([{\"severity\": \"minor\"}, ...]): counted per "
                              "severity (esa_minor, esa_major).")
@click.option("--from-appraise", "appraise", is_flag=True,
              help="RATINGS is an Appraise ESA export as WMT24 published it (headerless CSV, 12 fields a row): "
                   "attention checks (BAD), tutorials and documents marked #bad, #dup or #incomplete are dropped "
                   "and counted, as the organisers do; seg_id is line_id + 1, as ingest wmt numbers lines.")
@_raters_option
@_lp_option
@_into_option
@col_option
@format_option
def esa(ratings, output, score, spans, raters, lp, into, col, appraise, fmt) -> None:
    """ESA ratings (one row per segment and rater: system, seg_id, rater, a 0-100 score, optional spans; or an
    Appraise export with --from-appraise) -> segment ESA scores (column esa) and esa_scale."""
    from ..ratings import score_esa
    from .calibrate_common import in_table

    check_outputs({"--output": output}, [ratings, *([into] if into else [])], stdout=["--output"])
    with warnings_said():  # scores that look like another scale (all within 0-1); the rows an export drops
        if appraise:
            table, score, spans = _appraise_table(ratings, lp, col, score, spans), "score", "spans"
        else:
            _refuse_headerless_appraise(ratings)
            table = _ratings_table(ratings, col, lp, (spans,) if spans else ())
        scores = in_table(ratings, score_esa, table, score=score, raters=raters, spans=spans)
    _write_gold(scores, output, into, col, fmt, "ESA scores", "column esa")


def _appraise_table(path: str, lp: str | None, col, score: str, spans: str | None):
    from ..exceptions import InputError
    from ..ratings import read_appraise_esa

    given = [flag for flag, value in (("--lp", lp), ("--col", col), ("--score", score != "score"),
                                      ("--spans", spans)) if value]
    if given:
        raise InputError(f"{given[0]}: --from-appraise reads the export's fields by position (language pair, score "
                         f"and spans included); drop {given[0]}")
    return read_appraise_esa(path)


def _refuse_headerless_appraise(path: str) -> None:
    from ..exceptions import InputError
    from ..ratings._appraise import looks_like_appraise_esa

    if looks_like_appraise_esa(path):
        raise InputError(f"{path}: its first row reads as an Appraise ESA export without a header (12 fields: "
                         "user_id, system, line_id, TGT/BAD, languages, score, ...); read it with --from-appraise")


@ingest.command("gold")
@click.argument("table")
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout).")
@click.option("--from", "sources", multiple=True, required=True, metavar="COLUMN[:SCALE_COLUMN]",
              help="A gold column and the column naming its scale (default COLUMN_scale, as ingest mqm/esa write "
                   "them), e.g. --from mqm --from esa (repeatable).")
@click.option("--name", default="human", show_default=True, help="Name of the combined gold column.")
@click.option("--by", default="lp", show_default=True, help="Column whose groups each take one gold scale.")
@col_option
@format_option
def gold(table, output, sources, name, by, col, fmt) -> None:
    """Mixed gold: one human column from several (e.g. MQM for some language pairs, ESA for the rest), each
    group taking the one that rates it; NAME_scale names each row's scale (compare across groups only on
    one scale)."""
    from ..io import parse_column_mapping, read_table
    from ..ratings import combine_gold, gold_scales
    from .calibrate_common import in_table

    check_outputs({"--output": output}, [table], stdout=["--output"])
    df = read_table(table, columns=parse_column_mapping(col))
    pairs = dict(s.split(":", 1) if ":" in s else (s, f"{s}_scale") for s in sources)
    out = in_table(table, combine_gold, df, pairs, name=name, by=by)
    scales = gold_scales(out, scale=f"{name}_scale", by=by)
    _write(out, output, fmt, f"mixed gold in {name}: {len(set(scales.values()))} scale(s) over {len(scales)} "
                            f"group(s)")


@ingest.command("judge")
@click.argument("files", nargs=-1, required=True)
@click.option("-o", "--output", required=True,
              help="Table to write (.parquet, .tsv, .jsonl, .csv; '-' = TSV on stdout); signatures in its metadata.")
@click.option("--name", default="judge", show_default=True,
              help="WMT26 task files: the judge's column name (scores in NAME, error counts in NAME_minor/_major).")
@click.option("--spans", "spans", metavar="FILE", help="WMT26 task files: write the task1_pred error spans here.")
@format_option
def judge(files, output, name, spans, fmt) -> None:
    """Judge and metric scores produced elsewhere: the WMT25 automatic scores (a folder of <system>.jsonl[.gz],
    per-document lists of per-segment scores per metric) or WMT26 task files (task1_pred spans, task2_pred
    scores) -> one row per segment and system, a column per metric, signatures stating the source."""
    from ..io import write_table
    from ..judges._ingest import read_judge_scores

    check_outputs({"--output": output, **({"--spans": spans} if spans else {})}, list(files), stdout=["--output"])
    result = read_judge_scores(list(files), name=name)
    if spans is not None:
        if result.spans is None:
            from ..exceptions import InputError

            raise InputError(f"--spans {spans}: the WMT25 automatic scores hold no error spans; --spans is for "
                             "WMT26 task files (task1_pred)")
        write_table(result.spans, spans)
    write_table(result.frame, output, metadata=result.metadata())
    df = result.frame
    summary: dict[str, Any] = {"output": output, "rows": len(df), "layout": result.layout,
                               "lps": sorted(df["lp_wmt"].unique().tolist()),
                               "systems": int(df[["lp_wmt", "system"]].drop_duplicates().shape[0]),
                               "signatures": result.signatures}
    if fmt == "json" and output != "-":
        emit_json(summary)
    else:
        err_console.print(f"wrote {len(df)} rows ({result.layout}: {len(summary['lps'])} language pair(s), "
                          f"{summary['systems']} system outputs, columns {', '.join(result.signatures)}) to {output}")
