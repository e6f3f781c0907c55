"""xleval.io.select_rows: the COLUMN=VALUE row filter behind ``xleval fairness gaps --where``."""
from __future__ import annotations

import pandas as pd
import pytest

from xleval.exceptions import InputError
from xleval.io import read_table, select_rows


@pytest.fixture
def systems() -> pd.DataFrame:
    return pd.DataFrame({"lp": ["en-de", "en-de", "zh-en", "zh-en", "en-de"],
                         "system": ["A", "ref", "A", "B", "B"],
                         "is_human": [False, True, False, False, False],
                         "n": [3, 3, 7, 7, 30]})


def test_all_conditions_must_hold_and_the_index_is_kept(systems):
    kept = select_rows(systems, ["lp=en-de", "is_human=False"])
    assert kept.index.tolist() == [0, 4]
    assert kept["system"].tolist() == ["A", "B"]


def test_values_compare_as_text(systems):
    # a boolean and an integer column match their spelling on the command line; 3 is not 30
    assert select_rows(systems, ["is_human=True"])["system"].tolist() == ["ref"]
    assert select_rows(systems, ["n=3"]).index.tolist() == [0, 1]


def test_no_conditions_keep_every_row(systems):
    assert select_rows(systems, []) is systems
    assert select_rows(systems, None) is systems


def test_value_may_hold_an_equals_sign():
    df = pd.DataFrame({"expr": ["a=b", "a"]})
    assert select_rows(df, ["expr=a=b"]).index.tolist() == [0]


@pytest.mark.parametrize("condition, message", [
    ("lp", "expected COLUMN=VALUE"),
    ("language=en-de", "expected COLUMN=VALUE with a column of the table (['lp', 'system', 'is_human', 'n'])"),
    ("system=C", "leaves no rows; values of 'system' are e.g. ['A', 'B', 'ref']"),
])
def test_bad_conditions_are_input_errors(systems, condition, message):
    with pytest.raises(InputError, match=None) as info:
        select_rows(systems, [condition])
    assert message in str(info.value)


def test_a_condition_that_empties_a_previous_selection_is_an_error(systems):
    with pytest.raises(InputError, match="leaves no rows"):
        select_rows(systems, ["lp=zh-en", "system=ref"])


def test_read_text_table_then_select(tmp_path):
    # text tables keep every cell as read; the filter sees the file's spelling
    path = tmp_path / "t.tsv"
    path.write_text("lang\tsplit\tscore\nde\ttest\t1\nde\tdev\t2\nfr\ttest\t3\n", encoding="utf-8")
    assert select_rows(read_table(path), ["split=test"])["score"].tolist() == [1, 3]


def test_a_side_of_the_pair_is_read_from_lp_as_every_command_derives_it():
    """`--where src_lang=en` on a table with `lp` only (WMT21's systems.csv): refused as no column before, so the
    docs' out-of-English example filtered in Python what the printed command could not."""
    table = pd.DataFrame({"lp": ["en-de", "de-en", "en-zh", "zh-en", "EN-ja"], "chrf": [1.0, 2, 3, 4, 5]})
    assert select_rows(table, ["src_lang=en"])["lp"].tolist() == ["en-de", "en-zh", "EN-ja"]
    assert select_rows(table, ["tgt_lang=EN"])["lp"].tolist() == ["de-en", "zh-en"]  # codes compared normalised
    with pytest.raises(InputError, match="leaves no rows"):
        select_rows(table, ["src_lang=fr"])
    with pytest.raises(InputError, match="expected COLUMN=VALUE with a column of the table"):
        select_rows(table.rename(columns={"lp": "pair"}), ["src_lang=en"])
