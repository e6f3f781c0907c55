"""Reference copies (issue 34, item 2): a system whose outputs are the reference is found once per (group,
system), named by every command that scores, fits, selects labels, ranks, meta-evaluates or reports, and left
out of all but scoring unless --keep-reference-copies. The thresholds are checked on WMT21, where no MT system
and no second human translation (ref-B) comes near them."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import InputError
from xleval.output_checks import drop_reference_copies, reference_copies

FLAG = "--keep-reference-copies"


def _hand() -> pd.DataFrame:
    """Group x: system C equals the reference on 12 of 12 rows (with case, punctuation and spacing changed
    on some), B on 5 of 12; group y: C on 9 of 12 rows (75%: under 80%, and fewer than 10 rows)."""
    rows = []
    for lp, n_same_c in (("x-en", 12), ("y-en", 9)):
        for i in range(12):
            ref = f"The reference sentence number {i} of {lp}."
            rows.append((lp, "A", i, ref, f"A different output {i}."))
            rows.append((lp, "B", i, ref, ref if i < 5 else f"B output {i}"))
            same = ref.upper().replace(".", " !") if i % 2 else ref
            rows.append((lp, "C", i, ref, same if i < n_same_c else f"C output {i}"))
    return pd.DataFrame(rows, columns=["lp", "system", "seg_id", "reference", "hypothesis"])


def test_the_rule_on_a_hand_checkable_table():
    found = reference_copies(_hand())
    cells = found.cells.set_index(["group", "system"])
    # counted by hand from _hand(): x/C 12 of 12, x/B 5 of 12, y/C 9 of 12 (share .75 < .8, and 9 < 10 rows)
    assert cells.loc[("x-en", "C"), "identical"] == 12 and cells.loc[("x-en", "B"), "identical"] == 5
    assert cells.loc[("y-en", "C"), "share"] == pytest.approx(0.75)
    assert found.copies == (("x-en", "C"),)
    kept, again = drop_reference_copies(_hand())
    assert len(kept) == 72 - 12 and not ((kept["lp"] == "x-en") & (kept["system"] == "C")).any()
    assert again == found
    assert len(drop_reference_copies(_hand(), keep=True)[0]) == 72
    assert reference_copies(_hand(), by="system").copies == (("C", "C"),)  # grouped by the system: 21 of 24
    assert reference_copies(_hand(), min_rows=9).copies == (("x-en", "C"),)
    assert reference_copies(_hand(), min_share=0.75, min_rows=9).copies == (("x-en", "C"), ("y-en", "C"))
    # B has 5 of 12 in both groups
    assert reference_copies(_hand(), min_share=0.4, min_rows=5).copies == (("x-en", "B"), ("x-en", "C"),
                                                                             ("y-en", "B"), ("y-en", "C"))


def test_without_texts_nothing_is_found_and_bad_thresholds_are_refused():
    found = reference_copies(_hand().drop(columns="reference"))
    assert not found.checked and found.copies == () and "'reference'" in found.notes[0]
    for bad in ({"min_share": 0}, {"min_share": 1.5}, {"min_rows": 0}, {"min_rows": True}):
        with pytest.raises(InputError):
            reference_copies(_hand(), **bad)


def test_wmt21_no_real_system_is_a_copy_and_a_kept_reference_is(wmt21_segments):
    """The thresholds against WMT21's 229 (pair, system) cells: the most any MT system shares with ref-A is
    10.4% (fr-de Online-W), the second human translation ref-B 0.5-2.1%: none is a copy. A kept ref-A
    ("refA", hypothesis = reference) is a copy in every pair, and so is one whose punctuation and case differ."""
    df = wmt21_segments[["lp", "system", "seg_id", "reference", "hypothesis"]]
    found = reference_copies(df)
    assert found.copies == ()
    cells = found.cells.set_index(["group", "system"])
    assert cells["share"].max() == pytest.approx(107 / 1026)  # fr-de Online-W: 107 of 1026 lines
    assert cells.loc[("fr-de", "Online-W"), "identical"] == 107
    assert cells.loc[[("cs-en", "ref-B"), ("de-en", "ref-B"), ("ru-en", "ref-B")], "share"].tolist() == \
        pytest.approx([0.005, 0.007, 0.021])
    pairs = df[df["lp"].isin(["cs-en", "ru-en", "zh-en"])]
    one = pairs.drop_duplicates(["lp", "seg_id"])
    refa = one.assign(system="refA", hypothesis=one["reference"])
    loose = one.assign(system="refA-loose", hypothesis=one["reference"].str.lower().str.replace(",", " ,"))
    found = reference_copies(pd.concat([pairs, refa, loose], ignore_index=True))
    assert set(found.copies) == {(lp, s) for lp in ("cs-en", "ru-en", "zh-en") for s in ("refA", "refA-loose")}


# ------------------------------------------------------------------------------------------ the commands
def _table(wmt21_segments) -> pd.DataFrame:
    """Two WMT21 pairs, four MT systems each plus ref-A kept as a system ("refA"), 120 segments, DA raw."""
    df = wmt21_segments[wmt21_segments["lp"].isin(["cs-en", "ru-en"]) & (wmt21_segments["seg_id"] <= 120)]
    systems = ["Online-A", "Online-B", "Online-G", "Online-W"]
    df = df[df["system"].isin(systems)][["lp", "system", "seg_id", "source", "reference", "hypothesis",
                                         "human_raw"]]
    # judged like a system (WMT's human rows are): Online-A's DA scores, so meta would count it
    refa = df[df["system"] == "Online-A"].assign(system="refA", hypothesis=lambda x: x["reference"])
    return pd.concat([df, refa], ignore_index=True).rename(columns={"human_raw": "human"})


@pytest.fixture(scope="module")
def scored(tmp_path_factory, wmt21_segments):
    folder = tmp_path_factory.mktemp("copies")
    _table(wmt21_segments).to_csv(folder / "in.tsv", sep="\t", index=False)
    rc, _, err = run_cli("score", folder / "in.tsv", "-m", "chrf", "-o", folder / "scored.tsv")
    assert rc == 0, err
    return folder, _flat(err)


def _flat(text: str) -> str:
    """stderr as one line: the console wraps long notes."""
    return " ".join(text.split())


def test_score_names_the_copy_and_scores_it(scored):
    folder, err = scored
    assert "'refA' in cs-en (100.0% of 120 rows)" in err and "'refA' in ru-en" in err
    assert "scored like every system" in err
    # the command line's words: the flag the later commands take, never the library's argument
    assert f"unless told {FLAG}" in err and "keep_reference_copies=" not in err
    df = pd.read_csv(folder / "scored.tsv", sep="\t")
    assert (df.loc[df["system"] == "refA", "chrf"] == 100).all()  # what a copy scores against its reference


def test_leaderboard_leaves_it_out_and_says_so(scored):
    folder, _ = scored
    rc, out, err = run_cli("leaderboard", folder / "scored.tsv", "--score", "chrf", "--format", "json")
    assert rc == 0, err
    board = json.loads(out)
    assert "refA" not in {r["system"] for r in board["rows"]}
    assert any("'refA' in cs-en" in n and FLAG in n for n in board["notes"])
    rc, out, err = run_cli("leaderboard", folder / "scored.tsv", "--score", "chrf", "--format", "json", FLAG)
    board = json.loads(out)
    first = {r["group"]: r["system"] for r in sorted(board["rows"], key=lambda r: -r["raw"])[::-1]}
    assert set(first.values()) == {"refA"}  # kept: first in both pairs, as issue 34 saw
    assert any("kept as asked" in n for n in board["notes"])


def test_select_sends_no_copy_to_annotators(scored):
    folder, _ = scored
    rc, _, err = run_cli("calibrate", "select", folder / "scored.tsv", "--budget", "200", "--score", "chrf",
                           "-o", folder / "pick.tsv", "--seed", "3")
    assert rc == 0, err
    picked = pd.read_csv(folder / "pick.tsv", sep="\t")
    assert len(picked) == 2 * 200 and "refA" not in set(picked["system"])
    assert "'refA' in cs-en" in _flat(err)
    rc, _, err = run_cli("calibrate", "select", folder / "scored.tsv", "--budget", "480", "--score", "chrf",
                         "-o", folder / "pick2.tsv", FLAG)
    assert rc == 0, err
    assert "refA" in set(pd.read_csv(folder / "pick2.tsv", sep="\t")["system"])


def test_fit_leaves_it_out(scored):
    folder, _ = scored
    rc, out, err = run_cli("calibrate", "fit", folder / "scored.tsv", "--score", "chrf", "--method", "lgn",
                           "-o", folder / "lgn.json", "--format", "json")
    assert rc == 0, err
    payload = json.loads(out)
    assert any("'refA' in ru-en" in w for w in payload["warnings"])
    assert {g["group"]: g["n"] for g in payload["groups"]} == {"cs-en": 4 * 120, "ru-en": 4 * 120}  # no refA row


def test_meta_leaves_it_out(scored):
    folder, _ = scored
    rc, out, err = run_cli("meta", folder / "scored.tsv", "--metrics", "chrf", "--human", "human", "--format",
                           "json", "--n-resamples", "50")
    assert rc == 0, err
    assert "'refA' in cs-en" in _flat(err) and "left out" in _flat(err)
    sys_n = {c["group"]: c["n"] for c in json.loads(out)["cells"] if c["statistic"] == "sys_pearson"}
    assert sys_n == {"cs-en": 4, "ru-en": 4}
    assert any("'refA' in cs-en" in w for w in json.loads(out)["warnings"])
    rc, out, err = run_cli("meta", folder / "scored.tsv", "--metrics", "chrf", "--human", "human", "--format",
                           "json", "--n-resamples", "50", FLAG)
    assert {c["group"]: c["n"] for c in json.loads(out)["cells"] if c["statistic"] == "sys_pearson"} == \
        {"cs-en": 5, "ru-en": 5}


def test_report_names_it(scored):
    folder, _ = scored
    rc, _, err = run_cli("report", folder / "scored.tsv", "--score", "chrf", "-o", folder / "r.json", "--format",
                           "json", "--n-resamples", "50")
    assert rc == 0, err
    report = json.loads((folder / "r.json").read_text())
    text = json.dumps(report)
    assert "Reference copies" in text and "'refA' in cs-en" in text
    assert all(r.get("system") != "refA" for r in report.get("leaderboard") or [])


def test_plan_sends_no_copy_and_its_row_ids_point_into_the_input(scored):
    folder, _ = scored
    df = pd.read_csv(folder / "scored.tsv", sep="\t").sort_values(["lp", "seg_id", "system"], ignore_index=True)
    df.loc[df.index % 10 == 0, "human"] = df["human"]  # keep a tenth of the labels as those already collected
    df.loc[df.index % 10 != 0, "human"] = float("nan")
    df.to_csv(folder / "few.tsv", sep="\t", index=False)
    rc, _, err = run_cli("calibrate", "plan", folder / "few.tsv", "--score", "chrf", "--human", "human", "--budget",
                         "200", "-o", folder / "plan.tsv", "--label-column", "judged")
    assert rc == 0, err
    assert "'refA' in cs-en" in _flat(err)
    rows = pd.read_csv(folder / "plan.tsv", sep="\t")
    assert len(rows) > 0 and "refA" not in set(rows["system"])
    # row_id is the position in few.tsv (refA rows included), not in the table without them
    back = df.loc[rows["row_id"]]
    assert back["system"].tolist() == rows["system"].tolist() and back["seg_id"].tolist() == rows["seg_id"].tolist()
    assert (df.index[df["system"] == "refA"] < rows["row_id"].max()).sum() > 100  # copies sat among the rows


def test_evaluate_leaves_it_out(scored):
    folder, _ = scored
    rc, out, err = run_cli("calibrate", "evaluate", folder / "scored.tsv", "--score", "chrf", "--human", "human",
                           "--human-scale", "da", "--folds", "4", "--repeats", "1", "--budget", "25", "--format",
                           "json")
    assert rc == 0, err
    result = json.loads(out)
    assert result["n_systems"] == 8  # 4 per pair, refA left out
    assert any("'refA' in ru-en" in w for w in result["warnings"])
