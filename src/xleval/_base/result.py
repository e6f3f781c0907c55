"""The one base of xleval's frozen result objects: comparison, hashing, immutability and ``to_dict()``.

Every statistic, diagnosis, gap, audit contrast, intrinsic analysis, leaderboard and report summary
returns a frozen dataclass that inherits :class:`Result`, declared ``@dataclass(frozen=True, eq=False)``
so that the dataclass machinery leaves ``==`` and ``hash`` to this base:

* ``==`` compares the fields one by one, tables and arrays by value (a missing value equals a missing
  value in the same place), so two results built from the same seeded input are equal;
* ``hash`` works for results whose compared fields are all hashable values (numbers, text, tuples,
  nested hashable results); a result holding a table, an array or a mapping raises
  ``TypeError("... is not hashable: its field 'groups' holds a DataFrame; compare results with ==")``;
* a table or array held by a result cannot be changed through the result: arrays are stored as
  read-only copies (writing into one raises ``ValueError``), and reading a DataFrame/Series field
  gives a copy (with pandas' copy-on-write, a lazy one), so changing what you got back leaves the
  result as it was. Mappings (``dict`` fields) are plain dicts: treat them as read-only;
* ``to_dict()`` gives plain JSON values: fields made with :func:`array_field` (resampled
  distributions, per-row arrays) are left out unless asked for, a field with ``metadata={"key":
  name}`` is written under ``name``, the class attribute ``_dump_extra`` names properties or
  zero-argument methods written after the fields, and ``_dump_order`` the keys to put first (``...``
  in it stands for every other key, so a key listed after it goes last).

Pickling, :func:`copy.copy`, :func:`copy.deepcopy` and :func:`dataclasses.replace` keep all of this.
"""
from __future__ import annotations

import math
import sys
from dataclasses import field, fields
from typing import Any, ClassVar

from .jsonable import to_jsonable

__all__ = ["Result", "array_field"]


class Result:
    """Base of frozen result dataclasses: value ``==``, ``hash``, read-only tables/arrays, ``to_dict()``."""

    _dump_extra: ClassVar[tuple[str, ...]] = ()
    _dump_order: ClassVar[tuple[Any, ...]] = ()

    def __post_init__(self) -> None:
        self._freeze()

    def _freeze(self) -> None:
        # object.__setattr__: the dataclass is frozen; this runs once, at construction or unpickling
        for f in fields(self):  # type: ignore[arg-type]
            value = self.__dict__.get(f.name)
            frozen = _frozen(value)
            if frozen is not value:
                object.__setattr__(self, f.name, frozen)

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        if name[0] != "_" and _is_frame(value):  # the stored table stays as built, whatever the caller does
            return _copy_frame(value)
        return value

    def __setstate__(self, state: dict[str, Any]) -> None:
        # numpy does not pickle the read-only flag: set it again on the unpickled arrays
        self.__dict__.update(state)
        self._freeze()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(_same(self.__dict__.get(f.name), other.__dict__.get(f.name))
                   for f in fields(self) if f.compare)  # type: ignore[arg-type]

    def __hash__(self) -> int:
        parts = []
        for f in fields(self):  # type: ignore[arg-type]
            if f.compare and f.hash is not False:
                parts.append(_hash_key(self.__dict__.get(f.name), type(self).__name__, f.name))
        return hash((type(self).__name__, tuple(parts)))

    def to_dict(self, *, include_distribution: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            if not f.metadata.get("dump", True) and not include_distribution:
                continue
            out[f.metadata.get("key", f.name)] = to_jsonable(getattr(self, f.name))
        for name in self._dump_extra:
            value = getattr(self, name)
            out[name] = to_jsonable(value() if callable(value) else value)
        return _ordered(out, self._dump_order) if self._dump_order else out

    @property
    def unreliable(self) -> bool:
        """True when a note flags the result as unreliable (tiny strata, degenerate data)."""
        return any("unreliable" in note for note in getattr(self, "notes", ()))


def array_field() -> Any:
    """A field for arrays kept on a result but never compared, printed or dumped by default."""
    return field(default=None, repr=False, compare=False, metadata={"dump": False})


def _ordered(out: dict[str, Any], order: tuple[Any, ...]) -> dict[str, Any]:
    head = [k for k in order[:order.index(...)] if k in out] if ... in order else [k for k in order if k in out]
    tail = [k for k in order[order.index(...) + 1:] if k in out] if ... in order else []
    middle = [k for k in out if k not in head and k not in tail]
    return {k: out[k] for k in [*head, *middle, *tail]}


# ------------------------------------------------------------------------------ tables and arrays
def _pandas() -> Any:
    # pandas is loaded by whatever built a table; until then no value can be one (import xleval stays light)
    return sys.modules.get("pandas")


def _is_frame(value: Any) -> bool:
    pd = _pandas()
    return pd is not None and isinstance(value, (pd.DataFrame, pd.Series))


def _copy_frame(value: Any) -> Any:
    # with copy-on-write (always on from pandas 3) a shallow copy shares the data until either side
    # writes, and a write never reaches the other; without it only a deep copy is safe
    from .frames import copy_on_write

    return value.copy(deep=not copy_on_write())


def _is_array(value: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


def _frozen(value: Any) -> Any:
    """``value`` with every array read-only (a copy when it was writable) and every table a private copy."""
    if _is_array(value):
        if not value.flags.writeable:
            return value
        value = value.copy()
        value.flags.writeable = False
        return value
    if _is_frame(value):
        return _copy_frame(value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        items = tuple(_frozen(v) for v in value)
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if type(value) is dict:
        for k, v in value.items():
            frozen = _frozen(v)
            if frozen is not v:
                value = {**value, k: frozen}
        return value
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal by value: tables and arrays element by element, a missing value equal to a missing value."""
    if a is b:
        return True
    if _is_frame(a) or _is_frame(b):
        return type(a) is type(b) and a.equals(b) and getattr(a, "name", None) == getattr(b, "name", None)
    if _is_array(a) or _is_array(b):
        return _is_array(a) and _is_array(b) and a.shape == b.shape and _same_arrays(a, b)
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(_same(a[k], b[k]) for k in a))
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # an object whose == gives something without a truth value
        return False


def _same_arrays(a: Any, b: Any) -> bool:
    import numpy as np

    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # object or text arrays: no NaN test, compare the elements
        return all(_same(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True))


def _hash_key(value: Any, owner: str, name: str) -> Any:
    """A hashable stand-in for ``value`` that is equal where :func:`_same` is (every NaN the same)."""
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, tuple):
        return tuple(_hash_key(v, owner, name) for v in value)
    if isinstance(value, Result):
        hash(value)  # a nested result holding a table says so itself
        return value
    try:
        if _is_frame(value) or _is_array(value):
            raise TypeError
        hash(value)
    except TypeError:
        raise TypeError(f"{owner} is not hashable: its field {name!r} holds a {type(value).__name__}; "
                        "results holding tables, arrays or mappings are compared with ==, not hashed") from None
    return value
