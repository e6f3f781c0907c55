"""Language codes: BCP-47 normalisation (langcodes), language pairs, script and family.

Every code is normalised once, at input, to one *key*: ``zh-Hans``, ``zho``, ``cmn``, ``ZH``
and ``zh_Hans`` all become ``zh``; a script is kept only when it is not the language's likely
script (``zh-Hant`` stays ``zh-Hant``, ``sr-Latn`` stays ``sr-Latn``); a region is kept
(``pt-BR``). Deeper code compares keys only, never raw strings.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from importlib import resources

import numpy as np
import pandas as pd

from .._base.frames import copy_on_write
from ..exceptions import InputError, LanguageCodeError

__all__ = [
    "normalize_code",
    "normalize_codes",
    "split_lp",
    "add_language_columns",
    "with_pair_column",
    "script_of",
    "family_of",
    "language_table",
    "note_merges",
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
    placeholder = _placeholder(raw, lang)
    if placeholder:
        raise LanguageCodeError(f"language code {code!r} is a placeholder ({placeholder}), not a language; "
                                "use the language's own code, e.g. 'en', 'de', 'zh', 'zh-Hant'")
    if lang.script is not None:
        bare = langcodes.Language.make(language=lang.language, territory=lang.territory)
        if bare.maximize().script == lang.script:
            lang = bare
    return lang.to_tag()


_SPECIAL_LANGUAGES = {"mis": "uncoded languages", "mul": "multiple languages", "zxx": "no linguistic content",
                      "und": "undetermined"}


def _placeholder(raw: str, lang) -> str | None:
    """Why a well-formed tag names no language: BCP-47's special and private-use codes (RFC 5646
    sections 2.2.1-2.2.4, 4.6), which would otherwise become a group of their own."""
    code = lang.language or ""
    if raw.lower().replace("_", "-").startswith("x-"):
        return "a private-use tag"
    if code in _SPECIAL_LANGUAGES:
        return _SPECIAL_LANGUAGES[code]
    if len(code) == 3 and "qaa" <= code <= "qtz":
        return "a private-use language code"
    script, region = lang.script or "", lang.territory or ""
    if "Qaaa" <= script <= "Qabx" or script == "Zzzz":
        return "a private-use or uncoded script"
    if region in ("AA", "ZZ") or "QM" <= region <= "QZ" or "XA" <= region <= "XZ":
        return "a private-use or unknown region"
    return None


def normalize_codes(values: Iterable, column: str = "language", where: str = "input") -> np.ndarray:
    """Normalise an array of codes (each distinct value once); errors name the column and first row."""
    codes, uniques = _distinct(pd.Series(values, dtype=object), column, where, "language code; fill it in")
    return np.asarray(_normalized(codes, uniques, column, where), dtype=object)[codes]


def _distinct(values: pd.Series, column: str, where: str, missing: str) -> tuple[np.ndarray, list]:
    """Per-row integer codes and the distinct values; a categorical column gives its own codes (no
    hashing of millions of strings), its categories possibly including unused ones."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = values.cat.codes.to_numpy(), list(values.cat.categories)
    else:
        try:
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
        except TypeError:  # unhashable cells: lists or dicts
            row = next(i for i, v in enumerate(values) if isinstance(v, (list, dict, set, np.ndarray))) + 1
            raise LanguageCodeError(f"{where}: column {column!r} row {row}: holds a list, not a language code; "
                                    "write one code as text (e.g. 'de' or 'de-en')") from None
        uniques = list(uniques)
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0]) + 1
        raise LanguageCodeError(f"{where}: column {column!r} row {row}: missing {missing}")
    return codes, uniques


