"""The scikit-learn estimator protocol shared by the calibrators, without importing scikit-learn.

Parameters are the ``__init__`` arguments, stored verbatim; ``get_params``/``set_params`` and
``repr`` are derived from them, so ``sklearn.base.clone`` works. ``__sklearn_tags__`` and
``__sklearn_is_fitted__`` let ``Pipeline``, ``check_is_fitted`` and ``cross_val_score`` use the
calibrators (scikit-learn is imported only when scikit-learn itself asks for the tags).

Output of ``transform``: a 1-D array, one calibrated value per row, so that
``df["chrf_lgn"] = lgn.transform(df)`` reads naturally. Code that asks for scikit-learn's output API
gets what scikit-learn transformers return: ``set_output(transform="default")`` a 2-D ``(n, 1)``
array, ``set_output(transform="pandas")`` (or scikit-learn's global ``transform_output="pandas"``)
a one-column DataFrame named by :meth:`get_feature_names_out`, with the input's index.
"""
from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..exceptions import InputError, NotFittedError
from ..table import DEFAULT_BY

__all__ = ["ParamsMixin"]

_OUTPUTS = ("default", "pandas")


class ParamsMixin:
    _output_suffix = "calibrated"  # the calibrated column is named <score>_<suffix>

    if TYPE_CHECKING:  # provided by each calibrator class
        score: str
        by: Any

        def _check_fitted(self) -> None: ...

    def group_columns(self) -> list[str]:
        """The columns the calibrator groups by (fitted: as fitted; else as its ``by`` names them; the
        default grouping, unfitted: ``tgt_lang``, what it resolves to on a table without ``lp``)."""
        by = getattr(self, "by_", None) or self.by
        if by is DEFAULT_BY:
            by = DEFAULT_BY.resolve(())
        return [by] if isinstance(by, str) else list(by)

    def _resolve_by(self, X: Any) -> list[str]:
        """The grouping columns a fit on ``X`` uses: ``by`` as given; the default (:data:`DEFAULT_BY`)
        is an EvalTable's own grouping, else ``lp`` if the frame has it or its two codes (``src_lang``,
        ``tgt_lang``, from which a fit derives it), else ``tgt_lang`` -- the one
        default of the library and the command line."""
        from ..table import EvalTable

        by = self.by
        if by is DEFAULT_BY:
            if isinstance(X, EvalTable) and X.by:
                return list(X.by)
            columns = X.frame.columns if isinstance(X, EvalTable) else X.columns if isinstance(X, pd.DataFrame) else ()
            by = DEFAULT_BY.resolve(columns)
        return [by] if isinstance(by, str) else list(by)

    def _table_frame(self, X: Any) -> Any:
        """``X`` as the calibrators read it: an EvalTable gives its checked frame (its ``by`` and
        ``score`` roles, when set, must be the columns this calibrator reads), anything else is
        returned as it is (a DataFrame, or an array of scores with ``groups=``)."""
        from ..table import EvalTable

        if isinstance(X, pd.DataFrame):  # the pair from its two codes when the calibrator groups by lp
            from ..io import with_pair_column

            return with_pair_column(X, getattr(self, "by_", None) or self._resolve_by(X), "data")
        if not isinstance(X, EvalTable):
            return X
        by = self._resolve_by(X)
        if X.by and list(X.by) != by:
            raise InputError(f"the table groups by {list(X.by)}, this {type(self).__name__} by {by}: build the "
                             f"table with by={by!r} or the calibrator with by={list(X.by)!r}", argument="by",
                             value=list(X.by))
        if X.score and self.score not in X.score:
            raise InputError(f"the table's score column is {X.score[0]!r}, this {type(self).__name__} reads "
                             f"score={self.score!r}: build one with the other's score column", argument="score",
                             value=self.score)
        return X.frame

    def _table_signature(self, X: Any, signature: str | None) -> str | None:
        """The metric signature a fit records: the one given, else the one the EvalTable carries for
        this calibrator's score column (a frame or an array carries none)."""
        from ..table import EvalTable

        if signature is None and isinstance(X, EvalTable):
            return X.signature(getattr(self, "score", None))
        return signature

    @contextlib.contextmanager
    def _all_or_nothing(self) -> Iterator[None]:
        """A fit that raises leaves the learned state (attributes ending in ``_``) as it was before
        the call: never new attributes beside old ones, so a refused refit cannot half-transform."""
        saved = {k: v for k, v in vars(self).items() if _learned(k)}
        try:
            yield
        except BaseException:
            for name in [k for k in vars(self) if _learned(k)]:
                delattr(self, name)
            vars(self).update(saved)
            raise

    @classmethod
    def _param_names(cls) -> tuple[str, ...]:
        return tuple(p for p in inspect.signature(cls.__init__).parameters if p != "self")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise InputError(f"{type(self).__name__} has no parameter {name!r}; "
                                 f"valid parameters are {sorted(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults[k])
        return f"{type(self).__name__}({changed})"

    # scikit-learn protocol ----------------------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        try:
            self._check_fitted()
        except NotFittedError:
            return False
        return True

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        # a DataFrame of score and group columns, strings included, NaN scores kept; validated here, not by sklearn
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(preserves_dtype=["float64"]),
                    input_tags=InputTags(two_d_array=True, categorical=True, string=True, allow_nan=True),
                    no_validation=True, requires_fit=True)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """The name of the one output column, ``<score>_<lgn|anchored>``."""
        return np.array([f"{self.score}_{self._output_suffix}"], dtype=object)

    def set_output(self, *, transform: str | None = None):
        """Output container of ``transform``: ``"default"`` (a 2-D ``(n, 1)`` array, as scikit-learn
        transformers return), ``"pandas"`` (a one-column DataFrame); ``None`` leaves it unchanged.
        Unconfigured, ``transform`` returns a 1-D array. Returns ``self``."""
        if transform is None:
            return self
        if transform not in _OUTPUTS:
            raise InputError(f"set_output(transform={transform!r}): use 'default' or 'pandas'")
        self._sklearn_output_config = {"transform": transform}  # the attribute sklearn's clone() copies
        return self

    def _as_output(self, values: np.ndarray, X: Any):
        mode = getattr(self, "_sklearn_output_config", {}).get("transform")
        if mode is None and "sklearn" in sys.modules:  # scikit-learn's global set_config(transform_output=...)
            mode = {"pandas": "pandas"}.get(sys.modules["sklearn"].get_config().get("transform_output"))
        if mode == "pandas":
            index = X.index if isinstance(X, (pd.DataFrame, pd.Series)) else None
            return pd.DataFrame({self.get_feature_names_out()[0]: values}, index=index)
        if mode == "default":
            return values.reshape(-1, 1)
        return values


def _learned(name: str) -> bool:
    return name.endswith("_") and not name.startswith("__")
