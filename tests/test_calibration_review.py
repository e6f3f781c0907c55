"""Review of the calibrators (LGN's parameters and persistence, drift probes, `calibrate apply`): defects found
by using them, each checked against a hand computation or the documented behaviour."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN
from xleval.calibration._persist import checksum
from xleval.exceptions import DataQualityWarning, InputError


def _frame(n=300, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"lp": rng.choice(["en-de", "en-cs", "de-en"], n), "system": rng.choice(["a", "b", "c"], n),
                         "seg_id": np.arange(n), "score": rng.normal(50, 10, n)})


def _rewrite(path, edit):
    """Edit a saved calibrator and store a valid checksum again (a hostile or hand-made file passes it)."""
    payload = json.loads(path.read_text())
    del payload["checksum"]
    edit(payload)
    payload["checksum"] = checksum(payload)
    path.write_text(json.dumps(payload))


def _hand_z(df, rows):
    """LGN by lp over ``rows`` of ``df``, by hand: (x - mean_g) / sd_g with the population sd (ddof=0)."""
    g = df.loc[rows].groupby("lp")["score"]
    mean, sd = g.mean(), g.std(ddof=0)
    return ((df["score"] - df["lp"].map(mean)) / df["lp"].map(sd)).to_numpy()


def test_window_survives_save_and_load(tmp_path):
    """A sliding-window LGN saved and loaded, then updated, keeps the window: after batches 1-2 saved and batch 3
    added after loading, window=2 holds batches 2-3 (the fit in one process does). Before: the loaded calibrator
    forgot its batches and was fitted on batch 3 alone."""
    df = _frame()
    parts = [df.iloc[i * 100:(i + 1) * 100] for i in range(3)]
    model = LGN(by="lp", min_count=1, window=2)
    for part in parts[:2]:
        model.partial_fit(part)
    model.save(tmp_path / "w.json")
    loaded = LGN.load(tmp_path / "w.json")
    np.testing.assert_array_equal(loaded.transform(df), model.transform(df))  # bit-identical after loading
    loaded.partial_fit(parts[2])
    expected = _hand_z(df, df.index[100:300])
    np.testing.assert_allclose(loaded.transform(df), expected, rtol=1e-12)
    assert loaded.group_table()["n"].sum() == 200


@pytest.mark.parametrize("params, argument", [
    ({"sigma_floor": float("nan")}, "sigma_floor"), ({"sigma_floor": -1.0}, "sigma_floor"),
    ({"sigma_floor": "x"}, "sigma_floor"), ({"method": "quantile", "sketch_capacity": 0}, "sketch_capacity"),
    ({"method": "robust", "sketch_capacity": -3}, "sketch_capacity"), ({"sketch_capacity": "x"}, "sketch_capacity"),
])
def test_bad_parameters_are_refused_by_name(params, argument):
    """Parameters are validated at fit, as scikit-learn's estimators do, naming the argument. Before: a NaN
    sigma_floor said no group has a usable spread, a negative one was accepted, the others crashed with
    UFuncTypeError, IndexError or ValueError."""
    with pytest.raises(InputError, match=argument):
        LGN(by="lp", **params).fit(_frame())


@pytest.mark.parametrize("edit, what", [
    (lambda p: p.__setitem__("probe", {"x": 1}), "drift probe"),
    (lambda p: p.__setitem__("probe", {"column": "score", "key_columns": ["lp"], "scale": 1.0, "rows": [1]}),
     "drift probe"),
    (lambda p: p.__setitem__("probe", {"column": "score", "key_columns": "lp", "scale": 1.0, "rows": []}),
     "drift probe"),
    (lambda p: p.__setitem__("probe", {"column": "score", "key_columns": ["lp"], "scale": "x",
                                       "rows": [{"key": "k", "score": 1.0}]}), "drift probe"),
    (lambda p: p.__setitem__("signature", 5), "signature"),
    (lambda p: p["params"].__setitem__("sigma_floor", "x"), "sigma_floor"),
])
def test_hostile_calibrator_file_is_one_line(tmp_path, cli, edit, what):
    """A calibrator file with a valid checksum but a malformed drift probe, signature or parameter: one line naming
    the file, exit status 2 (before: a KeyError/TypeError/AttributeError traceback from `calibrate apply`)."""
    df = _frame()
    table = tmp_path / "t.tsv"
    df.to_csv(table, sep="\t", index=False)
    model = tmp_path / "m.json"
    LGN(by="lp", min_count=1).fit(df).save(model)
    _rewrite(model, edit)
    rc, _, err = cli("calibrate", "apply", model, table, "-o", tmp_path / "o.tsv", "--signature", "chrF2|nrefs:1")
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and str(model) in lines[0] and what in lines[0]
    assert not (tmp_path / "o.tsv").exists()


def _probe_model(tmp_path, cli):
    df = _frame()
    table = tmp_path / "t.tsv"
    df.to_csv(table, sep="\t", index=False)
    model = tmp_path / "m.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rc, _, err = cli("calibrate", "fit", table, "--score", "score", "-o", model, "--signature", "comet|model:x")
    assert rc == 0, err
    moved = tmp_path / "moved.tsv"
    df.assign(score=df["score"] + 5).to_csv(moved, sep="\t", index=False)
    return model, table, moved


def test_streamed_apply_checks_the_drift_probe(tmp_path, cli):
    """`calibrate apply --chunk-size` refuses scores that moved since the fit, as the in-memory apply does (every
    score shifted by 5 sd-tenths of a point, far past the probe's tolerance). Before: the streamed path never looked
    at the probe and wrote the miscalibrated table."""
    model, table, moved = _probe_model(tmp_path, cli)
    args = ("--signature", "comet|model:x", "--chunk-size", "50")
    rc, _, err = cli("calibrate", "apply", model, moved, "-o", tmp_path / "o.tsv", *args)
    assert rc == 2 and "moved since the calibrator was fitted" in err and "--on-drift warn" in err
    assert not (tmp_path / "o.tsv").exists()
    rc, _, err = cli("calibrate", "apply", model, table, "-o", tmp_path / "same.tsv", *args)  # unchanged: applied
    assert rc == 0 and "drift" not in err, err
    rc, _, err = cli("calibrate", "apply", model, moved, "-o", tmp_path / "w.tsv", *args, "--on-drift", "warn")
    assert rc == 0 and "moved since the calibrator was fitted" in " ".join(err.split())


def test_streamed_fit_keeps_the_same_drift_probe(tmp_path, cli):
    """`calibrate fit --chunk-size` on a model's scores keeps the drift probe `--probe` documents: the same rows,
    keys and scores as the in-memory fit's (oracle: the in-memory fit of the same table). Before: the streamed
    fit saved no probe, so `calibrate apply` could never refuse moved scores."""
    model, table, moved = _probe_model(tmp_path, cli)
    streamed = tmp_path / "streamed.json"
    rc, _, err = cli("calibrate", "fit", table, "--score", "score", "-o", streamed, "--signature", "comet|model:x",
                     "--chunk-size", "40")
    assert rc == 0, err
    expected, got = json.loads(model.read_text())["probe"], json.loads(streamed.read_text()).get("probe")
    assert got is not None and got["rows"] == expected["rows"] and len(got["rows"]) == 15
    assert got["key_columns"] == expected["key_columns"] and got["scale"] == pytest.approx(expected["scale"], 1e-12)
    rc, _, err = cli("calibrate", "apply", streamed, moved, "-o", tmp_path / "o.tsv")
    assert rc == 2 and "moved since the calibrator was fitted" in err


def test_an_anchored_calibrator_with_a_non_text_signature_is_one_line(tmp_path, cli):
    """The anchored calibrator's file as the LGN one above: a signature that is no text was an AttributeError
    traceback from `calibrate apply`; one line naming the file, exit 2."""
    from xleval.calibration import AnchoredCalibrator

    df = _frame().assign(human=lambda d: np.where(d["seg_id"] % 3 == 0, d["score"] + 5.0, np.nan))
    table = tmp_path / "t.tsv"
    df.to_csv(table, sep="\t", index=False)
    model = tmp_path / "m.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        AnchoredCalibrator(by="lp", score="score", human="human", human_higher_is_better=True).fit(df).save(model)
    _rewrite(model, lambda p: p.__setitem__("signature", 5))
    rc, _, err = cli("calibrate", "apply", model, table, "-o", tmp_path / "o.tsv", "--signature", "chrF2|nrefs:1")
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and str(model) in lines[0] and "signature" in lines[0]
    assert not (tmp_path / "o.tsv").exists()
