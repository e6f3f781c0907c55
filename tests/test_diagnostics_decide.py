"""The decision flow (``--method auto``) and diagnose's advice: anchored with labels everywhere, LGN
otherwise (loud unless its assumption is shown to hold), and no contradiction between the bias rule
and the validity verdict in the text."""
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.decision import DEFAULT_PROCEDURE, RECOMMENDED_LABELS, choose_method, diagnose
from xleval.diagnostics import check_lgn_validity, validity_verdict


def _table(offsets=(0.0, 0.0, 0.0), bias=(10.0, 0.0, -10.0), n_sys=5, n_seg=40, seed=0, parallel=False):
    rng = np.random.default_rng(seed)
    rows = []
    for g, (off, b) in enumerate(zip(offsets, bias, strict=False)):
        for s in range(n_sys):
            q = rng.normal()
            sources = [f"source {i}" if parallel else f"source {g}-{i}" for i in range(n_seg)]
            rows.append(pd.DataFrame({"lp": f"en-x{g}", "system": f"s{s}", "seg_id": np.arange(n_seg),
                                      "source": sources,
                                      "score": 50 + b + 5 * q + 5 * rng.normal(size=n_seg),
                                      "human": 70 + off + 3 * q + 5 * rng.normal(size=n_seg)}))
    return pd.concat(rows, ignore_index=True)


def test_labels_in_every_group_choose_anchored():
    df = _table()
    choice = choose_method(df, "score", "lp", human="human")
    assert choice.method == "anchored" and not choice.warn and choice.warning is None
    assert choice.labels_per_group == {"en-x0": 200, "en-x1": 200, "en-x2": 200}
    assert [s.step for s in choice.steps] == ["need", "bias", "human labels", "method"]
    assert "every group has human labels" in choice.summary()


def test_no_labels_choose_lgn_with_a_loud_warning_that_says_what_would_settle_it():
    df = _table().drop(columns="human")
    choice = choose_method(df, "score", "lp")
    assert choice.method == "lgn" and choice.warn
    assert choice.labels_needed == RECOMMENDED_LABELS
    assert f"budget={RECOMMENDED_LABELS}" in choice.warning and "en-x0" in choice.warning
    assert "fit_calibration(data, 'anchored'" in choice.warning


def test_no_labels_but_parallel_design_chooses_lgn_quietly():
    df = _table(parallel=True).drop(columns="human")
    choice = choose_method(df, "score", "lp")
    assert choice.method == "lgn" and not choice.warn and "holds by design" in choice.reason
    different = df[~((df.lp == "en-x2") & (df.system == "s4"))]  # one group lacks a system
    assert choose_method(different, "score", "lp").warn


def test_partial_labels_run_the_validity_check_on_the_labelled_groups():
    df = _table(offsets=(-10.0, 10.0, 0.0))
    df.loc[df.lp == "en-x2", "human"] = np.nan
    choice = choose_method(df, "score", "lp", human="human")
    assert choice.method == "lgn" and choice.warn
    assert choice.validity.status == "violated" and "en-x2" in choice.warning
    assert "erase" in choice.warning
    same = _table(offsets=(0.0, 0.0, 0.0), n_sys=20, n_seg=100)
    same.loc[same.lp == "en-x2", "human"] = np.nan
    quiet = choose_method(same, "score", "lp", human="human", system=None)  # segment level only
    assert quiet.validity.status == "holds" and not quiet.warn and "untested" in quiet.warning


def test_a_standardised_human_column_never_leads_to_anchoring_on_it():
    df = _table(offsets=(-10.0, 10.0, 0.0))
    df["human"] = df.groupby("lp")["human"].transform(lambda s: (s - s.mean()) / s.std())
    choice = choose_method(df, "score", "lp", human="human")
    assert choice.method == "lgn" and choice.warn and choice.validity.status == "uninformative"
    assert "standardised" in choice.warning


@pytest.mark.parametrize("offsets, human", [((0, 0, 0), None), ((-10, 10, 0), "human"), ((0, 0, 0), "human"),
                                            ((-10, 10, 0), "partial"), ((-10, 10, 0), "standardised")])
def test_advice_never_contradicts_the_verdict(offsets, human):
    df = _table(offsets=offsets)
    if human == "partial":
        df.loc[df.lp == "en-x2", "human"] = np.nan
    if human == "standardised":
        df["human"] = df.groupby("lp")["human"].transform(lambda s: (s - s.mean()) / s.std(ddof=0))
    column = None if human is None else "human"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows without a human score are counted in a warning
        result = diagnose(df, "score", "lp", human=column, procedure=DEFAULT_PROCEDURE.with_(n_resamples=50))
    advice = result.advice
    bad = result.verdict.status in ("violated", "uninformative")
    # a bad verdict never comes with plain LGN advice; anchored advice only with labels everywhere
    assert not (bad and advice.rstrip().endswith(")") and ": LGN (" in advice)
    if result.recommendation.method == "anchored":
        assert "use anchored calibration" in advice
    if bad:
        assert "LGN" not in advice or "not with LGN" in advice or "cannot say whether LGN" in advice \
            or "do not use LGN" in advice
    basis = result.recommendation.basis
    if basis == "rules":  # no measured effect: the 0.5-sd rule speaks
        assert result.bias.calibration_advised == advice.startswith("calibration advised")
    elif basis in ("evidence", "tie"):  # the measured effect speaks; the rule only qualifies it
        assert "out of fold" in advice and "-sd rule on score means alone" in advice
        assert advice.startswith("calibration not needed") == (result.recommendation.method == "none")
    else:
        assert basis == "standardised" and "standardised within groups" in advice