def _used(codes: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(codes, minlength=n).astype(bool) if len(codes) else np.zeros(n, dtype=bool)


def _first_row(codes: np.ndarray, i: int) -> int:
    return int(np.flatnonzero(codes == i)[0]) + 1


def _normalized(codes: np.ndarray, uniques: list, column: str, where: str) -> list:
    """The key of each distinct code that occurs in ``codes`` (None for unused categories)."""
    return _per_used_value(normalize_code, codes, uniques, column, where)


def _per_used_value(fn, codes: np.ndarray, uniques: list, column: str, where: str) -> list:
    """``fn`` of each distinct value that occurs in ``codes`` (None for unused categories); an error
    names the column and the first row holding the offending value."""
    out: list = [None] * len(uniques)
    for i in np.flatnonzero(_used(codes, len(uniques))):
        try:
            out[i] = fn(uniques[i])
        except LanguageCodeError as exc:
            raise LanguageCodeError(f"{where}: column {column!r} row {_first_row(codes, int(i))}: {exc}") from None
    return out


@functools.lru_cache(maxsize=4096)
def split_lp(lp: str) -> tuple[str, str]:
    """``'de-en'`` -> ``('de', 'en')``; ``'zh-Hant-en'`` -> ``('zh-Hant', 'en')`` when exactly one split is valid.
    An underscore joins the subtags of one code (WMT25's ``en-de_DE``, ``en-sr_Cyrl_RS``): the pair is split at a
    hyphen first, so ``en-de_DE`` is ``('en', 'de-DE')`` although ``en-de`` and ``DE`` are codes too."""
    text = str(lp).strip()
    candidates = _valid_splits(text.split("-")) if "_" in text else []
    if len(candidates) != 1:
        candidates = _valid_splits(text.replace("_", "-").split("-"))
    if len(candidates) > 1:  # the normalised key en-de-DE of en-de_DE: a region follows its own language
        cased = [c for c in candidates if _canonical_case(c[2]) and _canonical_case(c[3])]
        candidates = cased if len(cased) == 1 else candidates
    if len(candidates) != 1:
        reason = "no split gives two language codes" if not candidates else "it splits in more than one way"
        raise LanguageCodeError(
            f"language pair {lp!r}: {reason}; write it as SRC-TGT (e.g. 'de-en') or give src_lang/tgt_lang columns"
        )
    return candidates[0][0], candidates[0][1]


def _valid_splits(parts: list[str]) -> list[tuple[str, str, str, str]]:
    """Every split of ``parts`` into two runs that are both language codes: the two normalised, then the two
    as written."""
    candidates = []
    for i in range(1, len(parts)):
        left, right = "-".join(parts[:i]), "-".join(parts[i:])
        try:
            candidates.append((normalize_code(left), normalize_code(right), left, right))
        except LanguageCodeError:
            continue
    return candidates


def _canonical_case(code: str) -> bool:
    """Whether ``code`` is cased as BCP-47 writes it (and xleval's keys are): the language in lower case, a
    script in title case, a region in upper case."""
    first, *rest = code.replace("_", "-").split("-")
    if not first.islower():
        return False
    for sub in rest:
        if len(sub) == 4 and sub.isalpha() and not sub.istitle():
            return False
        if len(sub) == 2 and sub.isalpha() and not sub.isupper():
            return False
    return True


def add_language_columns(df: pd.DataFrame, where: str = "input", *, categorical: bool = False) -> pd.DataFrame:
    """Return a copy with normalised ``src_lang``/``tgt_lang`` keys (from ``lp`` when absent) and a
    normalised ``lp`` = ``src-tgt``; original spellings are kept in ``*_orig`` columns when they differ.

    Codes are normalised per distinct value, never per row (a categorical column gives its codes
    directly). ``categorical=True`` returns the three language columns as categoricals holding only
    the keys that occur (cheap for millions of rows; the calibrators group by their codes).
    """
    out = df.copy(deep=not copy_on_write())  # with copy-on-write a shallow copy is a copy: no column copied
    coded: dict[str, tuple[np.ndarray, list]] = {}  # column -> (row codes, key per code)
    derived_from = set()  # "lp" when a language column was derived from it (nothing to compare it with)
    if "lp" in out.columns and not {"src_lang", "tgt_lang"} <= set(out.columns):
        derived_from.add("lp")
        codes, uniques = _distinct(out["lp"], "lp", where, "language pair; fill it in (e.g. de-en)")
        pairs = _per_used_value(split_lp, codes, uniques, "lp", where)
        note_merges("lp", uniques, [None if p is None else "-".join(p) for p in pairs], where)
        for side, name in ((0, "src_lang"), (1, "tgt_lang")):
            if name not in out.columns:
                coded[name] = (codes, [None if p is None else p[side] for p in pairs])
                out[name] = _column(*coded[name], categorical)
    for name in ("src_lang", "tgt_lang"):
        if name in out.columns and name not in coded:
            codes, uniques = _distinct(out[name], name, where, "language code; fill it in")
            keys = _normalized(codes, uniques, name, where)
            note_merges(name, uniques, keys, where)
            if any(k is not None and k != u for k, u in zip(keys, uniques, strict=True)):
                out[f"{name}_orig"] = out[name]
            coded[name] = (codes, keys)
            out[name] = _column(codes, keys, categorical)
    if {"src_lang", "tgt_lang"} <= set(out.columns):
        codes, keys = _pair_keys(coded["src_lang"], coded["tgt_lang"])
        if "lp" in out.columns and "lp" not in derived_from:
            _check_lp_agrees(out["lp"], codes, keys, where)
        if "lp" in out.columns and _differs(out["lp"], codes, keys):
            out["lp_orig"] = out["lp"]
        lp = _column(codes, keys, categorical)
        out["lp"] = lp if categorical else pd.Series(lp, index=out.index, dtype=str)  # text even when empty
    elif "lp" not in out.columns and "tgt_lang" not in out.columns:
        raise InputError(f"{where}: no language column; give 'lp' (e.g. de-en) or 'tgt_lang', or map one with "
                         "columns=", argument="columns")
    return out


def with_pair_column(df: pd.DataFrame, by: str | Sequence[str], where: str = "input") -> pd.DataFrame:
    """``df`` with the pair ``lp`` (``src-tgt``, normalised keys) derived from ``src_lang`` and ``tgt_lang`` when
    ``by`` groups by ``lp`` and the table has only the two codes (the default grouping,
    :data:`xleval.table.DEFAULT_BY`, names ``lp`` then); else ``df`` itself. The frame's own columns are kept as
    they are."""
    by_cols = [by] if isinstance(by, str) else list(by)
    if "lp" not in by_cols or "lp" in df.columns or not {"src_lang", "tgt_lang"} <= set(df.columns):
        return df
    pairs = add_language_columns(df[["src_lang", "tgt_lang"]], where=where)["lp"]
    return df.assign(lp=pairs.astype(str).to_numpy())


def _spelling(value) -> str:
    return str(value).strip().replace("_", "-").casefold()


def note_merges(column: str, uniques: list, keys: list, where: str = "input") -> None:
    """Say when two distinct input codes of ``column`` become one group (``twi`` and ``ak`` are both
    Akan, ``cmn`` and ``zh`` both Chinese): a DataQualityWarning naming the input codes and their key.
    Spellings of one code (case, ``_`` for ``-``) are not distinct codes. ``keys[i]`` is the key of
    ``uniques[i]`` (None: unused)."""
    merged: dict[str, set[str]] = {}
    for value, key in zip(uniques, keys, strict=True):
        if key is not None:
            merged.setdefault(key, set()).add(_spelling(value))
    merges = {k: sorted(v) for k, v in merged.items() if len(v) > 1}
    if not merges:
        return
    import warnings

    from ..exceptions import DataQualityWarning

    shown = "; ".join(f"{' and '.join(repr(v) for v in codes)} become one group, {key!r}"
                      for key, codes in sorted(merges.items())[:5])
    more = f" (and {len(merges) - 5} more)" if len(merges) > 5 else ""
    warnings.warn(f"{where}: column {column!r}: {shown}{more}: language codes are normalised to one key per "
                  "language (macrolanguage, likely script dropped); if they are different varieties, give them "
                  "codes that stay distinct (e.g. with a region or script subtag)", DataQualityWarning, stacklevel=3)


def _column(codes: np.ndarray, keys: list, categorical: bool):
    """Per-row keys: an object array, or a categorical of the keys that occur in the order they first
    occur in the rows (as factorizing the rows would order them, so groups come out in the same order)."""
    if not categorical:
        return np.asarray(keys, dtype=object)[codes]
    inner, categories = pd.factorize(np.asarray(keys, dtype=object), use_na_sentinel=True)  # unused codes: None
    order = _first_seen(codes, inner, len(categories))
    rank = np.empty(len(order), dtype=np.min_scalar_type(-max(len(order), 1)))  # from_codes keeps small codes
    rank[order] = np.arange(len(order))
    mapping = np.zeros(len(inner), dtype=rank.dtype)  # unused codes (no key) map anywhere: no row has them
    mapping[inner >= 0] = rank[inner[inner >= 0]]
    return pd.Categorical.from_codes(mapping[codes], categories=pd.Index(categories[order], dtype=object))


def _first_seen(codes: np.ndarray, inner: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` distinct values of ``inner[codes]`` (all of 0..n-1 occur) in the order they first occur;
    a prefix of the rows usually holds them all, so look at growing prefixes before the whole."""
    size = 4096
    while True:
        seen = pd.unique(inner[codes[:size]])
        if len(seen) == n or size >= len(codes):
            return seen.astype(np.intp)
        size *= 16


def _pair_keys(src: tuple[np.ndarray, list], tgt: tuple[np.ndarray, list]) -> tuple[np.ndarray, list]:
    """Row codes of the distinct (source, target) combinations and their ``src-tgt`` strings."""
    (s_codes, s_keys), (t_codes, t_keys) = src, tgt
    combined = s_codes.astype(np.int64) * len(t_keys) + t_codes
    codes, uniques = pd.factorize(combined)
    return codes, [f"{s_keys[c // len(t_keys)]}-{t_keys[c % len(t_keys)]}" for c in uniques]


def _check_lp_agrees(lp: pd.Series, codes: np.ndarray, keys: list, where: str) -> None:
    """An ``lp`` given beside ``src_lang``/``tgt_lang`` must name the same pair in every row (checked
    per distinct combination): rewriting a contradicting ``lp`` would change the data silently."""
    lp_codes, lp_values = _distinct(lp, "lp", where, "language pair; fill it in (e.g. de-en)")
    combined = lp_codes.astype(np.int64) * max(len(keys), 1) + codes
    inner, combos = pd.factorize(combined)
    first = np.empty(len(combos), dtype=np.int64)
    first[inner[::-1]] = np.arange(len(inner) - 1, -1, -1)  # the last write wins: each combination's first row
    for combo, row in zip(combos, first, strict=True):
        value, pair = lp_values[combo // max(len(keys), 1)], keys[combo % max(len(keys), 1)]
        try:  # an lp that is already the pair's key agrees (en-is-IS: it does not split one way)
            agrees = str(value) == pair or "-".join(split_lp(value)) == pair
        except LanguageCodeError:
            agrees = False
        if not agrees:
            raise LanguageCodeError(
                f"{where}: row {int(row) + 1}: lp {value!r} contradicts src_lang/tgt_lang ({pair}); "
                "fix the row, or drop the lp column (it is derived from src_lang and tgt_lang)")


def _differs(lp: pd.Series, codes: np.ndarray, keys: list) -> bool:
    """Whether any row's ``lp`` (as text) differs from its normalised pair; checked per distinct combination."""
    if isinstance(lp.dtype, pd.CategoricalDtype):
        old_codes, old = lp.cat.codes.to_numpy(), list(lp.cat.categories)
    else:
        old_codes, old = pd.factorize(lp, use_na_sentinel=True)
    if (old_codes < 0).any():
        return True
    combos = np.unique(old_codes.astype(np.int64) * max(len(keys), 1) + codes)
    return any(str(old[c // max(len(keys), 1)]) != keys[c % max(len(keys), 1)] for c in combos)


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
    for bcp47, family in zip(table["bcp47"], table["family"], strict=True):
        key = normalize_code(bcp47)
        out.setdefault(key, family)
        out.setdefault(key.split("-")[0], family)
    return out


def family_of(key: str) -> str | None:
    """Glottolog top-level family of a language key, or None when the table does not list it."""
    families = _family_by_language()
    return families.get(key) or families.get(key.split("-")[0])
