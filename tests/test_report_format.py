"""Numbers as people read them (one formatter for the HTML, the CLI text and the leaderboard text)."""
from __future__ import annotations

import math

import pytest

from xleval.report._format import format_column, format_number, format_p, format_rows, format_text, format_value


@pytest.mark.parametrize("p, text", [(0.0, "< 0.001"), (1.6e-8, "< 0.001"), (0.000999, "< 0.001"), (0.001, "0.0010"),
                                     (0.0341, "0.034"), (0.5, "0.50"), (1.0, "1.0"), (None, "–"), (math.nan, "–")])
def test_p_values_never_read_zero(p, text):
    assert format_p(p) == text
    assert format_column([p], "permutation p") == [text]


def test_counts_are_integers_and_noise_is_zero():
    assert format_value(9600) == "9600" and format_value(True) == "yes"
    assert format_value(1.86e-15) == "0"  # an in-sample calibrated mean's rounding noise
    assert format_column([80.0, 80.0 + 3e-14, 79.999999], "mean_after") == ["80.0", "80.0", "80.0"]
    assert format_column([2.0, 1.86e-15], "sd") == ["2.00", "0"]


def test_a_column_shares_one_precision():
    assert format_column([0.748, 0.000921, -0.0144, 0.0797], "calibrated") == ["0.748", "0.001", "-0.014", "0.080"]
    assert format_column([45.16, 36.61, 59.99, 7.0], "raw") == ["45.2", "36.6", "60.0", "7.0"]
    # a value that would round to 0 at the column's precision keeps significant digits of its own
    assert format_column([2799.4, 0.346], "statistic") == ["2799", "0.346"]
    # field/value tables hold a different statistic on each row: each value its own digits
    assert format_column([6.959, 0.346, 2799.4], "value") == ["6.96", "0.346", "2799"]


def test_rows_are_formatted_column_by_column():
    rows = [{"group": "de", "n": 10, "mean": 45.16, "p": 0.2}, {"group": "zh", "n": 12, "mean": 0.5, "p": 1e-9}]
    assert format_rows(["group", "n", "mean", "p"], rows) == [["de", "10", "45.2", "0.20"],
                                                               ["zh", "12", "0.5", "< 0.001"]]


def test_sentences_get_p_values_as_people_read_them():
    assert format_text("Kruskal-Wallis H = 2799, p = 0") == "Kruskal-Wallis H = 2799, p < 0.001"
    assert format_text("(Kruskal-Wallis p = 1.62e-08) by up to 2.28") == "(Kruskal-Wallis p < 0.001) by up to 2.28"
    assert format_text("not significantly (p = 0.697), d = 0.0001") == "not significantly (p = 0.697), d = 0.0001"
    assert format_number(float("inf")) == "inf" and format_number(-1234567890.0) == "-1.23e+09"
