"""The pandas-free filter `xleval score` runs before naming reference copies (output_checks._normal):
it normalises only the rows it needs and has an ASCII fast path; both must give the answer of the rule
written out in full (normalise every row: NFKC, case fold, drop [\\W_]; a cell is a copy with >= 10
rows equal to the reference and >= 80% of its rows)."""
from __future__ import annotations

import random
import re
import unicodedata

import numpy as np
import pytest

from xleval.output_checks._normal import MIN_ROWS, MIN_SHARE, may_hold_a_reference_copy, normalised

_W = re.compile(r"[\W_]+")


def _rule(text: str) -> str:
    return _W.sub("", unicodedata.normalize("NFKC", text).casefold())


def _by_the_rule(cells, hyps, refs) -> bool:
    both = [i for i, (h, r) in enumerate(zip(hyps, refs, strict=True)) if isinstance(h, str) and isinstance(r, str)]
    counts: dict[str, list[int]] = {}
    for i in both:
        same = _rule(hyps[i]) == _rule(refs[i]) and _rule(hyps[i]) != ""
        n_same = counts.setdefault(str(cells[i]), [0, 0])
        n_same[0] += 1
        n_same[1] += same
    return any(s >= MIN_ROWS and s >= MIN_SHARE * n for n, s in counts.values())


ALPHABET = ["a", "B", " ", ",", "_", "7", "é", "É", "ß", "Ｆ", "ﬁ", "-", "ǅ", "ı", "İ", "\u0301", "中", "!", "\t"]


def test_normalised_equals_the_rule_on_ascii_and_unicode_texts():
    rng = random.Random(7)
    texts = [chr(c) for c in range(128)] + ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(12)))
                                            for _ in range(3000)]
    texts += ["".join(chr(rng.randrange(128)) for _ in range(rng.randrange(20))) for _ in range(3000)]
    assert list(normalised(texts)) == [_rule(t) for t in texts]


@pytest.mark.parametrize("seed", range(40))
def test_filter_answers_as_the_rule(seed):
    rng = np.random.default_rng(seed)
    pyr = random.Random(seed)
    n = int(rng.integers(1, 120))
    cells = [(f"l{int(rng.integers(0, 2))}", f"s{int(rng.integers(0, 3))}") for _ in range(n)]
    refs = ["".join(pyr.choice(ALPHABET) for _ in range(pyr.randrange(1, 8))) for _ in range(n)]
    share = rng.uniform(0.5, 1.0)  # around the 80% threshold
    hyps: list[object] = []
    for ref in refs:
        pick = rng.uniform()
        if pick < share:  # a copy up to case, spacing and punctuation (or exactly)
            hyps.append(ref.upper() + " ." if rng.uniform() < 0.5 else ref)
        elif pick < share + 0.05:
            hyps.append(None)
        else:
            hyps.append("x" + ref)
    if rng.uniform() < 0.2:
        refs[int(rng.integers(0, n))] = None  # type: ignore[call-overload]
    assert may_hold_a_reference_copy(cells, hyps, refs) is _by_the_rule(cells, hyps, refs)


def test_filter_cases_at_the_thresholds():
    cell = [("de", "A")]
    # 10 identical of 12 rows: 83% >= 80% and >= 10 rows
    assert may_hold_a_reference_copy(cell * 12, ["Same."] * 10 + ["x", "y"], ["same"] * 12)
    # 10 identical of 13 rows: 77% < 80%
    assert not may_hold_a_reference_copy(cell * 13, ["Same."] * 10 + ["x", "y", "z"], ["same"] * 13)
    # 9 rows all identical: fewer than 10
    assert not may_hold_a_reference_copy(cell * 9, ["same"] * 9, ["same"] * 9)
    # the differing rows first: the cell is still a copy (12 of 15)
    assert may_hold_a_reference_copy(cell * 15, ["x", "y", "z"] + ["SAME"] * 12, ["same"] * 15)
    # texts empty after normalisation are never copies
    assert not may_hold_a_reference_copy(cell * 12, ["..."] * 12, ["!!"] * 12)
