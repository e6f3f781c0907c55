"""A warning the library raises is said to the user in words, once: the report command logs its warnings as
"Category: message" for its own alerts, and the command line printed the class name too ("warning:
RepeatedKeysWarning: ..."); its calibrated column repeats the score's keys, so one repeated key was said a third
time, about a column the user never made (``chrf_calibrated``)."""
import numpy as np
import pandas as pd


def _table_with_a_repeated_key(path) -> None:
    rng = np.random.default_rng(0)
    rows = []
    for g, level in (("de-en", 70.0), ("ru-en", 60.0), ("zh-en", 55.0)):
        for s, quality in (("A", 5.0), ("B", 0.0), ("C", -5.0)):
            for i in range(30):
                score = level + quality + rng.normal(0, 8)
                rows.append({"lp": g, "system": s, "seg_id": i + 1, "chrf": score,
                             "human": score + 10 + rng.normal(0, 5) if i < 12 else np.nan})
    frame = pd.DataFrame(rows)
    repeat = frame.iloc[[0]].assign(chrf=frame["chrf"].iloc[0] + 3, human=frame["human"].iloc[0] + 3)
    pd.concat([frame, repeat], ignore_index=True).to_csv(path, sep="\t", index=False)


def test_the_report_says_a_repeated_key_once_per_column_without_its_class_name(tmp_path, cli):
    src = tmp_path / "t.tsv"
    _table_with_a_repeated_key(src)
    result = cli("report", src, "--score", "chrf", "--human", "human", "--n-resamples", "50",
                 "-o", tmp_path / "r.html")
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "Warning:" not in said  # no class name
    assert said.count("repeat with different scores in 'chrf'") == 1
    assert said.count("repeat with different human scores in 'human'") == 1
    assert "chrf_calibrated" not in said


def test_only_a_class_name_is_taken_off():
    from xleval.exceptions import without_category

    assert without_category("DataQualityWarning: 3 rows dropped") == "3 rows dropped"
    assert without_category("note: kept whole") == "note: kept whole"
    assert without_category("de-en: 3 rows") == "de-en: 3 rows"
    assert without_category("Warning: a word, not a class") == "Warning: a word, not a class"
