"""Weighted kappa and Krippendorff's alpha against published worked examples and identities."""
import numpy as np
import pandas as pd
import pytest

from xleval.audit import (
    AUDIT_RESAMPLING,
    annotation_agreement,
    krippendorff_alpha,
    rating_scale,
    render_checklist,
    weighted_kappa,
)
from xleval.exceptions import DataQualityWarning, InputError

N = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers x 12 units.
K2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
         [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849),
                                               ("ratio", 0.797)])
def test_alpha_matches_krippendorff_2011(level, published):
    assert round(krippendorff_alpha(K2011, level=level), 3) == published


def test_alpha_three_coder_example_matches_reference_implementation():
    # the reliability-data example used by the `krippendorff` package's tests (nominal 0.691358, interval 0.810845)
    data = [[N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3],
            [1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N],
            [N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4]]
    assert round(krippendorff_alpha(data, level="nominal"), 6) == 0.691358
    assert round(krippendorff_alpha(data, level="interval"), 6) == 0.810845


def test_alpha_unused_value_in_domain_does_not_change_ordinal():
    assert krippendorff_alpha(K2011, level="ordinal", value_domain=[1, 2, 3, 4, 5, 6]) == pytest.approx(
        krippendorff_alpha(K2011, level="ordinal"))


def test_alpha_refuses_unpairable_data():
    with pytest.raises(InputError, match="two or more raters"):
        krippendorff_alpha([[1, N], [N, 2]])
    with pytest.raises(InputError, match="level"):
        krippendorff_alpha(K2011, level="circular")


def test_kappa_wikipedia_two_by_two():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> kappa = 0.4 (Cohen's kappa, Wikipedia worked example)
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    for weights in (None, "linear", "quadratic"):  # two categories: every weighting is the same
        assert weighted_kappa(a, b, weights=weights) == pytest.approx(0.4)


def test_quadratic_kappa_equals_moment_identity():
    # With quadratic weights and all labels used, kappa_w = 2 cov / (var_a + var_b + (mean_a - mean_b)^2)
    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, 300)
    b = np.clip(a + rng.integers(-1, 2, 300), 1, 5)
    cov = np.mean((a - a.mean()) * (b - b.mean()))
    expected = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert weighted_kappa(a, b, weights="quadratic") == pytest.approx(expected)


def test_kappa_matches_sklearn_when_installed():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(4)
    a = rng.integers(1, 6, 200)
    b = np.clip(a + rng.integers(-2, 3, 200), 1, 5)
    for weights in (None, "linear", "quadratic"):
        assert weighted_kappa(a, b, weights=weights) == pytest.approx(sk.cohen_kappa_score(a, b, weights=weights))


def test_kappa_input_errors():
    with pytest.raises(InputError, match="same length"):
        weighted_kappa([1, 2], [1])
    with pytest.raises(InputError, match="missing"):
        weighted_kappa([1, N], [1, 2])
    with pytest.raises(InputError, match="not in labels"):
        weighted_kappa([1, 7], [1, 2], labels=[1, 2, 3])


def _ratings(rows):
    return pd.DataFrame(rows, columns=["item_id", "rater", "rating", "dimension"])


def test_annotation_agreement_perfect_and_single_rater():
    rows = [(f"i{i}", r, 1 + i % 5, "cue") for i in range(20) for r in ("r1", "r2")]
    rows += [(f"i{i}", "r1", 1 + i % 5, "syntax") for i in range(20)]
    out = {a.dimension: a for a in annotation_agreement(_ratings(rows), n_resamples=50, random_state=0)}
    assert out["cue"].pairs[0].kappa == pytest.approx(1.0)
    assert out["cue"].alpha_ordinal == pytest.approx(1.0) and out["cue"].meets_target
    assert out["syntax"].n_raters == 1 and not out["syntax"].meets_target
    assert any("only one rater" in n for n in out["syntax"].notes)
    assert out["cue"].to_dict()["pairs"][0]["kappa"] == pytest.approx(1.0)


def test_annotation_agreement_rejects_double_rating():
    rows = [("i1", "r1", 3, "cue"), ("i1", "r1", 4, "cue"), ("i1", "r2", 3, "cue")]
    with pytest.raises(InputError, match="twice"):
        annotation_agreement(_ratings(rows))


