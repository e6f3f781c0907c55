"""meta's input layer (issue 35, item 7): the readers' one number parser, each metric on its own rows, groups
without a human score named, column options and --exclude patterns that name nothing refused with one line,
and magnitudes far outside float32 not changing SPA."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import InputError
from xleval.meta import MetaStatistics, meta_evaluate
from xleval.stats import Resampling


def _table(seed: int = 4, n_sys: int = 5, n_seg: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for lp in ("de-en", "en-de"):
        q = rng.normal(size=n_sys)
        for s in range(n_sys):
            for i in range(n_seg):
                gold = q[s] + rng.normal()
                rows.append({"lp": lp, "system": f"s{s}", "seg_id": i, "human": gold,
                             "a": gold + rng.normal(), "b": gold + 2 * rng.normal()})
    return pd.DataFrame(rows)


def _quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return meta_evaluate(*args, **kwargs)


def _cells(res, metric):
    frame = res.to_frame()
    return frame[frame["metric"] == metric].drop(columns=["chance"]).reset_index(drop=True)


@pytest.mark.parametrize("system_scores", ["complete", "judged"])
def test_one_metrics_missing_cells_do_not_shrink_anothers_statistics(system_scores):
    df = _table()
    df["c"] = df["a"] + 0.5
    df.loc[(df["seg_id"] < 4) & (df["system"] == "s1"), "c"] = np.nan  # c lacks 4 segments of one system
    alone = _quiet(df, ["a"], "human", statistics=MetaStatistics(system_scores=system_scores, spa_permutations=50),
                   resampling=Resampling(n_resamples=30))
    with_c = _quiet(df, ["a", "c"], "human",
                    statistics=MetaStatistics(system_scores=system_scores, spa_permutations=50),
                    resampling=Resampling(n_resamples=30))
    pd.testing.assert_frame_equal(_cells(alone, "a"), _cells(with_c, "a"))
    # c rests on its own 8 complete segments: its SPA is the one of a table of those segments only
    own = df[df["seg_id"] >= 4]
    c_only = _quiet(own, ["c"], "human", statistics=MetaStatistics(system_scores=system_scores, spa_permutations=50),
                    resampling=Resampling(n_resamples=30))
    assert with_c.value("de-en", "c", "spa") == c_only.value("de-en", "c", "spa")
    assert any("own rows" in n for n in with_c.notes)


def test_infinite_metric_score_refused_naming_the_row():
    df = _table()
    df.loc[7, "a"] = np.inf
    with pytest.raises(InputError, match=r"column 'a' row 8: metric score inf is infinite"):
        meta_evaluate(df, ["a", "b"], "human", resampling=Resampling(n_resamples=10))


def test_metric_cells_read_by_the_readers_parser():
    df = _table().astype({"a": object})
    df.loc[3, "a"] = ""  # an empty cell: not scored
    df.loc[4, "a"] = "NA"
    res = _quiet(df, ["a"], "human", statistics=MetaStatistics(system_scores="judged", spa=False),
                 resampling=Resampling(n_resamples=10))
    assert np.isfinite(res.value("de-en", "a", "seg_pearson"))
    df.loc[5, "a"] = "abc"
    with pytest.raises(InputError, match=r"column 'a' \(metrics=\) holds text .*row 6"):
        meta_evaluate(df, ["a"], "human", resampling=Resampling(n_resamples=10))


def test_a_group_without_any_human_score_is_named():
    df = _table()
    extra = df[df["lp"] == "de-en"].assign(lp="xx-yy", human=np.nan)
    res = _quiet(pd.concat([df, extra]), ["a"], "human", resampling=Resampling(n_resamples=10),
                 statistics=MetaStatistics(spa=False))
    assert "xx-yy" not in res.groups
    assert any("without any human score left out: xx-yy" in n for n in res.notes)


def test_options_naming_nothing_are_refused():
    df = _table()
    with pytest.raises(InputError, match="lower_is_better names 'nosuch'"):
        meta_evaluate(df, ["a"], "human", lower_is_better=["nosuch"], resampling=Resampling(n_resamples=10))
    with pytest.raises(InputError, match="exclude pattern 'Human-\\*' matches no system"):
        meta_evaluate(df, ["a"], "human", exclude=["Human-*"], resampling=Resampling(n_resamples=10))


@pytest.mark.parametrize("flag", ["--lower-is-better", "--higher-is-better"])
def test_cli_column_options_naming_no_metric_are_refused(tmp_path, flag):
    path = tmp_path / "t.tsv"
    _table().to_csv(path, sep="\t", index=False)
    r = run_cli("meta", str(path), "--metrics", "a,b", "--human", "human", flag, "nosuch")
    assert r.exit_code == 2 and f"{flag} 'nosuch': not among the metrics" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run_cli("meta", str(path), "--metrics", "a,b", "--human", "human", "--exclude", "zz*")
    assert r.exit_code == 2 and "exclude pattern 'zz*' matches no system" in r.stderr


def test_spa_unchanged_by_tiny_magnitudes():
    df = _table()
    tiny = df.assign(a=df["a"] * 2.0 ** -1000)  # about 1e-301: 0 in float32
    assert _quiet(df, ["a"], "human", resampling=Resampling(n_resamples=10)).value("de-en", "a", "spa") == \
        _quiet(tiny, ["a"], "human", resampling=Resampling(n_resamples=10)).value("de-en", "a", "spa")


def test_human_ceiling_row_and_relative_values_by_hand():
    """Two human columns: the second (a rater) is scored against the first with the same statistics, and every
    value is divided by the ceiling's. Hand check on system level: 3 systems, one segment-free table."""
    df = pd.DataFrame({"lp": ["x"] * 4, "system": ["a", "b", "c", "d"], "human": [1.0, 2.0, 3.0, 4.0],
                       "rater2": [1.0, 3.0, 2.0, 4.0], "m": [1.0, 2.0, 4.0, 3.0], "n": [4.0, 3.0, 2.0, 1.0]})
    res = _quiet(df, ["m", "n"], "human", segment=None, statistics=MetaStatistics(ceiling="rater2"),
                 resampling=Resampling(n_resamples=20))
    assert res.ceiling == "rater2" and res.metrics == ("m", "n", "rater2")
    # pairwise accuracy of 6 system pairs: rater2 swaps b/c (5/6), m swaps c/d (5/6), n reverses all (0)
    acc = {c.metric: c for c in res.cells if c.statistic == "sys_accuracy"}
    assert acc["rater2"].value == pytest.approx(5 / 6) and acc["m"].value == pytest.approx(5 / 6)
    assert acc["m"].relative == pytest.approx(1.0) and acc["n"].relative == pytest.approx(0.0)
    # Kendall: rater2 and m both 4/6 = 2/3, n -1: relative -1.5
    tau = {c.metric: c for c in res.cells if c.statistic == "sys_kendall"}
    assert tau["rater2"].value == pytest.approx(2 / 3)
    assert tau["n"].relative == pytest.approx(-1.5)
    assert "relative" in res.to_frame().columns
    with pytest.raises(InputError, match="ceiling='m' is a metric"):
        meta_evaluate(df, ["m"], "human", segment=None, statistics=MetaStatistics(ceiling="m"))


def test_no_spa_note_for_a_metric_without_scores_in_a_pair():
    df = _table()
    df["c"] = df["a"].where(df["lp"] == "de-en")  # c scores de-en only
    res = _quiet(df, ["a", "c"], "human", resampling=Resampling(n_resamples=10))
    assert np.isfinite(res.value("de-en", "c", "spa")) and np.isnan(res.value("en-de", "c", "spa"))
    assert not any("no SPA" in n for n in res.notes)  # no "needs 2" note: c simply has no scores there


def test_cli_ceiling_column_must_exist_and_shows_the_relative_table(tmp_path):
    df = _table()
    df["rater2"] = df["human"] + np.random.default_rng(0).normal(0, 0.5, len(df))
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    r = run_cli("meta", str(path), "--metrics", "a,b", "--human", "human", "--ceiling", "nosuch", "--no-spa")
    assert r.exit_code == 2 and "ceiling column 'nosuch' not in the table" in r.stderr
    r = run_cli("meta", str(path), "--metrics", "a,b", "--human", "human", "--ceiling", "rater2", "--no-spa",
                "--n-resamples", "20")
    assert r.exit_code == 0, r.stderr
    assert "Relative to the human ceiling (rater2 against human)" in r.stdout
