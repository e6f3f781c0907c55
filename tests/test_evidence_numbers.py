"""The WMT21 evidence quoted in README.md and docs/calibration.md is the evidence of one place:
docs/wmt21-study.md, which ``python examples/wmt21_study.py --write docs/wmt21-study.md`` generates.

Each quoted number is looked up in the study's tables (not copied into this test), so a regenerated
study whose numbers move makes this test name every sentence that must change with it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDY = ROOT / "docs" / "wmt21-study.md"
SECTIONS = {"raw DA": "Sentence chrF against raw DA", "DA z": "Sentence chrF against DA z",
            "MQM": "Sentence chrF against expert MQM"}


def _table(title: str) -> dict[str, str]:
    """variant -> its cross-pair accuracy as printed, from the study's section ``title``."""
    text = STUDY.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 3)
    rows = {}
    for line in text[start:end if end > 0 else None].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 2 and re.fullmatch(r"-?\d\.\d{3}", cells[1]):
            rows[cells[0]] = cells[1]
    return rows


@pytest.fixture(scope="module")
def study() -> dict[str, dict[str, str]]:
    return {scale: _table(title) for scale, title in SECTIONS.items()}


def _flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


def _range(*values: str) -> str:
    low, high = min(values), max(values)
    return low if low == high else f"{low}-{high}"


def _claims(s: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    da, z, mqm = s["raw DA"], s["DA z"], s["MQM"]
    at100 = _range(da["anchored@100 spread"], da["anchored@100 random"])
    return {
        "README.md": [
            f"against raw DA, raw {da['raw']}, LGN {da['lgn']}, anchored with 100 judged segments per pair {at100}, "
            f"with every label {da['anchored']}",
            f"against expert MQM (en-de, zh-en), raw {mqm['raw']}, LGN {mqm['lgn']}, anchored with 25 judged segments "
            f"per pair {mqm['anchored@25 spread']}",
            f"LGN is best ({z['lgn']})",
        ],
        "docs/calibration.md": [
            f"against **raw DA**, raw {da['raw']}, LGN {da['lgn']}, anchored with 50 judged segments per pair "
            f"{da['anchored@50 spread']}, with 100 {at100}, with every label {da['anchored']}",
            f"Against **expert MQM** (en-de and zh-en), raw {mqm['raw']}, LGN {mqm['lgn']}, anchored with 25 judged "
            f"segments per pair {mqm['anchored@25 spread']}, with 100 {mqm['anchored@100 spread']}",
            f"LGN {z['lgn']} is best and anchored needs more than 200 labels per pair to catch up "
            f"({z['anchored@200 spread']} at 200; {z['anchored']} with every label)",
            f"100 labels per pair give {at100} against raw DA, every label {da['anchored']}",
        ],
    }


def test_the_study_has_every_variant_it_is_quoted_for(study):
    for scale, rows in study.items():
        assert {"raw", "lgn", "anchored", "anchored@100 spread"} <= set(rows), scale


@pytest.mark.parametrize("document", ["README.md", "docs/calibration.md"])
def test_quoted_evidence_equals_the_study(study, document):
    text = _flat(ROOT / document)
    missing = [claim for claim in _claims(study)[document] if claim not in text]
    assert not missing, f"{document} quotes WMT21 evidence that docs/wmt21-study.md does not give: {missing}"


def test_the_check_can_fail(study):
    """A number moved in the study is caught: the claims built from a changed table are not in the README."""
    changed = {k: dict(v) for k, v in study.items()}
    changed["raw DA"]["lgn"] = "0.999"
    assert _claims(changed)["README.md"][0] not in _flat(ROOT / "README.md")


def test_the_decisions_reference_curve_is_the_studys(study):
    """The advice quotes REFERENCE (labels to ask for, what they gave on WMT21): the study's raw-DA
    numbers for the default selection (random)."""
    from xleval.decision._decide import REFERENCE

    da = study["raw DA"]
    assert f"{REFERENCE['raw']:.3f}" == da["raw"] and f"{REFERENCE['lgn']:.3f}" == da["lgn"]
    assert {k: f"{v:.3f}" for k, v in REFERENCE["anchored"].items()} == \
        {k: da[f"anchored@{k} random"] for k in (25, 50, 100, 200)}
