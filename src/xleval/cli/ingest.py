"""``xleval ingest``: turn a WMT system-output folder or the mt-metrics-eval layout into the long table."""
from __future__ import annotations

from typing import Any

import click

from ._common import check_outputs, emit_json, err_console, format_option, warnings_said


@click.group("ingest")
def ingest() -> None:
    """Read published evaluation data layouts into xleval's long table (one row per lp, system, segment)."""


def _write(df, output: str, fmt: str, what: str) -> None:
    from ..io import write_table

    write_table(df, output)  # the output guard refuses any file the reader read (recorded as inputs)
    summary: dict[str, Any] = {"output": output, "rows": len(df), "lps": sorted(df["lp"].unique().tolist()),
               "systems": int(df[["lp", "system"]].drop_duplicates().shape[0])}
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
@format_option
def wmt(folder, output, test_set, lps, systems, reference, all_references, fmt) -> None:
    """A WMT system-output folder: FOLDER/txt/{sources,references,system-outputs}/TESTSET.LP.*"""
    from ..io import read_wmt_folder

    check_outputs({"--output": output}, stdout=["--output"])  # before reading: a missing output folder is found at once

    df = read_wmt_folder(folder, test_set=test_set, lps=list(lps) or None, systems=list(systems) or None,
                         reference=reference, all_references=all_references)
    _write(df, output, fmt, "WMT folder")


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
    """The mt-metrics-eval layout: ROOT/TESTSET/{sources,references,system-outputs,human-scores}."""
    from ..io import read_mtme

    check_outputs({"--output": output}, stdout=["--output"])

    with warnings_said():  # a human score file renamed (it is named as a column of the table)
        df = read_mtme(root, list(lps), test_set=test_set, reference=reference, systems=list(systems) or None)
    _write(df, output, fmt, "mt-metrics-eval")
