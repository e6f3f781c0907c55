"""Review of ``xleval check-outputs`` and the output checks: intervals that hold their own rate, tables that do not
depend on the order of the rows, ``--by`` with the system column or a list of columns, rows without a reference,
reference copies named, the systems emptied by ``--exclude-invalid`` under any ``--system``, and every threshold
reachable from the command line."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.output_checks import check_outputs, exclude_invalid, wilson_interval

SOURCES = [
    "The committee said on Tuesday that it would publish its findings early next year.",
    "Police in the city asked residents to stay at home while the storm passed over the coast.",
    "The company reported higher profits after a strong quarter for its cloud business.",
    "Thousands of people gathered in the main square to celebrate the victory of their team.",
    "The minister promised to build new schools and hospitals in the northern regions.",
    "Scientists found that the glacier is melting faster than any model had predicted.",
]
GERMAN = [
    "Der Ausschuss sagte am Dienstag, er werde seine Ergebnisse Anfang nächsten Jahres veröffentlichen.",
    "Die Polizei der Stadt bat die Bewohner, zu Hause zu bleiben, während der Sturm über die Küste zog.",
    "Das Unternehmen meldete höhere Gewinne nach einem starken Quartal für sein Cloud-Geschäft.",
    "Tausende Menschen versammelten sich auf dem Hauptplatz, um den Sieg ihrer Mannschaft zu feiern.",
    "Der Minister versprach, in den nördlichen Regionen neue Schulen und Krankenhäuser zu bauen.",
    "Wissenschaftler fanden heraus, dass der Gletscher schneller schmilzt, als jedes Modell vorhergesagt hatte.",
]


def _table(n_seg: int = 24) -> pd.DataFrame:
    """en-de, three systems: 'good' (the reference with a word changed), 'copy' (the source), 'ref' (the
    reference itself, on every row)."""
    rows = []
    for i in range(n_seg):
        src, ref = SOURCES[i % len(SOURCES)] + f" ({i})", GERMAN[i % len(GERMAN)] + f" ({i})"
        rows.append(("good", i + 1, src, ref, ref.replace("Der ", "Ein ", 1).replace("Die ", "Eine ", 1) + " ja"))
        rows.append(("copy", i + 1, src, ref, src))
        rows.append(("ref", i + 1, src, ref, ref))
    return pd.DataFrame(rows, columns=["system", "seg_id", "source", "reference", "hypothesis"]).assign(lp="en-de")


# ---------------------------------------------------------------------------------------------- intervals
def test_a_rate_of_zero_or_one_lies_inside_its_interval():
    # the Wilson bounds at count 0 and count n are exactly 0 and 1 (Wilson 1927): centre -/+ half cancel there
    low, high = wilson_interval(np.array([0, 7, 7]), np.array([7, 7, 150]))
    assert low[0] == 0.0 and high[1] == 1.0
    assert 0 < low[2] < 7 / 150 < high[2] < 1
    result = check_outputs(_table(), langid="none")
    rates = result.rates.dropna(subset=["rate"])
    # every interval holds its own rate (the old lower bound at 0 of 150 was 1.7e-18 > 0)
    assert ((rates["ci_low"] <= rates["rate"]) & (rates["rate"] <= rates["ci_high"])).all()
    zero = rates[rates["count"] == 0]
    assert len(zero) and (zero["ci_low"] == 0.0).all()


# ---------------------------------------------------------------------------------------------- row order
def test_the_tables_do_not_depend_on_the_order_of_the_rows():
    df = pd.concat([_table(), _table().assign(lp="en-cs")], ignore_index=True)
    shuffled = df.sample(frac=1.0, random_state=3).reset_index(drop=True)
    a = check_outputs(df, langid="none", by="lp")
    b = check_outputs(shuffled, langid="none", by="lp")
    for name in ("rates", "group_rates"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    # and the order is the sorted one, not the first appearance of each group
    keys = list(zip(a.rates["lp"], a.rates["system"], strict=True))
    flags = list(dict.fromkeys(a.rates["flag"]))
    assert keys[:6] == sorted(set(keys))[:6] and flags == list(a.checked)


def test_the_text_table_comes_in_the_sorted_order_too(tmp_path):
    # WMT21's segments: de-en's systems that cs-en also has (Facebook-AI, Online-*) were printed before de-en's own
    # (Borderline, ...): the text table's pivot ordered each key by its first appearance in the whole table
    first = _table().assign(lp="cs-en")
    second = pd.concat([_table().assign(lp="de-en"), _table().assign(lp="de-en", system="another")],
                       ignore_index=True)
    path = tmp_path / "t.csv"
    pd.concat([first, second], ignore_index=True).to_csv(path, index=False)
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none", "--by", "lp")
    assert rc == 0, err
    rows = [line.split("│")[1:3] for line in out.splitlines() if line.startswith("│")]
    keys = [(lp.strip(), system.strip()) for lp, system in rows][:7]
    assert keys == [("cs-en", "copy"), ("cs-en", "good"), ("cs-en", "ref"), ("de-en", "another"), ("de-en", "copy"),
                    ("de-en", "good"), ("de-en", "ref")]
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    checked = check_outputs(first, langid="none").checked
    assert [h.strip() for h in header.split("┃")[3:-1]] == [f"{f} %" for f in checked]


# ---------------------------------------------------------------------------------------------- --by
def test_by_the_system_column_is_one_key(tmp_path):
    result = check_outputs(_table(), by="system", langid="none")
    assert list(result.rates.columns[:2]) == ["system", "flag"]
    assert set(result.rates["system"]) == {"good", "copy", "ref"}
    path = tmp_path / "t.csv"
    _table().to_csv(path, index=False)
    for fmt in ("text", "json"):
        rc, _, err = run_cli("check-outputs", str(path), "--by", "system", "--langid", "none", "--format", fmt)
        assert rc == 0, err
        assert "Traceback" not in err


def test_by_takes_a_list_of_columns_as_every_command_does(tmp_path):
    path = tmp_path / "t.csv"
    _table().assign(domain="news").to_csv(path, index=False)
    rc, out, err = run_cli("check-outputs", str(path), "--by", "lp,domain", "--langid", "none", "--format", "tsv")
    assert rc == 0, err
    assert out.splitlines()[0].split("\t")[:4] == ["lp", "domain", "system", "flag"]


# ---------------------------------------------------------------------------------------------- missing references
def test_rows_without_a_reference_are_checked_as_in_a_table_without_references():
    pytest.importorskip("py3langid")
    df = _table()
    df = df[df["system"] != "ref"]
    no_column = check_outputs(df.drop(columns="reference"), flags=["off_target", "extreme_length"])
    empty_cells = check_outputs(df.assign(reference=np.nan), flags=["off_target", "extreme_length"])
    # the copied English source is off-target for German on every row, whether the reference cells are empty
    # or the column is absent (the old code checked no row: an empty reference is 'identified' as some language)
    copy = empty_cells.rates.query("system == 'copy' and flag == 'off_target'").iloc[0]
    assert copy["n"] == 24 and copy["count"] == 24
    pd.testing.assert_frame_equal(empty_cells.rates, no_column.rates)
    assert (empty_cells.flags["length_z"].notna()).all()


# ---------------------------------------------------------------------------------------------- reference copies
def test_check_outputs_names_a_system_that_copies_the_reference(tmp_path):
    df = _table().replace({"system": {"ref": "ref\tB\x1b[31m"}})
    result = check_outputs(df, langid="none")
    named = [n for n in result.notes if "copies of the reference" in n]
    assert len(named) == 1 and repr("ref\tB\x1b[31m") in named[0] and "'good'" not in named[0]
    path = tmp_path / "t.jsonl"
    df.to_json(path, orient="records", lines=True)
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none", "--format", "json")
    assert rc == 0, err
    assert any("copies of the reference" in n for n in json.loads(out)["notes"])
    assert "copies of the reference" in err and "\x1b" not in err


# ---------------------------------------------------------------------------------------------- --exclude-invalid
def test_a_system_whose_every_row_is_excluded_is_named_under_any_system_column(tmp_path):
    df = _table().rename(columns={"system": "model"})
    df = df[df["model"] != "ref"].assign(hypothesis=lambda d: d["hypothesis"].where(d["model"] != "copy", ""))
    _, summary = exclude_invalid(df, system="model", langid="none")
    assert summary.emptied == (("en-de", "copy"),)
    path = tmp_path / "t.csv"
    df.assign(score=50.0).to_csv(path, index=False)
    rc, out, err = run_cli("leaderboard", str(path), "--system", "model", "--score", "score", "--exclude-invalid",
                           "--n-resamples", "20", "--format", "json", "--method", "lgn")
    assert rc == 0, err
    assert "every row of system 'copy' in en-de was flagged" in out + err


# ---------------------------------------------------------------------------------------------- thresholds
def test_every_threshold_is_reachable_from_the_command_line(tmp_path):
    path = tmp_path / "t.csv"
    _table().to_csv(path, index=False)
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none", "--format", "json", "--truncated-z", "1.5",
                           "--min-letters", "7", "--near-copy", "60", "--length-z", "3")
    assert rc == 0, err
    payload = json.loads(out)
    assert (payload["truncated_z"], payload["min_letters"], payload["near_copy"], payload["length_z"]) == (1.5, 7, 60,
                                                                                                          3)
    rc, _, err = run_cli("check-outputs", str(path), "--langid", "none", "--min-letters", "-1")
    assert rc == 2 and "Traceback" not in err


# ---------------------------------------------------------------------------------------------- effects
def test_the_off_target_effect_compares_rows_whose_language_was_checked():
    pytest.importorskip("py3langid")
    df = _table()
    df = df[df["system"] != "ref"].copy()
    # short outputs (fewer than 20 letters: never checked for language) with a score unlike every other row
    short = df[df["system"] == "good"].head(6).assign(system="short", hypothesis="Ja.")
    df = pd.concat([df, short], ignore_index=True)
    df["score"] = np.where(df["system"] == "copy", 10.0, np.where(df["system"] == "short", 90.0, 50.0))
    df.loc[df.index[::5], "score"] += 1.0  # some spread, so the Welch interval exists
    result = check_outputs(df, metrics=["score"], flags=["off_target"])
    effect = result.effects.iloc[0]
    checked = result.flags["langid_checked"].to_numpy(bool)
    off = result.flags["off_target"].to_numpy(bool)
    assert not checked[df["system"].to_numpy() == "short"].any()
    # the oracle: the mean over the checked rows that are not flagged (the short rows are not among them)
    expected = df["score"].to_numpy()[checked & ~off].mean()
    assert effect["n_unflagged"] == int((checked & ~off).sum())
    assert effect["mean_unflagged"] == pytest.approx(expected)
