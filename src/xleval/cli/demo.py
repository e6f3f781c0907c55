"""``xleval demo``: the whole MT path on generated data with a known truth (no network, no input files)."""
from __future__ import annotations

from pathlib import Path

import click

from ._common import console, emit_json, err_console, format_option

TOP = 10  # leaderboard rows printed


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=Path("demo-output"),
              help="Folder for the generated data, calibrator, summary and report.")
@click.option("--seed", type=click.IntRange(0), default=0,
              help="Seed of the simulation and of the report's resampling.")
@format_option
def demo(out, seed, fmt) -> None:
    """Run the whole MT path on generated data with a known truth (no network, no input files).

    Simulates systems x languages with planted per-language metric bias, calibrates with LGN, compares
    the cross-language ranking of raw and calibrated scores with the truth, and writes the report.
    """
    from ..demo import key_result, run_demo
    from ..exceptions import InputError
    from .leaderboard import print_board

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder; give a folder for the demo's files")
    result = run_demo(out, seed=seed)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    sim = result.simulation
    err_console.print(f"simulated {len(sim.data)} segments: {sim.data['system'].nunique()} systems x "
                      f"{sim.data['tgt_lang'].nunique()} target languages, calibration + evaluation splits")
    console.print(key_result(result))
    summary = result.report_summary or {}
    console.print()
    console.print(f"verdict: language bias: {summary['language_bias_answer']}")
    console.print(f"verdict: may LGN be used: {summary['lgn_answer']}")
    console.print(f"verdict: recommended calibration: {summary['recommendation_name']}")
    for reason in summary["reasons"]:
        console.print(f"  - {reason}")
    console.print()
    print_board(result.board, top=TOP, notes=False)
    if summary.get("recommendation") not in (None, "lgn", "none") and "calibrated" in result.files:
        from .._base.terminal import shell_word

        console.print("the leaderboard above uses the demo's LGN model, the subject of the demo (its languages have "
                      "equal true quality by construction, LGN's assumption); with human scores in every group "
                      f"{summary['recommendation_name']} is recommended; ranked with the recommended calibration: "
                      f"xleval leaderboard {shell_word(str(result.files['calibrated']))} --score metric --by tgt_lang "
                      f"--human human --method {summary['recommendation']}", soft_wrap=True)  # one line: pastes whole
    for kind, path in result.files.items():
        console.print(f"wrote {kind}: {path}")
