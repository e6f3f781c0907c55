"""`plan_labels` / `xleval calibrate plan`: how many more labels per group, which rows, and the stopping
rule. The allocation is checked against what Neyman allocation must do (more labels where the residual
variance or the cross-group system pairs are larger, fewer where labels are already there, exact totals,
a label for every system); the stopping rule against simulated worlds whose gaps are known."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LabelDraw, PlanTarget, plan_labels
from xleval.cli import main
from xleval.exceptions import DataQualityWarning, InputError
from xleval.io import read_table


def _world(groups=("en-de", "en-zh"), systems=(4, 4), noise=(10.0, 10.0), offsets=(0.0, 0.0), labelled=(0, 0),
           n_seg=100, seed=0, exact=False):
    """Segments of each group's systems; human = offset + score + noise; ``labelled`` rows per group carry
    it in ``lab``. ``exact``: the labelled rows' noise is centred per group, so that the groups' mean
    residuals are exactly their offsets (a world whose estimated gap is its true gap)."""
    rng = np.random.default_rng(seed)
    scores = [rng.uniform(20, 80, n_seg) + 3 * s for s in range(max(systems))]  # alike in every group
    parts = []
    for g, n_sys, sd, off in zip(groups, systems, noise, offsets, strict=True):
        for s in range(n_sys):
            x = scores[s]
            parts.append(pd.DataFrame({"lp": g, "system": f"s{s}", "seg_id": np.arange(n_seg),
                                       "doc_id": np.arange(n_seg) // 10, "hypothesis": f"hyp {g} {s}",
                                       "chrf": x, "human": off + x + sd * rng.normal(size=n_seg)}))
    df = pd.concat(parts, ignore_index=True)
    df["lab"] = np.nan
    for g, k, off in zip(groups, labelled, offsets, strict=True):
        if k:
            rows = rng.choice(np.flatnonzero(df["lp"].to_numpy() == g), size=k, replace=False)
            values = df.loc[rows, "human"].to_numpy()
            if exact:
                values = values - (values - df.loc[rows, "chrf"].to_numpy()).mean() + off
            df.loc[rows, "lab"] = values
    return df


def test_a_group_with_larger_residual_variance_gets_more_labels_in_proportion_to_its_sd():
    df = _world(noise=(5.0, 20.0), labelled=(60, 60))
    plan = plan_labels(df, "lp", 520, score="chrf", human="lab", draw=LabelDraw(allocation="neyman"))
    g = plan.groups.set_index("group")
    assert g.loc["en-zh", "to_add"] > g.loc["en-de", "to_add"]
    # Neyman: labels proportional to the residual sd (the system counts are equal); sd estimated from 60 labels
    ratio = g.loc["en-zh", "planned"] / g.loc["en-de", "planned"]
    assert 2.5 < ratio < 6, ratio
    assert g.loc["en-zh", "residual_sd"] > 2.5 * g.loc["en-de", "residual_sd"]


def test_a_group_with_more_cross_group_system_pairs_gets_more_labels():
    # four groups: the 12-system group's offset enters 12 * 15 cross-group pairs, a 5-system group's 5 * 22
    df = _world(groups=("a-en", "b-en", "c-en", "d-en"), systems=(5, 5, 5, 12), noise=(10,) * 4,
                offsets=(0,) * 4, labelled=(0,) * 4)
    plan = plan_labels(df, "lp", 400, score="chrf", draw=LabelDraw(allocation="neyman"))
    g = plan.groups.set_index("group")["planned"]
    assert g["d-en"] > g["a-en"] == pytest.approx(g["b-en"], abs=1) == pytest.approx(g["c-en"], abs=1)
    expected = np.sqrt(12 * 15) / np.sqrt(5 * 22)
    assert g["d-en"] / g["a-en"] == pytest.approx(expected, rel=0.03)


def test_with_two_groups_the_system_counts_cancel():
    # every cross-group pair involves both groups: both offsets matter alike whatever the system counts
    df = _world(systems=(3, 12), labelled=(0, 0))
    g = plan_labels(df, "lp", 200, score="chrf").groups.set_index("group")["planned"]
    assert g["en-de"] == g["en-zh"] == 100


def test_labels_already_collected_reduce_that_groups_share():
    df = _world(labelled=(60, 0))
    plan = plan_labels(df, "lp", 200, score="chrf", human="lab")
    g = plan.groups.set_index("group")
    assert g.loc["en-de", "to_add"] == 40 and g.loc["en-zh", "to_add"] == 100
    assert (g["residual_sd_from"] == ["labels", "pooled"]).all()
    # a group already past its share gets nothing more; the rest goes to the other
    g = plan_labels(_world(labelled=(150, 0)), "lp", 200, score="chrf", human="lab").groups.set_index("group")
    assert g.loc["en-de", "to_add"] == 0 and g.loc["en-zh", "to_add"] == 50


@pytest.mark.parametrize("budget", [9, 57, 131, 400, 1100])
def test_totals_add_up_exactly_and_rows_are_new_distinct_and_scored(budget):
    df = _world(groups=("a-en", "b-en", "c-en"), systems=(2, 3, 7), noise=(5, 9, 13), offsets=(0, 5, 10),
                labelled=(3, 0, 5), seed=budget)
    df.loc[df.index[::17], "chrf"] = np.nan
    with pytest.warns(DataQualityWarning) if budget < 21 else _nothing():
        plan = plan_labels(df, "lp", budget, score="chrf", human="lab", draw=LabelDraw(rows="spread", random_state=1))
    g = plan.groups
    have = int((df["lab"].notna() & df["chrf"].notna()).sum())  # a label without a score is no label
    assert g["labelled"].sum() == have == plan.labelled
    assert g["planned"].sum() == budget and g["to_add"].sum() == len(plan.rows) == budget - have == plan.to_add
    assert (g["planned"] >= g["labelled"]).all()
    rows = plan.rows["row_id"].to_numpy()
    assert len(set(rows)) == len(rows)
    assert df.loc[rows, "lab"].isna().all() and df.loc[rows, "chrf"].notna().all()
    assert (plan.rows.groupby("lp").size().reindex(g["group"], fill_value=0).to_numpy() == g["to_add"]).all()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_every_system_gets_a_label_when_the_budget_allows_and_the_plan_says_when_not():
    # en-de's residual sd is a tenth of en-zh's: Neyman alone would give it ~4 of 44 labels for 10 systems
    df = _world(systems=(10, 10), noise=(1.0, 10.0), labelled=(0, 0))
    df["lab"] = np.nan
    for g in ("en-de", "en-zh"):  # labels in two systems of each group, to know the residual sds
        rows = df.index[(df.lp == g) & (df.seg_id < 6) & df.system.isin(["s0", "s1"])]
        df.loc[rows, "lab"] = df.loc[rows, "human"]
    plan = plan_labels(df, "lp", 44, score="chrf", human="lab", draw=LabelDraw(random_state=0, allocation="neyman"))
    labelled = df[df.lab.notna()].groupby(["lp", "system"]).size()
    added = plan.rows.groupby(["lp", "system"]).size()
    total = added.add(labelled, fill_value=0)
    assert len(total) == 20 and (total >= 1).all()
    assert plan.groups.set_index("group").loc["en-zh", "planned"] > plan.groups.set_index("group").loc["en-de",
                                                                                                        "planned"]
    with pytest.warns(DataQualityWarning, match="does not reach one label for every system"):
        short = plan_labels(df, "lp", 30, score="chrf", human="lab")
    assert any("one label for every system" in n for n in short.notes)


def test_rows_within_a_system_are_spread_evenly_and_over_documents():
    df = _world(systems=(4, 4), labelled=(0, 0))
    plan = plan_labels(df, "lp", 80, score="chrf", draw=LabelDraw(rows="spread", random_state=2))
    per_system = plan.rows.groupby(["lp", "system"]).size()
    assert per_system.tolist() == [10] * 8
    # 10 documents per system: spread takes each (document, system) cell once, and each segment once per group
    assert not plan.rows.duplicated(["lp", "system", "doc_id"]).any()
    assert not plan.rows.duplicated(["lp", "seg_id"]).any()


def test_seeded():
    df = _world(labelled=(20, 20))
    a = plan_labels(df, "lp", 140, score="chrf", human="lab", draw=LabelDraw(random_state=5))
    b = plan_labels(df, "lp", 140, score="chrf", human="lab", draw=LabelDraw(random_state=5))
    c = plan_labels(df, "lp", 140, score="chrf", human="lab", draw=LabelDraw(random_state=6))
    assert a == b and a.random_state == 5
    assert not a.rows.equals(c.rows)


@pytest.mark.parametrize("budget, message", [
    (0, "budget=0: expected the total number of labels"), (-4, "budget=-4"), (2.5, "budget=2.5"),
    (True, "budget=True"), (40, "budget=40 is not more than the labels already collected (40)"),
    (10**6, "is more than the rows that can carry a label"),
])
def test_a_budget_that_adds_nothing_or_is_not_a_count_is_refused(budget, message):
    df = _world(labelled=(20, 20))
    with pytest.raises(InputError, match="budget") as info:
        plan_labels(df, "lp", budget, score="chrf", human="lab")
    assert message in str(info.value) and info.value.argument == "budget"


def test_other_arguments_are_checked():
    df = _world()
    for make, name in ((lambda: LabelDraw(rows="best"), "rows"), (lambda: LabelDraw(allocation="best"), "allocation"),
                       (lambda: PlanTarget(confidence=1.5), "confidence"), (lambda: PlanTarget(power=0), "power"),
                       (lambda: PlanTarget(residual_sd=-1.0), "residual_sd")):
        with pytest.raises(InputError, match=f"{name}=") as info:
            plan_labels(df, "lp", 50, score="chrf", **{"draw" if name in ("rows", "allocation") else "target": make()})
        assert info.value.argument == name


# ----------------------------------------------------------------------------------- stopping rule
def test_groups_far_apart_are_settled():
    df = _world(offsets=(0.0, 40.0), noise=(10.0, 10.0), labelled=(25, 25))
    plan = plan_labels(df, "lp", 60, score="chrf", human="lab")
    assert plan.status == "settled" and "is settled at 0.95 confidence" in plan.verdict
    gap = plan.gaps.iloc[0]
    assert gap["higher"] == "en-zh" and gap["gap"] == pytest.approx(40, abs=8)


def test_without_labels_the_rule_says_it_cannot_judge():
    plan = plan_labels(_world(), "lp", 50, score="chrf", target=PlanTarget(residual_sd=10.0))
    assert plan.status == "unknown" and plan.groups["se_after"].tolist() == pytest.approx([10 / 5, 10 / 5])


def test_groups_within_noise_ask_for_more_and_that_many_settle_it_in_simulation():
    """A world whose estimated gap is its true gap (2 points, residual sd 10, 30 labels a group: z = 0.8):
    the rule asks for N more per group for power 0.8; labelling N more per group settles the ranking in
    about 80% of fresh label draws, and a quarter of N far less often."""
    truth = 2.0
    df = _world(offsets=(0.0, truth), noise=(10.0, 10.0), labelled=(30, 30), n_seg=400, exact=True)
    plan = plan_labels(df, "lp", 62, score="chrf", human="lab")
    assert plan.status == "more"
    more = plan.more_per_group
    assert set(more) == {"en-de", "en-zh"} and more["en-de"] == more["en-zh"]
    n_more = plan.groups.set_index("group")["to_add"] + more["en-de"]
    assert 250 < n_more["en-de"] + 30 < 600  # (z 1.96 + 0.84)^2 * 2 * 10^2 / 2^2 = 392 labels per group in all

    def settled_share(extra: dict, reps: int, seed: int) -> float:
        rng = np.random.default_rng(seed)
        hits = 0
        for _ in range(reps):
            sim = df.copy()
            for g, k in extra.items():
                free = np.flatnonzero((sim["lp"].to_numpy() == g) & sim["lab"].isna().to_numpy())
                rows = rng.choice(free, size=k, replace=False)
                off = truth if g == "en-zh" else 0.0
                sim.loc[rows, "lab"] = off + sim.loc[rows, "chrf"].to_numpy() + 10 * rng.normal(size=k)
            hits += plan_labels(sim, "lp", int(sim["lab"].notna().sum()) + 1, score="chrf", human="lab").status \
                == "settled"
        return hits / reps

    asked = {g: int(n) for g, n in n_more.items()}
    assert settled_share(asked, 60, 1) >= 0.65
    assert settled_share({g: n // 4 for g, n in asked.items()}, 60, 2) <= 0.5


# ----------------------------------------------------------------------------------- CLI
def test_cli_round_trip(tmp_path, capsys):
    df = _world(labelled=(20, 20))
    df["hypothesis"] = [f'He said "hi" to {i}' if i % 7 == 0 else f"hyp {i}" for i in range(len(df))]
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    out = tmp_path / "rows.tsv"
    args = ["calibrate", "plan", str(path), "--score", "chrf", "--by", "lp", "--human", "lab", "--budget", "100",
            "--seed", "4", "-o", str(out)]
    assert main([*args, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["to_add"] == 60 and sum(g["to_add"] for g in payload["groups"]) == 60
    assert payload["status"] in ("settled", "planned", "more") and payload["method"].startswith("Equal allocation")
    by_pandas = pd.read_csv(out, sep="\t")
    by_xleval = read_table(out)
    assert len(by_pandas) == 60 and list(by_pandas.columns) == ["row_id", "lp", "system", "seg_id", "doc_id",
                                                                "hypothesis", "human"]
    assert by_pandas["hypothesis"].tolist() == by_xleval["hypothesis"].tolist() \
        == df.loc[by_pandas["row_id"], "hypothesis"].tolist()
    assert by_pandas["human"].isna().all() and df.loc[by_pandas["row_id"], "lab"].isna().all()
    assert by_pandas.groupby("lp").size().tolist() == [g["to_add"] for g in payload["groups"]]
    again = tmp_path / "again.tsv"
    assert main([*args[:-1], str(again)]) == 0
    assert again.read_text() == out.read_text()
    assert "verdict:" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    (["--budget", "40"], "--budget 40 is not more than the labels already collected (40)"),
    (["--budget", "0"], "--budget"),
    (["--budget", "50", "--rows", "best"], "--rows"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, extra, message):
    path = tmp_path / "t.tsv"
    _world(labelled=(20, 20)).to_csv(path, sep="\t", index=False)
    assert main(["calibrate", "plan", str(path), "--score", "chrf", "--human", "lab", *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_rows_systems_are_even_over_systems_counting_the_labels_there():
    df = _world(systems=(4, 4), labelled=(0, 0))
    df.loc[df.index[(df.lp == "en-de") & (df.system == "s0")][:6], "lab"] = 1.0  # s0 of en-de has 6 already
    df.loc[df.index[(df.lp == "en-de") & (df.system == "s1")][:1], "lab"] = 2.0
    plan = plan_labels(df, "lp", 47, score="chrf", human="lab", draw=LabelDraw(rows="systems", random_state=0))
    g = plan.groups.set_index("group")
    have = df[df.lab.notna()].groupby(["lp", "system"]).size()
    total = plan.rows.groupby(["lp", "system"]).size().add(have, fill_value=0)
    en_de = total["en-de"].sort_index().tolist()
    # water-filling: s0 keeps its 6 and gets nothing, the others are filled up evenly
    assert plan.rows[(plan.rows.lp == "en-de") & (plan.rows.system == "s0")].empty
    assert en_de[0] == 6 and max(en_de[1:]) - min(en_de[1:]) <= 1
    assert total["en-zh"].max() - total["en-zh"].min() <= 1 and g["planned"].sum() == 47


def test_cli_warnings_reach_json_and_rows_go_to_stdout(tmp_path, capsys):
    path = tmp_path / "t.tsv"
    df = _world(systems=(10, 10), labelled=(0, 0))
    df.to_csv(path, sep="\t", index=False)
    assert main(["calibrate", "plan", str(path), "--score", "chrf", "--budget", "12", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert any("does not reach one label for every system" in w for w in payload["warnings"])
    assert payload["status"] == "unknown" and payload["to_add"] == 12
    assert main(["calibrate", "plan", str(path), "--score", "chrf", "--budget", "30", "-o", "-"]) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out), sep="\t")
    assert len(rows) == 30 and rows.groupby(["lp", "system"]).size().min() >= 1


def _plan_sd(df, **kwargs):
    return plan_labels(df, "lp", 200, human="lab", **kwargs).groups.set_index("group")[["residual_sd", "level"]]


def test_the_plans_map_reads_an_error_rate_score_as_lower_is_better():
    """TER rises as quality falls: with the human scale named (higher is better), the plan's map of the labels is
    the same map as on the negated score, so its residual sds and levels are the same. Read as higher-is-better
    (the plan's map before it took the one direction rule), the labels' falling slope would be 'against the
    direction' and set to 0, and the residual sds would take in all of the score's spread."""
    df = _world(labelled=(80, 80), seed=3)
    df["ter"] = 100.0 - df["chrf"]
    df["negated"] = -df["ter"]
    ter = _plan_sd(df, score="ter", human_scale="esa")
    negated = _plan_sd(df, score="negated", human_scale="esa")
    np.testing.assert_allclose(ter["residual_sd"], negated["residual_sd"], rtol=1e-9)
    np.testing.assert_allclose(ter["level"], negated["level"], rtol=1e-9)
    # the map uses the score: about the noise sd 10, not sqrt(10^2 + 17^2) as a flat map's would be
    assert (ter["residual_sd"] < 0.7 * df["chrf"].std()).all(), ter


def test_the_plans_map_takes_the_direction_of_the_named_human_scale(monkeypatch):
    """The plan fits the labels there are with the map `calibrate fit --human-scale` builds: MQM error points
    (all at least 0) are lower-is-better, ESA higher; without a name the labels decide (None). Before, the plan
    never passed a direction, so where few labels could not settle it the map had no slope."""
    from xleval.calibration import _plan

    built = []
    original = _plan.build_anchored

    def spy(*args, **kwargs):
        built.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(_plan, "build_anchored", spy)
    df = _world(labelled=(12, 12), seed=1)
    mqm = df.assign(lab=30.0 - 0.1 * df["lab"])  # error points: fall as the adequacy the world scores rises
    for table, scale, expected in ((mqm, "mqm", False), (df, "esa", True), (mqm, None, None)):
        plan_labels(table, "lp", 200, human="lab", score="chrf", human_scale=scale)
        assert built[-1]["human_higher_is_better"] is expected and built[-1]["score_higher_is_better"] is True
