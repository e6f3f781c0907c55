"""Review of the translation-tax audit and the judges' agreement: bad input gets one clear line, names from the data
are shown as they are, and the numbers do not depend on how a name is spelt or where a row stands."""
import itertools
import json

import numpy as np
import pandas as pd
import pytest

from xleval.audit import AUDIT_RESAMPLING, AnswerParser, audit, prepare_audit_table, render_checklist
from xleval.audit._plots import plot_estimates, plot_parser_validity
from xleval.exceptions import InputError
from xleval.judges import judge_agreement

FAST = AUDIT_RESAMPLING.with_(n_resamples=50)
EVIL = "evil|pipe\nnew\x1b[31mred<script>x</script>*_"


def _table(n_items=12, models=("m1", "m2"), seed=0, conditions=("source", "back_translated")):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"item_id": f"i{i}", "model": m, "condition": c, "correct": int(rng.random() < 0.6)}
                         for m in models for i in range(n_items) for c in conditions])


def _one_line_error(result, *needles):
    rc, _, err = result
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("xleval: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], err


# ---------------------------------------------------------------------------------------------------- audit table
def test_a_model_named_pooled_is_refused():
    # the models-averaged contrast is the model "pooled": a model of that name gave two rows "pooled"
    df = _table(models=("m1", "pooled"))
    with pytest.raises(InputError, match="named 'pooled'"):
        audit(df, resampling=FAST, n_permutations=99)


@pytest.mark.parametrize("column", ["item_id", "model"])
def test_an_empty_item_or_model_is_refused(column):
    df = _table()
    df[column] = df[column].astype(object)
    df.loc[3, column] = None  # was the item (or model) "nan", or a TypeError on sorting
    with pytest.raises(InputError, match=rf"column '{column}' row 4 is empty"):
        prepare_audit_table(df)


def test_a_model_with_two_families_is_refused_whatever_the_row_order():
    df = _table(models=("m1", "m2", "m3"))
    df["model_family"] = df["model"].map({"m1": "fA", "m2": "fB", "m3": "fB"})
    df.loc[0, "model_family"] = "fC"  # the first row of m1 decided its family, reversed rows decided otherwise
    for frame in (df, df.iloc[::-1].reset_index(drop=True)):
        with pytest.raises(InputError, match="model 'm1' has"):
            prepare_audit_table(frame)


def test_an_item_with_two_subjects_is_refused_and_a_missing_subject_is_taken_from_the_item():
    df = _table()
    df["subject"] = np.where(df["item_id"].isin(["i0", "i1", "i2"]), "law", "math")
    bad = df.copy()
    bad.loc[(bad["item_id"] == "i0") & (bad["condition"] == "back_translated"), "subject"] = "math"
    with pytest.raises(InputError, match="item_id 'i0' has"):
        prepare_audit_table(bad)
    gap = df.astype({"subject": object})
    gap.loc[gap["condition"] == "back_translated", "subject"] = None  # a log without doc.subject beside one with
    got = prepare_audit_table(gap).groupby("item_id")["subject"].unique()
    assert all(len(v) == 1 for v in got) and got["i0"][0] == "law" and got["i5"][0] == "math"


def test_an_infinite_or_inconsistent_residual_is_refused():
    df = _table()
    df["residual"] = df["item_id"].str[1:].astype(float) % 3
    inf = df.copy()
    inf.loc[2, "residual"] = np.inf
    with pytest.raises(InputError, match="residual' row 3"):
        prepare_audit_table(inf)
    two = df.copy()
    two.loc[0, "residual"] = 9.0  # item i0 rated 9 in one row and 0 in the others was averaged to 4.5
    with pytest.raises(InputError, match="item_id 'i0' has"):
        prepare_audit_table(two)


@pytest.mark.parametrize(("text", "letter"), [
    ("Año 2020: la respuesta es C", "C"),      # "Año" is a word, not the answer A
    ("Déjà vu. Antwort: B", "B"),
    ("Dès le début, la réponse est C", "C"),
    ("答案是B", "B"),                           # other scripts still leave a letter standalone
    ("**B**", "B"),
    ("Ｃ です", "C"),
])
def test_the_answer_letter_is_not_read_from_inside_an_accented_latin_word(text, letter):
    assert AnswerParser().parse(text) == letter


# ---------------------------------------------------------------------------------------------------- outputs
def test_the_checklist_shows_names_as_they_are_on_one_line():
    res = audit(_table(models=(EVIL, "m2")), resampling=FAST, n_permutations=99)
    text = render_checklist(res)
    assert "\x1b" not in text and "<script>" not in text
    table = [line for line in text.splitlines() if line.startswith("| ") and " | 12 | 12 | 1.000 |" in line]
    assert len(table) == 4  # the validity table: 2 models x 2 conditions, one line each (a newline split one)
    for line in table:
        cells = line.replace("\\|", "").split("|")[1:-1]
        assert len(cells) == 6, line  # the | in the name is escaped, not a seventh cell
    # markdown shows "\x0a" for "\\x0a" and a character for its backslash escape: the name as on the terminal
    assert r"evil\|pipe\\x0anew\\x1b\[31mred\<script\>x\</script\>\*\_" in text


def test_the_figures_draw_control_characters_as_escapes():
    res = audit(_table(models=(EVIL, "m2")), resampling=FAST, n_permutations=99)
    labels = [t.get_text() for t in plot_estimates(res).axes[0].get_yticklabels()]
    labels += [t.get_text() for t in plot_parser_validity(res).axes[0].get_xticklabels()]
    hit = [label for label in labels if "evil" in label]
    assert len(hit) == 2 and all("\n" not in h and "\x1b" not in h and "\\x1b" in h for h in hit)


# ---------------------------------------------------------------------------------------------------- CLI
def test_lm_eval_records_with_more_choices_than_letters_get_one_line(tmp_path, cli):
    f = tmp_path / "m" / "samples_big_2025.jsonl"
    f.parent.mkdir()
    rec = {"doc_id": 0, "target": 2, "filtered_resps": [[-float(k + 1), False] for k in range(11)] + [[0.0, True]]}
    f.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    _one_line_error(cli("audit", f"source={f}", f"back_translated={f}"), "12 choices")


def test_an_empty_rating_is_refused_naming_the_ratings_file(tmp_path, cli):
    table = tmp_path / "audit.tsv"
    _table().to_csv(table, sep="\t", index=False)
    ratings = tmp_path / "ratings.tsv"
    ratings.write_text("item_id\trater\trating\ni0\tr1\t3\ni0\tr2\t\ni1\tr1\t4\ni1\tr2\t5\n", encoding="utf-8")
    _one_line_error(cli("audit", table, "--ratings", ratings, "--n-resamples", "20"),
                    "ratings.tsv", "'rating' row 2 is empty")


def test_a_bad_cell_in_the_second_input_is_named_by_its_file_and_row(tmp_path, cli):
    df = _table()
    first, second = tmp_path / "m1.tsv", tmp_path / "m2.tsv"
    df[df["model"] == "m1"].to_csv(first, sep="\t", index=False)
    part = df[df["model"] == "m2"].copy()
    part.iloc[5, part.columns.get_loc("correct")] = 7
    part.to_csv(second, sep="\t", index=False)
    _one_line_error(cli("audit", first, second), "m2.tsv", "'correct' row 6")


# ---------------------------------------------------------------------------------------------------- judges
def _pairwise_oracle(df, a, b, unit_cols):
    means = df.groupby(unit_cols)[[a, b]].mean()
    pairs = list(itertools.combinations(range(len(means)), 2))
    same = [np.sign(means[a].iloc[i] - means[a].iloc[j]) == np.sign(means[b].iloc[i] - means[b].iloc[j])
            for i, j in pairs]
    return len(means), float(np.mean(same))


def test_pooled_units_are_not_merged_by_a_tab_in_a_name():
    # ("x\ty", "z") and ("x", "y\tz") read "x\ty\tz" when joined by a tab: two systems were counted as one
    df = pd.DataFrame({"lp": ["x\ty"] * 4 + ["x"] * 4, "system": ["z", "z", "w", "w", "y\tz", "y\tz", "v", "v"],
                       "A": [1, 2, 3, 4, 5, 6, 7, 8.0], "B": [1, 2, 3, 4, 8, 7, 6, 5.0]})
    pooled = judge_agreement(df, ["A", "B"]).table.query("group == '*'").iloc[0]
    units, pairwise = _pairwise_oracle(df, "A", "B", ["lp", "system"])
    assert pooled["systems"] == units == 4
    assert pooled["pairwise"] == pytest.approx(pairwise)


def test_a_score_outside_the_fixed_classes_is_refused(tmp_path, cli):
    df = pd.DataFrame({"lp": "en-de", "system": list("ABAB"), "J1": [10, 250, 40, 60.0], "J2": [10, 90, 40, 60.0]})
    with pytest.raises(InputError, match="score 250 is outside"):  # was put in the top class: kappa 1.0
        judge_agreement(df, ["J1", "J2"], bins=[0, 33, 66, 100.01])
    path = tmp_path / "j.tsv"
    df.to_csv(path, sep="\t", index=False)
    _one_line_error(cli("judges", "agree", path, "--judges", "J1,J2", "--bins", "0,33,66,100.01"), "j.tsv", "250")


def test_a_segment_given_twice_is_refused():
    df = pd.DataFrame({"lp": "en-de", "system": ["a", "b", "a", "b", "a"], "seg_id": [1, 1, 2, 2, 1],
                       "A": [1, 2, 3, 4, 5.0], "B": [1, 3, 2, 4, 5.0]})
    with pytest.raises(InputError, match="data rows 1 and 5 both hold segment 1 of system 'a' in lp 'en-de'; keep one "
                                         "row per lp, system, seg_id"):
        judge_agreement(df, ["A", "B"])


def test_one_seg_id_in_two_pairs_of_a_group_is_two_segments():
    # WMT25 by tgt_lang: cs-de and en-de share seg_ids in de-DE, and `xleval report --by tgt_lang` (whose --judges
    # is auto) was refused: "both hold segment 'MUL0088#1' of system 'AyaExpanse-32B' in tgt_lang 'de-DE'"
    df = pd.DataFrame({"lp": ["cs-de"] * 4 + ["en-de"] * 4, "system": list("abab") * 2, "seg_id": [1, 1, 2, 2] * 2,
                       "A": [1, 2, 3, 4, 5, 6, 7, 9.0], "B": [1, 3, 2, 4, 5, 7, 6, 9.0]})
    agreement = judge_agreement(df.assign(tgt_lang="de"), ["A", "B"], by="tgt_lang")
    assert agreement.table.set_index("group").loc["de", "n"] == 8
    with pytest.raises(InputError, match="data rows 1 and 9 both hold segment 1 of system 'a' in tgt_lang 'de', lp "
                                         "'cs-de'; keep one row per tgt_lang, lp, system, seg_id"):
        judge_agreement(pd.concat([df, df.iloc[:1]], ignore_index=True).assign(tgt_lang="de"), ["A", "B"],
                        by="tgt_lang")


def test_the_command_line_names_its_options_for_the_policy_and_the_letters(tmp_path, cli):
    """`--invalid foo` was refused naming the library's `invalid_policy`; a five-choice lm-eval log was refused with
    "set the parser's letters", which names no option."""
    table = tmp_path / "t.tsv"
    _table().to_csv(table, sep="\t", index=False)
    _one_line_error(cli("audit", table, "--invalid", "foo"), "--invalid", "'foo' is not one of 'wrong', 'exclude'")
    log = tmp_path / "samples_five.jsonl"
    log.write_text("".join(json.dumps({"doc_id": i, "target": 4, "filtered_resps": [[-1.0, False]] * 4 + [[0.0, True]]})
                           + "\n" for i in range(5)), encoding="utf-8")
    _one_line_error(cli("audit", f"source@m={log}", f"translated@m={log}"),
                    "'E' is not one of the answer letters 'ABCD'", "(--letters ABCDE)")
    table_of = pd.DataFrame({"item_id": ["a", "b"], "model": "m", "condition": "source", "response": ["E", "A"],
                             "answer": ["E", "A"]})
    with pytest.raises(InputError, match=r"the letters the items use \(letters='ABCDE'\)"):
        prepare_audit_table(table_of, AnswerParser())
