"""Issue 34, item 3 (defect 5): `diagnose` measures agreement on the rows that carry a label; with labels on
some rows only, its table says so, and a --calibrated column is said to be in-sample if its map was fitted on
those labels (the report labels it "(in-sample)" beside the out-of-fold figures: test_sparse_story)."""
import numpy as np
import pandas as pd

from test_progress_commands import _mt


def test_diagnose_says_which_rows_its_agreement_uses(cli, cli_said, tmp_path):
    path = _mt(tmp_path)
    frame = pd.read_csv(path, sep="\t")
    frame["m_cal"] = frame["m"] - frame.groupby("lp")["m"].transform("mean")
    frame.loc[frame["seg_id"] % 3 != 0, "human"] = np.nan
    labelled = int(frame["human"].notna().sum())
    frame.to_csv(path, sep="\t", index=False)
    said = cli_said("diagnose", path, "--score", "m", "--calibrated", "m_cal", "--by", "lp", "--human", "human",
                    "--n-resamples", "30", cwd=tmp_path)
    assert f"agreement with human on its {labelled} labelled rows" in said
    assert "m_cal is measured on the rows with human: if its map was fitted on those labels" in said
    assert "calibrate evaluate` measures it out of fold" in said
    # every row labelled: nothing to say
    full = pd.read_csv(tmp_path / "mt table.tsv", sep="\t").assign(human=lambda d: d["human"].fillna(70.0))
    full.to_csv(tmp_path / "full.tsv", sep="\t", index=False)
    rc, out, err = cli("diagnose", tmp_path / "full.tsv", "--score", "m", "--calibrated", "m_cal", "--by", "lp",
                       "--human", "human", "--n-resamples", "30", cwd=tmp_path)
    assert rc == 0, err
    assert "labelled rows" not in out + err and "in-sample" not in out + err
