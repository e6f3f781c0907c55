"""Saved calibrators keep working: files of format version 1 written before the LGN split load and
give the same numbers, and a calibrator accepts scores from another xleval version with the same
metric options (the version is provenance, not an option)."""
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xleval.calibration import LGN, load_calibrator
from xleval.calibration._persist import checksum
from xleval.exceptions import SignatureMismatchError

DATA = Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "calibrators_v1_expected.json").read_text())
PROBE = pd.DataFrame(EXPECTED["probe"])
CHRF = "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1"


@pytest.mark.parametrize("name", sorted(EXPECTED["models"]))
def test_v1_lgn_files_load_and_give_the_numbers_they_gave_when_written(name):
    expected = EXPECTED["models"][name]
    model = LGN.load(DATA / f"lgn_v1_{name}.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the probe has unseen languages on purpose
        out = model.transform(PROBE, signature=f"{CHRF}|xleval:0.1.0")
        sources = model.sources(PROBE)
        back = model.inverse_transform(PROBE.assign(score=out))
        low, high = model.interval(PROBE, level=0.9, n_resamples=50, random_state=3)
    # the same formulas; the linear map is now one a*x+b for every path, so allow a few ulp
    np.testing.assert_allclose(out, expected["transform"], rtol=1e-13, atol=1e-12)
    assert list(sources) == expected["sources"]
    np.testing.assert_allclose(back, expected["inverse"], rtol=1e-12, atol=1e-12)
    # the bootstrap draws the same resamples (one stream, groups in the same order) from xleval.stats
    np.testing.assert_allclose(low, np.array(expected["interval_low"], dtype=float), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(high, np.array(expected["interval_high"], dtype=float), rtol=1e-12, atol=1e-12)
    assert model.to_dict()["format_version"] == 1


def test_v1_anchored_file_loads_and_gives_the_same_numbers():
    model = load_calibrator(DATA / "anchored_v1_isotonic.json")
    rows = PROBE.loc[EXPECTED["anchored"]["probe_rows"]]
    np.testing.assert_array_equal(model.transform(rows), EXPECTED["anchored"]["transform"])


def _saved_by(version: str, tmp_path, signature: str) -> Path:
    """A calibrator file as an older xleval wrote it: its metric signature and provenance name ``version``."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "zh"], 100), "score": rng.normal(50, 10, 200)})
    payload = LGN().fit(df, signature=signature).to_dict()
    payload["xleval_version"] = version
    payload["checksum"] = checksum(payload)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(payload))
    return path


def test_a_calibrator_from_an_older_xleval_accepts_scores_with_the_same_options(tmp_path):
    old_13a = "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0|xleval:0.0.9"
    model = LGN.load(_saved_by("0.0.9", tmp_path, old_13a))
    scores = pd.DataFrame({"tgt_lang": ["de", "zh"], "score": [40.0, 60.0]})
    new_13a = old_13a.replace("xleval:0.0.9", "xleval:0.2.0")
    np.testing.assert_array_equal(model.transform(scores, signature=new_13a), model.transform(scores))
    with pytest.raises(SignatureMismatchError, match="tok:zh"):
        model.transform(scores, signature=new_13a.replace("tok:13a", "tok:zh"))
    with pytest.raises(SignatureMismatchError):  # another sacrebleu version is another option: refused
        model.transform(scores, signature=new_13a.replace("version:2.6.0", "version:2.5.1"))
