"""The human scale's direction from its name (issue 33, item 4): `--human-scale mqm|esa|da|...` and the
`HUMAN_scale` column `xleval ingest` writes fix the direction for anchored calibration; E122 only where
nothing declares it and the labels cannot settle it."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import SCALE_NAMES, direction_for, human_scale_direction, scale_kind, scale_named
from xleval.diagnostics import human_scale_check
from xleval.exceptions import InputError


def test_names_say_kind_and_direction():
    assert human_scale_direction("esa") is True and human_scale_direction("da") is True
    assert human_scale_direction("DA-raw") is True and human_scale_direction("hter") is False
    assert human_scale_direction("z") is True and scale_kind("da-z") == "z" and scale_kind("mqm") == "raw"
    assert human_scale_direction("raw") is None and human_scale_direction(None) is None
    assert set(SCALE_NAMES) >= {"mqm", "esa", "da", "raw", "z", "da-z"}
    with pytest.raises(InputError, match="unknown"):
        scale_named("stars")


def test_mqm_direction_by_the_labels_signs():
    """WMT's MQM files hold error points (0 = perfect, >= 0): lower is better; `xleval ingest mqm` writes their
    negation (<= 0): higher is better. Both signs, or no labels: the name cannot say."""
    assert human_scale_direction("mqm", np.array([0.0, 1.0, 25.0, np.nan])) is False
    assert human_scale_direction("mqm", np.array([0.0, -5.0, -0.1])) is True
    assert human_scale_direction("mqm", np.array([-1.0, 2.0])) is None
    assert human_scale_direction("mqm", np.array([0.0, 0.0])) is None
    assert human_scale_direction("mqm") is None


def test_the_names_ingest_writes_are_read():
    # the descriptive names of xleval.ratings (_mqm.py, _esa.py)
    assert scale_named("MQM (weighted; raters all)").name == "mqm"
    assert scale_named("ESA 0-100 (raters all)").name == "esa"
    assert scale_named("MQM rater-z (weighted)").kind == "z"
    assert scale_named("ESA rater-z").kind == "z"
    frame = pd.DataFrame({"gold": [-1.0, -3.0, np.nan], "gold_scale": ["MQM (weighted; raters all)"] * 2 + [None]})
    assert direction_for(frame, "gold") is True  # negated MQM from ingest
    assert direction_for(frame, "gold", given=False) is False  # the user's flag wins
    assert direction_for(frame.drop(columns="gold_scale"), "gold") is None
    mixed = frame.assign(gold_scale=["MQM (weighted; raters all)", "ESA 0-100 (raters all)", None])
    assert direction_for(mixed, "gold") is None  # two scales: no one direction


def test_the_standardisation_check_reads_a_named_scale():
    h = np.array([0.1, 0.2, -0.3, 0.4])
    labels = np.array(["a", "a", "b", "b"])
    assert human_scale_check(h, labels, "human", "da-z").standardised
    assert human_scale_check(h, labels, "human", "mqm").status == "raw"
    assert human_scale_check(h, labels, "human", "esa").source == "declared"


def _mqm_table(shared_data, k: int, seed: int) -> pd.DataFrame:
    root = shared_data("wmt21")
    seg = pd.read_parquet(root / "segments.parquet", columns=["lp", "system", "seg_id", "doc_id", "hypothesis",
                                                              "reference"])
    mqm = pd.read_parquet(root / "mqm_newstest2021.parquet", columns=["lp", "system", "seg_id", "mqm"])
    rated = seg.merge(mqm, on=["lp", "system", "seg_id"])
    from xleval.metrics import score_frame

    frame = score_frame(rated.reset_index(drop=True), ["chrf"]).frame.drop(columns=["hypothesis", "reference"])
    rng = np.random.default_rng(seed)
    keep = np.zeros(len(frame), dtype=bool)
    for _, idx in frame.groupby("lp").indices.items():
        keep[rng.choice(idx, size=k, replace=False)] = True
    return frame.assign(mqm=np.where(keep, frame["mqm"], np.nan))


@pytest.mark.data
def test_named_mqm_fits_where_the_labels_slopes_do_not_settle_the_direction(shared_data, tmp_path, cli):
    """WMT21 MQM (en-de, zh-en), 25 random labels per pair: in most draws the slopes do not settle the direction
    (docs/calibration.md). `--human-scale mqm` says it (error points: lower is better) and the fit runs, with the
    direction recorded as given. Unnamed (`judged`), the slope's lean is taken where the labels' shape agrees
    (MQM piles up at 0: lower is better), and said; before, E122 refused those draws."""
    shaped = 0
    for seed in range(4):
        path = tmp_path / f"mqm{seed}.tsv"
        table = _mqm_table(shared_data, 25, seed)
        table.assign(judged=table["mqm"]).to_csv(path, sep="\t", index=False)
        plain = cli("calibrate", "fit", path, "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                    "judged", "-o", tmp_path / f"a{seed}.json")
        unsettled = plain.exit_code == 2 or json.loads((tmp_path / f"a{seed}.json").read_text())[
            "direction_source"] == "shape"
        if plain.exit_code == 0 and unsettled:
            shaped += 1
            assert json.loads((tmp_path / f"a{seed}.json").read_text())["direction"] == -1  # MQM falls as chrF rises
            said = " ".join(plain.stderr.split())
            assert "the labels' shape agree, so lower is taken as better" in said
            assert "--human-lower-is-better" in said and "--human-scale" in said  # how to say it, as flags
        else:  # settled by the slopes, or refused (E122) where the lean and the shape disagree
            assert plain.exit_code == 0 or "do not settle the direction" in plain.stderr
        named = cli("calibrate", "fit", path, "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                    "judged", "--human-scale", "mqm", "-o", tmp_path / f"b{seed}.json")
        assert named.exit_code == 0, named.stderr
        model = json.loads((tmp_path / f"b{seed}.json").read_text())
        assert model["direction_source"] == "given" and model["direction"] == -1  # MQM falls as chrF rises
        # a column named as the scale: its name is read where the labels do not settle the direction, and said
        by_name = cli("calibrate", "fit", path, "--score", "chrf", "--by", "lp", "--method", "anchored", "--human",
                      "mqm", "-o", tmp_path / f"c{seed}.json")
        assert by_name.exit_code == 0, by_name.stderr
        model = json.loads((tmp_path / f"c{seed}.json").read_text())
        assert model["direction_source"] in ("data", "name")
        if unsettled:  # the slopes do not settle it: the name does, before the labels' shape
            assert model["direction_source"] == "name" and model["direction"] == -1
            assert "human column 'mqm' is taken by its name, lower is better" in by_name.stderr
        elif model["direction"] == 1:  # the labels settle it against the name: taken, and said
            assert "its name says lower is better, but the labels settle the other way" in by_name.stderr
            assert "--human-scale mqm" in by_name.stderr
    assert shaped >= 2  # the draws the slopes leave open (seeds 0 and 2: z = -1.69, -1.74)


def test_fit_calibration_takes_the_direction_from_the_named_scale_as_the_cli_does(shared_data):
    """The Python route of `calibrate fit --human-scale mqm`: `fit_calibration(..., human_scale="mqm")` (and a
    table whose `mqm_scale` column names the scale, as `xleval ingest` writes it) fits anchored calibration with
    the direction the name gives (error points: lower is better), for `anchored` and for `auto`, in the draws
    where the labels alone do not settle it (before, the name only told `auto` the scale's kind, and those
    draws got offsets only)."""
    from xleval.decision import fit_calibration

    unsettled = 0
    for seed in range(4):
        table = _mqm_table(shared_data, 25, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            alone = fit_calibration(table.assign(judged=table["mqm"]), "anchored", score="chrf", by="lp",
                                    human="judged")  # a name that is no scale's
            unsettled += alone.model.direction_source_ in ("none", "shape")  # offsets only, or the lean and shape
            for kwargs in ({"human_scale": "mqm"}, {}):
                frame = table if kwargs else table.assign(mqm_scale="MQM (weighted; raters all)")
                for method in ("anchored", "auto"):
                    fitted = fit_calibration(frame, method, score="chrf", by="lp", human="mqm", **kwargs)
                    if fitted.method == "anchored":
                        assert fitted.model.direction_source_ == "given", (seed, method, kwargs)
                        assert fitted.model.direction_ == -1  # MQM error points fall as chrF rises
    assert unsettled >= 2  # the draws where the name is what gives the direction


def _unsettled(column: str, labels: np.ndarray) -> pd.DataFrame:
    """Two pairs x 6 systems x 40 segments; the labels (30 a pair, ``labels`` drawn from) unrelated to the score:
    no slope settles the human scale's direction."""
    rng = np.random.default_rng(0)  # a draw whose labels settle the direction in none of the cases below
    quality = np.tile(np.repeat(np.arange(6), 40), 2)
    frame = pd.DataFrame({"lp": np.repeat(["en-de", "zh-en"], 240), "system": np.char.add("s", quality.astype(str)),
                          "score": rng.normal(50, 8, 480) + quality})
    y = np.full(480, np.nan)
    for start in (0, 240):
        picked = start + rng.choice(240, 30, replace=False)
        y[picked] = rng.choice(labels, 30)
    return frame.assign(**{column: y})


