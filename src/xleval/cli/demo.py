"""``xleval demo``: the whole MT path on generated data with a known truth (no network, no input files)."""
from __future__ import annotations

from pathlib import Path

import click

from ._common import console, emit_json, err_console, format_option, print_table


@click.command("demo")
@click.option("--out", type=click.Path(path_type=Path), default=Path("demo-output"),
              help="Folder for the generated data, calibrator and summary.")
@click.option("--seed", type=click.IntRange(0), default=0, help="Seed of the simulation.")
@format_option
def demo(out, seed, fmt) -> None:
    """Run the whole MT path on generated data with a known truth (no network, no input files).

    Simulates systems x languages with planted per-language metric bias, calibrates with LGN, and
    compares the cross-language ranking of raw and calibrated scores with the truth.
    """
    from ..demo import run_demo
    from ..exceptions import InputError

    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder; give a folder for the demo's files")
    result = run_demo(out, seed=seed)
    if fmt == "json":
        emit_json(result.to_dict())
        return
    sim = result.simulation
    err_console.print(f"simulated {len(sim.data)} segments: {sim.data['system'].nunique()} systems x "
                      f"{sim.data['tgt_lang'].nunique()} target languages, calibration + evaluation splits (seed {seed})")
    print_table([{"tgt_lang": k, "planted offset": sim.offsets[k], "planted scale": sim.scales[k]} for k in sim.offsets],
                title="planted metric bias per language", digits=2)
    v = result.verification
    print_table(v.groups.to_dict(orient="records"), title="evaluation split: mean/std per language before and after LGN", digits=2)
    console.print(f"sd of language means: raw {v.sd_of_means_before:.2f} -> calibrated {v.sd_of_means_after:.2f}")
    d = result.diagnosis
    if d is not None:
        before, after = d.comparison.before, d.comparison.after
        console.print(f"diagnosis: calibration advised before: {before.calibration_advised} "
                      f"(largest d = {before.largest_smd.estimate:.2f}, eta^2 = {before.eta_squared.estimate:.3f}); "
                      f"after: {after.calibration_advised} (largest d = {after.largest_smd.estimate:.2f})")
        console.print(f"LGN validity ({d.validity.status}): {d.validity.message}")
    rows = [{"score": name, **vals} for name, vals in result.agreement.items()]
    print_table(rows, title="ranking of (system, language) cells against the true quality", digits=3)
    for kind, path in result.files.items():
        console.print(f"wrote {kind}: {path}")
