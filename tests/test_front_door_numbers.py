"""Numbers as people read them on the command line too (issue 23, item 13): no 15-digit slopes, no
``p = 0``, no ``after 2.21e-13``, a CI with the precision of its estimate, counts as integers, no
``[default: default]``."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.cli import main
from xleval.cli._common import print_table
from xleval.diagnostics import diagnose_bias

LONG_FLOAT = re.compile(r"\d\.\d{7,}")


def _table(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g, shift in (("de-en", 10.0), ("ja-en", 0.0), ("ha-en", -8.0)):
        for s in range(6):
            quality = rng.normal(0, 3)
            for seg in range(60):
                x = 50 + shift + quality + rng.normal(0, 10)
                rows.append({"lp": g, "system": f"s{s}", "seg_id": seg, "score": x,
                             "human": 70 + quality + 0.4 * (x - 50 - shift) + rng.normal(0, 8)})
    return pd.DataFrame(rows)


def _run(args, capsys) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(args)
    captured = capsys.readouterr()
    assert code in (0, None), captured.err
    return captured.out + captured.err


def test_fit_prints_slopes_and_offsets_with_a_few_digits(tmp_path, capsys):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    out = _run(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--human", "human",
                "--method", "anchored", "-o", str(tmp_path / "m.json")], capsys)
    assert "between_slope=" in out
    assert not LONG_FLOAT.search(out), out


def test_lgn_fit_prints_rounding_noise_as_zero(tmp_path, capsys):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    out = _run(["calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--method", "lgn",
                "-o", str(tmp_path / "m.json")], capsys)
    line = next(x for x in out.splitlines() if x.startswith("sd of group means"))
    assert line.endswith("after 0"), line  # the calibrated group means are equal up to float noise
    assert "e-" not in line


def test_bias_lines_never_say_p_equals_zero_and_share_a_precision(tmp_path, capsys):
    frame = _table()
    frame.loc[frame["lp"] == "de-en", "score"] += 60  # a huge gap: Kruskal-Wallis p underflows to 0
    kw = next(r for r in diagnose_bias(frame, "score", "lp").reasons if "Kruskal" in r)
    assert float(kw.rpartition("p = ")[2]) < 1e-6  # the analysis keeps the number (the JSON has it)
    path = tmp_path / "t.tsv"
    frame.to_csv(path, sep="\t", index=False)
    out = _run(["diagnose", str(path), "--score", "score", "--by", "lp"], capsys)
    line = next(x for x in out.splitlines() if "Kruskal" in x)
    assert line.endswith("p < 0.001"), line
    found = re.search(r"d = (\S+) \(CI (\S+) to (\S+)\)", out)
    assert found, out
    decimals = {len(v.partition(".")[2]) for v in found.groups()}
    assert len(decimals) == 1, found.groups()  # "CI 1.15 to 1.2" was two precisions


def test_a_float_count_prints_as_an_integer(capsys):
    print_table([{"group": "a", "n": 20000.0, "mean": 0.123456}, {"group": "b", "n": 300.0, "mean": 1.5}])
    out = capsys.readouterr().out
    assert "20000.0000" not in out and "20000" in out
    assert "0.123456" not in out


@pytest.mark.parametrize("path", [("calibrate", "fit")])
def test_no_default_reads_default(path, capsys):
    main([*path, "--help"])
    out = capsys.readouterr().out
    assert "--fallback" in out
    assert "[default: default]" not in re.sub(r"\s+", " ", out)
