"""One contract, every calibrator: the same checks run against LGN and AnchoredCalibrator (fit returns
self, transform before fit is refused, save/load round-trips, interval(level=) brackets transform,
one source per row, the metric signature recorded), a refused fit leaves the calibrator as it was,
and an EvalTable is accepted wherever a DataFrame is."""
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import (
    LGN,
    AnchoredCalibrator,
    Calibrator,
    LegacyAnchoredCalibrator,
    apply_calibrator,
    load_calibrator,
    output_metadata,
)
from xleval.decision import fit_calibration
from xleval.exceptions import InputError, ModelFileError, NotFittedError
from xleval.table import EvalTable

SIG = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


def _fitted(make, df):
    """``make()`` fitted on ``df`` (the fit's notes on small groups are not what these tests check)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make().fit(df)


def _table(n_per_cell=20, seed=0) -> pd.DataFrame:
    """Three pairs x four systems, every tenth row labelled by a human on another scale."""
    rng = np.random.default_rng(seed)
    rows = []
    for lp, offset in (("en-de", 40.0), ("en-fr", 55.0), ("en-zh", 25.0)):
        for s in range(4):
            quality = rng.normal(0, 3)
            for _ in range(n_per_cell):
                chrf = offset + quality + rng.normal(0, 8)
                rows.append({"lp": lp, "system": f"sys{s}", "chrf": chrf,
                             "human": 60 + 0.8 * (chrf - offset) + 2 * quality + rng.normal(0, 4)})
    df = pd.DataFrame(rows)
    df.loc[df.index % 10 != 0, "human"] = np.nan
    return df


CALIBRATORS = {"LGN": lambda: LGN(by="lp", score="chrf", min_count=1),
               "AnchoredCalibrator": lambda: AnchoredCalibrator(by="lp", score="chrf", human="human")}


@pytest.fixture(params=sorted(CALIBRATORS))
def make(request):
    return CALIBRATORS[request.param]


def test_both_calibrators_satisfy_the_protocol(make):
    assert isinstance(make(), Calibrator)
    assert isinstance(LegacyAnchoredCalibrator(), Calibrator)
    assert not isinstance(pd.DataFrame(), Calibrator)


def test_fit_returns_self_and_records_the_signature(make):
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert model.fit(_table(), signature=SIG) is model
    assert model.signature_ == SIG


def test_transform_before_fit_is_refused(make):
    with pytest.raises(NotFittedError):
        make().transform(_table())


def test_save_and_load_give_the_same_transform(make, tmp_path):
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(df, signature=SIG)
    model.save(tmp_path / "m.json")
    loaded = type(model).load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.transform(df), model.transform(df))
    np.testing.assert_array_equal(load_calibrator(tmp_path / "m.json").transform(df), model.transform(df))
    assert loaded.signature_ == SIG


def test_interval_at_level_brackets_the_calibrated_score_and_narrows_with_the_level(make):
    df = _table()
    model = _fitted(make, df)
    point = model.transform(df)
    low, high = model.interval(df, level=0.95)
    assert (low <= point).all() and (point <= high).all() and (high > low).all()
    low80, high80 = model.interval(df, level=0.8)
    assert (high80 - low80 < high - low).all()


def test_one_source_per_row_naming_the_group_columns(make):
    df = _table()
    model = _fitted(make, df)
    sources = model.sources(df)
    assert len(sources) == len(df) and set(sources) == {"lp"}


def test_the_sklearn_signature_ignores_y_and_takes_groups_from_by(make):
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = make().fit(df).transform(df)
        with_y = make().fit(df, df["chrf"].to_numpy()[::-1]).transform(df)  # a y never becomes the groups
    np.testing.assert_array_equal(with_y, plain)


def test_an_eval_table_is_accepted_as_a_frame_is(make):
    df = _table()
    table = EvalTable.from_frame(df, score="chrf", by="lp", human="human", system="system")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_frame = make().fit(df).transform(df)
        from_table = make().fit(table).transform(table)
    np.testing.assert_array_equal(from_table, from_frame)
    with pytest.raises(InputError, match="groups by"):
        make().fit(EvalTable.from_frame(df, score="chrf", by="system"))


def _refusing(model) -> pd.DataFrame:
    """A table this calibrator must refuse: every score constant (no map can be fitted)."""
    return _table().assign(chrf=50.0)


def test_a_refused_refit_leaves_the_first_fit(make):
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(df, signature=SIG)
        before = model.transform(df)
        state = sorted(k for k in vars(model) if k.endswith("_"))
        with pytest.raises(InputError):
            model.fit(_refusing(model).assign(lp="xx"), signature="other")
        assert sorted(k for k in vars(model) if k.endswith("_")) == state
        np.testing.assert_array_equal(model.transform(df), before)
    assert model.signature_ == SIG


def test_a_refused_first_fit_leaves_it_unfitted(make):
    model = make()
    with pytest.raises(InputError):
        model.fit(_refusing(model))
    with pytest.raises(NotFittedError):
        model.transform(_table())
    assert not [k for k in vars(model) if k.endswith("_")]


def test_anchored_refit_refused_after_setting_its_groups_keeps_old_groups():
    """The refusal comes after the new groups (and level) were read: none of them may stay."""
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = AnchoredCalibrator(by="lp", score="chrf").fit(df)
        before = model.transform(df)
        refit = df.assign(human=np.where(df.index == 0, 70.0, np.nan))  # one label: refused after by_/level_ are set
        model.set_params(by=["lp", "system"])
        with pytest.raises(InputError, match="at least 2"):
            model.fit(refit)
        model.set_params(by="lp")
    assert model.by_ == ["lp"]
    np.testing.assert_array_equal(model.transform(df), before)


def test_apply_and_metadata_go_through_one_path(make):
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make().fit(df, signature=SIG)
        out = apply_calibrator(model, df, interval=0.9)
    name = f"chrf_{model.kind}"
    np.testing.assert_array_equal(out[name].to_numpy(), model.transform(df))
    assert {f"{name}_low", f"{name}_high", "calibration_source"} <= set(out.columns)
    signature = output_metadata(model, "-")["signatures"][name]
    assert signature.startswith(f"{model.kind}|") and "|by:lp|" in signature and signature.endswith(f"|of:{SIG}")


def test_fit_calibration_builds_what_the_method_names_and_auto_decides():
    df = _table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lgn = fit_calibration(df, "lgn", score="chrf", by="lp")
        anchored = fit_calibration(df, "anchored", score="chrf", by="lp", human="human")
        auto = fit_calibration(df, score="chrf", by="lp", human="human")  # human given: auto
        table = fit_calibration(EvalTable.from_frame(df, score="chrf", by="lp", human="human", system="system"))
    assert (lgn.method, type(lgn.model)) == ("lgn", LGN)
    assert lgn.min_count == 50 and "segment rows" in lgn.min_count_reason  # 80 rows per pair, 20 per system
    assert (anchored.method, type(anchored.model), anchored.min_count) == ("anchored", AnchoredCalibrator, None)
    assert auto.requested == "auto" and auto.method == "anchored" and auto.decision.method == "anchored"
    assert table.method == "anchored"
    np.testing.assert_array_equal(auto.model.transform(df), anchored.model.transform(df))
    with pytest.raises(InputError, match="min_count= is an LGN option"):
        fit_calibration(df, "anchored", score="chrf", by="lp", human="human", min_count=5)


def test_fit_calibration_min_count_follows_the_table_level():
    seg = _table(n_per_cell=20)
    systems = seg.groupby(["lp", "system"], as_index=False)["chrf"].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = fit_calibration(systems, "lgn", score="chrf", by="lp")
    assert fitted.min_count == 1 and "table of system scores" in fitted.min_count_reason


def test_a_format_1_file_loads_into_the_legacy_class():
    data = Path(__file__).parent / "data" / "anchored_v1_isotonic.json"
    model = load_calibrator(data)
    assert isinstance(model, LegacyAnchoredCalibrator) and isinstance(model, Calibrator)
    assert not hasattr(AnchoredCalibrator(), "legacy_")
    with pytest.raises(ModelFileError, match="format version 1"):
        model.interval(pd.DataFrame({"tgt_lang": ["de"], "score": [0.5]}))
