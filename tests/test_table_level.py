"""LGN's shrinkage default by the table's level: segment rows keep min_count 50, a table of system
scores (or one where no group reaches 50 rows) is not shrunk; an explicit --min-count that shrinks
every group is warned about."""
import json

import numpy as np
import pandas as pd

from xleval.calibration import lgn_min_count, table_level
from xleval.cli import main


def _segments(n_sys=6, n_seg=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"lp": lp, "system": f"s{s}", "seg_id": i, "chrf": rng.normal(50 + 10 * k, 8)}
                         for k, lp in enumerate(("en-de", "en-zh")) for s in range(n_sys) for i in range(n_seg)])


def test_levels_and_defaults():
    seg = _segments()
    systems = seg.groupby(["lp", "system"], as_index=False)["chrf"].mean()
    assert table_level(seg, "lp") == "segment" and lgn_min_count(seg, "lp")[0] == 50
    assert table_level(systems, "lp") == "system" and lgn_min_count(systems, "lp")[0] == 1
    assert "table of system scores" in lgn_min_count(systems, "lp")[1]
    small = seg[seg.seg_id < 3].drop(columns="system")  # 18 rows per group, no system column
    assert table_level(small, "lp") == "rows" and lgn_min_count(small, "lp")[0] == 1


def test_cli_system_table_is_plain_lgn_and_an_explicit_min_count_that_shrinks_everything_is_warned(tmp_path, capsys):
    systems = _segments().groupby(["lp", "system"], as_index=False)["chrf"].mean()
    path = tmp_path / "systems.tsv"
    systems.to_csv(path, sep="\t", index=False)
    model, out = tmp_path / "m.json", tmp_path / "out.tsv"
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "-o", str(model), "--format",
                 "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["min_count"].startswith("1: a table of system scores")
    assert not any("shrunk" in w for w in report["warnings"])
    assert main(["calibrate", "apply", str(model), str(path), "-o", str(out)]) == 0
    calibrated = pd.read_csv(out, sep="\t")
    expected = systems.groupby("lp")["chrf"].transform(lambda s: (s - s.mean()) / s.std(ddof=0))
    np.testing.assert_allclose(calibrated["chrf_lgn"], expected, rtol=1e-12, atol=1e-12)
    assert main(["calibrate", "fit", str(path), "--score", "chrf", "--by", "lp", "--min-count", "50", "-o",
                 str(model), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["min_count"] == "50 (given)"
    assert any("shrinks every group" in w for w in report["warnings"])


def test_grouping_by_the_system_column_itself():
    seg = _segments()
    assert table_level(seg, "system") == "segment" and lgn_min_count(seg, "system")[0] == 50
    systems = seg.groupby(["lp", "system"], as_index=False)["chrf"].mean()
    assert table_level(systems, ["lp", "system"]) == "system"


def test_library_lgn_says_when_every_group_was_shrunk():
    import pytest

    from xleval.calibration import LGN
    from xleval.exceptions import SmallGroupWarning

    systems = _segments().groupby(["lp", "system"], as_index=False)["chrf"].mean()
    with pytest.warns(SmallGroupWarning, match="every group has fewer than min_count=50"):
        LGN(by="lp", score="chrf").fit(systems)
