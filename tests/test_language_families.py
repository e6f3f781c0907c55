"""The shipped language-family table (src/xleval/data/language_families.tsv): the "family" level
of the LGN fallback chain. Checks its shape, that its codes are valid and self-consistent, and
textbook family memberships."""
from __future__ import annotations

import re
from importlib.resources import files

import langcodes
import pandas as pd
import pytest

COLUMNS = ["flores_code", "iso639_3", "bcp47", "script", "family", "genus"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    path = files("xleval") / "data" / "language_families.tsv"
    with path.open(encoding="utf-8") as handle:
        return pd.read_csv(handle, comment="#", sep="\t", keep_default_na=False, dtype=str)


def test_columns_and_size(table):
    assert list(table.columns) == COLUMNS
    assert len(table) >= 200
    assert not table["flores_code"].duplicated().any()
    assert (table["family"] != "").all()


def test_flores_code_parts(table):
    pattern = re.compile(r"^([a-z]{3})_([A-Z][a-z]{3})$")
    for row in table.itertuples():
        match = pattern.match(row.flores_code)
        assert match, row.flores_code
        assert (row.iso639_3, row.script) == match.groups(), row.flores_code


def test_scripts_are_iso15924_shaped(table):
    assert table["script"].str.fullmatch(r"[A-Z][a-z]{3}").all()


def test_bcp47_valid_and_consistent_with_script(table):
    for row in table.itertuples():
        lang = langcodes.Language.get(row.bcp47)
        assert lang.is_valid(), row.bcp47
        # the tag, once maximized, must name the script of the FLORES code (a dropped script is implied)
        assert lang.maximize().script == row.script, (row.flores_code, row.bcp47)


def test_same_language_same_family(table):
    families = table.groupby("iso639_3")["family"].nunique()
    assert (families == 1).all(), families[families > 1]


def test_known_flores_languages_present(table):
    codes = set(table["flores_code"])
    for code in ["ace_Arab", "ace_Latn", "acm_Arab", "eng_Latn", "zho_Hans", "zho_Hant", "yue_Hant",
                 "arb_Latn", "taq_Tfng", "sat_Olck", "mni_Beng", "zul_Latn"]:
        assert code in codes, code


TEXTBOOK = {
    "Indo-European": ["de", "en", "hi"],
    "Uralic": ["fi", "hu", "et"],
    "Sino-Tibetan": ["zh"],
    "Afro-Asiatic": ["ar", "he", "am"],
    "Atlantic-Congo": ["sw", "yo", "zu"],
    "Turkic": ["tr", "kk"],
    "Japonic": ["ja"],
    "Koreanic": ["ko"],
    "Dravidian": ["ta", "te"],
    "Austronesian": ["id", "tl"],
}


def _families_of(table: pd.DataFrame, code: str) -> set[str]:
    wanted = langcodes.Language.get(langcodes.standardize_tag(code, macro=True)).language
    langs = table["bcp47"].map(lambda tag: langcodes.Language.get(tag).language)
    return set(table.loc[langs == wanted, "family"])


@pytest.mark.parametrize(
    ("family", "code"), [(fam, code) for fam, codes in TEXTBOOK.items() for code in codes]
)
def test_textbook_families(table, family, code):
    assert _families_of(table, code) == {family}


def test_basque_is_an_isolate(table):
    (family,) = _families_of(table, "eu")
    assert "isolate" in family.lower()
