"""Checks from the documentation review: what docs/fairness.md and docs/intrinsic.md say holds."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from xleval.exceptions import DataQualityWarning, InputError
from xleval.fairness import fairness_gaps
from xleval.intrinsic import read_scores
from xleval.stats import Resampling


def _table() -> pd.DataFrame:
    """Three languages of 60 items and one of 2 items (a small language)."""
    rng = np.random.default_rng(3)
    rows = [{"lang": lang, "f1": float(rng.uniform(0.3, 0.9))}
            for lang, n in (("en", 60), ("de", 60), ("fr", 60), ("sw", 2)) for _ in range(n)]
    return pd.DataFrame(rows)


def test_a_small_language_does_not_flag_other_languages_ratios_unreliable():
    # docs/fairness.md: a language with 1-5 items has *its* intervals flagged unreliable. de's ratio and
    # difference to en read only de's and en's resamples (60 items each), so nothing of sw belongs in them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        rep = fairness_gaps(_table(), "f1", "lang", reference="en",
                            resampling=Resampling(n_resamples=200, random_state=0))
    by_lang = {g.language: g for g in rep.languages}
    for lang in ("de", "fr"):
        gap = by_lang[lang]
        assert not any("sw" in note for note in (*gap.ratio.notes, *gap.difference.notes)), lang
        assert not gap.ratio.unreliable and not gap.difference.unreliable
    assert by_lang["sw"].ratio.unreliable and by_lang["sw"].difference.unreliable
    flags = {row["language"]: row["unreliable"] for row in rep.language_rows()}
    assert flags == {"de": False, "en": False, "fr": False, "sw": True}
    assert rep.summary.mean.unreliable  # a summary across languages includes sw: flagged, as documented


@pytest.mark.parametrize("column", ["model", "setting"])
def test_intrinsic_refuses_an_empty_model_or_setting_cell_of_a_tsv(tmp_path, column):
    # docs/intrinsic.md: "empty `model`, `setting` or `item` cells" are refused. A TSV cell is read as text, so
    # an empty cell is '' there; it was taken as a model (or setting) named '' and became a group of its own.
    rows = [{"lang": lang, "model": "m1", "setting": "s1", "item": i, "nll": 10.0 + i, "tokens": 5}
            for lang in ("en", "de") for i in range(4)]
    rows[2][column] = ""
    path = tmp_path / "scores.tsv"
    pd.DataFrame(rows).to_csv(path, sep="\t", index=False)
    with pytest.raises(InputError, match=rf"column '{column}' row 3 is empty"):
        read_scores(path)


def test_output_check_effects_do_not_depend_on_the_row_order():
    # docs/output-checks.md: "The tables are sorted by their keys, whatever the order of the input rows ...
    # Nothing is random". The same rows in another order must give the same numbers, to the last bit (the means
    # were summed in input order, so a shuffled table moved them in the 15th digit).
    from xleval.output_checks import check_outputs

    rng = np.random.default_rng(7)
    rows = []
    for seg in range(200):
        ref = f"the reference sentence number {seg} about topic {seg % 7}."
        for system in ("a", "b"):
            same = rng.random() < 0.3
            rows.append({"lp": "de-en", "system": system, "seg_id": seg, "source": f"der Satz {seg}.",
                         "reference": ref, "hypothesis": ref if same else f"a hypothesis {seg} {system}.",
                         "chrf": float(rng.uniform(0, 100)) / 3.0})
    table = pd.DataFrame(rows)
    shuffled = table.sample(frac=1.0, random_state=11).reset_index(drop=True)
    first = check_outputs(table, by="lp", metrics=["chrf"], langid=None, flags=["identical_reference"]).effects
    second = check_outputs(shuffled, by="lp", metrics=["chrf"], langid=None, flags=["identical_reference"]).effects
    assert len(first) == 1 and first["n_flagged"].iloc[0] > 50
    pd.testing.assert_frame_equal(first, second, check_exact=True)
