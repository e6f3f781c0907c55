"""Calibrators compare metric signatures language by language (BLEU's tokenizer differs by target)."""
import numpy as np
import pandas as pd
import pytest

from xleval._base.signature import (
    check_compatible,
    combine_signatures,
    merge_signatures,
    parse_signature,
    signature_direction,
    with_direction,
)
from xleval.calibration import LGN
from xleval.exceptions import SignatureMismatchError

A = "nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:2.6.0|xleval:0.1.0"
Z = "nrefs:1|case:mixed|eff:yes|tok:zh|smooth:exp|version:2.6.0|xleval:0.1.0"


def test_parse_and_combine_round_trip():
    combined = combine_signatures({"de": A, "zh": Z})
    assert parse_signature(combined) == {"de": A, "zh": Z}
    assert combine_signatures({"de": A, "en": A}) == A
    assert parse_signature(A) == {"*": A}


def test_a_subset_of_languages_is_compatible_and_a_changed_tokenizer_is_not():
    fitted = combine_signatures({"de": A, "ja": A, "zh": Z})
    check_compatible(fitted, combine_signatures({"de": A, "zh": Z}))
    check_compatible(fitted, A, languages=["de", "ja"])  # de/ja rows only: the metric wrote one plain signature
    with pytest.raises(SignatureMismatchError):
        check_compatible(fitted, A)  # languages unknown: a plain 13a signature cannot cover zh
    with pytest.raises(SignatureMismatchError, match="tgt_lang=zh"):
        check_compatible(fitted, combine_signatures({"de": A, "zh": A}))


def test_merge_adds_languages_and_refuses_conflicts():
    merged = merge_signatures(combine_signatures({"de": A, "zh": Z}), combine_signatures({"ja": A, "zh": Z}))
    assert parse_signature(merged) == {"de": A, "ja": A, "zh": Z}
    with pytest.raises(SignatureMismatchError):
        merge_signatures(combine_signatures({"de": A, "zh": Z}), combine_signatures({"zh": A, "ja": A}))


def test_lgn_applies_to_a_subset_of_languages():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"tgt_lang": np.repeat(["de", "zh"], 100), "score": rng.normal(size=200)})
    model = LGN().fit(df, signature=combine_signatures({"de": A, "zh": Z}))
    de = df[df.tgt_lang == "de"]
    model.transform(de, signature=A)  # scoring de rows alone gives a plain 13a signature
    with pytest.raises(SignatureMismatchError):
        model.transform(df, signature=combine_signatures({"de": A, "zh": A}))


def test_the_xleval_version_is_provenance_not_an_option():
    newer = A.replace("xleval:0.1.0", "xleval:0.2.0")
    check_compatible(A, newer)
    check_compatible(combine_signatures({"de": A, "zh": Z}),
                     combine_signatures({"de": newer, "zh": Z.replace("0.1.0", "0.3")}))
    assert merge_signatures(A, newer) == A  # the first fit's provenance is kept
    with pytest.raises(SignatureMismatchError):
        check_compatible(A, Z.replace("xleval:0.1.0", "xleval:0.2.0"))  # tok:zh vs tok:13a, whatever the version


def test_a_stated_direction_replaces_the_old_one_in_every_language():
    assert with_direction("nrefs:1|dir:lower|version:2.4", True) == "nrefs:1|version:2.4|dir:higher"
    assert with_direction(None, False) == "dir:lower"
    combined = "tgt_lang=de: nrefs:1|dir:lower ; tgt_lang=zh: nrefs:1|tok:zh|dir:lower"
    assert with_direction(combined, True) == ("tgt_lang=de: nrefs:1|dir:higher ; "
                                              "tgt_lang=zh: nrefs:1|tok:zh|dir:higher")
    assert signature_direction(with_direction(combined, True)) is True
