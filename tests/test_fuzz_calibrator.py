"""Fuzzing saved calibrators: a randomly mutated LGN JSON either loads and calibrates exactly like
the original (a mutation that leaves the JSON value unchanged, e.g. whitespace) or is refused with
ModelFileError. It is never loaded as a different calibrator, and never fails with another error."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xleval.calibration import LGN, AnchoredCalibrator, prepare_frame
from xleval.exceptions import ModelFileError

FUZZ = settings(max_examples=int(os.environ.get("XLEVAL_FUZZ_EXAMPLES", "150")), deadline=None)
METHODS = ["zscore", "robust", "quantile"]


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lp = np.repeat(["en-de", "en-fr", "en-zh", "de-en", "en-sw"], [60, 60, 60, 60, 8])
    return prepare_frame(pd.DataFrame({"lp": lp, "score": rng.normal(50, 10, len(lp))}), ["tgt_lang"])


PROBE = prepare_frame(pd.DataFrame({"lp": ["en-de", "en-fr", "en-ja", "en-sw", "de-en"],
                                    "score": [10.0, 50.0, 55.0, 90.0, np.nan]}), ["tgt_lang"])
SAVED: dict[str, tuple[bytes, LGN]] = {}


def _saved(method: str) -> tuple[bytes, LGN]:
    if method not in SAVED:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the 8-row group is shrunk on purpose (its statistics are saved too)
            model = LGN(by="tgt_lang", method=method, score="score", target=(80, 10)).fit(
                _frame(), signature="bleu|tok:13a")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "m.json"
            model.save(path)
            SAVED[method] = (path.read_bytes(), model)
    return SAVED[method]


def _calibrates_like(loaded: LGN, original: LGN) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # en-ja is unseen: the fallback warning is expected for both
        np.testing.assert_array_equal(loaded.transform(PROBE), original.transform(PROBE))
        np.testing.assert_array_equal(loaded.sources(PROBE), original.sources(PROBE))
    assert loaded.signature_ == original.signature_ and loaded.get_params() == original.get_params()


def _load_or_refuse(data: bytes, original: LGN) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.json"
        path.write_bytes(data)
        try:
            loaded = LGN.load(path)
        except ModelFileError as exc:
            assert "\n" not in str(exc)  # noqa: PT017 - a mutated file loads, or is refused in one line
            return
    _calibrates_like(loaded, original)


mutations = st.one_of(
    st.tuples(st.just("replace"), st.integers(0, 10**6), st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 40)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.sampled_from([b" ", b"\n", b"0", b"-", b"1", b'"', b",",
                                                                          b"]", b"}", b"e5", b"NaN", b"\xff"])),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
)


def _mutate(data: bytes, mutation) -> bytes:
    kind, at, arg = mutation
    at %= len(data)
    if kind == "replace":
        return data[:at] + arg + data[at + len(arg):]
    if kind == "delete":
        return data[:at] + data[at + arg:]
    if kind == "insert":
        return data[:at] + arg + data[at:]
    return data[:at]


@pytest.mark.parametrize("method", METHODS)
@FUZZ
@given(mutation=mutations)
def test_byte_mutations_load_identically_or_are_refused(method, mutation):
    data, original = _saved(method)
    _load_or_refuse(_mutate(data, mutation), original)


def _leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, (*path, i))
    else:
        yield path, obj


def _set(obj, path, value):
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


_NEW_VALUES = st.one_of(st.floats(allow_nan=True), st.integers(-5, 10**6), st.text(max_size=5), st.none(),
                        st.booleans(), st.just([]), st.just({}))


@pytest.mark.parametrize("method", METHODS)
@FUZZ
@given(index=st.integers(0, 10**6), value=_NEW_VALUES)
def test_edited_values_are_refused(method, index, value):
    """An edit of any one value of the JSON (a statistic, an option, the signature, the version...) is
    refused, unless the edit leaves the value equal."""
    data, original = _saved(method)
    payload = json.loads(data)
    leaves = list(_leaves(payload))
    path, _old = leaves[index % len(leaves)]
    _set(payload, path, value)
    _load_or_refuse(json.dumps(payload, allow_nan=True).encode(), original)


@FUZZ
@given(mutation=mutations)
def test_anchored_calibrator_mutations_load_identically_or_are_refused(mutation):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "fr"], 60), "score": rng.normal(50, 10, 120)})
    df["human"] = 0.1 * df["score"] + rng.normal(0, 1, 120)
    model = AnchoredCalibrator(score="score", human="human").fit(df)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "a.json"
        model.save(path)
        path.write_bytes(_mutate(path.read_bytes(), mutation))
        try:
            loaded = AnchoredCalibrator.load(path)
        except ModelFileError:
            return
    np.testing.assert_array_equal(loaded.transform(df), model.transform(df))
