"""Answer parsing and parser validity."""
import numpy as np
import pandas as pd
import pytest

from xleval.audit import AnswerParser, parser_validity, prepare_audit_table
from xleval.exceptions import InputError


@pytest.mark.parametrize("text, letter", [
    ("答案是B", "B"), ("**C**", "C"), ("Answer: D", "D"), ("The answer is (A).", "A"),
    ("I think A, not B", "A"), ("Because it is", None), ("", None), (None, None), (np.nan, None),
    ("答案：Ｃ", "C"),  # full-width letter folded by NFKC
    ("the answer is b", None),  # lower case is not an answer letter under the default rule
    ("ABCD", None),  # letters inside a word are not standalone
])
def test_default_rule_first_standalone_letter(text, letter):
    assert AnswerParser().parse(text) == letter


def test_custom_pattern_and_letters():
    p = AnswerParser(pattern=r"Answer:\s*\(?([A-E])", letters="ABCDE")
    assert p.parse("A long story. Answer: (E)") == "E"
    assert p.parse("A long story.") is None
    assert "regex" in p.description
    with pytest.raises(InputError, match="regular expression"):
        AnswerParser(pattern="([A-D]")


def test_validity_rates_and_flags():
    df = pd.DataFrame({
        "item_id": [f"q{i}" for i in range(20)] * 2,
        "model": ["m1"] * 20 + ["m2"] * 20,
        "condition": "translated",
        "answer": "A",
        "response": ["A"] * 20 + ["A"] * 18 + ["no idea", ""],
    })
    frame = prepare_audit_table(df)
    v = {x.model: x for x in parser_validity(frame, threshold=0.95)}
    assert (v["m1"].n_valid, v["m1"].rate, v["m1"].flagged) == (20, 1.0, False)
    assert (v["m2"].n_valid, v["m2"].rate, v["m2"].flagged) == (18, 0.9, True)
    assert frame["correct"].isna().sum() == 2


def test_bad_answer_letter_is_an_input_error():
    df = pd.DataFrame({"item_id": ["q1"], "model": ["m"], "condition": ["source"], "answer": ["E"], "response": ["E"]})
    with pytest.raises(InputError, match="row 1"):
        prepare_audit_table(df)


def test_unknown_conditions_are_named_with_the_valid_ones():
    df = pd.DataFrame({"item_id": ["q1", "q1", "q2"], "model": "m", "answer": "A", "response": "A",
                       "condition": ["source", "back-translation", "zh_mt"]})
    with pytest.raises(InputError) as err:
        prepare_audit_table(df)
    msg = str(err.value)
    assert "row 2" in msg and "'back-translation'" in msg and "'zh_mt'" in msg
    assert "source, translated, back_translated, native, naturalized" in msg and "backtranslated" in msg


def test_conditions_no_estimator_can_use_are_an_error():
    from xleval.audit import audit

    df = pd.DataFrame({"item_id": ["q1", "q2"] * 2, "model": "m", "correct": [1, 0, 1, 1],
                       "condition": ["source", "source", "translated", "translated"]})
    with pytest.raises(InputError, match=r"no estimator can run.*E1 needs source and back_translated"):
        audit(df)
