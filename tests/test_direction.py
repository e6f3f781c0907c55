"""One direction rule (issue 32, item 3): every consumer asks :func:`xleval.metrics.higher_is_better`, so a
score column named ``ter`` without a signature is lower-is-better everywhere (the leaderboard, meta, fairness,
the report, calibration), and a signature's ``dir:lower`` (MetricX) wins over a column's name. Before, the
leaderboard and meta read the name while fairness read only the signature, and calibration neither.

The expected orders are computed in the test from the table (group means), never by the code under test."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.metrics import higher_is_better
from xleval.stats import Resampling

METRICX = "metricx|variant:24-ref|refs:yes|dir:lower|xleval:0.1.0"
CHRF = "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.0|xleval:0.1.0"


def _table(name: str = "ter", seed: int = 0) -> pd.DataFrame:
    """Three pairs x four systems x 30 segments; the score is an error rate: it falls as quality rises."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, offset in (("de-en", 30.0), ("ja-en", 55.0), ("ha-en", 70.0)):
        for k, system in enumerate(("s1", "s2", "s3", "s4")):
            quality = k - 1.5 + 0.3 * rng.normal()
            for i in range(30):
                human = quality + 0.5 * rng.normal()
                rows.append({"lp": lp, "system": system, "seg_id": i, "human": human,
                             name: offset - 6.0 * human + 2.0 * rng.normal()})
    return pd.DataFrame(rows)


def test_the_rule_reads_the_flag_then_the_signature_then_the_name():
    assert higher_is_better("ter") is False and higher_is_better("TER") is False
    assert higher_is_better("bleu") is True and higher_is_better("score") is True
    assert higher_is_better("bleu", METRICX) is False  # dir:lower wins over the name
    assert higher_is_better("ter", "ter|dir:higher") is True
    assert higher_is_better("ter", METRICX, given=True) is True  # a declared direction wins over both
    assert higher_is_better("m", None, metric="ter") is False  # the registry name when the column is renamed


def test_meta_negates_ter_and_a_metricx_signature_under_any_name():
    from xleval.meta import meta_evaluate, metric_directions

    df = _table().assign(chrf=lambda d: d["ter"])
    assert metric_directions(df, ["ter", "chrf"]) == ["ter"]
    assert metric_directions(df, ["ter", "chrf"], {"chrf": METRICX}) == ["ter", "chrf"]
    assert metric_directions(df, ["ter"], {"ter": CHRF}) == ["ter"]  # a signature without dir: the name decides
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = meta_evaluate(df, ["ter"], "human", resampling=Resampling(n_resamples=20, random_state=0))
    assert any("lower is better for ter" in note for note in res.notes)
    # negated: system-level Pearson within a pair is the one of -ter's system means with the human means
    means = df[df.lp == "de-en"].groupby("system")[["ter", "human"]].mean()
    expected = np.corrcoef(-means["ter"], means["human"])[0, 1]
    assert expected > 0.9 and res.value("de-en", "ter", "sys_pearson") == pytest.approx(expected)


def test_fairness_reads_ter_as_a_loss_in_the_library_and_on_the_command_line(cli, tmp_path):
    from xleval.fairness import fairness_gaps

    df = _table().rename(columns={"lp": "lang"}).assign(lang=lambda d: d["lang"].str[:2])
    means = df.groupby("lang")["ter"].mean()
    rep = fairness_gaps(df, "ter", "lang", reference=None, resampling=Resampling(n_resamples=50, random_state=0))
    assert rep.higher_is_better is False
    assert rep.summary.worst.estimate == pytest.approx(means.max())  # the highest error rate is the worst
    told = fairness_gaps(df, "ter", "lang", reference=None, higher_is_better=True,
                         resampling=Resampling(n_resamples=50, random_state=0))
    assert told.summary.worst.estimate == pytest.approx(means.min())

    path = tmp_path / "items.tsv"  # no sidecar: no signature, the name decides
    df.to_csv(path, sep="\t", index=False)
    rc, out, err = cli("fairness", "gaps", str(path), "--metric", "ter", "--by", "lang", "--reference", "none",
                       "--n-resamples", "50", "--format", "json")
    assert rc == 0, err
    result = json.loads(out)["result"]
    assert result["higher_is_better"] is False
    assert result["summary"]["worst"]["estimate"] == pytest.approx(means.max())


