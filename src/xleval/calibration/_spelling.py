"""Group labels that name languages, matched across spellings.

xleval's tables normalise the language columns (``lp``, ``src_lang``, ``tgt_lang``) to one key per language:
``en-cs_CZ`` (WMT25's spelling) reads as ``en-cs-CZ``, ``deu-eng`` as ``de-en``. A calibrator fitted on a
DataFrame keeps the labels as they were written, so one fitted on ``en-cs_CZ`` and applied to a table that was
normalised (``calibrate_frame``, ``calibrate apply``, the leaderboard), or fitted on a normalised table and
applied to the raw DataFrame, would find no group of the other spelling and calibrate every row with its
fallback. The calibrators look a label up as written first; only a label they have not seen is matched here,
by its normalised key against the normalised keys of the fitted labels. A label that is not a language code,
or whose key two fitted labels share, is matched only as written.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from ..exceptions import LanguageCodeError
from ..io.langs import normalize_code, split_lp
from ..table import LANGUAGE_COLUMNS

__all__ = ["spelling_key", "SpellingIndex"]


def _component(value: Hashable, column: str) -> Hashable | None:
    if column not in LANGUAGE_COLUMNS:
        return value
    try:
        return "-".join(split_lp(str(value))) if column == "lp" else normalize_code(str(value))
    except LanguageCodeError:
        return None


def spelling_key(label: Hashable, by: Sequence[str], sep: str | None = None) -> Hashable | None:
    """The normalised key of a group ``label`` over the ``by`` columns: its language components normalised
    (the others as they are), None when one does not parse. ``label``: a value (one column), a tuple, or with
    ``sep`` the values joined by ``sep`` (the anchored calibrator's text labels)."""
    if not any(c in LANGUAGE_COLUMNS for c in by):
        return None
    if len(by) == 1:
        parts: tuple = (label[0] if isinstance(label, tuple) and len(label) == 1 else label,)
    elif isinstance(label, tuple):
        parts = label
    elif sep is not None:
        parts = tuple(str(label).split(sep))
    else:
        return None
    if len(parts) != len(by):
        return None
    keys = tuple(_component(v, c) for v, c in zip(parts, by, strict=True))
    if any(k is None for k in keys):
        return None
    return keys[0] if len(keys) == 1 else keys


class SpellingIndex:
    """The fitted labels by their normalised keys, built once on the first label not found as written."""

    def __init__(self, labels: Iterable[Hashable], by: Sequence[str], sep: str | None = None):
        self.by, self.sep = list(by), sep
        pairs = [(spelling_key(label, self.by, sep), label) for label in labels]
        counts = Counter(k for k, _ in pairs if k is not None)
        self._labels = {k: label for k, label in pairs if k is not None and counts[k] == 1}

    def match(self, label: Hashable) -> Hashable | None:
        """The fitted label that ``label`` spells differently, or None."""
        if not self._labels:
            return None
        key = spelling_key(label, self.by, self.sep)
        return None if key is None else self._labels.get(key)
