"""The scikit-learn parameter protocol shared by the calibrators: parameters are the ``__init__``
arguments, stored verbatim; ``get_params``/``set_params`` and ``repr`` are derived from them."""
from __future__ import annotations

import inspect
from typing import Any

from ..exceptions import InputError

__all__ = ["ParamsMixin"]


class ParamsMixin:
    @classmethod
    def _param_names(cls) -> tuple[str, ...]:
        return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise InputError(f"{type(self).__name__} has no parameter {name!r}; valid parameters are {sorted(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k])
        return f"{type(self).__name__}({changed})"
