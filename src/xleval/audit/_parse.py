"""Answer-letter parsing of free-text responses, and per model x condition parser validity.

The default rule is the translation-tax paper's protocol (section 4.2): the first standalone letter A-D in the
response ("standalone" = not inside a Latin word, so "Answer: B", "**B**" and "答案是B" parse
to B while "Because" does not). Full-width letters (Ａ-Ｄ, common in Chinese output) are
folded to ASCII first (NFKC). Both choices are parameters and appear in ``description``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from xleval.audit._results import ParserValidity
from xleval.exceptions import InputError

__all__ = ["AnswerParser", "parser_validity"]

DEFAULT_THRESHOLD = 0.95

# letters of Latin-script words, accented ones included ("Año", "Déjà", "Ñandú"), and combining accents: a
# choice letter next to one of them is inside a word (A-Za-z alone read "Año" as the answer A); other scripts
# (答案是B) do not make a Latin letter part of a word
_LATIN_WORD = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02af\u0300-\u036f\u1e00-\u1eff"


@dataclass(frozen=True)
class AnswerParser:
    """Extract an answer letter from a response: the first match of ``pattern`` (its first
    group, or the whole match when it has no group), upper-cased, if it is one of ``letters``.

    ``pattern=None`` builds the standalone-letter rule from ``letters``; ``nfkc`` folds
    full-width characters before matching."""

    letters: str = "ABCD"
    pattern: str | None = None
    nfkc: bool = True
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.letters or not self.letters.isalpha():
            raise InputError(f"AnswerParser: letters must be a non-empty string of letters; got {self.letters!r}")
        source = self.pattern or rf"(?<![{_LATIN_WORD}])([{re.escape(self.letters)}])(?![{_LATIN_WORD}])"
        try:
            object.__setattr__(self, "_regex", re.compile(source))
        except re.error as exc:
            raise InputError(f"AnswerParser: pattern {self.pattern!r} is not a valid regular expression "
                             f"({exc})") from None

    @property
    def description(self) -> str:
        rule = f"regex {self.pattern!r}" if self.pattern else f"first standalone letter in [{self.letters}]"
        return rule + (" after NFKC folding" if self.nfkc else "")

    def parse(self, response: Any) -> str | None:
        """The answer letter, or None when the response has none (or is missing)."""
        if response is None or (isinstance(response, float) and np.isnan(response)):
            return None
        text = unicodedata.normalize("NFKC", str(response)) if self.nfkc else str(response)
        match = self._regex.search(text)
        if match is None:
            return None
        letter = (match.group(1) if self._regex.groups else match.group(0)).strip().upper()
        return letter if len(letter) == 1 and letter in self.letters.upper() else None

    def parse_many(self, responses: pd.Series) -> pd.Series:
        return pd.Series([self.parse(r) for r in responses], index=responses.index, dtype=object)


def parser_validity(frame: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> tuple[ParserValidity, ...]:
    """Share of valid parses per model x condition of a prepared audit frame (column ``valid``);
    rates below ``threshold`` are flagged."""
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"validity threshold must be in [0, 1]; got {threshold}")
    out = []
    for (model, condition), part in frame.groupby(["model", "condition"], sort=True):
        n, k = len(part), int(part["valid"].sum())
        rate = k / n
        out.append(ParserValidity(str(model), str(condition), n, k, rate, threshold, rate < threshold))
    return tuple(out)