def test_fairness_cli_metricx_signature_wins_over_a_higher_is_better_name(cli, tmp_path):
    from xleval.io import write_table

    df = _table("chrf").rename(columns={"lp": "lang"}).assign(lang=lambda d: d["lang"].str[:2])
    path = tmp_path / "items.parquet"
    write_table(df, path, metadata={"signatures": {"chrf": METRICX}})
    rc, out, err = cli("fairness", "gaps", str(path), "--metric", "chrf", "--by", "lang", "--reference", "none",
                       "--n-resamples", "50", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["result"]["higher_is_better"] is False


def _best_per_group(df: pd.DataFrame, score: str) -> dict[str, str]:
    return df.groupby(["lp", "system"])[score].mean().groupby(level=0).idxmin().map(lambda k: k[1]).to_dict()


def test_the_leaderboard_ranks_ter_and_a_metricx_signature_ascending():
    from xleval import EvalTable
    from xleval.leaderboard import leaderboard

    df = _table()
    board = leaderboard(df, "ter", "lp", method="none", resampling=Resampling(n_resamples=100, random_state=0))
    assert board.higher_is_better is False
    first = board.rows[board.rows["rank_in_group"] == 1].set_index("group")["system"].to_dict()
    assert first == _best_per_group(df, "ter")

    renamed = df.rename(columns={"ter": "chrf"})
    table = EvalTable.from_frame(renamed, score="chrf", by="lp", signatures={"chrf": METRICX})
    few = Resampling(n_resamples=50, random_state=0)
    assert leaderboard(table, method="none", resampling=few).higher_is_better is False
    assert leaderboard(renamed, "chrf", "lp", method="none", resampling=few).higher_is_better is True


def test_the_report_and_calibration_read_ter_as_lower_is_better():
    from xleval.decision import fit_calibration
    from xleval.report import analyze_mt

    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = analyze_mt(df, "ter", by="lp", method="none", resampling=Resampling(n_resamples=50, random_state=0))
        fitted = fit_calibration(df, "anchored", score="ter", by="lp", human="human")
    assert analysis.board.higher_is_better is False
    assert fitted.model.score_higher_is_better is False


def test_a_negated_error_scale_is_read_from_its_signs():
    """MetricX and TER scores are never negative: a column of that name whose values are all at most 0 is the scale
    negated (mt-metrics-eval and WMT25 write MetricX so), higher is better, and a warning says so. Values of both
    signs, or all 0, keep the name's direction; a flag or a signature still wins."""
    negated = [-7.5, -0.2, 0.0, -25.0]
    with pytest.warns(match="read as the scale negated, higher is better"):
        assert higher_is_better("metricx", values=negated) is True
    with pytest.warns(match="negated"):
        assert higher_is_better("ter", values=np.array(negated)) is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert higher_is_better("metricx", values=[7.5, 0.2, 0.0]) is False
        assert higher_is_better("metricx", values=[0.0, 0.0]) is False
        assert higher_is_better("metricx", values=[-1.0, 2.0]) is False
        assert higher_is_better("metricx", values=negated, given=False) is False
        assert higher_is_better("bleu", METRICX, values=negated) is False  # the signature states it
        assert higher_is_better("chrf", values=negated) is True  # no error scale: nothing to read


def test_a_negated_metricx_column_calibrates_as_the_same_scores_under_a_neutral_name():
    """WMT25's MetricX-24 (the sign flipped) in a column named ``metricx``: before, the error scale was assumed, the
    labels' rising slope was "against the direction" and set to 0, and every system of a pair got the pair's
    offset. Now the fit equals the one on the same scores under a name without a registry entry."""
    from xleval.decision import fit_calibration

    base = _table("metricx")
    table = base.assign(metricx=-(base["metricx"] - base["metricx"].min() + 0.1))  # all below 0, higher better
    table["neutral"] = table["metricx"]
    table["labels"] = np.where(np.arange(len(table)) % 3 == 0, table["human"], np.nan)
    fits = {}
    for column in ("metricx", "neutral"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[column] = fit_calibration(table, "anchored", score=column, by="lp", human="labels",
                                           human_higher_is_better=True)
    slopes = {c: f.model.slopes_["between"] for c, f in fits.items()}
    assert slopes["neutral"] > 0 and slopes["metricx"] == pytest.approx(slopes["neutral"])
    np.testing.assert_allclose(fits["metricx"].model.transform(table), fits["neutral"].model.transform(table),
                               rtol=1e-12)


def test_the_leaderboard_ranks_a_negated_metricx_as_the_neutral_name_and_says_why():
    from xleval.leaderboard import leaderboard

    base = _table("metricx")
    table = base.assign(metricx=-(base["metricx"] - base["metricx"].min() + 0.1))
    boards = {}
    for name in ("metricx", "neutral"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            boards[name] = leaderboard(table.rename(columns={"metricx": name}), name, "lp", method="none",
                                       resampling=Resampling(n_resamples=50, random_state=0))
    order = {name: b.rows[["group", "system"]].apply(tuple, axis=1).tolist() for name, b in boards.items()}
    assert order["metricx"] == order["neutral"] and boards["metricx"].higher_is_better
    # the expected order, from the table: within each pair the system of the highest (least negative) mean first
    means = table.groupby(["lp", "system"])["metricx"].mean()
    top = {lp: means[lp].idxmax() for lp in table["lp"].unique()}
    first = boards["metricx"].rows.sort_values("rank_in_group").groupby("group").first()["system"]
    assert first.to_dict() == top
    assert any("read as the scale negated" in n for n in boards["metricx"].notes)
    assert not any("negated" in n for n in boards["neutral"].notes)


def test_the_report_says_a_negated_metricx_was_read_as_higher_is_better(tmp_path):
    from conftest import run_cli

    base = _table("metricx")
    path = tmp_path / "negated.tsv"
    base.assign(metricx=-(base["metricx"] - base["metricx"].min() + 0.1)).to_csv(path, sep="\t", index=False)
    rc, _, err = run_cli("report", path, "--score", "metricx", "--method", "lgn", "--n-resamples", "50",
                         "-o", tmp_path / "r.json", "--format", "json")
    assert rc == 0, err
    assert "read as the scale negated, higher is better" in (tmp_path / "r.json").read_text()


@pytest.mark.parametrize("name", ["sentence_ter", "metric:TER", "TER@newstestB2020", "tercom", "metricx_24",
                                  "MetricX-24-Hybrid-XL", "metricx24-qe"])
def test_a_name_with_a_word_for_an_error_scale_is_read_as_that_scale(name):
    """A user's own MetricX-24 column (``metricx_24``, 0-25) or a sentence TER, read as higher-is-better, would reverse
    every order of a pair's systems; before, only the exact registry names ``ter`` and ``metricx`` were error
    scales. Negated values (the WMT20 metrics task writes TER so, WMT25 MetricX) are still read from their signs."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert higher_is_better(name) is False
        assert higher_is_better(name, values=[0.0, 3.5, 24.0]) is False
        assert higher_is_better(name, CHRF) is False  # a signature without dir: leaves it to the name
        assert higher_is_better(name, values=[3.5], given=True) is True
    with pytest.warns(match="read as the scale negated"):
        assert higher_is_better(name, values=[-0.4, -0.1, 0.0]) is True


@pytest.mark.parametrize("name", ["hter", "chrf", "chrf++", "inter_rater", "bleu_terse", "comet22", "score",
                                  "metric:parbleu", "xcomet-xl"])
def test_words_that_only_contain_an_error_scale_are_not_one(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert higher_is_better(name) is True
        assert higher_is_better(name, values=[-3.0, -1.0]) is True


def test_the_leaderboard_ranks_a_metricx_24_column_ascending_and_the_flag_overrides_the_name(tmp_path):
    """``metricx_24`` (the error scale, 0 to 25) ranks its lowest system first on the leaderboard, in Python and on
    the command line; ``--higher-is-better`` says a misleading name's scores rise with quality."""
    from conftest import run_cli
    from xleval.leaderboard import leaderboard

    df = _table("metricx_24")
    df["metricx_24"] = df["metricx_24"] - df["metricx_24"].min()  # the error scale: never below 0
    board = leaderboard(df, "metricx_24", "lp", method="none", resampling=Resampling(n_resamples=50, random_state=0))
    assert board.higher_is_better is False
    first = board.rows[board.rows["rank_in_group"] == 1].set_index("group")["system"].to_dict()
    assert first == _best_per_group(df, "metricx_24")

    path = tmp_path / "metricx.tsv"
    df.to_csv(path, sep="\t", index=False)
    worst = df.groupby(["lp", "system"])["metricx_24"].mean().groupby(level=0).idxmax().map(lambda k: k[1])
    for flag, expected in ((), first), (("--higher-is-better",), worst.to_dict()):
        rc, out, err = run_cli("leaderboard", path, "--score", "metricx_24", "--method", "none", "--n-resamples",
                               "50", "--format", "json", *flag)
        assert rc == 0, err
        rows = pd.DataFrame(json.loads(out)["rows"])
        assert rows[rows["rank_in_group"] == 1].set_index("group")["system"].to_dict() == expected
