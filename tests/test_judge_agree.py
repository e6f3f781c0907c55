"""Per-language agreement between judges: hand-checkable tables, parity with scipy and scikit-learn, the CLI,
and the shared WMT25 judges."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from xleval.exceptions import InputError
from xleval.io import read_table
from xleval.judges import judge_agreement


def _table() -> pd.DataFrame:
    # lp x: system means A = 1, 2, 3 and B = 1, 3, 2 -> pairs (s1,s2) and (s1,s3) ordered alike, (s2,s3) not: 2/3
    # lp y: B = A + 10 everywhere -> every statistic says full agreement
    rows = []
    for seg in range(2):
        for system, a, b in (("s1", 1, 1), ("s2", 2, 3), ("s3", 3, 2)):
            rows.append({"lp": "x", "system": system, "seg_id": seg, "A": a + seg * 0.5, "B": b + seg * 0.25})
            rows.append({"lp": "y", "system": system, "seg_id": seg, "A": a + seg * 0.5, "B": a + seg * 0.5 + 10})
    return pd.DataFrame(rows)


def test_pairwise_system_order_by_hand():
    t = judge_agreement(_table(), ["A", "B"], bins=3).table.set_index("group")
    assert t.loc["x", "pairwise"] == pytest.approx(2 / 3)
    assert t.loc["y", "pairwise"] == 1.0 and t.loc["y", "kendall"] == pytest.approx(1.0)
    assert t.loc["y", "pearson"] == pytest.approx(1.0) and t.loc["y", "kappa"] == pytest.approx(1.0)
    assert t.loc["y", "mean_b"] - t.loc["y", "mean_a"] == pytest.approx(10.0)
    # pooled over (lp, system) units: 6 units, 15 pairs; of the 9 pairs across lps, y's B is 10 higher than any x's B
    # while A is the same scale: count by hand in the test below
    assert t.loc["*", "systems"] == 6 and t.loc["*", "n"] == 12


def test_pooled_pairs_cross_languages():
    df = _table()
    units = df.groupby(["lp", "system"])[["A", "B"]].mean().to_numpy()
    agree = [np.sign(units[i, 0] - units[j, 0]) == np.sign(units[i, 1] - units[j, 1])
             for i in range(6) for j in range(i + 1, 6)]
    t = judge_agreement(df, ["A", "B"]).table.set_index("group")
    assert t.loc["*", "pairwise"] == pytest.approx(np.mean(agree))


def test_kendall_pearson_kappa_match_scipy_and_sklearn():
    rng = np.random.default_rng(3)
    n = 400
    a = rng.integers(0, 101, n).astype(float)
    b = np.clip(a + rng.normal(0, 25, n), 0, 100).round()
    df = pd.DataFrame({"lp": "z", "system": rng.choice(["p", "q", "r"], n), "A": a, "B": b})
    df.loc[5, "A"] = np.nan  # a missing score drops the row from both
    t = judge_agreement(df, ["A", "B"], bins=[0, 33, 66, 100.01]).table.iloc[0]
    ok = df["A"].notna()
    assert t["n"] == n - 1
    assert t["kendall"] == pytest.approx(stats.kendalltau(a[ok], b[ok]).statistic)  # tau-b
    assert t["pearson"] == pytest.approx(stats.pearsonr(a[ok], b[ok]).statistic)
    classes = lambda v: np.digitize(v, [33, 66])  # noqa: E731  fixed bins [0,33) [33,66) [66,100]
    assert t["kappa"] == pytest.approx(cohen_kappa_score(classes(a[ok]), classes(b[ok]), weights="quadratic"))


def test_quantile_bins_keep_ties_together():
    # 10 rows, A has 6 tied values: quantile classes of the average ranks put all of them in one class
    df = pd.DataFrame({"lp": "z", "system": list("pqpqpqpqpq"), "A": [60] * 6 + [10, 20, 80, 90],
                       "B": [60] * 6 + [10, 20, 80, 90]})
    t = judge_agreement(df, ["A", "B"], bins=5).table.iloc[0]
    assert t["kappa"] == pytest.approx(1.0)


def test_validation():
    with pytest.raises(InputError, match="name two or more"):
        judge_agreement(_table(), ["A"])
    with pytest.raises(InputError, match="no column 'C'"):
        judge_agreement(_table(), ["A", "C"])
    with pytest.raises(InputError, match="bins as edges"):
        judge_agreement(_table(), ["A", "B"], bins=[3, 1, 2])


def test_cli_agree(tmp_path, cli):
    src, out = tmp_path / "t.tsv", tmp_path / "agree.tsv"
    _table().to_csv(src, sep="\t", index=False)
    rc, _, err = cli("judges", "agree", str(src), "--judges", "A,B", "--bins", "3", "-o", str(out))
    assert rc == 0, err
    t = read_table(out)
    assert t["group"].tolist() == ["x", "y", "*"]  # lowest Kendall first, pooled last
    rc, _, err = cli("judges", "agree", str(src), "--judges", "A,B", "--bins", "three")
    assert rc == 2 and "--bins 'three'" in err


def test_wmt25_judges_per_language(data_root):
    from xleval.judges._ingest import read_judge_scores

    df = read_judge_scores(data_root / "wmt25-autoscores").frame
    result = judge_agreement(df, ["GEMBA-ESA-CMDA", "GEMBA-ESA-GPT4.1"])
    t = result.table.set_index("group")
    assert len(t) == 32  # 31 language pairs and the pooled row
    sub = df[(df["lp_wmt"] == "en-de_DE")].dropna(subset=["GEMBA-ESA-CMDA"])
    assert t.loc["en-de-DE", "kendall"] == pytest.approx(
        stats.kendalltau(sub["GEMBA-ESA-CMDA"], sub["GEMBA-ESA-GPT4.1"]).statistic)
    # 8,964 rows (data README); CMDA has 2 null scores in en-mas_KE (counted with json.loads on the raw files)
    assert t.loc["en-mas-KE", "n"] == 8_964 - 2
    assert result.least_agreeing(1)["group"].iloc[0] in set(t.index) - {"*"}


def test_a_group_named_like_the_pooled_rows_is_refused_not_merged():
    # before: a language pair named "*" gave two rows of group "*" and the renderers took either for the pooled one
    table = _table().replace({"lp": {"y": "*"}})
    with pytest.raises(InputError, match=r"column 'lp': a group is named '\*' \(first in data row 2\).*rename"):
        judge_agreement(table, ["A", "B"], bins=3)
