"""The one grouping default of the library and the command line (:data:`DEFAULT_BY`), with no heavy import:
the command line decides it from a file's header before the rows are read."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["DEFAULT_BY", "DefaultGrouping", "default_by"]


class DefaultGrouping:
    """The grouping used when none is given, everywhere (library and CLI): the language pair ``lp`` when the
    table has a column ``lp`` or can derive it from ``src_lang`` and ``tgt_lang`` (pairs keep to-English data
    apart, where every row has ``tgt_lang`` en, and en-de apart from cs-de), else ``tgt_lang``. One value
    (:data:`DEFAULT_BY`), compared by identity and resolved on a table's columns with :meth:`resolve`;
    ``str()`` spells it as ``--help`` shows it."""

    _instance: DefaultGrouping | None = None

    def __new__(cls) -> DefaultGrouping:  # one value: `by is DEFAULT_BY` is the test
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def resolve(self, columns: Iterable[Any]) -> str:
        """The grouping column for a table with these (canonical) column names: ``lp`` also where only
        ``src_lang`` and ``tgt_lang`` are there (whoever groups derives it, as from ``lp`` the codes)."""
        names = set(columns)
        return "lp" if "lp" in names or {"src_lang", "tgt_lang"} <= names else "tgt_lang"

    def __str__(self) -> str:
        return "lp (given, or from src_lang and tgt_lang), else tgt_lang"

    def __repr__(self) -> str:
        return "DEFAULT_BY"

    def __reduce__(self) -> str:  # pickles (Dask) as the one value
        return "DEFAULT_BY"


#: the grouping used when none is given (:class:`DefaultGrouping`)
DEFAULT_BY = DefaultGrouping()


def default_by(columns: Iterable[Any]) -> str:
    """The grouping of a table when none is given (:data:`DEFAULT_BY`) on a table with these column names."""
    return DEFAULT_BY.resolve(columns)