@pytest.mark.parametrize(("column", "labels", "direction"), [
    ("mqm", np.array([0, 0, 0, 1, 5, 25.0]), -1),   # error points: lower is better
    ("MQM", -np.array([0, 0, 0, 1, 5, 25.0]), 1),   # negated, as mt-metrics-eval and `xleval ingest mqm` write it
    ("esa", np.arange(0, 101.0), 1),
    ("hter", np.linspace(0, 1, 11), -1),
])
def test_a_column_named_as_a_scale_gives_the_direction_the_labels_do_not_settle(column, labels, direction):
    from xleval.calibration import build_anchored
    from xleval.exceptions import DataQualityWarning

    table = _unsettled(column, labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = build_anchored("lp", "score", column).fit(table)  # strict: no E122
    said = [str(w.message) for w in caught if issubclass(w.category, DataQualityWarning)]
    assert any(f"human column '{column}' is taken by its name" in m for m in said), said
    assert model.direction_source_ == "name" and model.direction_ == direction
    assert model.slopes_["within"] * direction >= 0  # a slope, in that direction (or 0 where the labels lean away)
    renamed = table.rename(columns={column: "judged"})  # no scale's name
    if column in ("esa", "hter"):  # labels spread evenly: no shape to read, refused as before (E122)
        with pytest.raises(InputError, match="do not settle the direction"):
            build_anchored("lp", "score", "judged").fit(renamed)
    else:  # piled up at 0 (error points) or at the top (negated): the shape agrees with the slope's lean here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataQualityWarning)
            model = build_anchored("lp", "score", "judged").fit(renamed)
        assert model.direction_source_ == "shape" and model.direction_ == direction


def test_mqm_labels_of_both_signs_say_no_direction_by_the_name():
    from xleval.calibration import build_anchored

    table = _unsettled("mqm", np.array([-3.0, 0, 2, 5]))
    with pytest.raises(InputError, match="do not settle the direction"):
        build_anchored("lp", "score", "mqm").fit(table)
