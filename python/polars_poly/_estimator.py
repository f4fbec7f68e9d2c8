"""A scikit-learn compatible estimator base without a hard dependency on scikit-learn.

When scikit-learn is installed our estimators derive from its ``BaseEstimator`` (so ``clone``,
``Pipeline``, ``GridSearchCV``, tags and the HTML repr all work as users expect); otherwise (and
in the command line's model commands) a minimal stand-in provides ``get_params`` /
``set_params`` with the same contract.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from polars_poly._lazy import np
from polars_poly.cli_options import WITHOUT_SKLEARN

try:  # pragma: no cover - which branch runs depends on the environment
    if os.environ.get(WITHOUT_SKLEARN) == "1":
        raise ImportError("the command line runs without scikit-learn")
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin
except ImportError:  # pragma: no cover

    class BaseEstimator:  # type: ignore[no-redef]
        """``get_params`` / ``set_params`` over the ``__init__`` keyword arguments."""

        @classmethod
        def _get_param_names(cls) -> list[str]:
            signature = inspect.signature(cls.__init__)
            return sorted(p.name for p in signature.parameters.values() if p.name != "self")

        def get_params(self, deep: bool = True) -> dict[str, Any]:
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params: Any) -> BaseEstimator:
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}")
                setattr(self, name, value)
            return self

    class TransformerMixin:  # type: ignore[no-redef]
        def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
            return self.fit(X, y, **fit_params).transform(X)  # type: ignore[attr-defined]

    class ClassifierMixin:  # type: ignore[no-redef]
        _estimator_type = "classifier"

        def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
            import numpy as np

            predicted = self.predict(X)  # type: ignore[attr-defined]
            hits = np.asarray(predicted == np.asarray(y), dtype=np.float64)
            return float(np.average(hits, weights=sample_weight))

    class RegressorMixin:  # type: ignore[no-redef]
        _estimator_type = "regressor"

        def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
            import numpy as np

            truth = np.asarray(y, dtype=float)
            error = np.average((truth - self.predict(X)) ** 2, weights=sample_weight)  # type: ignore[attr-defined]
            spread = np.average(
                (truth - np.average(truth, weights=sample_weight)) ** 2, weights=sample_weight
            )
            return float(1.0 - error / spread) if spread > 0 else float("nan")


class FeatureNamesIn:
    """scikit-learn's ``feature_names_in_`` for an estimator that keeps the feature columns of
    the frame it was fitted on in ``feature_columns_`` (None, or absent, after a fit on a
    matrix or on a frame's one sparse column read as one)."""

    @property
    def feature_names_in_(self) -> Any:
        """The feature columns of the frame the model was fitted on, as scikit-learn names
        them: an array of str (absent when it was fitted on a matrix)."""
        columns = getattr(self, "feature_columns_", None)
        if columns is None:
            raise AttributeError(
                f"{type(self).__name__} has no feature_names_in_: it was not fitted on a frame's "
                "named feature columns"
            )
        return np.asarray(columns, dtype=object)


__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "FeatureNamesIn",
    "RegressorMixin",
    "TransformerMixin",
]


def not_fitted(estimator: Any) -> Exception:
    """scikit-learn's ``NotFittedError`` (a ``ValueError`` and an ``AttributeError``) for a
    method called before ``fit``; an ``AttributeError`` without scikit-learn."""
    message = f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' first."
    try:
        from sklearn.exceptions import NotFittedError
    except ImportError:  # pragma: no cover
        return AttributeError(message)
    error: Exception = NotFittedError(message)
    return error
