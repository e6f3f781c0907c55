"""Language codes: BCP-47 normalisation (langcodes), language pairs, script and family.

Every code is normalised once, at input, to one *key*: ``zh-Hans``, ``zho``, ``cmn``, ``ZH``
and ``zh_Hans`` all become ``zh``; a script is kept only when it is not the language's likely
script (``zh-Hant`` stays ``zh-Hant``, ``sr-Latn`` stays ``sr-Latn``); a region is kept
(``pt-BR``). Deeper code compares keys only, never raw strings.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from importlib import resources

import numpy as np
import pandas as pd

from ..exceptions import InputError, LanguageCodeError

__all__ = [
    "normalize_code",
    "normalize_codes",
    "split_lp",
    "add_language_columns",
    "script_of",
    "family_of",
    "language_table",
]


@functools.lru_cache(maxsize=4096)
def normalize_code(code: str) -> str:
    """One key per language: macrolanguage, canonical case, likely script dropped."""
    import langcodes

    raw = str(code).strip()
    try:
        tag = langcodes.standardize_tag(raw.replace("_", "-"), macro=True)
        lang = langcodes.Language.get(tag)
    except (langcodes.tag_parser.LanguageTagError, ValueError) as exc:
        raise LanguageCodeError(
            f"language code {code!r} is not a BCP-47/ISO 639 code; use e.g. 'en', 'de', 'zh', 'zh-Hant'"
        ) from exc
    if lang.language in (None, "und") or not lang.is_valid():
        raise LanguageCodeError(
            f"language code {code!r} is not a known language; use e.g. 'en', 'de', 'zh', 'zh-Hant'"
        )
    if lang.script is not None:
        bare = langcodes.Language.make(language=lang.language, territory=lang.territory)
        if bare.maximize().script == lang.script:
            lang = bare
    return lang.to_tag()


def normalize_codes(values: Iterable, column: str = "language", where: str = "input") -> np.ndarray:
    """Normalise an array of codes (each distinct value once); errors name the column and first row."""
    series = pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0]) + 1
        raise LanguageCodeError(f"{where}: column {column!r} row {row}: missing language code; fill it in")
    keys = []
    for i, value in enumerate(uniques):
        try:
            keys.append(normalize_code(value))
        except LanguageCodeError as exc:
            row = int(np.flatnonzero(codes == i)[0]) + 1
            raise LanguageCodeError(f"{where}: column {column!r} row {row}: {exc}") from None
    return np.asarray(keys, dtype=object)[codes]


@functools.lru_cache(maxsize=4096)
def split_lp(lp: str) -> tuple[str, str]:
    """``'de-en'`` -> ``('de', 'en')``; ``'zh-Hant-en'`` -> ``('zh-Hant', 'en')`` when exactly one split is valid."""
    text = str(lp).strip()
    parts = text.replace("_", "-").split("-")
    candidates = []
    for i in range(1, len(parts)):
        try:
            candidates.append((normalize_code("-".join(parts[:i])), normalize_code("-".join(parts[i:]))))
        except LanguageCodeError:
            continue
    if len(candidates) != 1:
        reason = "no split gives two language codes" if not candidates else "it splits in more than one way"
        raise LanguageCodeError(
            f"language pair {lp!r}: {reason}; write it as SRC-TGT (e.g. 'de-en') or give src_lang/tgt_lang columns"
        )
    return candidates[0]


def add_language_columns(df: pd.DataFrame, where: str = "input") -> pd.DataFrame:
    """Return a copy with normalised ``src_lang``/``tgt_lang`` keys (from ``lp`` when absent) and a
    normalised ``lp`` = ``src-tgt``; original spellings are kept in ``*_orig`` columns when they differ."""
    out = df.copy()
    if "lp" in out.columns and not {"src_lang", "tgt_lang"} <= set(out.columns):
        codes, uniques = pd.factorize(out["lp"], use_na_sentinel=True)
        if (codes < 0).any():
            row = int(np.flatnonzero(codes < 0)[0]) + 1
            raise LanguageCodeError(f"{where}: column 'lp' row {row}: missing language pair; fill it in (e.g. de-en)")
        pairs = []
        for i, value in enumerate(uniques):
            try:
                pairs.append(split_lp(value))
            except LanguageCodeError as exc:
                row = int(np.flatnonzero(codes == i)[0]) + 1
                raise LanguageCodeError(f"{where}: column 'lp' row {row}: {exc}") from None
        for side, name in ((0, "src_lang"), (1, "tgt_lang")):
            if name not in out.columns:
                out[name] = np.asarray([p[side] for p in pairs], dtype=object)[codes]
    for name in ("src_lang", "tgt_lang"):
        if name in out.columns:
            keys = normalize_codes(out[name].to_numpy(), name, where)
            if not np.array_equal(keys, out[name].to_numpy().astype(object)):
                out[f"{name}_orig"] = out[name]
            out[name] = keys
    if {"src_lang", "tgt_lang"} <= set(out.columns):
        lp = out["src_lang"].astype(str) + "-" + out["tgt_lang"].astype(str)
        if "lp" in out.columns and not lp.equals(out["lp"].astype(str)):
            out["lp_orig"] = out["lp"]
        out["lp"] = lp
    elif "lp" not in out.columns and "tgt_lang" not in out.columns:
        raise InputError(f"{where}: no language column; give 'lp' (e.g. de-en) or 'tgt_lang', or map one with --col")
    return out


@functools.lru_cache(maxsize=4096)
def script_of(key: str) -> str:
    """ISO 15924 script of a language key (its likely script when the key names none)."""
    import langcodes

    return langcodes.Language.get(key).maximize().script or "Zyyy"


@functools.lru_cache(maxsize=1)
def language_table() -> pd.DataFrame:
    """The documented language table (FLORES-200 languages: code, script, Glottolog family)."""
    path = resources.files("xleval").joinpath("data", "language_families.tsv")
    with path.open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, sep="\t", comment="#", dtype=str, keep_default_na=False)


@functools.lru_cache(maxsize=1)
def _family_by_language() -> dict[str, str]:
    table = language_table()
    out: dict[str, str] = {}
    for bcp47, family in zip(table["bcp47"], table["family"]):
        key = normalize_code(bcp47)
        out.setdefault(key, family)
        out.setdefault(key.split("-")[0], family)
    return out


def family_of(key: str) -> str | None:
    """Glottolog top-level family of a language key, or None when the table does not list it."""
    families = _family_by_language()
    return families.get(key) or families.get(key.split("-")[0])