def test_audit_with_ratings_reports_agreement_and_rating_signal():
    from xleval.audit import audit, simulate_audit_data

    df, _ = simulate_audit_data(n_items=30, n_models=2, n_native=10, random_state=4)
    rng = np.random.default_rng(0)
    items = sorted(i for i in df["item_id"].unique() if i.startswith("q"))  # not the native items
    rows = [(i, r, int(rng.integers(1, 6)), "cue") for i in items for r in ("r1", "r2")]
    res = audit(df, ratings=_ratings(rows), resampling=AUDIT_RESAMPLING.with_(n_resamples=50), n_permutations=49)
    assert res.agreement[0].dimension == "cue" and res.agreement[0].n_raters == 2
    assert res.rating_signal["cue"].method == "spearman" and res.rating_signal["cue"].n == 30
    text = render_checklist(res)
    assert "cue rating vs item-level E1 signal" in text and "- [x] cue:" in text


# Two raters on a 1-5 scale that nobody rated 3 on: every disagreement is one step within the
# low (1/2) or the high (4/5) half. On the scale, the halves are 3 steps apart and quadratic
# kappa is 2 cov / (var_a + var_b + (mean_a - mean_b)^2) = 2 * 2 / (2.5 + 2.5) = 0.80. Numbering
# only the labels used (1, 2, 4, 5 -> 0..3) closes the gap: 2 * 0.75 / (1.25 + 1.25) = 0.60.
NO_THREES_A = [1, 2, 4, 5]
NO_THREES_B = [2, 1, 5, 4]


def test_kappa_keeps_an_unused_level_of_the_scale():
    assert weighted_kappa(NO_THREES_A, NO_THREES_B, labels=range(1, 6)) == pytest.approx(0.80)
    assert weighted_kappa(NO_THREES_A, NO_THREES_B) == pytest.approx(0.60)  # observed labels only


def test_no_threes_example_against_sklearn():
    sk = pytest.importorskip("sklearn.metrics")
    assert sk.cohen_kappa_score(NO_THREES_A, NO_THREES_B, weights="quadratic",
                                labels=[1, 2, 3, 4, 5]) == pytest.approx(0.80)
    assert sk.cohen_kappa_score(NO_THREES_A, NO_THREES_B, weights="quadratic") == pytest.approx(0.60)


def _no_threes(repeat=3):
    items = [f"i{k}" for k in range(4 * repeat)]
    return _ratings([(i, r, v, "cue") for r, values in (("r1", NO_THREES_A), ("r2", NO_THREES_B))
                     for i, v in zip(items, values * repeat, strict=True)])


def test_annotation_agreement_uses_the_rating_scale():
    given = annotation_agreement(_no_threes(), scale="1-5", n_resamples=50)[0]
    assert given.pairs[0].kappa == pytest.approx(0.80) and given.meets_target  # passes the 0.7 bar
    assert given.scale == (1.0, 2.0, 3.0, 4.0, 5.0) and any("unused" in n for n in given.notes)
    with pytest.warns(DataQualityWarning, match=r"level\(s\) \[3\].*unused"):
        inferred = annotation_agreement(_no_threes(), n_resamples=50)[0]  # 1-5 from the lowest/highest rating
    assert inferred.pairs[0].kappa == pytest.approx(0.80)
    narrow = annotation_agreement(_no_threes(), scale=[1, 2, 4, 5], n_resamples=50)[0]  # the old behaviour, asked for
    assert narrow.pairs[0].kappa == pytest.approx(0.60) and not narrow.meets_target
    with pytest.raises(InputError, match=r"not on the scale"):
        annotation_agreement(_no_threes(), scale="2-5")


def test_rating_scale_spellings():
    assert rating_scale("1-5") == rating_scale((1, 5)) == rating_scale("1,2,3,4,5") == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert rating_scale("0..10")[-1] == 10.0 and rating_scale([0.5, 1.5, 2.5]) == (0.5, 1.5, 2.5)
    for bad in ("five", "5-1", "3"):
        with pytest.raises(InputError, match="scale"):
            rating_scale(bad)