def test_verdict_is_the_worse_level_and_system_level_is_primary():
    rng = np.random.default_rng(5)
    rows = []
    for lang, shift in (("de", 0.0), ("zh", 0.1)):
        for s in range(12):
            quality = shift + rng.normal(0, 0.2)
            rows += [{"tgt_lang": lang, "system": f"s{s}", "human": quality + e} for e in rng.normal(0, 1, 40)]
    df = pd.DataFrame(rows)
    segment = check_lgn_validity(df, "tgt_lang", "human")
    system = check_lgn_validity(df, "tgt_lang", "human", system="system")
    verdict = validity_verdict(segment, system)
    assert verdict.primary is system and verdict.secondary is segment
    assert verdict.status == "violated" == system.status != segment.status
    assert verdict.reason.startswith("violated at system level (the worse of the two; segment level:")
    assert validity_verdict(segment).status == segment.status


def test_the_reminder_to_check_the_gap_against_humans_is_left_out_when_they_are_given(tmp_path):
    """The bias rule's reminder, 'a score gap may be real quality, not bias: check it against human scores (human=)',
    was printed by `diagnose --human labels`, whose diagnosis checks exactly that; without human scores it stays,
    and the command line names its flag, not the Python argument."""
    from conftest import run_cli

    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given = diagnose(df, "score", "lp", human="human")
        alone = diagnose(df.drop(columns="human"), "score", "lp")
    reminder = "a score gap may be real quality, not bias"
    assert given.bias.calibration_advised and alone.bias.calibration_advised  # the rule fires in both
    assert not any(r.startswith(reminder) for r in given.bias.reasons)
    assert sum(r.startswith(reminder) for r in alone.bias.reasons) == 1
    pairs = {"en-x0": "en-de", "en-x1": "en-ja", "en-x2": "en-cs"}  # the command line reads lp as a pair
    df.assign(lp=df["lp"].map(pairs)).to_parquet(tmp_path / "t.parquet")
    for extra, said in (((), 1), (("--human", "human"), 0)):
        rc, out, err = run_cli("diagnose", tmp_path / "t.parquet", "--score", "score", "--by", "lp",
                               "--n-resamples", "50", *extra)
        assert rc == 0, err
        assert out.count(reminder) == said and "(human=)" not in out
        assert said == 0 or "check it against human scores (--human) before trusting LGN" in out


def test_the_diagnosis_json_says_what_the_text_says(tmp_path):
    """`diagnose --format json` kept the library's words where the text said the command's: the recommendation's
    evidence still told the user given --human to 'check it against human scores (human=)', and a scale named
    on the command line (--human-scale da) read "human_scale='raw', as given", a name the user never gave."""
    import json

    from conftest import run_cli
    from xleval.decision import gather_evidence
    from xleval.diagnostics._validity import human_scale_check
    from xleval.table import as_table

    reminder = "a score gap may be real quality, not bias"
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labelled = gather_evidence(as_table(df, score="score", by="lp", human="human"))
        unlabelled = gather_evidence(as_table(df.assign(human=np.nan), score="score", by="lp", human="human"))
    assert not any(r.startswith(reminder) for r in labelled.bias.reasons)
    assert sum(r.startswith(reminder) for r in unlabelled.bias.reasons) == 1  # no label: nothing was checked
    h, groups = df["human"].to_numpy(), df["lp"].to_numpy()
    assert "(human_scale='da': a raw scale)" in human_scale_check(h, groups, "human", "da").reason
    assert "(human_scale='raw', as declared)" in human_scale_check(h, groups, "human", "raw").reason
    assert "(human_scale='da-z': a z scale)" in human_scale_check(h, groups, "human", "da-z").reason
    pairs = {"en-x0": "en-de", "en-x1": "en-ja", "en-x2": "en-cs"}
    df.assign(lp=df["lp"].map(pairs)).to_parquet(tmp_path / "t.parquet")
    rc, out, err = run_cli("diagnose", tmp_path / "t.parquet", "--score", "score", "--by", "lp", "--human", "human",
                           "--human-scale", "da", "--n-resamples", "50", "--format", "json")
    assert rc == 0, err
    assert reminder not in out and "human_scale=" not in out and "(human=)" not in out
    result = json.loads(out)
    assert result["recommendation"]["scale"]["reason"].endswith("(--human-scale da: a raw scale)")
