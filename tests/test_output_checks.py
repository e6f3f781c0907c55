"""Output checks (issue 27, item 4): every flag on a hand-checkable table, the intervals against statsmodels and
scipy, the command line, and on WMT21 the recovery of constructed failures (outputs replaced by the source or by an
English sentence in a seeded share of rows) and how chrF and BLEU react to them."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from xleval.exceptions import InputError, MissingDependencyError
from xleval.output_checks import FlagThresholds, check_outputs, exclude_invalid, flag_outputs, wilson_interval

ENGLISH = "The committee said on Tuesday that it would publish its findings early next year."


def _tiny() -> pd.DataFrame:
    src = "Der Ausschuss sagte am Dienstag, er werde seine Ergebnisse Anfang nächsten Jahres veröffentlichen."
    ref = "Le comité a déclaré mardi qu'il publierait ses conclusions au début de l'année prochaine."
    good = "Le comité a indiqué mardi qu'il publierait ses résultats au début de l'an prochain."
    rows = [
        ("A", 1, src, ref, good),  # fine
        ("A", 2, src, ref, "   "),  # empty
        ("A", 3, src, ref, src.upper()),  # exact copy after normalisation (case)
        ("A", 4, src, ref, ref + " "),  # identical to the reference
        ("A", 5, src, ref, "Le comité a déclaré mardi qu'il"),  # cut off mid-sentence: short, no final mark
        ("A", 6, src, ref, ENGLISH),  # English: off-target for a French target
        ("A", 7, "Reuters", "Reuters", "Reuters"),  # the reference copies the source: copying it is right
    ]
    rows += [("B", i, src, ref, good.replace("mardi", f"mardi {i}")) for i in range(1, 30)]
    df = pd.DataFrame(rows, columns=["system", "seg_id", "source", "reference", "hypothesis"])
    return df.assign(lp="de-fr")


def test_each_flag_on_a_hand_checkable_table():
    pytest.importorskip("py3langid")
    table, checked, _, identifier = flag_outputs(_tiny())
    assert identifier.startswith("py3langid==")
    assert set(checked) == {"empty", "copy_source", "identical_reference", "extreme_length", "truncated", "off_target"}
    first = table.iloc[:7]
    assert first["empty"].tolist() == [False, True, False, False, False, False, False]
    assert first["copy_source"].tolist() == [False, False, True, False, False, False, False]
    assert first["identical_reference"].tolist() == [False, False, False, True, False, False, True]
    assert first["truncated"].tolist() == [False, False, False, False, True, False, False]
    assert first["off_target"].tolist() == [False, False, True, False, False, True, False]  # the copy is German
    assert first["hyp_lang"].iloc[5] == "en" and first["hyp_lang"].iloc[0] == "fr"
    assert not first["langid_checked"].iloc[[1, 6]].any()  # empty; under 20 letters
    assert not table["copy_source"].iloc[7:].any() and not table["off_target"].iloc[7:].any()


def test_a_near_copy_is_closer_to_the_source_than_to_the_reference():
    from xleval.metrics import CHRF

    src = "Premier League: Man United und Chelsea für Champions League qualifiziert"
    ref = "Premier League: Man United and Chelsea qualify for Champions League"
    right = "Premier League: Man United and Chelsea qualified for Champions League"  # names: near the source too
    lazy = "Premier League: Man United und Chelsea for Champions League qualifiziert"  # one word translated
    chrf = CHRF()
    assert chrf.sentence_score(right, [src]).score >= 50 and chrf.sentence_score(lazy, [src]).score >= 70
    df = pd.DataFrame({"lp": "de-en", "source": src, "reference": ref, "hypothesis": [right, lazy]})
    table, *_ = flag_outputs(df, langid="none")
    assert table["copy_source"].tolist() == [False, True]
    # without a reference only the threshold decides: the lazy copy still flagged
    table, *_ = flag_outputs(df.drop(columns="reference"), langid="none", thresholds=FlagThresholds(near_copy=70))
    assert table["copy_source"].tolist()[1]


def test_an_english_target_accepts_nigerian_pidgin_and_chinese_its_members():
    from xleval.output_checks._langid import accepts

    assert accepts("en", "pcm") and accepts("zh", "wuu") and accepts("zh-Hant", "yue") and accepts("en-GB", "en")
    assert not accepts("pcm", "en") and not accepts("de", "en") and not accepts("ha", "pcm")


def test_the_label_list_is_the_installed_models():
    pytest.importorskip("py3langid")
    from py3langid.langid import MODEL_FILE
    from py3langid.langid import LanguageIdentifier as Model

    from xleval.output_checks._langid import PY3LANGID_LABELS

    assert set(Model.from_model_file(MODEL_FILE).labels) == PY3LANGID_LABELS


def test_missing_source_skips_its_flags_and_says_so_unless_asked_for():
    df = _tiny().drop(columns="source")
    result = check_outputs(df, langid=None)
    assert "copy_source" in result.skipped and "truncated" in result.skipped and "off_target" in result.skipped
    assert any("copy_source not checked: the table has no source column" in n for n in result.notes)
    assert "extreme_length" in result.checked  # measured against the reference
    with pytest.raises(InputError, match="flags='copy_source' needs the source column 'source'"):
        check_outputs(df, flags=["copy_source"], langid=None)


def test_unknown_target_language_is_refused():
    pytest.importorskip("py3langid")
    with pytest.raises(InputError, match=r"tgt_lang 'chr': the language identifier py3langid does not know"):
        flag_outputs(_tiny().assign(lp="de-chr"))


def test_missing_extra_names_it(monkeypatch):
    import builtins
    import importlib.util

    real_import, real_find = builtins.__import__, importlib.util.find_spec

    def no_langid(name, *args, **kwargs):
        if name.startswith("py3langid"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_langid)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "py3langid" else
                        real_find(name, *a))
    with pytest.raises(MissingDependencyError, match=r"pip install 'xleval\[langid\]'"):
        flag_outputs(_tiny(), langid="py3langid")
    # asked for by default ('auto'): the other flags are checked, and the note says how to add the identifier
    kept, summary = exclude_invalid(_tiny())
    assert summary.n_excluded == 3 and len(kept) == len(_tiny()) - 3  # empty, copy, truncated
    assert summary.notes == ("off_target not checked: no language identifier is installed; install one with pip "
                             "install 'xleval[langid]'",)
    # a target language the identifier does not know is refused without the model (or the extra)
    with pytest.raises(InputError, match="the language identifier py3langid does not know this language"):
        flag_outputs(_tiny().assign(lp="de-chr"), langid="py3langid")


def test_wilson_interval_equals_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.proportion")
    count, n = np.array([0, 3, 50, 997]), np.array([10, 40, 1000, 1000])
    low, high = wilson_interval(count, n, 0.9)
    ref_low, ref_high = sm.proportion_confint(count, n, alpha=0.1, method="wilson")
    np.testing.assert_allclose(low, ref_low, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, atol=1e-12)


def test_effects_are_welch_intervals():
    from scipy import stats

    rng = np.random.default_rng(3)
    df = _tiny()
    df = pd.concat([df] * 3, ignore_index=True)
    df["chrf"] = rng.normal(50, 10, len(df))
    result = check_outputs(df, metrics=["chrf"], langid=None, level=0.9)
    row = result.effects.query("flag == 'empty' and metric == 'chrf'").iloc[0]
    mask = df["hypothesis"].str.strip() == ""
    test = stats.ttest_ind(df.loc[mask, "chrf"], df.loc[~mask, "chrf"], equal_var=False)
    ci = test.confidence_interval(0.9)
    assert row["n_flagged"] == 3 and row["n_unflagged"] == len(df) - 3
    assert math.isclose(row["difference"], df.loc[mask, "chrf"].mean() - df.loc[~mask, "chrf"].mean())
    assert math.isclose(row["ci_low"], ci.low) and math.isclose(row["ci_high"], ci.high)
    rates = result.rates.query("flag == 'empty'").set_index("system")
    assert rates.loc["A", "count"] == 3 and rates.loc["A", "n"] == 21 and rates.loc["B", "count"] == 0


def test_cli_json_tsv_and_rows(tmp_path):
    path = tmp_path / "t.tsv"
    _tiny().to_csv(path, sep="\t", index=False)
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none", "--format", "json", "--rows",
                           str(tmp_path / "rows.tsv"))
    assert rc == 0, err
    payload = json.loads(out)
    assert payload["checked"] == ["empty", "copy_source", "identical_reference", "extreme_length", "truncated"]
    assert "flags" not in payload and payload["identifier"] is None
    rows = pd.read_csv(tmp_path / "rows.tsv", sep="\t")
    assert len(rows) == len(_tiny()) and rows["empty"].sum() == 1
    assert "off_target not checked" in err
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none", "--format", "tsv")
    assert rc == 0 and out.splitlines()[0].split("\t")[:4] == ["lp", "system", "flag", "n"]


# --------------------------------------------------------------------------------------- WMT21
LPS = ("en-de", "en-ha", "zh-en", "en-ja")


def _constructed(seg: pd.DataFrame, lp: str, p_copy: float, p_english: float, seed: int):
    """One system's outputs of ``lp`` with a seeded share replaced by the source and another by an English
    sentence (into-English pairs: by a German one), with the row masks."""
    rows = seg[(seg["lp"] == lp)]
    rows = rows[rows["system"] == sorted(rows["system"].unique())[0]].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    n_copy, n_other = round(p_copy * len(rows)), round(p_english * len(rows))
    copy = np.zeros(len(rows), bool)
    other = np.zeros(len(rows), bool)
    copy[order[:n_copy]] = True
    other[order[n_copy:n_copy + n_other]] = True
    wrong = ENGLISH if not lp.endswith("-en") else ("Der Ausschuss sagte am Dienstag, er werde seine Ergebnisse "
                                                     "Anfang nächsten Jahres veröffentlichen.")
    hyp = rows["hypothesis"].where(~copy, rows["source"]).where(~other, wrong)
    return rows.assign(hypothesis=hyp), copy, other


@pytest.mark.parametrize("lp", LPS)
def test_constructed_failures_are_recovered_on_wmt21(wmt21_segments, lp):
    pytest.importorskip("py3langid")
    p_copy, p_other = 0.10, 0.05
    df, copy, other = _constructed(wmt21_segments, lp, p_copy, p_other, seed=27)
    base, _, _, _ = flag_outputs(wmt21_segments[wmt21_segments["system"].isin(df["system"].unique())
                                                & (wmt21_segments["lp"] == lp)].reset_index(drop=True))
    table, _, _, _ = flag_outputs(df)
    n = len(df)
    # the flags on the constructed rows (a copy of a source line that its reference copies is not flagged: rare)
    assert table["copy_source"][copy].mean() >= 0.97
    assert table["off_target"][other & table["langid_checked"].to_numpy()].mean() >= 0.99
    # the rate over the table: base rate on the untouched rows + the planted share, within 3 binomial SE
    for flag, planted in (("copy_source", copy), ("off_target", other | copy)):
        eligible = table["langid_checked"].to_numpy() if flag == "off_target" else np.ones(n, bool)
        untouched = ~(copy | other)
        expected = (base[flag].to_numpy()[untouched & eligible].sum() + planted[eligible].sum()) / eligible.sum()
        observed = table[flag].to_numpy()[eligible].mean()
        se = math.sqrt(expected * (1 - expected) / eligible.sum())
        assert abs(observed - expected) <= 3 * se + 1.0 / eligible.sum(), (flag, observed, expected)


@pytest.mark.parametrize("lp", ["en-de", "zh-en"])
def test_metrics_react_to_constructed_failures(wmt21_segments, lp):
    """chrF and BLEU (xleval's, sacrebleu-exact) of copied and English outputs: far below the other rows,
    with an interval below 0."""
    pytest.importorskip("py3langid")
    from xleval.metrics import BLEU, CHRF

    df, _, _ = _constructed(wmt21_segments, lp, 0.10, 0.05, seed=5)
    for name, metric in (("chrf", CHRF()), ("bleu", BLEU(tokenize="zh" if lp.endswith("zh") else "13a",
                                                        effective_order=True))):
        df[name] = metric.sentence_scores(df["hypothesis"].tolist(), [df["reference"].tolist()])
    result = check_outputs(df, metrics=["chrf", "bleu"])
    for flag in ("copy_source", "off_target"):
        for metric in ("chrf", "bleu"):
            row = result.effects.query(f"flag == '{flag}' and metric == '{metric}'").iloc[0]
            assert row["ci_high"] < 0 and row["mean_flagged"] < 0.5 * row["mean_unflagged"], (flag, metric)


# ------------------------------------------------------------------ hooks: --exclude-invalid, report --output-checks
def _two_groups(tmp_path):
    """_tiny in two pairs (de-fr, and de-it by relabelling) with a score column. System A's 7 rows hold an
    empty, a copied, a cut-off and an English output: 4 invalid in de-fr; in de-it the (French) references are
    not identified as Italian, so no row is checked for its language: 3 invalid (7 in all)."""
    rng = np.random.default_rng(0)
    df = pd.concat([_tiny(), _tiny().assign(lp="de-it")], ignore_index=True)
    df["score"] = rng.normal(50, 10, len(df))
    path = tmp_path / "t.tsv"
    df.to_csv(path, sep="\t", index=False)
    return df, path


def test_leaderboard_exclude_invalid_drops_and_says_so(tmp_path):
    pytest.importorskip("py3langid")
    df, path = _two_groups(tmp_path)
    rc, out, err = run_cli("leaderboard", str(path), "--score", "score", "--exclude-invalid", "--n-resamples", "20",
                           "--format", "json", "--method", "lgn")
    assert rc == 0, err
    board = json.loads(out)
    assert board["notes"][0] == (f"excluded 7 of {len(df)} rows flagged invalid by the output checks (empty 2, "
                                 "copy_source 2, off_target 2, truncated 2; see docs/output-checks.md)")
    cells = {(r["group"], r["system"]): r["n_segments"] for r in board["rows"]}
    assert cells[("de-fr", "A")] == 3 and cells[("de-it", "A")] == 4 and cells[("de-fr", "B")] == 29
    rc, out, _ = run_cli("leaderboard", str(path), "--score", "score", "--n-resamples", "20", "--format", "json",
                         "--method", "lgn")
    assert {(r["group"], r["system"]): r["n_segments"] for r in json.loads(out)["rows"]}[("de-fr", "A")] == 7


def test_calibrate_fit_exclude_invalid_fits_on_the_rest(tmp_path):
    pytest.importorskip("py3langid")
    df, path = _two_groups(tmp_path)
    rc, out, err = run_cli("calibrate", "fit", str(path), "--score", "score", "--by", "lp", "--exclude-invalid",
                           "-o", str(tmp_path / "m.json"), "--format", "json")
    assert rc == 0, err
    payload = json.loads(out)
    assert any(w.startswith("excluded 7 of 72 rows") for w in payload["warnings"])
    kept = df.drop(index=[1, 2, 4, 5, 37, 38, 40])
    groups = {g["group"]: g for g in payload["groups"]}
    for lp, rows in kept.groupby("lp"):
        assert groups[lp]["n"] == len(rows)
        assert math.isclose(groups[lp]["mean"], rows["score"].mean())


def test_report_output_checks_section(tmp_path):
    _, path = _two_groups(tmp_path)
    rc, _, err = run_cli("report", str(path), "--score", "score", "--by", "lp", "--output-checks", "--n-resamples",
                         "20", "-o", str(tmp_path / "r.json"), "--format", "json")
    assert rc == 0, err
    section = next(s for s in json.loads((tmp_path / "r.json").read_text())["sections"] if s["id"] == "output-checks")
    rates = {(r["lp"], r["flag"]): r for r in section["tables"][0]["rows"]}
    assert rates[("de-fr", "empty")]["flagged"] == 1 and rates[("de-fr", "empty")]["rows checked"] == 36
    assert {r["metric"] for r in section["tables"][-1]["rows"]} == {"score"}


def test_names_from_the_data_are_escaped_on_the_terminal(tmp_path):
    df = _tiny().assign(system=lambda d: d["system"].map({"A": "A\x1b[31mred", "B": "B\u202eevil"}))
    path = tmp_path / "t.jsonl"
    df.to_json(path, orient="records", lines=True)
    rc, out, err = run_cli("check-outputs", str(path), "--langid", "none")
    assert rc == 0, err
    assert "\x1b" not in out and "\u202e" not in out
    assert "A\\x1b[31mred" in out
